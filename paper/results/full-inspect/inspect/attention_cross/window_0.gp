set datafile separator ','
set terminal pngcairo size 1000,970 font ',9'
set output 'paper/results/full-inspect/inspect/attention_cross/window_0.png.tmp.png'
set multiplot layout 6,1 title "cross (fine-tuned), test window 0 - walking\nshade: cls row of the attention rollout (white 0.00566728, red 0.0339136); grey: masked"
set termoption noenhanced
set lmargin 10
set key off
set xrange [0:199]
unset object
set object 1 rect from -0.5, graph 0 to 19.5, graph 1 fc rgb '#dd9aa2' fs solid noborder behind
set object 2 rect from 19.5, graph 0 to 39.5, graph 1 fc rgb '#eac0c5' fs solid noborder behind
set object 3 rect from 39.5, graph 0 to 59.5, graph 1 fc rgb '#df9fa7' fs solid noborder behind
set object 4 rect from 59.5, graph 0 to 79.5, graph 1 fc rgb '#d78993' fs solid noborder behind
set object 5 rect from 79.5, graph 0 to 99.5, graph 1 fc rgb '#e8bbc1' fs solid noborder behind
set object 6 rect from 99.5, graph 0 to 119.5, graph 1 fc rgb '#e2a8af' fs solid noborder behind
set object 7 rect from 119.5, graph 0 to 139.5, graph 1 fc rgb '#d78892' fs solid noborder behind
set object 8 rect from 139.5, graph 0 to 159.5, graph 1 fc rgb '#e8bac0' fs solid noborder behind
set object 9 rect from 159.5, graph 0 to 179.5, graph 1 fc rgb '#e3abb2' fs solid noborder behind
set object 10 rect from 179.5, graph 0 to 199.5, graph 1 fc rgb '#da919a' fs solid noborder behind
set ylabel 'acc_x'
plot 'paper/results/full-inspect/inspect/attention_cross/window_0_signal.csv' every ::1 using 1:2 with lines lc rgb 'black' lw 1.2
unset object
set object 1 rect from -0.5, graph 0 to 19.5, graph 1 fc rgb '#f4dfe2' fs solid noborder behind
set object 2 rect from 19.5, graph 0 to 39.5, graph 1 fc rgb '#d0727d' fs solid noborder behind
set object 3 rect from 39.5, graph 0 to 59.5, graph 1 fc rgb '#d27984' fs solid noborder behind
set object 4 rect from 59.5, graph 0 to 79.5, graph 1 fc rgb '#efd1d5' fs solid noborder behind
set object 5 rect from 79.5, graph 0 to 99.5, graph 1 fc rgb '#e9bfc4' fs solid noborder behind
set object 6 rect from 99.5, graph 0 to 119.5, graph 1 fc rgb '#efd1d4' fs solid noborder behind
set object 7 rect from 119.5, graph 0 to 139.5, graph 1 fc rgb '#f2dadd' fs solid noborder behind
set object 8 rect from 139.5, graph 0 to 159.5, graph 1 fc rgb '#d78791' fs solid noborder behind
set object 9 rect from 159.5, graph 0 to 179.5, graph 1 fc rgb '#c04353' fs solid noborder behind
set object 10 rect from 179.5, graph 0 to 199.5, graph 1 fc rgb '#ebc4c9' fs solid noborder behind
set ylabel 'acc_y'
plot 'paper/results/full-inspect/inspect/attention_cross/window_0_signal.csv' every ::1 using 1:3 with lines lc rgb 'black' lw 1.2
unset object
set object 1 rect from -0.5, graph 0 to 19.5, graph 1 fc rgb '#efd1d5' fs solid noborder behind
set object 2 rect from 19.5, graph 0 to 39.5, graph 1 fc rgb '#eeced2' fs solid noborder behind
set object 3 rect from 39.5, graph 0 to 59.5, graph 1 fc rgb '#ebc4c9' fs solid noborder behind
set object 4 rect from 59.5, graph 0 to 79.5, graph 1 fc rgb '#f3dbde' fs solid noborder behind
set object 5 rect from 79.5, graph 0 to 99.5, graph 1 fc rgb '#f3dddf' fs solid noborder behind
set object 6 rect from 99.5, graph 0 to 119.5, graph 1 fc rgb '#f4dfe2' fs solid noborder behind
set object 7 rect from 119.5, graph 0 to 139.5, graph 1 fc rgb '#f1d7db' fs solid noborder behind
set object 8 rect from 139.5, graph 0 to 159.5, graph 1 fc rgb '#edcace' fs solid noborder behind
set object 9 rect from 159.5, graph 0 to 179.5, graph 1 fc rgb '#e9bdc2' fs solid noborder behind
set object 10 rect from 179.5, graph 0 to 199.5, graph 1 fc rgb '#b31d2f' fs solid noborder behind
set ylabel 'acc_z'
plot 'paper/results/full-inspect/inspect/attention_cross/window_0_signal.csv' every ::1 using 1:4 with lines lc rgb 'black' lw 1.2
unset object
set object 1 rect from -0.5, graph 0 to 19.5, graph 1 fc rgb '#b2182b' fs solid noborder behind
set object 2 rect from 19.5, graph 0 to 39.5, graph 1 fc rgb '#e9bfc5' fs solid noborder behind
set object 3 rect from 39.5, graph 0 to 59.5, graph 1 fc rgb '#b62638' fs solid noborder behind
set object 4 rect from 59.5, graph 0 to 79.5, graph 1 fc rgb '#d4808a' fs solid noborder behind
set object 5 rect from 79.5, graph 0 to 99.5, graph 1 fc rgb '#d78791' fs solid noborder behind
set object 6 rect from 99.5, graph 0 to 119.5, graph 1 fc rgb '#e0a4ac' fs solid noborder behind
set object 7 rect from 119.5, graph 0 to 139.5, graph 1 fc rgb '#edcbcf' fs solid noborder behind
set object 8 rect from 139.5, graph 0 to 159.5, graph 1 fc rgb '#bc3647' fs solid noborder behind
set object 9 rect from 159.5, graph 0 to 179.5, graph 1 fc rgb '#c85a67' fs solid noborder behind
set object 10 rect from 179.5, graph 0 to 199.5, graph 1 fc rgb '#c44e5d' fs solid noborder behind
set ylabel 'gyro_x'
plot 'paper/results/full-inspect/inspect/attention_cross/window_0_signal.csv' every ::1 using 1:5 with lines lc rgb 'black' lw 1.2
unset object
set object 1 rect from -0.5, graph 0 to 19.5, graph 1 fc rgb '#fdf9f9' fs solid noborder behind
set object 2 rect from 19.5, graph 0 to 39.5, graph 1 fc rgb '#e9bfc4' fs solid noborder behind
set object 3 rect from 39.5, graph 0 to 59.5, graph 1 fc rgb '#fbf4f5' fs solid noborder behind
set object 4 rect from 59.5, graph 0 to 79.5, graph 1 fc rgb '#ffffff' fs solid noborder behind
set object 5 rect from 79.5, graph 0 to 99.5, graph 1 fc rgb '#faf1f2' fs solid noborder behind
set object 6 rect from 99.5, graph 0 to 119.5, graph 1 fc rgb '#fdfbfb' fs solid noborder behind
set object 7 rect from 119.5, graph 0 to 139.5, graph 1 fc rgb '#fcf7f7' fs solid noborder behind
set object 8 rect from 139.5, graph 0 to 159.5, graph 1 fc rgb '#e9bdc2' fs solid noborder behind
set object 9 rect from 159.5, graph 0 to 179.5, graph 1 fc rgb '#e1a5ad' fs solid noborder behind
set object 10 rect from 179.5, graph 0 to 199.5, graph 1 fc rgb '#ebc3c8' fs solid noborder behind
set ylabel 'gyro_y'
plot 'paper/results/full-inspect/inspect/attention_cross/window_0_signal.csv' every ::1 using 1:6 with lines lc rgb 'black' lw 1.2
unset object
set object 1 rect from -0.5, graph 0 to 19.5, graph 1 fc rgb '#f9eff0' fs solid noborder behind
set object 2 rect from 19.5, graph 0 to 39.5, graph 1 fc rgb '#e9bec3' fs solid noborder behind
set object 3 rect from 39.5, graph 0 to 59.5, graph 1 fc rgb '#f7e7e9' fs solid noborder behind
set object 4 rect from 59.5, graph 0 to 79.5, graph 1 fc rgb '#f8ebed' fs solid noborder behind
set object 5 rect from 79.5, graph 0 to 99.5, graph 1 fc rgb '#efd0d4' fs solid noborder behind
set object 6 rect from 99.5, graph 0 to 119.5, graph 1 fc rgb '#f4dee0' fs solid noborder behind
set object 7 rect from 119.5, graph 0 to 139.5, graph 1 fc rgb '#ecc7cb' fs solid noborder behind
set object 8 rect from 139.5, graph 0 to 159.5, graph 1 fc rgb '#f7e9eb' fs solid noborder behind
set object 9 rect from 159.5, graph 0 to 179.5, graph 1 fc rgb '#f4dee1' fs solid noborder behind
set object 10 rect from 179.5, graph 0 to 199.5, graph 1 fc rgb '#e7b7bd' fs solid noborder behind
set ylabel 'gyro_z'
plot 'paper/results/full-inspect/inspect/attention_cross/window_0_signal.csv' every ::1 using 1:7 with lines lc rgb 'black' lw 1.2
unset multiplot
