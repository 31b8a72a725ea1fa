# plots/bandwidth.gp — slowdown (iteration time / in-core time) against the
# host link bandwidth, one line per planner, from a sweep over
# --hw-set link.h2d_GBps=...; dotted vertical lines mark the measured H2D
# rates of the PCIe 3/4/5, NVLink 2 and C2C profiles in hwprofiles/. Their
# labels ("PCIe3 12.2 GB/s") stand above the plot as top-axis tic labels,
# each at its line: never on a line, a data point or the border. The x
# label names every profile field the sweep set to the plotted value. A
# planner infeasible at every bandwidth keeps its key entry, marked as
# such, and draws nothing.
# Data: block i-1 holds "GBps slowdown" of group i (feasible points only).
# Variables: titles, ngroups, empty (per group 1 when it has no feasible
# point, else 0), marks_x, marks_l, xlabel, xmin, xmax, yflat (the one
# slowdown of every feasible point, else 0), plottitle.
height = 600
load plotdir.'/common.gp'
set logscale x 2
set xrange [xmin:xmax]
set logscale x2 2
set x2range [xmin:xmax]
set xtics nomirror
set x2tics () rotate by 90 left scale 0 offset 0.5, 0 font ',9' textcolor rgb '#444444'
set xlabel xlabel
set ylabel 'slowdown vs in-core (x)'
if (yflat > 0) {
  set yrange [yflat * 0.9:yflat * 1.1]
} else {
  set autoscale yfix
  set offsets 0, 0, graph 0.05, graph 0.05
}
do for [i=1:words(marks_x)] {
  mx = word(marks_x, i) + 0.0
  set arrow i from mx, graph 0 to mx, graph 1 nohead dt 3 lw 1.5 lc rgb '#666666'
  set x2tics add (sprintf('%s %.4g GB/s', word(marks_l, i), mx) mx)
}
plot for [i=1:ngroups] datafile index (i-1) using 1:2 with linespoints lt i ps 0.9 \
     title word(titles, i).(word(empty, i) eq '1' ? ' (always OOM)' : '')
