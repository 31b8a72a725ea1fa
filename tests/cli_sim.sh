#!/bin/sh
# tests/cli_sim.sh — simulate, plan + simulate PLAN.json, the trace and
# memory CSV, compare and maxbatch through the oocsim binary: every summary
# field of ARCHITECTURE.md is present, the plan file replays to exactly the
# one-shot result, the bound holds, errors on bad plan files.
. "$top_srcdir/tests/lib.sh"
MLP="$top_srcdir/tests/data/cli_mlp.json"

FIELDS="model batch dtype hw planner allocator budget_bytes feasible oom
iteration_s samples_per_s incore_iteration_s slowdown lower_bound_s
peak_allocated_bytes peak_reserved_bytes h2d_bytes d2h_bytes recompute_flops
compute_busy_s h2d_busy_s d2h_busy_s counts keep swap recompute events
sim_wall_s"

# num FIELD FILE: the first value of "FIELD": in a cJSON-printed file.
num() { sed -n "s/^[[:space:]]*\"$1\":[[:space:]]*\([^,]*\),*$/\1/p" "$2" | head -n 1; }
# le A B: A <= B as numbers (awk handles exponents).
le() { awk -v a="$1" -v b="$2" 'BEGIN { exit !(a + 0 <= b + 0) }'; }

# simulate --json: the issue's acceptance scenario
expect_ok "simulate resnet50 b64 h100 incore" \
  "$OOCSIM" simulate -m resnet50 -b 64 --hw h100-pcie5 -p incore --json
cp "$TMP/out" "$TMP/r50.json"
for f in $FIELDS; do
  grep -q "\"$f\":" "$TMP/r50.json" && ok "summary has $f" || not_ok "summary has $f"
done
[ "$(num model "$TMP/r50.json")" = '"resnet50"' ] && ok "model name" || not_ok "model name"
[ "$(num batch "$TMP/r50.json")" = 64 ] && ok "batch 64" || not_ok "batch 64"
[ "$(num feasible "$TMP/r50.json")" = true ] && ok "incore b64 feasible" || not_ok "incore b64 feasible"
[ "$(num oom "$TMP/r50.json")" = null ] && ok "oom null" || not_ok "oom null"
it=$(num iteration_s "$TMP/r50.json"); lb=$(num lower_bound_s "$TMP/r50.json")
inc=$(num incore_iteration_s "$TMP/r50.json"); sps=$(num samples_per_s "$TMP/r50.json")
# plausible: an H100 trains resnet50 b64 in a few ms to a few hundred ms
le 0.001 "$it" && le "$it" 1 && ok "iteration_s $it plausible" || not_ok "iteration_s $it plausible"
le "$lb" "$it" && le 0.0001 "$lb" && ok "lower bound $lb <= iteration $it" || not_ok "lower bound $lb <= iteration $it"
awk -v s="$sps" -v t="$it" 'BEGIN { d = s * t - 64; exit !(d < 1e-6 && d > -1e-6) }' &&
  ok "samples_per_s = batch / iteration_s" || not_ok "samples_per_s = batch / iteration_s"
awk -v a="$it" -v b="$inc" 'BEGIN { d = a - b; exit !(d < 1e-9 && d > -1e-9) }' &&
  ok "incore plan equals the in-core baseline" || not_ok "incore plan equals the in-core baseline ($it vs $inc)"
[ "$(num swap "$TMP/r50.json")" = 0 ] && [ "$(num recompute "$TMP/r50.json")" = 0 ] &&
  ok "incore swaps and recomputes nothing" || not_ok "incore swaps and recomputes nothing"
[ "$(num h2d_bytes "$TMP/r50.json")" = 0 ] && ok "incore moves no bytes" || not_ok "incore moves no bytes"

# deterministic output
"$OOCSIM" simulate -m resnet50 -b 64 --hw h100-pcie5 -p incore --json --no-timing >"$TMP/a.json" 2>&1
"$OOCSIM" simulate -m resnet50 -b 64 --hw h100-pcie5 -p incore --json --no-timing >"$TMP/b.json" 2>&1
cmp -s "$TMP/a.json" "$TMP/b.json" && ok "deterministic JSON" || not_ok "deterministic JSON"

# readable text
expect_ok "simulate text" "$OOCSIM" simulate -m "$MLP" -b 8 --hw v100-pcie3 -p incore
grep -q '^result *feasible' "$TMP/out" && ok "text result line" || not_ok "text result line"
grep -q '^lower bound' "$TMP/out" && ok "text lower bound line" || not_ok "text lower bound line"

# plan + simulate plan.json == one-shot, for a swapping planner too
for p in incore vdnn window; do
  S="-m resnet50 -b 256 --hw v100-pcie3 -p $p --allocator va"
  if "$OOCSIM" plan $S -o "$TMP/plan-$p.json" >/dev/null 2>"$TMP/err" &&
     "$OOCSIM" simulate "$TMP/plan-$p.json" --json --no-timing >"$TMP/p1.json" 2>>"$TMP/err" &&
     "$OOCSIM" simulate $S --json --no-timing >"$TMP/p2.json" 2>>"$TMP/err" &&
     cmp -s "$TMP/p1.json" "$TMP/p2.json"; then
    ok "plan.json replays to the one-shot result ($p)"
  else
    not_ok "plan.json replays to the one-shot result ($p): $(head -c 300 "$TMP/err"; diff "$TMP/p1.json" "$TMP/p2.json" | head -5)"
  fi
done
# The same with --steady and --iterations, which plan.json records.
for o in "--steady" "--iterations 3"; do
  S="-m resnet50 -b 256 --hw v100-pcie3 -p checkpoint-dp $o"
  if "$OOCSIM" plan $S -o "$TMP/plan-it.json" >/dev/null 2>"$TMP/err" &&
     "$OOCSIM" simulate "$TMP/plan-it.json" --json --no-timing >"$TMP/p1.json" 2>>"$TMP/err" &&
     "$OOCSIM" simulate $S --json --no-timing 2>>"$TMP/err" |
       sed '/"planner_metrics"/,/}/d' >"$TMP/p2.json" &&
     cmp -s "$TMP/p1.json" "$TMP/p2.json"; then
    ok "plan.json made with $o replays to the one-shot result"
  else
    not_ok "replay with $o: $(head -c 300 "$TMP/err"; diff "$TMP/p1.json" "$TMP/p2.json" | head -5)"
  fi
done
"$OOCSIM" simulate "$TMP/plan-incore.json" >"$TMP/t1" 2>&1
"$OOCSIM" simulate -m resnet50 -b 256 --hw v100-pcie3 -p incore --allocator va >"$TMP/t2" 2>&1
grep -v '^simulation' "$TMP/t1" >"$TMP/t1b"; grep -v '^simulation' "$TMP/t2" >"$TMP/t2b"
cmp -s "$TMP/t1b" "$TMP/t2b" && ok "plan.json text equals one-shot text" || not_ok "plan.json text equals one-shot text"

# a plan made with a relative model path replays from another directory
if (cd "$top_srcdir" && "$OOCSIM" plan -m tests/data/cli_mlp.json -b 4 --hw v100-pcie3 \
      -p incore -o "$TMP/rel.json" >/dev/null 2>&1) &&
   (cd "$TMP" && "$OOCSIM" simulate rel.json --json >/dev/null 2>&1); then
  ok "plan.json with a relative model path replays elsewhere"
else
  not_ok "plan.json with a relative model path replays elsewhere"
fi

# bad plan files
head -c 200 "$TMP/plan-incore.json" >"$TMP/trunc.json"
expect_fail "truncated plan.json" "trunc.json" "$OOCSIM" simulate "$TMP/trunc.json"
printf '\001\002garbage' >"$TMP/garbage.json"
expect_fail "garbage plan.json" "garbage.json" "$OOCSIM" simulate "$TMP/garbage.json"
expect_fail "missing plan.json" "nosuch.json" "$OOCSIM" simulate "$TMP/nosuch.json"
"$OOCSIM" plan -m "$MLP" -b 4 --hw v100-pcie3 -p incore -o "$TMP/mlp.json" >/dev/null 2>&1
sed 's/"batch":[[:space:]]*4/"batch": 5/' "$TMP/mlp.json" >"$TMP/other.json"
expect_fail "plan for a different model" "different model" "$OOCSIM" simulate "$TMP/other.json"
expect_fail "plan file and -m" \
  "simulate: -m cannot be given with a plan file" \
  "$OOCSIM" simulate "$TMP/mlp.json" -m "$MLP"
{ cat "$TMP/mlp.json"; echo xyz; } >"$TMP/tail.json"
expect_fail "text after the plan's object" "tail.json: more text after the JSON object, at line" \
  "$OOCSIM" simulate "$TMP/tail.json"
sed 's/"version":[[:space:]]*2,/"version": 2, "version": 3,/' "$TMP/mlp.json" >"$TMP/dupv.json"
sed 's/"planner":"incore"/"planner":"nosuch"/' "$TMP/mlp.json" >"$TMP/nop.json"
expect_fail "a plan by an unknown planner" "nop.json: scenario.planner: unknown planner 'nosuch'" \
  "$OOCSIM" simulate "$TMP/nop.json"
# The scenario is checked as the plan is read: its keys, its planner's
# options, its layer count against the model, its budget against the
# profile; each message names the file and the field.
sed 's/"planner":"incore"/"planner":"vdnn","colour":"red"/' "$TMP/mlp.json" >"$TMP/key.json"
expect_fail "a plan with an unknown scenario key" \
  "oocsim: $TMP/key.json: scenario.colour: unknown key (valid: model, model_path, batch, dtype, precision, optimizer, set, hw, hw_set, planner, opts, allocator, budget_bytes, iterations, steady, note)" \
  "$OOCSIM" simulate "$TMP/key.json"
sed 's/"opts":{}/"opts":{"bogus":"1"}/' "$TMP/mlp.json" >"$TMP/opt.json"
expect_fail "a plan with an option its planner does not take" \
  "oocsim: $TMP/opt.json: scenario.opts: planner 'incore': unknown option 'bogus' (it takes no options)" \
  "$OOCSIM" simulate "$TMP/opt.json"
sed 's/"planner":"incore","opts":{}/"planner":"window","opts":{"ahead":"2"}/' "$TMP/mlp.json" >"$TMP/opt2.json"
expect_fail "a plan with another planner's option" \
  "oocsim: $TMP/opt2.json: scenario.opts: planner 'window': unknown option 'ahead' (valid: window, sched_budget, grads)" \
  "$OOCSIM" simulate "$TMP/opt2.json"
sed 's/"n_layers":[[:space:]]*5,/"n_layers": 6,/' "$TMP/mlp.json" >"$TMP/nl.json"
expect_fail "a plan for more layers than the model has" \
  "oocsim: $TMP/nl.json: n_layers: the plan is for 6 layers, 'cli_mlp' at batch 4 has 5" \
  "$OOCSIM" simulate "$TMP/nl.json"
sed 's/"n_layers":[[:space:]]*5,/"n_layers": 4,/' "$TMP/mlp.json" >"$TMP/nl4.json"
expect_fail "a plan whose tensors name a layer past its own n_layers" \
  "oocsim: $TMP/nl4.json: tensors[6] layer (n_layers is 4): 4 is out of range [-1, 3]" \
  "$OOCSIM" simulate "$TMP/nl4.json"
# A plan file's options are its planner's, which a replay does not run:
# the smallest-budget hint under an infeasible replay plans with the
# defaults, so a bad value there cannot fail the command after its trace
# is written (it used to exit 1 with "smallest budget: planner 'vdnn':
# ..." and the trace left behind).
sed 's/"opts":{}/"opts":{"policy":"bogus"}/; s/"planner":"incore"/"planner":"vdnn"/; s/"budget_bytes":[0-9]*/"budget_bytes":1048576/' \
  "$TMP/mlp.json" >"$TMP/hintopt.json"
rm -f "$TMP/hint-trace.json"
expect_ok "an infeasible replay with a bad option value" \
  "$OOCSIM" simulate "$TMP/hintopt.json" --trace "$TMP/hint-trace.json"
grep -q '^smallest budget that fits: ' "$TMP/out" && [ -s "$TMP/hint-trace.json" ] &&
  ok "its hint and its trace" || not_ok "hint: $(tail -n 2 "$TMP/out") $(cat "$TMP/err")"
# An instruction's bad element is named, not only its index: the first
# forward kernel (program[4]) with a number for its phase.
sed 's/\["compute",0,"fwd"/["compute",0,7/' "$TMP/mlp.json" >"$TMP/ph.json"
expect_fail "a plan with a bad instruction element" \
  "oocsim: $TMP/ph.json: program[4] phase: must be a string" \
  "$OOCSIM" simulate "$TMP/ph.json"
# A forward kernel that does not list its weights: the executor could not
# run it, so neither simulate nor exec accepts it, with one message.
sed 's/\["compute",0,"fwd","device",1,-1,\[2,-4,0\]/["compute",0,"fwd","device",1,-1,[2,-4]/' \
  "$TMP/mlp.json" >"$TMP/noparam.json"
cmp -s "$TMP/mlp.json" "$TMP/noparam.json" && not_ok "the edit took: fc1 reads param 0"
expect_fail "a kernel's weights not listed" \
  "oocsim: $TMP/noparam.json: instruction 4 (COMPUTE fwd, layer 1 'fc1'): \
its kernel reads tensor 0 (the parameters, param of layer 1 'fc1'), which \
the instruction does not list" \
  "$OOCSIM" simulate "$TMP/noparam.json"
cp "$TMP/err" "$TMP/noparam-sim.err"
expect_fail "exec refuses it too" "instruction 4 (COMPUTE fwd" \
  "$OOCSIM" exec "$TMP/noparam.json"
cmp -s "$TMP/err" "$TMP/noparam-sim.err" &&
  ok "simulate and exec say the same" ||
  not_ok "simulate and exec say the same: $(cat "$TMP/err")"
# Instructions deleted by hand that the checks above cannot see alone:
# the recompute that fills what an in-place relu recomputes on, and the
# copy in of weights a host optimizer step updated (stale next iteration).
TC="$top_srcdir/tests/data/models/tiny_cnn.json"
"$OOCSIM" plan -m "$TC" -b 4 --hw v100-pcie3 -p superneurons --budget 30KiB \
  --allocator ideal -o "$TMP/sn.json" >/dev/null 2>&1
l=$(grep -n '^\["compute",0,"recomp","device",[0-9]*,-1,\[-[0-9]*\],' \
  "$TMP/sn.json" | head -n 1 | cut -d: -f1)
if [ -n "$l" ]; then
  plan_drop $(plan_index $((l - 1)) "$TMP/sn.json") "$TMP/sn.json" >"$TMP/sn-del.json"
  expect_fail "an in-place recompute whose input was not recomputed" \
    "sn-del.json: instruction 27 (COMPUTE recomp, layer 3 'relu1'): its kernel works in place on tensor 5 (act of layer 2 'bn1'), which holds no data then (nothing wrote it since its ALLOC)" \
    "$OOCSIM" simulate "$TMP/sn-del.json"
else
  not_ok "superneurons recomputes an in-place relu of tiny_cnn at 30 KiB"
fi
"$OOCSIM" plan -m "$TC" -b 4 --hw v100-pcie3 -p zero-offload --budget 30KiB \
  --allocator ideal -o "$TMP/zo.json" >/dev/null 2>&1
l=$(grep -n '^\["h2d"' "$TMP/zo.json" | head -n 1 | cut -d: -f1)
if [ -n "$l" ]; then
  plan_drop $(plan_index "$l" "$TMP/zo.json") "$TMP/zo.json" >"$TMP/zo-del.json"
  expect_fail "updated weights never copied back in" \
    "zo-del.json: program: in the second iteration: instruction 24 (COMPUTE fwd, layer 6): reads tensor 2 (layer 6) whose device copy a host optimizer step has updated since (no copy in brought the new data)" \
    "$OOCSIM" simulate "$TMP/zo-del.json"
else
  not_ok "zero-offload copies weights in on tiny_cnn at 30 KiB"
fi
# A copy's layer is its tensor's: traces label it by the layer.
l=$(grep -n '^\["d2h"' "$TMP/zo.json" | head -n 1 | cut -d: -f1)
k=$(plan_index "${l:-0}" "$TMP/zo.json")
sed "${l:-1}s/^\[\"d2h\",\([0-9]*\),\"none\",\"device\",[0-9]*,/[\"d2h\",\1,\"none\",\"device\",0,/" \
  "$TMP/zo.json" >"$TMP/zo-layer.json"
expect_fail "a copy labelled with another layer" \
  "zo-layer.json: program[$k] layer: 0 is not the layer of tensor" \
  "$OOCSIM" simulate "$TMP/zo-layer.json"
# The update runs every layer's optimizer step and names no layer; a
# kernel lists the workspace its algorithm needs (else a replay runs it
# on scratch the plan never allocated, and the prediction misses it).
"$OOCSIM" plan -m "$TC" -b 4 --hw v100-pcie3 -p incore -o "$TMP/tc.json" \
  >/dev/null 2>&1
sed 's/^\["compute",0,"update","device",-1,/["compute",0,"update","device",3,/' \
  "$TMP/tc.json" >"$TMP/tc-upd.json"
expect_fail "an update that names a layer" \
  "tc-upd.json: program: instruction 42 (COMPUTE on compute stream, layer 3, tensor -1): the update runs every layer's step, and names none (layer -1)" \
  "$OOCSIM" simulate "$TMP/tc-upd.json"
sed 's/^\(\["compute",0,"fwd","device",1,-1,\[3,-5,0\),-15\]/\1]/' \
  "$TMP/tc.json" >"$TMP/tc-ws.json"
expect_fail "a convolution that does not list its workspace" \
  "tc-ws.json: instruction 6 (COMPUTE fwd, layer 1 'conv1'): its kernel (algorithm default) needs 6912 bytes of workspace, and the instruction lists none" \
  "$OOCSIM" simulate "$TMP/tc-ws.json"
# The update steps with the weight gradients: it comes after every
# backward that writes them (moved before the first backward: refused).
u=$(grep -n '^\["compute",0,"update",' "$TMP/tc.json" | cut -d: -f1)
b=$(grep -n '^\["compute",0,"bwd",' "$TMP/tc.json" | head -n 1 | cut -d: -f1)
awk -v u="$u" -v b="$b" 'NR == u { next }
  NR == b { print "[\"compute\",0,\"update\",\"device\",-1,-1,[-1,-2,-3],[]]," }
  { print }' "$TMP/tc.json" | sed ':a;N;$!ba;s/,\n\]\n}/\n]\n}/' \
  >"$TMP/tc-upd-early.json"
expect_fail "an update before the backward" \
  "tc-upd-early.json: instruction 26 (COMPUTE bwd, layer 6 'fc'): writes the weight gradients in tensor 2 after the optimizer update (instruction 21) stepped with them" \
  "$OOCSIM" simulate "$TMP/tc-upd-early.json"
# A backward reads its output's gradient once every consumer has added
# to it: b0_add's backward moved above b1_conv's, which adds to its
# gradient, is refused (found by fuzzing: simulated).
"$OOCSIM" plan -m "$top_srcdir/tests/data/models/residual.json" -b 4 \
  --hw v100-pcie3 -p incore -o "$TMP/res.json" >/dev/null 2>&1
a=$(grep -n '^\["alloc",0,"none","device",2,12,\[\],\[\]\],$' "$TMP/res.json" | cut -d: -f1)
b=$(grep -n '^\["compute",0,"bwd","device",5,' "$TMP/res.json" | cut -d: -f1)
awk -v a="$a" -v b="$b" 'NR == a || NR == a + 1 { next }
  NR == b { print "[\"alloc\",0,\"none\",\"device\",2,12,[],[]],"
            print "[\"compute\",0,\"bwd\",\"device\",3,-1,[13,-13],[]]," }
  { print }' "$TMP/res.json" >"$TMP/res-early.json"
expect_fail "a backward that reads its gradient before a consumer adds to it" \
  "res-early.json: instruction 41 (COMPUTE bwd, layer 3 'b0_add'): reads its output's gradient, tensor 13, before instruction 46 (COMPUTE bwd, layer 4 'b1_conv') adds to it" \
  "$OOCSIM" simulate "$TMP/res-early.json"
# In an in-place chain every dropout's backward reads and writes the one
# gradient they share (40 readers, 41 writers): d38's backward moved above
# d39's, and d10's moved above all of d39 .. d11's, are refused, naming
# the first writer after the reader (the check bisects each gradient's
# writers by layer; dropout_chain's note).
"$OOCSIM" plan -m "$top_srcdir/tests/data/models/dropout_chain.json" -b 4 \
  --hw v100-pcie3 -p incore -o "$TMP/dc.json" >/dev/null 2>&1
a=$(grep -n '^\["compute",0,"bwd","device",41,' "$TMP/dc.json" | cut -d: -f1)
for m in "40 d38" "12 d10"; do
  set -- $m
  b=$(grep -n "^\[\"compute\",0,\"bwd\",\"device\",$1," "$TMP/dc.json" |
      cut -d: -f1)
  awk -v a="$a" -v b="$b" 'NR == b { next } NR == a { print x } { print }' \
    x="$(sed -n "${b}p" "$TMP/dc.json")" "$TMP/dc.json" >"$TMP/dc-$2.json"
  expect_fail "an in-place chain's backward $2 above its consumer's" \
    "dc-$2.json: instruction 59 (COMPUTE bwd, layer $1 '$2'): reads its output's gradient, tensor 6, before instruction 60 (COMPUTE bwd, layer 41 'd39') adds to it" \
    "$OOCSIM" simulate "$TMP/dc-$2.json"
done
"$OOCSIM" simulate "$TMP/dc.json" >/dev/null 2>&1 &&
  ok "the in-place chain's own plan simulates" ||
  not_ok "the in-place chain's own plan simulates"
# A backward that needs its output reads it as its own forward left it:
# fc1 recomputed into the storage just before the backward of relu1 (in
# place on fc1's output) leaves fc1's version there, which that backward
# reads (no other check sees it: add's backward reads neither input).
"$OOCSIM" plan -m "$top_srcdir/tests/data/models/relu_branch.json" -b 4 \
  --hw v100-pcie3 -p incore -o "$TMP/rb.json" >/dev/null 2>&1
b=$(grep -n '^\["compute",0,"bwd","device",2,' "$TMP/rb.json" | cut -d: -f1)
awk -v b="$b" 'NR == b { print "[\"compute\",0,\"recomp\",\"device\",1,-1,[2,-4,0],[]]," }
  { print }' "$TMP/rb.json" >"$TMP/rb-late.json"
expect_fail "a backward that reads another layer's version of its output" \
  "rb-late.json: instruction 26 (COMPUTE bwd, layer 2 'relu1'): reads its own output in tensor 3, which holds the output of layer 1 'fc1' then" \
  "$OOCSIM" simulate "$TMP/rb-late.json"
# A kernel reads each input as its layer left it: relu1 (in place on
# bn1's output) moved below pool1, which reads relu1's output, is refused
# (found by fuzzing: simulated).
r=$(grep -n '^\["compute",0,"fwd","device",3,' "$TMP/tc.json" | cut -d: -f1)
q=$(grep -n '^\["compute",0,"fwd","device",4,' "$TMP/tc.json" | cut -d: -f1)
awk -v r="$r" -v q="$q" 'NR == r { hold = $0; next } { print }
  NR == q { print hold }' "$TMP/tc.json" >"$TMP/tc-relu.json"
expect_fail "an in-place kernel moved below its reader" \
  "tc-relu.json: instruction 11 (COMPUTE fwd, layer 4 'pool1'): reads the output of layer 3 'relu1' in tensor 5, which holds the output of layer 2 'bn1' then" \
  "$OOCSIM" simulate "$TMP/tc-relu.json"
# ... and none of these checks refuses a planner's plan: every planner's
# plan of a model whose first layer has no parameters (so its output has
# no gradient: conv1's backward computes none, check_plan) and of one
# where a layer reads a storage after an in-place layer rectified it
# (both refused by the first versions of the checks) simulates again, as
# does one whose recomputes at one step must run out of act order
# (pool_branches), one whose recompute runs a dropout and an in-place
# add into it, each kernel listing what it reads (add_recompute), and one
# where a softmax reads what a later dropout rewrites in place, which no
# recompute may then rebuild (inplace_read: checkpoint, checkpoint-dp and
# superneurons planned it; inplace_read_wide, where it pays: pooch and
# joint did), and three with a dead-end branch (dead_end,
# dead_end_inplace: checkpoint-dp rebuilt an output read on both sides of
# the branch too late; dead_end_recompute: twice for one step). (At b16,
# 790, 740, 170, 124, 30 KiB, 20 MiB, 360, 1344 and 6945 KiB lie between
# their working sets and in-core peaks.)
n=0; bad=""
for mm in "pool_first 790KiB" "late_reader 740KiB" "pool_branches 170KiB" \
          "add_recompute 124KiB" "inplace_read 30KiB" \
          "inplace_read_wide 20MiB" "dead_end 360KiB" \
          "dead_end_inplace 1344KiB" "dead_end_recompute 6945KiB"; do
  set -- $mm
  for p in incore naive vdnn lms capacity window checkpoint checkpoint-dp \
           pooch superneurons zero-offload joint; do
    for b in "" "--budget $2 --allocator ideal"; do
      # A plan is refused only for a budget below the step working set
      # (zero-offload's and joint's, with the parameters on the host):
      # any other refusal is a planner's error.
      if ! "$OOCSIM" plan -m "$top_srcdir/tests/data/models/$1.json" -b 16 \
          --hw v100-pcie3 -p $p $b -o "$TMP/rt.json" >/dev/null 2>"$TMP/rt.err"; then
        grep -q "is below the working set of step" "$TMP/rt.err" ||
          bad="$bad; $1 $p $b (plan): $(cat "$TMP/rt.err")"
        continue
      fi
      n=$((n + 1))
      "$OOCSIM" simulate "$TMP/rt.json" >/dev/null 2>"$TMP/rt.err" ||
        bad="$bad; $1 $p $b: $(cat "$TMP/rt.err")"
    done
  done
done
[ $n -ge 80 ] && [ -z "$bad" ] && ok "every planner's plan of pool_first, late_reader, pool_branches, add_recompute, inplace_read and the dead ends simulates ($n)" ||
  not_ok "every planner's plan of pool_first, late_reader, pool_branches, add_recompute, inplace_read and the dead ends simulates ($n plans$bad)"
# SuperNeurons on graphs that are not chains: an output read again by a
# recompute between two of its backward reads (sn_late_read), one read by
# a later segment's layer (sn_cross_segment), one whose input a later
# dropout rewrites in place (inplace_read). Each planned an invalid
# program (an internal error, exit 1); now each plans, and its file
# replays to the same result (out of memory at the first three budgets
# and inplace_read's caching one, feasible with recomputes at the
# others).
for mm in "sn_late_read 9216B pool" "sn_cross_segment 10864B ideal" \
          "sn_cross_segment 12KiB caching" "sn_late_read 9216B ideal" \
          "sn_cross_segment 12KiB ideal" "inplace_read 8KiB ideal" \
          "inplace_read 12KiB pool" "inplace_read 10KiB caching"; do
  set -- $mm
  "$OOCSIM" simulate -m "$top_srcdir/tests/data/models/$1.json" -b 2 \
    --hw v100-pcie3 -p superneurons --budget $2 --allocator $3 --json \
    --no-timing >"$TMP/snx1.json" 2>"$TMP/snx.err" &&
  "$OOCSIM" plan -m "$top_srcdir/tests/data/models/$1.json" -b 2 \
    --hw v100-pcie3 -p superneurons --budget $2 --allocator $3 \
    -o "$TMP/snx.json" >/dev/null 2>>"$TMP/snx.err" &&
  "$OOCSIM" simulate "$TMP/snx.json" --json --no-timing >"$TMP/snx2.json" \
    2>>"$TMP/snx.err" &&
  [ "$(num iteration_s "$TMP/snx1.json")" = "$(num iteration_s "$TMP/snx2.json")" ] &&
  [ "$(num feasible "$TMP/snx1.json")" = "$(num feasible "$TMP/snx2.json")" ] &&
    ok "superneurons plans $1 at $2 ($3), and the plan file replays" ||
    not_ok "superneurons on $1 at $2 ($3): $(cat "$TMP/snx.err")"
done
# pool_branches: checkpoint recomputes c1 and the storage of p1 (whose
# in-place add reads c1) before the same step; ordered by act, the
# storage came first and the lowering refused checkpoint's own plan.
expect_ok "checkpoint plans pool_branches" "$OOCSIM" plan \
  -m "$top_srcdir/tests/data/models/pool_branches.json" -b 16 \
  --hw v100-pcie3 -p checkpoint --budget 170KiB --allocator ideal \
  -o "$TMP/pb.json"
grep -q '"recomp","device",3,' "$TMP/pb.json" &&
  grep -q '"recomp","device",4,' "$TMP/pb.json" &&
  ok "it recomputes c1 and the add that reads it" ||
  not_ok "pool_branches: no recompute of c1 and a1 in checkpoint's plan"
# A workspace holds what its kernels' algorithms need, no more.
sed 's/^\["workspace",1,6912\],/["workspace",1,1099511627776],/' \
  "$TMP/tc.json" >"$TMP/tc-wbig.json"
expect_fail "a workspace larger than its kernels need" \
  "tc-wbig.json: tensor 14 (workspace, layer 1): 1099511627776 bytes, more than the 6912 its kernels' algorithms need" \
  "$OOCSIM" simulate "$TMP/tc-wbig.json"
# Host gradient and optimizer-state tensors, after the table, are one
# of each per layer the plan steps on the CPU.
sed '24s/^\["workspace",1,6912\]$/["workspace",1,6912],\n["optstate",6,2600]/' \
  "$TMP/tc.json" >"$TMP/tc-os.json"
expect_fail "optimizer state for a layer stepped on the device" \
  "tc-os.json: tensor 16: optstate of layer 6 ('fc'), a layer whose optimizer step the program does not run on the CPU" \
  "$OOCSIM" simulate "$TMP/tc-os.json"
# ... and only its own layer's: the pool lent conv1's scratch.
sed -e '39s/\[5,-7\]/[5,-7,-15]/' \
  -e '39i ["alloc",0,"none","device",1,14,[],[]],' \
  -e '39a ["free",0,"none","device",1,14,[],[]],' \
  "$TMP/tc.json" >"$TMP/tc-wl.json"
expect_fail "a kernel that lists another layer's workspace" \
  "tc-wl.json: instruction 13 (COMPUTE fwd, layer 4 'pool1'): lists tensor 14, the workspace of layer 1, not one of its own" \
  "$OOCSIM" simulate "$TMP/tc-wl.json"
# The optimizer steps update every parameter tensor once: an update
# that skips some (priced as less work) or lists one twice is refused,
# and so is a CPU step dropped from an offloading plan (its host
# tensors then belong to no CPU step).
sed 's/^\["compute",0,"update","device",-1,-1,\[-1,-2,-3\]/["compute",0,"update","device",-1,-1,[]/' \
  "$TMP/tc.json" >"$TMP/tc-u0.json"
expect_fail "an update that updates nothing" \
  "tc-u0.json: the timed program's optimizer steps update tensor 0 (param of layer 1 'conv1') 0 times, not once" \
  "$OOCSIM" simulate "$TMP/tc-u0.json"
sed 's/^\["compute",0,"update","device",-1,-1,\[-1,-2,-3\]/["compute",0,"update","device",-1,-1,[-1,-2,-3,-3]/' \
  "$TMP/tc.json" >"$TMP/tc-u2.json"
expect_fail "an update that updates a tensor twice" \
  "tc-u2.json: the timed program's optimizer steps update tensor 2 (param of layer 6 'fc') 2 times, not once" \
  "$OOCSIM" simulate "$TMP/tc-u2.json"
l=$(grep -n '^\["host",3,"update","device",1,' "$TMP/zo.json" | cut -d: -f1)
if [ -n "$l" ]; then
  sed "${l}d" "$TMP/zo.json" >"$TMP/zo-host.json"
  sed 's/^\["optstate",6,2600\]$/["optstate",6,2600],\n["optstate",6,2600]/' \
    "$TMP/zo.json" >"$TMP/zo-os2.json"
  expect_fail "a second optimizer state of a layer" \
    "zo-os2.json: tensor 22: optstate of layer 6 ('fc'), a second one" \
    "$OOCSIM" simulate "$TMP/zo-os2.json"
  # (appended after the last instruction: no wait moves)
  l=$(grep -n '^\["' "$TMP/zo.json" | tail -n 1 | cut -d: -f1)
  sed "${l}s/\$/,\\
[\"alloc\",0,\"none\",\"device\",6,21,[],[]],\\
[\"free\",0,\"none\",\"device\",6,21,[],[]]/" "$TMP/zo.json" >"$TMP/zo-osd.json"
  expect_fail "a CPU step's optimizer state also on the device" \
    "(ALLOC) puts tensor 21 (optstate of layer 6) on the device; a CPU step's optimizer state lives on the host" \
    "$OOCSIM" simulate "$TMP/zo-osd.json"
  expect_fail "an offloading plan without a layer's CPU step" \
    "zo-host.json: tensor 16: wgrad of layer 1 ('conv1'), a layer whose optimizer step the program does not run on the CPU" \
    "$OOCSIM" simulate "$TMP/zo-host.json"
else
  not_ok "zero-offload steps conv1 of tiny_cnn on the CPU at 30 KiB"
fi
# A COMPUTE lists as written only what its kernel writes: a written arg
# needs no valid data, so listing a read that way let a plan drop the
# swap-in that brings it back (found by fuzzing: simulated, 0.4 us and
# 4 KiB of H2D cheaper) or the recompute that rebuilds it.
"$OOCSIM" plan -m "$TC" -b 4 --hw v100-pcie3 -p vdnn --budget 28KiB \
  --allocator ideal -o "$TMP/v28.json" >/dev/null 2>&1
l=$(grep -n '^\["h2d",1,"none","device",1,4,\[\],\[\]\],$' "$TMP/v28.json" | cut -d: -f1)
c=$(grep -n '^\["compute",0,"bwd","device",2,-1,\[4,-2,10,-10\],\[46\]\],$' \
  "$TMP/v28.json" | cut -d: -f1)
if [ -n "$l" ] && [ -n "$c" ]; then
  sed -e "${c}s/\[4,-2,10,-10\],\[46\]/[-5,-2,10,-10],[45]/" -e "${l}d" \
    "$TMP/v28.json" >"$TMP/v28-noin.json"
  expect_fail "a swap-in dropped, its reader listing the tensor as written" \
    "v28-noin.json: instruction 49 (COMPUTE bwd, layer 2 'bn1'): lists tensor 4 (act of layer 1 'conv1') as written, which its kernel does not write" \
    "$OOCSIM" simulate "$TMP/v28-noin.json"
else
  not_ok "vdnn swaps conv1's output of tiny_cnn in for bn1's backward at 28 KiB"
fi
sed 's/^\["compute",0,"recomp","device",2,-1,\[4,1,-6\],\[\]\]/["compute",0,"recomp","device",5,-1,[-6],[]]/' \
  "$TMP/sn.json" >"$TMP/sn-flat.json"
if ! cmp -s "$TMP/sn.json" "$TMP/sn-flat.json"; then
  expect_fail "a recompute replaced by an alias's that claims its output" \
    "sn-flat.json: instruction 27 (COMPUTE recomp, layer 5 'flat'): lists tensor 5 (act of layer 2 'bn1') as written, which its kernel does not write" \
    "$OOCSIM" simulate "$TMP/sn-flat.json" --budget 1MiB
else
  not_ok "superneurons recomputes bn1 of tiny_cnn at 30 KiB"
fi
# A profile override out of range names where it was set: the plan's
# scenario.hw_set, not a --hw-set the user never gave.
"$OOCSIM" plan -m "$MLP" -b 4 --hw v100-pcie3 -p incore \
  --hw-set link.h2d_GBps=16 -o "$TMP/hs.json" >/dev/null 2>&1
sed 's/"link.h2d_GBps":[ ]*"16"/"link.h2d_GBps": "0"/' "$TMP/hs.json" >"$TMP/hs0.json"
expect_fail "a plan's hw_set out of range" \
  "hs0.json: hwprofiles/v100-pcie3.json: link.h2d_GBps: must be > 0 (got 0, set by scenario.hw_set)" \
  "$OOCSIM" simulate "$TMP/hs0.json"
sed 's/"n_layers":[[:space:]]*5,/"n_layers": 2000000000,/' "$TMP/mlp.json" >"$TMP/nl2.json"
expect_fail "a plan for an absurd number of layers" \
  "oocsim: $TMP/nl2.json: n_layers: 2000000000 is out of range [1, 1048576]" \
  "$OOCSIM" simulate "$TMP/nl2.json"
sed 's/"budget_bytes":[0-9]*/"budget_bytes":9007199254740991/' "$TMP/mlp.json" >"$TMP/bbig.json"
expect_fail "a plan for a budget past the profile" \
  "oocsim: $TMP/bbig.json: scenario.budget_bytes: budget 8192.00 TiB exceeds the 16.00 GiB of profile 'v100-pcie3'" \
  "$OOCSIM" simulate "$TMP/bbig.json"
sed 's/"budget_bytes":[0-9]*/"budget_bytes":0/' "$TMP/mlp.json" >"$TMP/b0.json"
expect_fail "a plan for budget 0" "b0.json: scenario.budget_bytes: 0 is out of range" \
  "$OOCSIM" simulate "$TMP/b0.json"
# An integer too large is out of range, not "not an integer" (2^62).
sed 's/"budget_bytes":[0-9]*/"budget_bytes":4611686018427387904/' \
  "$TMP/mlp.json" >"$TMP/b62.json"
expect_fail "a plan for budget 2^62" \
  "oocsim: $TMP/b62.json: scenario.budget_bytes: a number past 2^53 - 1 \
(read as 4611686018427387904) is out of range [1, 9007199254740991]" \
  "$OOCSIM" simulate "$TMP/b62.json"
sed 's/"budget_bytes":[0-9]*/"budget_bytes":1.5/' "$TMP/mlp.json" \
  >"$TMP/bfrac.json"
expect_fail "a plan for budget 1.5" \
  "oocsim: $TMP/bfrac.json: scenario.budget_bytes: must be an integer" \
  "$OOCSIM" simulate "$TMP/bfrac.json"
sed '/"update"/d' "$TMP/mlp.json" | sed ':a;N;$!ba;s/,\n\]/\n]/' >"$TMP/noupd.json"
expect_fail "a plan without its update" "noupd.json: the timed program has no optimizer update" \
  "$OOCSIM" simulate "$TMP/noupd.json"
# A tensor's bytes edited: a replay would write past it.
sed '0,/\["act",\([0-9-]*\),[0-9]*\]/s//["act",\1,1]/' "$TMP/mlp.json" >"$TMP/small.json"
expect_fail "a tensor smaller than the model's" "small.json: tensor " "$OOCSIM" simulate "$TMP/small.json"
grep -q ": 1 bytes, the model needs " "$TMP/err" && ok "the message names the bytes" ||
  not_ok "the message names the bytes: $(cat "$TMP/err")"
expect_fail "a plan key twice" "dupv.json: key 'version' given twice" "$OOCSIM" simulate "$TMP/dupv.json"

# trace and memory CSV
expect_fail "an output that cannot be written leaves none" \
  "--mem-csv: cannot write '$TMP/no/m.csv': No such file or directory" \
  "$OOCSIM" simulate "$TMP/mlp.json" --trace "$TMP/first.json" --mem-csv "$TMP/no/m.csv"
[ ! -e "$TMP/first.json" ] && ok "no trace left behind" || not_ok "a trace was left behind"
expect_fail "two outputs, one file" "--trace and --mem-csv name the same file" \
  "$OOCSIM" simulate "$TMP/mlp.json" --trace "$TMP/same" --mem-csv "$TMP/same"
# The guard compares files, not strings: another spelling of the path, a
# symbolic link to it, the plan file read, a model file read.
mkdir -p "$TMP/o"
expect_fail "one new file spelt two ways" \
  "oocsim: --trace and --mem-csv name the same file '$TMP/./o//same'" \
  "$OOCSIM" simulate "$TMP/mlp.json" --trace "$TMP/o/same" \
  --mem-csv "$TMP/./o//same"
: >"$TMP/o/real"
ln -s "$TMP/o/real" "$TMP/o/link"
expect_fail "a link to an output" \
  "oocsim: --timeline-csv and --mem-csv name the same file '$TMP/o/link'" \
  "$OOCSIM" simulate "$TMP/mlp.json" --timeline-csv "$TMP/o/real" \
  --mem-csv "$TMP/o/link"
[ ! -s "$TMP/o/real" ] && ok "the linked file is untouched" ||
  not_ok "the linked file was written"
expect_fail "an output over the plan file read" \
  "oocsim: the plan file and --trace name the same file '$TMP/o/../mlp.json'" \
  "$OOCSIM" simulate "$TMP/mlp.json" --trace "$TMP/o/../mlp.json"
cp "$top_srcdir/tests/data/models/tiny_cnn.json" "$TMP/o/m.json"
expect_fail "plan -o over its model file" \
  "oocsim: -m and -o name the same file '$TMP/o/./m.json'" \
  "$OOCSIM" plan -m "$TMP/o/m.json" -b 1 --hw v100-pcie3 -p incore \
  -o "$TMP/o/./m.json"
expect_fail "simulate --trace over its model file" \
  "oocsim: -m and --trace name the same file '$TMP/o/./m.json'" \
  "$OOCSIM" simulate -m "$TMP/o/m.json" -b 1 --hw v100-pcie3 -p incore \
  --trace "$TMP/o/./m.json"
cmp -s "$top_srcdir/tests/data/models/tiny_cnn.json" "$TMP/o/m.json" &&
  ok "the model file is untouched" || not_ok "the model file was written"
# ... and named by its zoo name, or by a plan file, in a data directory
# of its own (here a copy): outputs over the files the names resolve to
# used to replace them.
DD="$TMP/dd"
mkdir -p "$DD/models" "$DD/hwprofiles"
cp "$top_srcdir/tests/data/models/tiny_cnn.json" "$DD/models/tiny.json"
cp "$top_srcdir/hwprofiles/v100-pcie3.json" "$DD/hwprofiles/v100-pcie3.json"
expect_fail "plan -o over the zoo model it names" \
  "oocsim: -m and -o name the same file '$DD/models/tiny.json'" \
  "$OOCSIM" --datadir "$DD" plan -m tiny -b 1 --hw v100-pcie3 -p incore \
  -o "$DD/models/tiny.json"
expect_fail "simulate --mem-csv over the profile it names" \
  "oocsim: --hw and --mem-csv name the same file '$DD/hwprofiles/v100-pcie3.json'" \
  "$OOCSIM" --datadir "$DD" simulate -m tiny -b 1 --hw v100-pcie3 -p incore \
  --mem-csv "$DD/hwprofiles/v100-pcie3.json"
expect_ok "a plan of the zoo model" "$OOCSIM" --datadir "$DD" plan -m tiny \
  -b 1 --hw v100-pcie3 -p incore -o "$TMP/o/tiny-plan.json"
expect_fail "simulate PLAN --trace over the plan's model" \
  "oocsim: the plan's model and --trace name the same file '$DD/models/tiny.json'" \
  "$OOCSIM" --datadir "$DD" simulate "$TMP/o/tiny-plan.json" \
  --trace "$DD/models/tiny.json"
expect_fail "simulate PLAN --timeline-csv over the plan's profile" \
  "oocsim: the plan's profile and --timeline-csv name the same file '$DD/hwprofiles/v100-pcie3.json'" \
  "$OOCSIM" --datadir "$DD" simulate "$TMP/o/tiny-plan.json" \
  --timeline-csv "$DD/hwprofiles/v100-pcie3.json"
# (exec checks its backend first: without oneDNN there is no cpu one.)
if "$OOCSIM" --version | grep -q '^executor backends: .*cpu'; then
  expect_fail "exec --trace over the plan's model" \
    "oocsim: the plan's model and --trace name the same file '$DD/models/tiny.json'" \
    "$OOCSIM" --datadir "$DD" exec "$TMP/o/tiny-plan.json" --backend cpu \
    --trace "$DD/models/tiny.json"
fi
expect_fail "calibrate -o over its base profile" \
  "oocsim: --base and -o name the same file '$DD/hwprofiles/v100-pcie3.json'" \
  "$OOCSIM" --datadir "$DD" calibrate --backend cpu -m tiny -b 1 \
  --base v100-pcie3 -o "$DD/hwprofiles/v100-pcie3.json"
expect_fail "calibrate -o over its model" \
  "oocsim: -m and -o name the same file '$DD/models/tiny.json'" \
  "$OOCSIM" --datadir "$DD" calibrate --backend cpu -m tiny -b 1 \
  --base v100-pcie3 -o "$DD/models/tiny.json"
cmp -s "$top_srcdir/tests/data/models/tiny_cnn.json" "$DD/models/tiny.json" &&
  cmp -s "$top_srcdir/hwprofiles/v100-pcie3.json" "$DD/hwprofiles/v100-pcie3.json" &&
  ok "the zoo model and profile are untouched" || not_ok "a data file was written"
expect_fail "plot: the data file over the input" \
  "oocsim: plot: --in and the data file of -o name the same file \
'$TMP/o/./in.dat'" \
  "$OOCSIM" plot memory --in "$TMP/o/in.dat" -o "$TMP/o/./in.png"
expect_fail "import -o over its input" \
  "oocsim: import: MODEL.onnx and -o name the same file '$TMP/o/./m.json'" \
  "$OOCSIM" import "$TMP/o/m.json" -o "$TMP/o/./m.json"
expect_ok "simulate --trace --mem-csv" "$OOCSIM" simulate -m resnet50 -b 256 \
  --hw v100-pcie3 -p vdnn --trace "$TMP/trace.json" --mem-csv "$TMP/mem.csv"
grep -q '"traceEvents"' "$TMP/trace.json" && ok "trace has traceEvents" || not_ok "trace has traceEvents"
for lane in compute H2D D2H; do
  grep -q "\"args\":{\"name\":\"$lane\"}" "$TMP/trace.json" && ok "trace lane $lane" || not_ok "trace lane $lane"
done
grep -q '"name":"fwd conv1"' "$TMP/trace.json" && ok "trace op fwd conv1" || not_ok "trace op fwd conv1"
grep -q '"name":"bwd ' "$TMP/trace.json" && ok "trace backward ops" || not_ok "trace backward ops"
grep -q '"cat":"d2h"' "$TMP/trace.json" && ok "trace d2h copies" || not_ok "trace d2h copies"
grep -q '"ph":"C"' "$TMP/trace.json" && ok "trace memory counter" || not_ok "trace memory counter"
if command -v python3 >/dev/null 2>&1; then
  python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert len(d["traceEvents"]) > 100' \
    "$TMP/trace.json" && ok "trace is valid JSON" || not_ok "trace is valid JSON"
fi
[ "$(head -n 1 "$TMP/mem.csv")" = "time_s,allocated_bytes,reserved_bytes" ] &&
  ok "mem csv header" || not_ok "mem csv header"
[ "$(wc -l <"$TMP/mem.csv")" -gt 10 ] && ok "mem csv rows" || not_ok "mem csv rows"
awk -F, 'NR > 1 && ($3 + 0 < $2 + 0) { bad = 1 } END { exit bad }' "$TMP/mem.csv" &&
  ok "mem csv reserved >= allocated" || not_ok "mem csv reserved >= allocated"

# --timeline-csv: the same timeline CSV `oocsim report` writes for its
# Gantt plot, stalls on the compute lane with their cause adding up to the
# summary's stall_s; `oocsim plot gantt` draws it.
expect_ok "simulate --timeline-csv" "$OOCSIM" simulate -m alexnet -b 128 \
  --hw v100-pcie3 -p vdnn --json --timeline-csv "$TMP/tl.csv"
cp "$TMP/out" "$TMP/tl.json"
[ "$(head -n 1 "$TMP/tl.csv")" = "lane,start_s,end_s,phase,layer,cause" ] &&
  grep -q '^compute,[0-9.]*,[0-9.]*,fwd,conv1,$' "$TMP/tl.csv" &&
  ok "timeline csv header and rows" || not_ok "timeline csv: $(head -n 3 "$TMP/tl.csv")"
for c in swapin swapout; do
  want=$(sed -n "s/^[[:space:]]*\"$c\":[[:space:]]*\([^,]*\),*$/\1/p" "$TMP/tl.json")
  got=$(awk -F, -v c=$c '$1 == "compute" && $4 == "stall" && $6 == c { s += $3 - $2 } END { printf "%.9f", s }' "$TMP/tl.csv")
  awk -v a="$got" -v b="$want" 'BEGIN { d = a - b; exit !(b > 0 && d < 1e-8 && d > -1e-8) }' &&
    ok "timeline $c stalls add up to stall_s ($got s)" || not_ok "timeline $c stalls $got s, summary $want"
done
"$OOCSIM" report -m alexnet -b 128 --hw v100-pcie3 -p vdnn --no-maxbatch -j 1 \
  -o "$TMP/rep" >/dev/null 2>&1
cmp -s "$TMP/tl.csv" "$TMP/rep/data/timeline.csv" &&
  ok "simulate --timeline-csv equals the report's data/timeline.csv" ||
  not_ok "timeline differs from the report's: $(diff "$TMP/tl.csv" "$TMP/rep/data/timeline.csv" | head -n 4)"
if "$OOCSIM" plot gantt --in "$TMP/tl.csv" -o "$TMP/tl.png" 2>"$TMP/perr"; then
  [ "$(tail -c 8 "$TMP/tl.png" | head -c 4)" = "IEND" ] && ok "plot gantt of simulate's timeline" || not_ok "gantt PNG cut short"
elif grep -q "gnuplot is missing" "$TMP/perr"; then
  echo "# gnuplot not found: gantt drawing skipped"
else
  not_ok "plot gantt of simulate's timeline: $(cat "$TMP/perr")"
fi
expect_fail "--timeline-csv into a missing directory" "--timeline-csv: cannot write '$TMP/nodir/tl.csv': No such file or directory" \
  "$OOCSIM" simulate -m alexnet -b 8 --hw v100-pcie3 -p incore --timeline-csv "$TMP/nodir/tl.csv"

# an infeasible plan is a result: exit 0, oom object, null iteration
expect_ok "infeasible incore" "$OOCSIM" simulate -m resnet50 -b 1024 --hw v100-pcie3 -p incore --json
[ "$(num feasible "$TMP/out")" = false ] && ok "b1024 incore infeasible on 16 GB" || not_ok "b1024 incore infeasible on 16 GB"
[ "$(num iteration_s "$TMP/out")" = null ] && ok "infeasible iteration_s null" || not_ok "infeasible iteration_s null"
for f in op time_s requested_bytes live_bytes reserved_bytes largest_free_bytes reason; do
  grep -q "\"$f\":" "$TMP/out" && ok "oom has $f" || not_ok "oom has $f"
done

# compare: every planner, sorted, infeasible last
expect_ok "compare all" "$OOCSIM" compare -m resnet50 -b 512 --hw v100-nvlink2 -p all --format csv
# The CSV has the columns of docs/output-schema.md: read them by name.
H='NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i; next }'
for p in incore naive vdnn lms capacity window; do
  awk -F, "$H"' { print $c["planner"] }' "$TMP/out" | grep -qx "$p" && ok "compare lists $p" || not_ok "compare lists $p"
done
awk -F, "$H"' { if ($c["feasible"] == 1) { if (seen_inf || $c["iteration_s"] + 0 < last) bad = 1; last = $c["iteration_s"] + 0 } else seen_inf = 1 }
         END { exit bad }' "$TMP/out" && ok "compare sorted, infeasible last" || not_ok "compare sorted, infeasible last"
awk -F, "$H"' $c["feasible"] == 1 && $c["vs_lower_bound"] + 0 < 1 - 1e-9 { bad = 1 } END { exit bad }' "$TMP/out" &&
  ok "no feasible plan beats the lower bound" || not_ok "no feasible plan beats the lower bound"
# Infeasible rows leave the times empty: nothing for pandas to average.
awk -F, "$H"' $c["feasible"] == 0 && ($c["iteration_s"] != "" || $c["samples_per_s"] != "" || $c["slowdown"] != "") { bad = 1 }
         END { exit bad }' "$TMP/out" && ok "compare csv: infeasible times empty" || not_ok "compare csv: infeasible times not empty"
head -n 1 "$TMP/out" | grep -q '^model,set,hw,allocator,budget,planner,batch,dtype,optimizer,budget_bytes,feasible,' &&
  ok "compare csv has the sweep's identity columns" || not_ok "compare csv header: $(head -n 1 "$TMP/out" | cut -c1-120)"
"$OOCSIM" compare -m resnet50 -b 512 --hw v100-pcie3 --allocator va --format csv >"$TMP/out" 2>&1
awk -F, "$H"' $c["feasible"] == 1 && $c["vs_lower_bound"] + 0 < 1 - 1e-9 { bad = 1 } END { exit bad }' "$TMP/out" &&
  [ "$(awk -F, "$H"' $c["feasible"] == 1' "$TMP/out" | wc -l)" -ge 3 ] &&
  ok "no feasible plan beats the lower bound on PCIe 3" || not_ok "no feasible plan beats the lower bound on PCIe 3"
expect_ok "compare json" "$OOCSIM" compare -m "$MLP" -b 8 --hw v100-pcie3 -p incore,naive --format json
[ "$(head -c 1 "$TMP/out")" = "[" ] && ok "compare json is an array" || not_ok "compare json is an array"
[ "$(grep -c '"lower_bound_s":' "$TMP/out")" = 2 ] && ok "compare json has 2 summaries" || not_ok "compare json has 2 summaries"
expect_ok "compare md" "$OOCSIM" compare -m "$MLP" -b 8 --hw v100-pcie3 -p incore --format md
grep -q '^| incore | ' "$TMP/out" && ok "compare md row" || not_ok "compare md row"
# An out-of-memory reason naming a layer called "<i>fc1": its '<' is
# text in the Markdown table (31 MiB fits the working set, not the plan).
sed 's/"fc1"/"<i>fc1"/; s/"name": "relu1", "op": "relu"/&, "in": "<i>fc1"/' "$MLP" >"$TMP/lt.json"
expect_ok "compare md, OOM at a layer named with markup" \
  "$OOCSIM" compare -m "$TMP/lt.json" -b 200000 --hw v100-pcie3 -p incore --budget 31MiB --format md
grep -q '^| incore | - | .* | OOM at fwd &lt;i>fc1: caching: no free block of 6.10 MiB; ' "$TMP/out" &&
  ok "compare md writes '<' of a reason as text" || not_ok "compare md: $(grep incore "$TMP/out")"

# maxbatch
expect_ok "maxbatch json" "$OOCSIM" maxbatch -m resnet50 --hw v100-pcie3 -p incore --json
for f in model hw planner allocator budget_bytes max_batch at_max; do
  grep -q "^	\"$f\":" "$TMP/out" && ok "maxbatch has $f" || not_ok "maxbatch has $f"
done
mb=$(num max_batch "$TMP/out")
# resnet50 fp32 on 16 GB trains in core at 256 but not at 1024 (above)
le 64 "$mb" && le "$mb" 1023 && ok "maxbatch $mb in [64, 1023]" || not_ok "maxbatch $mb in [64, 1023]"
b1=$(mb=$mb; echo $((mb + 1)))
"$OOCSIM" simulate -m resnet50 -b "$mb" --hw v100-pcie3 -p incore --json >"$TMP/at" 2>&1
"$OOCSIM" simulate -m resnet50 -b "$b1" --hw v100-pcie3 -p incore --json >"$TMP/above" 2>&1
[ "$(num feasible "$TMP/at")" = true ] && ! grep -q '"feasible":	true' "$TMP/above" &&
  ok "maxbatch is the edge ($mb fits, $b1 does not)" || not_ok "maxbatch is the edge ($mb fits, $b1 does not)"
grep -q '^	"fails_below":	null' "$TMP/out" && ok "maxbatch incore: monotone" || not_ok "maxbatch incore: monotone"
# checkpoint-dp's feasibility on resnet50 on v100-nvlink2 is not monotone
# in the batch: 640 runs out of memory, 700 fits. The look-ahead past 640
# finds 644 and goes on; the answer fits, the next batch does not, and the
# hole below is reported.
expect_ok "maxbatch: not monotone" "$OOCSIM" maxbatch -m resnet50 --hw v100-nvlink2 -p checkpoint-dp --json
mb=$(num max_batch "$TMP/out"); b1=$((mb + 1))
[ "$(num fails_below "$TMP/out")" = 640 ] && le 700 "$mb" &&
  ok "maxbatch past the hole at 640 ($mb)" || not_ok "maxbatch past the hole at 640 ($mb)"
"$OOCSIM" simulate -m resnet50 -b 640 --hw v100-nvlink2 -p checkpoint-dp --json >"$TMP/hole" 2>&1
"$OOCSIM" simulate -m resnet50 -b "$b1" --hw v100-nvlink2 -p checkpoint-dp --json >"$TMP/above" 2>&1
[ "$(num feasible "$TMP/hole")" = false ] && [ "$(num feasible "$TMP/above")" = false ] &&
  ok "maxbatch: 640 and $b1 do not fit" || not_ok "maxbatch: 640 and $b1 do not fit"
expect_ok "maxbatch: not monotone, text" "$OOCSIM" maxbatch -m resnet50 --hw v100-nvlink2 -p checkpoint-dp
grep -q "^batch 640 does not fit either, though $mb does: this planner's feasibility$" "$TMP/out" &&
  ok "maxbatch text names the hole" || not_ok "maxbatch text names the hole"

# budget semantics (docs/lower-bound.md, "Budget"): the profile's own memory
# below the largest working set is an INFEASIBLE result naming the step and
# the shortfall; a --budget the user chose below it is bad input.
expect_ok "default budget below the working set" \
  "$OOCSIM" simulate -m resnet50 -b 4096 --hw v100-pcie3 -p vdnn --json
[ "$(num feasible "$TMP/out")" = false ] && ok "b4096: infeasible" || not_ok "b4096: infeasible"
[ "$(num op "$TMP/out")" = '"bwd pool1"' ] && ok "b4096: oom names the step" || not_ok "b4096: oom names the step"
# step: pool1's input (64x112x112x4 B, with bn1's 512 B of statistics in
# its storage), its output (64x56x56x4 B) with the int64 indices (8 B per
# output element), the output's gradient and the input's: 9633792 B per
# sample, 4096 x 9633792 + 512 B = 36.75 GiB (res2_2_bn3's 3 x
# 4096x256x56x56x4 B is 512 B less); persistent 2772935136 B; budget
# 15.50 GiB leaves 13870063136 B: 23.83 GiB short
[ "$(num requested_bytes "$TMP/out")" = 39460012544 ] && [ "$(num live_bytes "$TMP/out")" = 2772935136 ] &&
  [ "$(num largest_free_bytes "$TMP/out")" = 13870063136 ] &&
  ok "b4096: oom figures" || not_ok "b4096: oom figures"
grep -q '"reason":[[:space:]]*"working set 39.33 GiB (persistent 2.58 GiB + step 36.75 GiB) exceeds the budget by 23.83 GiB: no plan can fit"' "$TMP/out" &&
  ok "b4096: oom reason" || not_ok "b4096: oom reason"
expect_ok "compare: default budget below the working set" \
  "$OOCSIM" compare -m resnet50 -b 4096 --hw v100-pcie3 -p incore,window --format csv
[ "$(awk -F, "$H"' $c["feasible"] == 0' "$TMP/out" | wc -l)" = 2 ] && ok "compare: both infeasible" || not_ok "compare: both infeasible"
expect_fail "plan: nothing to write" "no plan to write: step 'bwd pool1': working set 39.33 GiB" \
  "$OOCSIM" plan -m resnet50 -b 4096 --hw v100-pcie3 -p incore -o "$TMP/none.json"
[ ! -e "$TMP/none.json" ] && ok "plan: no file written" || not_ok "plan: no file written"
expect_fail "--budget below the working set" \
  "--budget: budget 4.00 GiB is below the working set of step 'bwd pool1' (persistent 2.58 GiB + 36.75 GiB)" \
  "$OOCSIM" simulate -m resnet50 -b 4096 --hw v100-pcie3 -p incore --budget 4GiB
expect_fail "compare --budget below the working set" "budget 1.00 MiB is below the working set" \
  "$OOCSIM" compare -m resnet50 -b 64 --hw v100-pcie3 --budget 1MiB
expect_fail "plan.json --budget below the working set" "mlp.json: --budget: budget 1.00 KiB is below the working set" \
  "$OOCSIM" simulate "$TMP/mlp.json" --budget 1KiB
"$OOCSIM" plan -m "$MLP" -b 8 --hw v100-pcie3 -p vdnn -o "$TMP/pb.json" >/dev/null 2>&1
sed 's/"budget_bytes":[0-9]*/"budget_bytes":1024/' "$TMP/pb.json" >"$TMP/pb1k.json"
expect_fail "plan file budget below the working set" "pb1k.json: scenario.budget_bytes: budget 1.00 KiB is below the working set" \
  "$OOCSIM" simulate "$TMP/pb1k.json"
# An offload planner's plan is checked against the working set with the
# parameters on the host, as its planning was, whether or not its program
# offloads: joint may keep every layer on the device, and `plan` then
# printed INFEASIBLE, which the replay repeats (it refused the file). At
# b16 inplace_read's working set is 25.84 KiB, 25.50 KiB with the
# parameters on the host; 26316 B (25.70 KiB) lies between.
"$OOCSIM" plan -m "$top_srcdir/tests/data/models/inplace_read.json" -b 16 \
  --hw v100-pcie3 -p incore -o "$TMP/ir.json" >/dev/null 2>&1
sed -e 's/"budget_bytes":[[:space:]]*[0-9]*/"budget_bytes": 26316/' \
    -e 's/"planner":[[:space:]]*"incore"/"planner": "joint"/' \
  "$TMP/ir.json" >"$TMP/irj.json"
expect_ok "an offload planner's plan file between the working sets" \
  "$OOCSIM" simulate "$TMP/irj.json" --json
[ "$(num feasible "$TMP/out")" = false ] &&
  ok "... replays as INFEASIBLE" || not_ok "... replays as INFEASIBLE: $(cat "$TMP/out")"
sed 's/"planner":[[:space:]]*"joint"/"planner": "incore"/' "$TMP/irj.json" \
  >"$TMP/iri.json"
expect_fail "... another planner's there is refused" \
  "iri.json: scenario.budget_bytes: budget 25.70 KiB is below the working set of step 'bwd l1' (persistent 5.84 KiB + 20.00 KiB)" \
  "$OOCSIM" simulate "$TMP/iri.json"
# a --budget below batch 1 is bad input, as in simulate; a device too small
# for batch 1 is a result: max batch 0
expect_fail "maxbatch --budget below batch 1" "oocsim: --budget: budget 1.00 MiB is below the working set of step 'bwd pool1'" \
  "$OOCSIM" maxbatch -m resnet50 --hw v100-pcie3 -p incore --budget 1MiB --json
expect_ok "maxbatch on a device below batch 1" "$OOCSIM" maxbatch -m resnet50 --hw v100-pcie3 -p incore \
  --hw-set memory.total_GiB=0.5 --hw-set memory.usable_GiB=0.25 --json
[ "$(num max_batch "$TMP/out")" = 0 ] && [ "$(num at_max "$TMP/out")" = null ] &&
  [ "$(tr -d ' \n\t' <"$TMP/out" | grep -o '"fails_at":{"batch":1,"limit":"working_set"')" ] &&
  ok "maxbatch: 0 when batch 1 does not fit" || not_ok "maxbatch: 0 when batch 1 does not fit: $(cat "$TMP/out")"

# more bad input: plan files and profiles
"$OOCSIM" plan -m resnet50 -b 8 --hw v100-pcie3 -p incore -o "$TMP/r8.json" >/dev/null 2>&1
sed 's/"model":[[:space:]]*"resnet50"/"model": "vgg16"/' "$TMP/r8.json" >"$TMP/vgg.json"
expect_fail "plan for another zoo model" "different model" "$OOCSIM" simulate "$TMP/vgg.json"
sed 's/^"version":[[:space:]]*2,/"version": 99,/' "$TMP/r8.json" >"$TMP/v99.json"
expect_fail "plan.json of an unknown format version" "v99.json" "$OOCSIM" simulate "$TMP/v99.json"
: >"$TMP/empty.json"
expect_fail "empty plan.json" "empty.json" "$OOCSIM" simulate "$TMP/empty.json"
expect_fail "unknown allocator on a plan.json" "--allocator: unknown allocator 'buddy'" \
  "$OOCSIM" simulate "$TMP/r8.json" --allocator buddy
expect_fail "unknown planner (one line, the valid names)" "unknown planner 'magic' (valid: incore, naive" \
  "$OOCSIM" simulate -m "$MLP" -b 4 --hw v100-pcie3 -p magic
sed 's/"h2d_GBps":[[:space:]]*[0-9.]*/"h2d_GBps": 0/' "$top_srcdir/hwprofiles/v100-pcie3.json" >"$TMP/zero.json"
expect_fail "profile with zero bandwidth" "link.h2d_GBps: must be > 0" \
  "$OOCSIM" simulate -m "$MLP" -b 4 --hw "$TMP/zero.json" -p incore
sed 's/"d2h_GBps":[[:space:]]*[0-9.]*/"d2h_GBps": -12/' "$top_srcdir/hwprofiles/v100-pcie3.json" >"$TMP/neg.json"
expect_fail "profile with negative bandwidth" "link.d2h_GBps: must be > 0" \
  "$OOCSIM" simulate -m "$MLP" -b 4 --hw "$TMP/neg.json" -p incore
expect_fail "--hw-set zero bandwidth" "link.h2d_GBps: must be > 0" \
  "$OOCSIM" simulate -m "$MLP" -b 4 --hw v100-pcie3 --hw-set link.h2d_GBps=0 -p incore

# an allocator spec with options works wherever a name does, and outputs
# name it as given
AL=caching:expandable_segments
expect_ok "simulate --allocator $AL" "$OOCSIM" simulate -m resnet50 -b 256 --hw v100-pcie3 -p window --allocator $AL --json
[ "$(num allocator "$TMP/out")" = "\"$AL\"" ] && [ "$(num feasible "$TMP/out")" = true ] &&
  ok "simulate names $AL" || not_ok "simulate names $AL"
expect_ok "maxbatch --allocator $AL" "$OOCSIM" maxbatch -m alexnet --hw v100-pcie3 -p incore --allocator $AL --json
[ "$(num allocator "$TMP/out")" = "\"$AL\"" ] && ok "maxbatch names $AL" || not_ok "maxbatch names $AL"
expect_ok "compare --allocator $AL" "$OOCSIM" compare -m alexnet -b 64 --hw v100-pcie3 -p incore,vdnn --allocator $AL --format json
[ "$(grep -c "\"allocator\":[[:space:]]*\"$AL\"" "$TMP/out")" = 2 ] &&
  ok "compare names $AL" || not_ok "compare names $AL"

# maxbatch says what stops the next batch, in JSON and in text
expect_ok "maxbatch fails_at" "$OOCSIM" maxbatch -m alexnet --hw v100-pcie3 -p vdnn --json
tr -d ' \n\t' <"$TMP/out" | grep -q '"max_batch":4295,.*"fails_at":{"batch":4296,"limit":"largest_step","op":"bwdpool1"}' &&
  ok "maxbatch --json fails_at" || not_ok "maxbatch fails_at: $(grep -A4 fails_at "$TMP/out")"
expect_ok "maxbatch text" "$OOCSIM" maxbatch -m resnet50 --hw v100-nvlink2 -p incore
grep -qx 'batch 189 does not fit: out of memory at fwd res5_2_bn3' "$TMP/out" &&
  ok "maxbatch names the step that stops batch 189" || not_ok "maxbatch text: $(sed -n 2p "$TMP/out")"

# determinism beyond incore: a swapping planner, every allocator, the trace
for al in ideal caching caching:expandable_segments bestfit pool va; do
  S="-m resnet50 -b 384 --hw v100-pcie3 -p vdnn --allocator $al --json --no-timing"
  "$OOCSIM" simulate $S --trace "$TMP/ta.json" >"$TMP/a.json" 2>&1
  "$OOCSIM" simulate $S --trace "$TMP/tb.json" >"$TMP/b.json" 2>&1
  cmp -s "$TMP/a.json" "$TMP/b.json" && cmp -s "$TMP/ta.json" "$TMP/tb.json" &&
    ok "deterministic JSON and trace (vdnn, $al)" || not_ok "deterministic JSON and trace (vdnn, $al)"
done

# memory CSV: time ascending, integer byte columns
awk -F, 'NR > 1 && ($1 + 0 < last || $2 !~ /^[0-9]+$/ || $3 !~ /^[0-9]+$/) { bad = 1 } NR > 1 { last = $1 + 0 }
         END { exit bad }' "$TMP/mem.csv" && ok "mem csv times ascend" || not_ok "mem csv times ascend"

# --precision: mixed precision counts 2 + 2 + 4 + 8 bytes per parameter
# with Adam; the summary names it; a plan keeps it; tf32 runs fp32
# convolutions on the A100's tensor cores, fp32 on its CUDA cores.
expect_ok "info --precision amp-bf16" "$OOCSIM" info -m gpt2 -b 1 --precision amp-bf16 --optimizer adam
grep -qx '  bytes per parameter        weights 2, gradients 2, master weights 4, optimizer state 8: 16 (amp-bf16, adam)' "$TMP/out" &&
  grep -qx 'model gpt2, batch 1, bf16 (amp-bf16)' "$TMP/out" &&
  ok "info: bytes per parameter by category" || not_ok "info --precision: $(grep -E 'bytes per|^model' "$TMP/out")"
expect_ok "info --dtype bf16" "$OOCSIM" info -m gpt2 -b 1 --dtype bf16 --optimizer adam
grep -q 'weights 2, gradients 2, master weights 0, optimizer state 4: 8 (bf16, adam)' "$TMP/out" &&
  ok "info: --dtype bf16 counts 8 B" || not_ok "info --dtype: $(grep 'bytes per' "$TMP/out")"
expect_fail "--precision and --dtype" "--precision sets the dtype: give --precision or --dtype, not both" \
  "$OOCSIM" simulate -m gpt2 -b 1 --precision amp-fp16 --dtype fp16 --hw h100-pcie5 -p incore
expect_fail "--precision unknown" "--precision: unknown precision 'fp8' (fp32, tf32, amp-fp16, amp-bf16)" \
  "$OOCSIM" info -m gpt2 --precision fp8
expect_ok "simulate --precision amp-fp16" "$OOCSIM" simulate -m resnet50 -b 64 --hw a100-pcie4 -p incore --precision amp-fp16 --json --no-timing
[ "$(num precision "$TMP/out")" = '"amp-fp16"' ] && [ "$(num dtype "$TMP/out")" = '"fp16"' ] &&
  ok "summary: precision" || not_ok "summary precision: $(num precision "$TMP/out")"
amp_it=$(num iteration_s "$TMP/out")
expect_ok "plan --precision amp-fp16" "$OOCSIM" plan -m resnet50 -b 64 --hw a100-pcie4 -p incore --precision amp-fp16 -o "$TMP/amp.json"
grep -q '"precision":[[:space:]]*"amp-fp16"' "$TMP/amp.json" && ok "plan.json keeps the precision" || not_ok "plan.json: no precision"
expect_ok "simulate the amp plan" "$OOCSIM" simulate "$TMP/amp.json" --json --no-timing
[ "$(num iteration_s "$TMP/out")" = "$amp_it" ] && ok "the plan replays the same iteration" || not_ok "plan replay: $(num iteration_s "$TMP/out") vs $amp_it"
"$OOCSIM" simulate -m resnet50 -b 64 --hw a100-pcie4 -p incore --precision fp32 --json --no-timing >"$TMP/fp32" 2>&1
"$OOCSIM" simulate -m resnet50 -b 64 --hw a100-pcie4 -p incore --precision tf32 --json --no-timing >"$TMP/tf32" 2>&1
le "$(num iteration_s "$TMP/tf32")" "$(num iteration_s "$TMP/fp32")" && [ "$(num iteration_s "$TMP/tf32")" != "$(num iteration_s "$TMP/fp32")" ] &&
  ok "tf32 faster than fp32 on a100" || not_ok "tf32 $(num iteration_s "$TMP/tf32") vs fp32 $(num iteration_s "$TMP/fp32")"

# --- the steady state (sim/sim.h) ---------------------------------------------
# window's plan of bert_large b18 on v100-pcie3 fits two iterations, but
# its allocator is still releasing and refilling segments in the second:
# the third runs out of memory, as a real run would.
S="-m bert_large -b 18 --hw v100-pcie3 -p window"
expect_ok "plan window bert_large b18" "$OOCSIM" plan $S -o "$TMP/bw.json"
"$OOCSIM" simulate "$TMP/bw.json" >"$TMP/bw.txt" 2>&1
grep -q "^warning     not steady: the allocator still took or gave back device memory in the last of 2 iterations; a longer run may differ or run out of memory (--steady)$" "$TMP/bw.txt" &&
  ok "text warns: not steady" || not_ok "no steady warning: $(tail -2 "$TMP/bw.txt")"
expect_ok "simulate --json" "$OOCSIM" simulate "$TMP/bw.json" --json --no-timing
[ "$(num feasible "$TMP/out")" = true ] && [ "$(num steady "$TMP/out")" = false ] &&
  [ "$(num simulated_iterations "$TMP/out")" = 2 ] &&
  ok "json: feasible, steady false, 2 iterations" ||
  not_ok "json: $(num feasible "$TMP/out") $(num steady "$TMP/out") $(num simulated_iterations "$TMP/out")"
"$OOCSIM" simulate "$TMP/bw.json" --steady >"$TMP/bw3.txt" 2>&1
grep -q "^result      INFEASIBLE: out of memory at fwd mlm_decoder" "$TMP/bw3.txt" &&
  grep -q "^            in timed iteration 3: the earlier ones fit, but the allocator had not settled$" "$TMP/bw3.txt" &&
  ok "--steady: out of memory in the third iteration" || not_ok "--steady: $(grep -A1 result "$TMP/bw3.txt")"
# --iterations above --steady's 8 is the most then: 10 here, not refused
"$OOCSIM" simulate "$TMP/bw.json" --steady --iterations 10 >"$TMP/bw10.txt" 2>&1
grep -q "^            in timed iteration 3: the earlier ones fit, but the allocator had not settled$" "$TMP/bw10.txt" &&
  ok "--steady --iterations 10: out of memory in the third iteration" || not_ok "--steady --iterations 10: $(cat "$TMP/bw10.txt")"
# compare marks it, and says what it means once under the table
"$OOCSIM" compare $S >"$TMP/bwc.txt" 2>&1
grep -q "^window .* ok (not steady)$" "$TMP/bwc.txt" &&
  grep -q "^not steady: the allocator still took or gave back device memory in the last iteration simulated; a longer run may differ or run out of memory (--steady plans and simulates until it settles)$" "$TMP/bwc.txt" &&
  ok "compare: ok (not steady), and the footnote" || not_ok "compare: $(tail -4 "$TMP/bwc.txt")"
"$OOCSIM" compare $S --steady >"$TMP/bwc2.txt" 2>&1
grep -q "^window .* ok$" "$TMP/bwc2.txt" && ! grep -q "not steady" "$TMP/bwc2.txt" &&
  ok "compare --steady: ok, no footnote" || not_ok "compare --steady: $(tail -4 "$TMP/bwc2.txt")"
# planned with --steady, the planner's simulations run to the steady state
# too, and it finds a plan that stays
expect_ok "simulate --steady one-shot" "$OOCSIM" simulate $S --steady --json --no-timing
k=$(num simulated_iterations "$TMP/out")
[ "$(num feasible "$TMP/out")" = true ] && [ "$(num steady "$TMP/out")" = true ] &&
  ok "--steady plan: feasible and steady ($k iterations)" ||
  not_ok "--steady plan: $(num feasible "$TMP/out") $(num steady "$TMP/out")"
st_it=$(num iteration_s "$TMP/out")
expect_ok "plan --steady" "$OOCSIM" plan $S --steady -o "$TMP/bws.json"
expect_ok "its plan, 3 more iterations" "$OOCSIM" simulate "$TMP/bws.json" --iterations $((k + 3)) --json --no-timing
[ "$(num iteration_s "$TMP/out")" = "$st_it" ] && ok "steady: later iterations repeat it" ||
  not_ok "steady $st_it, after $((k + 3)) iterations $(num iteration_s "$TMP/out")"
# va maps and unmaps its cached chunks every iteration: that takes and
# gives back no device memory, so it is steady at two
expect_ok "va resnet50 window" "$OOCSIM" simulate -m resnet50 -b 256 --hw v100-pcie3 -p window --allocator va --json --no-timing
[ "$(num steady "$TMP/out")" = true ] && ok "va: steady at 2" || not_ok "va: steady $(num steady "$TMP/out")"

# plan's line for an infeasible plan gives no time: it has none (null in
# JSON), and 0.000000 s read as a time.
expect_ok "plan infeasible" "$OOCSIM" plan -m resnet50 -b 512 --hw v100-nvlink2 -p incore -o "$TMP/inf.json"
[ "$(cat "$TMP/out")" = "$TMP/inf.json: incore on v100-nvlink2, batch 512, caching allocator: INFEASIBLE" ] &&
  ok "plan: INFEASIBLE, no time" || not_ok "plan infeasible: $(cat "$TMP/out")"

# A repeated --opt key takes its last value (oocsim(1), COMMON OPTIONS).
W="-m alexnet -b 64 --hw v100-pcie3 -p window --no-timing --json"
expect_ok "--opt given twice" "$OOCSIM" simulate $W --opt window=1GiB \
  --opt grads=0 --opt window=2GiB
cp "$TMP/out" "$TMP/opt2.json"
"$OOCSIM" simulate $W --opt grads=0 --opt window=2GiB >"$TMP/opt1.json" 2>&1
cmp -s "$TMP/opt1.json" "$TMP/opt2.json" &&
  grep -q '"plan_note":.*window=2.000 GiB' "$TMP/opt2.json" &&
  ok "the last --opt window wins" ||
  not_ok "the last --opt window wins: $(grep plan_note "$TMP/opt2.json")"

# So do --set and --hw-set, and a plan file written from them records each
# key once: it simulates again (it was refused: "key 'depth' given twice").
expect_ok "plan with --set and --hw-set given twice" "$OOCSIM" plan -m resnet -b 8 \
  --hw v100-pcie3 -p vdnn --set depth=50 --set depth=101 \
  --hw-set link.h2d_GBps=10 --hw-set link.h2d_GBps=20 -o "$TMP/set2.json"
grep -q '"set":{"depth":"101"}' "$TMP/set2.json" &&
  grep -q '"hw_set":{"link.h2d_GBps":"20"}' "$TMP/set2.json" &&
  ok "the plan file records the last --set and --hw-set" ||
  not_ok "--set twice in the plan: $(grep scenario "$TMP/set2.json")"
expect_ok "that plan simulates" "$OOCSIM" simulate "$TMP/set2.json"

# Wrong culprits: each error names what is at fault.
expect_fail "simulate PLAN.json --dtype" \
  "oocsim: simulate: --dtype cannot be given with a plan file \
($TMP/mlp.json fixes the scenario; only --allocator and --budget override \
it)" \
  "$OOCSIM" simulate "$TMP/mlp.json" --dtype fp16
expect_fail "simulate PLAN.json --optimizer" \
  "oocsim: simulate: --optimizer cannot be given with a plan file" \
  "$OOCSIM" simulate "$TMP/mlp.json" --optimizer adam
sed 's/"allocator":"[^"]*"/"allocator":"bogus"/' "$TMP/mlp.json" \
  >"$TMP/balloc.json"
expect_fail "a plan file's bad allocator" \
  "oocsim: $TMP/balloc.json: scenario.allocator: unknown allocator 'bogus'" \
  "$OOCSIM" simulate "$TMP/balloc.json"
sed 's/"allocator":"[^"]*"/"allocator":"caching:max_split_size_mb=1"/' \
  "$TMP/mlp.json" >"$TMP/balloc2.json"
expect_fail "a plan file's bad allocator option" \
  "oocsim: $TMP/balloc2.json: scenario.allocator: allocator 'caching': \
max_split_size_mb must be" \
  "$OOCSIM" simulate "$TMP/balloc2.json"
expect_fail "--allocator over a plan file" \
  "oocsim: --allocator: allocator 'caching': max_split_size_mb must be" \
  "$OOCSIM" simulate "$TMP/mlp.json" --allocator caching:max_split_size_mb=1
for p in window checkpoint-dp vdnn; do
  expect_fail "an allocator option value, -p $p" \
    "oocsim: --allocator: allocator 'caching': max_split_size_mb must be an \
integer >= 20 (MiB), got '1'" \
    "$OOCSIM" simulate -m alexnet -b 16 --hw v100-pcie3 -p $p \
    --allocator caching:max_split_size_mb=1
done
expect_fail "an allocator option value in a sweep" \
  "oocsim: --allocator: allocator 'caching': max_split_size_mb must be" \
  "$OOCSIM" sweep -m alexnet -b 16 --hw v100-pcie3 -p window \
  --allocator caching:max_split_size_mb=1 -o "$TMP/swa"

# An infeasible plan's trace is the iteration that ran out, up to the
# allocation that failed: resnet50 b512 in core on a V100 runs out in its
# first iteration, at fwd res2_1_bn3 (t = 0.118699 s).
expect_ok "infeasible simulate with outputs" "$OOCSIM" simulate -m resnet50 -b 512 \
  --hw v100-pcie3 -p incore --trace "$TMP/oom.json" --mem-csv "$TMP/oom.csv" \
  --timeline-csv "$TMP/oomtl.csv"
last=$(tail -n 1 "$TMP/oom.csv" | cut -d, -f1)
awk -v t="$last" 'BEGIN { exit !(t > 0.1 && t < 0.118699) }' &&
  [ "$(wc -l <"$TMP/oomtl.csv")" -gt 10 ] &&
  grep -q '"name":"fwd res2_1_conv3"' "$TMP/oom.json" &&
  ok "infeasible: trace, memory and timeline up to the failure (last sample $last s)" ||
  not_ok "infeasible outputs: last sample '$last', $(wc -l <"$TMP/oomtl.csv") timeline rows"
# Its figures are the first iteration's up to the failure (sim/sim.h): in
# core, everything runs on the compute stream, so its busy time, stalls
# and allocator time add up to the 0.118699 s (before, they were zeros).
grep -q "^            link, compute and stalls below: timed iteration 1 up to then$" "$TMP/out" &&
  ok "infeasible text: the figures are iteration 1's up to then" ||
  not_ok "infeasible text: $(sed -n 4,8p "$TMP/out")"
expect_ok "infeasible simulate --json" "$OOCSIM" simulate -m resnet50 -b 512 \
  --hw v100-pcie3 -p incore --json --no-timing
busy=$(num compute_busy_s "$TMP/out"); host=$(num host "$TMP/out")
alloc=$(num alloc_s "$TMP/out"); when=$(num time_s "$TMP/out")
awk -v b="$busy" -v h="$host" -v a="$alloc" -v t="$when" \
  'BEGIN { d = b + h + a - t; exit !(b > 0.1 && d < 1e-6 && d > -1e-6) }' &&
  ok "infeasible: busy $busy + host stall $host + allocator $alloc = $when s" ||
  not_ok "infeasible: busy $busy + host stall $host + allocator $alloc != $when s"
# An out-of-memory at a copy is named as the trace names the copy, in
# lower case (docs/output-schema.md, oom_op): vdnn's resnet50 b1146 on
# v100-pcie3 runs out at the swap-in of res2_2_bn2.
expect_ok "oom at a copy" "$OOCSIM" simulate -m resnet50 -b 1146 --hw v100-pcie3 -p vdnn --json --no-timing
[ "$(num op "$TMP/out")" = '"h2d res2_2_bn2"' ] && ok "oom op: h2d res2_2_bn2" ||
  not_ok "oom op: $(num op "$TMP/out")"

if "$OOCSIM" plot memory --in "$TMP/oom.csv" -o "$TMP/oom.png" 2>"$TMP/perr"; then
  ok "plot memory of an infeasible run"
elif grep -q "gnuplot is missing" "$TMP/perr"; then
  echo "# gnuplot not found: memory plot skipped"
else
  not_ok "plot memory of an infeasible run: $(cat "$TMP/perr")"
fi

finish
