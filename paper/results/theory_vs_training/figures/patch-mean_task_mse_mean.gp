set terminal pngcairo size 800,560 font 'DejaVu Sans,10'
set output '/work/tvt/quick/figures/patch-mean_task_mse_mean.png'
set title 'score (patch-mean) vs MSE, mean of the common tasks (mean over seeds, bars: seed SD)' noenhanced
set xlabel 'E_m[Phi(m)], patch-mean features' noenhanced
set ylabel 'MSE, mean of the common tasks' noenhanced
set grid
set key outside right noenhanced
plot '/work/tvt/quick/figures/patch-mean_task_mse_mean.dat' index 0 using 1:2:3 with yerrorbars pt 7 ps 1.2 lc 1 title 'cross', '/work/tvt/quick/figures/patch-mean_task_mse_mean.dat' index 1 using 1:2:3 with yerrorbars pt 7 ps 1.2 lc 2 title 'sync', '/work/tvt/quick/figures/patch-mean_task_mse_mean.dat' index 2 using 1:2:3 with yerrorbars pt 7 ps 1.2 lc 3 title 'temporal'
