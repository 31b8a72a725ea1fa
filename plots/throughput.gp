# plots/throughput.gp — samples/s against batch size, one line per planner,
# the in-core line (unlimited memory) dashed in black, and infeasible (OOM)
# points as crosses in a strip at the bottom, one row per planner in its
# colour, so planners that run out of memory at the same batch stay apart.
# A sweep over several profiles (or --hw-set values) gets one panel per
# profile, each with its own in-core line, so a fast GPU does not flatten
# the lines of a slow one; a planner has the same colour in every panel.
# Lines that lie on top of each other (planners that all reach in-core
# speed) stay visible: earlier planners get larger points, drawn first.
# Data (written by `oocsim plot throughput`): for group i, block 2(i-1) holds
# "batch samples_per_s" of feasible points and block 2(i-1)+1 "batch 0" of
# OOM points; then one block per panel "batch batch/incore_s".
# Variables: titles (key title of each group), gcolor (its colour: the
# index of its planner), gpanel (its panel), ngroups, nlines (distinct
# colours), ltitles (the key title of each colour), incore_titles (panel titles), nincore (panels), xt (the batch
# sizes, "" when too many for one tic each), plottitle.
if (nincore > 1) {
  width = 1200
  height = nincore == 2 ? 560 : 400 * ceil(nincore / (nincore <= 4 ? 2.0 : 3.0))
}
load plotdir.'/common.gp'
set xlabel 'batch size (samples)'
set ylabel 'samples/s'
set yrange [0:*]
set offsets graph 0.03, graph 0.03, graph 0.05, 0
if (strlen(xt) > 0) {
  set xtics () nomirror
  do for [i=1:words(xt)] { set xtics add (word(xt, i) word(xt, i) + 0) }
}
# OOM strip: y2 in graph fractions, row c (colour c) at 0.02 + step (c-1).
set y2range [0:1]
unset y2tics
step = nlines > 1 ? (0.24 / nlines < 0.03 ? 0.24 / nlines : 0.03) : 0.03
oomy(c) = 0.02 + step * (c - 1)
psz(c) = nlines <= 6 ? 0.8 + 0.25 * (nlines - c) : 0.8
col(i) = word(gcolor, i) + 0
inpanel(i, p) = word(gpanel, i) + 0 == p
# Several panels: a grid laid out by hand under the title, and one key for
# all of them in a band of its own between the title and the panels.
ncol = nincore <= 1 ? 1 : (nincore <= 4 ? 2 : 3)
nrow = ceil(nincore / (ncol + 0.0))
top = nincore > 1 ? 0.87 : 1.0
if (nincore > 1) {
  set multiplot title plottitle font ',12'
  unset key
}
do for [p=1:nincore] {
  if (nincore > 1) {
    set title word(incore_titles, p) font ',11'
    set size 1.0 / ncol, top / nrow
    set origin ((p - 1) % ncol) * 1.0 / ncol, top - ((p - 1) / ncol + 1) * top / nrow
  }
  plot for [i=1:ngroups] datafile index (2*(i-1)) using 1:(inpanel(i, p) ? $2 : NaN) with linespoints lt col(i) ps psz(col(i)) \
           title (inpanel(i, p) ? word(titles, i) : ''), \
       for [i=1:ngroups] datafile index (2*(i-1)+1) using 1:(inpanel(i, p) ? oomy(col(i)) : NaN) axes x1y2 with points lt col(i) pt 2 ps 1.6 lw 2 notitle, \
       datafile index (2*ngroups+p-1) using 1:2 with lines dt 2 lw 2 lc rgb '#000000' title 'in-core (unlimited memory)', \
       keyentry with points pt 2 ps 1.5 lw 2 lc rgb '#000000' title 'out of memory'
}
if (nincore > 1) {
  # The key band: an empty plot whose only content is its key.
  set origin 0, top
  set size 1, 0.95 - top
  unset title
  unset border
  unset tics
  unset xlabel
  unset ylabel
  unset grid
  set xrange [0:1]
  set yrange [0:1]
  set key center center horizontal box lc rgb '#bbbbbb' samplen 2
  plot NaN notitle, for [c=1:nlines] keyentry with linespoints lt c ps psz(c) title word(ltitles, c), \
       keyentry with lines dt 2 lw 2 lc rgb '#000000' title 'in-core (unlimited memory)', \
       keyentry with points pt 2 ps 1.5 lw 2 lc rgb '#000000' title 'out of memory'
  unset multiplot
}
