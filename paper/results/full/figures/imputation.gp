set terminal pngcairo size 900,560 font 'DejaVu Sans,10'
set output 'paper/results/full/figures/imputation.png'
set datafile separator '\t'
set title 'imputation: masked-sample MAE per task (models beside the baselines, same masks)'
set ylabel 'MAE'
set style data histograms
set style histogram clustered gap 1
set style fill solid 0.8 border -1
set key outside right
set grid ytics
set yrange [0:*]
plot 'paper/results/full/figures/imputation.dat' using 2:xtic(1) title "linear interpolation", 'paper/results/full/figures/imputation.dat' using 3 title "nearest neighbour", 'paper/results/full/figures/imputation.dat' using 4 title "MICE", 'paper/results/full/figures/imputation.dat' using 5 title "MoCA cross (w/o aug.)", 'paper/results/full/figures/imputation.dat' using 6 title "MAE sync (w/o aug.)"
