#!/usr/bin/env python3
"""tests/onnx/export-gpt2.py - export GPT-2 small (Hugging Face
transformers' GPT2LMHeadModel) to ONNX for oocsim import's tests, as a
user starting in PyTorch would: the dynamo exporter (torch.onnx.export
dynamo=True, opset 18), batch 2, sequence 128 (n_positions 128, so that
the position table matches the zoo's gpt2 at seq 128), eager attention
(the exporter then writes q k^T, scale, causal mask, softmax and p v
node by node), dropout off (the zoo's gpt2 has none) and training mode.

Every parameter is drawn at random first: with GPT-2's default
initialisation the exporter merges identical tensors (the layer norms'
ones, the zero biases) and the parameter count would be wrong.

The weights are then dropped, keeping each initialiser's name, type and
shape, and the data of tensors of at most 64 elements (shapes, scalars
such as GELU's 0.044715, which the importer reads); node metadata is
dropped too. The result (about 60 KB) is committed as
tests/data/onnx/gpt2_small_s128.onnx.

Needs torch (2.15 was used), transformers (5.24), onnx and onnxscript.
Usage: tests/onnx/export-gpt2.py OUT.onnx
"""
import os
import sys
import tempfile

import onnx
import torch
from transformers import GPT2Config, GPT2LMHeadModel


class GPT2Small(torch.nn.Module):
    def __init__(self, seq):
        super().__init__()
        cfg = GPT2Config(n_positions=seq, attn_implementation="eager",
                         resid_pdrop=0.0, embd_pdrop=0.0, attn_pdrop=0.0)
        cfg.use_cache = False
        self.m = GPT2LMHeadModel(cfg)

    def forward(self, ids):
        # attention_mask: without it transformers 5 calls aten::diff
        return self.m(input_ids=ids, attention_mask=torch.ones_like(ids),
                      use_cache=False, return_dict=False)[0]


def main():
    out, seq = sys.argv[1], 128
    torch.manual_seed(0)
    m = GPT2Small(seq).train()
    with torch.no_grad():
        for p in m.parameters():
            torch.nn.init.normal_(p, std=0.02)
    ids = torch.zeros(2, seq, dtype=torch.long)
    prog = torch.onnx.export(m, (ids,), dynamo=True, opset_version=18)
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "gpt2.onnx")
        prog.save(path, external_data=True)
        mp = onnx.load(path, load_external_data=True)
    g = mp.graph
    for t in g.initializer:
        n = 1
        for k in t.dims:
            n *= k
        if n > 64:
            for f in ("raw_data", "float_data", "int64_data", "int32_data",
                      "data_location"):
                t.ClearField(f)
            del t.external_data[:]
        del t.metadata_props[:]
    for node in g.node:
        del node.metadata_props[:]
        node.doc_string = ""
    del g.value_info[:]
    del mp.metadata_props[:]
    onnx.save(mp, out)
    print(out, os.path.getsize(out), "bytes;",
          sum(p.numel() for p in m.parameters()), "parameters")


if __name__ == "__main__":
    main()
