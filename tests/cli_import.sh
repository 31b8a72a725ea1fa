#!/bin/sh
# tests/cli_import.sh — oocsim import: ONNX models (tests/data/onnx, written
# by tests/onnx/make-test-models.py and tests/onnx/export-torchvision.py)
# as oocsim models: parameter counts by hand and against the zoo, the
# layers made, and one clear error per bad file. Skipped when this oocsim
# was built without protobuf-c.
. "$top_srcdir/tests/lib.sh"
D="$top_srcdir/tests/data/onnx"

if "$OOCSIM" import "$D/cnn_residual.onnx" -o "$TMP/probe.json" 2>&1 |
   grep -q "built without ONNX import"; then
  echo "oocsim was built without ONNX import (no protobuf-c): skipping"
  exit 77
fi

# params: `oocsim info` total parameters of model file $1
params() { "$OOCSIM" info -m "$1" -b 1 | awk '/^  parameters/ { print $2 }'; }
total() { "$OOCSIM" info -m "$1" -b 1 | grep "^  $2" | sed 's/  */ /g'; }

# A CNN with a residual add: conv1 3x8x3x3 + bias 8 = 224, batch norm 16,
# conv2 8x8x3x3 = 576, fc 10x8 + 10 = 90: 906.
expect_ok "import cnn_residual" "$OOCSIM" import "$D/cnn_residual.onnx" -o "$TMP/cnn.json"
# -o - is standard output, as no -o is; no file called '-' appears.
(cd "$TMP" && "$OOCSIM" import "$D/cnn_residual.onnx" -o - >"$TMP/dash.json" 2>/dev/null)
cmp -s "$TMP/dash.json" "$TMP/cnn.json" && [ ! -e "$TMP/-" ] &&
  ok "import -o - writes the model to standard output" || not_ok "import -o -"
[ "$(params "$TMP/cnn.json")" = 906 ] && ok "cnn: 906 parameters" || not_ok "cnn: $(params "$TMP/cnn.json") parameters"
grep -q '10 nodes (producer oocsim-tests, opset 17) -> 12 layers, 0 nodes folded' "$TMP/err" &&
  grep -q 'ops: Conv 2, BatchNormalization 1, Relu 2, Add 1, MaxPool 1, GlobalAveragePool 1, Flatten 1, Gemm 1' "$TMP/err" &&
  ok "cnn: the summary counts the ops" || not_ok "cnn summary: $(cat "$TMP/err")"
# A file name that is not UTF-8 (Latin-1 e-acute): the model's name and
# description come from it, and the model written must still load.
L=$(printf '%s/caf\351.onnx' "$TMP")
cp "$D/cnn_residual.onnx" "$L"
expect_ok "import from a Latin-1 file name" "$OOCSIM" import "$L" -o "$TMP/lat.json"
expect_ok "its model loads" "$OOCSIM" info -m "$TMP/lat.json"
"$OOCSIM" info -m "$TMP/cnn.json" -b 2 >"$TMP/info" 2>&1
grep -q '^residual  *add  *8x16x16 ' "$TMP/info" && grep -q '^loss  *softmax_ce ' "$TMP/info" &&
  grep -q '^pool  *maxpool  *8x8x8 ' "$TMP/info" &&
  ok "cnn: layers, shapes and the loss" || not_ok "cnn layers: $(cat "$TMP/info")"
expect_ok "cnn: simulate" "$OOCSIM" simulate -m "$TMP/cnn.json" -b 8 --hw v100-pcie3 -p incore

# To standard output by default, the same model; --name; --no-loss.
"$OOCSIM" import "$D/cnn_residual.onnx" >"$TMP/stdout.json" 2>/dev/null
cmp -s "$TMP/stdout.json" "$TMP/cnn.json" && ok "stdout = -o file" || not_ok "stdout differs from -o"
"$OOCSIM" import "$D/cnn_residual.onnx" --name mycnn --no-loss -o "$TMP/noloss.json" 2>/dev/null
grep -q '"name":[[:space:]]*"mycnn"' "$TMP/noloss.json" && ! grep -q softmax_ce "$TMP/noloss.json" &&
  ok "--name and --no-loss" || not_ok "--name/--no-loss: $(head -5 "$TMP/noloss.json")"

# A transformer block, attention written out: embedding 100x32 = 3200,
# two layer norms 64 each, q, k, v, o projections 4 x (32x32 + 32) =
# 4224, MLP 32x64 + 64 + 64x32 + 32 = 4192, vocabulary 32x100 = 3200:
# 14,944. Reshapes and transposes fold into views; the scaled scores are
# one softmax's input.
expect_ok "import transformer_block" "$OOCSIM" import "$D/transformer_block.onnx" -o "$TMP/tb.json"
[ "$(params "$TMP/tb.json")" = 14944 ] && ok "transformer: 14944 parameters" || not_ok "transformer: $(params "$TMP/tb.json")"
grep -q '31 nodes .* -> 26 layers, 15 nodes folded' "$TMP/err" && ok "transformer: 15 nodes folded" || not_ok "transformer summary: $(cat "$TMP/err")"
"$OOCSIM" info -m "$TMP/tb.json" -b 2 >"$TMP/info" 2>&1
grep -q '^scores  *matmul  *4x16x16 ' "$TMP/info" && grep -q '^softmax  *softmax  *4x16x16 ' "$TMP/info" &&
  grep -q '^q_t  *reshape  *4x16x8  *0 B' "$TMP/info" &&
  ok "transformer: heads as views, scores, softmax" || not_ok "transformer layers: $(cat "$TMP/info")"

# Shape arithmetic, folded: x.view(x.size(0), -1) as torch exports it
# (Shape, Gather, Unsqueeze, Concat, Cast, Reshape): the cnn's layers and
# parameters.
expect_ok "import cnn_view" "$OOCSIM" import "$D/cnn_view.onnx" -o "$TMP/view.json"
[ "$(params "$TMP/view.json")" = 906 ] && ok "cnn_view: 906 parameters" || not_ok "cnn_view: $(params "$TMP/view.json")"
grep -q '15 nodes .* -> 12 layers, 6 nodes folded' "$TMP/err" && ok "cnn_view: the shape arithmetic folded" || not_ok "cnn_view summary: $(cat "$TMP/err")"

# A ViT stem as torch exports it: patches by a 4x4 convolution 3x8x4x4 +
# 8 = 392; the reshape to 16 tokens through Shape arithmetic; the class
# token expanded over the batch (ConstantOfShape, Mul, Equal, Where,
# Expand) and put first, learned positions added: one tokens layer,
# (1 + 17) x 8 = 144; layer norm 16; head 136 x 10 + 10 = 1370: 1,922.
expect_ok "import vit_stem" "$OOCSIM" import "$D/vit_stem.onnx" -o "$TMP/vit.json"
[ "$(params "$TMP/vit.json")" = 1922 ] && ok "vit_stem: 1922 parameters" || not_ok "vit_stem: $(params "$TMP/vit.json")"
"$OOCSIM" info -m "$TMP/vit.json" -b 2 >"$TMP/info" 2>&1
grep -q '^cat  *tokens  *17x8 ' "$TMP/info" && grep -q '^ln  *layernorm  *17x8 ' "$TMP/info" &&
  ok "vit_stem: class token and positions as one tokens layer" || not_ok "vit_stem layers: $(cat "$TMP/info")"

# A stride-2 transposed convolution with output_padding 1: 8x8 -> 16x16
# ((8 - 1) x 2 - 2 + 3 + 1); weight 4x2x3x3 + bias 2 = 74.
expect_ok "import deconv" "$OOCSIM" import "$D/deconv.onnx" -o "$TMP/deconv.json"
[ "$(params "$TMP/deconv.json")" = 74 ] && ok "deconv: 74 parameters" || not_ok "deconv: $(params "$TMP/deconv.json")"
"$OOCSIM" info -m "$TMP/deconv.json" -b 2 >"$TMP/info" 2>&1
grep -q '^up  *deconv2d  *2x16x16 ' "$TMP/info" &&
  ok "deconv: output_padding read, 2x16x16" || not_ok "deconv layers: $(cat "$TMP/info")"

# x.view(x.size(0), -1) on the graph's input itself: the Shape arithmetic
# reads the input's shape before any layer exists (an error once: "the
# layers imported so far do not load: layers: no layers"). 48 x 10 + 10.
expect_ok "import flat_input" "$OOCSIM" import "$D/flat_input.onnx" -o "$TMP/flat.json"
[ "$(params "$TMP/flat.json")" = 490 ] && ok "flat_input: 490 parameters" || not_ok "flat_input: $(params "$TMP/flat.json")"
grep -q '6 nodes .* -> 4 layers, 5 nodes folded' "$TMP/err" && ok "flat_input: the view on the input folded" || not_ok "flat_input summary: $(cat "$TMP/err")"

# A real export: torchvision resnet50 in training mode (batch norm kept):
# the zoo's parameters and forward FLOPs; with in-place ReLU and add set
# (ONNX does not record them), the zoo's activation memory too.
expect_ok "import resnet50 (torch.onnx.export)" "$OOCSIM" import "$D/resnet50.onnx" -o "$TMP/r50.json"
[ "$(params "$TMP/r50.json")" = 25557032 ] && ok "resnet50: 25,557,032 parameters (the zoo's)" || not_ok "resnet50: $(params "$TMP/r50.json")"
[ "$(total "$TMP/r50.json" forward)" = "$(total resnet50 forward)" ] && ok "resnet50: the zoo's forward FLOPs" ||
  not_ok "resnet50 FLOPs: $(total "$TMP/r50.json" forward) vs $(total resnet50 forward)"
sed 's/"name":[[:space:]]*"pytorch",/"name": "pytorch", "relu_in_place": true, "add_in_place": true,/' "$TMP/r50.json" >"$TMP/r50ip.json"
[ "$(total "$TMP/r50ip.json" activation)" = "$(total resnet50 activation)" ] && ok "resnet50 in place: the zoo's activation memory" ||
  not_ok "resnet50 activations: $(total "$TMP/r50ip.json" activation) vs $(total resnet50 activation)"

# A real transformer export: Hugging Face GPT-2 small through the dynamo
# exporter (tests/onnx/export-gpt2.py: batch 2, seq 128, eager attention,
# dropout off). Its attention arrives node by node (Split, per-head
# Reshape and Transpose, q k^T, scale, causal mask from boolean
# constants, softmax, p v) and GELU in its tanh form; the positions are a
# Gather of their table at constant indices and the LM head a MatMul by
# the token table transposed. Imported, it is the zoo's gpt2 at seq 128:
# its parameters (123,751,680: HF's count with n_positions 128, the head
# tied), FLOPs and activation memory.
expect_ok "import gpt2 small (dynamo export)" "$OOCSIM" import "$D/gpt2_small_s128.onnx" -o "$TMP/g2.json"
grep -q '455 nodes (producer pytorch [^,]*, opset 18) -> 125 layers, 332 nodes folded' "$TMP/err" &&
  ok "gpt2: 455 nodes -> 125 layers" || not_ok "gpt2 summary: $(head -n 1 "$TMP/err")"
[ "$(params "$TMP/g2.json")" = 123751680 ] && ok "gpt2: 123,751,680 parameters" || not_ok "gpt2: $(params "$TMP/g2.json") parameters"
for what in parameters forward activation; do
  [ "$("$OOCSIM" info -m "$TMP/g2.json" -b 2 | grep "^  $what" | sed 's/  */ /g')" = \
    "$("$OOCSIM" info -m gpt2 --set seq=128 -b 2 | grep "^  $what" | sed 's/  */ /g')" ] &&
    ok "gpt2: the zoo's $what" || not_ok "gpt2 $what: $("$OOCSIM" info -m "$TMP/g2.json" -b 2 | grep "^  $what")"
done
n_attn=$(grep -c '"op":[[:space:]]*"attention"' "$TMP/g2.json")
n_causal=$(grep -c '"causal":[[:space:]]*true' "$TMP/g2.json")
n_tied=$(grep -c '"tied":[[:space:]]*true' "$TMP/g2.json")
n_gelu=$(grep -c '"op":[[:space:]]*"gelu"' "$TMP/g2.json")
[ "$n_attn $n_causal $n_gelu $n_tied" = "12 12 12 1" ] && ok "gpt2: 12 causal attentions, 12 gelu, a tied head" ||
  not_ok "gpt2: attention $n_attn, causal $n_causal, gelu $n_gelu, tied $n_tied"

# relu_chain N FILE: an ONNX model of N Relu nodes in a chain, r0 -> r1
# -> ... -> rN on [batch, 8], opset 17, written byte by byte (protobuf
# wire format: tag, length, bytes; only the graph's length needs more
# than one byte) so that no Python is needed.
varint() {
  v=$1
  while [ "$v" -ge 128 ]; do
    printf "\\$(printf %o $(( (v & 127) | 128 )))"; v=$((v >> 7))
  done
  printf "\\$(printf %o "$v")"
}
relu_chain() {
  LC_ALL=C awk -v n="$1" 'BEGIN { for (k = 0; k < n; k++) {
    a = "r" k; b = "r" (k + 1)
    printf "%c%c%c%c%s%c%c%s%c%cRelu", 10, length(a) + length(b) + 10,
      10, length(a), a, 18, length(b), b, 34, 4 } }' >"$2.nodes"
  last="r$1"
  glen=$(( $(wc -c <"$2.nodes") + 23 + 4 + ${#last} ))
  { printf '\010\010\102\002\020\021\072'; varint "$glen"
    cat "$2.nodes"
    # input r0: float [N, 8]; output rN
    printf '\132\025\012\002r0\022\017\012\015\010\001\022\011'
    printf '\012\003\022\001N\012\002\010\010'
    printf '\142'; varint $(( 2 + ${#last} )); printf '\012'
    varint "${#last}"; printf '%s' "$last"; } >"$2"
}

# A long graph imports (once quadratic in the nodes: the name lookups and
# a reload of every layer so far for each shape).
relu_chain 20000 "$TMP/chain.onnx"
expect_ok "import a chain of 20,000 Relu nodes" "$OOCSIM" import "$TMP/chain.onnx" -o "$TMP/chain.json"
grep -q '20000 nodes (producer unknown, opset 17) -> 20002 layers' "$TMP/err" &&
  ok "chain: 20,000 relu layers" || not_ok "chain summary: $(head -c 300 "$TMP/err")"

# Bad files: one line each, naming the file and what is wrong.
expect_fail "truncated" "truncated.onnx: not an ONNX model (the protobuf does not parse: truncated or another format?)" \
  "$OOCSIM" import "$D/truncated.onnx" -o "$TMP/x.json"
[ ! -e "$TMP/x.json" ] && ok "nothing written on error" || not_ok "a file was written on error"
# A model's name may not hold a control character (it would reach the
# terminal in 'info').
expect_fail "--name with a control character" "oocsim: --name: holds control character 0x01 (a model's name holds none)" \
  "$OOCSIM" import "$D/cnn_residual.onnx" --name "$(printf 'a\001b')" -o "$TMP/ctl.json"
# A stream of zeros is no protobuf: refused at its first byte, not after
# reading it to the 2 GiB limit (fuzzing: 2.3 GB of memory first).
expect_fail "/dev/zero" "/dev/zero: not an ONNX model (it starts with a zero byte, which no protobuf does)" \
  "$OOCSIM" import /dev/zero -o "$TMP/zero.json"
expect_fail "unknown op" "unknown_op.onnx: 1 node has no oocsim op: node 'relu2' (Erf)" \
  "$OOCSIM" import "$D/unknown_op.onnx"
# Pad (opset 9: its "value" a FLOAT) has no oocsim op: that error, not one
# about the attribute's type, which only Constant's "value" must have.
expect_fail "unknown op with a FLOAT value" "pad_o9.onnx: 1 node has no oocsim op: node 'relu2' (Pad)" \
  "$OOCSIM" import "$D/pad_o9.onnx"
expect_fail "a Split no attention reads" "split_plain.onnx: 1 node has no oocsim op: node 'split' (Split)" \
  "$OOCSIM" import "$D/split_plain.onnx"
expect_fail "two nodes write one value" "dup_output.onnx: node 'relu1' (Relu) and node 1 (Sigmoid) both write 'h' (each value has one writer)" \
  "$OOCSIM" import "$D/dup_output.onnx"
expect_fail "an opset before 7" "opset6.onnx: opset 6 of the default domain is not supported (oocsim import reads opsets 7 to 23: export with one of them)" \
  "$OOCSIM" import "$D/opset6.onnx"
expect_fail "an opset after 23" "opset24.onnx: opset 24 of the default domain is not supported" \
  "$OOCSIM" import "$D/opset24.onnx"
expect_fail "no opset_import" "no_opset.onnx: no opset_import for the default domain (the ONNX spec requires it; oocsim import reads opsets 7 to 23)" \
  "$OOCSIM" import "$D/no_opset.onnx"
expect_fail "a node of another domain" "custom_domain.onnx: node 'relu2' (Relu): domain 'com.microsoft' is not supported (oocsim import reads the default ONNX domain only)" \
  "$OOCSIM" import "$D/custom_domain.onnx"
# Softmax with no axis: over dims 1 and 2 as one before opset 13 (no
# oocsim op), over the last from 13.
expect_fail "Softmax's default axis before opset 13" "softmax_o12.onnx: node 'sm' (Softmax): only a softmax over the last dim is supported (before opset 13 its axis is 1 by default: the dims from 1 on as one)" \
  "$OOCSIM" import "$D/softmax_o12.onnx"
expect_ok "Softmax's default axis from opset 13" "$OOCSIM" import "$D/softmax_o13.onnx" -o "$TMP/sm.json"
# Weights that do not fit the ops that read them, and malformed values.
for c in \
  "conv_weight|node 'conv1' (Conv): weight 'w1' has shape [8,4,3,3] but the input has 3 channels (group 1)" \
  "conv_bias|node 'conv1' (Conv): bias 'b1' has shape [9] but the weight has 8 output channels" \
  "gemm_weight|node 'fc' (Gemm): weight 'wf' has shape [10,9] but the input has 8 features (its last dim) (transB 1: [out, in])" \
  "gemm_transb|node 'fc' (Gemm): weight 'wf' has shape [10,8] but the input has 8 features (its last dim) (transB 0: [in, out])" \
  "gemm_bias|node 'fc' (Gemm): bias 'bf' has shape [11] but the weight has 10 output features" \
  "matmul_weight|node 'q_proj' (MatMul): weight 'wq' has shape [31,32] but the input has 32 features (its last dim)" \
  "bn_scale|node 'bn1' (BatchNormalization): scale 'g' has shape [7] but the input has 8 channels" \
  "ln_axis_scale|node 'ln1' (LayerNormalization): scale 'ln1_g' has shape [31] but the input has 32 features (its last dim)" \
  "neg_dim|initialiser 'w2' has shape [8,-8,3,3]: dim 1 is negative" \
  "huge_dims|initialiser 'w2' has shape [1099511627776,1099511627776,1099511627776]: more than 2^62 elements" \
  "attr_type|node 'conv1' (Conv): attribute 'group' is a FLOAT, expected an INT" \
  "init_twice|initialiser 'w1' is given twice" \
  "pool_strides|node 'pool' (MaxPool): strides: expected 2 values, one per spatial dim, got 3" \
  "conv_dilations|node 'conv1' (Conv): dilations: expected 2 values, one per spatial dim, got 3" \
  "residual_inputs|node 'residual' (Add): Add takes at most 2 inputs, got 3" \
  "conv_attr|node 'conv1' (Conv): 'pad' is not an attribute of Conv" \
  "bn1_inputs|node 'bn1' (BatchNormalization): BatchNormalization takes at most 5 inputs, got 6" \
  "no_inputs|1 node has no oocsim op: node 'relu2' (Pow)" \
  "deconv_outpad|node 'up' (ConvTranspose): output_padding: expected 2 values, one per spatial dim, got 1" \
  "deconv_oshape|node 'up' (ConvTranspose): output_shape is not supported (export the transposed convolution with pads and output_padding)"; do
  f=bad_${c%%|*}.onnx
  expect_fail "bad: ${c%%|*}" "$f: ${c#*|}" "$OOCSIM" import "$D/$f" -o "$TMP/bad.json"
  [ ! -e "$TMP/bad.json" ] || not_ok "bad: ${c%%|*}: a file was written"
done
expect_fail "a Concat along the batch" "concat_axis0.onnx: node 'cat' (Concat): concatenation along the batch dim is not supported" \
  "$OOCSIM" import "$D/concat_axis0.onnx"
expect_fail "a Concat axis out of range" "concat_axis99.onnx: node 'cat' (Concat): axis 99 is out of range [-2, 1] for rank 2" \
  "$OOCSIM" import "$D/concat_axis99.onnx"
expect_fail "an input dim of 0" "zero_dim.onnx: input 'x' dim 2 is 0 (sizes start at 1)" \
  "$OOCSIM" import "$D/zero_dim.onnx"
expect_fail "an unnamed input" "unnamed_input.onnx: the graph's input 0 has no name" \
  "$OOCSIM" import "$D/unnamed_input.onnx"
expect_fail "dynamic dims without --set" "dynamic.onnx: input 'x' dim 2 is 'H', set at run time: give it with --set H=N" \
  "$OOCSIM" import "$D/dynamic.onnx"
expect_ok "dynamic dims with --set" "$OOCSIM" import "$D/dynamic.onnx" --set H=16 --set W=16 -o "$TMP/dyn.json"
[ "$(params "$TMP/dyn.json")" = 906 ] && ok "dynamic: the cnn's parameters" || not_ok "dynamic: $(params "$TMP/dyn.json")"
expect_fail "--set of a bad size" "--set H: " "$OOCSIM" import "$D/dynamic.onnx" --set H=x --set W=16
# A --set the model does not use is refused, as simulate refuses one.
expect_fail "--set of no dim" \
  "oocsim: $D/dynamic.onnx: --set Q: unknown parameter (valid: H, W)" \
  "$OOCSIM" import "$D/dynamic.onnx" --set H=16 --set W=16 --set Q=3
expect_fail "--set on a model without named dims" \
  "oocsim: $D/cnn_residual.onnx: --set seq: unknown parameter \
(the model has none)" \
  "$OOCSIM" import "$D/cnn_residual.onnx" --set seq=3
expect_fail "a JSON file" "not an ONNX model" "$OOCSIM" import "$top_srcdir/models/resnet50.json"
expect_fail "a missing file" "nope.onnx: No such file or directory" "$OOCSIM" import "$TMP/nope.onnx"
: >"$TMP/empty.onnx"
expect_fail "an empty file" "empty.onnx: empty file, not an ONNX model" "$OOCSIM" import "$TMP/empty.onnx"
expect_fail "no file" "import: missing MODEL.onnx" "$OOCSIM" import
expect_fail "two files" "import: give one MODEL.onnx" "$OOCSIM" import "$D/cnn_residual.onnx" "$D/dynamic.onnx"
# A model longer than the stream's buffer to a full device: the reason,
# not "Input/output error".
if [ -w /dev/full ]; then
  expect_fail "import -o /dev/full" "oocsim: cannot write '/dev/full': No space left on device" \
    "$OOCSIM" import "$D/resnet50.onnx" -o /dev/full
fi
finish
