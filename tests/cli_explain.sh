#!/bin/sh
# tests/cli_explain.sh — oocsim explain: the per-class decisions add up to
# the summary's counts, the exposed transfer times to its swap-in and
# swap-out stalls (the same simulation attributes both), swapped gradients
# form their own class, and bad input exits 1 with one message.
. "$top_srcdir/tests/lib.sh"

# num FIELD FILE: the first value of "FIELD": in a cJSON-printed file.
num() { sed -n "s/^[[:space:]]*\"$1\":[[:space:]]*\([^,]*\),*$/\1/p" "$2" | head -n 1; }
# last FIELD FILE: the last value of "FIELD" (the total row comes last).
last() { sed -n "s/^[[:space:]]*\"$1\":[[:space:]]*\([^,]*\),*$/\1/p" "$2" | tail -n 1; }
close() { awk -v a="$1" -v b="$2" 'BEGIN { d = a - b; exit !(d < 1e-6 && d > -1e-6) }'; }

expect_ok "explain window resnet50 b512 pcie3 --json" \
  "$OOCSIM" explain -m resnet50 -b 512 --hw v100-pcie3 -p window --json
cp "$TMP/out" "$TMP/w.json"
# The summary's counts (first "keep"/"swap"/"recompute") and the total row's.
[ "$(num keep "$TMP/w.json")" = "$(last keep "$TMP/w.json")" ] &&
[ "$(num swap "$TMP/w.json")" = "$(last swap "$TMP/w.json")" ] &&
[ "$(num recompute "$TMP/w.json")" = "$(last recompute "$TMP/w.json")" ] &&
  ok "class totals = summary counts" || not_ok "class totals = summary counts"
[ "$(num swap "$TMP/w.json")" -gt 0 ] && ok "window swaps at b512" || not_ok "window swaps at b512"
close "$(num swapin "$TMP/w.json")" "$(last exposed_swapin_s "$TMP/w.json")" &&
  ok "exposed swap-in = stall_s.swapin" || not_ok "exposed swap-in = stall_s.swapin"
close "$(num swapout "$TMP/w.json")" "$(last exposed_swapout_s "$TMP/w.json")" &&
  ok "exposed swap-out = stall_s.swapout" || not_ok "exposed swap-out = stall_s.swapout"
grep -q '"op":[[:space:]]*"conv2d"' "$TMP/w.json" && ok "a conv2d class" || not_ok "a conv2d class"
# Classes sum to the total (tensors).
awk '/"tensors":/ { gsub(/[^0-9]/, "", $2); v[n++] = $2 }
     END { for (i = 0; i < n - 1; i++) s += v[i]; exit !(n > 1 && s == v[n - 1]) }' "$TMP/w.json" &&
  ok "classes sum to the total" || not_ok "classes sum to the total"

# lms past the resident-gradient ceiling swaps gradients: a class of its own.
expect_ok "explain lms resnet50 b1400 nvlink2" \
  "$OOCSIM" explain -m resnet50 -b 1400 --hw v100-nvlink2 -p lms
grep -q "^gradient " "$TMP/out" && ok "gradients are a class" || not_ok "gradients are a class"
grep -q "^total " "$TMP/out" && ok "text has a total row" || not_ok "text has a total row"

# In core nothing is swapped: no cost.
expect_ok "explain incore" "$OOCSIM" explain -m resnet50 -b 64 --hw h100-pcie5 -p incore --json
cp "$TMP/out" "$TMP/i.json"
[ "$(last swap "$TMP/i.json")" = 0 ] && close "$(last exposed_swapin_s "$TMP/i.json")" 0 &&
  ok "incore: nothing swapped, nothing exposed" || not_ok "incore: nothing swapped, nothing exposed"

# A model whose only layer is a view of its input has no tensor to
# explain: the summary and one line saying so (no table, no sanitizer
# report of an empty sort).
printf '{"name":"v","input":[4],"layers":[{"op":"flatten"}]}\n' >"$TMP/v.json"
expect_ok "explain a view-only model" \
  "$OOCSIM" explain -m "$TMP/v.json" -b 1 --hw a100-pcie4 -p vdnn
[ "$(sed -n 2p "$TMP/out")" = "no tensor to explain (no layer has an activation of its own: each is a view of its input)" ] &&
  [ "$(wc -l <"$TMP/out")" -eq 2 ] &&
  ok "view-only model: nothing to explain" ||
  not_ok "view-only model: $(cat "$TMP/out")"
expect_ok "explain a view-only model --json" \
  "$OOCSIM" explain -m "$TMP/v.json" -b 1 --hw a100-pcie4 -p vdnn --json
grep -q '"classes":[[:space:]]*\[\]' "$TMP/out" &&
  [ "$(last tensors "$TMP/out")" = 0 ] &&
  ok "view-only model: no classes, total 0" ||
  not_ok "view-only model --json: $(cat "$TMP/out")"

# A plan that runs out of memory (vdnn at 6 GiB, resnet50 b512 on
# v100-pcie3: in the first iteration, at 0.626958 s): the class table's
# idle times are that iteration's up to then, and add up to the summary's
# stalls (before, the table had zeros and the summary too).
expect_ok "explain an infeasible plan" \
  "$OOCSIM" explain -m resnet50 -b 512 --hw v100-pcie3 -p vdnn --budget 6GiB
[ "$(sed -n 2p "$TMP/out")" = "swap-in s and swap-out s below: timed iteration 1 up to the out of memory at 0.626958 s" ] &&
  ok "infeasible: the table says what it covers" ||
  not_ok "infeasible: $(sed -n 1,2p "$TMP/out")"
expect_ok "explain an infeasible plan --json" \
  "$OOCSIM" explain -m resnet50 -b 512 --hw v100-pcie3 -p vdnn --budget 6GiB --json
out_s=$(last exposed_swapout_s "$TMP/out")
so=$(sed -n 's/^[[:space:]]*"swapout":[[:space:]]*\([^,]*\),*$/\1/p' "$TMP/out" | head -n 1)
close "$out_s" "$so" && close "$out_s" 0.558727 &&
  ok "infeasible: swap-out idle $out_s s = the summary's stall_s.swapout" ||
  not_ok "infeasible: swap-out idle $out_s s, stall_s.swapout $so s"

expect_fail "explain without -p" "missing -p PLANNER" "$OOCSIM" explain -m resnet50 -b 8 --hw v100-pcie3
expect_fail "explain unknown planner" "-p: unknown planner 'nope'" "$OOCSIM" explain -m resnet50 -b 8 --hw v100-pcie3 -p nope
expect_fail "explain bad batch" "-b: batch 0 must be >= 1" "$OOCSIM" explain -m resnet50 -b 0 --hw v100-pcie3 -p window
finish
