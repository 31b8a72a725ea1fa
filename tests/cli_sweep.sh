#!/bin/sh
# tests/cli_sweep.sh — `oocsim sweep`: the CSV schema, grid order, -j
# determinism, resume, shards + merge, and every error case.
. "${top_srcdir:-.}/tests/lib.sh"

# Cut the wall-clock columns (plan_wall_s, sim_wall_s: the last two).
nowall() { awk -F, 'BEGIN{OFS=","} {NF-=2; print}' "$1"; }

S="$TMP/s"
# 3 batches x 2 planners on one profile.
expect_ok "small sweep runs" $OOCSIM sweep -m alexnet -b 32:96:32 --hw v100-pcie3 -p vdnn,window -o "$S"
if [ -s "$TMP/err" ]; then not_ok "quiet on a non-terminal stderr ($(cat "$TMP/err"))"; else ok "quiet on a non-terminal stderr"; fi

# Schema: coordinates first, then every summary field, wall times last.
want='model,set,hw,allocator,budget,planner,batch,dtype,optimizer,budget_bytes,feasible,iteration_s,samples_per_s,incore_iteration_s,slowdown,vs_lower_bound,lower_bound_s,compute_s,peak_allocated_bytes,peak_reserved_bytes,peak_host_pinned_bytes,fragmentation,h2d_bytes,d2h_bytes,recompute_flops,recompute_s,compute_busy_s,h2d_busy_s,d2h_busy_s,stall_total_s,stall_swapin_s,stall_swapout_s,stall_other_s,stall_host_s,alloc_s,keep,swap,recompute,events,oom_op,oom_time_s,oom_requested_bytes,oom_live_bytes,oom_reserved_bytes,oom_largest_free_bytes,oom_reason,plan_note,plan_wall_s,sim_wall_s'
got=$(head -n 1 "$S/results.csv")
[ "$got" = "$want" ] && ok "results.csv header" || not_ok "results.csv header: $got"
n=$(($(wc -l <"$S/results.csv") - 1))
[ "$n" -eq 6 ] && ok "one row per point (6)" || not_ok "rows: $n, want 6"
# Grid order: planner outer, batch fastest.
order=$(awk -F, 'NR>1 {printf "%s:%s ", $6, $7}' "$S/results.csv")
[ "$order" = "vdnn:32 vdnn:64 vdnn:96 window:32 window:64 window:96 " ] \
  && ok "rows in grid order" || not_ok "order: $order"
# samples_per_s = batch / iteration_s on feasible rows.
bad=$(awk -F, 'NR>1 && $11==1 { r=$7/$12; d=r-$13; if (d<0) d=-d; if (d > 1e-6*r) print $6":"$7 }' "$S/results.csv")
[ -z "$bad" ] && ok "samples_per_s = batch / iteration_s" || not_ok "samples_per_s wrong at $bad"
grep -q '"planner": "window"' "$S/results.json" && grep -q '"feasible": true' "$S/results.json" \
  && [ "$(grep -c '"model": "alexnet"' "$S/results.json")" -eq 6 ] \
  && ok "results.json has the rows" || not_ok "results.json"
[ -s "$S/grid.json" ] && ok "grid.json written" || not_ok "grid.json missing"

# Without -o the results go to ./sweep, and stdout says so in one line.
mkdir "$TMP/cwd"
if (cd "$TMP/cwd" && $OOCSIM sweep -m alexnet -b 32 --hw v100-pcie3 -p vdnn >"$TMP/out" 2>"$TMP/err") \
   && [ -s "$TMP/cwd/sweep/results.csv" ] && [ -s "$TMP/cwd/sweep/results.json" ] \
   && [ "$(wc -l <"$TMP/out")" -eq 1 ] && grep -q -- "-> sweep/results.csv, sweep/results.json" "$TMP/out"; then
  ok "default output directory ./sweep, named on stdout"
else
  not_ok "default output directory: $(cat "$TMP/out" "$TMP/err")"
fi

# On a terminal: a progress bar with ETA on stderr, its final state drawn
# once (script(1) gives the command a terminal; skipped without it).
if command -v script >/dev/null 2>&1 && script -qc true /dev/null >/dev/null 2>&1; then
  script -qc "$OOCSIM sweep -m alexnet -b 32:96:32 --hw v100-pcie3 -p vdnn,window -o $TMP/tty" /dev/null >"$TMP/tty.out" 2>&1
  tr '\r' '\n' <"$TMP/tty.out" >"$TMP/tty.lines"
  if grep -q 'ETA' "$TMP/tty.lines" && grep -q '^sweep \[#*\] 6/6 points' "$TMP/tty.lines" \
     && [ "$(grep -c '6/6 points' "$TMP/tty.lines")" -eq 1 ]; then
    ok "progress bar with ETA on a terminal"
  else
    not_ok "progress bar: $(cat -v "$TMP/tty.out" | head -c 400)"
  fi
else
  echo "# script(1) not found: progress bar on a terminal not checked"
fi

# -j 2 gives the same rows in the same order.
expect_ok "sweep -j 2" $OOCSIM sweep -m alexnet -b 32:96:32 --hw v100-pcie3 -p vdnn,window -j 2 -o "$TMP/j2"
nowall "$S/results.csv" >"$TMP/a"; nowall "$TMP/j2/results.csv" >"$TMP/b"
cmp -s "$TMP/a" "$TMP/b" && ok "-j 2 equals -j 1 (without wall times)" || not_ok "-j 2 differs"
# --no-timing: the same files byte for byte, wall columns 0.
expect_ok "sweep --no-timing" $OOCSIM sweep -m alexnet -b 32:96:32 --hw v100-pcie3 -p vdnn,window --no-timing -o "$TMP/nt1"
expect_ok "sweep --no-timing -j 2" $OOCSIM sweep -m alexnet -b 32:96:32 --hw v100-pcie3 -p vdnn,window --no-timing -j 2 -o "$TMP/nt2"
cmp -s "$TMP/nt1/results.csv" "$TMP/nt2/results.csv" && cmp -s "$TMP/nt1/results.json" "$TMP/nt2/results.json" \
  && ok "--no-timing: results.csv and results.json byte-identical" || not_ok "--no-timing files differ"
walls=$(awk -F, 'NR>1 {printf "%s,%s ", $(NF-1), $NF}' "$TMP/nt1/results.csv")
[ "$walls" = "0,0 0,0 0,0 0,0 0,0 0,0 " ] && ok "--no-timing: wall columns 0" || not_ok "--no-timing walls: $walls"
nowall "$TMP/nt1/results.csv" >"$TMP/c"
cmp -s "$TMP/a" "$TMP/c" && ok "--no-timing changes only the wall columns" || not_ok "--no-timing changed other columns"

# Resume: a second run adds and removes nothing.
cp "$S/results.csv" "$TMP/before.csv"
$OOCSIM sweep -m alexnet -b 32:96:32 --hw v100-pcie3 -p vdnn,window -o "$S" >"$TMP/out" 2>&1
grep -q "6 already done, 0 run" "$TMP/out" && ok "resume skips every point" || not_ok "resume: $(cat "$TMP/out")"
cmp -s "$TMP/before.csv" "$S/results.csv" && ok "resume keeps the rows as they were" || not_ok "resume changed rows"
# Resume after losing a row: only that point runs; order restored.
sed -i '/^alexnet,,v100-pcie3,caching,default,vdnn,64,fp32,/d' "$S/results.csv"
$OOCSIM sweep -m alexnet -b 32:96:32 --hw v100-pcie3 -p vdnn,window -o "$S" >"$TMP/out" 2>&1
grep -q "5 already done, 1 run" "$TMP/out" && ok "resume runs the missing point only" || not_ok "resume: $(cat "$TMP/out")"
nowall "$S/results.csv" >"$TMP/c"
cmp -s "$TMP/a" "$TMP/c" && ok "resumed file equals the full run" || not_ok "resumed file differs"
# A larger grid in the same directory keeps the old rows, adds new ones.
$OOCSIM sweep -m alexnet -b 32:128:32 --hw v100-pcie3 -p vdnn,window -o "$S" >"$TMP/out" 2>&1
grep -q "6 already done, 2 run" "$TMP/out" && ok "extending the grid runs only new points" || not_ok "extend: $(cat "$TMP/out")"
[ $(($(wc -l <"$S/results.csv") - 1)) -eq 8 ] && ok "extended file has 8 rows" || not_ok "extended rows"
# A smaller grid in the same directory is refused: its grid.json would no
# longer describe the rows kept. Nothing is rewritten.
cp "$S/results.csv" "$TMP/r8.csv"; cp "$S/grid.json" "$TMP/g8.json"
expect_fail "smaller grid refused" "holds 6 rows outside this sweep's grid" \
  $OOCSIM sweep -m alexnet -b 32 --hw v100-pcie3 -p vdnn,window -o "$S"
cmp -s "$TMP/r8.csv" "$S/results.csv" && cmp -s "$TMP/g8.json" "$S/grid.json" &&
  ok "refused sweep leaves results and grid.json as they were" || not_ok "refused sweep rewrote files"
# --fresh recomputes.
$OOCSIM sweep -m alexnet -b 32 --hw v100-pcie3 -p vdnn --fresh -o "$TMP/fr" >/dev/null 2>&1
$OOCSIM sweep -m alexnet -b 32 --hw v100-pcie3 -p vdnn --fresh -o "$TMP/fr" >"$TMP/out" 2>&1
grep -q "0 already done, 1 run" "$TMP/out" && ok "--fresh ignores old rows" || not_ok "--fresh: $(cat "$TMP/out")"

# Shards: 1/2 + 2/2 merged equal the unsharded run (two profiles, a
# --hw-set axis, 2 planners, 3 batches: 24 points).
G="-m alexnet -b 32,64,128 --hw v100-pcie3,a100-pcie4 -p vdnn,window --hw-set link.h2d_GBps=8,32"
expect_ok "unsharded" $OOCSIM sweep $G -j 2 -o "$TMP/full"
expect_ok "shard 1/2" $OOCSIM sweep $G --shard 1/2 -o "$TMP/sh1"
expect_ok "shard 2/2" $OOCSIM sweep $G --shard 2/2 -o "$TMP/sh2"
n1=$(($(wc -l <"$TMP/sh1/results.csv") - 1)); n2=$(($(wc -l <"$TMP/sh2/results.csv") - 1))
[ "$n1" -eq 12 ] && [ "$n2" -eq 12 ] && ok "each shard has half the points" || not_ok "shards: $n1 + $n2"
expect_ok "merge" $OOCSIM sweep --merge "$TMP/sh2" "$TMP/sh1" -o "$TMP/merged"
grep -q "^merged 2 directories into $TMP/merged/results.csv: 24 of 24 grid points\$" "$TMP/out" &&
  [ ! -s "$TMP/err" ] && ok "merge counts the points" || not_ok "merge: $(cat "$TMP/out" "$TMP/err")"
# One shard alone: half the points, a warning naming the first missing
# one; the same sweep into the merged folder runs just those.
expect_ok "merge of one shard" $OOCSIM sweep --merge "$TMP/sh1" -o "$TMP/half"
grep -q "^merged 1 directory into $TMP/half/results.csv: 12 of 24 grid points\$" "$TMP/out" &&
  grep -q "^oocsim: warning: 12 grid points are in no shard (first: model=alexnet, set=, hw=v100-pcie3, hw_set:link.h2d_GBps=8, allocator=caching, budget=default, planner=vdnn, batch=64," "$TMP/err" &&
  ok "merge warns of missing points" || not_ok "merge of one shard: $(cat "$TMP/out" "$TMP/err")"
expect_ok "sweep fills the merge" $OOCSIM sweep $G -o "$TMP/half"
grep -q "24 points (12 already done, 12 run)" "$TMP/out" && ok "the sweep runs just the missing points" || not_ok "fill: $(cat "$TMP/out")"
expect_ok "merge of a shard twice" $OOCSIM sweep --merge "$TMP/sh1" "$TMP/sh2" "$TMP/sh1" -o "$TMP/twice"
grep -q ": 24 of 24 grid points (12 held twice: the first directory's rows kept)\$" "$TMP/out" &&
  ok "merge counts rows held twice" || not_ok "merge twice: $(cat "$TMP/out")"
nowall "$TMP/full/results.csv" >"$TMP/a"; nowall "$TMP/twice/results.csv" >"$TMP/b"
cmp -s "$TMP/a" "$TMP/b" && ok "a shard twice merges to the unsharded rows" || not_ok "merge twice differs: $(diff "$TMP/a" "$TMP/b" | head -3)"
mkdir -p "$TMP/odd" && cp "$TMP/sh2/grid.json" "$TMP/odd/" &&
  sed '3s/,window,/,lms,/' "$TMP/sh2/results.csv" >"$TMP/odd/results.csv"
expect_fail "merge of a row outside the grid" "$TMP/odd/results.csv: line 3 (lms, " $OOCSIM sweep --merge "$TMP/sh1" "$TMP/odd" -o "$TMP/e4"
# Result cells are read back as a sweep writes them, not copied blind
# (found by fuzzing: feasible 'maybe' and a negative peak were merged
# into results.json): the first cell that is not names its line and
# column, and nothing is written; a resume is refused alike.
edit_cell() {   # FILE LINE COLUMN VALUE
  awk -F, -v OFS=, -v l="$2" -v col="$3" -v v="$4" \
    'NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i } NR == l { $c[col] = v } { print }' "$1"
}
mkdir -p "$TMP/badc" && cp "$TMP/sh2/grid.json" "$TMP/badc/" &&
  edit_cell "$TMP/sh2/results.csv" 2 feasible maybe >"$TMP/badc/results.csv"
expect_fail "merge of a cell that is not 0 or 1" \
  "oocsim: $TMP/badc/results.csv: line 2, column 'feasible': 'maybe' is not 0 or 1" \
  $OOCSIM sweep --merge "$TMP/sh1" "$TMP/badc" -o "$TMP/e8"
[ ! -e "$TMP/e8/results.csv" ] && ok "nothing merged" || not_ok "a bad shard was merged"
edit_cell "$TMP/sh2/results.csv" 3 peak_allocated_bytes -5 >"$TMP/badc/results.csv"
expect_fail "merge of a negative byte count" \
  "line 3, column 'peak_allocated_bytes': '-5' is not a count (an integer >= 0)" \
  $OOCSIM sweep --merge "$TMP/badc" -o "$TMP/e8"
# A quoted cell may hold a line break (a model's path may): a row is
# named by the line it starts on, not by its index.
edit_cell "$TMP/sh2/results.csv" 3 feasible maybe >"$TMP/badc/r3.csv"
edit_cell "$TMP/badc/r3.csv" 2 model '"alex\nnet"' >"$TMP/badc/results.csv"
expect_fail "merge names the line a row starts on" \
  "oocsim: $TMP/badc/results.csv: line 4, column 'feasible': 'maybe' is not 0 or 1" \
  $OOCSIM sweep --merge "$TMP/badc" -o "$TMP/e8"
# Of two bad cells, the first in the file is named, whatever its column.
edit_cell "$TMP/sh2/results.csv" 3 feasible maybe >"$TMP/badc/r3.csv"
edit_cell "$TMP/badc/r3.csv" 2 peak_allocated_bytes -5 >"$TMP/badc/results.csv"
expect_fail "merge names the first bad cell of the file" \
  "oocsim: $TMP/badc/results.csv: line 2, column 'peak_allocated_bytes': '-5' is not a count" \
  $OOCSIM sweep --merge "$TMP/badc" -o "$TMP/e8"
edit_cell "$TMP/sh2/results.csv" 2 iteration_s abc >"$TMP/badc/results.csv"
expect_fail "resume of a time that is not a number" \
  "line 2, column 'iteration_s': 'abc' is not a number >= 0" \
  $OOCSIM sweep $G --shard 2/2 -o "$TMP/badc"
nowall "$TMP/full/results.csv" >"$TMP/a"; nowall "$TMP/merged/results.csv" >"$TMP/b"
cmp -s "$TMP/a" "$TMP/b" && ok "merged rows equal the unsharded run" || not_ok "merge differs: $(diff "$TMP/a" "$TMP/b" | head -3)"
head -n 1 "$TMP/full/results.csv" | grep -q ',hw,hw_set:link.h2d_GBps,allocator,' \
  && ok "--hw-set axis is a coordinate column" || not_ok "hw_set column"
# The --hw-set value reaches the simulation: a slower link is never faster.
slow=$(awk -F, 'NR>1 && $2=="" && $3=="v100-pcie3" && $4==8 && $7=="vdnn" && $8==128 {print $13}' "$TMP/full/results.csv")
fast=$(awk -F, 'NR>1 && $2=="" && $3=="v100-pcie3" && $4==32 && $7=="vdnn" && $8==128 {print $13}' "$TMP/full/results.csv")
awk -v s="$slow" -v f="$fast" 'BEGIN { exit !(s > f && f > 0) }' \
  && ok "8 GB/s link slower than 32 GB/s ($slow s > $fast s)" || not_ok "hw-set not applied ($slow vs $fast)"

# No feasible plan beats the lower bound (docs/lower-bound.md): every
# planner on scenarios that must swap (resnet50 over PCIe 3 and NVLink 2).
expect_ok "lower-bound sweep" $OOCSIM sweep -m resnet50 -b 256,512 --hw v100-pcie3,v100-nvlink2 -p all -j 2 -o "$TMP/lb"
lbchk=$(awk -F, 'NR==1 { for (i = 1; i <= NF; i++) c[$i] = i; next }
  $c["feasible"] == 1 { n++; if ($c["swap"] > 0) sw++
    if ($c["iteration_s"] < $c["lower_bound_s"]) bad = bad " " $c["planner"] ":" $c["hw"] ":" $c["batch"] }
  END { printf "%d %d%s", n, sw, bad }' "$TMP/lb/results.csv")
set -- $lbchk
[ "$#" -eq 2 ] && [ "$1" -ge 8 ] && [ "$2" -ge 4 ] \
  && ok "iteration_s >= lower_bound_s on all $1 feasible rows ($2 swap)" || not_ok "lower bound beaten or too few rows: $lbchk"

# --maxbatch: a max_batch column, at least 1 for a swapping planner.
expect_ok "sweep --maxbatch" $OOCSIM sweep --maxbatch -m alexnet --hw v100-pcie3 -p vdnn -o "$TMP/mb"
head -n 1 "$TMP/mb/results.csv" | grep -q ',planner,dtype,optimizer,max_batch,fail_batch,fail_limit,fail_op,fail_below,' && ok "max_batch and fail_* columns" || not_ok "max_batch column"
mbv=$(awk -F, 'NR==2 {print $9}' "$TMP/mb/results.csv")
[ "${mbv:-0}" -ge 1 ] && ok "vdnn max batch $mbv >= 1" || not_ok "max batch: $mbv"
# What stops the next batch: fail_batch = max_batch + 1, a kind and a step.
fail=$(awk -F, 'NR==2 {print $10, $11, $12}' "$TMP/mb/results.csv")
[ "$fail" = "$((mbv + 1)) largest_step bwd pool1" ] && ok "maxbatch names what stops batch $((mbv + 1))" || not_ok "fail columns: $fail"
[ -z "$(awk -F, 'NR==2 {print $13}' "$TMP/mb/results.csv")" ] && ok "vdnn: no batch below it fails" || not_ok "fail_below for vdnn"
# checkpoint-dp on resnet50 on v100-nvlink2 is not monotone (640 does not
# fit, 700 does; cli_sim.sh): fail_below says so, as maxbatch's JSON does.
expect_ok "sweep --maxbatch, not monotone" $OOCSIM sweep --maxbatch -m resnet50 --hw v100-nvlink2 -p checkpoint-dp -o "$TMP/mbh"
H='NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i; next }'
[ "$(awk -F, "$H"' { print $c["max_batch"] " " $c["fail_below"] }' "$TMP/mbh/results.csv")" = "705 640" ] &&
  ok "sweep --maxbatch: fail_below 640 under 705" || not_ok "fail_below: $(awk -F, "$H"' { print $c["max_batch"] " " $c["fail_below"] }' "$TMP/mbh/results.csv")"

# Where not even batch 1 fits (gpt2_xl on a K40: the working set of 'bwd
# loss' is above its 10.67 GiB), the point has no run: budget_bytes is the
# profile's usable memory (11456825262 B), feasible 0 and the reason; every
# other result cell is empty (null in JSON), never 0.
expect_ok "sweep --maxbatch, nothing fits" $OOCSIM sweep --maxbatch -m gpt2_xl --hw k40-pcie3 -p incore -o "$TMP/mb0"
H='NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i; next }'
[ "$(awk -F, "$H"' { print $c["max_batch"] "|" $c["budget_bytes"] "|" $c["feasible"] "|" $c["incore_iteration_s"] "|" $c["lower_bound_s"] "|" $c["events"] "|" $c["oom_time_s"] "|" $c["plan_wall_s"] "|" $c["oom_reason"] }' "$TMP/mb0/results.csv")" = \
  "0|11456825262|0||||||not even batch 1 fits the budget" ] &&
  grep -q '"budget_bytes": 11456825262, "feasible": false, "iteration_s": null, "samples_per_s": null, "incore_iteration_s": null' "$TMP/mb0/results.json" &&
  ok "sweep --maxbatch, nothing fits: budget and reason, the rest empty" ||
  not_ok "sweep --maxbatch, nothing fits: $(tail -1 "$TMP/mb0/results.csv")"

# A budget above the profile's memory fails the maxbatch point as it fails
# a batch's, not as "not even batch 1 fits" (a working-set row).
"$OOCSIM" sweep --maxbatch -m resnet50 --hw v100-pcie3 -p vdnn --budget 20GiB -o "$TMP/mbb" >"$TMP/out" 2>&1
grep -q "first: vdnn on v100-pcie3: budget 20.00 GiB exceeds the 16.00 GiB of profile 'v100-pcie3'" "$TMP/out" &&
  [ "$(wc -l < "$TMP/mbb/results.csv")" -eq 1 ] &&
  ok "sweep --maxbatch: a budget above the device fails the point" || not_ok "sweep --maxbatch budget above the device: $(cat "$TMP/out")"

# One schema (docs/output-schema.md): an infeasible row has no iteration,
# so its times are empty cells in CSV and null in JSON, never 0.
expect_ok "sweep with an infeasible point" $OOCSIM sweep -m resnet50 -b 512 --hw v100-nvlink2 -p incore,window -o "$TMP/inf"
H='NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i; next }'
awk -F, "$H"' $c["planner"] == "incore" { print $c["feasible"] "|" $c["iteration_s"] "|" $c["samples_per_s"] "|" $c["slowdown"] "|" $c["vs_lower_bound"] }' \
  "$TMP/inf/results.csv" | grep -qx '0||||' && ok "infeasible row: times empty in CSV" || not_ok "infeasible row: $(grep ',incore,' "$TMP/inf/results.csv" | cut -c1-200)"
grep '"planner": "incore"' "$TMP/inf/results.json" | grep -q '"feasible": false, "iteration_s": null, "samples_per_s": null, "incore_iteration_s": [0-9.e-]*, "slowdown": null' \
  && ok "infeasible row: null in JSON" || not_ok "infeasible row JSON: $(grep -o '"feasible".\{0,160\}' "$TMP/inf/results.json" | head -1)"

# --dtype and --optimizer are axes: 2 x 2 points, each with its own values.
expect_ok "dtype x optimizer axes" $OOCSIM sweep -m alexnet -b 64 --hw v100-pcie3 -p window --dtype fp32,fp16 --optimizer sgd,adam -o "$TMP/dt"
got=$(awk -F, "$H"' { printf "%s/%s ", $c["dtype"], $c["optimizer"] }' "$TMP/dt/results.csv")
[ "$got" = "fp32/sgd fp32/adam fp16/sgd fp16/adam " ] && ok "dtype and optimizer coordinates" || not_ok "axes: $got"
awk -F, "$H"' $c["optimizer"] == "sgd" { m[$c["dtype"]] = $c["peak_allocated_bytes"] } END { exit !(m["fp16"] < m["fp32"]) }' "$TMP/dt/results.csv" \
  && ok "fp16 needs less memory than fp32" || not_ok "fp16 memory"
awk -F, "$H"' $c["dtype"] == "fp32" { m[$c["optimizer"]] = $c["peak_allocated_bytes"] } END { exit !(m["sgd"] < m["adam"]) }' "$TMP/dt/results.csv" \
  && ok "adam state costs memory" || not_ok "adam memory"
# --precision is the dtype axis as frameworks set it: a precision column
# before dtype, which holds the activations' dtype; AMP keeps half-precision
# activations, so its peak is below fp32's; tf32 only changes the math, so
# an fp32 model's bytes stay; grid.json records it and --merge restores it.
P="-m gpt2 --set seq=256 -b 8 --hw a100-pcie4 -p window --optimizer adam --precision fp32,tf32,amp-bf16"
expect_ok "precision axis" $OOCSIM sweep $P -o "$TMP/pr"
head -n 1 "$TMP/pr/results.csv" | grep -q ',planner,batch,precision,dtype,optimizer,budget_bytes,' && ok "precision column before dtype" || not_ok "precision column: $(head -n 1 "$TMP/pr/results.csv" | cut -c1-120)"
got=$(awk -F, "$H"' { printf "%s/%s ", $c["precision"], $c["dtype"] }' "$TMP/pr/results.csv")
[ "$got" = "fp32/fp32 tf32/fp32 amp-bf16/bf16 " ] && ok "precision and dtype coordinates" || not_ok "precision axis: $got"
awk -F, "$H"' { m[$c["precision"]] = $c["peak_allocated_bytes"]; t[$c["precision"]] = $c["compute_s"] } END { exit !(m["amp-bf16"] < m["fp32"] && m["tf32"] == m["fp32"] && t["tf32"] < t["fp32"]) }' "$TMP/pr/results.csv" \
  && ok "amp-bf16 peak below fp32; tf32 same bytes, less compute" || not_ok "precision figures"
grep -q '"precision":' "$TMP/pr/grid.json" && ok "grid.json records the precision axis" || not_ok "grid.json precision"
expect_ok "precision shard 1/2" $OOCSIM sweep $P --shard 1/2 -o "$TMP/prs1"
expect_ok "precision shard 2/2" $OOCSIM sweep $P --shard 2/2 -o "$TMP/prs2"
expect_ok "precision merge" $OOCSIM sweep --merge "$TMP/prs2" "$TMP/prs1" -o "$TMP/prm"
[ "$(cut -d, -f1-11 "$TMP/prm/results.csv")" = "$(cut -d, -f1-11 "$TMP/pr/results.csv")" ] && ok "merged precision rows in grid order" || not_ok "merged precision rows"
expect_fail "precision and dtype" "--dtype: the dtype axis is already given by --precision" $OOCSIM sweep $P --dtype fp16 -o "$TMP/e"
expect_fail "dtype and precision" "--precision: the dtype axis is already given by --dtype" $OOCSIM sweep -m alexnet -b 64 --hw v100-pcie3 -p window --dtype fp16 --precision amp-fp16 -o "$TMP/e"
expect_fail "unknown precision in sweep" "--precision: unknown precision 'fp8' (fp32, tf32, amp-fp16, amp-bf16)" $OOCSIM sweep -m alexnet -b 64 --hw v100-pcie3 -p window --precision fp32,fp8 -o "$TMP/e"
expect_fail "unknown dtype in sweep" "unknown dtype 'fp64'" $OOCSIM sweep -m alexnet -b 64 --hw v100-pcie3 -p window --dtype fp32,fp64 -o "$TMP/e"

# Errors: one clear line, exit 1.
expect_fail "range end below start" "range end 1 is below its start 64" $OOCSIM sweep -m alexnet -b 64:1:64 --hw v100-pcie3 -p vdnn -o "$TMP/e"
expect_fail "batch not a number" "-b" $OOCSIM sweep -m alexnet -b x --hw v100-pcie3 -p vdnn -o "$TMP/e"
expect_fail "zero step" "step" $OOCSIM sweep -m alexnet -b 1:8:0 --hw v100-pcie3 -p vdnn -o "$TMP/e"
expect_fail "unknown --hw-set key" "link.h2d_GBpz" $OOCSIM sweep -m alexnet -b 32 --hw v100-pcie3 -p vdnn --hw-set link.h2d_GBpz=8,16 -o "$TMP/e"
expect_fail "bad --hw-set value" "link.h2d_GBps" $OOCSIM sweep -m alexnet -b 32 --hw v100-pcie3 -p vdnn --hw-set link.h2d_GBps=8,-1 -o "$TMP/e"
expect_fail "malformed --hw-set" "KEY=V1,V2" $OOCSIM sweep -m alexnet -b 32 --hw v100-pcie3 -p vdnn --hw-set link.h2d_GBps -o "$TMP/e"
expect_fail "unknown planner" "nosuch" $OOCSIM sweep -m alexnet -b 32 --hw v100-pcie3 -p vdnn,nosuch -o "$TMP/e"
expect_fail "unknown profile" "nosuchgpu" $OOCSIM sweep -m alexnet -b 32 --hw nosuchgpu -p vdnn -o "$TMP/e"
touch "$TMP/afile"
expect_fail "unwritable output directory" "afile/out" $OOCSIM sweep -m alexnet -b 32 --hw v100-pcie3 -p vdnn -o "$TMP/afile/out"
expect_fail "bad shard" "--shard '3/2'" $OOCSIM sweep -m alexnet -b 32 --hw v100-pcie3 -p vdnn --shard 3/2 -o "$TMP/e"
expect_fail "merge without -o" "sweep --merge: missing -o DIR" $OOCSIM sweep --merge "$TMP/sh1" "$TMP/sh2"
expect_fail "merge with a grid option" "oocsim: sweep --merge: -p cannot be given (a merge only joins the shards' rows; their grid.json fixes the grid and how its points ran)" \
  $OOCSIM sweep --merge "$TMP/sh1" "$TMP/sh2" -p vdnn -o "$TMP/e7"
expect_fail "merge into one of its shards" "oocsim: sweep --merge: -o $TMP/sh1/ is shard '$TMP/sh1'; merge into another directory" \
  $OOCSIM sweep --merge "$TMP/sh1" "$TMP/sh2" -o "$TMP/sh1/"
expect_fail "merge of a directory without results" "$TMP/nosuchdir/grid.json" $OOCSIM sweep --merge "$TMP/nosuchdir" -o "$TMP/e3"
# A grid.json edited by hand: the field is named. A value twice on an
# axis would give each of its rows twice, and the settings the rows were
# simulated with must be ones a sweep writes.
mkdir -p "$TMP/badg" && cp "$TMP/sh1/results.csv" "$TMP/badg/"
while IFS='|' read -r what edit want; do
  sed "$edit" "$TMP/sh1/grid.json" >"$TMP/badg/grid.json"
  expect_fail "merge of a grid.json $what" \
    "$TMP/badg/grid.json: not a sweep grid file (field '$want)" \
    $OOCSIM sweep --merge "$TMP/badg" -o "$TMP/e5" </dev/null
done <<'EOF'
with a fractional batch|s/"batch":.*/"batch": [32, 1.5]/|batch': 1.5 (item 1, from 0) is not an integer batch size >= 1
without planners|s/"planner":.*/"planner": [],/|planner': missing, of the wrong type or empty
with a batch twice|s/"batch":.*/"batch": [32, 64, 32]/|batch': 32 given twice
with a planner twice|s/"planner":.*/"planner": ["vdnn", "window", "vdnn"],/|planner': 'vdnn' given twice
with a --hw-set value twice|s/"values":.*/"values": ["8", "8"]/|hw_set': link.h2d_GBps: '8' given twice
with iterations -5|s/"iterations":.*/"iterations": -5,/|iterations': must be an integer from 1 to 1000, or 0 for the default
with steady a string|s/"iterations":.*/"iterations": 0, "steady": "yes",/|steady': must be true or false
with a key it does not write|s/"iterations":.*/"iterations": 2, "bogus": 1,/|bogus': unknown key
with precision and dtype|s/"iterations":.*/"iterations": 2, "precision": ["fp32"],/|dtype': a grid sweeps precision or dtype, not both
EOF
# A key twice, as model and plan files say it.
sed 's/"iterations":.*/"iterations": 2, "iterations": 3,/' "$TMP/sh1/grid.json" >"$TMP/badg/grid.json"
expect_fail "merge of a grid.json with iterations twice" \
  "$TMP/badg/grid.json: key 'iterations' given twice" \
  $OOCSIM sweep --merge "$TMP/badg" -o "$TMP/e5" </dev/null
# More than 10^9 points (10^5 batches x 2 planners x 100 x 100 link
# rates) is refused before anything runs; the product cannot overflow.
V=$(seq -s, 1 100)
expect_fail "a grid of more than 10^9 points" "sweep: the grid has more than 1000000000 points" $OOCSIM sweep -m alexnet -b 1:99999 --hw v100-pcie3 -p vdnn,window --hw-set link.h2d_GBps=$V --hw-set link.d2h_GBps=$V -o "$TMP/e6"
# The same words as simulate's --budget, naming the value of the list
# that is wrong, not the whole list.
expect_fail "zero budget" "oocsim: --budget: '0' must be > 0" $OOCSIM sweep -m alexnet -b 32 --hw v100-pcie3 -p vdnn --budget 0 -o "$TMP/e"
expect_fail "zero budget in a list" "oocsim: --budget: '0B' must be > 0" $OOCSIM sweep -m alexnet -b 32 --hw v100-pcie3 -p vdnn --budget 16GiB,0B -o "$TMP/e"
expect_fail "bad budget" "--budget" $OOCSIM sweep -m alexnet -b 32 --hw v100-pcie3 -p vdnn --budget 12XB -o "$TMP/e"
# Allocator specs with options are an axis like names, kept as given.
expect_ok "sweep over allocator specs" $OOCSIM sweep -m alexnet -b 32 --hw v100-pcie3 -p vdnn \
  --allocator caching,caching:expandable_segments,bestfit -o "$TMP/al"
als=$(awk -F, 'NR>1 {printf "%s ", $4}' "$TMP/al/results.csv")
[ "$als" = "caching caching:expandable_segments bestfit " ] \
  && ok "allocator specs in the rows" || not_ok "allocators: $als"
expect_fail "unknown allocator option in a sweep" "allocator 'caching': unknown option 'frob'" \
  $OOCSIM sweep -m alexnet -b 32 --hw v100-pcie3 -p vdnn --allocator caching:frob -o "$TMP/e"
expect_fail "unknown allocator" "nosuchalloc" $OOCSIM sweep -m alexnet -b 32 --hw v100-pcie3 -p vdnn --allocator nosuchalloc -o "$TMP/e"
expect_fail "bad -j" "-j 0: must be 1..1024" $OOCSIM sweep -m alexnet -b 32 --hw v100-pcie3 -p vdnn -j 0 -o "$TMP/e"
expect_fail "range missing its end" \
  "oocsim: -b '64:': a range is A:B or A:B:STEP" \
  $OOCSIM sweep -m alexnet -b 64: --hw v100-pcie3 -p vdnn -o "$TMP/e"
expect_fail "--hw-set axis given twice" "given twice" $OOCSIM sweep -m alexnet -b 32 --hw v100-pcie3 -p vdnn --hw-set link.h2d_GBps=8 --hw-set link.h2d_GBps=16 -o "$TMP/e"
expect_fail "--maxbatch with -b" "drop -b" $OOCSIM sweep --maxbatch -m alexnet -b 32 --hw v100-pcie3 -p vdnn -o "$TMP/e"
# A results.csv from another grid is not resumed into.
expect_fail "resume into another grid's directory" "its columns differ from this sweep's" $OOCSIM sweep -m alexnet -b 32 --hw v100-pcie3 -p vdnn --hw-set link.h2d_GBps=8 -o "$S"
expect_fail "merge of different grids" "same sweep" $OOCSIM sweep --merge "$TMP/sh1" "$S" -o "$TMP/e2"
expect_fail "unknown option" "--frob" $OOCSIM sweep --frob
expect_ok "sweep --help" $OOCSIM sweep --help
# One sweep per folder at a time (issue 9 item 14): while another process
# holds DIR/.oocsim.lock, a sweep, a merge or a report into DIR is refused
# with the holder's pid and the folder's rows stay as they were; once it
# is released, the folder is usable again.
if command -v flock >/dev/null 2>&1; then
  mkdir -p "$TMP/busy"
  expect_ok "sweep before the lock" $OOCSIM sweep -m alexnet -b 64 --hw v100-pcie3 -p vdnn -o "$TMP/busy"
  cp "$TMP/busy/results.csv" "$TMP/busy.csv"
  echo 4242 >"$TMP/busy/.oocsim.lock"
  flock -o "$TMP/busy/.oocsim.lock" sh -c 'echo $$ >"$1"; exec sleep 60' sh "$TMP/sleeper" &
  holder=$!
  for i in 1 2 3 4 5 6 7 8 9 10; do
    flock -n "$TMP/busy/.oocsim.lock" true || break
    sleep 0.2
  done
  BUSY="output directory '$TMP/busy' is in use by another oocsim (pid 4242); wait for it to finish or use another -o directory"
  expect_fail "a second sweep into a busy folder" "oocsim: $BUSY" \
    $OOCSIM sweep -m alexnet -b 128 --hw v100-pcie3 -p vdnn -o "$TMP/busy" --fresh
  expect_fail "a merge into a busy folder" "$BUSY" $OOCSIM sweep --merge "$TMP/mb" -o "$TMP/busy"
  expect_fail "a report into a busy folder" "$BUSY" $OOCSIM report -m alexnet -b 64 --hw v100-pcie3 -p vdnn -o "$TMP/busy"
  cmp -s "$TMP/busy/results.csv" "$TMP/busy.csv" && ok "the busy folder's rows are untouched" || not_ok "busy folder rewritten"
  kill "$(cat "$TMP/sleeper")" 2>/dev/null; wait $holder 2>/dev/null
  expect_ok "the folder is free once the holder exits" $OOCSIM sweep -m alexnet -b 64 --hw v100-pcie3 -p vdnn -o "$TMP/busy"
  [ ! -e "$TMP/busy/.oocsim.lock" ] && ok "the stale lock file is gone once taken and released" ||
    not_ok "the lock file stayed: $(cat "$TMP/busy/.oocsim.lock")"
else
  ok "# SKIP flock(1) not found"
fi

# A finished sweep, merge or report leaves no lock file, so that two runs
# leave the same files.
left=$(find "$S" "$TMP/j2" "$TMP/mb" -name .oocsim.lock 2>/dev/null)
[ -z "$left" ] && ok "no .oocsim.lock left behind" || not_ok "lock files left: $left"

# -o creates missing parents (the README's "-o out/report" in a fresh clone).
expect_ok "sweep into a new nested folder" $OOCSIM sweep -m alexnet -b 64 --hw v100-pcie3 -p vdnn -o "$TMP/fresh/out/sw"
[ -s "$TMP/fresh/out/sw/results.csv" ] && ok "nested -o created" || not_ok "nested -o: $(ls -R "$TMP/fresh" 2>&1)"
# (report exits 1 without gnuplot, but writes its documents all the same)
$OOCSIM report -m alexnet -b 64 --hw v100-pcie3 -p vdnn --no-maxbatch -o "$TMP/fresh2/out/report" >/dev/null 2>&1
[ -s "$TMP/fresh2/out/report/report.md" ] && ok "report's nested -o created" || not_ok "report nested -o"
: >"$TMP/afile"
expect_fail "-o under a file" "cannot create output directory '$TMP/afile/x': Not a directory" \
  $OOCSIM sweep -m alexnet -b 64 --hw v100-pcie3 -p vdnn -o "$TMP/afile/x"

# --steady: the points plan and simulate until the allocator is steady
# (window's bert_large b18 v100-pcie3 plan of two iterations runs out of
# memory in its third; planned for the steady state it fits), and
# grid.json says so
expect_ok "sweep --steady" $OOCSIM sweep -m bert_large -b 18 --hw v100-pcie3 -p window --steady -o "$TMP/st"
grep -q '"steady":[[:space:]]*true' "$TMP/st/grid.json" && ok "grid.json: steady" || not_ok "grid.json: no steady"
# the point's feasible and iteration_s columns: 1 and 2.469403589 (the
# --steady plan; two iterations of the default plan give 2.474209 s and
# the third runs out of memory)
col() { awk -F, -v k="$1" 'NR == 1 { for (i = 1; i <= NF; i++) if ($i == k) c = i } NR == 2 { print $c }' "$2"; }
[ "$(col feasible "$TMP/st/results.csv")" = 1 ] && [ "$(col iteration_s "$TMP/st/results.csv")" = 2.469403589 ] &&
  ok "the sweep's point is the --steady plan (2.469403589 s)" ||
  not_ok "sweep --steady: $(col feasible "$TMP/st/results.csv") $(col iteration_s "$TMP/st/results.csv")"
expect_ok "sweep without" $OOCSIM sweep -m alexnet -b 32 --hw v100-pcie3 -p vdnn -o "$TMP/nst"
! grep -q '"steady"' "$TMP/nst/grid.json" && ok "grid.json: no steady key by default" || not_ok "grid.json has steady"
# Rows simulated otherwise are not resumed: a resume needs the same
# --steady and --iterations as grid.json records.
cp "$TMP/st/results.csv" "$TMP/st.csv"
expect_fail "resume a --steady sweep without --steady" \
  "oocsim: $TMP/st/grid.json: its rows were simulated with --steady, --iterations 2, this sweep with --iterations 2; resume with the same options, or use --fresh to replace them" \
  $OOCSIM sweep -m bert_large -b 18 --hw v100-pcie3 -p window -o "$TMP/st"
cmp -s "$TMP/st.csv" "$TMP/st/results.csv" && grep -q '"steady":[[:space:]]*true' "$TMP/st/grid.json" &&
  ok "the refused resume left results.csv and grid.json" || not_ok "refused resume changed the folder"
expect_fail "sweep --iterations 0" "oocsim: --iterations: '0' must be an integer in [1, 1000]" \
  $OOCSIM sweep -m alexnet -b 32 --hw v100-pcie3 -p vdnn --iterations 0 -o "$TMP/it0"
expect_fail "resume with another --iterations" \
  "its rows were simulated with --iterations 2, this sweep with --iterations 3" \
  $OOCSIM sweep -m alexnet -b 32,64 --hw v100-pcie3 -p vdnn --iterations 3 -o "$TMP/nst"
# --iterations 2 is the default: a sweep written without it resumes with
# it and the other way round (grid.json records 2 either way), and shards
# of the two merge.
grep -q '"iterations":[[:space:]]*2,' "$TMP/nst/grid.json" &&
  ok "grid.json records the default iterations as 2" || not_ok "grid.json iterations: $(grep iterations "$TMP/nst/grid.json")"
expect_ok "resume a default sweep with --iterations 2" \
  $OOCSIM sweep -m alexnet -b 32,64 --hw v100-pcie3 -p vdnn --iterations 2 -o "$TMP/nst"
expect_ok "and again without it" $OOCSIM sweep -m alexnet -b 32,64 --hw v100-pcie3 -p vdnn -o "$TMP/nst"
[ "$(grep -c ',vdnn,' "$TMP/nst/results.csv")" -eq 2 ] &&
  ok "the resumed sweep has its two rows once" || not_ok "resumed sweep rows: $(grep -c ',vdnn,' "$TMP/nst/results.csv")"
expect_ok "shard 1/2 with --iterations 2" \
  $OOCSIM sweep -m alexnet -b 32,64 --hw v100-pcie3 -p vdnn --iterations 2 --shard 1/2 -o "$TMP/itsh1"
expect_ok "shard 2/2 without it" \
  $OOCSIM sweep -m alexnet -b 32,64 --hw v100-pcie3 -p vdnn --shard 2/2 -o "$TMP/itsh2"
expect_ok "merge them" $OOCSIM sweep --merge "$TMP/itsh1" "$TMP/itsh2" -o "$TMP/itm"

# A value given twice on an axis would only repeat rows: refused, naming
# the option and the value.
SW="$OOCSIM sweep -m alexnet --hw v100-pcie3 -p vdnn -o $TMP/dup"
expect_fail "-b 64,64" "oocsim: -b: batch 64 given twice" $SW -b 64,64
expect_fail "-b 64 -b 32:64:32" "oocsim: -b: batch 64 given twice" \
  $SW -b 64 -b 32:64:32
expect_fail "--hw twice" "oocsim: --hw: 'v100-pcie3' given twice" \
  $OOCSIM sweep -m alexnet -b 64 --hw v100-pcie3,v100-pcie3 -p vdnn \
  -o "$TMP/dup"
expect_fail "-p twice" "oocsim: -p: 'vdnn' given twice" $SW -b 64 -p vdnn
expect_fail "--budget twice, spelt apart" \
  "oocsim: --budget: '17179869184' given twice (as '16GiB')" \
  $SW -b 64 --budget 16GiB,17179869184
expect_fail "--dtype twice" "oocsim: --dtype: 'fp16' given twice" \
  $SW -b 64 --dtype fp16,fp16
expect_fail "--allocator twice" "oocsim: --allocator: 'caching' given twice" \
  $SW -b 64 --allocator caching --allocator caching
expect_fail "--hw-set value twice" \
  "oocsim: --hw-set link.h2d_GBps: '8' given twice" \
  $SW -b 64 --hw-set link.h2d_GBps=8,16,8
[ ! -e "$TMP/dup" ] && ok "nothing written for a refused grid" ||
  not_ok "a refused grid wrote $TMP/dup"

# -b A:B is the range with STEP 1 (oocsim(1), sweep --help).
expect_ok "sweep -b 62:64" $OOCSIM sweep -m alexnet -b 62:64 --hw v100-pcie3 \
  -p vdnn -o "$TMP/ab"
b=$(cut -d, -f7 "$TMP/ab/results.csv" | tail -n +2 | tr '\n' ' ')
[ "$b" = "62 63 64 " ] &&
  ok "-b 62:64 is 62, 63, 64" ||
  not_ok "-b 62:64: $(cut -d, -f7 "$TMP/ab/results.csv" | tr '\n' ' ')"
$OOCSIM sweep --help | grep -q 'A:B (STEP 1)' && ok "--help documents A:B" ||
  not_ok "--help does not document A:B"

# A budget below a step's working set is one infeasible point of the
# grid, not the end of the sweep: its row says why, in simulate's words.
expect_ok "sweep with a budget below the working set" $OOCSIM sweep \
  -m resnet50 -b 64 --hw v100-pcie3 -p window --budget 1MiB,default \
  -o "$TMP/below"
WHY="budget 1.00 MiB is below the working set of step 'bwd pool1' \
(persistent 329.23 MiB + 588.00 MiB)"
grep -qF ",window,64,fp32,momentum,1048576,0," "$TMP/below/results.csv" &&
  grep -qF ",$WHY," "$TMP/below/results.csv" &&
  grep -qF "\"oom_reason\": \"$WHY\"" "$TMP/below/results.json" &&
  ok "the infeasible row says why" ||
  not_ok "the infeasible row: $(grep 1MiB "$TMP/below/results.csv")"
$OOCSIM simulate -m resnet50 -b 64 --hw v100-pcie3 -p window --budget 1MiB \
  2>"$TMP/simerr" >/dev/null
[ "$(cat "$TMP/simerr")" = "oocsim: --budget: $WHY" ] &&
  ok "simulate says the same" || not_ok "simulate: $(cat "$TMP/simerr")"
[ "$(grep -c ',window,64,' "$TMP/below/results.csv")" -eq 2 ] &&
  ok "the other point ran" || not_ok "the other point is missing"

finish
