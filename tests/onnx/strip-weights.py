#!/usr/bin/env python3
"""tests/onnx/strip-weights.py - drop the data of every initialiser of an
ONNX model, keeping names, types and shapes (all oocsim import reads), so
that a real exported model fits in the test suite.

Usage: tests/onnx/strip-weights.py IN.onnx OUT.onnx
"""
import sys

import onnx


def main():
    m = onnx.load(sys.argv[1], load_external_data=False)
    for t in m.graph.initializer:
        # Small constants (shapes, axes) stay: an importer may read them.
        n = 1
        for d in t.dims:
            n *= d
        if t.data_type == onnx.TensorProto.INT64 and n <= 16:
            continue
        t.ClearField("raw_data")
        t.ClearField("float_data")
        t.ClearField("int64_data")
        t.ClearField("int32_data")
        t.ClearField("double_data")
    onnx.save(m, sys.argv[2])


if __name__ == "__main__":
    main()
