#!/bin/sh
# bench/fidelity.sh — in-core ResNet-50 throughput predicted by oocsim
# against what PyTorch measured on a GPU (contrib/pytorch-host-costs
# --resnet50, saved in bench/gpu/), per batch and math mode: a Markdown
# table on stdout, the data in bench/out/fidelity.dat and, when gnuplot is
# installed, the plot docs/img/fidelity-h200-resnet50.png (docs/fidelity.md).
#
# Usage: bench/fidelity.sh [OOCSIM] [PROFILE]   (defaults: ./oocsim, h200-pcie5)
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
OOCSIM=${1:-$top/oocsim}
HW=${2:-h200-pcie5}
OOCSIM_DATADIR=${OOCSIM_DATADIR:-$top}
export OOCSIM_DATADIR
out=$top/bench/out
mkdir -p "$out"
dat=$out/fidelity.dat
tmp=$dat.tmp
: > "$tmp"
echo "| math | batch | measured samples/s | predicted samples/s | error |"
echo "|---|---:|---:|---:|---:|"
for mode in fp32 tf32; do
  meas=$top/bench/gpu/h200-pytorch-$mode.json
  [ -f "$meas" ] || { echo "fidelity.sh: $meas: missing" >&2; exit 1; }
  tf=false; [ $mode = tf32 ] && tf=true
  for b in $(python3 -c "import json,sys; print(' '.join(str(r['batch']) for r in json.load(open(sys.argv[1]))['resnet50']['runs'] if not r.get('oom')))" "$meas"); do
    m=$(python3 -c "import json,sys; print([r for r in json.load(open(sys.argv[1]))['resnet50']['runs'] if r['batch']==int(sys.argv[2])][0]['samples_per_s'])" "$meas" "$b")
    p=$("$OOCSIM" simulate -m resnet50 -b "$b" --hw "$HW" \
          --hw-set compute.fp32_uses_tf32=$tf -p incore --json |
        python3 -c "import json,sys; print(round(json.load(sys.stdin)['samples_per_s'], 1))")
    python3 -c "import sys; m,p=float(sys.argv[1]),float(sys.argv[2]); print('| %s | %s | %.1f | %.1f | %+.1f%% |' % (sys.argv[3], sys.argv[4], m, p, 100*(p/m-1)))" "$m" "$p" "$mode" "$b"
    echo "$mode $b $m $p" >> "$tmp"
  done
done
mv "$tmp" "$dat"
python3 -c "
import sys
e=[abs(float(l.split()[3])/float(l.split()[2])-1) for l in open(sys.argv[1])]
print('\nmean |error| %.1f%%, max %.1f%% over %d points' % (100*sum(e)/len(e), 100*max(e), len(e)))" "$dat"
if command -v gnuplot >/dev/null 2>&1; then
  mkdir -p "$top/docs/img"
  gnuplot -e "dat='$dat'; out='$top/docs/img/fidelity-h200-resnet50.png'" \
    "$top/plots/fidelity.gp"
fi
