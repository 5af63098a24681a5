set terminal pngcairo size 800,560 font 'DejaVu Sans,10'
set output '/work/tvt/medium/figures/raw_task_mse_random_ratio_0.7.png'
set title 'score (raw) vs MSE, task random:ratio=0.7 (mean over seeds, bars: seed SD)' noenhanced
set xlabel 'E_m[Phi(m)], raw features' noenhanced
set ylabel 'MSE, task random:ratio=0.7' noenhanced
set grid
set key outside right noenhanced
plot '/work/tvt/medium/figures/raw_task_mse_random_ratio_0.7.dat' index 0 using 1:2:3 with yerrorbars pt 7 ps 1.2 lc 1 title 'adaptive', '/work/tvt/medium/figures/raw_task_mse_random_ratio_0.7.dat' index 1 using 1:2:3 with yerrorbars pt 7 ps 1.2 lc 2 title 'cross', '/work/tvt/medium/figures/raw_task_mse_random_ratio_0.7.dat' index 2 using 1:2:3 with yerrorbars pt 7 ps 1.2 lc 3 title 'per-modality', '/work/tvt/medium/figures/raw_task_mse_random_ratio_0.7.dat' index 3 using 1:2:3 with yerrorbars pt 7 ps 1.2 lc 4 title 'sync', '/work/tvt/medium/figures/raw_task_mse_random_ratio_0.7.dat' index 4 using 1:2:3 with yerrorbars pt 7 ps 1.2 lc 5 title 'temporal'
