set terminal pngcairo size 800,560 font 'DejaVu Sans,10'
set output 'paper/results/policy_study/figures/encoder_task_mse_sensor_keep_1.png'
set title 'score (encoder) vs MSE, task sensor:keep=1 (mean over seeds, bars: seed SD)' noenhanced
set xlabel 'E_m[Phi(m)], encoder features' noenhanced
set ylabel 'MSE, task sensor:keep=1' noenhanced
set grid
set key outside right noenhanced
plot 'paper/results/policy_study/figures/encoder_task_mse_sensor_keep_1.dat' index 0 using 1:2:3 with yerrorbars pt 7 ps 1.2 lc 1 title 'adaptive', 'paper/results/policy_study/figures/encoder_task_mse_sensor_keep_1.dat' index 1 using 1:2:3 with yerrorbars pt 7 ps 1.2 lc 2 title 'cross', 'paper/results/policy_study/figures/encoder_task_mse_sensor_keep_1.dat' index 2 using 1:2:3 with yerrorbars pt 7 ps 1.2 lc 3 title 'extrapolation', 'paper/results/policy_study/figures/encoder_task_mse_sensor_keep_1.dat' index 3 using 1:2:3 with yerrorbars pt 7 ps 1.2 lc 4 title 'per-modality', 'paper/results/policy_study/figures/encoder_task_mse_sensor_keep_1.dat' index 4 using 1:2:3 with yerrorbars pt 7 ps 1.2 lc 5 title 'sensor', 'paper/results/policy_study/figures/encoder_task_mse_sensor_keep_1.dat' index 5 using 1:2:3 with yerrorbars pt 7 ps 1.2 lc 6 title 'sync', 'paper/results/policy_study/figures/encoder_task_mse_sensor_keep_1.dat' index 6 using 1:2:3 with yerrorbars pt 7 ps 1.2 lc 7 title 'temporal'
