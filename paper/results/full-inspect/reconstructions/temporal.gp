set datafile separator ','
set terminal pngcairo size 1000,1080 font ',9'
set output 'paper/results/full-inspect/reconstructions/temporal.png.tmp.png'
set multiplot layout 6,1 title 'window 0 - temporal:ratio=0.7 (shaded = masked, black = original, red = reconstruction, blue = linear, green = nearest, orange = mice)'
set termoption noenhanced
set lmargin 10
set key off
set xrange [0:199]
unset object
set object 1 rect from -0.5, graph 0 to 19.5, graph 1 fc rgb '#d9d9d9' fs solid noborder behind
set object 2 rect from 19.5, graph 0 to 39.5, graph 1 fc rgb '#d9d9d9' fs solid noborder behind
set object 3 rect from 39.5, graph 0 to 59.5, graph 1 fc rgb '#d9d9d9' fs solid noborder behind
set object 4 rect from 59.5, graph 0 to 79.5, graph 1 fc rgb '#d9d9d9' fs solid noborder behind
set object 5 rect from 79.5, graph 0 to 99.5, graph 1 fc rgb '#d9d9d9' fs solid noborder behind
set object 6 rect from 99.5, graph 0 to 119.5, graph 1 fc rgb '#d9d9d9' fs solid noborder behind
set object 7 rect from 119.5, graph 0 to 139.5, graph 1 fc rgb '#d9d9d9' fs solid noborder behind
set ylabel 'acc_x'
plot 'paper/results/full-inspect/reconstructions/temporal.csv' every ::1 using 1:2 with lines lc rgb 'black' lw 1.2, '' every ::1 using 1:20 with lines lc rgb '#1f77b4' lw 0.9 dt 2, '' every ::1 using 1:26 with lines lc rgb '#2ca02c' lw 0.9 dt 2, '' every ::1 using 1:32 with lines lc rgb '#ff7f0e' lw 0.9 dt 2, '' every ::1 using 1:3 with lines lc rgb '#d62728' lw 1.2
unset object
set object 1 rect from -0.5, graph 0 to 19.5, graph 1 fc rgb '#d9d9d9' fs solid noborder behind
set object 2 rect from 19.5, graph 0 to 39.5, graph 1 fc rgb '#d9d9d9' fs solid noborder behind
set object 3 rect from 39.5, graph 0 to 59.5, graph 1 fc rgb '#d9d9d9' fs solid noborder behind
set object 4 rect from 59.5, graph 0 to 79.5, graph 1 fc rgb '#d9d9d9' fs solid noborder behind
set object 5 rect from 79.5, graph 0 to 99.5, graph 1 fc rgb '#d9d9d9' fs solid noborder behind
set object 6 rect from 99.5, graph 0 to 119.5, graph 1 fc rgb '#d9d9d9' fs solid noborder behind
set object 7 rect from 119.5, graph 0 to 139.5, graph 1 fc rgb '#d9d9d9' fs solid noborder behind
set ylabel 'acc_y'
plot 'paper/results/full-inspect/reconstructions/temporal.csv' every ::1 using 1:5 with lines lc rgb 'black' lw 1.2, '' every ::1 using 1:21 with lines lc rgb '#1f77b4' lw 0.9 dt 2, '' every ::1 using 1:27 with lines lc rgb '#2ca02c' lw 0.9 dt 2, '' every ::1 using 1:33 with lines lc rgb '#ff7f0e' lw 0.9 dt 2, '' every ::1 using 1:6 with lines lc rgb '#d62728' lw 1.2
unset object
set object 1 rect from -0.5, graph 0 to 19.5, graph 1 fc rgb '#d9d9d9' fs solid noborder behind
set object 2 rect from 19.5, graph 0 to 39.5, graph 1 fc rgb '#d9d9d9' fs solid noborder behind
set object 3 rect from 39.5, graph 0 to 59.5, graph 1 fc rgb '#d9d9d9' fs solid noborder behind
set object 4 rect from 59.5, graph 0 to 79.5, graph 1 fc rgb '#d9d9d9' fs solid noborder behind
set object 5 rect from 79.5, graph 0 to 99.5, graph 1 fc rgb '#d9d9d9' fs solid noborder behind
set object 6 rect from 99.5, graph 0 to 119.5, graph 1 fc rgb '#d9d9d9' fs solid noborder behind
set object 7 rect from 119.5, graph 0 to 139.5, graph 1 fc rgb '#d9d9d9' fs solid noborder behind
set ylabel 'acc_z'
plot 'paper/results/full-inspect/reconstructions/temporal.csv' every ::1 using 1:8 with lines lc rgb 'black' lw 1.2, '' every ::1 using 1:22 with lines lc rgb '#1f77b4' lw 0.9 dt 2, '' every ::1 using 1:28 with lines lc rgb '#2ca02c' lw 0.9 dt 2, '' every ::1 using 1:34 with lines lc rgb '#ff7f0e' lw 0.9 dt 2, '' every ::1 using 1:9 with lines lc rgb '#d62728' lw 1.2
unset object
set object 1 rect from -0.5, graph 0 to 19.5, graph 1 fc rgb '#d9d9d9' fs solid noborder behind
set object 2 rect from 19.5, graph 0 to 39.5, graph 1 fc rgb '#d9d9d9' fs solid noborder behind
set object 3 rect from 39.5, graph 0 to 59.5, graph 1 fc rgb '#d9d9d9' fs solid noborder behind
set object 4 rect from 59.5, graph 0 to 79.5, graph 1 fc rgb '#d9d9d9' fs solid noborder behind
set object 5 rect from 79.5, graph 0 to 99.5, graph 1 fc rgb '#d9d9d9' fs solid noborder behind
set object 6 rect from 99.5, graph 0 to 119.5, graph 1 fc rgb '#d9d9d9' fs solid noborder behind
set object 7 rect from 119.5, graph 0 to 139.5, graph 1 fc rgb '#d9d9d9' fs solid noborder behind
set ylabel 'gyro_x'
plot 'paper/results/full-inspect/reconstructions/temporal.csv' every ::1 using 1:11 with lines lc rgb 'black' lw 1.2, '' every ::1 using 1:23 with lines lc rgb '#1f77b4' lw 0.9 dt 2, '' every ::1 using 1:29 with lines lc rgb '#2ca02c' lw 0.9 dt 2, '' every ::1 using 1:35 with lines lc rgb '#ff7f0e' lw 0.9 dt 2, '' every ::1 using 1:12 with lines lc rgb '#d62728' lw 1.2
unset object
set object 1 rect from -0.5, graph 0 to 19.5, graph 1 fc rgb '#d9d9d9' fs solid noborder behind
set object 2 rect from 19.5, graph 0 to 39.5, graph 1 fc rgb '#d9d9d9' fs solid noborder behind
set object 3 rect from 39.5, graph 0 to 59.5, graph 1 fc rgb '#d9d9d9' fs solid noborder behind
set object 4 rect from 59.5, graph 0 to 79.5, graph 1 fc rgb '#d9d9d9' fs solid noborder behind
set object 5 rect from 79.5, graph 0 to 99.5, graph 1 fc rgb '#d9d9d9' fs solid noborder behind
set object 6 rect from 99.5, graph 0 to 119.5, graph 1 fc rgb '#d9d9d9' fs solid noborder behind
set object 7 rect from 119.5, graph 0 to 139.5, graph 1 fc rgb '#d9d9d9' fs solid noborder behind
set ylabel 'gyro_y'
plot 'paper/results/full-inspect/reconstructions/temporal.csv' every ::1 using 1:14 with lines lc rgb 'black' lw 1.2, '' every ::1 using 1:24 with lines lc rgb '#1f77b4' lw 0.9 dt 2, '' every ::1 using 1:30 with lines lc rgb '#2ca02c' lw 0.9 dt 2, '' every ::1 using 1:36 with lines lc rgb '#ff7f0e' lw 0.9 dt 2, '' every ::1 using 1:15 with lines lc rgb '#d62728' lw 1.2
unset object
set object 1 rect from -0.5, graph 0 to 19.5, graph 1 fc rgb '#d9d9d9' fs solid noborder behind
set object 2 rect from 19.5, graph 0 to 39.5, graph 1 fc rgb '#d9d9d9' fs solid noborder behind
set object 3 rect from 39.5, graph 0 to 59.5, graph 1 fc rgb '#d9d9d9' fs solid noborder behind
set object 4 rect from 59.5, graph 0 to 79.5, graph 1 fc rgb '#d9d9d9' fs solid noborder behind
set object 5 rect from 79.5, graph 0 to 99.5, graph 1 fc rgb '#d9d9d9' fs solid noborder behind
set object 6 rect from 99.5, graph 0 to 119.5, graph 1 fc rgb '#d9d9d9' fs solid noborder behind
set object 7 rect from 119.5, graph 0 to 139.5, graph 1 fc rgb '#d9d9d9' fs solid noborder behind
set ylabel 'gyro_z'
plot 'paper/results/full-inspect/reconstructions/temporal.csv' every ::1 using 1:17 with lines lc rgb 'black' lw 1.2, '' every ::1 using 1:25 with lines lc rgb '#1f77b4' lw 0.9 dt 2, '' every ::1 using 1:31 with lines lc rgb '#2ca02c' lw 0.9 dt 2, '' every ::1 using 1:37 with lines lc rgb '#ff7f0e' lw 0.9 dt 2, '' every ::1 using 1:18 with lines lc rgb '#d62728' lw 1.2
unset multiplot
