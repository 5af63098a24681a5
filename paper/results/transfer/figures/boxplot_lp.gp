set terminal pngcairo size 900,500
set output '/work/table2/transfer/figures/boxplot_lp.png.tmp'
set title 'Top-1 accuracy over data sets (lp)' noenhanced
set ylabel 'top-1 (%)'
set style data boxplot
set style boxplot nooutliers
set style fill solid 0.3
set key off
set grid ytics
set xtics ('cross lp' 1, 'cross-aug lp' 2, 'sync lp' 3, 'sync-aug lp' 4, 'scratch (supervised)' 5) noenhanced
set xrange [0.5:5.5]
set boxwidth 0.5
plot for [i=1:5] '/work/table2/transfer/figures/boxplot_lp.dat' using (i):(column(i+1)) with boxplot notitle, for [i=1:5] '/work/table2/transfer/figures/boxplot_lp.dat' using (i):(column(i+1)) with points pt 7 lc rgb 'black' notitle
