#!/usr/bin/env python3
"""tests/onnx/export-torchvision.py - export torchvision models to ONNX for
oocsim import's tests: run where torch and torchvision are installed, then
strip the weights with tests/onnx/strip-weights.py (the importer reads
only the initialisers' shapes) and commit the small files.

- resnet50: in training mode (batch norm kept, as training runs it),
  opset 17, the batch dimension dynamic;
- vit_b_16: opset 20 (GELU as one op), batch 1 static (torchvision's
  attention reads the input's shape: static, the shape arithmetic folds).

Usage: tests/onnx/export-torchvision.py OUTDIR
"""
import os
import sys

import torch
import torchvision


def export(m, x, path, **kw):
    try:
        torch.onnx.export(m, (x,), path, dynamo=False, **kw)
    except TypeError:
        torch.onnx.export(m, (x,), path, **kw)
    print(os.path.basename(path), os.path.getsize(path), "bytes", flush=True)


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    x = torch.randn(1, 3, 224, 224)
    m = torchvision.models.resnet50(weights=None).train()
    export(m, x, os.path.join(out, "resnet50.onnx"),
           input_names=["image"], output_names=["logits"],
           dynamic_axes={"image": {0: "batch"}, "logits": {0: "batch"}},
           opset_version=17, training=torch.onnx.TrainingMode.TRAINING,
           do_constant_folding=False)
    m = torchvision.models.vit_b_16(weights=None).eval()
    export(m, x, os.path.join(out, "vit_b_16.onnx"),
           input_names=["image"], output_names=["logits"],
           opset_version=20, do_constant_folding=True)


if __name__ == "__main__":
    main()
