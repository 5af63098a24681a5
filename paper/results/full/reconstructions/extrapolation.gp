set datafile separator ','
set terminal pngcairo size 1000,1080 font ',9'
set output '/work/fullrun/results/reconstructions/extrapolation.png.tmp.png'
set multiplot layout 6,1 title 'window 0 - extrapolation:ratio=0.7 (shaded = masked, black = original, red = reconstruction)'
set termoption noenhanced
set lmargin 10
set key off
set xrange [0:199]
unset object
set object 1 rect from 59.5, graph 0 to 79.5, graph 1 fc rgb '#d9d9d9' fs solid noborder behind
set object 2 rect from 79.5, graph 0 to 99.5, graph 1 fc rgb '#d9d9d9' fs solid noborder behind
set object 3 rect from 99.5, graph 0 to 119.5, graph 1 fc rgb '#d9d9d9' fs solid noborder behind
set object 4 rect from 119.5, graph 0 to 139.5, graph 1 fc rgb '#d9d9d9' fs solid noborder behind
set object 5 rect from 139.5, graph 0 to 159.5, graph 1 fc rgb '#d9d9d9' fs solid noborder behind
set object 6 rect from 159.5, graph 0 to 179.5, graph 1 fc rgb '#d9d9d9' fs solid noborder behind
set object 7 rect from 179.5, graph 0 to 199.5, graph 1 fc rgb '#d9d9d9' fs solid noborder behind
set ylabel 'acc_x'
plot '/work/fullrun/results/reconstructions/extrapolation.csv' every ::1 using 1:2 with lines lc rgb 'black' lw 1.2, '' every ::1 using 1:3 with lines lc rgb '#d62728' lw 1.2
unset object
set object 1 rect from 59.5, graph 0 to 79.5, graph 1 fc rgb '#d9d9d9' fs solid noborder behind
set object 2 rect from 79.5, graph 0 to 99.5, graph 1 fc rgb '#d9d9d9' fs solid noborder behind
set object 3 rect from 99.5, graph 0 to 119.5, graph 1 fc rgb '#d9d9d9' fs solid noborder behind
set object 4 rect from 119.5, graph 0 to 139.5, graph 1 fc rgb '#d9d9d9' fs solid noborder behind
set object 5 rect from 139.5, graph 0 to 159.5, graph 1 fc rgb '#d9d9d9' fs solid noborder behind
set object 6 rect from 159.5, graph 0 to 179.5, graph 1 fc rgb '#d9d9d9' fs solid noborder behind
set object 7 rect from 179.5, graph 0 to 199.5, graph 1 fc rgb '#d9d9d9' fs solid noborder behind
set ylabel 'acc_y'
plot '/work/fullrun/results/reconstructions/extrapolation.csv' every ::1 using 1:5 with lines lc rgb 'black' lw 1.2, '' every ::1 using 1:6 with lines lc rgb '#d62728' lw 1.2
unset object
set object 1 rect from 59.5, graph 0 to 79.5, graph 1 fc rgb '#d9d9d9' fs solid noborder behind
set object 2 rect from 79.5, graph 0 to 99.5, graph 1 fc rgb '#d9d9d9' fs solid noborder behind
set object 3 rect from 99.5, graph 0 to 119.5, graph 1 fc rgb '#d9d9d9' fs solid noborder behind
set object 4 rect from 119.5, graph 0 to 139.5, graph 1 fc rgb '#d9d9d9' fs solid noborder behind
set object 5 rect from 139.5, graph 0 to 159.5, graph 1 fc rgb '#d9d9d9' fs solid noborder behind
set object 6 rect from 159.5, graph 0 to 179.5, graph 1 fc rgb '#d9d9d9' fs solid noborder behind
set object 7 rect from 179.5, graph 0 to 199.5, graph 1 fc rgb '#d9d9d9' fs solid noborder behind
set ylabel 'acc_z'
plot '/work/fullrun/results/reconstructions/extrapolation.csv' every ::1 using 1:8 with lines lc rgb 'black' lw 1.2, '' every ::1 using 1:9 with lines lc rgb '#d62728' lw 1.2
unset object
set object 1 rect from 59.5, graph 0 to 79.5, graph 1 fc rgb '#d9d9d9' fs solid noborder behind
set object 2 rect from 79.5, graph 0 to 99.5, graph 1 fc rgb '#d9d9d9' fs solid noborder behind
set object 3 rect from 99.5, graph 0 to 119.5, graph 1 fc rgb '#d9d9d9' fs solid noborder behind
set object 4 rect from 119.5, graph 0 to 139.5, graph 1 fc rgb '#d9d9d9' fs solid noborder behind
set object 5 rect from 139.5, graph 0 to 159.5, graph 1 fc rgb '#d9d9d9' fs solid noborder behind
set object 6 rect from 159.5, graph 0 to 179.5, graph 1 fc rgb '#d9d9d9' fs solid noborder behind
set object 7 rect from 179.5, graph 0 to 199.5, graph 1 fc rgb '#d9d9d9' fs solid noborder behind
set ylabel 'gyro_x'
plot '/work/fullrun/results/reconstructions/extrapolation.csv' every ::1 using 1:11 with lines lc rgb 'black' lw 1.2, '' every ::1 using 1:12 with lines lc rgb '#d62728' lw 1.2
unset object
set object 1 rect from 59.5, graph 0 to 79.5, graph 1 fc rgb '#d9d9d9' fs solid noborder behind
set object 2 rect from 79.5, graph 0 to 99.5, graph 1 fc rgb '#d9d9d9' fs solid noborder behind
set object 3 rect from 99.5, graph 0 to 119.5, graph 1 fc rgb '#d9d9d9' fs solid noborder behind
set object 4 rect from 119.5, graph 0 to 139.5, graph 1 fc rgb '#d9d9d9' fs solid noborder behind
set object 5 rect from 139.5, graph 0 to 159.5, graph 1 fc rgb '#d9d9d9' fs solid noborder behind
set object 6 rect from 159.5, graph 0 to 179.5, graph 1 fc rgb '#d9d9d9' fs solid noborder behind
set object 7 rect from 179.5, graph 0 to 199.5, graph 1 fc rgb '#d9d9d9' fs solid noborder behind
set ylabel 'gyro_y'
plot '/work/fullrun/results/reconstructions/extrapolation.csv' every ::1 using 1:14 with lines lc rgb 'black' lw 1.2, '' every ::1 using 1:15 with lines lc rgb '#d62728' lw 1.2
unset object
set object 1 rect from 59.5, graph 0 to 79.5, graph 1 fc rgb '#d9d9d9' fs solid noborder behind
set object 2 rect from 79.5, graph 0 to 99.5, graph 1 fc rgb '#d9d9d9' fs solid noborder behind
set object 3 rect from 99.5, graph 0 to 119.5, graph 1 fc rgb '#d9d9d9' fs solid noborder behind
set object 4 rect from 119.5, graph 0 to 139.5, graph 1 fc rgb '#d9d9d9' fs solid noborder behind
set object 5 rect from 139.5, graph 0 to 159.5, graph 1 fc rgb '#d9d9d9' fs solid noborder behind
set object 6 rect from 159.5, graph 0 to 179.5, graph 1 fc rgb '#d9d9d9' fs solid noborder behind
set object 7 rect from 179.5, graph 0 to 199.5, graph 1 fc rgb '#d9d9d9' fs solid noborder behind
set ylabel 'gyro_z'
plot '/work/fullrun/results/reconstructions/extrapolation.csv' every ::1 using 1:17 with lines lc rgb 'black' lw 1.2, '' every ::1 using 1:18 with lines lc rgb '#d62728' lw 1.2
unset multiplot
