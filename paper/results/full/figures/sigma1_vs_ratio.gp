set terminal pngcairo size 900,560 font 'DejaVu Sans,10'
set output '/work/fullrun/results/figures/sigma1_vs_ratio.png'
set datafile separator '\t'
set title 'sigma_1(Gamma) vs mask ratio'
set xlabel 'mask ratio'
set ylabel 'sigma_1'
set grid
set key bottom left
plot '/work/fullrun/results/figures/sigma1_vs_ratio.dat' index 0 using 1:2:3:4 with yerrorlines title "raw cross", '/work/fullrun/results/figures/sigma1_vs_ratio.dat' index 1 using 1:2:3:4 with yerrorlines title "raw sync", '/work/fullrun/results/figures/sigma1_vs_ratio.dat' index 2 using 1:2:3:4 with yerrorlines title "patch-mean cross", '/work/fullrun/results/figures/sigma1_vs_ratio.dat' index 3 using 1:2:3:4 with yerrorlines title "patch-mean sync", '/work/fullrun/results/figures/sigma1_vs_ratio.dat' index 4 using 1:2:3:4 with yerrorlines title "encoder cross", '/work/fullrun/results/figures/sigma1_vs_ratio.dat' index 5 using 1:2:3:4 with yerrorlines title "encoder sync"
