# plots/gantt.gp — timeline of one simulated iteration: the compute lane and
# the H2D (swap-in) and D2H (swap-out) copy lanes. Forward, backward,
# recompute and optimizer-update kernels are coloured apart; red boxes on
# the compute lane are stalls (the stream idle, waiting for a copy or for
# memory). Back-to-back spans of one phase on one lane arrive merged, so
# there are no hairline seams that could be mistaken for stalls.
# Data: one block per phase present, lines "centre_ms lane half_width_ms"
# (lane: compute 3, H2D 2, D2H 1).
# Variables: phases (names of the blocks in order), phase_ids (their index
# in the colour and name lists below), plottitle.
load plotdir.'/common.gp'
colors = '#1f77b4 #ff7f0e #9467bd #2ca02c #17becf #e377c2 #7f7f7f #d62728'
names = 'forward backward recompute update swap-in swap-out allocator stall'
set xlabel 'time in the iteration (ms)'
set xrange [0:*]
set autoscale xfixmax
set yrange [0.4:3.6]
set ytics ('compute' 3, 'H2D copy' 2, 'D2H copy' 1)
set grid noytics
set style fill solid 1.0 noborder
plot for [i=1:words(phases)] datafile index (i-1) using 1:2:3:(0.32) with boxxyerror \
     lc rgb word(colors, word(phase_ids, i) + 0) title word(names, word(phase_ids, i) + 0)
