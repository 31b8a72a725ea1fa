/* ir/onnx_import.h — ONNX model -> oocsim model JSON (`oocsim import`).
 *
 * One idea: walk the ONNX graph's nodes in their (topological) order and
 * emit one model layer per op that computes, folding what only reshapes
 * or renames (Identity, Constant, Flatten, Reshape, a Transpose that
 * keeps the batch first, a scalar Mul/Div, Dropout at inference) into the
 * references of the layers after it. Initialisers give the parameters'
 * shapes; their data is never read (a Reshape's constant shape aside).
 * The batch dimension (the inputs' first) is dropped: the model is per
 * sample, as models/README.md describes. Shapes the importer needs (a
 * Transpose's input) come from loading what it has emitted so far.
 *
 * Ownership: ooc_onnx_import() returns a cJSON object the caller deletes
 * and fills the caller-embedded report. Cost: linear in the nodes for
 * the graphs exporters write: names are hashed, and a shape the importer
 * needs loads only the layers since the nearest one of known shape that
 * no later layer reads past (a layer's worth in a chain); a graph whose
 * layers all read some early layer and change shapes reloads that far.
 */
#ifndef OOC_ONNX_IMPORT_H
#define OOC_ONNX_IMPORT_H

#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "base/error.h"
#include "ir/model.h"

enum { OOC_ONNX_MAX_UNSUPPORTED = 32, OOC_ONNX_MAX_OPS = 64 };

typedef struct ooc_onnx_opts {
  const char *name;        /* model name (default: the file's stem) */
  int loss;                /* 1: append softmax_ce (a final Softmax becomes
                              it); 0: the graph as it is */
  const ooc_kv *sets;      /* values of named (dynamic) input dims */
  int n_sets;
} ooc_onnx_opts;

typedef struct ooc_onnx_count {
  char op[32];
  int n;
} ooc_onnx_count;

typedef struct ooc_onnx_report {
  int n_nodes;              /* ONNX nodes */
  int n_layers;             /* model layers emitted (the input included) */
  int n_folded;             /* nodes folded into references */
  int opset;                /* the default domain's opset */
  char producer[64];
  int n_ops;                /* distinct op types, with their counts */
  ooc_onnx_count ops[OOC_ONNX_MAX_OPS];
  int n_unsupported;        /* nodes no layer maps (first few listed) */
  char unsupported[OOC_ONNX_MAX_UNSUPPORTED][96];
} ooc_onnx_report;

/* 1 when this build has ONNX import (protobuf-c found at configure). */
int ooc_onnx_available(void);

/* Import path. On success *out is the model object. Unsupported nodes
 * make it fail with OOC_EINVAL ("PATH: 3 nodes have no oocsim op: node
 * 'n1' (Erf), ...") and the report lists them; so do dynamic input dims
 * without a --set value, an opset outside 7..23 or none, a node of
 * another domain, a value two nodes write, a weight whose shape does not
 * fit its input, a bad dim or attribute (one message naming the file,
 * the node and the value), malformed files (OOC_EPARSE) and unreadable
 * ones (OOC_EIO). */
int ooc_onnx_import(const char *path, const ooc_onnx_opts *o, cJSON **out,
                    ooc_onnx_report *rep, ooc_err *err);
/* The same from the file's bytes buf[0 .. len), read by the caller; path
 * names it in messages (the fuzz target's entry). */
int ooc_onnx_import_mem(const uint8_t *buf, size_t len, const char *path,
                        const ooc_onnx_opts *o, cJSON **out,
                        ooc_onnx_report *rep, ooc_err *err);

#endif
