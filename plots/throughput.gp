# plots/throughput.gp — samples/s against batch size, one line per planner
# (per varying grid coordinate), the in-core line (unlimited memory) dashed
# in black (one dash pattern per profile), and infeasible (OOM) points as
# crosses on the x axis.
# Data (written by `oocsim plot throughput`): for group i, block 2(i-1) holds
# "batch samples_per_s" of feasible points and block 2(i-1)+1 "batch 0" of
# OOM points; then one block per in-core line "batch batch/incore_s".
# Variables: titles, ngroups, incore_titles, nincore, plottitle.
load plotdir.'/common.gp'
set xlabel 'batch size (samples)'
set ylabel 'samples/s'
set yrange [0:*]
set offsets graph 0.02, graph 0.02, graph 0.05, 0
plot for [i=1:ngroups] datafile index (2*(i-1)) using 1:2 with linespoints lt i ps 0.9 title word(titles, i), \
     for [i=1:ngroups] datafile index (2*(i-1)+1) using 1:2 with points lt i pt 2 ps 2 lw 2 notitle, \
     for [i=1:nincore] datafile index (2*ngroups+i-1) using 1:2 with lines dt 1+i lw 2 lc rgb '#000000' \
         title (nincore > 1 ? 'in-core '.word(incore_titles, i) : 'in-core'), \
     keyentry with points pt 2 ps 1.5 lw 2 lc rgb '#000000' title 'OOM (infeasible)'
