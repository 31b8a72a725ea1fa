# plots/verrors.gp — predicted and measured iteration time per planner
# (`oocsim validate -o DIR`), clustered bars with the signed error
# (measured - predicted) / measured above each pair; the spread of the
# measured timed iterations as an error bar on the measured one.
# Data: a header line, then "planner predicted_s measured_s min_s max_s
# error" per planner feasible on both sides.
# Variables: n (rows), plottitle.
load plotdir.'/common.gp'
set style fill solid 0.85 border -1
set boxwidth 0.35
set ylabel 'iteration (s)'
set yrange [0:*]
set offsets 0.5, 0.5, graph 0.12, 0
set xtics nomirror
plot datafile skip 1 using ($0 - 0.18):2:xtic(1) with boxes lt 1 title 'predicted', \
     '' skip 1 using ($0 + 0.18):3 with boxes lt 2 title 'measured', \
     '' skip 1 using ($0 + 0.18):3:4:5 with yerrorbars lc rgb '#333333' pt 0 notitle, \
     '' skip 1 using ($0):($3 > $2 ? $3 : $2):(sprintf('%+.1f%%', 100 * $6)) with labels offset 0, 1 font ',9' notitle
