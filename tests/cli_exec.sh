#!/bin/sh
# tests/cli_exec.sh — oocsim exec and oocsim validate on the cpu backend:
# small untimed replays of plans from every swap planner, the measured
# summary ("measured": true, the arena's peak equal to the simulator's),
# the results object's fields, integrity (weights and gradients
# bit-identical to the in-core plan's, swapped tensors verified), the
# report files, and exit 1 with one message for bad input. No timing is
# asserted (make validate measures accuracy).
. "$top_srcdir/tests/lib.sh"
M="$top_srcdir/tests/data/models/residual.json"
HW="$top_srcdir/tests/data/hw/round.json"

if ! "$OOCSIM" exec --help | grep -q backend; then
  echo "exec is not built"; exit 1
fi
if ! "$OOCSIM" validate -m "$M" -b 8 --hw "$HW" -p incore >/dev/null 2>&1; then
  # Without oneDNN there is no cpu backend: nothing here can run.
  if "$OOCSIM" validate -m "$M" -b 8 --hw "$HW" -p incore 2>&1 | grep -q "unknown executor backend 'cpu'"; then
    echo "SKIP: no cpu backend (configure found no oneDNN)"; exit 77
  fi
fi

# num FIELD FILE: the first value of "FIELD": in a cJSON-printed file.
num() { sed -n "s/^[[:space:]]*\"$1\":[[:space:]]*\([^,]*\),*$/\1/p" "$2" | head -n 1; }

# --- exec ---------------------------------------------------------------------
expect_ok "plan window b2048 12M bestfit" \
  "$OOCSIM" plan -m "$M" -b 2048 --hw "$HW" -p window --budget 12M \
  --allocator bestfit -o "$TMP/plan.json"
expect_ok "exec --json --verify --trace" \
  "$OOCSIM" exec "$TMP/plan.json" --json --verify --iterations 2 \
  --warmup 1 --trace "$TMP/trace.json"
cp "$TMP/out" "$TMP/exec.json"
[ "$(num measured "$TMP/exec.json")" = true ] && ok "measured: true" || not_ok "measured: true"
[ "$(num feasible "$TMP/exec.json")" = true ] && ok "exec feasible" || not_ok "exec feasible"
[ "$(num backend "$TMP/exec.json")" = '"cpu"' ] && ok "exec.backend cpu" || not_ok "exec.backend cpu"
[ "$(num iterations "$TMP/exec.json")" = 2 ] && ok "2 timed iterations" || not_ok "2 timed iterations"
[ "$(num threads "$TMP/exec.json")" = 1 ] && ok "threads: the default, 1, not 0" || not_ok "threads: $(num threads "$TMP/exec.json")"
[ "$(num link_GBps "$TMP/exec.json")" = null ] && ok "no pacing: link_GBps null" || not_ok "no pacing: link_GBps null"
[ "$(num verify_mismatches "$TMP/exec.json")" = 0 ] && ok "no verify mismatch" || not_ok "no verify mismatch"
vc=$(num verify_checked "$TMP/exec.json")
[ "${vc:-0}" -gt 0 ] && ok "swapped tensors checked ($vc)" || not_ok "swapped tensors checked ($vc)"
# The arena's real peak equals the simulator's (the same placement code).
pr=$(sed -n 's/^[[:space:]]*"peak_reserved_bytes":[[:space:]]*\([0-9]*\),*$/\1/p' "$TMP/exec.json")
set -- $pr
[ $# -eq 2 ] && [ "$1" = "$2" ] && ok "peak reserved measured = predicted ($1)" ||
  not_ok "peak reserved measured = predicted ($pr)"
grep -q '"traceEvents"' "$TMP/trace.json" && ok "--trace writes a Chrome trace" || not_ok "--trace writes a Chrome trace"

expect_ok "exec text, paced" "$OOCSIM" exec "$TMP/plan.json" --link-GBps 5 --iterations 1 --warmup 0
grep -q "copies paced to 5 GB/s" "$TMP/out" && ok "text says the copies were paced" || not_ok "text says the copies were paced"
grep -q "^predicted .* measured .*peak reserved predicted" "$TMP/out" && ok "text compares with the prediction" || not_ok "text compares with the prediction"

# --- validate -------------------------------------------------------------------
expect_ok "validate --json -o" \
  "$OOCSIM" validate -m "$M" -b 2048 --hw "$HW" -p incore,vdnn,lms,capacity,window \
  --budget 12M --allocator bestfit --verify --iterations 1 --warmup 1 --json \
  -o "$TMP/val"
cp "$TMP/out" "$TMP/val.json"
for f in planner feasible_predicted feasible_measured predicted_iteration_s \
         measured_iteration_s iteration_error predicted_stall_s measured_stall_s \
         predicted_peak_reserved_bytes measured_peak_reserved_bytes \
         op_error_median op_error_p95 integrity_ok mean_abs_iteration_error \
         max_abs_iteration_error reference_predicted_s reference_error; do
  grep -q "\"$f\":" "$TMP/val.json" && ok "results have $f" || not_ok "results have $f"
done
n=$(grep -c '"planner":' "$TMP/val.json")
[ "$n" = 5 ] && ok "five results" || not_ok "five results ($n)"
# Every planner the simulator finds feasible runs, with integrity.
nf=$(grep -c '"feasible_predicted":[[:space:]]*true' "$TMP/val.json")
nm=$(grep -c '"feasible_measured":[[:space:]]*true' "$TMP/val.json")
ni=$(grep -c '"integrity_ok":[[:space:]]*true' "$TMP/val.json")
[ "$nf" -ge 3 ] && [ "$nf" = "$nm" ] && [ "$nm" = "$ni" ] &&
  ok "feasible predicted = measured = integrity ok ($nf)" ||
  not_ok "feasible predicted = measured = integrity ok ($nf/$nm/$ni)"
grep -q "bit-identical to the in-core plan's" "$TMP/val.json" && ok "integrity: bit-identical" || not_ok "integrity: bit-identical"

# An upsample sized by a second input (9x9 -> 5x5 -> 9x9: no integer
# scale) runs on the cpu backend as predicted, the swap plan bit-identical.
# A model name with markup is text in the HTML report, not markup.
mlp_named '<script>x</script>&amp;' >"$TMP/xss.json"
expect_ok "validate a model named with markup" \
  "$OOCSIM" validate -m "$TMP/xss.json" -b 4 --hw "$HW" -p incore --iterations 1 --warmup 0 -o "$TMP/vxss"
! grep -q '<script>' "$TMP/vxss/report.html" &&
  grep -q '<h1>Validation: &lt;script&gt;x&lt;/script&gt;&amp;amp;, batch 4' "$TMP/vxss/report.html" &&
  ok "validate's HTML escapes the name" || not_ok "validate's HTML: $(grep -m2 'script' "$TMP/vxss/report.html")"
! grep -q '<script>' "$TMP/vxss/report.md" &&
  grep -q '^# Validation: &lt;script>x&lt;/script>&amp;, batch 4' "$TMP/vxss/report.md" &&
  ok "validate's Markdown writes '<' of a name as text" || not_ok "validate's Markdown: $(grep -m2 'script' "$TMP/vxss/report.md")"
expect_ok "validate upsample sized by a second input" \
  "$OOCSIM" validate -m "$top_srcdir/tests/data/models/upsample_sized.json" -b 2 \
  --hw "$HW" -p incore,vdnn --iterations 1 --warmup 1 --json
ni=$(grep -c '"integrity_ok":[[:space:]]*true' "$TMP/out")
[ "$ni" = 2 ] && ok "sized upsample: integrity ok twice" || not_ok "sized upsample: integrity ok twice ($ni)"

# Residual adds in place (out += identity) run on the cpu backend as
# predicted, swapping and recomputing plans bit-identical.
expect_ok "validate in-place residual adds" \
  "$OOCSIM" validate -m "$top_srcdir/tests/data/models/add_in_place.json" -b 4 \
  --hw "$HW" -p incore,vdnn,checkpoint --iterations 1 --warmup 1 --json
ni=$(grep -c '"integrity_ok":[[:space:]]*true' "$TMP/out")
[ "$ni" = 3 ] && ok "in-place add: integrity ok three times" || not_ok "in-place add: integrity ok three times ($ni)"

# The planners that recompute, nested recomputes included (superneurons'
# memory-centric segment rebuilds r2 twice): each plan runs as predicted,
# peak reserved as predicted, and the weights and gradients come out
# bit-identical (the cpu kernels are deterministic at a fixed thread count).
expect_ok "validate the recomputing planners" \
  "$OOCSIM" validate -m "$top_srcdir/tests/data/models/relu_segments.json" -b 1024 \
  --hw "$HW" -p checkpoint,checkpoint-dp,pooch,superneurons --budget 56M \
  --allocator bestfit --iterations 1 --warmup 1 --json
cp "$TMP/out" "$TMP/valrc.json"
nm=$(grep -c '"feasible_measured":[[:space:]]*true' "$TMP/valrc.json")
ni=$(grep -c '"integrity_ok":[[:space:]]*true' "$TMP/valrc.json")
nb=$(grep -c "bit-identical to the in-core plan's" "$TMP/valrc.json")
[ "$nm" = 4 ] && [ "$ni" = 4 ] && [ "$nb" = 4 ] &&
  ok "recomputing planners: 4 run, 4 bit-identical" ||
  not_ok "recomputing planners: $nm run, $ni integrity ok, $nb bit-identical"
pp=$(sed -n 's/.*"predicted_peak_reserved_bytes":[[:space:]]*\([0-9]*\).*/\1/p' "$TMP/valrc.json" | tr '\n' ' ')
mp=$(sed -n 's/.*"measured_peak_reserved_bytes":[[:space:]]*\([0-9]*\).*/\1/p' "$TMP/valrc.json" | tr '\n' ' ')
[ -n "$pp" ] && [ "$pp" = "$mp" ] &&
  ok "recomputing planners: peak reserved as predicted ($pp)" ||
  not_ok "recomputing planners: peak reserved predicted $pp, measured $mp"
# Rotor's table at the same budget runs relu2 and relu3 (layers 2 and 3)
# forward three times: the iteration's forward and two recompute passes,
# one nested in the other. The executor replays it as predicted.
expect_ok "validate rotor's nested recomputes" \
  "$OOCSIM" validate -m "$top_srcdir/tests/data/models/relu_segments.json" -b 1024 \
  --hw "$HW" -p checkpoint-dp --opt family=rotor --budget 56M \
  --allocator bestfit --iterations 1 --warmup 1 --json
grep -q '"integrity_ok":[[:space:]]*true' "$TMP/out" &&
  grep -q "bit-identical to the in-core plan's" "$TMP/out" &&
  ok "rotor's plan: integrity ok, bit-identical" ||
  not_ok "rotor's plan: integrity ok, bit-identical"
pp=$(sed -n 's/.*"predicted_peak_reserved_bytes":[[:space:]]*\([0-9]*\).*/\1/p' "$TMP/out")
mp=$(sed -n 's/.*"measured_peak_reserved_bytes":[[:space:]]*\([0-9]*\).*/\1/p' "$TMP/out")
[ -n "$pp" ] && [ "$pp" = "$mp" ] &&
  ok "rotor's plan: peak reserved as predicted ($pp)" ||
  not_ok "rotor's plan: peak reserved predicted $pp, measured $mp"
if "$OOCSIM" plan -m "$top_srcdir/tests/data/models/relu_segments.json" -b 1024 \
     --hw "$HW" -p checkpoint-dp --opt family=rotor --budget 56M \
     --allocator bestfit -o "$TMP/rotor.json" >/dev/null 2>&1; then
  nr=$(tr -d ' \n\t' < "$TMP/rotor.json" | grep -o '\["compute",0,"recomp","device",[23],' | wc -l)
  [ "$nr" = 4 ] && ok "rotor's plan recomputes relu2 and relu3 twice each" ||
    not_ok "rotor's plan recomputes relu2 and relu3 twice each ($nr)"
else
  not_ok "rotor's plan written"
fi
grep -q '"integrity":[[:space:]]*"not run: the simulator predicts out of memory"' "$TMP/val.json" &&
  ok "an OOM plan is not run" || not_ok "an OOM plan is not run"
# ... which is no failure: its integrity_ok is null (nothing checked),
# and its row shows "-" for what was not measured, as results.json does.
grep -q '"integrity_ok":[[:space:]]*null' "$TMP/val.json" &&
  ok "an OOM plan's integrity_ok is null" || not_ok "an OOM plan's integrity_ok: $(grep -c integrity_ok "$TMP/val.json")"
grep -q '| OOM | - | - | - / - | [0-9.]* [KMG]*i*B / - | - / - | [0-9]* | not run: the simulator predicts out of memory |$' "$TMP/val/report.md" &&
  ok "an OOM plan's row: nothing measured, not FAILED" || not_ok "OOM row: $(grep '| OOM |' "$TMP/val/report.md")"
# Measured peak reserved equals predicted for every feasible planner.
awk '/"predicted_peak_reserved_bytes"/ { gsub(/[^0-9]/, "", $2); p = $2 }
     /"measured_peak_reserved_bytes"/ { gsub(/[^0-9]/, "", $2); if ($2 != "" && $2 != p) bad++ }
     END { exit bad > 0 }' "$TMP/val.json" &&
  ok "peak reserved equal per planner" || not_ok "peak reserved equal per planner"
for f in results.json report.md report.html data/iteration.dat data/op-errors.dat data/timeline-window.dat; do
  [ -s "$TMP/val/$f" ] && ok "report has $f" || not_ok "report has $f"
done
if command -v "${OOCSIM_GNUPLOT:-gnuplot}" >/dev/null 2>&1; then
  for f in iteration.png op-errors.png timeline-window.png; do
    [ -s "$TMP/val/$f" ] && ok "report drew $f" || not_ok "report drew $f"
  done
fi
grep -q "| window |" "$TMP/val/report.md" && ok "report.md has a row per planner" || not_ok "report.md has a row per planner"

# Parameter offload (docs/offload.md): the optimizer of every layer on the
# host stream, gradients out after each backward, weights back (resident)
# or copied in before each use (streamed). The replay computes the same
# bits as the in-core plan, at the predicted peak.
for mode in resident stream; do
  expect_ok "validate zero-offload params=$mode" \
    "$OOCSIM" validate -m "$M" -b 2048 --hw "$HW" -p incore,zero-offload \
    --opt params=$mode --iterations 2 --warmup 1 --json
  n=$(grep -c "bit-identical to the in-core plan's" "$TMP/out")
  [ "$n" = 2 ] && ok "zero-offload $mode: weights and gradients bit-identical" ||
    not_ok "zero-offload $mode: weights and gradients bit-identical ($n)"
  awk '/"predicted_peak_reserved_bytes"/ { gsub(/[^0-9]/, "", $2); p = $2 }
       /"measured_peak_reserved_bytes"/ { gsub(/[^0-9]/, "", $2); if ($2 != "" && $2 != p) bad++ }
       END { exit bad > 0 }' "$TMP/out" &&
    ok "zero-offload $mode: peak reserved as predicted" || not_ok "zero-offload $mode: peak reserved as predicted"
done
expect_ok "plan zero-offload" "$OOCSIM" plan -m "$M" -b 2048 --hw "$HW" -p zero-offload --opt params=stream -o "$TMP/zo.json"
expect_ok "exec zero-offload --verify" "$OOCSIM" exec "$TMP/zo.json" --json --verify --iterations 1 --trace "$TMP/zo-trace.json"
grep -q '"cat":"cpu-update"' "$TMP/zo-trace.json" && ok "the measured trace has the host's steps" ||
  not_ok "the measured trace has the host's steps"

# --- bad input --------------------------------------------------------------------
expect_fail "exec without a plan" "exec: missing PLAN.json" "$OOCSIM" exec
expect_fail "exec two plans" "exec: one plan file at most" "$OOCSIM" exec "$TMP/plan.json" "$TMP/plan.json"
expect_fail "exec missing file" "$TMP/nope.json" "$OOCSIM" exec "$TMP/nope.json"
cp "$TMP/plan.json" "$TMP/keep.json"
expect_fail "exec --trace over its plan file" \
  "oocsim: the plan file and --trace name the same file '$TMP/./plan.json'" \
  "$OOCSIM" exec "$TMP/plan.json" --trace "$TMP/./plan.json"
cmp -s "$TMP/plan.json" "$TMP/keep.json" && ok "the plan file is untouched" ||
  not_ok "the plan file was written"
expect_fail "exec --trace in a missing folder" \
  "oocsim: --trace: cannot write '$TMP/no/t.json': No such file or directory" \
  "$OOCSIM" exec "$TMP/plan.json" --trace "$TMP/no/t.json"
# validate's -o folder is made before the runs: a file in its way is
# said at once, with nothing run.
: > "$TMP/afile"
expect_fail "validate -o over a file" "oocsim: -o: cannot write to output directory '$TMP/afile': Not a directory" \
  "$OOCSIM" validate -m "$top_srcdir/tests/data/cli_mlp.json" -b 4 --hw "$HW" -p vdnn -o "$TMP/afile"
echo '{"format": "oocsim-plan", "version": 2' > "$TMP/trunc.json"
expect_fail "exec truncated plan" "trunc.json" "$OOCSIM" exec "$TMP/trunc.json"
expect_fail "unknown backend" "--backend: unknown executor backend 'tpu' (valid: " "$OOCSIM" exec "$TMP/plan.json" --backend tpu
expect_fail "empty backend" "--backend: empty backend name" "$OOCSIM" exec "$TMP/plan.json" --backend ""
expect_fail "iterations 0" "--iterations: '0' must be an integer in [1, 1000]" "$OOCSIM" exec "$TMP/plan.json" --iterations 0
expect_fail "warmup -1" "--warmup: '-1' must be an integer in [0, 1000]" "$OOCSIM" exec "$TMP/plan.json" --warmup -1
expect_fail "threads 0" "--threads: '0' must be an integer in [1, 1024]" "$OOCSIM" exec "$TMP/plan.json" --threads 0
expect_fail "link 0" "--link-GBps: '0' must be a number of GB/s in [0.01, 1e6]" "$OOCSIM" exec "$TMP/plan.json" --link-GBps 0
expect_fail "link 1e-300" "--link-GBps: '1e-300' must be a number of GB/s in [0.01, 1e6]" "$OOCSIM" exec "$TMP/plan.json" --link-GBps 1e-300
expect_fail "link word" "--link-GBps: 'fast' must be a number" "$OOCSIM" exec "$TMP/plan.json" --link-GBps fast
expect_fail "exec --trace to a missing folder" "--trace: " "$OOCSIM" exec "$TMP/plan.json" --iterations 1 --trace "$TMP/no/such/dir/t.json"
expect_fail "validate without -p" "missing -p" "$OOCSIM" validate -m "$M" -b 8 --hw "$HW"
expect_fail "validate --opt no chosen planner accepts" \
  "--opt stage: no chosen planner accepts this option" \
  "$OOCSIM" validate -m "$M" -b 8 --hw "$HW" -p window --opt stage=all
expect_ok "validate --opt goes to the planner that takes it" \
  "$OOCSIM" validate -m "$top_srcdir/tests/data/models/relu_segments.json" -b 1024 \
  --hw "$HW" -p superneurons,window --opt stage=recompute --budget 56M \
  --allocator bestfit --iterations 1 --warmup 1 --json
# stage=recompute offloads every checkpoint output (the default stage, with
# the cache, moves nothing at this budget).
sw=$(awk '/"planner":[[:space:]]*"superneurons"/ { on = 1 }
          on && /"swap":/ { gsub(/[^0-9]/, "", $2); print $2; exit }' "$TMP/out")
[ -n "$sw" ] && [ "$sw" -gt 0 ] &&
  ok "validate --opt stage=recompute reached superneurons ($sw swaps)" ||
  not_ok "validate --opt stage=recompute reached superneurons (swaps: $sw)"
# A planner that cannot plan (or whose plan the backend refuses) gets a
# row saying why; the other planners still run and are compared.
expect_fail "validate a planner that refuses the profile" \
  "validate: planner zero-offload not run: planner 'zero-offload': profile 'round-no-cpu-optimizer' gives no host.optimizer_GBps (the CPU optimizer's rate)" \
  "$OOCSIM" validate -m "$M" -b 64 --hw "$top_srcdir/tests/data/hw/no_host_optimizer.json" \
  -p window,zero-offload --iterations 1 --warmup 0
grep -q "^window .* ok$" "$TMP/out" && ok "the refused planner's neighbour still ran" ||
  not_ok "the refused planner's neighbour still ran: $(cat "$TMP/out")"
grep -q "^zero-offload  *-  *-  *-  *-  *-  *-  not run: planner 'zero-offload'" "$TMP/out" &&
  ok "the refused planner's row says why" || not_ok "the refused planner's row: $(cat "$TMP/out")"
"$OOCSIM" validate -m "$M" -b 64 --hw "$top_srcdir/tests/data/hw/no_host_optimizer.json" \
  -p window,zero-offload --iterations 1 --warmup 0 --json >"$TMP/refused.json" 2>/dev/null
awk '/"planner":/ { p = $2 } /"refused":/ { print p, $2 }' "$TMP/refused.json" | tr -d '",' >"$TMP/refused.txt"
[ "$(cat "$TMP/refused.txt")" = "$(printf 'window false\nzero-offload true')" ] &&
  ok "--json marks the refused row" || not_ok "--json marks the refused row: $(cat "$TMP/refused.txt")"
"$OOCSIM" validate -m "$M" -b 64 --hw "$top_srcdir/tests/data/hw/no_host_optimizer.json" \
  -p window,zero-offload --iterations 1 --warmup 0 -o "$TMP/refval" >/dev/null 2>&1
grep -q "^| zero-offload | - | - | - | - | - | - | - | FAILED: not run: planner 'zero-offload': " "$TMP/refval/report.md" &&
  ok "the report's row for the refused planner" ||
  not_ok "the report's row for the refused planner: $(grep zero-offload "$TMP/refval/report.md")"
expect_fail "validate unknown planner" "-p: unknown planner 'nope'" "$OOCSIM" validate -m "$M" -b 8 --hw "$HW" -p nope
expect_fail "validate budget below the working set" "below the working set" \
  "$OOCSIM" validate -m "$M" -b 2048 --hw "$HW" -p window --budget 1M
# The cuda backend without a GPU (or not built): one line naming it.
expect_fail "validate --backend cuda without a GPU" "cuda" \
  "$OOCSIM" validate -m "$M" -b 8 --hw "$HW" -p incore --backend cuda
[ ! -e "$TMP/no" ] && ok "a failed --trace leaves nothing" || not_ok "a failed --trace leaves nothing"
finish
