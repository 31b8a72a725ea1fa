# plots/fidelity.gp — in-core samples/s against batch size: what PyTorch
# measured on a GPU (points) and what oocsim predicts (lines), one colour
# per math mode (bench/fidelity.sh, docs/fidelity.md).
# Data: "model mode batch measured predicted" per line
# (bench/out/fidelity-GPU.dat); only the resnet50 rows are drawn.
# Variables: dat (data file), out (PNG to write), gpu (its name in the
# title, default H200).
fmt = 'png'
outfile = out
plotdir = system('dirname '.ARG0)
if (plotdir eq '' || plotdir eq '.') plotdir = 'plots'
if (!exists('gpu')) gpu = 'H200'
plottitle = 'ResNet-50 training on an '.gpu.': PyTorch measured vs oocsim predicted'
load plotdir.'/common.gp'
set xlabel 'batch size'
set ylabel 'samples/s'
set logscale x 2
set key inside left top box
plot dat using (strcol(1) eq 'resnet50' && strcol(2) eq 'fp32' ? $3 : 1/0):4 with points lt 1 ps 1.5 title 'FP32 measured', \
     dat using (strcol(1) eq 'resnet50' && strcol(2) eq 'fp32' ? $3 : 1/0):5 with lines lt 1 title 'FP32 predicted', \
     dat using (strcol(1) eq 'resnet50' && strcol(2) eq 'tf32' ? $3 : 1/0):4 with points lt 2 ps 1.5 title 'TF32 measured', \
     dat using (strcol(1) eq 'resnet50' && strcol(2) eq 'tf32' ? $3 : 1/0):5 with lines lt 2 title 'TF32 predicted'
