# plots/memory.gp — device memory over one simulated iteration: bytes
# allocated (live tensors) and reserved (held by the allocator model), with
# the budget as a dashed line. When reserved hardly moves, a note under the
# plot says why: the iteration shown is a steady-state one, and the
# allocator keeps the segments it reserved in the iterations before.
# Data: "time_ms allocated_GiB reserved_GiB" (from simulate --mem-csv).
# Variables: budget_gib (0: no budget line), note ('' : none), plottitle.
load plotdir.'/common.gp'
set xlabel 'time in the iteration (ms)'
set ylabel 'device memory (GiB)'
set xrange [0:*]
set autoscale xfixmax
set yrange [0:*]
set offsets 0, 0, graph 0.08, 0
if (strlen(note) > 0) {
  set bmargin 4.5
  set label 1 note at screen 0.01, screen 0.02 left font ',9' tc rgb '#444444'
}
if (budget_gib > 0) {
  plot datafile using 1:3 with steps lw 2 lc rgb '#ff7f0e' title 'reserved', \
       '' using 1:2 with steps lw 2 lc rgb '#1f77b4' title 'allocated', \
       budget_gib with lines dt 2 lw 2 lc rgb '#000000' title sprintf('budget %.2f GiB', budget_gib)
} else {
  plot datafile using 1:3 with steps lw 2 lc rgb '#ff7f0e' title 'reserved', \
       '' using 1:2 with steps lw 2 lc rgb '#1f77b4' title 'allocated'
}
