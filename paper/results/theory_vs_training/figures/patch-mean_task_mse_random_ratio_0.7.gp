set terminal pngcairo size 800,560 font 'DejaVu Sans,10'
set output '/work/tvt/quick/figures/patch-mean_task_mse_random_ratio_0.7.png'
set title 'score (patch-mean) vs MSE, task random:ratio=0.7 (mean over seeds, bars: seed SD)' noenhanced
set xlabel 'E_m[Phi(m)], patch-mean features' noenhanced
set ylabel 'MSE, task random:ratio=0.7' noenhanced
set grid
set key outside right noenhanced
plot '/work/tvt/quick/figures/patch-mean_task_mse_random_ratio_0.7.dat' index 0 using 1:2:3 with yerrorbars pt 7 ps 1.2 lc 1 title 'cross', '/work/tvt/quick/figures/patch-mean_task_mse_random_ratio_0.7.dat' index 1 using 1:2:3 with yerrorbars pt 7 ps 1.2 lc 2 title 'sync', '/work/tvt/quick/figures/patch-mean_task_mse_random_ratio_0.7.dat' index 2 using 1:2:3 with yerrorbars pt 7 ps 1.2 lc 3 title 'temporal'
