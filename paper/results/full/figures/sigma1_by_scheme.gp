set terminal pngcairo size 900,560 font 'DejaVu Sans,10'
set output '/work/fullrun/results/figures/sigma1_by_scheme.png'
set datafile separator '\t'
set title 'sigma_1(Gamma) by masking scheme (mean over mask draws, 95% CI)'
set ylabel 'sigma_1'
set yrange [0:1.05]
set xtics rotate by -35
set grid ytics
set key below
set style fill solid 0.5
set boxwidth 0.6
plot '/work/fullrun/results/figures/sigma1_by_scheme.dat' using 0:2:xtic(1) with boxes title 'measured', '' using 0:2:3:4 with yerrorbars lc rgb 'black' pt 0 notitle, '' using 0:5 with points pt 7 ps 1.5 lc rgb 'red' title 'paper (encoder features)'
