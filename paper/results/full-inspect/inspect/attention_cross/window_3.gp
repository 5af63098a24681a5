set datafile separator ','
set terminal pngcairo size 1000,970 font ',9'
set output 'paper/results/full-inspect/inspect/attention_cross/window_3.png.tmp.png'
set multiplot layout 6,1 title "cross (fine-tuned), test window 3 - laying\nshade: cls row of the attention rollout (white 0.00736132, red 0.0337942); grey: masked"
set termoption noenhanced
set lmargin 10
set key off
set xrange [0:199]
unset object
set object 1 rect from -0.5, graph 0 to 19.5, graph 1 fc rgb '#f3dbde' fs solid noborder behind
set object 2 rect from 19.5, graph 0 to 39.5, graph 1 fc rgb '#eac0c6' fs solid noborder behind
set object 3 rect from 39.5, graph 0 to 59.5, graph 1 fc rgb '#e3acb3' fs solid noborder behind
set object 4 rect from 59.5, graph 0 to 79.5, graph 1 fc rgb '#e4b0b7' fs solid noborder behind
set object 5 rect from 79.5, graph 0 to 99.5, graph 1 fc rgb '#e9bdc3' fs solid noborder behind
set object 6 rect from 99.5, graph 0 to 119.5, graph 1 fc rgb '#e8bbc1' fs solid noborder behind
set object 7 rect from 119.5, graph 0 to 139.5, graph 1 fc rgb '#e3acb3' fs solid noborder behind
set object 8 rect from 139.5, graph 0 to 159.5, graph 1 fc rgb '#dc98a0' fs solid noborder behind
set object 9 rect from 159.5, graph 0 to 179.5, graph 1 fc rgb '#dd99a1' fs solid noborder behind
set object 10 rect from 179.5, graph 0 to 199.5, graph 1 fc rgb '#e8bac0' fs solid noborder behind
set ylabel 'acc_x'
plot 'paper/results/full-inspect/inspect/attention_cross/window_3_signal.csv' every ::1 using 1:2 with lines lc rgb 'black' lw 1.2
unset object
set object 1 rect from -0.5, graph 0 to 19.5, graph 1 fc rgb '#c34b5a' fs solid noborder behind
set object 2 rect from 19.5, graph 0 to 39.5, graph 1 fc rgb '#c34b5a' fs solid noborder behind
set object 3 rect from 39.5, graph 0 to 59.5, graph 1 fc rgb '#c24958' fs solid noborder behind
set object 4 rect from 59.5, graph 0 to 79.5, graph 1 fc rgb '#c65563' fs solid noborder behind
set object 5 rect from 79.5, graph 0 to 99.5, graph 1 fc rgb '#ce6c78' fs solid noborder behind
set object 6 rect from 99.5, graph 0 to 119.5, graph 1 fc rgb '#d0747f' fs solid noborder behind
set object 7 rect from 119.5, graph 0 to 139.5, graph 1 fc rgb '#ca616e' fs solid noborder behind
set object 8 rect from 139.5, graph 0 to 159.5, graph 1 fc rgb '#bf3f4e' fs solid noborder behind
set object 9 rect from 159.5, graph 0 to 179.5, graph 1 fc rgb '#b2182b' fs solid noborder behind
set object 10 rect from 179.5, graph 0 to 199.5, graph 1 fc rgb '#b2182b' fs solid noborder behind
set ylabel 'acc_y'
plot 'paper/results/full-inspect/inspect/attention_cross/window_3_signal.csv' every ::1 using 1:3 with lines lc rgb 'black' lw 1.2
unset object
set object 1 rect from -0.5, graph 0 to 19.5, graph 1 fc rgb '#f7e7e9' fs solid noborder behind
set object 2 rect from 19.5, graph 0 to 39.5, graph 1 fc rgb '#f4dee1' fs solid noborder behind
set object 3 rect from 39.5, graph 0 to 59.5, graph 1 fc rgb '#efcfd3' fs solid noborder behind
set object 4 rect from 59.5, graph 0 to 79.5, graph 1 fc rgb '#edcbcf' fs solid noborder behind
set object 5 rect from 79.5, graph 0 to 99.5, graph 1 fc rgb '#f4dfe1' fs solid noborder behind
set object 6 rect from 99.5, graph 0 to 119.5, graph 1 fc rgb '#f9edee' fs solid noborder behind
set object 7 rect from 119.5, graph 0 to 139.5, graph 1 fc rgb '#f9edee' fs solid noborder behind
set object 8 rect from 139.5, graph 0 to 159.5, graph 1 fc rgb '#f4e0e3' fs solid noborder behind
set object 9 rect from 159.5, graph 0 to 179.5, graph 1 fc rgb '#e9bec3' fs solid noborder behind
set object 10 rect from 179.5, graph 0 to 199.5, graph 1 fc rgb '#c44f5d' fs solid noborder behind
set ylabel 'acc_z'
plot 'paper/results/full-inspect/inspect/attention_cross/window_3_signal.csv' every ::1 using 1:4 with lines lc rgb 'black' lw 1.2
unset object
set object 1 rect from -0.5, graph 0 to 19.5, graph 1 fc rgb '#f8ebed' fs solid noborder behind
set object 2 rect from 19.5, graph 0 to 39.5, graph 1 fc rgb '#f8eced' fs solid noborder behind
set object 3 rect from 39.5, graph 0 to 59.5, graph 1 fc rgb '#fbf4f4' fs solid noborder behind
set object 4 rect from 59.5, graph 0 to 79.5, graph 1 fc rgb '#fefcfc' fs solid noborder behind
set object 5 rect from 79.5, graph 0 to 99.5, graph 1 fc rgb '#ffffff' fs solid noborder behind
set object 6 rect from 99.5, graph 0 to 119.5, graph 1 fc rgb '#fdfafb' fs solid noborder behind
set object 7 rect from 119.5, graph 0 to 139.5, graph 1 fc rgb '#faf0f1' fs solid noborder behind
set object 8 rect from 139.5, graph 0 to 159.5, graph 1 fc rgb '#f4dee0' fs solid noborder behind
set object 9 rect from 159.5, graph 0 to 179.5, graph 1 fc rgb '#ecc8cc' fs solid noborder behind
set object 10 rect from 179.5, graph 0 to 199.5, graph 1 fc rgb '#e9bfc4' fs solid noborder behind
set ylabel 'gyro_x'
plot 'paper/results/full-inspect/inspect/attention_cross/window_3_signal.csv' every ::1 using 1:5 with lines lc rgb 'black' lw 1.2
unset object
set object 1 rect from -0.5, graph 0 to 19.5, graph 1 fc rgb '#e9bdc2' fs solid noborder behind
set object 2 rect from 19.5, graph 0 to 39.5, graph 1 fc rgb '#f2d9dc' fs solid noborder behind
set object 3 rect from 39.5, graph 0 to 59.5, graph 1 fc rgb '#faf0f1' fs solid noborder behind
set object 4 rect from 59.5, graph 0 to 79.5, graph 1 fc rgb '#fcf8f9' fs solid noborder behind
set object 5 rect from 79.5, graph 0 to 99.5, graph 1 fc rgb '#fcf6f7' fs solid noborder behind
set object 6 rect from 99.5, graph 0 to 119.5, graph 1 fc rgb '#f8ebed' fs solid noborder behind
set object 7 rect from 119.5, graph 0 to 139.5, graph 1 fc rgb '#f3dbde' fs solid noborder behind
set object 8 rect from 139.5, graph 0 to 159.5, graph 1 fc rgb '#f1d6d9' fs solid noborder behind
set object 9 rect from 159.5, graph 0 to 179.5, graph 1 fc rgb '#f4e0e2' fs solid noborder behind
set object 10 rect from 179.5, graph 0 to 199.5, graph 1 fc rgb '#f7e7e9' fs solid noborder behind
set ylabel 'gyro_y'
plot 'paper/results/full-inspect/inspect/attention_cross/window_3_signal.csv' every ::1 using 1:6 with lines lc rgb 'black' lw 1.2
unset object
set object 1 rect from -0.5, graph 0 to 19.5, graph 1 fc rgb '#ebc3c8' fs solid noborder behind
set object 2 rect from 19.5, graph 0 to 39.5, graph 1 fc rgb '#f0d3d6' fs solid noborder behind
set object 3 rect from 39.5, graph 0 to 59.5, graph 1 fc rgb '#f3dde0' fs solid noborder behind
set object 4 rect from 59.5, graph 0 to 79.5, graph 1 fc rgb '#f4dfe2' fs solid noborder behind
set object 5 rect from 79.5, graph 0 to 99.5, graph 1 fc rgb '#f3dde0' fs solid noborder behind
set object 6 rect from 99.5, graph 0 to 119.5, graph 1 fc rgb '#efd0d4' fs solid noborder behind
set object 7 rect from 119.5, graph 0 to 139.5, graph 1 fc rgb '#edcbcf' fs solid noborder behind
set object 8 rect from 139.5, graph 0 to 159.5, graph 1 fc rgb '#f2dadd' fs solid noborder behind
set object 9 rect from 159.5, graph 0 to 179.5, graph 1 fc rgb '#f8ebed' fs solid noborder behind
set object 10 rect from 179.5, graph 0 to 199.5, graph 1 fc rgb '#fbf4f5' fs solid noborder behind
set ylabel 'gyro_z'
plot 'paper/results/full-inspect/inspect/attention_cross/window_3_signal.csv' every ::1 using 1:7 with lines lc rgb 'black' lw 1.2
unset multiplot
