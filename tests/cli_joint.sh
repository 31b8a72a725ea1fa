#!/bin/sh
# tests/cli_joint.sh — the joint planner: the same inputs give the same
# plan, byte for byte; it is never slower than any other planner and
# feasible wherever one is (it starts from the best of their plans and only
# accepts faster feasible ones); its note says where it started and what
# it ran; bad options exit 1 with one message. The search's gain is
# measured by make bench-planners, not asserted here.
. "$top_srcdir/tests/lib.sh"

num() { sed -n "s/^[[:space:]]*\"$1\":[[:space:]]*\([^,]*\),*$/\1/p" "$2" | head -n 1; }

S="-m resnet50 -b 384 --hw v100-pcie3"
expect_ok "plan joint" "$OOCSIM" plan $S -p joint -o "$TMP/a.json"
expect_ok "plan joint again" "$OOCSIM" plan $S -p joint -o "$TMP/b.json"
cmp -s "$TMP/a.json" "$TMP/b.json" && ok "same plan, byte for byte" || not_ok "same plan, byte for byte"
# PoocH plans in a second thread (threads=2, the default) while the other
# planners and a search from the best of theirs run in the first; the
# plan is the sequential start's, byte for byte: here pooch's plan is the
# start (resnet50 b384), and on gpt2 b18 v100-nvlink2 lms's is.
expect_ok "plan joint threads=1" "$OOCSIM" plan $S -p joint --opt threads=1 -o "$TMP/c.json"
# (the plan file records the options it was planned with: those aside)
noopts() { sed 's/"opts":{[^}]*}//' "$1"; }
noopts "$TMP/a.json" >"$TMP/a2.json"; noopts "$TMP/c.json" >"$TMP/c2.json"
cmp -s "$TMP/a2.json" "$TMP/c2.json" && ok "threads=1: the same plan" || not_ok "threads=1: the same plan"
# Its sweeps simulate the candidate after each in a helper thread, taken
# only when the one before fails, with its counters in order: the search's
# figures (its simulations, those a cutoff stopped, those its bound
# answered) are those of one thread too.
"$OOCSIM" simulate $S -p joint --json >"$TMP/m2.json" 2>/dev/null
"$OOCSIM" simulate $S -p joint --opt threads=1 --json >"$TMP/m1.json" 2>/dev/null
same=1
for k in simulations cut_simulations bound_simulations pruned post_sweep_simulations; do
  a=$(num $k "$TMP/m1.json"); b=$(num $k "$TMP/m2.json")
  { [ -n "$a" ] && [ "$a" = "$b" ]; } || { same=0; echo "# $k: $a (threads=1) and $b"; }
done
[ $same -eq 1 ] && ok "threads=1: the same search figures" || not_ok "threads=1: the same search figures"
# The search from the best other plan, which the parallel start runs
# while PoocH plans, runs whole, and so does the one from PoocH's plan
# when that is the start (here); the sequential start runs the same two
# and evaluates the same plans against the same bests: what the summary
# says planning cost is the same every run, and with threads=1.
"$OOCSIM" simulate $S -p joint --json >"$TMP/m3.json" 2>/dev/null
a=$(num plan_simulations "$TMP/m1.json"); b=$(num plan_simulations "$TMP/m2.json")
c=$(num plan_simulations "$TMP/m3.json")
[ -n "$a" ] && [ -n "$b" ] && [ "$b" = "$c" ] && [ "$a" = "$b" ] &&
  ok "plan_simulations: $b every run and with threads=1" ||
  not_ok "plan_simulations: $b, then $c; $a with threads=1"
D="-m gpt2 -b 18 --hw v100-nvlink2"
expect_ok "plan joint gpt2" "$OOCSIM" plan $D -p joint -o "$TMP/d.json"
expect_ok "plan joint gpt2 threads=1" "$OOCSIM" plan $D -p joint --opt threads=1 -o "$TMP/e.json"
noopts "$TMP/d.json" >"$TMP/d2.json"; noopts "$TMP/e.json" >"$TMP/e2.json"
cmp -s "$TMP/d2.json" "$TMP/e2.json" && ok "threads=1: the same plan (gpt2, from lms's)" || not_ok "threads=1: the same plan (gpt2, from lms's)"
# When PoocH's plan is the start, the search runs from it and from the
# best of the other plans, and the faster result is joint's plan. On
# resnet50 b2340 gh200-c2c PoocH's plan (1.034941 s) is the start, the
# search from it reaches 1.025624 s, and the one from window's (1.115134
# s), whose convolutions take faster algorithms, 0.994932 s; the note
# says both. threads=1 runs the two in sequence: the same plan.
W="-m resnet50 -b 2340 --hw gh200-c2c"
expect_ok "plan joint resnet50 b2340" "$OOCSIM" plan $W -p joint --json -o "$TMP/w.json"
[ "$(num iteration_s "$TMP/out")" = 0.994932311 ] &&
  grep -q '"plan_note":[[:space:]]*"joint: from the window plan (1.115134 s);.*; from the pooch plan (1.034941 s) the search reached 1.025624 s",' "$TMP/out" &&
  ok "two starts: window's search wins, 0.994932 s" ||
  not_ok "two starts: $(num iteration_s "$TMP/out") s, $(grep '"plan_note"' "$TMP/out")"
expect_ok "plan joint resnet50 b2340 threads=1" "$OOCSIM" plan $W -p joint --opt threads=1 -o "$TMP/w1.json"
noopts "$TMP/w.json" >"$TMP/w2.json"; noopts "$TMP/w1.json" >"$TMP/w3.json"
cmp -s "$TMP/w2.json" "$TMP/w3.json" && ok "threads=1: the same plan (two starts)" || not_ok "threads=1: the same plan (two starts)"

# Against every other planner, on two scenarios where several fit.
for sc in "resnet50 384 v100-pcie3" "densenet121 1280 h100-pcie5"; do
  set -- $sc
  expect_ok "joint on $1 b$2 $3" "$OOCSIM" simulate -m "$1" -b "$2" --hw "$3" -p joint --json
  tj=$(num iteration_s "$TMP/out")
  [ "$(num feasible "$TMP/out")" = true ] && ok "joint feasible on $1" || not_ok "joint feasible on $1"
  grep -q '"plan_note":[[:space:]]*"joint: from the [a-z-]* plan (' "$TMP/out" && ok "note says where it started" || not_ok "note says where it started ($(grep '"plan_note"' "$TMP/out"))"
  grep -q '"simulations":' "$TMP/out" && ok "metrics carry simulations" || not_ok "metrics carry simulations"
  # the shared prefix of candidate programs: a share, and not all of it
  # (every move changes something)
  sp=$(num resim_shared_prefix "$TMP/out")
  awk -v x="$sp" 'BEGIN { exit !(x >= 0 && x < 1) }' &&
    ok "resim_shared_prefix $sp in [0, 1)" || not_ok "resim_shared_prefix '$sp' in [0, 1)"
  for p in vdnn lms capacity window checkpoint checkpoint-dp pooch superneurons; do
    "$OOCSIM" simulate -m "$1" -b "$2" --hw "$3" -p "$p" --json >"$TMP/p.json" 2>/dev/null || continue
    [ "$(num feasible "$TMP/p.json")" = true ] || continue
    tp=$(num iteration_s "$TMP/p.json")
    awk -v j="$tj" -v p="$tp" 'BEGIN { exit !(j <= p) }' &&
      ok "$1: joint $tj s <= $p $tp s" || not_ok "$1: joint $tj s <= $p $tp s"
  done
done

# Every part of the note whole when all the sweeps changed the plan
# (algorithms, offloaded layers back, classes): the three once overran
# their buffer and cut the last mid-word ("(160 simulat").
expect_ok "a note of every sweep" "$OOCSIM" simulate \
  -m "$top_srcdir/tests/data/models/deep_resnet.json" -b 4 --hw v100-pcie3 \
  -p joint --budget 340MiB --allocator ideal
grep -q "offloaded layers back on the device, .* recomputes to swap, [0-9.]*% faster ([0-9]* simulations), [0-9.]*% faster after" "$TMP/out" &&
  ok "the note's sweeps whole" || not_ok "the note's sweeps whole ($(grep planner "$TMP/out"))"

# Two annealing chains, the second from the plan before the class sweeps
# when they changed it; on densenet121 b504 v100-pcie3 the second's plan
# is faster, and the note says it was taken and where it started (it was
# resnet50 b752 until PoocH's retries measured less and moved more).
expect_ok "two chains" "$OOCSIM" simulate -m densenet121 -b 504 --hw v100-pcie3 -p joint --json
grep -q "; the second chain's plan, from before the class sweeps;" "$TMP/out" && ok "the second chain's plan taken" || not_ok "the second chain's plan taken ($(grep plan_note "$TMP/out"))"
# The exchange (a keep of an exposed swap steered to the step of its
# span with the least free memory, room made there by recomputing a kept
# activation that costs less than its bytes on the link): on resnet50
# b752 v100-pcie3 one improving exchange took the plan from 3.0868 s
# (the plan without the move) to 2.9021 s when it came in; from PoocH's
# plan of now, two improve it.
expect_ok "exchanges" "$OOCSIM" simulate -m resnet50 -b 752 --hw v100-pcie3 -p joint --json
ex=$(num exchanges "$TMP/out")
awk -v x="$ex" 'BEGIN { exit !(x >= 1) }' && ok "an improving exchange ($ex)" || not_ok "an improving exchange ('$ex')"
tj=$(num iteration_s "$TMP/out")
awk -v t="$tj" 'BEGIN { exit !(t < 3.0868) }' && ok "with it $tj s < 3.0868 s" || not_ok "with it $tj s < 3.0868 s"

expect_fail "max_evals -1" "planner 'joint': option max_evals=-1: must be in [0, 10000000]" \
  "$OOCSIM" simulate $S -p joint --opt max_evals=-1
expect_fail "budget_s -3" "planner 'joint': option budget_s=-3: must be in [0, 1e9] seconds (0: none)" \
  "$OOCSIM" simulate $S -p joint --opt budget_s=-3
expect_fail "budget_s abc" "--opt budget_s: 'abc' is not a number" \
  "$OOCSIM" simulate $S -p joint --opt budget_s=abc
expect_fail "budget_s 1e10" "planner 'joint': option budget_s=1e+10: must be in [0, 1e9] seconds (0: none)" \
  "$OOCSIM" simulate $S -p joint --opt budget_s=1e10
# budget_s bounds the whole solve, the start included: at a microsecond
# the start has the first feasible plan of the registry's order and
# PoocH's after its first simulation (the faster here), the search runs
# none, and the note says the budget cut it. (What a budget of 1 s gives
# is measured by make bench-planners.)
expect_ok "budget_s 1e-6" "$OOCSIM" simulate $S -p joint --opt budget_s=0.000001 --json
[ "$(num feasible "$TMP/out")" = true ] && ok "budget_s: feasible" || not_ok "budget_s: feasible"
grep -q '"plan_note":[[:space:]]*"joint: from the [a-z-]* plan (.*; cut by budget_s"' "$TMP/out" &&
  ok "budget_s: the note says it cut the search" || not_ok "budget_s: the note ($(grep '"plan_note"' "$TMP/out"))"
expect_ok "pooch budget_s 1e-6" "$OOCSIM" simulate $S -p pooch --opt budget_s=0.000001 --json
grep -q 'search cut by budget_s' "$TMP/out" && ok "pooch's note: cut by budget_s" || not_ok "pooch's note: $(grep '"plan_note"' "$TMP/out")"
expect_fail "pooch budget_s -1" "planner 'pooch': option budget_s=-1: must be in [0, 1e9] seconds (0: none)" \
  "$OOCSIM" simulate $S -p pooch --opt budget_s=-1
expect_fail "start_sims -1" "planner 'joint': option start_sims=-1: must be in [0, 100000]" \
  "$OOCSIM" simulate $S -p joint --opt start_sims=-1
# max_evals=0: the best start, unchanged.
expect_ok "max_evals 0" "$OOCSIM" simulate $S -p joint --opt max_evals=0
grep -q "0.00% faster after 0 simulations" "$TMP/out" && ok "no search with max_evals=0" || not_ok "no search with max_evals=0 ($(grep planner "$TMP/out"))"
expect_fail "sweep 2" "planner 'joint': option sweep=2: must be 0 or 1" \
  "$OOCSIM" simulate $S -p joint --opt sweep=2
expect_fail "max_events -1" "planner 'joint': option max_events=-1: must be >= 0 (0: no cap)" \
  "$OOCSIM" simulate $S -p joint --opt max_events=-1
expect_fail "threads 3" "planner 'joint': option threads=3: must be 1 or 2" \
  "$OOCSIM" simulate $S -p joint --opt threads=3
expect_fail "start_events -1" "planner 'joint': option start_events=-1: must be >= 0 (0: no cap)" \
  "$OOCSIM" simulate $S -p joint --opt start_events=-1
# PoocH's event cap (joint's start_events passes it): spent, the search
# stops and the note says so; uncapped, the same scenario runs hundreds of
# simulations and is not cut by it.
expect_ok "pooch max_events" "$OOCSIM" simulate $S -p pooch --opt max_events=100000 --json
s_cap=$(num plan_simulations "$TMP/out")
grep -q 'search cut by max_events' "$TMP/out" && ok "pooch's note: cut by max_events" || not_ok "pooch's note: $(grep '"plan_note"' "$TMP/out")"
expect_ok "pooch uncapped" "$OOCSIM" simulate $S -p pooch --json
s_all=$(num plan_simulations "$TMP/out")
grep -q 'search cut by max_events' "$TMP/out" && not_ok "uncapped pooch cut by max_events" || ok "uncapped pooch not cut by max_events"
[ "${s_cap:-0}" -gt 0 ] && [ "$s_cap" -lt "${s_all:-0}" ] && ok "max_events=1e5: $s_cap simulations < $s_all" || not_ok "max_events=1e5: '$s_cap' simulations, uncapped '$s_all'"
grep -q '"cut_by_max_events":[[:space:]]*0' "$TMP/out" && ok "uncapped pooch's metric: not cut" || not_ok "uncapped pooch's metric: not cut"
# joint's start passes start_events to PoocH: when it cuts PoocH's search,
# joint's plan is no longer sure to match pooch's own, and its note says
# so; by default (3.5 x 10^7 events) it does not cut here.
expect_ok "joint start_events cut" "$OOCSIM" simulate $S -p joint --opt start_events=100000 --json
grep -q "start_events cut PoocH's search, so pooch alone may find a faster plan\"" "$TMP/out" &&
  ok "joint's note: start_events cut PoocH" || not_ok "joint's note: $(grep '"plan_note"' "$TMP/out")"
# PoocH measures each pass's r(X) in two threads (threads=2, the
# default), then takes them in order as one thread would, its event cap
# too: the same plan as threads=1, capped (the cap spent inside the
# recompute step's passes) or not.
expect_ok "pooch threads=2" "$OOCSIM" plan $S -p pooch -o "$TMP/p2.json"
expect_ok "pooch threads=1" "$OOCSIM" plan $S -p pooch --opt threads=1 -o "$TMP/p1.json"
noopts "$TMP/p1.json" >"$TMP/p1b.json"; noopts "$TMP/p2.json" >"$TMP/p2b.json"
cmp -s "$TMP/p1b.json" "$TMP/p2b.json" && ok "pooch threads=1: the same plan" || not_ok "pooch threads=1: the same plan"
expect_ok "pooch capped threads=2" "$OOCSIM" plan $S -p pooch --opt max_events=1300000 -o "$TMP/p3.json"
expect_ok "pooch capped threads=1" "$OOCSIM" plan $S -p pooch --opt max_events=1300000 --opt threads=1 -o "$TMP/p4.json"
noopts "$TMP/p3.json" >"$TMP/p3b.json"; noopts "$TMP/p4.json" >"$TMP/p4b.json"
cmp -s "$TMP/p3b.json" "$TMP/p4b.json" && ok "pooch capped threads=1: the same plan" || not_ok "pooch capped threads=1: the same plan"
# Its group tests (the passes' groups, the refill) simulate the next
# candidate in the second thread, taken only when the one before fails:
# the same plan as threads=1 here too with max_sims cutting the search.
expect_ok "pooch max_sims threads=2" "$OOCSIM" plan $S -p pooch --opt max_sims=199 -o "$TMP/p5.json"
expect_ok "pooch max_sims threads=1" "$OOCSIM" plan $S -p pooch --opt max_sims=199 --opt threads=1 -o "$TMP/p6.json"
noopts "$TMP/p5.json" >"$TMP/p5b.json"; noopts "$TMP/p6.json" >"$TMP/p6b.json"
cmp -s "$TMP/p5b.json" "$TMP/p6b.json" && ok "pooch max_sims threads=1: the same plan" || not_ok "pooch max_sims threads=1: the same plan"
# On resnet50 b376 v100-nvlink2 some of those candidates are answered by
# their bound: a second thread that ran them without the first's cutoff
# would count them as run, and the note would say so.
N="-m resnet50 -b 376 --hw v100-nvlink2"
expect_ok "pooch nvlink2 threads=2" "$OOCSIM" plan $N -p pooch -o "$TMP/p7.json"
expect_ok "pooch nvlink2 threads=1" "$OOCSIM" plan $N -p pooch --opt threads=1 -o "$TMP/p8.json"
noopts "$TMP/p7.json" >"$TMP/p7b.json"; noopts "$TMP/p8.json" >"$TMP/p8b.json"
cmp -s "$TMP/p7b.json" "$TMP/p8b.json" && ok "pooch threads=1: the same plan and note (resnet50 b376 v100-nvlink2)" || not_ok "pooch threads=1: the same plan and note (resnet50 b376 v100-nvlink2)"
grep -q 'search cut by max_events' "$TMP/p3.json" && ok "pooch capped: cut by max_events" || not_ok "pooch capped: not cut ($(grep '"note"' "$TMP/p3.json"))"
expect_fail "pooch threads 3" "planner 'pooch': option threads=3: must be 1 or 2" \
  "$OOCSIM" simulate $S -p pooch --opt threads=3
# The algorithm sweep: its one simulation moves all 106 convolution steps
# of the start plan to their fastest algorithms; sweep=0 leaves it to the
# annealing's moves. pooch's plan, the best start here, already runs the
# fastest kernels that fit; with start_sims=1 pooch stops at its swap-all
# profile, and the start is checkpoint-dp's, on the default algorithms.
expect_ok "sweep" "$OOCSIM" simulate $S -p joint --opt max_evals=1 --opt start_sims=1
grep -q "from the checkpoint-dp plan (1.276639 s); its 106 convolutions with faster algorithms 14.25% faster (1 simulation), 14.25% faster after 1 simulations" "$TMP/out" &&
  ok "the sweep's note" || not_ok "the sweep's note ($(grep planner "$TMP/out"))"
expect_ok "sweep=0" "$OOCSIM" simulate $S -p joint --opt max_evals=1 --opt start_sims=1 --opt sweep=0
grep -q "faster algorithms" "$TMP/out" && not_ok "sweep=0 sweeps ($(grep planner "$TMP/out"))" || ok "sweep=0 does not sweep"
# The class sweeps (each pass capped at max_evals / 2 and / 4 simulations,
# on top of the search's): pooch's plan recomputes an activation whose
# forward takes longer than its bytes on the link; swapped instead, the
# iteration is 0.59% faster (one re-timing candidate, then two passes of
# both sweeps: 25 simulations). After the annealing they run again and
# change 4 more activations of its plan, 1.11% faster. sweep=0 leaves them
# to the annealing too.
expect_ok "class sweeps" "$OOCSIM" simulate $S -p joint --opt max_evals=40
grep -q "from the pooch plan (1.093387 s); 0 swaps to recompute, 1 recomputes to swap, 0.59% faster (25 simulations), 1.77% faster after 97 simulations (3 more pruned by their bound; the class sweeps again after it: 4 changes, 1.11% faster)" "$TMP/out" &&
  ok "the class sweeps' note" || not_ok "the class sweeps' note ($(grep planner "$TMP/out"))"
# A swap the sweep turns into a recompute keeps the other swap-ins'
# timing: window's plan for resnet50 b1504 on v100-pcie3 (the only
# feasible start there) was tuned to where its allocator fragments, and
# re-timing all of its swap-ins by bytes made every candidate 20% slower
# (0 swaps to recompute); 37 of its batch-norm and convolution outputs are
# rebuilt instead, 24.69% faster (with every candidate a valid plan: the
# inputs of a rebuild are brought back through whichever of their swap
# records has them out then, and rebuilt first whatever their records'
# order).
expect_ok "class sweeps from window" "$OOCSIM" simulate -m resnet50 -b 1504 --hw v100-pcie3 -p joint
grep -q "from the window plan (25.082839 s); its 106 convolutions with faster algorithms 0.20% faster (1 simulation); 37 swaps to recompute, 0 recomputes to swap, 24.69% faster (359 simulations)" "$TMP/out" &&
  ok "class sweeps keep the start's timing" || not_ok "class sweeps keep the start's timing ($(grep planner "$TMP/out"))"
expect_ok "class sweeps, sweep=0" "$OOCSIM" simulate $S -p joint --opt max_evals=40 --opt sweep=0
grep -q "to recompute\|to swap" "$TMP/out" && not_ok "sweep=0 runs the class sweeps ($(grep planner "$TMP/out"))" || ok "sweep=0: no class sweeps"
finish
