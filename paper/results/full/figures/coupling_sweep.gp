set terminal pngcairo size 900,560 font 'DejaVu Sans,10'
set output '/work/fullrun/results/figures/coupling_sweep.png'
set datafile separator '\t'
set title 'cross - sync score difference vs cross-modal coupling (95% CI)'
set xlabel 'generator coupling c'
set ylabel 'sigma_1(cross) - sigma_1(sync)'
set grid
set key top left
set xzeroaxis lt -1
plot '/work/fullrun/results/figures/coupling_sweep.dat' index 0 using 1:2:3:4 with yerrorlines title "raw all", '/work/fullrun/results/figures/coupling_sweep.dat' index 1 using 1:2:3:4 with yerrorlines title "raw acc->gyro", '/work/fullrun/results/figures/coupling_sweep.dat' index 2 using 1:2:3:4 with yerrorlines title "patch-mean all", '/work/fullrun/results/figures/coupling_sweep.dat' index 3 using 1:2:3:4 with yerrorlines title "patch-mean acc->gyro"
