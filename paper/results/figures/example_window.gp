set terminal pngcairo size 900,560 font 'DejaVu Sans,10'
set output 'paper/results/figures/example_window.png'
set datafile separator '\t'
set terminal pngcairo size 900,800 font 'DejaVu Sans,9'
set output 'paper/results/figures/example_window.png'
set multiplot layout 6,1 title 'a synthetic walking window on its 6 x 10 grid of (modality, time patch) tokens (Lp = 20); grey: one cross-modality mask, ratio 0.75'
set termoption noenhanced
set key off
set lmargin 10
set xrange [0:199]
set xtics 20 format ''
set grid xtics lt 1 lc rgb '#808080' lw 0.6
unset object
set object 1 rect from -0.5, graph 0 to 19.5, graph 1 fc rgb '#d9d9d9' fs solid noborder behind
set object 2 rect from 19.5, graph 0 to 39.5, graph 1 fc rgb '#d9d9d9' fs solid noborder behind
set object 3 rect from 39.5, graph 0 to 59.5, graph 1 fc rgb '#d9d9d9' fs solid noborder behind
set object 4 rect from 59.5, graph 0 to 79.5, graph 1 fc rgb '#d9d9d9' fs solid noborder behind
set object 5 rect from 79.5, graph 0 to 99.5, graph 1 fc rgb '#d9d9d9' fs solid noborder behind
set object 6 rect from 99.5, graph 0 to 119.5, graph 1 fc rgb '#d9d9d9' fs solid noborder behind
set object 7 rect from 179.5, graph 0 to 199.5, graph 1 fc rgb '#d9d9d9' fs solid noborder behind
set ylabel "acc_x"
plot 'paper/results/figures/example_window.dat' using 1:2 with lines lc rgb 'black' lw 1.1
unset object
set object 1 rect from -0.5, graph 0 to 19.5, graph 1 fc rgb '#d9d9d9' fs solid noborder behind
set object 2 rect from 19.5, graph 0 to 39.5, graph 1 fc rgb '#d9d9d9' fs solid noborder behind
set object 3 rect from 59.5, graph 0 to 79.5, graph 1 fc rgb '#d9d9d9' fs solid noborder behind
set object 4 rect from 119.5, graph 0 to 139.5, graph 1 fc rgb '#d9d9d9' fs solid noborder behind
set object 5 rect from 139.5, graph 0 to 159.5, graph 1 fc rgb '#d9d9d9' fs solid noborder behind
set object 6 rect from 159.5, graph 0 to 179.5, graph 1 fc rgb '#d9d9d9' fs solid noborder behind
set object 7 rect from 179.5, graph 0 to 199.5, graph 1 fc rgb '#d9d9d9' fs solid noborder behind
set ylabel "acc_y"
plot 'paper/results/figures/example_window.dat' using 1:3 with lines lc rgb 'black' lw 1.1
unset object
set object 1 rect from -0.5, graph 0 to 19.5, graph 1 fc rgb '#d9d9d9' fs solid noborder behind
set object 2 rect from 19.5, graph 0 to 39.5, graph 1 fc rgb '#d9d9d9' fs solid noborder behind
set object 3 rect from 39.5, graph 0 to 59.5, graph 1 fc rgb '#d9d9d9' fs solid noborder behind
set object 4 rect from 59.5, graph 0 to 79.5, graph 1 fc rgb '#d9d9d9' fs solid noborder behind
set object 5 rect from 99.5, graph 0 to 119.5, graph 1 fc rgb '#d9d9d9' fs solid noborder behind
set object 6 rect from 119.5, graph 0 to 139.5, graph 1 fc rgb '#d9d9d9' fs solid noborder behind
set object 7 rect from 139.5, graph 0 to 159.5, graph 1 fc rgb '#d9d9d9' fs solid noborder behind
set object 8 rect from 159.5, graph 0 to 179.5, graph 1 fc rgb '#d9d9d9' fs solid noborder behind
set ylabel "acc_z"
plot 'paper/results/figures/example_window.dat' using 1:4 with lines lc rgb 'black' lw 1.1
unset object
set object 1 rect from -0.5, graph 0 to 19.5, graph 1 fc rgb '#d9d9d9' fs solid noborder behind
set object 2 rect from 19.5, graph 0 to 39.5, graph 1 fc rgb '#d9d9d9' fs solid noborder behind
set object 3 rect from 59.5, graph 0 to 79.5, graph 1 fc rgb '#d9d9d9' fs solid noborder behind
set object 4 rect from 99.5, graph 0 to 119.5, graph 1 fc rgb '#d9d9d9' fs solid noborder behind
set object 5 rect from 119.5, graph 0 to 139.5, graph 1 fc rgb '#d9d9d9' fs solid noborder behind
set object 6 rect from 139.5, graph 0 to 159.5, graph 1 fc rgb '#d9d9d9' fs solid noborder behind
set object 7 rect from 159.5, graph 0 to 179.5, graph 1 fc rgb '#d9d9d9' fs solid noborder behind
set object 8 rect from 179.5, graph 0 to 199.5, graph 1 fc rgb '#d9d9d9' fs solid noborder behind
set ylabel "gyro_x"
plot 'paper/results/figures/example_window.dat' using 1:5 with lines lc rgb 'black' lw 1.1
unset object
set object 1 rect from -0.5, graph 0 to 19.5, graph 1 fc rgb '#d9d9d9' fs solid noborder behind
set object 2 rect from 19.5, graph 0 to 39.5, graph 1 fc rgb '#d9d9d9' fs solid noborder behind
set object 3 rect from 39.5, graph 0 to 59.5, graph 1 fc rgb '#d9d9d9' fs solid noborder behind
set object 4 rect from 59.5, graph 0 to 79.5, graph 1 fc rgb '#d9d9d9' fs solid noborder behind
set object 5 rect from 99.5, graph 0 to 119.5, graph 1 fc rgb '#d9d9d9' fs solid noborder behind
set object 6 rect from 119.5, graph 0 to 139.5, graph 1 fc rgb '#d9d9d9' fs solid noborder behind
set object 7 rect from 139.5, graph 0 to 159.5, graph 1 fc rgb '#d9d9d9' fs solid noborder behind
set object 8 rect from 159.5, graph 0 to 179.5, graph 1 fc rgb '#d9d9d9' fs solid noborder behind
set object 9 rect from 179.5, graph 0 to 199.5, graph 1 fc rgb '#d9d9d9' fs solid noborder behind
set ylabel "gyro_y"
plot 'paper/results/figures/example_window.dat' using 1:6 with lines lc rgb 'black' lw 1.1
unset object
set object 1 rect from -0.5, graph 0 to 19.5, graph 1 fc rgb '#d9d9d9' fs solid noborder behind
set object 2 rect from 39.5, graph 0 to 59.5, graph 1 fc rgb '#d9d9d9' fs solid noborder behind
set object 3 rect from 79.5, graph 0 to 99.5, graph 1 fc rgb '#d9d9d9' fs solid noborder behind
set object 4 rect from 99.5, graph 0 to 119.5, graph 1 fc rgb '#d9d9d9' fs solid noborder behind
set object 5 rect from 119.5, graph 0 to 139.5, graph 1 fc rgb '#d9d9d9' fs solid noborder behind
set object 6 rect from 159.5, graph 0 to 179.5, graph 1 fc rgb '#d9d9d9' fs solid noborder behind
set xtics format '%g'
set xlabel 'sample (50 Hz)'
set ylabel "gyro_z"
plot 'paper/results/figures/example_window.dat' using 1:7 with lines lc rgb 'black' lw 1.1
unset multiplot
