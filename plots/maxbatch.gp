# plots/maxbatch.gp — the largest trainable batch of each planner on each
# GPU (hardware profile), as clustered bars with the value above each bar,
# from `oocsim sweep --maxbatch`. Where two or more planners stop at the
# same batch, a numbered bracket over their bars and a note under the
# plot say why, from the results' fail_* columns: "limited by the working
# set of step S" (the next batch fails at the step with the largest
# working set, or no plan fits it), else "batch N runs out of memory at
# S".
# Data: a header "hw P1 P2 ..." then one row per profile with the largest
# batch of each planner (0: not even batch 1 fits).
# Variables: nplanners, ymax (the tallest bar), nann (brackets), nlevels
# (the most brackets over one cluster), and per bracket k: ann_x0_k,
# ann_x1_k (its ends, in cluster units), ann_y_k (the tallest bar it
# spans), ann_h_k (the height of its own bars), ann_m_k (their centres),
# ann_l_k (its level over its cluster, from 0), ann_t_k (its note,
# "k. HW: text"); plottitle.
load plotdir.'/common.gp'
set style data histogram
set style histogram clustered gap 1
set style fill solid 0.85 border -1
set boxwidth 0.9
set ylabel 'largest batch (samples)'
set yrange [0:*]
set offsets 0, 0, graph (nann > 0 ? 0.1 + 0.09 * nlevels : 0.1), 0
set xtics nomirror
# A bracket stands above the value labels of every bar it spans (one
# level higher for each earlier bracket of its cluster), with a tick down
# to each of its own bars and its number above it; the notes, one line
# each, go under the plot.
if (nann > 0) { set bmargin 3.5 + 1.2 * nann }
do for [k=1:nann] {
  x0 = value(sprintf('ann_x0_%d', k))
  x1 = value(sprintf('ann_x1_%d', k))
  y = value(sprintf('ann_y_%d', k)) + (0.07 + 0.09 * value(sprintf('ann_l_%d', k))) * ymax
  h = value(sprintf('ann_h_%d', k)) + 0.05 * ymax
  m = value(sprintf('ann_m_%d', k))
  set arrow 1000 * k from x0, y to x1, y nohead lw 1.5 lc rgb '#333333'
  do for [q=1:words(m)] {
    set arrow 1000 * k + q from word(m, q) + 0, y to word(m, q) + 0, h nohead lw 1.5 lc rgb '#333333'
  }
  set label 100 + 2 * k sprintf('%d', k) at (x0 + x1) / 2, y center offset 0, 0.7 font ',9' tc rgb '#333333'
  set label 101 + 2 * k value(sprintf('ann_t_%d', k)) at character 2, character (1.2 * (nann - k) + 0.8) left font ',9' tc rgb '#333333'
}
# The first line of the data is the header, for every plot below.
set key autotitle columnheader
# Centre of bar j (1-based) in cluster $0: clusters sit at x = 0, 1, ...
# and each holds nplanners bars of width 1/(nplanners + gap).
barx(j) = $0 + (j - (nplanners + 1) / 2.0) / (nplanners + 1.0)
plot for [i=2:nplanners+1] datafile using i:xtic(1) lt (i-1) title columnheader(i), \
     for [i=2:nplanners+1] datafile using (barx(i-1)):i:(sprintf('%d', column(i))) \
         with labels offset 0, 0.6 font ',8' notitle
