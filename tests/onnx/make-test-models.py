#!/usr/bin/env python3
"""tests/onnx/make-test-models.py - write the small ONNX models that
tests/cli_import.sh imports, with the onnx package (Debian python3-onnx):

  cnn_residual.onnx       Conv+BN+Relu, Conv, residual Add, MaxPool,
                          GlobalAveragePool, Flatten, Gemm (906 params)
  transformer_block.onnx  token embedding (Gather), LayerNormalization,
                          attention written out as MatMul/Reshape/
                          Transpose/Div/Softmax, MLP, residual adds, a
                          vocabulary projection (14,944 params)
  dynamic.onnx            cnn_residual with named spatial dims H and W
  unknown_op.onnx         cnn_residual with an Erf in place of a Relu
  cnn_view.onnx           cnn_residual flattened as x.view(x.size(0), -1)
                          exports it: Shape, Gather, Unsqueeze, Concat,
                          Reshape (906 params)
  vit_stem.onnx           a ViT stem as torch exports it: a 4x4 patch
                          convolution, the reshape to tokens through
                          Shape arithmetic, the class token expanded over
                          the batch (ConstantOfShape, Mul, Equal, Where,
                          Expand), concatenated, learned positions added,
                          a layer norm and a classifier (1,922 params)
  truncated.onnx          the first 100 bytes of cnn_residual.onnx
  unnamed_input.onnx      cnn_residual whose data input has no name (a
                          file the fuzzer found crashing the importer)
  split_plain.onnx        a Split of a sequence's features that no
                          attention reads (refused: oocsim has no split)
  dup_output.onnx         two nodes writing one value (refused)
  bad_*.onnx              cnn_residual or transformer_block with a weight,
                          bias or attribute that does not fit, or a node
                          with more inputs than ONNX gives its op
                          (refused)
  zero_dim.onnx           cnn_residual with an input dim of 0
  opset6.onnx, opset24.onnx, no_opset.onnx
                          cnn_residual at opsets outside 7..23 or with no
                          opset_import (refused)
  custom_domain.onnx      cnn_residual with a node in com.microsoft
  pad_o9.onnx             cnn_residual at opset 9 with a Pad whose value
                          is a FLOAT (no oocsim op, like any other)
  deconv.onnx             a stride-2 ConvTranspose with output_padding
                          [1, 1] and a Relu (74 params)
  bad_deconv_outpad.onnx  the same with one output_padding value
  bad_deconv_oshape.onnx  the same with output_shape (refused)
  concat_axis0.onnx, concat_axis99.onnx
                          Relu and Sigmoid of [N, 8] concatenated along
                          the batch (refused) and along axis 99 (out of
                          range, refused)
  softmax_o12.onnx, softmax_o13.onnx
                          a Softmax of [N, 4, 6] with no axis: over dims
                          1 and 2 before opset 13 (refused), the last
                          from 13

The weights are zeros: the importer reads only the initialisers' shapes.
Usage: tests/onnx/make-test-models.py OUTDIR
"""
import os
import sys

import math

from onnx import TensorProto, helper, save


def init(name, *dims):
    n = 1
    for d in dims:
        n *= d
    return helper.make_tensor(name, TensorProto.FLOAT, list(dims), [0.0] * n)


def ints(name, values):
    return helper.make_tensor(name, TensorProto.INT64, [len(values)], values)


def model(nodes, inits, x, y, name, opset=17):
    g = helper.make_graph(nodes, name, [x], [y], initializer=inits)
    m = helper.make_model(g, producer_name="oocsim-tests",
                          opset_imports=[helper.make_opsetid("", opset)])
    m.ir_version = 8
    return m


def cnn(spatial=(16, 16), act2="Relu"):
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT,
                                      ["N", 3, spatial[0], spatial[1]])
    y = helper.make_tensor_value_info("logits", TensorProto.FLOAT, ["N", 10])
    nodes = [
        helper.make_node("Conv", ["x", "w1", "b1"], ["c1"], name="conv1",
                         kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
        helper.make_node("BatchNormalization",
                         ["c1", "g", "beta", "mean", "var"], ["n1"],
                         name="bn1"),
        helper.make_node("Relu", ["n1"], ["r1"], name="relu1"),
        helper.make_node("Conv", ["r1", "w2"], ["c2"], name="conv2",
                         kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
        helper.make_node("Add", ["c2", "r1"], ["s"], name="residual"),
        helper.make_node(act2, ["s"], ["r2"], name="relu2"),
        helper.make_node("MaxPool", ["r2"], ["p"], name="pool",
                         kernel_shape=[2, 2], strides=[2, 2]),
        helper.make_node("GlobalAveragePool", ["p"], ["gp"], name="gap"),
        helper.make_node("Flatten", ["gp"], ["f"], name="flatten", axis=1),
        helper.make_node("Gemm", ["f", "wf", "bf"], ["logits"], name="fc",
                         transB=1),
    ]
    inits = [init("w1", 8, 3, 3, 3), init("b1", 8), init("g", 8),
             init("beta", 8), init("mean", 8), init("var", 8),
             init("w2", 8, 8, 3, 3), init("wf", 10, 8), init("bf", 10)]
    return model(nodes, inits, x, y, "cnn_residual")


def batch_view(src, cast=False):
    """x.view(x.size(0), -1) of value src into "f", as torch exports it
    (Shape, Gather, Unsqueeze, Concat, [Cast,] Reshape): the nodes and the
    initialisers they read."""
    n = helper.make_node
    shape = "vshape64" if cast else "vshape"
    nodes = [
        n("Shape", [src], ["shp"], name="size"),
        n("Gather", ["shp", "zero"], ["vn0"], name="size0", axis=0),
        n("Unsqueeze", ["vn0", "axes0"], ["vn1"], name="unsq"),
        n("Concat", ["vn1", "minus1"], ["vshape"], name="vshape", axis=0),
    ]
    if cast:
        nodes.append(n("Cast", ["vshape"], [shape], name="cast",
                       to=TensorProto.INT64))
    nodes.append(n("Reshape", [src, shape], ["f"], name="view"))
    inits = [helper.make_tensor("zero", TensorProto.INT64, [], [0]),
             ints("axes0", [0]), ints("minus1", [-1])]
    return nodes, inits


def cnn_view():
    m = cnn()
    g = m.graph
    i = [k for k, nd in enumerate(g.node) if nd.name == "flatten"][0]
    view, inits = batch_view("gp", cast=True)
    del g.node[i]
    for k, nd in enumerate(view):
        g.node.insert(i + k, nd)
    g.initializer.extend(inits)
    g.name = "cnn_view"
    return m


def flat_input():
    """x.view(x.size(0), -1) on the graph's input itself, then a linear:
    the shape arithmetic reads the input's shape before any layer exists."""
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 3, 4, 4])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, ["N", 10])
    nodes, inits = batch_view("x")
    nodes.append(helper.make_node("Gemm", ["f", "w", "b"], ["y"], name="fc",
                                  transB=1))
    inits += [init("w", 10, 48), init("b", 10)]
    return model(nodes, inits, x, y, "flat_input")


def vit_stem():
    P, C, T = 4, 8, 16             # patch, width, tokens of a 16x16 image
    x = helper.make_tensor_value_info("image", TensorProto.FLOAT,
                                      ["N", 3, 16, 16])
    y = helper.make_tensor_value_info("logits", TensorProto.FLOAT, ["N", 10])
    n = helper.make_node
    nodes = [
        n("Conv", ["image", "wp", "bp"], ["c"], name="conv_proj",
          kernel_shape=[P, P], strides=[P, P]),
        n("Shape", ["c"], ["cs"], name="shape"),
        n("Gather", ["cs", "zero"], ["nb"], name="batch", axis=0),
        n("Unsqueeze", ["nb", "axes0"], ["nb1"], name="batch1"),
        n("Concat", ["nb1", "ct"], ["rs"], name="rshape", axis=0),
        n("Reshape", ["c", "rs"], ["r"], name="reshape"),
        n("Transpose", ["r"], ["seq"], name="to_tokens", perm=[0, 2, 1]),
        n("ConstantOfShape", ["three"], ["ones"], name="ones",
          value=helper.make_tensor("v", TensorProto.INT64, [1], [1])),
        n("Mul", ["ones", "minus1"], ["neg"], name="neg"),
        n("Equal", ["expand_to", "neg"], ["eq"], name="eq"),
        n("Where", ["eq", "ones", "expand_to"], ["ex"], name="where"),
        n("Expand", ["class_token", "ex"], ["cls"], name="expand"),
        n("Concat", ["cls", "seq"], ["tok"], name="cat", axis=1),
        n("Add", ["tok", "pos_embedding"], ["h"], name="positions"),
        n("LayerNormalization", ["h", "ln_g", "ln_b"], ["hn"], name="ln",
          axis=-1),
        n("Flatten", ["hn"], ["f"], name="flatten", axis=1),
        n("Gemm", ["f", "wh", "bh"], ["logits"], name="head", transB=1),
    ]
    inits = [init("wp", C, 3, P, P), init("bp", C), init("class_token", 1, 1, C),
             init("pos_embedding", 1, T + 1, C), init("ln_g", C),
             init("ln_b", C), init("wh", 10, (T + 1) * C), init("bh", 10),
             helper.make_tensor("zero", TensorProto.INT64, [], [0]),
             ints("axes0", [0]), ints("ct", [C, T]), ints("three", [3]),
             ints("minus1", [-1]), ints("expand_to", [1, -1, -1])]
    return model(nodes, inits, x, y, "vit_stem")


def transformer():
    S, H, heads, V, F = 16, 32, 4, 100, 64
    d = H // heads
    x = helper.make_tensor_value_info("tokens", TensorProto.INT64, ["N", S])
    y = helper.make_tensor_value_info("logits", TensorProto.FLOAT,
                                      ["N", S, V])
    n = helper.make_node
    nodes = [
        n("Gather", ["emb", "tokens"], ["e"], name="embed"),
        n("LayerNormalization", ["e", "ln1_g", "ln1_b"], ["h"], name="ln1",
          axis=-1),
    ]
    for p in "qkv":
        nodes += [
            n("MatMul", ["h", "w" + p], [p + "0"], name=p + "_proj"),
            n("Add", [p + "0", "b" + p], [p + "1"], name=p + "_bias"),
            n("Reshape", [p + "1", "heads_shape"], [p + "2"],
              name=p + "_heads"),
        ]
    nodes += [
        n("Transpose", ["q2"], ["q"], name="q_t", perm=[0, 2, 1, 3]),
        n("Transpose", ["k2"], ["kt"], name="k_t", perm=[0, 2, 3, 1]),
        n("Transpose", ["v2"], ["v"], name="v_t", perm=[0, 2, 1, 3]),
        n("MatMul", ["q", "kt"], ["sc0"], name="scores"),
        n("Div", ["sc0", "sqrt_d"], ["sc"], name="scale"),
        n("Softmax", ["sc"], ["pr"], name="softmax", axis=-1),
        n("MatMul", ["pr", "v"], ["o0"], name="weighted"),
        n("Transpose", ["o0"], ["o1"], name="o_t", perm=[0, 2, 1, 3]),
        n("Reshape", ["o1", "seq_shape"], ["o2"], name="o_merge"),
        n("MatMul", ["o2", "wo"], ["o3"], name="o_proj"),
        n("Add", ["o3", "bo"], ["o4"], name="o_bias"),
        n("Add", ["o4", "e"], ["r1"], name="residual1"),
        n("LayerNormalization", ["r1", "ln2_g", "ln2_b"], ["h2"],
          name="ln2", axis=-1),
        n("MatMul", ["h2", "w1"], ["m0"], name="fc1"),
        n("Add", ["m0", "b1"], ["m1"], name="fc1_bias"),
        n("Relu", ["m1"], ["m2"], name="act"),
        n("MatMul", ["m2", "w2"], ["m3"], name="fc2"),
        n("Add", ["m3", "b2"], ["m4"], name="fc2_bias"),
        n("Add", ["m4", "r1"], ["r2"], name="residual2"),
        n("MatMul", ["r2", "wout"], ["logits"], name="vocab"),
    ]
    inits = [init("emb", V, H), init("ln1_g", H), init("ln1_b", H),
             init("wq", H, H), init("bq", H), init("wk", H, H), init("bk", H),
             init("wv", H, H), init("bv", H), init("wo", H, H), init("bo", H),
             init("ln2_g", H), init("ln2_b", H), init("w1", H, F),
             init("b1", F), init("w2", F, H), init("b2", H),
             init("wout", H, V), ints("heads_shape", [0, S, heads, d]),
             ints("seq_shape", [0, S, H]),
             helper.make_tensor("sqrt_d", TensorProto.FLOAT, [],
                                [math.sqrt(d)])]
    return model(nodes, inits, x, y, "transformer_block")


def split_plain():
    """A linear to [N, 4, 6], split into three [N, 4, 2] parts, two added."""
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 4, 6])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, ["N", 4, 2])
    n = helper.make_node
    nodes = [
        n("MatMul", ["x", "w"], ["h"], name="proj"),
        n("Split", ["h"], ["a", "b", "c"], name="split", axis=2),
        n("Add", ["a", "b"], ["y"], name="sum"),
    ]
    return model(nodes, [init("w", 6, 6)], x, y, "split_plain")


def softmax_default(opset):
    """A Softmax of [N, 4, 6] with no axis: before opset 13 over dims 1
    and 2 as one (refused), from 13 over the last (imported)."""
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 4, 6])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, ["N", 4, 6])
    nodes = [helper.make_node("Softmax", ["x"], ["y"], name="sm")]
    return model(nodes, [], x, y, "softmax_o%d" % opset, opset=opset)


def custom_domain():
    """cnn_residual with its second Relu in domain com.microsoft."""
    m = cnn()
    i = [k for k, nd in enumerate(m.graph.node) if nd.name == "relu2"][0]
    m.graph.node[i].domain = "com.microsoft"
    m.opset_import.append(helper.make_opsetid("com.microsoft", 1))
    return m


def with_init(m, name, dims, attr=None):
    """Model m with initialiser `name` of dims (no data: negative dims
    cannot have any), or with attribute attr = (node, helper attribute)
    in place of the node's one of that name."""
    if attr is not None:
        node, a = attr
        nd = [x for x in m.graph.node if x.name == node][0]
        keep = [x for x in nd.attribute if x.name != a.name]
        del nd.attribute[:]
        nd.attribute.extend(keep + [a])
        return m
    t = TensorProto(name=name, data_type=TensorProto.FLOAT, dims=dims)
    i = [k for k, x in enumerate(m.graph.initializer) if x.name == name][0]
    m.graph.initializer[i].CopyFrom(t)
    return m


def bad_weights(out):
    """cnn_residual and transformer_block with a weight, bias or attribute
    that does not fit (each refused, naming it)."""
    big = 1 << 40
    cases = {
        "conv_weight": with_init(cnn(), "w1", [8, 4, 3, 3]),
        "conv_bias": with_init(cnn(), "b1", [9]),
        "gemm_weight": with_init(cnn(), "wf", [10, 9]),
        "gemm_transb": with_init(cnn(), None, None, (
            "fc", helper.make_attribute("transB", 0))),
        "gemm_bias": with_init(cnn(), "bf", [11]),
        "matmul_weight": with_init(transformer(), "wq", [31, 32]),
        "bn_scale": with_init(cnn(), "g", [7]),
        "ln_axis_scale": with_init(with_init(transformer(), None, None, (
            "ln1", helper.make_attribute("axis", 2))), "ln1_g", [31]),
        "neg_dim": with_init(cnn(), "w2", [8, -8, 3, 3]),
        "huge_dims": with_init(cnn(), "w2", [big, big, big]),
        "attr_type": with_init(cnn(), None, None, (
            "conv1", helper.make_attribute("group", 1.0))),
    }
    cases["pool_strides"] = with_init(cnn(), None, None, (
        "pool", helper.make_attribute("strides", [2, 2, 2])))
    cases["conv_dilations"] = with_init(cnn(), None, None, (
        "conv1", helper.make_attribute("dilations", [1, 1, 1])))
    m = cnn()   # pads misspelt: it would import without padding
    nd = [x for x in m.graph.node if x.name == "conv1"][0]
    [x for x in nd.attribute if x.name == "pads"][0].name = "pad"
    cases["conv_attr"] = m
    m = cnn()
    m.graph.initializer.append(init("w1", 8, 3, 3, 3))
    cases["init_twice"] = m
    # An input past the most ONNX gives the op (found by fuzzing: they
    # were ignored, so an Add of three imported as an Add of two).
    for node, extra in (("residual", "r1"), ("bn1", "var")):
        m = cnn()
        nd = [x for x in m.graph.node if x.name == node][0]
        nd.input.append(extra)
        cases["%s_inputs" % node] = m
    m = cnn()
    nd = [x for x in m.graph.node if x.name == "relu2"][0]
    nd.op_type = "Pow"
    del nd.input[:]
    cases["no_inputs"] = m
    for k, m in cases.items():
        save(m, os.path.join(out, "bad_%s.onnx" % k))


def dup_output():
    """Two nodes writing one value "h" (the second with no name): refused,
    naming both."""
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 8])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, ["N", 8])
    n = helper.make_node
    nodes = [n("Relu", ["x"], ["h"], name="relu1"),
             n("Sigmoid", ["x"], ["h"]),
             n("Relu", ["h"], ["y"], name="out")]
    return model(nodes, [], x, y, "dup_output")


def concat_axis(axis):
    """Relu and Sigmoid of x [N, 8] concatenated along `axis`: 1 is [N,
    16]; 0 (the batch) is refused, and so is 99 (out of range for rank
    2), each with its own message."""
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 8])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, ["N", 16])
    n = helper.make_node
    nodes = [n("Relu", ["x"], ["a"], name="relu"),
             n("Sigmoid", ["x"], ["b"], name="sigmoid"),
             n("Concat", ["a", "b"], ["y"], name="cat", axis=axis)]
    return model(nodes, [], x, y, "concat_axis%d" % axis)


def pad_o9():
    """cnn_residual at opset 9 with its second Relu a Pad, whose "value"
    is a FLOAT there (not imported: the unsupported-op error, not an
    attribute-type error)."""
    m = cnn()
    m.opset_import[0].version = 9
    nd = [x for x in m.graph.node if x.name == "relu2"][0]
    nd.op_type = "Pad"
    nd.attribute.extend([
        helper.make_attribute("pads", [0, 0, 1, 1, 0, 0, 1, 1]),
        helper.make_attribute("value", 0.0)])
    return m


def deconv(op=(1, 1), output_shape=None):
    """A stride-2 ConvTranspose (4 -> 2 channels, 3x3, pads 1, the given
    output_padding) and a Relu: [N, 4, 8, 8] -> [N, 2, 16, 16]."""
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 4, 8, 8])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT,
                                      ["N", 2, 16, 16])
    kw = dict(kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1],
              output_padding=list(op))
    if output_shape is not None:
        kw["output_shape"] = list(output_shape)
    nodes = [helper.make_node("ConvTranspose", ["x", "w", "b"], ["d"],
                              name="up", **kw),
             helper.make_node("Relu", ["d"], ["y"], name="relu")]
    return model(nodes, [init("w", 4, 2, 3, 3), init("b", 2)], x, y,
                 "deconv")


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    save(cnn(), os.path.join(out, "cnn_residual.onnx"))
    save(transformer(), os.path.join(out, "transformer_block.onnx"))
    save(cnn(spatial=("H", "W")), os.path.join(out, "dynamic.onnx"))
    save(cnn(act2="Erf"), os.path.join(out, "unknown_op.onnx"))
    save(cnn_view(), os.path.join(out, "cnn_view.onnx"))
    m = cnn()
    m.graph.input[0].ClearField("name")
    save(m, os.path.join(out, "unnamed_input.onnx"))
    save(vit_stem(), os.path.join(out, "vit_stem.onnx"))
    save(flat_input(), os.path.join(out, "flat_input.onnx"))
    save(split_plain(), os.path.join(out, "split_plain.onnx"))
    save(dup_output(), os.path.join(out, "dup_output.onnx"))
    bad_weights(out)
    m = cnn()
    m.graph.input[0].type.tensor_type.shape.dim[2].dim_value = 0
    save(m, os.path.join(out, "zero_dim.onnx"))
    for v in (6, 24):
        m = cnn()
        m.opset_import[0].version = v
        save(m, os.path.join(out, "opset%d.onnx" % v))
    m = cnn()
    del m.opset_import[:]
    save(m, os.path.join(out, "no_opset.onnx"))
    save(custom_domain(), os.path.join(out, "custom_domain.onnx"))
    save(pad_o9(), os.path.join(out, "pad_o9.onnx"))
    save(deconv(), os.path.join(out, "deconv.onnx"))
    for a in (0, 99):
        save(concat_axis(a), os.path.join(out, "concat_axis%d.onnx" % a))
    save(deconv(op=(1,)), os.path.join(out, "bad_deconv_outpad.onnx"))
    save(deconv(output_shape=(16, 16)),
         os.path.join(out, "bad_deconv_oshape.onnx"))
    save(softmax_default(12), os.path.join(out, "softmax_o12.onnx"))
    save(softmax_default(13), os.path.join(out, "softmax_o13.onnx"))
    with open(os.path.join(out, "cnn_residual.onnx"), "rb") as f:
        head = f.read(100)
    with open(os.path.join(out, "truncated.onnx"), "wb") as f:
        f.write(head)


if __name__ == "__main__":
    main()
