# plots/gantt.gp — timeline of one simulated iteration: the compute lane and
# the H2D (swap-in) and D2H (swap-out) copy lanes. Forward, backward,
# recompute and optimizer-update kernels are coloured apart; red boxes on
# the compute lane are stalls (the stream idle, waiting), in four shades by
# cause: waiting for a swap-in, for a swap-out (or the free after it), for
# the host to issue the kernel, or for anything else.
# What a reader can see, not every span: spans narrower than the visible
# width (the iteration / 200, 3 to 4 pixels) that come in runs are drawn as
# stacked bars about that wide, each colour as high as its share of the
# time there, so a plan that stalls between short kernels reads as "mostly
# stalled" instead of stripes. The update is drawn at least 1/150 of the
# iteration wide and labelled. Touching spans of one kind arrive joined, so
# no hairline seam reads as a stall.
# Data: one block per kind present, lines "x0_ms x1_ms y0 y1" (lane y:
# compute 3, H2D 2, D2H 1, and with has_host 1 the host's CPU optimizer
# steps of an offloading plan 0; a full box from y-0.32 to y+0.32).
# Variables: phase_ids (per block, its index in the colour list below),
# kname_1, kname_2, ... (the key name of each block), tmin, tmax (ms),
# has_update, upd_x (ms), has_host, stacked (1 when stacked bars were drawn), vis_ms
# (the visible width), plottitle.
load plotdir.'/common.gp'
colors = '#1f77b4 #ff7f0e #9467bd #2ca02c #17becf #e377c2 #7f7f7f #d62728 #7b0f14 #c51b7d #f4a582 #d62728 #8c564b'
set xlabel 'time in the iteration (ms)'
set xrange [tmin:tmax]
if (has_host) {
  set yrange [-0.6:3.6]
  set ytics ('compute' 3, 'H2D copy' 2, 'D2H copy' 1, 'host (CPU)' 0)
} else {
  set yrange [0.4:3.6]
  set ytics ('compute' 3, 'H2D copy' 2, 'D2H copy' 1)
}
set grid noytics
# A border in the fill colour covers the seam between touching boxes.
set style fill solid 1.0 border
if (has_update) {
  set label 1 'update' at upd_x, 3.32 font ',9' tc rgb '#2ca02c' offset 0, 0.6 center
  if (upd_x > tmin + 0.95 * (tmax - tmin)) { set label 1 right }
  if (upd_x < tmin + 0.05 * (tmax - tmin)) { set label 1 left }
}
if (stacked) {
  set bmargin 4.5
  set label 2 sprintf('stacked bars: runs of spans under %.3g ms, each colour as high as its share of the time', vis_ms) \
      at screen 0.01, screen 0.02 left font ',8' tc rgb '#666666'
}
plot for [i=1:words(phase_ids)] datafile index (i-1) \
       using (($1+$2)/2):(($3+$4)/2):1:2:3:4 with boxxyerror \
       lc rgb word(colors, word(phase_ids, i) + 0) \
       title value(sprintf('kname_%d', i))
