# plots/maxbatch.gp — the largest trainable batch of each planner on each
# GPU (hardware profile), as clustered bars, from `oocsim sweep --maxbatch`.
# Data: a header "hw P1 P2 ..." then one row per profile with the largest
# batch of each planner (0: not even batch 1 fits).
# Variables: nplanners, plottitle.
load plotdir.'/common.gp'
set style data histogram
set style histogram clustered gap 1
set style fill solid 0.85 border -1
set boxwidth 0.9
set ylabel 'largest batch (samples)'
set yrange [0:*]
set offsets 0, 0, graph 0.08, 0
set xtics nomirror
plot for [i=2:nplanners+1] datafile using i:xtic(1) lt (i-1) title columnheader(i)
