set datafile separator ','
set terminal pngcairo size 1000,970 font ',9'
set output 'paper/results/full-inspect/inspect/attention_scratch/window_3.png.tmp.png'
set multiplot layout 6,1 title "scratch (fine-tuned), test window 3 - laying\nshade: cls row of the attention rollout (white 0.0113774, red 0.0244756); grey: masked"
set termoption noenhanced
set lmargin 10
set key off
set xrange [0:199]
unset object
set object 1 rect from -0.5, graph 0 to 19.5, graph 1 fc rgb '#c65563' fs solid noborder behind
set object 2 rect from 19.5, graph 0 to 39.5, graph 1 fc rgb '#cd6a77' fs solid noborder behind
set object 3 rect from 39.5, graph 0 to 59.5, graph 1 fc rgb '#da919a' fs solid noborder behind
set object 4 rect from 59.5, graph 0 to 79.5, graph 1 fc rgb '#de9ca4' fs solid noborder behind
set object 5 rect from 79.5, graph 0 to 99.5, graph 1 fc rgb '#d37c86' fs solid noborder behind
set object 6 rect from 99.5, graph 0 to 119.5, graph 1 fc rgb '#c75966' fs solid noborder behind
set object 7 rect from 119.5, graph 0 to 139.5, graph 1 fc rgb '#c14656' fs solid noborder behind
set object 8 rect from 139.5, graph 0 to 159.5, graph 1 fc rgb '#bf4151' fs solid noborder behind
set object 9 rect from 159.5, graph 0 to 179.5, graph 1 fc rgb '#d17782' fs solid noborder behind
set object 10 rect from 179.5, graph 0 to 199.5, graph 1 fc rgb '#edc9cd' fs solid noborder behind
set ylabel 'acc_x'
plot 'paper/results/full-inspect/inspect/attention_scratch/window_3_signal.csv' every ::1 using 1:2 with lines lc rgb 'black' lw 1.2
unset object
set object 1 rect from -0.5, graph 0 to 19.5, graph 1 fc rgb '#b2182b' fs solid noborder behind
set object 2 rect from 19.5, graph 0 to 39.5, graph 1 fc rgb '#bb3444' fs solid noborder behind
set object 3 rect from 39.5, graph 0 to 59.5, graph 1 fc rgb '#c4505e' fs solid noborder behind
set object 4 rect from 59.5, graph 0 to 79.5, graph 1 fc rgb '#c55260' fs solid noborder behind
set object 5 rect from 79.5, graph 0 to 99.5, graph 1 fc rgb '#c14554' fs solid noborder behind
set object 6 rect from 99.5, graph 0 to 119.5, graph 1 fc rgb '#c14555' fs solid noborder behind
set object 7 rect from 119.5, graph 0 to 139.5, graph 1 fc rgb '#ca606d' fs solid noborder behind
set object 8 rect from 139.5, graph 0 to 159.5, graph 1 fc rgb '#d88b95' fs solid noborder behind
set object 9 rect from 159.5, graph 0 to 179.5, graph 1 fc rgb '#e2a9b0' fs solid noborder behind
set object 10 rect from 179.5, graph 0 to 199.5, graph 1 fc rgb '#e2a8af' fs solid noborder behind
set ylabel 'acc_y'
plot 'paper/results/full-inspect/inspect/attention_scratch/window_3_signal.csv' every ::1 using 1:3 with lines lc rgb 'black' lw 1.2
unset object
set object 1 rect from -0.5, graph 0 to 19.5, graph 1 fc rgb '#f0d2d6' fs solid noborder behind
set object 2 rect from 19.5, graph 0 to 39.5, graph 1 fc rgb '#efd0d4' fs solid noborder behind
set object 3 rect from 39.5, graph 0 to 59.5, graph 1 fc rgb '#f5e3e5' fs solid noborder behind
set object 4 rect from 59.5, graph 0 to 79.5, graph 1 fc rgb '#fbf5f6' fs solid noborder behind
set object 5 rect from 79.5, graph 0 to 99.5, graph 1 fc rgb '#faf1f2' fs solid noborder behind
set object 6 rect from 99.5, graph 0 to 119.5, graph 1 fc rgb '#f6e4e7' fs solid noborder behind
set object 7 rect from 119.5, graph 0 to 139.5, graph 1 fc rgb '#f1d7da' fs solid noborder behind
set object 8 rect from 139.5, graph 0 to 159.5, graph 1 fc rgb '#f0d4d8' fs solid noborder behind
set object 9 rect from 159.5, graph 0 to 179.5, graph 1 fc rgb '#f2d8db' fs solid noborder behind
set object 10 rect from 179.5, graph 0 to 199.5, graph 1 fc rgb '#f9edef' fs solid noborder behind
set ylabel 'acc_z'
plot 'paper/results/full-inspect/inspect/attention_scratch/window_3_signal.csv' every ::1 using 1:4 with lines lc rgb 'black' lw 1.2
unset object
set object 1 rect from -0.5, graph 0 to 19.5, graph 1 fc rgb '#ebc4c9' fs solid noborder behind
set object 2 rect from 19.5, graph 0 to 39.5, graph 1 fc rgb '#f1d5d8' fs solid noborder behind
set object 3 rect from 39.5, graph 0 to 59.5, graph 1 fc rgb '#faf0f2' fs solid noborder behind
set object 4 rect from 59.5, graph 0 to 79.5, graph 1 fc rgb '#ffffff' fs solid noborder behind
set object 5 rect from 79.5, graph 0 to 99.5, graph 1 fc rgb '#fdf9fa' fs solid noborder behind
set object 6 rect from 99.5, graph 0 to 119.5, graph 1 fc rgb '#f9eef0' fs solid noborder behind
set object 7 rect from 119.5, graph 0 to 139.5, graph 1 fc rgb '#f7e8ea' fs solid noborder behind
set object 8 rect from 139.5, graph 0 to 159.5, graph 1 fc rgb '#f7e7e9' fs solid noborder behind
set object 9 rect from 159.5, graph 0 to 179.5, graph 1 fc rgb '#f4dee0' fs solid noborder behind
set object 10 rect from 179.5, graph 0 to 199.5, graph 1 fc rgb '#eecdd1' fs solid noborder behind
set ylabel 'gyro_x'
plot 'paper/results/full-inspect/inspect/attention_scratch/window_3_signal.csv' every ::1 using 1:5 with lines lc rgb 'black' lw 1.2
unset object
set object 1 rect from -0.5, graph 0 to 19.5, graph 1 fc rgb '#e9bfc4' fs solid noborder behind
set object 2 rect from 19.5, graph 0 to 39.5, graph 1 fc rgb '#edcbcf' fs solid noborder behind
set object 3 rect from 39.5, graph 0 to 59.5, graph 1 fc rgb '#f7e9eb' fs solid noborder behind
set object 4 rect from 59.5, graph 0 to 79.5, graph 1 fc rgb '#fdfafa' fs solid noborder behind
set object 5 rect from 79.5, graph 0 to 99.5, graph 1 fc rgb '#fbf5f6' fs solid noborder behind
set object 6 rect from 99.5, graph 0 to 119.5, graph 1 fc rgb '#f6e6e8' fs solid noborder behind
set object 7 rect from 119.5, graph 0 to 139.5, graph 1 fc rgb '#f3dbde' fs solid noborder behind
set object 8 rect from 139.5, graph 0 to 159.5, graph 1 fc rgb '#efd1d5' fs solid noborder behind
set object 9 rect from 159.5, graph 0 to 179.5, graph 1 fc rgb '#ebc5ca' fs solid noborder behind
set object 10 rect from 179.5, graph 0 to 199.5, graph 1 fc rgb '#e4aeb5' fs solid noborder behind
set ylabel 'gyro_y'
plot 'paper/results/full-inspect/inspect/attention_scratch/window_3_signal.csv' every ::1 using 1:6 with lines lc rgb 'black' lw 1.2
unset object
set object 1 rect from -0.5, graph 0 to 19.5, graph 1 fc rgb '#e5b1b7' fs solid noborder behind
set object 2 rect from 19.5, graph 0 to 39.5, graph 1 fc rgb '#eeccd0' fs solid noborder behind
set object 3 rect from 39.5, graph 0 to 59.5, graph 1 fc rgb '#f8ebec' fs solid noborder behind
set object 4 rect from 59.5, graph 0 to 79.5, graph 1 fc rgb '#fdf9fa' fs solid noborder behind
set object 5 rect from 79.5, graph 0 to 99.5, graph 1 fc rgb '#faf1f2' fs solid noborder behind
set object 6 rect from 99.5, graph 0 to 119.5, graph 1 fc rgb '#f4e0e3' fs solid noborder behind
set object 7 rect from 119.5, graph 0 to 139.5, graph 1 fc rgb '#f5e2e4' fs solid noborder behind
set object 8 rect from 139.5, graph 0 to 159.5, graph 1 fc rgb '#f7e8ea' fs solid noborder behind
set object 9 rect from 159.5, graph 0 to 179.5, graph 1 fc rgb '#f7e9eb' fs solid noborder behind
set object 10 rect from 179.5, graph 0 to 199.5, graph 1 fc rgb '#f3dbde' fs solid noborder behind
set ylabel 'gyro_z'
plot 'paper/results/full-inspect/inspect/attention_scratch/window_3_signal.csv' every ::1 using 1:7 with lines lc rgb 'black' lw 1.2
unset multiplot
