set terminal pngcairo size 900,560 font 'DejaVu Sans,10'
set output '/work/fullrun/results/figures/confusion_2.png'
set datafile separator '\t'
set title "MAE synchronised masking (w/o aug.) - finetune"
set xlabel 'predicted'
set ylabel 'true'
set yrange [] reverse
set palette defined (0 'white', 1 'steelblue')
set xtics 1
set ytics 1
plot '/work/fullrun/results/figures/confusion_2.dat' using 1:2:3 with image notitle, '' using 1:2:3 with labels font ',8' notitle
