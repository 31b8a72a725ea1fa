# plots/vhist.gp — how far each kernel's and copy's measured duration is
# from its prediction (`oocsim validate -o DIR`): a histogram of the signed
# error (measured - predicted) / measured in 2.5% bins, errors beyond
# +-50% in the end bins, a line per planner.
# Data: one block per planner, lines "bin_centre_percent count".
# Variables: names (the planners, in block order), plottitle.
load plotdir.'/common.gp'
set xlabel 'per-op error, (measured - predicted) / measured (%)'
set ylabel 'kernels and copies'
set xrange [-52:52]
set yrange [0:*]
# The end bins hold every error beyond +-50%: their tics say so.
set xtics ('<= -50' -50, '-25' -25, '0' 0, '25' 25, '>= +50' 50)
plot for [i=1:words(names)] datafile index (i-1) using 1:2 with histeps lt i \
       title word(names, i)
