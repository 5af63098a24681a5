set datafile separator ','
set terminal pngcairo size 1000,970 font ',9'
set output 'paper/results/full-inspect/inspect/attention_scratch/window_0.png.tmp.png'
set multiplot layout 6,1 title "scratch (fine-tuned), test window 0 - walking\nshade: cls row of the attention rollout (white 0.00806347, red 0.0406244); grey: masked"
set termoption noenhanced
set lmargin 10
set key off
set xrange [0:199]
unset object
set object 1 rect from -0.5, graph 0 to 19.5, graph 1 fc rgb '#df9fa7' fs solid noborder behind
set object 2 rect from 19.5, graph 0 to 39.5, graph 1 fc rgb '#db949d' fs solid noborder behind
set object 3 rect from 39.5, graph 0 to 59.5, graph 1 fc rgb '#f8eaec' fs solid noborder behind
set object 4 rect from 59.5, graph 0 to 79.5, graph 1 fc rgb '#eecdd1' fs solid noborder behind
set object 5 rect from 79.5, graph 0 to 99.5, graph 1 fc rgb '#e1a6ad' fs solid noborder behind
set object 6 rect from 99.5, graph 0 to 119.5, graph 1 fc rgb '#f8eced' fs solid noborder behind
set object 7 rect from 119.5, graph 0 to 139.5, graph 1 fc rgb '#f2dadd' fs solid noborder behind
set object 8 rect from 139.5, graph 0 to 159.5, graph 1 fc rgb '#df9fa7' fs solid noborder behind
set object 9 rect from 159.5, graph 0 to 179.5, graph 1 fc rgb '#f8ecee' fs solid noborder behind
set object 10 rect from 179.5, graph 0 to 199.5, graph 1 fc rgb '#f5e2e5' fs solid noborder behind
set ylabel 'acc_x'
plot 'paper/results/full-inspect/inspect/attention_scratch/window_0_signal.csv' every ::1 using 1:2 with lines lc rgb 'black' lw 1.2
unset object
set object 1 rect from -0.5, graph 0 to 19.5, graph 1 fc rgb '#f6e6e8' fs solid noborder behind
set object 2 rect from 19.5, graph 0 to 39.5, graph 1 fc rgb '#f7e7e9' fs solid noborder behind
set object 3 rect from 39.5, graph 0 to 59.5, graph 1 fc rgb '#f8ecee' fs solid noborder behind
set object 4 rect from 59.5, graph 0 to 79.5, graph 1 fc rgb '#fbf3f4' fs solid noborder behind
set object 5 rect from 79.5, graph 0 to 99.5, graph 1 fc rgb '#faf1f2' fs solid noborder behind
set object 6 rect from 99.5, graph 0 to 119.5, graph 1 fc rgb '#f4dee0' fs solid noborder behind
set object 7 rect from 119.5, graph 0 to 139.5, graph 1 fc rgb '#e7b9bf' fs solid noborder behind
set object 8 rect from 139.5, graph 0 to 159.5, graph 1 fc rgb '#e4b0b7' fs solid noborder behind
set object 9 rect from 159.5, graph 0 to 179.5, graph 1 fc rgb '#ecc8cd' fs solid noborder behind
set object 10 rect from 179.5, graph 0 to 199.5, graph 1 fc rgb '#f2dadd' fs solid noborder behind
set ylabel 'acc_y'
plot 'paper/results/full-inspect/inspect/attention_scratch/window_0_signal.csv' every ::1 using 1:3 with lines lc rgb 'black' lw 1.2
unset object
set object 1 rect from -0.5, graph 0 to 19.5, graph 1 fc rgb '#f4dfe2' fs solid noborder behind
set object 2 rect from 19.5, graph 0 to 39.5, graph 1 fc rgb '#f6e5e7' fs solid noborder behind
set object 3 rect from 39.5, graph 0 to 59.5, graph 1 fc rgb '#fbf5f6' fs solid noborder behind
set object 4 rect from 59.5, graph 0 to 79.5, graph 1 fc rgb '#fcf7f8' fs solid noborder behind
set object 5 rect from 79.5, graph 0 to 99.5, graph 1 fc rgb '#fbf3f4' fs solid noborder behind
set object 6 rect from 99.5, graph 0 to 119.5, graph 1 fc rgb '#f9eff0' fs solid noborder behind
set object 7 rect from 119.5, graph 0 to 139.5, graph 1 fc rgb '#f8ecee' fs solid noborder behind
set object 8 rect from 139.5, graph 0 to 159.5, graph 1 fc rgb '#f8eaec' fs solid noborder behind
set object 9 rect from 159.5, graph 0 to 179.5, graph 1 fc rgb '#faf1f2' fs solid noborder behind
set object 10 rect from 179.5, graph 0 to 199.5, graph 1 fc rgb '#faf2f3' fs solid noborder behind
set ylabel 'acc_z'
plot 'paper/results/full-inspect/inspect/attention_scratch/window_0_signal.csv' every ::1 using 1:4 with lines lc rgb 'black' lw 1.2
unset object
set object 1 rect from -0.5, graph 0 to 19.5, graph 1 fc rgb '#cf707b' fs solid noborder behind
set object 2 rect from 19.5, graph 0 to 39.5, graph 1 fc rgb '#e4afb6' fs solid noborder behind
set object 3 rect from 39.5, graph 0 to 59.5, graph 1 fc rgb '#dd9ba3' fs solid noborder behind
set object 4 rect from 59.5, graph 0 to 79.5, graph 1 fc rgb '#e5b2b8' fs solid noborder behind
set object 5 rect from 79.5, graph 0 to 99.5, graph 1 fc rgb '#f3dcdf' fs solid noborder behind
set object 6 rect from 99.5, graph 0 to 119.5, graph 1 fc rgb '#dd9aa2' fs solid noborder behind
set object 7 rect from 119.5, graph 0 to 139.5, graph 1 fc rgb '#e8bcc1' fs solid noborder behind
set object 8 rect from 139.5, graph 0 to 159.5, graph 1 fc rgb '#b2182b' fs solid noborder behind
set object 9 rect from 159.5, graph 0 to 179.5, graph 1 fc rgb '#c4505e' fs solid noborder behind
set object 10 rect from 179.5, graph 0 to 199.5, graph 1 fc rgb '#e9bdc2' fs solid noborder behind
set ylabel 'gyro_x'
plot 'paper/results/full-inspect/inspect/attention_scratch/window_0_signal.csv' every ::1 using 1:5 with lines lc rgb 'black' lw 1.2
unset object
set object 1 rect from -0.5, graph 0 to 19.5, graph 1 fc rgb '#f1d7da' fs solid noborder behind
set object 2 rect from 19.5, graph 0 to 39.5, graph 1 fc rgb '#ecc7cc' fs solid noborder behind
set object 3 rect from 39.5, graph 0 to 59.5, graph 1 fc rgb '#edcace' fs solid noborder behind
set object 4 rect from 59.5, graph 0 to 79.5, graph 1 fc rgb '#fbf4f5' fs solid noborder behind
set object 5 rect from 79.5, graph 0 to 99.5, graph 1 fc rgb '#f3dde0' fs solid noborder behind
set object 6 rect from 99.5, graph 0 to 119.5, graph 1 fc rgb '#ffffff' fs solid noborder behind
set object 7 rect from 119.5, graph 0 to 139.5, graph 1 fc rgb '#f5e1e3' fs solid noborder behind
set object 8 rect from 139.5, graph 0 to 159.5, graph 1 fc rgb '#edc9ce' fs solid noborder behind
set object 9 rect from 159.5, graph 0 to 179.5, graph 1 fc rgb '#cd6975' fs solid noborder behind
set object 10 rect from 179.5, graph 0 to 199.5, graph 1 fc rgb '#bf4151' fs solid noborder behind
set ylabel 'gyro_y'
plot 'paper/results/full-inspect/inspect/attention_scratch/window_0_signal.csv' every ::1 using 1:6 with lines lc rgb 'black' lw 1.2
unset object
set object 1 rect from -0.5, graph 0 to 19.5, graph 1 fc rgb '#f5e2e4' fs solid noborder behind
set object 2 rect from 19.5, graph 0 to 39.5, graph 1 fc rgb '#f7e7e9' fs solid noborder behind
set object 3 rect from 39.5, graph 0 to 59.5, graph 1 fc rgb '#fcf6f7' fs solid noborder behind
set object 4 rect from 59.5, graph 0 to 79.5, graph 1 fc rgb '#f5e3e6' fs solid noborder behind
set object 5 rect from 79.5, graph 0 to 99.5, graph 1 fc rgb '#fdf9f9' fs solid noborder behind
set object 6 rect from 99.5, graph 0 to 119.5, graph 1 fc rgb '#f5e3e5' fs solid noborder behind
set object 7 rect from 119.5, graph 0 to 139.5, graph 1 fc rgb '#ecc6cb' fs solid noborder behind
set object 8 rect from 139.5, graph 0 to 159.5, graph 1 fc rgb '#faf0f1' fs solid noborder behind
set object 9 rect from 159.5, graph 0 to 179.5, graph 1 fc rgb '#f1d5d9' fs solid noborder behind
set object 10 rect from 179.5, graph 0 to 199.5, graph 1 fc rgb '#dc969f' fs solid noborder behind
set ylabel 'gyro_z'
plot 'paper/results/full-inspect/inspect/attention_scratch/window_0_signal.csv' every ::1 using 1:7 with lines lc rgb 'black' lw 1.2
unset multiplot
