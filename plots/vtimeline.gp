# plots/vtimeline.gp — one iteration predicted and measured, overlaid
# (`oocsim validate -o DIR`): for each of the compute, H2D and D2H lanes,
# the simulator's spans (upper half, blue) above the executor's measured
# spans (lower half, orange), on one time axis, so where the prediction
# runs ahead or behind the hardware reads at a glance.
# Data: block 0 predicted, block 1 measured; lines "x0_ms x1_ms y0 y1"
# (lane y: compute 3, H2D 2, D2H 1; predicted from y to y+0.36, measured
# from y-0.36 to y).
# Variables: tmax (ms, the longer iteration), pred_ms, meas_ms, plottitle.
load plotdir.'/common.gp'
set xlabel 'time in the iteration (ms)'
set xrange [0:tmax]
set yrange [0.4:3.6]
set ytics ('compute' 3, 'H2D copy' 2, 'D2H copy' 1)
set grid noytics
set style fill solid 1.0 border
set arrow 1 from pred_ms, 0.4 to pred_ms, 3.6 nohead dt 2 lc rgb '#1f77b4'
set arrow 2 from meas_ms, 0.4 to meas_ms, 3.6 nohead dt 2 lc rgb '#ff7f0e'
plot datafile index 0 using (($1+$2)/2):(($3+$4)/2):1:2:3:4 with boxxyerror \
       lc rgb '#1f77b4' title sprintf('predicted (%.1f ms)', pred_ms), \
     datafile index 1 using (($1+$2)/2):(($3+$4)/2):1:2:3:4 with boxxyerror \
       lc rgb '#ff7f0e' title sprintf('measured (%.1f ms)', meas_ms)
