# plots/common.gp — terminal and style shared by every oocsim plot.
# Loaded by the other scripts; oocsim passes fmt ('png' or 'svg'), outfile,
# datafile and plotdir with -e. PNG uses pngcairo, SVG the svg terminal;
# text is not "enhanced" so names like res2a_branch2a print as they are.
# A script may set width and height (pixels) before loading this file.
if (!exists('width')) width = 960
if (!exists('height')) height = 560
if (fmt eq 'svg') {
  set terminal svg size width,height dynamic noenhanced font 'Sans,12' background '#ffffff'
} else {
  set terminal pngcairo size width,height noenhanced font 'Sans,10' background '#ffffff'
}
set output outfile
set grid lc rgb '#dddddd'
set border lc rgb '#444444'
set key outside right top box lc rgb '#bbbbbb'
set title plottitle font ',12'
# A fixed palette so one planner keeps its colour across plots of a report.
set linetype 1 lc rgb '#1f77b4' lw 2 pt 7
set linetype 2 lc rgb '#ff7f0e' lw 2 pt 5
set linetype 3 lc rgb '#2ca02c' lw 2 pt 9
set linetype 4 lc rgb '#d62728' lw 2 pt 11
set linetype 5 lc rgb '#9467bd' lw 2 pt 13
set linetype 6 lc rgb '#8c564b' lw 2 pt 7
set linetype 7 lc rgb '#e377c2' lw 2 pt 5
set linetype 8 lc rgb '#7f7f7f' lw 2 pt 9
set linetype 9 lc rgb '#bcbd22' lw 2 pt 11
set linetype 10 lc rgb '#17becf' lw 2 pt 13
set linetype 11 lc rgb '#393b79' lw 2 pt 7
set linetype 12 lc rgb '#e6ab02' lw 2 pt 5
# As many as there are planners ('oocsim list planners'; a test checks),
# so that a report of all of them gives each its own colour.
set linetype cycle 12
