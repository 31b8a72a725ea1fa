#!/bin/sh
# bench/validate-gpu.sh — `make validate-gpu`: the simulator against a GPU
# through the executor's cuda backend (docs/validation.md, "On a GPU").
#
# Steps, each in one command so that a short lease of a GPU suffices:
#   1. tests/check_executor_cuda: the executor's cases on the GPU;
#   2. oocsim calibrate --backend cuda: kernels per layer signature and
#      convolution algorithm, copies, launch, driver costs, interference,
#      into $OUT/gpu.json;
#   3. oocsim validate --backend cuda with that profile: the swap planners
#      at each budget of $BUDGETS, then the recomputing planners at the
#      first, with a report per run under $OUT.
# Exit 1 when a step failed or an integrity check failed (the timing
# errors are reported, not enforced: they are measurements).
#
# Environment: OOCSIM (default ./oocsim), OUT (bench/out/validate-gpu),
# BASE (the GPU's profile; default from nvidia-smi's name: h100-sxm5 for
# an H100 SXM ("H100 80GB HBM3"), h100-pcie5 for an H100 PCIe, else
# h200-pcie5), MODEL (resnet50), BATCH
# (256), BUDGETS (space-separated, default "11GiB 5.5GiB": half and a
# quarter of resnet50's in-core peak at batch 256), SWAP
# (vdnn,lms,capacity,window), RECOMP
# (checkpoint,checkpoint-dp,superneurons,pooch,joint), ITERS
# (timed iterations, 5), JSON (1: JSON results only, no reports, as when
# gnuplot is missing; for a lease whose files come back a few at a time).
set -u
OOCSIM=${OOCSIM:-./oocsim}
OUT=${OUT:-bench/out/validate-gpu}
if [ -z "${BASE:-}" ]; then
  case $(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -n 1) in
    *H100*PCIe*) BASE=h100-pcie5 ;;
    *H100*) BASE=h100-sxm5 ;;
    *) BASE=h200-pcie5 ;;
  esac
fi
MODEL=${MODEL:-resnet50}
BATCH=${BATCH:-256}
BUDGETS=${BUDGETS:-11GiB 5.5GiB}
SWAP=${SWAP:-vdnn,lms,capacity,window}
RECOMP=${RECOMP:-checkpoint,checkpoint-dp,superneurons,pooch,joint}
ITERS=${ITERS:-5}
status=0

mkdir -p "$OUT" || exit 1
if [ -x tests/check_executor_cuda ]; then
  echo "== tests/check_executor_cuda"
  tests/check_executor_cuda
  rc=$?
  [ $rc = 77 ] && { echo "validate-gpu: no GPU here (the test above says why)"; exit 1; }
  [ $rc = 0 ] || status=1
fi
echo "== calibrate $MODEL batch $BATCH on $BASE"
"$OOCSIM" calibrate --backend cuda --base "$BASE" -m "$MODEL" -b "$BATCH" \
  -o "$OUT/gpu.json" || exit 1
run() {   # run NAME PLANNERS BUDGET; a report needs gnuplot, else JSON
  echo "== validate $2 at $3"
  set -- "$1" "$2" "$3" validate --backend cuda -m "$MODEL" -b "$BATCH" \
    --hw "$OUT/gpu.json" -p "$2" --budget "$3" --iterations "$ITERS"
  if [ "${JSON:-0}" != 1 ] && command -v gnuplot >/dev/null 2>&1; then
    "$OOCSIM" "$@" -o "$OUT/$1-$3" || status=1
  else
    "$OOCSIM" "$@" --json >"$OUT/$1-$3.json" || status=1
  fi
}
for b in $BUDGETS; do
  run swap "$SWAP" "$b"
done
[ -n "$RECOMP" ] && run recompute "$RECOMP" "${BUDGETS%% *}"
echo "reports under $OUT"
exit $status
