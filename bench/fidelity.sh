#!/bin/sh
# bench/fidelity.sh — in-core training throughput predicted by oocsim
# against what PyTorch measured on a GPU (contrib/pytorch-host-costs
# --model M --batches ..., saved as bench/gpu/GPU-pytorch-*.json, GPU being
# the profile's name up to its first '-': h200 for h200-pcie5, h100 for
# h100-sxm5), per model, math mode and batch: a Markdown table on stdout,
# the data in bench/out/fidelity-GPU.dat and, when gnuplot is installed,
# the ResNet-50 plot docs/img/fidelity-GPU-resnet50.png (docs/fidelity.md).
#
# Usage: bench/fidelity.sh [OOCSIM] [PROFILE]   (defaults: ./oocsim, h200-pcie5)
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
OOCSIM=${1:-$top/oocsim}
HW=${2:-h200-pcie5}
gpu=${HW%%-*}
OOCSIM_DATADIR=${OOCSIM_DATADIR:-$top}
export OOCSIM_DATADIR
out=$top/bench/out
mkdir -p "$out"
dat=$out/fidelity-$gpu.dat
tmp=$dat.tmp
: > "$tmp"
echo "| model | math | batch | measured samples/s | predicted samples/s | error |"
echo "|---|---|---:|---:|---:|---:|"
set -- "$top"/bench/gpu/"$gpu"-pytorch-*.json
[ -f "$1" ] || { echo "fidelity.sh: no PyTorch measurements for $gpu (bench/gpu/$gpu-pytorch-*.json)" >&2; exit 1; }
for meas in "$@"; do
  # "model tf32 batch samples_per_s" for each run that fitted
  python3 -c "
import json, sys
d = json.load(open(sys.argv[1]))
for k, v in d.items():
    if isinstance(v, dict) and 'runs' in v:
        for r in v['runs']:
            if not r.get('oom'):
                print(k, 'tf32' if v['tf32'] else 'fp32', r['batch'], r['samples_per_s'])
" "$meas" > "$tmp.runs"
  while read -r model mode b m; do
    tf=false; [ "$mode" = tf32 ] && tf=true
    p=$("$OOCSIM" simulate -m "$model" -b "$b" --hw "$HW" \
          --hw-set compute.fp32_uses_tf32=$tf -p incore --json |
        python3 -c "import json,sys; print(round(json.load(sys.stdin)['samples_per_s'], 1))")
    python3 -c "import sys; m,p=float(sys.argv[1]),float(sys.argv[2]); print('| %s | %s | %s | %.1f | %.1f | %+.1f%% |' % (sys.argv[3], sys.argv[4], sys.argv[5], m, p, 100*(p/m-1)))" "$m" "$p" "$model" "$mode" "$b"
    echo "$model $mode $b $m $p" >> "$tmp"
  done < "$tmp.runs"
done
rm -f "$tmp.runs"
mv "$tmp" "$dat"
python3 -c "
import sys
rows = [l.split() for l in open(sys.argv[1])]
print()
for model in sorted({r[0] for r in rows}):
    e = [abs(float(r[4]) / float(r[3]) - 1) for r in rows if r[0] == model]
    print('%s: mean |error| %.1f%%, max %.1f%% over %d points' % (model, 100 * sum(e) / len(e), 100 * max(e), len(e)))" "$dat"
if command -v gnuplot >/dev/null 2>&1; then
  mkdir -p "$top/docs/img"
  gnuplot -e "dat='$dat'; out='$top/docs/img/fidelity-$gpu-resnet50.png'; gpu='$(echo "$gpu" | tr a-z A-Z)'" \
    "$top/plots/fidelity.gp"
fi
