# plots/throughput.gp — samples/s against batch size, one line per planner,
# and the in-core line (unlimited memory) dashed in black. The x axis spans
# the batches swept, nothing past them.
# Planners whose points are all the same are one line keyed
# "lms = capacity = window" (oocsim merges them), so no line hides another;
# lines that meet at some batches only stay visible because earlier
# planners get larger points, drawn first.
# Infeasible batches (out of memory) are crosses in a strip of their own
# under the plot, apart from the data: one row per planner in its colour,
# keyed "infeasible", so they never read as a throughput near zero.
# A sweep over several profiles (or --hw-set values) gets one panel per
# profile, each with its own in-core line and OOM strip, so a fast GPU does
# not flatten the lines of a slow one; a planner has the same colour in
# every panel, one key above them names the colours, and a panel where
# planners coincide names the merged line in a key of its own.
# Data (written by `oocsim plot throughput`): for group i, block 2(i-1)
# holds "batch samples_per_s" of feasible points and block 2(i-1)+1 "batch
# row" of OOM points (row in the strip), both empty for a group merged into
# an earlier one; then one block per panel "batch batch/incore_s".
# Variables: gt_1, gt_2, ... (key title of each group, '' when merged),
# gcolor (its colour: the index of its planner), gpanel (its panel), gmany
# (1 when it stands for several planners), ngroups, nlines (colours),
# ltitles (the key title of each colour), incore_titles (panel titles),
# nincore (panels), oomrows (rows of the OOM strip, 0: no strip), xt (the
# batch sizes, "" when too many for one tic each), xmin, xmax, plottitle.
if (nincore > 1) {
  width = 1200
  height = nincore == 2 ? 600 : 440 * ceil(nincore / (nincore <= 4 ? 2.0 : 3.0))
}
load plotdir.'/common.gp'
if (xmin == xmax) { xmin = xmin * 0.95; xmax = xmax * 1.05 }
set xrange [xmin:xmax]
set yrange [0:*]
set offsets 0, 0, graph 0.05, 0
# One x tic per batch when there are few; above an OOM strip the tics have
# no labels (the strip's carry them).
if (strlen(xt) > 0) {
  set xtics () nomirror
}
psz(c) = nlines <= 6 ? 0.8 + 0.25 * (nlines - c) : 0.8
col(i) = word(gcolor, i) + 0
inpanel(i, p) = word(gpanel, i) + 0 == p
many(i) = word(gmany, i) eq '1'
gtitle(i) = value(sprintf('gt_%d', i))
# Pixels under each panel's plot: the OOM strip (12 per row) and, below
# it, the x tic labels and the x label.
strip = oomrows > 0 ? 12 * oomrows + 8 : 0
below = 46
ncol = nincore <= 1 ? 1 : (nincore <= 4 ? 2 : 3)
nrow = ceil(nincore / (ncol + 0.0))
top = nincore > 1 ? 0.87 : 1.0
# Three panels a row leave a third of the width to a merged title.
kfont = ncol > 2 ? ',7' : ',9'
if (nincore > 1 || oomrows > 0) {
  if (nincore > 1) {
    set multiplot title plottitle font ',12'
  } else {
    set multiplot
  }
}
do for [p=1:nincore] {
  ox = nincore > 1 ? ((p - 1) % ncol) * 1.0 / ncol : 0
  sx = nincore > 1 ? 1.0 / ncol : 1
  sy = nincore > 1 ? top / nrow : 1
  oy = nincore > 1 ? top - ((p - 1) / ncol + 1) * sy : 0
  set origin ox, oy
  set size sx, sy
  pm = 0
  do for [i=1:ngroups] { if (inpanel(i, p) && many(i)) { pm = 1 } }
  if (nincore > 1) {
    set title word(incore_titles, p) font ',11'
    if (pm) {
      set key above right horizontal nobox samplen 2 font kfont
    } else {
      unset key
    }
  }
  set ylabel 'samples/s'
  set ytics autofreq font ''
  set grid xtics ytics
  if (strlen(xt) > 0) {
    set xtics ()
    do for [i=1:words(xt)] { set xtics add ((oomrows > 0 ? '' : word(xt, i)) word(xt, i) + 0) }
  }
  if (oomrows > 0) {
    set bmargin at screen oy + (below + strip + 6.0) / height
    set format x ''
    unset xlabel
  } else {
    set xlabel 'batch size (samples)'
  }
  plot for [i=1:ngroups] datafile index (2*(i-1)) using 1:(inpanel(i, p) ? $2 : NaN) with linespoints lt col(i) ps psz(col(i)) \
           title (inpanel(i, p) && (nincore == 1 || many(i)) ? gtitle(i) : ''), \
       datafile index (2*ngroups+p-1) using 1:2 with lines dt 2 lw 2 lc rgb '#000000' \
           title (nincore == 1 ? 'in-core (unlimited memory)' : ''), \
       keyentry with points pt 2 ps 1.5 lw 2 lc rgb '#000000' title (nincore == 1 && oomrows > 0 ? 'infeasible' : '')
  if (oomrows > 0) {
    # The strip, aligned on the plot above it.
    # GPVAL_TERM_XMIN/XMAX are in pixels, XSIZE in pixels x SCALE.
    set lmargin at screen GPVAL_TERM_XMIN * GPVAL_TERM_SCALE / GPVAL_TERM_XSIZE
    set rmargin at screen GPVAL_TERM_XMAX * GPVAL_TERM_SCALE / GPVAL_TERM_XSIZE
    set tmargin at screen oy + (below + strip) * 1.0 / height
    set bmargin at screen oy + below * 1.0 / height
    unset title
    unset key
    unset ylabel
    set format x '% h'
    if (strlen(xt) > 0) {
      set xtics ()
      do for [i=1:words(xt)] { set xtics add (word(xt, i) word(xt, i) + 0) }
    }
    set xlabel 'batch size (samples)'
    set yrange [oomrows + 0.6:0.4]
    set ytics ('infeasible' (oomrows + 1) / 2.0) scale 0 font ',9'
    set grid xtics noytics
    plot for [i=1:ngroups] datafile index (2*(i-1)+1) using 1:(inpanel(i, p) ? $2 : NaN) with points lt col(i) pt 2 ps 1.3 lw 2 notitle
    set lmargin -1
    set rmargin -1
    set tmargin -1
    set bmargin -1
    set yrange [0:*]
    set format x '% h'
  }
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
  set key center center horizontal box lc rgb '#bbbbbb' samplen 2 font ',9'
  plot NaN notitle, for [c=1:nlines] keyentry with linespoints lt c ps psz(c) title word(ltitles, c), \
       keyentry with lines dt 2 lw 2 lc rgb '#000000' title 'in-core (unlimited memory)', \
       keyentry with points pt 2 ps 1.5 lw 2 lc rgb '#000000' title (oomrows > 0 ? 'infeasible' : '')
}
if (nincore > 1 || oomrows > 0) {
  unset multiplot
}
