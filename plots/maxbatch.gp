# plots/maxbatch.gp — the largest trainable batch of each planner on each
# GPU (hardware profile), as clustered bars with the value above each bar,
# from `oocsim sweep --maxbatch`.
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
set offsets 0, 0, graph 0.1, 0
set xtics nomirror
# The first line of the data is the header, for every plot below.
set key autotitle columnheader
# Centre of bar j (1-based) in cluster $0: clusters sit at x = 0, 1, ...
# and each holds nplanners bars of width 1/(nplanners + gap).
barx(j) = $0 + (j - (nplanners + 1) / 2.0) / (nplanners + 1.0)
plot for [i=2:nplanners+1] datafile using i:xtic(1) lt (i-1) title columnheader(i), \
     for [i=2:nplanners+1] datafile using (barx(i-1)):i:(sprintf('%d', column(i))) \
         with labels offset 0, 0.6 font ',8' notitle
