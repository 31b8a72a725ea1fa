#!/bin/sh
# tests/cli_calibrate.sh — oocsim calibrate on the cpu backend: a small
# model's profile is written whole, loads, carries a calibration entry per
# layer signature whose times the simulator then uses (its in-core
# iteration is the sum of the calibrated kernels), says what was measured
# where, and bad input exits 1 with one message. No measured value is
# asserted beyond its sign (make validate measures accuracy).
. "$top_srcdir/tests/lib.sh"
M="$top_srcdir/tests/data/models/residual.json"

if "$OOCSIM" calibrate -m "$M" -b 8 -o "$TMP/x.json" 2>&1 | grep -q "unknown executor backend 'cpu'"; then
  echo "SKIP: no cpu backend (configure found no oneDNN)"; exit 77
fi

num() { sed -n "s/^[[:space:]]*\"$1\":[[:space:]]*\([^,]*\),*$/\1/p" "$2" | head -n 1; }

expect_ok "calibrate residual b64" "$OOCSIM" calibrate -m "$M" -b 64 --repeat 1 -o "$TMP/cal.json"
grep -q "^$TMP/cal.json: profile 'cal' calibrated on " "$TMP/out" && ok "says which profile" || not_ok "says which profile ($(head -1 "$TMP/out"))"
for w in kernels copies interference driver; do
  grep -q "^$w " "$TMP/out" && ok "prints $w" || not_ok "prints $w"
done
# The CPU optimizer step is timed for the model's optimizer (momentum by
# default): one rate cannot price both a momentum and an Adam step.
grep -q "^host .*, optimizer step (momentum on the CPU) [0-9.]* GB/s + [0-9.]* us per step$" "$TMP/out" &&
  ok "times the model's optimizer on the CPU" || not_ok "times the model's optimizer on the CPU ($(grep '^host' "$TMP/out"))"
[ "$(num name "$TMP/cal.json")" = '"cal"' ] && ok "named after -o" || not_ok "named after -o"
grep -q '"calibration": "\[M\] oocsim calibrate --backend cpu on ' "$TMP/cal.json" && ok "_source says what was measured" || not_ok "_source says what was measured"
n=$(grep -c '"sig":' "$TMP/cal.json")
[ "$n" -ge 5 ] && ok "calibration table ($n signatures)" || not_ok "calibration table ($n signatures)"
grep -q '"copy_interference"' "$TMP/cal.json" && ok "interference per class" || not_ok "interference per class"
# The simulator uses it as it is.
expect_ok "simulate with the calibrated profile" \
  "$OOCSIM" simulate -m "$M" -b 64 --hw "$TMP/cal.json" -p incore --json
[ "$(num hw "$TMP/out")" = '"cal"' ] && ok "the profile loads" || not_ok "the profile loads"
it=$(num iteration_s "$TMP/out")
awk -v t="$it" 'BEGIN { exit !(t > 0 && t < 10) }' && ok "iteration $it s" || not_ok "iteration $it s"
# Same structure for the same inputs (the values are measurements).
expect_ok "calibrate again, for Adam" "$OOCSIM" calibrate -m "$M" -b 64 --repeat 1 --optimizer adam -o "$TMP/cal.json"
grep -q "^host .*, optimizer step (adam on the CPU) " "$TMP/out" &&
  ok "--optimizer adam: Adam's step timed" || not_ok "--optimizer adam: Adam's step timed ($(grep '^host' "$TMP/out"))"
[ "$(grep -c '"sig":' "$TMP/cal.json")" = "$n" ] && ok "same signatures again" || not_ok "same signatures again"

# Convolution algorithms: a base profile that offers the families makes
# calibrate replay each; oneDNN runs the GEMM ones and has no FFT kernels,
# which the profile then marks as not offered (so no plan picks them).
expect_ok "calibrate with algorithms" "$OOCSIM" calibrate -m "$M" -b 8 --repeat 1 --base v100-pcie3 -o "$TMP/alg.json"
grep -q "^algorithms  [0-9]* signature entries, [0-9]* of them refused by the backend$" "$TMP/out" && ok "prints algorithms" || not_ok "prints algorithms ($(grep algorithms "$TMP/out"))"
grep -q "^  implicit_gemm      ran on 2 layers (median time x[0-9.]* the default's), refused on 0$" "$TMP/out" && ok "implicit_gemm ran" || not_ok "implicit_gemm ran ($(grep implicit_gemm "$TMP/out"))"
grep -q "^  fft                ran on 0 layers, refused on 2$" "$TMP/out" && ok "fft refused" || not_ok "fft refused ($(grep ' fft ' "$TMP/out"))"
n_gemm=$(grep -c '"algo": "implicit_gemm",' "$TMP/alg.json")
[ "$n_gemm" = 1 ] && ok "one implicit_gemm entry" || not_ok "one implicit_gemm entry ($n_gemm)"
grep -A1 '"algo": "fft",' "$TMP/alg.json" | grep -q '"offered": false' && ok "fft not offered" || not_ok "fft not offered"
expect_ok "superneurons on it" "$OOCSIM" simulate -m "$M" -b 8 --hw "$TMP/alg.json" -p superneurons
# With implicit GEMM made the fastest, SuperNeurons §3.5 picks it, and its
# weights are checked against the in-core plan run with its algorithms.
sed '/"algo": "implicit_gemm",/{n;s/"fwd_us": [0-9.]*/"fwd_us": 0.001/;n;s/"bwd_us": [0-9.]*/"bwd_us": 0.001/;}' "$TMP/alg.json" > "$TMP/fast.json"
expect_ok "superneurons with a fast implicit GEMM" "$OOCSIM" simulate -m "$M" -b 8 --hw "$TMP/fast.json" -p superneurons
grep -q " 4 conv algorithms changed" "$TMP/out" && ok "superneurons picks the measured algorithm" || not_ok "superneurons picks the measured algorithm ($(grep planner "$TMP/out"))"
expect_ok "validate superneurons on it" "$OOCSIM" validate -m "$M" -b 8 --hw "$TMP/fast.json" -p superneurons --iterations 1 --json
grep -q "bit-identical to the in-core plan's ([0-9]* values), run with the plan's kernel algorithms" "$TMP/out" && ok "reference with the plan's algorithms" || not_ok "reference with the plan's algorithms ($(grep integrity "$TMP/out"))"
expect_ok "calibrate --no-algorithms" "$OOCSIM" calibrate -m "$M" -b 8 --repeat 1 --base v100-pcie3 --no-algorithms -o "$TMP/noalg.json"
grep -q "^algorithms" "$TMP/out" && not_ok "--no-algorithms prints none" || ok "--no-algorithms prints none"
grep -q '"algo"' "$TMP/noalg.json" && not_ok "--no-algorithms: default entries only" || ok "--no-algorithms: default entries only"

expect_fail "missing -o" "missing -o" "$OOCSIM" calibrate -m "$M" -b 8
expect_fail "repeat 0" "--repeat: '0' must be an integer in [1, 64]" "$OOCSIM" calibrate -m "$M" -b 8 --repeat 0 -o "$TMP/c.json"
expect_fail "unknown backend" "--backend: unknown executor backend 'tpu'" "$OOCSIM" calibrate --backend tpu -m "$M" -b 8 -o "$TMP/c.json"
expect_fail "fp16" "--dtype: the executor runs fp32 only" "$OOCSIM" calibrate -m "$M" -b 8 --dtype fp16 -o "$TMP/c.json"
expect_fail "unknown base" "nope" "$OOCSIM" calibrate -m "$M" -b 8 --base nope -o "$TMP/c.json"
# An -o that cannot be written is refused before the measuring (it was
# found only after it, seconds to minutes later).
: > "$TMP/afile"
expect_fail "-o under a file" "oocsim: -o: cannot write '$TMP/afile/c.json': Not a directory" \
  "$OOCSIM" calibrate -m "$M" -b 8 -o "$TMP/afile/c.json"
expect_fail "-o into a missing folder" "-o: " "$OOCSIM" calibrate -m "$M" -b 8 --repeat 1 -o "$TMP/no/such/c.json"
[ ! -e "$TMP/c.json" ] && ok "nothing written on failure" || not_ok "nothing written on failure"
expect_fail "cuda needs a base" "--base: the cuda backend needs a base profile" "$OOCSIM" calibrate --backend cuda -m "$M" -b 8 -o "$TMP/c.json"
expect_fail "cuda without a GPU" "cuda" "$OOCSIM" calibrate --backend cuda --base v100-pcie3 -m "$M" -b 8 -o "$TMP/c.json"
finish
