set datafile separator ','
set terminal pngcairo size 1000,970 font ',9'
set output 'paper/results/full-inspect/inspect/attention_sync/window_3.png.tmp.png'
set multiplot layout 6,1 title "sync (fine-tuned), test window 3 - laying\nshade: cls row of the attention rollout (white 0.00549135, red 0.0425676); grey: masked"
set termoption noenhanced
set lmargin 10
set key off
set xrange [0:199]
unset object
set object 1 rect from -0.5, graph 0 to 19.5, graph 1 fc rgb '#e6b6bc' fs solid noborder behind
set object 2 rect from 19.5, graph 0 to 39.5, graph 1 fc rgb '#e3adb3' fs solid noborder behind
set object 3 rect from 39.5, graph 0 to 59.5, graph 1 fc rgb '#e6b5bb' fs solid noborder behind
set object 4 rect from 59.5, graph 0 to 79.5, graph 1 fc rgb '#ecc7cb' fs solid noborder behind
set object 5 rect from 79.5, graph 0 to 99.5, graph 1 fc rgb '#eeced2' fs solid noborder behind
set object 6 rect from 99.5, graph 0 to 119.5, graph 1 fc rgb '#efd1d5' fs solid noborder behind
set object 7 rect from 119.5, graph 0 to 139.5, graph 1 fc rgb '#efcfd3' fs solid noborder behind
set object 8 rect from 139.5, graph 0 to 159.5, graph 1 fc rgb '#ebc3c8' fs solid noborder behind
set object 9 rect from 159.5, graph 0 to 179.5, graph 1 fc rgb '#e6b6bc' fs solid noborder behind
set object 10 rect from 179.5, graph 0 to 199.5, graph 1 fc rgb '#e8bac0' fs solid noborder behind
set ylabel 'acc_x'
plot 'paper/results/full-inspect/inspect/attention_sync/window_3_signal.csv' every ::1 using 1:2 with lines lc rgb 'black' lw 1.2
unset object
set object 1 rect from -0.5, graph 0 to 19.5, graph 1 fc rgb '#c55260' fs solid noborder behind
set object 2 rect from 19.5, graph 0 to 39.5, graph 1 fc rgb '#c34c5b' fs solid noborder behind
set object 3 rect from 39.5, graph 0 to 59.5, graph 1 fc rgb '#c34c5b' fs solid noborder behind
set object 4 rect from 59.5, graph 0 to 79.5, graph 1 fc rgb '#c5515f' fs solid noborder behind
set object 5 rect from 79.5, graph 0 to 99.5, graph 1 fc rgb '#c65462' fs solid noborder behind
set object 6 rect from 99.5, graph 0 to 119.5, graph 1 fc rgb '#c34d5c' fs solid noborder behind
set object 7 rect from 119.5, graph 0 to 139.5, graph 1 fc rgb '#bc3747' fs solid noborder behind
set object 8 rect from 139.5, graph 0 to 159.5, graph 1 fc rgb '#b31c2f' fs solid noborder behind
set object 9 rect from 159.5, graph 0 to 179.5, graph 1 fc rgb '#b2182b' fs solid noborder behind
set object 10 rect from 179.5, graph 0 to 199.5, graph 1 fc rgb '#be3c4c' fs solid noborder behind
set ylabel 'acc_y'
plot 'paper/results/full-inspect/inspect/attention_sync/window_3_signal.csv' every ::1 using 1:3 with lines lc rgb 'black' lw 1.2
unset object
set object 1 rect from -0.5, graph 0 to 19.5, graph 1 fc rgb '#efd0d4' fs solid noborder behind
set object 2 rect from 19.5, graph 0 to 39.5, graph 1 fc rgb '#f2dadd' fs solid noborder behind
set object 3 rect from 39.5, graph 0 to 59.5, graph 1 fc rgb '#f5e3e5' fs solid noborder behind
set object 4 rect from 59.5, graph 0 to 79.5, graph 1 fc rgb '#f6e6e8' fs solid noborder behind
set object 5 rect from 79.5, graph 0 to 99.5, graph 1 fc rgb '#f6e5e7' fs solid noborder behind
set object 6 rect from 99.5, graph 0 to 119.5, graph 1 fc rgb '#f5e1e3' fs solid noborder behind
set object 7 rect from 119.5, graph 0 to 139.5, graph 1 fc rgb '#f2d9dc' fs solid noborder behind
set object 8 rect from 139.5, graph 0 to 159.5, graph 1 fc rgb '#efd0d3' fs solid noborder behind
set object 9 rect from 159.5, graph 0 to 179.5, graph 1 fc rgb '#edcace' fs solid noborder behind
set object 10 rect from 179.5, graph 0 to 199.5, graph 1 fc rgb '#eeced2' fs solid noborder behind
set ylabel 'acc_z'
plot 'paper/results/full-inspect/inspect/attention_sync/window_3_signal.csv' every ::1 using 1:4 with lines lc rgb 'black' lw 1.2
unset object
set object 1 rect from -0.5, graph 0 to 19.5, graph 1 fc rgb '#eeccd1' fs solid noborder behind
set object 2 rect from 19.5, graph 0 to 39.5, graph 1 fc rgb '#f1d5d8' fs solid noborder behind
set object 3 rect from 39.5, graph 0 to 59.5, graph 1 fc rgb '#f6e4e6' fs solid noborder behind
set object 4 rect from 59.5, graph 0 to 79.5, graph 1 fc rgb '#f9eeef' fs solid noborder behind
set object 5 rect from 79.5, graph 0 to 99.5, graph 1 fc rgb '#f9eff0' fs solid noborder behind
set object 6 rect from 99.5, graph 0 to 119.5, graph 1 fc rgb '#f7e9eb' fs solid noborder behind
set object 7 rect from 119.5, graph 0 to 139.5, graph 1 fc rgb '#f3dcdf' fs solid noborder behind
set object 8 rect from 139.5, graph 0 to 159.5, graph 1 fc rgb '#ecc8cd' fs solid noborder behind
set object 9 rect from 159.5, graph 0 to 179.5, graph 1 fc rgb '#e9bfc4' fs solid noborder behind
set object 10 rect from 179.5, graph 0 to 199.5, graph 1 fc rgb '#ebc5ca' fs solid noborder behind
set ylabel 'gyro_x'
plot 'paper/results/full-inspect/inspect/attention_sync/window_3_signal.csv' every ::1 using 1:5 with lines lc rgb 'black' lw 1.2
unset object
set object 1 rect from -0.5, graph 0 to 19.5, graph 1 fc rgb '#f8eaec' fs solid noborder behind
set object 2 rect from 19.5, graph 0 to 39.5, graph 1 fc rgb '#faf1f3' fs solid noborder behind
set object 3 rect from 39.5, graph 0 to 59.5, graph 1 fc rgb '#fdfafa' fs solid noborder behind
set object 4 rect from 59.5, graph 0 to 79.5, graph 1 fc rgb '#ffffff' fs solid noborder behind
set object 5 rect from 79.5, graph 0 to 99.5, graph 1 fc rgb '#fefefe' fs solid noborder behind
set object 6 rect from 99.5, graph 0 to 119.5, graph 1 fc rgb '#fdfbfb' fs solid noborder behind
set object 7 rect from 119.5, graph 0 to 139.5, graph 1 fc rgb '#fbf3f4' fs solid noborder behind
set object 8 rect from 139.5, graph 0 to 159.5, graph 1 fc rgb '#f7e9eb' fs solid noborder behind
set object 9 rect from 159.5, graph 0 to 179.5, graph 1 fc rgb '#f6e4e6' fs solid noborder behind
set object 10 rect from 179.5, graph 0 to 199.5, graph 1 fc rgb '#f8eaec' fs solid noborder behind
set ylabel 'gyro_y'
plot 'paper/results/full-inspect/inspect/attention_sync/window_3_signal.csv' every ::1 using 1:6 with lines lc rgb 'black' lw 1.2
unset object
set object 1 rect from -0.5, graph 0 to 19.5, graph 1 fc rgb '#f7e7e9' fs solid noborder behind
set object 2 rect from 19.5, graph 0 to 39.5, graph 1 fc rgb '#fbf4f5' fs solid noborder behind
set object 3 rect from 39.5, graph 0 to 59.5, graph 1 fc rgb '#fdfafa' fs solid noborder behind
set object 4 rect from 59.5, graph 0 to 79.5, graph 1 fc rgb '#fdfafb' fs solid noborder behind
set object 5 rect from 79.5, graph 0 to 99.5, graph 1 fc rgb '#fcf6f7' fs solid noborder behind
set object 6 rect from 99.5, graph 0 to 119.5, graph 1 fc rgb '#faf0f1' fs solid noborder behind
set object 7 rect from 119.5, graph 0 to 139.5, graph 1 fc rgb '#f9eef0' fs solid noborder behind
set object 8 rect from 139.5, graph 0 to 159.5, graph 1 fc rgb '#f9edee' fs solid noborder behind
set object 9 rect from 159.5, graph 0 to 179.5, graph 1 fc rgb '#f9eef0' fs solid noborder behind
set object 10 rect from 179.5, graph 0 to 199.5, graph 1 fc rgb '#fbf5f6' fs solid noborder behind
set ylabel 'gyro_z'
plot 'paper/results/full-inspect/inspect/attention_sync/window_3_signal.csv' every ::1 using 1:7 with lines lc rgb 'black' lw 1.2
unset multiplot
