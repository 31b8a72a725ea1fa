#!/bin/sh
# tests/cli_basic.sh — oocsim's front end: --help of every command, list,
# info (a hand-checked small model and resnet50) and the bad-input errors:
# each exits 1 with one "oocsim: ..." line naming the option or file.
. "$top_srcdir/tests/lib.sh"
MLP="$top_srcdir/tests/data/cli_mlp.json"

for c in list info plan simulate compare maxbatch sweep plot report; do
  if "$OOCSIM" $c --help >"$TMP/out" 2>"$TMP/err" && grep -q "Usage: oocsim $c" "$TMP/out" &&
     [ ! -s "$TMP/err" ]; then ok "$c --help"; else not_ok "$c --help"; fi
done

# The cuda backend loads the CUDA libraries when it is used
# (executor/cuda_api.c): linked, every oocsim start mapped them (0.07 s
# or more, 224 MB).
if command -v readelf >/dev/null 2>&1 && [ -f "$OOCSIM" ]; then
  if readelf -d "$OOCSIM" | grep NEEDED | grep -q -E 'libcud|libcublas'; then
    not_ok "oocsim links a CUDA library"
  else ok "oocsim links no CUDA library"; fi
fi

# list
expect_ok "list models" "$OOCSIM" list models
grep -q '^resnet50 ' "$TMP/out" && ok "list models has resnet50" || not_ok "list models has resnet50"
expect_ok "list hw" "$OOCSIM" list hw
grep -q '^v100-nvlink2 ' "$TMP/out" && ok "list hw has v100-nvlink2" || not_ok "list hw has v100-nvlink2"
expect_ok "list planners" "$OOCSIM" list planners
for p in incore naive vdnn lms capacity window; do
  grep -q "^$p " "$TMP/out" && ok "list planners has $p" || not_ok "list planners has $p"
done
# Each planner cites its paper by name, not as "seed".
grep -q 'seed' "$TMP/out" && not_ok "list planners says seed" || ok "list planners names no seed"
grep -q 'schedule-window paper (Out-of-core Training for Extremely Large-' "$TMP/out" &&
  grep -q 'SuperNeurons paper (SuperNeurons: Dynamic GPU Memory Management' "$TMP/out" &&
  ok "list planners names the papers" || not_ok "list planners: papers not named"
# The summaries start in one column, after the longest name.
[ "$(grep -v '^ ' "$TMP/out" | awk '{ print index($0, $2) }' | sort -u | wc -l)" -eq 1 ] &&
  ok "list planners: summaries in one column" || not_ok "list planners: summaries not aligned"
# The plots have a colour per planner: a report of all of them (-p all)
# gives none of them another's (plots/common.gp).
np=$(grep -c -v '^ ' "$TMP/out")
nl=$(grep -c "^set linetype [0-9]* lc rgb" "$top_srcdir/plots/common.gp")
[ "$nl" -ge "$np" ] && grep -q "^set linetype cycle $nl\$" "$top_srcdir/plots/common.gp" &&
  ok "plots: $nl colours for $np planners" || not_ok "plots: $nl colours for $np planners"
expect_ok "list allocators" "$OOCSIM" list allocators
for al in ideal caching bestfit pool va; do
  grep -q "^$al " "$TMP/out" && ok "list allocators has $al" || not_ok "list allocators has $al"
done
grep -q '^ *options: expandable_segments, max_split_size_mb, roundup_power2_divisions$' "$TMP/out" &&
  ok "list allocators: caching's options" || not_ok "list allocators: caching's options"
grep -q '^ *(pytorch/pytorch c10/cuda/CUDACachingAllocator.cpp' "$TMP/out" &&
  ok "list allocators: caching's source" || not_ok "list allocators: caching's source"
expect_fail "list junk" "unknown list 'junk'" "$OOCSIM" list junk
expect_fail "list nothing" "list: expected one of" "$OOCSIM" list

# info on the hand-checked model: 16*8+8 + 8*4+4 = 172 parameters
expect_ok "info mlp" "$OOCSIM" info -m "$MLP" -b 2
grep -q 'parameters *172$' "$TMP/out" && ok "info mlp params 172" || not_ok "info mlp params 172"
grep -q '^fc1 .*linear .*8 ' "$TMP/out" && ok "info mlp fc1 row" || not_ok "info mlp fc1 row"
grep -q '^relu1 .* output$' "$TMP/out" && ok "info relu needs output" || not_ok "info relu needs output"
# A layer name with accents (two bytes each in UTF-8) takes as many
# columns as it has characters: the op column lines up on every row.
sed 's/"fc1"/"d\\u00e9j\\u00e0"/; s/"name": "relu1", "op": "relu"/"name": "relu1", "op": "relu", "in": "d\\u00e9j\\u00e0"/' \
  "$MLP" > "$TMP/accents.json"
expect_ok "info accented layer" "$OOCSIM" info -m "$TMP/accents.json" -b 2
# (Each accented letter made one ASCII byte, the op's byte offset is its
# column.)
sed "s/$(printf '\303\251')/e/g; s/$(printf '\303\240')/a/g" "$TMP/out" |
  awk '$2 == "linear" || $2 == "relu" { print index($0, " " $2 " ") }' |
  sort -u > "$TMP/cols"
[ "$(wc -l < "$TMP/cols")" -eq 1 ] && grep -q "$(printf '^d\303\251j\303\240 ')" "$TMP/out" &&
  ok "info: columns line up after an accented name" ||
  not_ok "info: columns line up after an accented name"
expect_ok "info mlp --json --set" "$OOCSIM" info -m "$MLP" --set hidden=10 --json
grep -q '"params":	214,' "$TMP/out" && ok "info --json params 214" || not_ok "info --json params 214"
grep -q '"hidden":	10' "$TMP/out" && ok "info --json settings" || not_ok "info --json settings"
for f in layers totals activation_mib_per_sample fwd_gflops_per_sample naive_peak_bytes bwd_needs; do
  grep -q "\"$f\":" "$TMP/out" && ok "info --json has $f" || not_ok "info --json has $f"
done
expect_ok "info resnet50 --json" "$OOCSIM" info -m resnet50 --json
grep -q '^	"params":	25557032,' "$TMP/out" && ok "resnet50 params 25557032" || not_ok "resnet50 params 25557032"
expect_ok "info resnet50 text" "$OOCSIM" info -m resnet50 -b 1
grep -q 'parameters *25557032$' "$TMP/out" && ok "resnet50 text params" || not_ok "resnet50 text params"

# errors: options
S="-m $MLP -b 4 --hw v100-pcie3 -p incore"
expect_fail "unknown option" "unknown option '--frobnicate'" "$OOCSIM" simulate $S --frobnicate
expect_fail "unknown short option" "unknown option '-z'" "$OOCSIM" info -m "$MLP" -z
expect_fail "size with a leading space" "--budget: ' 4GiB' is not a size" "$OOCSIM" simulate -m "$MLP" -b 4 --hw v100-pcie3 -p incore --budget " 4GiB"
expect_fail "batch with a leading space" "-b: ' 2' is not a batch size" "$OOCSIM" info -m "$MLP" -b " 2"
"$OOCSIM" -V >"$TMP/out" 2>&1
grep -Eq '^executor backends: (cpu|cpu, cuda|cuda|none \(configure found neither oneDNN nor CUDA\))$' "$TMP/out" &&
  ok "-V lists the executor backends" ||
  not_ok "-V: $(cat "$TMP/out")"
expect_fail "-V with more after it" "oocsim: -V takes nothing after it (got 'extra')" "$OOCSIM" -V extra
expect_fail "unknown global option" "oocsim: unknown option '--bogus' (before the command" "$OOCSIM" --bogus
expect_fail "option without value" "needs a value" "$OOCSIM" info -m
expect_fail "unknown command" "unknown command 'frob'" "$OOCSIM" frob
expect_fail "info without -m" "missing -m MODEL or --hw HW" "$OOCSIM" info
# info --hw: the effective profile; h2d 12.2 -> 24.4 doubles duplex 11.5
expect_ok "info --hw --hw-set" "$OOCSIM" info --hw v100-pcie3 --hw-set link.h2d_GBps=24.4
grep -q 'H2D, D2H pinned  *24.400, 12.900 GB/s' "$TMP/out" && ok "info --hw h2d" || not_ok "info --hw h2d"
grep -q 'H2D, D2H both at once  *23.000, 11.500 GB/s' "$TMP/out" && ok "info --hw duplex scaled" || not_ok "info --hw duplex scaled"
expect_ok "info --hw --json" "$OOCSIM" info --hw v100-pcie3 --hw-set link.h2d_GBps=24.4 --json
cp "$TMP/out" "$TMP/eff.json"
expect_ok "info --hw on its own output" "$OOCSIM" info --hw "$TMP/eff.json"
grep -q 'H2D, D2H both at once  *23.000, 11.500 GB/s' "$TMP/out" && ok "effective profile loads back" || not_ok "effective profile loads back"
expect_fail "info --hw-set without --hw" "--hw-set needs --hw HW" "$OOCSIM" info -m "$MLP" --hw-set link.h2d_GBps=1
# --hw alone prints the profile: a model's option there is not ignored.
expect_fail "info --hw with --set" "oocsim: --set needs -m MODEL (--hw alone prints the profile)" "$OOCSIM" info --hw v100-pcie3 --set bogus=1
expect_fail "info --hw with --precision" "oocsim: --precision needs -m MODEL" "$OOCSIM" info --hw v100-pcie3 --precision amp-fp16
expect_fail "info --hw with -b" "oocsim: -b needs -m MODEL" "$OOCSIM" info --hw v100-pcie3 -b 8
expect_fail "info -m --hw --json" "--json prints one document" "$OOCSIM" info -m "$MLP" --hw v100-pcie3 --json
expect_fail "info --hw bad key" "link.nosuch" "$OOCSIM" info --hw v100-pcie3 --hw-set link.nosuch=1
expect_fail "simulate without -m" "missing -m MODEL" "$OOCSIM" simulate -b 4 --hw v100-pcie3 -p incore
expect_fail "simulate without --hw" "missing --hw HW" "$OOCSIM" simulate -m "$MLP" -b 4 -p incore
expect_fail "simulate without -p" "missing -p PLANNER" "$OOCSIM" simulate -m "$MLP" -b 4 --hw v100-pcie3
expect_fail "simulate without -b" "missing -b BATCH" "$OOCSIM" simulate -m "$MLP" --hw v100-pcie3 -p incore
expect_fail "maxbatch without -p" "missing -p PLANNER" "$OOCSIM" maxbatch -m "$MLP" --hw v100-pcie3
expect_fail "compare without --hw" "missing --hw HW" "$OOCSIM" compare -m "$MLP" -b 4
expect_fail "plan without -o" "missing -o FILE" "$OOCSIM" plan $S
expect_fail "batch 0" "-b: batch 0 must be >= 1" "$OOCSIM" info -m "$MLP" -b 0
expect_fail "batch negative" "-b: batch -3 must be >= 1" "$OOCSIM" simulate -m "$MLP" -b -3 --hw v100-pcie3 -p incore
expect_fail "batch junk" "-b: '12x' is not a batch size" "$OOCSIM" info -m "$MLP" -b 12x
expect_fail "budget junk" "--budget" "$OOCSIM" simulate $S --budget lots
expect_fail "budget negative" "--budget" "$OOCSIM" simulate $S --budget -1GiB
expect_fail "budget zero" "--budget: '0' must be > 0" "$OOCSIM" simulate $S --budget 0
expect_fail "dtype" "--dtype: unknown dtype 'fp8'" "$OOCSIM" info -m "$MLP" --dtype fp8
expect_fail "format" "--format: unknown format 'xml'" "$OOCSIM" compare -m "$MLP" -b 4 --hw v100-pcie3 --format xml
expect_fail "set without =" "--set 'hidden': expected KEY=VALUE" "$OOCSIM" info -m "$MLP" --set hidden
expect_fail "opt without =" "--opt 'window': expected KEY=VALUE" "$OOCSIM" simulate $S --opt window
# A planner option's value out of range: the message gives the value, and
# for a scheduling budget the device budget it must stay within (the MLP
# on v100-pcie3: 15.50 GiB).
W="-m $MLP -b 4 --hw v100-pcie3 -p window"
expect_fail "window grads 3" "oocsim: planner 'window': option grads=3: must be 0 or 1" "$OOCSIM" simulate $W --opt grads=3
expect_fail "window window 0" "oocsim: planner 'window': option window=0: must be > 0" "$OOCSIM" simulate $W --opt window=0
expect_fail "window sched_budget 0" "oocsim: planner 'window': option sched_budget=0MiB: must be in (0, 15.50 GiB], the device budget" "$OOCSIM" simulate $W --opt sched_budget=0MiB
expect_fail "capacity sched_budget over" "oocsim: planner 'capacity': option sched_budget=16GiB: must be in (0, 15.50 GiB], the device budget" "$OOCSIM" simulate -m "$MLP" -b 4 --hw v100-pcie3 -p capacity --opt sched_budget=16GiB
expect_fail "hw-set without =" "--hw-set 'link.h2d_GBps': expected KEY=VALUE" "$OOCSIM" simulate $S --hw-set link.h2d_GBps
expect_fail "set empty key" "--set '=3': empty key" "$OOCSIM" info -m "$MLP" --set =3
expect_fail "unknown --set key" "nosuchkey" "$OOCSIM" info -m "$MLP" --set nosuchkey=3
expect_fail "unknown --hw-set key" "link.nosuch" "$OOCSIM" simulate $S --hw-set link.nosuch=3
expect_fail "unknown allocator" "--allocator" "$OOCSIM" simulate $S --allocator buddy
expect_fail "unknown allocator option" \
  "--allocator: allocator 'caching': unknown option 'frob' (valid: expandable_segments, max_split_size_mb, roundup_power2_divisions)" \
  "$OOCSIM" simulate $S --allocator caching:frob
expect_fail "allocator option of another policy" "allocator 'pool': unknown option 'expandable_segments' (it takes no options)" \
  "$OOCSIM" compare -m "$MLP" -b 4 --hw v100-pcie3 --allocator pool:expandable_segments
expect_fail "bad allocator option value" "allocator 'caching': max_split_size_mb must be an integer >= 20 (MiB), got '4'" \
  "$OOCSIM" simulate $S --allocator caching:max_split_size_mb=4
expect_fail "unknown planner" "-p" "$OOCSIM" simulate -m "$MLP" -b 4 --hw v100-pcie3 -p magic
expect_fail "unknown planner in compare" "magic" "$OOCSIM" compare -m "$MLP" -b 4 --hw v100-pcie3 -p incore,magic
expect_fail "unknown model" "nosuchmodel" "$OOCSIM" info -m nosuchmodel
expect_fail "unknown profile" "nosuchgpu" "$OOCSIM" simulate -m "$MLP" -b 4 --hw nosuchgpu -p incore
expect_fail "unknown planner option" "frob" "$OOCSIM" simulate $S --opt frob=1
expect_fail "compare option nobody takes" "--opt frob" "$OOCSIM" compare -m "$MLP" -b 4 --hw v100-pcie3 --opt frob=1
expect_fail "compare bad option value" "window: 'abc' is not a size" "$OOCSIM" compare -m "$MLP" -b 4 --hw v100-pcie3 --opt window=abc
expect_fail "minbudget option nobody takes" "oocsim: --opt frob: no chosen planner accepts this option" "$OOCSIM" minbudget -m "$MLP" -b 4 --hw v100-pcie3 -p window --opt frob=1
expect_fail "budget below working set" "budget" "$OOCSIM" simulate -m resnet50 -b 64 --hw v100-pcie3 -p incore --budget 1MiB
expect_fail "stray argument" "unexpected argument 'extra'" "$OOCSIM" info -m "$MLP" extra

# info's totals in adaptive units: a tiny model is not "0.000 GFLOP".
expect_ok "info tiny" "$OOCSIM" info -m "$top_srcdir/tests/data/models/tiny_cnn.json" -b 1
grep -qx '  forward per sample         17.47 KFLOP' "$TMP/out" &&
  grep -qx '  activation per sample      3.61 KiB' "$TMP/out" &&
  ! grep -q '0\.000 GFLOP\|0\.00 MiB' "$TMP/out" &&
  ok "info: tiny totals in adaptive units" || not_ok "info tiny: $(tail -6 "$TMP/out")"

# compare: --json is --format json, and the last of them wins.
C="compare -m alexnet -b 64 --hw v100-pcie3 -p vdnn --no-timing"
expect_ok "compare --json --format csv" "$OOCSIM" $C --json --format csv
head -c 6 "$TMP/out" | grep -q '^model,' && ok "--format after --json wins" ||
  not_ok "--format after --json wins: $(head -c 60 "$TMP/out")"
expect_ok "compare --format csv --json" "$OOCSIM" $C --format csv --json
head -c 1 "$TMP/out" | grep -q '^\[' && ok "--json after --format wins" ||
  not_ok "--json after --format wins: $(head -c 60 "$TMP/out")"

finish
