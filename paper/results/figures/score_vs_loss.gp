set terminal pngcairo size 900,560 font 'DejaVu Sans,10'
set output 'paper/results/figures/score_vs_loss.png'
set datafile separator '\t'
set multiplot layout 1,2 title "Spearman(raw score, own MSE) = -0.657, (score, probe top-1) = 0.638"
set grid
set xlabel 'policy score E_m[Phi(m)]'
set ylabel 'held-out MSE (own policy masks)'
plot 'paper/results/figures/score_vs_loss.dat' using 2:3 with points pt 7 notitle, 'paper/results/figures/score_vs_loss.dat' using 2:3:1 with labels font ',7' offset 0,0.7 notitle
set ylabel 'linear-probe accuracy'
plot 'paper/results/figures/score_vs_loss.dat' using 2:5 with points pt 7 notitle, 'paper/results/figures/score_vs_loss.dat' using 2:5:1 with labels font ',7' offset 0,0.7 notitle
unset multiplot
