set terminal pngcairo size 900,560 font 'DejaVu Sans,10'
set output '/work/fullrun/results/figures/ablation_mask_ratio.png'
set datafile separator '\t'
set title "ablation_mask_ratio (CPU scale)"
set xlabel "mask ratio"
set ylabel 'top-1 accuracy'
set grid
plot '/work/fullrun/results/figures/ablation_mask_ratio.dat' using 1:2 with linespoints pt 7 title 'linear probe', '' using 1:3 with linespoints pt 5 title 'fine-tune'
