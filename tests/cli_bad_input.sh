#!/bin/sh
# tests/cli_bad_input.sh — issue 2 item 8 at the command line: every kind of
# bad model, profile, --set and batch input makes `oocsim` exit 1 with
# exactly one "oocsim: ..." line on stderr that names the file, the layer and
# the field at fault (expect_fail in lib.sh checks the status, the single
# line and the text). The loader-level cases are in tests/check_model.c and
# tests/check_hw.c; this script checks what a user sees.
#
# Each case was also run once by hand under
#   valgrind --leak-check=full --error-exitcode=9 $OOCSIM ...
# (clean: no error, no leak); that is not repeated here to keep
# `make check` fast.
. "$top_srcdir/tests/lib.sh"
D="$top_srcdir/tests/data/models"
H="$top_srcdir/tests/data/hw"
TINY="$D/tiny_cnn.json"

info_fail() { # NAME EXPECTED FILE [ARGS...]
  n=$1; w=$2; f=$3; shift 3
  expect_fail "$n" "oocsim: $f: $w" "$OOCSIM" info -m "$f" "$@"
}

# --- unreadable and malformed files ------------------------------------------
info_fail "malformed JSON" "malformed JSON near line 4, column 3" \
  "$D/bad_malformed.json"
info_fail "truncated JSON" \
  "malformed JSON near line 5, column 45 (unexpected end: truncated?)" \
  "$D/bad_truncated.json"
info_fail "binary garbage with a NUL byte" \
  "binary data (NUL byte), not text" "$D/bad_binary.json"
printf '\211PNG\r\n\032\n\377\376garbage' >"$TMP/garbage.json"
info_fail "binary garbage" "not UTF-8 text: byte 0x89 at line 1, column 1 (a model)" \
  "$TMP/garbage.json"
printf '{"name": "t\377x"}' >"$TMP/latin1.json"
info_fail "not UTF-8" "not UTF-8 text: byte 0xff at line 1, column 12 (a model)" \
  "$TMP/latin1.json"
printf '{"name": "ti\\u0000ny"}' >"$TMP/nul.json"
info_fail "an escaped NUL" \
  "a string holds \\u0000 (a NUL character) at line 1, column 13 (a model)" \
  "$TMP/nul.json"
# What cJSON lets through but RFC 8259 does not (found by fuzzing): a
# number with a leading zero, a control character as whitespace, a raw
# one inside a string (an ESC would reach the terminal in 'info').
printf '{"name": "t", "input": [03]}' >"$TMP/lead0.json"
info_fail "a leading zero" \
  "a number with a leading zero at line 1, column 25 (JSON numbers have none; write 7, not 07) (a model)" \
  "$TMP/lead0.json"
printf '{"name":\016"t"}' >"$TMP/ctl.json"
info_fail "a control character as whitespace" \
  "control character 0x0e at line 1, column 9 (JSON whitespace is space, tab, newline and carriage return) (a model)" \
  "$TMP/ctl.json"
printf '{"name": "t\033[31m"}' >"$TMP/esc.json"
info_fail "a raw control character in a string" \
  "a string holds control character 0x1b at line 1, column 12; write it escaped (a model)" \
  "$TMP/esc.json"
printf '{"name": "e", "input": [4], "layers": [{"name": "d", "op": "dropout", "p": 1e-01}]}' >"$TMP/exp0.json"
expect_ok "an exponent may have a leading zero (dropout p 1e-01)" \
  "$OOCSIM" info -m "$TMP/exp0.json" -b 1
printf '{"name": "a", "layers": [{"name": "x", "name": "y"}]}' >"$TMP/dup.json"
info_fail "a key twice" "key 'name' given twice (in 'layers')" "$TMP/dup.json"
: >"$TMP/empty.json"
info_fail "empty file" \
  "malformed JSON near line 1, column 1 (unexpected end: truncated?)" \
  "$TMP/empty.json"
printf '[1, 2, 3]\n' >"$TMP/array.json"
info_fail "not an object" "expected a JSON object at the top level" \
  "$TMP/array.json"
info_fail "no such file" "No such file or directory" "$TMP/no_such_model.json"

# --- layers: op, fields, shapes, references ----------------------------------
info_fail "unknown op" "layer 'c1': op: unknown op 'conv' (valid: conv2d, " \
  "$D/bad_op.json"
info_fail "missing field" "layer 'c1': out: missing" "$D/bad_missing.json"
info_fail "negative field" "layer 'fc': out: -3 must be at least 1" \
  "$D/bad_negative.json"
info_fail "overflowing field" \
  "layer 'fc': out: 1e+30 is out of range (at most 1099511627776)" \
  "$D/bad_overflow.json"
info_fail "overflowing size" "layer 'input': out: shape [1000000,1000000,1000] x batch 10000 overflows a 64-bit size" \
  "$D/bad_shape_overflow.json" -b 10000
info_fail "shape mismatch at add" \
  "layer 'res_add': in: shape [4,8,8] does not match [8,4,4]" \
  "$D/bad_add.json"
info_fail "shape mismatch at concat" \
  "layer 'cat': in: shape [4,4,4] does not match [4,8,8] except on axis 0" \
  "$D/bad_concat.json"
info_fail "unknown input reference" "layer 'sum': in: unknown layer 'c9'" \
  "$D/bad_unknown_in.json"
info_fail "cycle on itself" \
  "layer 'sum': in: 'sum' refers to the layer itself (a cycle)" \
  "$D/bad_cycle_self.json"
info_fail "cycle through a later layer" \
  "layer 'r1': in: 'r2' is defined after this layer (a cycle: layers must be in topological order)" \
  "$D/bad_cycle_later.json"
printf '{"name":"x","input":[3,8,8],"layers":[{"name":"c","op":"conv2d","out":4,"kernel":3},{"name":"c2","op":"conv2d","out":4,"kernel":1},{"name":"r","op":"relu","in":"c","in_place":true}]}' >"$TMP/inplace.json"
info_fail "in-place op over a tensor another backward needs" \
  "layer 'r': in_place: overwrites the input of 'c2', which its backward needs" \
  "$TMP/inplace.json"
printf '{"name":"x","input":[3,8,8],"layers":[{"name":"a\\nb","op":"conv2d","out":4}]}' >"$TMP/newline.json"
info_fail "newline in a layer name" "layer 'a?b': kernel: missing" \
  "$TMP/newline.json"

# --- --set, model names, batch, dtype ----------------------------------------
info_fail "unknown --set key" \
  "--set nope: unknown parameter (valid: image, width, classes)" "$TINY" \
  --set nope=3
info_fail "--set value not a number" "--set image: 'big' is not a number" \
  "$TINY" --set image=big
info_fail "--set value too small for the model" \
  "layer 'pool1': kernel: 2 is larger than the padded input 1 + 2*0 along spatial dim 0" \
  "$TINY" --set image=1
# An integer past 2^53 is echoed as given (it was read through a double,
# which made ...993 into ...992).
expect_fail "--set integer past 2^53" \
  "gpt2.json: layer 'embed': vocab: 9007199254740993 is out of range (at most 1099511627776)" \
  "$OOCSIM" info -m gpt2 --set vocab=9007199254740993
expect_fail "--set without =" "oocsim: --set 'image': expected KEY=VALUE" \
  "$OOCSIM" info -m "$TINY" --set image
expect_fail "unknown model name" \
  "oocsim: unknown model 'nope' (available: alexnet, " \
  "$OOCSIM" info -m nope
expect_fail "batch 0" "oocsim: -b: batch 0 must be >= 1" \
  "$OOCSIM" info -m "$TINY" -b 0
expect_fail "batch -3" "oocsim: -b: batch -3 must be >= 1" \
  "$OOCSIM" info -m "$TINY" -b -3
expect_fail "batch junk" "oocsim: -b: 'junk' is not a batch size" \
  "$OOCSIM" info -m "$TINY" -b junk
expect_fail "batch overflow" \
  "oocsim: -b: '99999999999999999999999' is not a batch size" \
  "$OOCSIM" info -m "$TINY" -b 99999999999999999999999
expect_fail "unknown dtype" "oocsim: --dtype: unknown dtype 'fp64'" \
  "$OOCSIM" info -m "$TINY" --dtype fp64

# --- hardware profiles ---------------------------------------------------------
S="-m $TINY -b 1 -p incore"
expect_fail "unknown profile name" \
  "oocsim: unknown hardware profile 'nope' (available: a100-pcie4, " \
  "$OOCSIM" simulate $S --hw nope
hw_fail() { # NAME EXPECTED FILE
  expect_fail "profile: $1" "oocsim: $H/$3: $2" "$OOCSIM" simulate $S --hw "$H/$3"
}
hw_fail "malformed JSON" "malformed JSON near line 42, column 24" malformed.json
hw_fail "truncated JSON" \
  "malformed JSON: unexpected end of file at line 25, column 17" truncated.json
hw_fail "unknown key" "link.h2d_GBs: unknown key (valid keys of link: " \
  unknown_key.json
hw_fail "missing field" "link.h2d_GBps: missing (required)" missing_h2d.json
hw_fail "negative field" "compute.hbm_GBps: must be > 0 (got -900)" \
  negative_hbm.json
hw_fail "wrong type" 'link.d2h_GBps: must be a number (got "fast")' \
  string_d2h.json
hw_fail "usable above total" \
  "memory.usable_GiB: must be <= memory.total_GiB (got 20 > 16)" \
  usable_gt_total.json
expect_fail "profile: unknown --hw-set key" \
  "oocsim: hwprofiles/v100-pcie3.json: --hw-set link.h2d: unknown key 'h2d'" \
  "$OOCSIM" simulate $S --hw v100-pcie3 --hw-set link.h2d=3
expect_fail "profile: negative --hw-set value" \
  "oocsim: hwprofiles/v100-pcie3.json: link.h2d_GBps: must be > 0 (got -3, set by --hw-set)" \
  "$OOCSIM" simulate $S --hw v100-pcie3 --hw-set link.h2d_GBps=-3

# Sizes and rates that round to 0 or to infinity, and times past the
# simulator's clock (issue: SIGFPE on a 0-byte VA granularity, "no limit"
# for 1e-300 GiB of host memory, wrapped int64 times with exit 0).
W="simulate -m resnet50 -b 512 --hw v100-pcie3 -p vdnn"
hw_set_fail() { # NAME EXPECTED SETTING
  expect_fail "profile: $1" "$2" "$OOCSIM" $W --hw-set "$3"
}
hw_set_fail "VA granularity that rounds to 0 bytes" \
  "allocator.va_granularity_MiB: rounds to 0 bytes (got 1e-07, set by --hw-set); it must be at least 1 byte" \
  allocator.va_granularity_MiB=1e-7
hw_set_fail "host memory that rounds to 0 bytes" \
  "host.memory_GiB: rounds to 0 bytes (got 1e-300, set by --hw-set)" \
  host.memory_GiB=1e-300
hw_set_fail "VA chunk that rounds to 0 bytes" \
  "allocator.va_chunk_MiB: rounds to 0 bytes (got 1e-09, set by --hw-set)" \
  allocator.va_chunk_MiB=1e-9
hw_set_fail "rate that is infinite in bytes/s" \
  "link.h2d_GBps: too large (got 1e+308, set by --hw-set)" \
  link.h2d_GBps=1e308
hw_set_fail "copies longer than the clock" \
  "simulator: time overflow: instruction 764 (H2D, layer 170) would end more than 146 years into the run; profile 'hwprofiles/v100-pcie3.json' has a value out of range (check link.h2d_GBps, link.duplex_h2d_GBps and link.latency_us)" \
  link.h2d_GBps=1e-12
hw_set_fail "launches longer than the clock" \
  "model resnet50: one iteration's compute time overflows: profile 'hwprofiles/v100-pcie3.json' compute.launch_us or its rates are out of range" \
  compute.launch_us=1e15
hw_set_fail "an algorithm slower than the clock" \
  "layer res2_0_conv2: compute time of algorithm winograd_nonfused overflows: profile 'hwprofiles/v100-pcie3.json' compute.conv_algorithms.winograd_nonfused is out of range" \
  compute.conv_algorithms.winograd_nonfused=9e15
hw_set_fail "allocator costs longer than the clock" \
  "time overflow: instruction" allocator.malloc_us_per_GiB=1e300
hw_set_fail "compute rate near 0" \
  "layer conv1: compute time overflows (FLOPs or bytes too large, or profile 'hwprofiles/v100-pcie3.json' rates and efficiencies too small)" \
  compute.fp32_TFLOPS=1e-300

# JSON too large or nested too deep: refused before the parser spends
# memory on it, with what is wrong instead of "malformed".
awk 'BEGIN { s = "{\"name\": \"x\", \"input\": [3], \"layers\": ";
             for (i = 0; i < 100; i++) s = s "["; for (i = 0; i < 100; i++)
             s = s "]"; print s "}" }' >"$TMP/deep.json"
expect_fail "model nested too deep" \
  "oocsim: $TMP/deep.json: nested too deep at line 1, column 102: more than 64 levels of arrays and objects (a model)" \
  "$OOCSIM" info -m "$TMP/deep.json"
head -c 70000000 /dev/zero | tr '\0' ' ' >"$TMP/big.json"
expect_fail "model file too large" \
  "oocsim: $TMP/big.json: too large: 66.76 MiB, at most 64.00 MiB for a model" \
  "$OOCSIM" info -m "$TMP/big.json"
rm -f "$TMP/big.json"
printf '{"a": %s1%s}\n' "$(printf '[%.0s' $(seq 20))" \
  "$(printf ']%.0s' $(seq 20))" >"$TMP/deephw.json"
expect_fail "profile nested too deep" \
  "oocsim: $TMP/deephw.json: nested too deep at line 1, column 22: more than 16 levels of arrays and objects (a profile)" \
  "$OOCSIM" simulate $S --hw "$TMP/deephw.json"

# Output that cannot be written is an error, not exit 0 (issue 9 item 12).
if [ -w /dev/full ]; then
  for c in "compare -m alexnet -b 64 --hw v100-pcie3 --format json" \
           "info -m alexnet -b 64" "simulate $S --hw v100-pcie3" "list models" \
           "maxbatch -m $top_srcdir/tests/data/cli_mlp.json --hw v100-pcie3 -p incore" \
           "--help" "simulate --help" "info -m resnet50 --json" \
           "import $top_srcdir/tests/data/onnx/cnn_residual.onnx"; do
    $OOCSIM $c >/dev/full 2>"$TMP/err"; rc=$?
    [ $rc -eq 1 ] && [ "$(wc -l <"$TMP/err")" -eq 1 ] &&
      grep -qx 'oocsim: writing standard output: No space left on device' \
        "$TMP/err" &&
      ok "stdout full: $c" || not_ok "stdout full: $c (rc=$rc, $(cat "$TMP/err"))"
  done
else
  ok "# SKIP no /dev/full"
fi

# Partial files (item 13): plan -o, --trace, --mem-csv and --timeline-csv
# are written beside their target and renamed, so a write that fails
# (here: the file size limit, as a full disk would) leaves the old file,
# no temporary file, and a message with the path and the reason.
mkdir "$TMP/part"
for o in "plan -o" "simulate --trace" "simulate --mem-csv" "simulate --timeline-csv"; do
  set -- $o
  f="$TMP/part/$(echo "$2" | tr -d -).out"
  echo OLD >"$f"
  (ulimit -f 1; trap '' XFSZ
   "$OOCSIM" "$1" -m alexnet -b 64 --hw v100-pcie3 -p vdnn "$2" "$f" >/dev/null 2>"$TMP/err"
   echo $? >"$TMP/rc")
  [ "$(cat "$TMP/rc")" = 1 ] && [ "$(cat "$f")" = OLD ] &&
    [ "$(ls "$TMP/part" | wc -l)" = "$(ls "$TMP/part"/*.out | wc -l)" ] &&
    [ "$(wc -l <"$TMP/err")" -eq 1 ] &&
    grep -q "^oocsim: $2: cannot write '$f': .*File too large\$" "$TMP/err" &&
    ok "$o: a failed write keeps the old file" || not_ok "$o: rc $(cat "$TMP/rc"), file $(head -c 20 "$f"), $(ls "$TMP/part"), $(cat "$TMP/err")"
done

# All or nothing: one output of a command that cannot be written (a full
# device, a full stdout) leaves every other output as it was.
if [ -w /dev/full ]; then
  mkdir "$TMP/aon"
  echo OLD >"$TMP/aon/t.json"
  "$OOCSIM" simulate -m alexnet -b 64 --hw v100-pcie3 -p vdnn --trace "$TMP/aon/t.json" \
    --timeline-csv "$TMP/aon/tl.csv" --mem-csv /dev/full >/dev/null 2>"$TMP/err"; rc=$?
  [ $rc -eq 1 ] && [ "$(cat "$TMP/aon/t.json")" = OLD ] && [ "$(ls "$TMP/aon")" = t.json ] &&
    grep -qx "oocsim: --mem-csv: cannot write '/dev/full': No space left on device" "$TMP/err" &&
    ok "simulate: --mem-csv full keeps --trace's old file, writes no --timeline-csv" ||
    not_ok "simulate --mem-csv /dev/full: rc $rc, $(ls "$TMP/aon"), $(cat "$TMP/err")"
  "$OOCSIM" simulate -m alexnet -b 64 --hw v100-pcie3 -p vdnn --trace "$TMP/aon/t.json" \
    --mem-csv "$TMP/aon/m.csv" --json >/dev/full 2>"$TMP/err"; rc=$?
  [ $rc -eq 1 ] && [ "$(cat "$TMP/aon/t.json")" = OLD ] && [ "$(ls "$TMP/aon")" = t.json ] &&
    grep -qx 'oocsim: writing standard output: No space left on device' "$TMP/err" &&
    ok "simulate: stdout full writes no --trace or --mem-csv" ||
    not_ok "simulate stdout full: rc $rc, $(ls "$TMP/aon"), $(cat "$TMP/err")"
  "$OOCSIM" plan -m alexnet -b 64 --hw v100-pcie3 -p vdnn -o "$TMP/aon/p.json" >/dev/full 2>"$TMP/err"; rc=$?
  [ $rc -eq 1 ] && [ ! -e "$TMP/aon/p.json" ] && [ "$(ls "$TMP/aon")" = t.json ] &&
    [ "$(wc -l <"$TMP/err")" -eq 1 ] &&
    ok "plan: stdout full writes no plan file" || not_ok "plan stdout full: rc $rc, $(ls "$TMP/aon"), $(cat "$TMP/err")"
fi

# Consistency (item 16): a budget no batch fits is refused by maxbatch as
# by simulate; a budget above the device's memory is refused everywhere
# with how to emulate a larger device; no command prints the short usage.
expect_fail "maxbatch --budget 1" \
  "oocsim: --budget: budget 1 B is below the working set of step 'bwd pool1' (persistent 329.23 MiB + 588.00 MiB)" \
  "$OOCSIM" simulate -m resnet50 -b 64 --hw v100-pcie3 -p window --budget 1
expect_fail "maxbatch --budget 1" "oocsim: --budget: budget 1 B is below the working set of step" \
  "$OOCSIM" maxbatch -m resnet50 --hw v100-pcie3 -p window --budget 1
BIG="exceeds the 16.00 GiB of profile 'v100-pcie3' (to emulate a larger device, raise memory.total_GiB and memory.usable_GiB with --hw-set)"
expect_fail "simulate --budget 1000TiB" "oocsim: --budget: budget 1000.00 TiB $BIG" \
  "$OOCSIM" simulate $S --hw v100-pcie3 --budget 1000TiB
expect_fail "maxbatch --budget 2^34 + 1" "oocsim: --budget: budget 16.00 GiB" \
  "$OOCSIM" maxbatch -m alexnet --hw v100-pcie3 -p vdnn --budget 17179869185
# A SIZE is decimal digits (a fraction allowed) and a unit: not what else
# strtod reads.
for b in 0x10 1e9 inf 5. .5; do
  expect_fail "--budget $b" \
    "oocsim: --budget: '$b' is not a size (e.g. 16GiB, 8GB, 512MiB)" \
    "$OOCSIM" simulate -m alexnet -b 16 --hw v100-pcie3 -p vdnn --budget "$b"
done
expect_fail "--opt window=0x10" \
  "window: '0x10' is not a size (e.g. 16GiB, 8GB, 512MiB)" \
  "$OOCSIM" simulate -m alexnet -b 16 --hw v100-pcie3 -p window \
  --opt window=0x10
expect_ok "--budget 5.5GiB" "$OOCSIM" simulate -m alexnet -b 16 \
  --hw v100-pcie3 -p vdnn --budget 5.5GiB
expect_fail "compare --budget 20GiB" "oocsim: --budget: budget 20.00 GiB $BIG" \
  "$OOCSIM" compare -m alexnet -b 64 --hw v100-pcie3 --budget 20GiB
expect_fail "plan --budget 20GiB" "oocsim: --budget: budget 20.00 GiB $BIG" \
  "$OOCSIM" plan -m alexnet -b 64 --hw v100-pcie3 -p vdnn --budget 20GiB -o "$TMP/p.json"
expect_fail "sweep --budget 20GiB" "--budget: budget 20.00 GiB $BIG" \
  "$OOCSIM" sweep -m alexnet -b 64 --hw v100-pcie3 -p vdnn --budget 20GiB -o "$TMP/swb"
expect_ok "a larger device with --hw-set" "$OOCSIM" simulate $S --hw v100-pcie3 --budget 20GiB \
  --hw-set memory.total_GiB=32 --hw-set memory.usable_GiB=31
expect_ok "budget up to the total memory" "$OOCSIM" simulate $S --hw v100-pcie3 --budget 16GiB
# Each tensor fits 64 bits but their sum need not: a model's tensors may
# come to at most 64 PiB (OOC_MODEL_MAX_TOTAL_BYTES), refused at load,
# before a timeline or a planner's sum wraps (info used to print 0 B of
# weights for the eight-layer model below, and simulate an in-core time of
# 0 s; the ResNet-50 overflowed the lower bound's timeline).
expect_fail "a model whose tensors come to more than 64 PiB" \
  "models/resnet50.json: at batch 64 its tensors come to 10677013.05 TiB (activations 10663643.48 TiB, weights, gradients and optimizer state 292.48 MiB, largest workspace 13369.57 TiB), more than the 65536.00 TiB oocsim can count" \
  "$OOCSIM" simulate -m resnet50 -b 64 --hw v100-pcie3 -p window --set image=10000000
L='{"op": "linear", "out": 1073741824, "bias": false}, {"op": "linear", "out": 536870912, "bias": false}'
printf '{"name": "t", "input": [536870912], "layers": [%s, %s, %s, %s]}\n' "$L" "$L" "$L" "$L" >"$TMP/psum.json"
expect_fail "weights summing past 64 bits" \
  "oocsim: $TMP/psum.json: at batch 1 its tensors come to 16777216.00 TiB (activations 26.00 GiB, weights, gradients and optimizer state 16777216.00 TiB, largest workspace 0 B), more than the 65536.00 TiB oocsim can count" \
  "$OOCSIM" info -m "$TMP/psum.json"
# One layer's weights past 64 bits: named as its parameters, not its
# (8 GiB) output.
echo '{"name": "t", "input": [1073741824], "layers": [{"op": "linear", "out": 1073741824}]}' >"$TMP/bigw.json"
expect_fail "a layer whose parameters overflow" \
  "oocsim: $TMP/bigw.json: layer 'linear_1': its 1152921505680588800 parameters overflow a 64-bit size" \
  "$OOCSIM" info -m "$TMP/bigw.json" -b 2
# -o - means standard output to a user; a plan file is a file: refused,
# and no file called '-' made.
(cd "$TMP" && "$OOCSIM" plan -m alexnet -b 8 --hw v100-pcie3 -p incore -o - >"$TMP/out" 2>"$TMP/err"); rc=$?
[ $rc -eq 1 ] && [ ! -e "$TMP/-" ] &&
  grep -qxF "oocsim: -o: '-': this output is a file, not standard output; name one ('./-' for a file called '-')" "$TMP/err" &&
  ok "plan -o - refused" || not_ok "plan -o - (rc=$rc): $(cat "$TMP/err")"
"$OOCSIM" >"$TMP/out" 2>"$TMP/err"; rc=$?
[ $rc -eq 1 ] && [ "$(wc -l <"$TMP/err")" -eq 2 ] && [ ! -s "$TMP/out" ] &&
  grep -qx 'Usage: oocsim COMMAND \[OPTIONS\]' "$TMP/err" &&
  ok "no command: short usage" || not_ok "no command (rc=$rc): $(cat "$TMP/err")"

# Typos in lists and specs are errors, not a shorter list or no option.
expect_fail "compare -p with a trailing comma" "oocsim: -p 'vdnn,': empty item" \
  "$OOCSIM" compare -m alexnet -b 8 --hw v100-pcie3 -p vdnn,
expect_fail "an allocator spec ending in ':'" \
  "oocsim: --allocator: allocator 'caching': no option after ':' in 'caching:' (give one, or the name alone)" \
  "$OOCSIM" simulate -m alexnet -b 8 --hw v100-pcie3 -p vdnn --allocator caching:
expect_fail "--budget -0" "oocsim: --budget: size '-0' has a minus sign" \
  "$OOCSIM" simulate -m alexnet -b 8 --hw v100-pcie3 -p vdnn --budget -0
expect_fail "--budget -1" "oocsim: --budget: size '-1' is negative" \
  "$OOCSIM" simulate -m alexnet -b 8 --hw v100-pcie3 -p vdnn --budget -1

# Calibrated times each in range whose sum is not: the message names the
# calibration table, not the launch overhead that did not count.
MLP="$top_srcdir/tests/data/cli_mlp.json"
{ "$OOCSIM" info --hw v100-pcie3 --json | sed '$d'
  printf '  ,"calibration": {"layers": [\n'
  printf '    {"sig": "linear b=4 in=16 out=8 bias=1 fp32", "fwd_us": 4.6e15},\n'
  printf '    {"sig": "linear b=4 in=8 out=4 bias=1 fp32", "fwd_us": 4.6e15}]}\n}\n'
} >"$TMP/calbig.json"
expect_fail "calibrated times whose sum overflows" \
  "model cli_mlp: one iteration's compute time overflows: profile '$TMP/calbig.json' calibration.layers times are (their sum is) out of range" \
  "$OOCSIM" simulate -m "$MLP" -b 4 --hw "$TMP/calbig.json" -p incore

# A VA chunk larger than the device: every va plan would run out of
# memory with a message about small segments; the profile is refused.
expect_fail "a VA chunk larger than the device" \
  "allocator.va_chunk_MiB: must be at most the device's memory.total_GiB (got 1e+12 MiB > 16 GiB)" \
  "$OOCSIM" simulate -m alexnet -b 8 --hw v100-pcie3 -p vdnn --allocator va \
  --hw-set allocator.va_chunk_MiB=1e12
expect_fail "an empty model name" \
  "oocsim: empty model name (give a name from 'oocsim list models' or a JSON path)" \
  "$OOCSIM" info -m ''
expect_fail "an empty profile name" \
  "oocsim: empty profile name (give a name from 'oocsim list hw' or a JSON path)" \
  "$OOCSIM" info --hw ''
expect_fail "a budget under a byte" "oocsim: --budget: '0.1' is a fraction of a byte; give a unit (0.1GiB) or whole bytes" \
  "$OOCSIM" simulate -m alexnet -b 8 --hw v100-pcie3 -p vdnn --budget 0.1
# Found by fuzzing: '1.5' was taken as 2 bytes, '5 ' as 5, and
# --link-GBps read hexadecimal and leading spaces.
expect_fail "a fraction of a byte" "oocsim: --budget: '1.5' is a fraction of a byte; give a unit (1.5GiB) or whole bytes" \
  "$OOCSIM" simulate -m alexnet -b 8 --hw v100-pcie3 -p vdnn --budget 1.5
expect_fail "a size ending with a space" "oocsim: --budget: '5 ' ends with a space" \
  "$OOCSIM" simulate -m alexnet -b 8 --hw v100-pcie3 -p vdnn --budget '5 '
expect_fail "a hexadecimal link rate" "oocsim: --link-GBps: '0x10' must be a number of GB/s in [0.01, 1e6]" \
  "$OOCSIM" exec "$TMP/none.json" --link-GBps 0x10

finish
