set terminal pngcairo size 800,560 font 'DejaVu Sans,10'
set output '/work/tvt/full/figures/patch-mean_probe_macro_f1.png'
set title 'score (patch-mean) vs linear-probe macro-F1 (mean over seeds, bars: seed SD)' noenhanced
set xlabel 'E_m[Phi(m)], patch-mean features' noenhanced
set ylabel 'linear-probe macro-F1' noenhanced
set grid
set key outside right noenhanced
plot '/work/tvt/full/figures/patch-mean_probe_macro_f1.dat' index 0 using 1:2:3 with yerrorbars pt 7 ps 1.2 lc 1 title 'adaptive', '/work/tvt/full/figures/patch-mean_probe_macro_f1.dat' index 1 using 1:2:3 with yerrorbars pt 7 ps 1.2 lc 2 title 'cross', '/work/tvt/full/figures/patch-mean_probe_macro_f1.dat' index 2 using 1:2:3 with yerrorbars pt 7 ps 1.2 lc 3 title 'per-modality', '/work/tvt/full/figures/patch-mean_probe_macro_f1.dat' index 3 using 1:2:3 with yerrorbars pt 7 ps 1.2 lc 4 title 'sync', '/work/tvt/full/figures/patch-mean_probe_macro_f1.dat' index 4 using 1:2:3 with yerrorbars pt 7 ps 1.2 lc 5 title 'temporal'
