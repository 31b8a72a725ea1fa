#!/bin/sh
# tests/cli_offload.sh — parameter offload (docs/offload.md): llama2_7b at
# seq 4096 under amp-bf16 with Adam needs 100.9 GiB on the device without
# offload, so on an 80 GB H100 only the offloading planners fit. Checked:
# the CPU's busy time and the host bytes against a hand calculation, that
# streaming the weights lowers the device peak and doubles their traffic,
# that joint keeps layers on the device and is faster, that no plan beats
# the lower bound, the plan file round trip, the trace's host lane, and
# each bad option's one message.
. "$top_srcdir/tests/lib.sh"

num() { sed -n "s/^[[:space:]]*\"$1\":[[:space:]]*\([^,]*\),*$/\1/p" "$2" | head -n 1; }

S="-m llama2_7b -b 1 --set seq=4096 --precision amp-bf16 --optimizer adam --hw h100-pcie5"

# Without offload: no plan can fit (a result, exit 0).
expect_ok "incore" "$OOCSIM" simulate $S -p incore --json
[ "$(num feasible "$TMP/out")" = false ] && grep -q 'no plan can fit' "$TMP/out" &&
  ok "incore cannot fit" || not_ok "incore cannot fit"

expect_ok "zero-offload" "$OOCSIM" simulate $S -p zero-offload --json
cp "$TMP/out" "$TMP/zo.json"
expect_ok "zero-offload text" "$OOCSIM" simulate $S -p zero-offload
cp "$TMP/out" "$TMP/zo.txt"
[ "$(num feasible "$TMP/zo.json")" = true ] && ok "zero-offload fits" || not_ok "zero-offload fits"
# 6,738,415,616 parameters, all of them offloaded (no tied head): on the
# host 16 B each (bf16 weights and gradients, fp32 master weights and two
# moments); the CPU streams 2 x 2 + 2 + 2 x 12 = 30 B each at 40 GB/s, plus
# 2 us per layer: 6738415616 x 30 / 40e9 + 195 x 2e-6 = 5.054202 s.
[ "$(num layers "$TMP/zo.json")" = 195 ] && ok "195 layers offloaded" || not_ok "195 layers offloaded ($(num layers "$TMP/zo.json"))"
[ "$(num host_bytes "$TMP/zo.json")" = 107814649856 ] && ok "host bytes 16 B per parameter" ||
  not_ok "host bytes ($(num host_bytes "$TMP/zo.json"))"
awk -v x="$(num host_optimizer_s "$TMP/zo.json")" 'BEGIN { exit !(x > 5.05420 && x < 5.05421) }' &&
  ok "CPU step 5.054202 s" || not_ok "CPU step ($(num host_optimizer_s "$TMP/zo.json"))"
# Gradients out and weights back in, once each: 2 B per parameter.
[ "$(num h2d_bytes "$TMP/zo.json")" = 13476831232 ] && [ "$(num d2h_bytes "$TMP/zo.json")" = 13476831232 ] &&
  ok "link 2 B per parameter each way" || not_ok "link ($(num h2d_bytes "$TMP/zo.json") / $(num d2h_bytes "$TMP/zo.json"))"
grep -q '"plan_note":[[:space:]]*"optimizer of 195 layers on the CPU (100.41 GiB on the host); activations by checkpoint-dp at the budget + ' "$TMP/zo.json" &&
  ok "its note" || not_ok "its note ($(grep plan_note "$TMP/zo.json"))"

# Streamed weights: a lower peak, the weights in twice.
expect_ok "zero-offload params=stream" "$OOCSIM" simulate $S -p zero-offload --opt params=stream --json
[ "$(num h2d_bytes "$TMP/out")" = 26953662464 ] && ok "streamed weights cross twice" || not_ok "streamed weights cross twice ($(num h2d_bytes "$TMP/out"))"
awk -v a="$(num peak_reserved_bytes "$TMP/out")" -v b="$(num peak_reserved_bytes "$TMP/zo.json")" 'BEGIN { exit !(a < b) }' &&
  ok "streaming lowers the device peak" || not_ok "streaming lowers the device peak"

# joint starts from zero-offload's plan and keeps layers on the device.
expect_ok "joint" "$OOCSIM" simulate $S -p joint --json
grep -q '"plan_note":[[:space:]]*"joint: from the zero-offload plan (5.239695 s); [0-9]* of its 195 offloaded layers back on the device' "$TMP/out" &&
  ok "joint's placement sweep" || not_ok "joint's placement sweep ($(grep plan_note "$TMP/out"))"
awk -v j="$(num iteration_s "$TMP/out")" -v z="$(num iteration_s "$TMP/zo.json")" 'BEGIN { exit !(j < z) }' &&
  ok "joint faster than zero-offload" || not_ok "joint faster than zero-offload"
for f in "$TMP/out" "$TMP/zo.json"; do
  awk -v t="$(num iteration_s "$f")" -v b="$(num lower_bound_s "$f")" 'BEGIN { exit !(b > 0 && t >= b) }' &&
    ok "at or above the bound" || not_ok "at or above the bound"
done
# The CPU must step what does not fit: the bound is above the pure compute.
awk -v c="$(num compute_s "$TMP/out")" -v b="$(num lower_bound_s "$TMP/out")" 'BEGIN { exit !(b > c) }' &&
  ok "bound counts the CPU step" || not_ok "bound counts the CPU step"

# The plan file carries the program; replaying it gives the same time.
expect_ok "plan" "$OOCSIM" plan $S -p zero-offload -o "$TMP/p.json"
expect_ok "replay" "$OOCSIM" simulate "$TMP/p.json" --json --trace "$TMP/t.json"
[ "$(num iteration_s "$TMP/out")" = "$(num iteration_s "$TMP/zo.json")" ] && ok "replay same time" || not_ok "replay same time"
grep -q '"args":{"name":"host"}' "$TMP/t.json" && grep -q '"cat":"cpu-update"' "$TMP/t.json" &&
  ok "trace has the host lane" || not_ok "trace has the host lane"

# A budget only an offloading planner can meet: compare ranks it and
# shows the others out of memory, rather than refusing the budget.
expect_ok "compare under the resident working set" "$OOCSIM" compare -m gpt2_medium -b 4 \
  --hw v100-pcie3 --optimizer adam --budget 6GiB -p window,zero-offload --format csv
grep -q ',zero-offload,4,fp32,adam,6442450944,1,' "$TMP/out" &&
  grep -q ',window,4,fp32,adam,6442450944,0,.*budget 6.00 GiB is below the working set of step' "$TMP/out" &&
  ok "zero-offload fits, window's working set is above the budget" ||
  not_ok "mixed compare: $(cat "$TMP/out" "$TMP/err" | head -c 600)"

# A smaller scenario where everything fits: zero-offload still offloads.
expect_ok "resnet50 zero-offload" "$OOCSIM" simulate -m resnet50 -b 64 --hw v100-pcie3 -p zero-offload
grep -q '^offload     optimizer of 107 layers on the CPU' "$TMP/out" && ok "resnet50: offload line" || not_ok "resnet50: offload line"

# Host limits: the weights' and gradients' host copies are pinned (4 B per
# parameter, 25.10 GiB), the master weights and moments ordinary memory.
grep -q 'pinned host 25.10 GiB' "$TMP/zo.txt" && ok "pinned: the copy buffers" || not_ok "pinned: the copy buffers"
expect_ok "pinned limit" "$OOCSIM" simulate $S -p zero-offload --hw-set host.pinned_GiB=20 --json
[ "$(num feasible "$TMP/out")" = false ] &&
  grep -q '"reason":[[:space:]]*"pinned host memory exhausted: 86.00 MiB requested, 19.92 GiB of 20.00 GiB in use"' "$TMP/out" &&
  ok "host.pinned_GiB enforced" || not_ok "host.pinned_GiB enforced ($(grep '"reason"' "$TMP/out"))"
expect_ok "host limit" "$OOCSIM" simulate $S -p zero-offload --hw-set host.memory_GiB=64 --json
[ "$(num feasible "$TMP/out")" = false ] &&
  grep -q '"reason":[[:space:]]*"host memory exhausted: 1.01 GiB requested, 63.60 GiB of 64.00 GiB in use"' "$TMP/out" &&
  ok "host.memory_GiB enforced" || not_ok "host.memory_GiB enforced ($(grep '"reason"' "$TMP/out"))"

expect_ok "explain" "$OOCSIM" explain $S -p zero-offload
grep -q '^parameters: the optimizer of 195 layers on the CPU, busy 5.054202 s per iteration; 100.41 GiB of their weights, gradients and state on the host$' "$TMP/out" &&
  ok "explain says where the parameters are" || not_ok "explain says where the parameters are ($(grep parameters "$TMP/out"))"

expect_fail "params bogus" "planner 'zero-offload': option params=bogus: expected resident or stream" \
  "$OOCSIM" simulate $S -p zero-offload --opt params=bogus
expect_fail "act joint" "planner 'zero-offload': option act=joint: the activations' planner cannot be zero-offload or joint" \
  "$OOCSIM" simulate $S -p zero-offload --opt act=joint
expect_fail "act unknown" "planner 'zero-offload': option act=nope: no such planner" \
  "$OOCSIM" simulate $S -p zero-offload --opt act=nope
expect_fail "device_layers -1" "planner 'zero-offload': option device_layers=-1: must be >= 0" \
  "$OOCSIM" simulate $S -p zero-offload --opt device_layers=-1
sed 's/, "optimizer_GBps": 10//' "$top_srcdir/tests/data/hw/round.json" >"$TMP/nocpu.json"
expect_fail "no CPU rate" "planner 'zero-offload': profile 'round' gives no host.optimizer_GBps (the CPU optimizer's rate)" \
  "$OOCSIM" simulate -m resnet50 -b 8 --hw "$TMP/nocpu.json" -p zero-offload
expect_fail "bad CPU rate" "host.optimizer_GBps" \
  "$OOCSIM" simulate $S -p zero-offload --hw-set host.optimizer_GBps=-1
# The report says where the winner's parameters are and what the CPU costs.
expect_ok "report" "$OOCSIM" report -m llama2_7b -b 1 --set seq=1024 --precision amp-bf16 --optimizer adam --hw h100-pcie5 -p zero-offload -o "$TMP/rep"
grep -q "^Its parameters: the optimizer of 195 layers runs on the CPU, with 100.41 GiB of their weights, gradients and optimizer state in host memory; the CPU is busy 5054.2 ms per iteration" "$TMP/rep/report.md" &&
  ok "report: the winner's parameters" || not_ok "report: the winner's parameters"

# The timeline plot draws the host's CPU steps on a lane of their own.
if command -v "${OOCSIM_GNUPLOT:-gnuplot}" >/dev/null 2>&1; then
  expect_ok "timeline csv" "$OOCSIM" simulate -m llama2_7b -b 1 --set seq=1024 --precision amp-bf16 --optimizer adam --hw h100-pcie5 -p zero-offload --timeline-csv "$TMP/tl.csv"
  [ "$(grep -c '^host,' "$TMP/tl.csv")" = 195 ] && ok "timeline: 195 CPU steps on the host lane" || not_ok "timeline: host lane ($(grep -c '^host,' "$TMP/tl.csv"))"
  expect_ok "plot gantt" "$OOCSIM" plot gantt --in "$TMP/tl.csv" -o "$TMP/g.svg"
  grep -q '>host (CPU)<' "$TMP/g.svg" && grep -q '>CPU optimizer step<' "$TMP/g.svg" &&
    ok "gantt: host lane and its key" || not_ok "gantt: host lane and its key"
fi

# A --budget below the working set with everything on the device, but not
# below what offload leaves: a plan for zero-offload, bad input for others.
expect_ok "zero-offload --budget 40G" "$OOCSIM" simulate $S -p zero-offload --budget 40G
expect_fail "incore --budget 40G" "--budget: budget 37.25 GiB is below the working set of step 'bwd loss' (persistent 100.41 GiB + 500.00 MiB)" \
  "$OOCSIM" simulate $S -p incore --budget 40G
# maxbatch: zero-offload trains seq 1024 where nothing else does.
expect_ok "maxbatch zero-offload" "$OOCSIM" maxbatch -m llama2_7b --set seq=1024 --precision amp-bf16 --optimizer adam --hw h100-pcie5 -p zero-offload
grep -q '^max batch [1-9][0-9]* for zero-offload on h100-pcie5' "$TMP/out" && ok "maxbatch finds a batch" || not_ok "maxbatch finds a batch ($(head -1 "$TMP/out"))"
# A hand-edited HOST step is refused by simulate as by exec, with one
# message (ir/semantics.h, ooc_program_check_host_step; found by fuzzing:
# simulate used to run it): layer 0 of the MLP is its input, without
# parameters.
expect_ok "plan zero-offload mlp" "$OOCSIM" plan -m "$top_srcdir/tests/data/cli_mlp.json" -b 4 \
  --hw v100-pcie3 -p zero-offload -o "$TMP/zm.json"
n=$(grep -n '^\["host",3,"update","device",3,' "$TMP/zm.json" | cut -d: -f1)
sed "${n}s/^\[\"host\",3,\"update\",\"device\",3,/[\"host\",3,\"update\",\"device\",0,/" \
  "$TMP/zm.json" >"$TMP/zm0.json"
k=$(plan_index "$n" "$TMP/zm.json")
expect_fail "a HOST step of a layer without parameters" \
  "oocsim: $TMP/zm0.json: program: instruction $k (HOST) steps layer 0, which has no parameters" \
  "$OOCSIM" simulate "$TMP/zm0.json"
sed "${n}s/,-15,/,/" "$TMP/zm.json" >"$TMP/zm1.json"
expect_fail "a HOST step that does not write its optimizer state" \
  "program: instruction $k (HOST, layer 3) does not name the host copy of the layer's optimizer state" \
  "$OOCSIM" simulate "$TMP/zm1.json"

finish
