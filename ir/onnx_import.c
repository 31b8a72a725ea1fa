/* ir/onnx_import.c — ONNX model -> oocsim model JSON (see onnx_import.h).
 *
 * The ONNX format: ir/onnx.proto (the subset read), after the ONNX
 * specification's onnx.proto and its operator documentation (opsets 7-23
 * of the default domain, OPSET_MIN..OPSET_MAX below, for the ops below; attributes read: Conv/ConvTranspose kernel_shape,
 * strides, pads, dilations, group, auto_pad, output_padding (two values;
 * output_shape refused); pools the
 * same and ceil_mode; Gemm transA/transB; Concat, Softmax, Flatten,
 * LayerNormalization axis; Transpose perm; LeakyRelu alpha; Dropout
 * ratio; Split axis and split sizes).
 *
 * Some of oocsim's ops arrive as subgraphs, which are fused (see
 * "patterns" below): the attention of a packed q,k,v projection, written
 * by torch.onnx's dynamo exporter as Split, per-head Reshape and
 * Transpose, MatMul(q, k^T), a scale, a mask Add, Softmax, MatMul(p, v),
 * Transpose and Reshape (after transformers' GPT2Attention.eager path);
 * GELU's tanh form (Hendrycks and Gimpel 2016, eq. for the approximation:
 * 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))).
 *
 * The file is untrusted: before any node is imported, index_graph()
 * checks the domains, that each value has one writer, the attributes'
 * types and the constants' dims (check_tensor: no negative dim, numel
 * within int64); the ops check their weights against their inputs'
 * shapes (conv_weights, matmul, norm_params). Names are looked up in
 * hash tables (strmap) and shapes recorded per layer (layer_shape), so
 * the import is linear in the nodes for the graphs exporters write.
 */
#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ir/onnx_import.h"
#include "base/util.h"

#ifndef HAVE_ONNX

int
ooc_onnx_available(void)
{
  return 0;
}

int
ooc_onnx_import_mem(const uint8_t *buf, size_t len, const char *path,
                    const ooc_onnx_opts *o, cJSON **out,
                    ooc_onnx_report *rep, ooc_err *err)
{
  (void)buf;
  (void)len;
  (void)o;
  (void)rep;
  *out = NULL;
  return ooc_err_set(err, OOC_EINVAL, "%s: this oocsim was built without "
                     "ONNX import (configure found no protobuf-c: install "
                     "libprotobuf-c-dev and protobuf-c-compiler, then "
                     "configure and build again)", path);
}

int
ooc_onnx_import(const char *path, const ooc_onnx_opts *o, cJSON **out,
                ooc_onnx_report *rep, ooc_err *err)
{
  return ooc_onnx_import_mem(NULL, 0, path, o, out, rep, err);
}

#else

#include "ir/onnx.pb-c.h"

typedef OocsimOnnx__ModelProto Model;
typedef OocsimOnnx__GraphProto Graph;
typedef OocsimOnnx__NodeProto Node;
typedef OocsimOnnx__TensorProto Tensor;
typedef OocsimOnnx__AttributeProto Attr;

/* The largest dim the importer passes on (the model loader's limit). */
#define MAX_DIM ((int64_t)1 << 40)

/* The default domain's opsets read. From 7: Add and the like broadcast as
 * numpy does (no broadcast/axis attributes), BatchNormalization, Gemm and
 * Dropout lose is_test/spatial-only forms. To 23: the ops read here did
 * not change their attributes or inputs from 13 to 23 (22 and 23 widened
 * their types). Between, the forms that changed are read as each opset
 * has them: Softmax's axis and its default (13), Slice's starts and ends
 * (attributes before 10), Split's sizes (an attribute before 13),
 * Squeeze/Unsqueeze's axes (before 13), Dropout's ratio (before 12),
 * Reshape's allowzero (14). */
enum { OPSET_MIN = 7, OPSET_MAX = 23 };

/* ONNX TensorProto.DataType values read here. */
enum { DT_FLOAT = 1, DT_INT32 = 6, DT_INT64 = 7, DT_BOOL = 9,
       DT_FLOAT16 = 10, DT_DOUBLE = 11, DT_BFLOAT16 = 16 };

/* What an ONNX value name stands for: an emitted layer (possibly through
 * folded nodes), or a constant (an initialiser or a Constant node). */
typedef struct val {
  const char *onnx;        /* borrowed from the parsed model */
  const Tensor *t;         /* a constant; NULL for a layer */
  int layer;               /* index into the layers array */
  int linear_nobias;       /* a linear layer without bias whose output it
                              is (an Add of a 1-D constant fuses into it) */
  int bcast;               /* a parameter broadcast over the batch
                              (Expand of an initialiser to the batch's
                              shape: ViT's class token) */
  int opaque;              /* a constant computed from constants whose
                              values are not read (an attention mask):
                              never a parameter */
  int64_t pos_rows;        /* > 0: the rows of a position table gathered
                              at constant indices (t: the rows gathered,
                              no data) */
  const Tensor *tsrc;      /* t is this parameter transposed (its dims
                              swapped, no data) */
} val;

/* An open-addressing hash of borrowed strings to ints (linear probing,
 * at most half full): the importer's name lookups in O(1) expected, one
 * array per map, doubled as it fills. */
typedef struct strmap {
  struct slot { const char *k; int v; } *s;
  size_t cap, n;           /* cap: 0 or a power of two */
} strmap;

typedef struct imp {
  const char *path;
  const ooc_onnx_opts *o;
  ooc_onnx_report *rep;
  ooc_err *err;
  Model *m;
  cJSON *root, *layers;
  val *v;
  int n_v, cap_v;
  strmap vmap;             /* ONNX value name -> its latest binding in v */
  char **names;            /* emitted layer names (owned) */
  int n_names, cap_names;
  strmap lmap;             /* layer name -> the next suffix to try when
                              a new layer's name clashes with it */
  strmap lidx;             /* layer name -> its index in names */
  struct lyr {             /* per emitted layer, parallel to names */
    cJSON *obj;            /* its object in layers (NULL: the input) */
    int minref;            /* the lowest layer index it reads */
    int known;             /* out is its per-sample output shape */
    ooc_shape out;
  } *lyr;
  int cap_lyr;
  strmap prod;             /* value name -> the node that writes it */
  strmap cons;             /* value name -> the one node that reads it;
                              -1: a graph output or read by several */
  Tensor **owned;          /* constants folded here (free_owned) */
  int n_owned, cap_owned;
  int64_t batch;           /* the export's batch (1 when dynamic) */
  const Graph *g;
  uint8_t *skip;           /* per node: consumed by a fused pattern */
  const Tensor **emb;      /* tables an embedding layer reads */
  int n_emb, cap_emb;
} imp;

/* ---- small helpers ------------------------------------------------------ */

static int
nomem(imp *I)
{
  return ooc_err_set(I->err, OOC_ENOMEM, "%s: out of memory", I->path);
}

static int
grow(void **p, int *cap, int need, size_t sz)
{
  if (need <= *cap)
    return 0;
  {
    int c = *cap ? 2 * *cap : 64;
    void *q;
    while (c < need)
      c *= 2;
    q = realloc(*p, (size_t)c * sz);
    if (q == NULL)
      return -1;
    *p = q;
    *cap = c;
  }
  return 0;
}

static size_t
str_hash(const char *k)
{
  return (size_t)ooc_hash64(k, strlen(k), OOC_HASH_SEED);
}

/* The slot of key k in m: where it is, or the empty one it would take. */
static struct slot *
map_slot(const strmap *m, const char *k)
{
  size_t mask = m->cap - 1, h = str_hash(k) & mask;
  while (m->s[h].k != NULL && strcmp(m->s[h].k, k) != 0)
    h = (h + 1) & mask;
  return &m->s[h];
}

/* The value stored for k, or NULL. */
static int *
map_get(const strmap *m, const char *k)
{
  struct slot *q;
  if (m->cap == 0)
    return NULL;
  q = map_slot(m, k);
  return q->k != NULL ? &q->v : NULL;
}

/* Store v for k (borrowed: it must outlive the map), replacing any value
 * it had. -1 when out of memory. */
static int
map_put(strmap *m, const char *k, int v)
{
  struct slot *q;
  if (2 * (m->n + 1) > m->cap) {
    strmap b = { .cap = m->cap ? 2 * m->cap : 64 };
    size_t i;
    if ((b.s = calloc(b.cap, sizeof *b.s)) == NULL)
      return -1;
    for (i = 0; i < m->cap; i++)
      if (m->s[i].k != NULL)
        *map_slot(&b, m->s[i].k) = m->s[i];
    b.n = m->n;
    free(m->s);
    *m = b;
  }
  q = map_slot(m, k);
  if (q->k == NULL) {
    q->k = k;
    m->n++;
  }
  q->v = v;
  return 0;
}

/* "node 'NAME' (OP)", or "node INDEX (OP)" (counted from 0 in the
 * graph's order) for a node with no name. O(nodes) for one with no name:
 * for messages only. */
static const char *
node_label(const Graph *g, const Node *n, char *buf, size_t len)
{
  size_t i = 0;
  if (n->name && n->name[0]) {
    snprintf(buf, len, "node '%.40s' (%.24s)", n->name,
             n->op_type ? n->op_type : "?");
    return buf;
  }
  while (i < g->n_node && g->node[i] != n)
    i++;
  snprintf(buf, len, "node %zu (%.24s)", i, n->op_type ? n->op_type : "?");
  return buf;
}

static int
node_err(imp *I, const Node *n, const char *fmt, const char *what)
{
  char b[96];
  return ooc_err_set(I->err, OOC_EINVAL, "%s: %s: %s%s", I->path,
                     node_label(I->g, n, b, sizeof b), fmt, what ? what : "");
}

/* The latest binding of ONNX value `name`, or NULL. */
static val *
lookup(imp *I, const char *name)
{
  int *k = map_get(&I->vmap, name);
  return k != NULL ? &I->v[*k] : NULL;
}

static int
bind(imp *I, const char *onnx, const Tensor *t, int layer, int nobias)
{
  if (grow((void **)&I->v, &I->cap_v, I->n_v + 1, sizeof *I->v) ||
      map_put(&I->vmap, onnx, I->n_v))
    return nomem(I);
  I->v[I->n_v++] = (val){ .onnx = onnx, .t = t, .layer = layer,
                          .linear_nobias = nobias };
  return OOC_OK;
}

static const Attr *
attr(const Node *n, const char *name)
{
  size_t i;
  for (i = 0; i < n->n_attribute; i++)
    if (n->attribute[i]->name && strcmp(n->attribute[i]->name, name) == 0)
      return n->attribute[i];
  return NULL;
}

static int64_t
attr_i(const Node *n, const char *name, int64_t dflt)
{
  const Attr *a = attr(n, name);
  return a && a->has_i ? a->i : dflt;
}

static double
attr_f(const Node *n, const char *name, double dflt)
{
  const Attr *a = attr(n, name);
  return a && a->has_f ? a->f : dflt;
}

/* The string attribute, or dflt; at most len - 1 bytes. */
static const char *
attr_s(const Node *n, const char *name, const char *dflt, char *buf,
       size_t len)
{
  const Attr *a = attr(n, name);
  size_t k;
  if (a == NULL || !a->has_s)
    return dflt;
  k = a->s.len < len - 1 ? a->s.len : len - 1;
  memcpy(buf, a->s.data, k);
  buf[k] = '\0';
  return buf;
}

static int64_t
numel(const Tensor *t)
{
  int64_t e = 1;
  size_t i;
  for (i = 0; i < t->n_dims; i++)
    e *= t->dims[i];
  return e;
}

/* The int64 values of a constant tensor (raw or typed data), at most cap;
 * -1 when it holds none readable. */
static int
const_ints(const Tensor *t, int64_t *out, int cap)
{
  int64_t n = numel(t), i;
  if (n > cap)
    return -1;
  if (t->data_type == DT_INT64 && t->n_int64_data == (size_t)n) {
    for (i = 0; i < n; i++)
      out[i] = t->int64_data[i];
    return (int)n;
  }
  if (t->data_type == DT_INT64 && t->has_raw_data &&
      t->raw_data.len == (size_t)n * 8) {
    for (i = 0; i < n; i++) {
      int64_t x = 0;
      int b;
      for (b = 7; b >= 0; b--)     /* ONNX raw data is little-endian */
        x = (int64_t)((uint64_t)x << 8 | t->raw_data.data[i * 8 + b]);
      out[i] = x;
    }
    return (int)n;
  }
  return -1;
}

/* The value of a scalar float constant; -1 when it is not one. */
static int
const_float(const Tensor *t, double *out)
{
  if (numel(t) != 1 || t->data_type != DT_FLOAT)
    return -1;
  if (t->n_float_data == 1) {
    *out = t->float_data[0];
    return 0;
  }
  if (t->has_raw_data && t->raw_data.len == 4) {
    uint32_t u = (uint32_t)t->raw_data.data[0] |
                 (uint32_t)t->raw_data.data[1] << 8 |
                 (uint32_t)t->raw_data.data[2] << 16 |
                 (uint32_t)t->raw_data.data[3] << 24;
    float f;
    memcpy(&f, &u, sizeof f);
    *out = f;
    return 0;
  }
  return -1;
}

/* A layer name from the node's: [A-Za-z0-9_] kept, the rest '_', leading
 * '_' dropped, unique (a suffix _2, _3, ...), never "input". */
static int
layer_name(imp *I, const Node *n, char *out, size_t len)
{
  const char *src = n->name && n->name[0] ? n->name
                    : n->n_output > 0 ? n->output[0] : n->op_type;
  char base[72];
  size_t k = 0;
  int suffix, *hint;

  for (; *src && k < 60; src++) {
    char c = isalnum((unsigned char)*src) ? *src : '_';
    if (c == '_' && (k == 0 || base[k - 1] == '_'))
      continue;
    base[k++] = c;
  }
  while (k > 0 && base[k - 1] == '_')
    k--;
  base[k] = '\0';
  if (k == 0 || strcmp(base, "input") == 0 || strcmp(base, "loss") == 0)
    snprintf(base, sizeof base, "%.32s_%d",
             n->op_type ? n->op_type : "layer", I->n_names);
  snprintf(out, len, "%s", base);
  if ((hint = map_get(&I->lmap, base)) == NULL)
    return OOC_OK;
  /* Taken: base_N from the suffix base's last clash left off at, so that
   * many nodes of one name cost O(1) each. */
  for (suffix = *hint; ; suffix++) {
    snprintf(out, len, "%.60s_%d", base, suffix);
    if (map_get(&I->lmap, out) == NULL)
      break;
  }
  *map_get(&I->lmap, base) = suffix + 1;
  return OOC_OK;
}

/* Record emitted layer k: its object, the lowest layer it reads, and its
 * shape where that follows from its input's without the loader: the ops
 * that keep their input's shape, and a reshape to positive dims. */
static void
set_lyr(imp *I, int k, cJSON *L, const val *const *ins, int n_in)
{
  static const char *const same[] = { "relu", "act", "gelu", "batchnorm",
                                      "softmax", "layernorm", "dropout",
                                      "add", NULL };
  struct lyr *y = &I->lyr[k];
  const cJSON *op = cJSON_GetObjectItemCaseSensitive(L, "op");
  int q;

  *y = (struct lyr){ .obj = L, .minref = k };
  for (q = 0; q < n_in; q++)
    if (ins[q]->layer < y->minref)
      y->minref = ins[q]->layer;
  if (n_in < 1 || !cJSON_IsString(op))
    return;
  if (strcmp(op->valuestring, "reshape") == 0) {
    const cJSON *sh = cJSON_GetObjectItemCaseSensitive(L, "shape"), *d;
    y->out.ndim = 0;
    cJSON_ArrayForEach(d, sh) {
      if (y->out.ndim == OOC_MAX_DIMS || d->valuedouble < 1 ||
          d->valuedouble > (double)MAX_DIM)
        return;
      y->out.d[y->out.ndim++] = (int64_t)d->valuedouble;
    }
    y->known = y->out.ndim > 0;
    return;
  }
  for (q = 0; same[q] && strcmp(same[q], op->valuestring) != 0; q++)
    ;
  if (same[q] == NULL || !I->lyr[ins[0]->layer].known)
    return;
  for (q = 1; q < n_in; q++)          /* add: equal shapes, or unknown */
    if (!I->lyr[ins[q]->layer].known ||
        memcmp(&I->lyr[ins[q]->layer].out, &I->lyr[ins[0]->layer].out,
               sizeof y->out) != 0)
      return;
  y->out = I->lyr[ins[0]->layer].out;
  y->known = 1;
}

/* Append layer object L (its "op" and attributes set) named after node n,
 * reading the layers of ins[0..n_in), and bind the node's first output to
 * it. */
static int
emit(imp *I, const Node *n, cJSON *L, const val *const *ins, int n_in,
     int nobias)
{
  char name[96];
  cJSON *in;
  int k;

  layer_name(I, n, name, sizeof name);
  if (grow((void **)&I->names, &I->cap_names, I->n_names + 1,
           sizeof *I->names) ||
      grow((void **)&I->lyr, &I->cap_lyr, I->n_names + 1,
           sizeof *I->lyr)) {
    cJSON_Delete(L);
    return nomem(I);
  }
  if ((I->names[I->n_names] = strdup(name)) == NULL ||
      map_put(&I->lmap, I->names[I->n_names], 2) ||
      map_put(&I->lidx, I->names[I->n_names], I->n_names)) {
    free(I->names[I->n_names]);
    cJSON_Delete(L);
    return nomem(I);
  }
  set_lyr(I, I->n_names, L, ins, n_in);
  I->n_names++;
  if (cJSON_AddStringToObject(L, "name", name) == NULL ||
      (in = cJSON_AddArrayToObject(L, "in")) == NULL) {
    cJSON_Delete(L);
    return nomem(I);
  }
  for (k = 0; k < n_in; k++) {
    cJSON *s = cJSON_CreateString(I->names[ins[k]->layer]);
    if (s == NULL || !cJSON_AddItemToArray(in, s)) {
      cJSON_Delete(s);
      cJSON_Delete(L);
      return nomem(I);
    }
  }
  /* cJSON moves the name and op first for a readable file. */
  if (!cJSON_AddItemToArray(I->layers, L)) {
    cJSON_Delete(L);
    return nomem(I);
  }
  return n->n_output > 0 ? bind(I, n->output[0], NULL, I->n_names - 1,
                                nobias)
                         : OOC_OK;
}

static cJSON *
layer_obj(const char *op)
{
  cJSON *L = cJSON_CreateObject();
  if (L != NULL && cJSON_AddStringToObject(L, "op", op) == NULL) {
    cJSON_Delete(L);
    return NULL;
  }
  return L;
}

static int
add_ints(cJSON *L, const char *key, const int64_t *v, int n)
{
  cJSON *a = cJSON_AddArrayToObject(L, key);
  int k;
  if (a == NULL)
    return -1;
  for (k = 0; k < n; k++) {
    cJSON *x = cJSON_CreateNumber((double)v[k]);
    if (x == NULL || !cJSON_AddItemToArray(a, x)) {
      cJSON_Delete(x);
      return -1;
    }
  }
  return 0;
}

/* Load layers a+1 .. k as a model whose input is layer a's output (the
 * file's input when a is 0; the references to layer a made "input"), and
 * record the shapes of the layers loaded. */
static int
load_range(imp *I, int a, int k, ooc_err *e)
{
  ooc_model_opts mo = { .batch = 1 };
  ooc_model *m = NULL;
  cJSON *root = cJSON_CreateObject(), *ls;
  char *text = NULL;
  int j, rc = OOC_ENOMEM;

  if (root == NULL || cJSON_AddNumberToObject(root, "format", 1) == NULL ||
      cJSON_AddStringToObject(root, "name", "prefix") == NULL ||
      add_ints(root, "input", I->lyr[a].out.d, I->lyr[a].out.ndim) ||
      (ls = cJSON_AddArrayToObject(root, "layers")) == NULL)
    goto done;
  if (a == 0) {
    const cJSON *dt = cJSON_GetObjectItemCaseSensitive(I->root, "dtype");
    if (dt != NULL && cJSON_AddStringToObject(root, "dtype",
                                              dt->valuestring) == NULL)
      goto done;
  }
  for (j = a + 1; j <= k; j++) {
    cJSON *L = cJSON_Duplicate(I->lyr[j].obj, 1), *r;
    if (L == NULL || !cJSON_AddItemToArray(ls, L)) {
      cJSON_Delete(L);
      goto done;
    }
    /* the references to layer a: "input" (the strings set in place) */
    cJSON_ArrayForEach(r, cJSON_GetObjectItemCaseSensitive(L, "in"))
      if (a > 0 && cJSON_IsString(r) &&
          strcmp(r->valuestring, I->names[a]) == 0 &&
          cJSON_SetValuestring(r, "input") == NULL)
        goto done;
  }
  if ((text = cJSON_PrintUnformatted(root)) == NULL)
    goto done;
  if ((rc = ooc_model_load_string(text, I->path, &mo, &m, e)) != OOC_OK)
    goto done;
  for (j = 0; j < m->n_layers; j++) {
    const int *q = map_get(&I->lidx, m->layers[j].name);
    if (q != NULL && *q > a && *q <= k) {
      I->lyr[*q].out = m->layers[j].out;
      I->lyr[*q].known = 1;
    }
  }
done:
  if (rc == OOC_ENOMEM)
    ooc_err_set(e, rc, "out of memory");
  ooc_model_free(m);
  free(text);
  cJSON_Delete(root);
  return rc;
}

/* The per-sample output shape of emitted layer k. Shapes are recorded as
 * found; one not yet known loads the layers since the nearest earlier
 * layer of known shape that every layer after it reads from only at or
 * after it (usually a few layers), and failing that every layer so far.
 * O(the layers loaded). */
static int
layer_shape(imp *I, int k, ooc_shape *out)
{
  ooc_err e = { 0 };
  int a, low = k, rc;

  if (!I->lyr[k].known) {
    for (a = k; a > 0; a--) {
      if (a < k && I->lyr[a].known && low >= a)
        break;
      if (I->lyr[a].minref < low)
        low = I->lyr[a].minref;
    }
    if ((a == 0 || load_range(I, a, k, &e) != OOC_OK) &&
        (rc = load_range(I, 0, k, &e)) != OOC_OK)
      return rc == OOC_ENOMEM ? nomem(I)
             : ooc_err_set(I->err, rc, "%s: the layers imported so far "
                           "do not load: %s", I->path, e.msg);
    if (!I->lyr[k].known)
      return ooc_err_set(I->err, OOC_EINVAL, "%s: layer '%s' is missing",
                         I->path, I->names[k]);
  }
  *out = I->lyr[k].out;
  return OOC_OK;
}

/* The value of input k of node n: a layer or a constant; errors name the
 * node. */
static int
input_of(imp *I, const Node *n, size_t k, val **out)
{
  val *x;
  if (k >= n->n_input || n->input[k] == NULL || n->input[k][0] == '\0')
    return node_err(I, n, "missing input", NULL);
  x = lookup(I, n->input[k]);
  if (x == NULL)
    return node_err(I, n, "unknown input ", n->input[k]);
  *out = x;
  return OOC_OK;
}

/* ---- shape arithmetic, folded ---------------------------------------------
 * Exports compute shapes at run time from Shape (x.size(0), x.view(n, -1),
 * expand(n, -1, -1)): Shape, Gather, Slice, Unsqueeze, Squeeze, Concat,
 * Cast, Add, Sub, Mul, Div, Mod, Neg, Sqrt, Equal, Where, Range,
 * ConstantOfShape and Expand of small constants are evaluated here, at
 * the export's batch (the input's dim 0; 1 when it is named), so that the
 * Reshape or scale after them sees a constant. A folded constant is owned
 * by the importer (I->owned). */

enum { FOLD_MAX = 64, NOT_FOLDED = 1 };

/* The values of a small numeric constant (int64, int32, bool, float or
 * double; typed or raw little-endian data), at most FOLD_MAX, as doubles;
 * *is_int for the integer and bool types. -1 when it holds none readable
 * or more. */
static int
const_num(const Tensor *t, double *out, int *is_int)
{
  int64_t n = numel(t), i;
  size_t w;
  const uint8_t *r = t->raw_data.data;

  if (n < 0 || n > FOLD_MAX)
    return -1;
  *is_int = t->data_type == DT_INT64 || t->data_type == DT_INT32 ||
            t->data_type == DT_BOOL;
  if (t->data_type == DT_INT64 && t->n_int64_data == (size_t)n) {
    for (i = 0; i < n; i++)
      out[i] = (double)t->int64_data[i];
    return (int)n;
  }
  if ((t->data_type == DT_INT32 || t->data_type == DT_BOOL) &&
      t->n_int32_data == (size_t)n) {
    for (i = 0; i < n; i++)
      out[i] = (double)t->int32_data[i];
    return (int)n;
  }
  if (t->data_type == DT_FLOAT && t->n_float_data == (size_t)n) {
    for (i = 0; i < n; i++)
      out[i] = t->float_data[i];
    return (int)n;
  }
  w = t->data_type == DT_INT64 || t->data_type == DT_DOUBLE ? 8
      : t->data_type == DT_INT32 || t->data_type == DT_FLOAT ? 4
      : t->data_type == DT_BOOL ? 1 : 0;
  if (w == 0 || !t->has_raw_data || t->raw_data.len != (size_t)n * w)
    return -1;
  for (i = 0; i < n; i++) {
    uint64_t u = 0;
    int b;
    for (b = (int)w - 1; b >= 0; b--)
      u = u << 8 | r[(size_t)i * w + (size_t)b];
    if (t->data_type == DT_INT64) {
      out[i] = (double)(int64_t)u;
    } else if (t->data_type == DT_INT32) {
      out[i] = (double)(int32_t)(uint32_t)u;
    } else if (t->data_type == DT_BOOL) {
      out[i] = u != 0;
    } else if (t->data_type == DT_FLOAT) {
      uint32_t u32 = (uint32_t)u;
      float f;
      memcpy(&f, &u32, sizeof f);
      out[i] = f;
    } else {
      double d;
      memcpy(&d, &u, sizeof d);
      out[i] = d;
    }
  }
  return (int)n;
}

/* x as an int64, NaN as 0 and the rest clamped to +-2^62: folded values
 * come from the file, and a double out of int64's range does not
 * convert. */
static int64_t
d2i(double x)
{
  const double lim = 4611686018427387904.0;     /* 2^62 */
  return x != x ? 0 : x >= lim ? (int64_t)lim : x <= -lim ? -(int64_t)lim
                                                           : (int64_t)x;
}

/* A new constant of nd dims holding v (int64 when is_int, else float),
 * owned by the importer; NULL when out of memory (err set). */
static const Tensor *
new_const(imp *I, const double *v, int64_t n, const int64_t *dims, int nd,
          int is_int)
{
  Tensor *t;
  int64_t i;
  char *p;

  if (grow((void **)&I->owned, &I->cap_owned, I->n_owned + 1,
           sizeof *I->owned) ||
      (p = malloc(sizeof *t + (size_t)(nd + n + 1) * 8)) == NULL) {
    nomem(I);
    return NULL;
  }
  t = (Tensor *)(void *)p;
  *t = (Tensor)OOCSIM_ONNX__TENSOR_PROTO__INIT;
  t->dims = (int64_t *)(void *)(p + sizeof *t);
  t->n_dims = (size_t)nd;
  for (i = 0; i < nd; i++)
    t->dims[i] = dims[i];
  t->has_data_type = 1;
  if (is_int) {
    t->data_type = DT_INT64;
    t->int64_data = t->dims + nd;
    t->n_int64_data = (size_t)n;
    for (i = 0; i < n; i++)
      t->int64_data[i] = d2i(v[i]);
  } else {
    t->data_type = DT_FLOAT;
    t->float_data = (float *)(void *)(t->dims + nd);
    t->n_float_data = (size_t)n;
    for (i = 0; i < n; i++)
      t->float_data[i] = (float)v[i];
  }
  I->owned[I->n_owned++] = t;
  return t;
}

/* Bind the node's first output to a new constant. */
static int
bind_const(imp *I, const Node *n, const double *v, int64_t k,
           const int64_t *dims, int nd, int is_int)
{
  const Tensor *t = new_const(I, v, k, dims, nd, is_int);
  if (t == NULL)
    return OOC_ENOMEM;
  I->rep->n_folded++;
  return n->n_output > 0 ? bind(I, n->output[0], t, -1, 0) : OOC_OK;
}

/* Input k of n as a small constant: its values, dims and type. 0 when it
 * is one, NOT_FOLDED when it is a layer or not readable, < 0 on error. */
static int
small_in(imp *I, const Node *n, size_t k, double *v, int *cnt,
         int64_t *dims, int *nd, int *is_int)
{
  val *x;
  int rc;
  size_t d;

  if ((rc = input_of(I, n, k, &x)))
    return rc;
  if (x->t == NULL || x->bcast || x->t->n_dims > 8 ||
      (*cnt = const_num(x->t, v, is_int)) < 0)
    return NOT_FOLDED;
  *nd = (int)x->t->n_dims;
  for (d = 0; d < x->t->n_dims; d++)
    dims[d] = x->t->dims[d];
  return 0;
}

/* Element i of a broadcast operand of cnt elements (1: a scalar). */
static double
at(const double *v, int cnt, int i)
{
  return cnt == 1 ? v[0] : v[i];
}

/* Evaluate node n when its inputs are small constants (or, for Shape, any
 * value whose shape is known; Cast of a layer is that layer). OOC_OK when
 * folded, NOT_FOLDED when n is not shape arithmetic, < 0 on error. */
static int
fold_const(imp *I, const Node *n, const char *op)
{
  double a[FOLD_MAX], b[FOLD_MAX], c[FOLD_MAX], o[FOLD_MAX];
  int64_t da[8], db[8], dc[8], dims[16];
  int na = 0, nb = 0, nc = 0, nda = 0, ndb = 0, ndc = 0, ia = 0, ib = 0,
      ic = 0, rc, i, k;
  val *x;

  if (strcmp(op, "Shape") == 0) {
    int nd = 0;
    int64_t s = attr_i(n, "start", 0), e;
    if ((rc = input_of(I, n, 0, &x)))
      return rc;
    if (x->t != NULL) {
      if (x->t->n_dims > 8)
        return NOT_FOLDED;
      for (i = 0; i < (int)x->t->n_dims; i++)
        dims[nd++] = x->t->dims[i];
    } else {
      ooc_shape sh;
      if ((rc = layer_shape(I, x->layer, &sh)))
        return rc;
      dims[nd++] = I->batch;
      for (i = 0; i < sh.ndim; i++)
        dims[nd++] = sh.d[i];
    }
    e = attr_i(n, "end", nd);
    s = s < 0 ? s + nd : s;
    e = e < 0 ? e + nd : e > nd ? nd : e;
    s = s < 0 ? 0 : s > nd ? nd : s;
    for (i = 0, k = (int)s; k < e; k++)
      o[i++] = (double)dims[k];
    dims[0] = i;
    return bind_const(I, n, o, i, dims, 1, 1);
  }
  if (strcmp(op, "Cast") == 0) {
    int to = (int)attr_i(n, "to", DT_FLOAT);
    if ((rc = input_of(I, n, 0, &x)))
      return rc;
    if (x->t == NULL || x->bcast ||
        (na = const_num(x->t, a, &ia)) < 0) {
      /* A cast of activations or of a parameter: the same value here
       * (the model's dtype sets the bytes). */
      I->rep->n_folded++;
      return n->n_output > 0 ? bind(I, n->output[0], x->t, x->layer, 0)
                             : OOC_OK;
    }
    for (i = 0; i < (int)x->t->n_dims; i++)
      da[i] = x->t->dims[i];
    ia = to == DT_INT64 || to == DT_INT32 || to == DT_BOOL;
    for (i = 0; i < na; i++)
      o[i] = to == DT_BOOL ? a[i] != 0 : ia ? trunc(a[i]) : a[i];
    return bind_const(I, n, o, na, da, (int)x->t->n_dims, ia);
  }
  if (strcmp(op, "ConstantOfShape") == 0) {
    const Attr *v = attr(n, "value");
    double fill = 0;
    int64_t tot = 1;
    int fi = 0;
    if ((rc = small_in(I, n, 0, a, &na, da, &nda, &ia)))
      return rc;
    if (v && v->t && const_num(v->t, b, &fi) == 1)
      fill = b[0];
    for (i = 0; i < na && i < 8; i++) {
      dims[i] = d2i(a[i]);
      if (dims[i] < 0 || dims[i] > MAX_DIM)
        return node_err(I, n, dims[i] < 0 ? "a negative dim"
                                          : "a dim above 2^40", NULL);
      tot = tot > FOLD_MAX ? tot : tot * dims[i];   /* < 2^47 */
    }
    if (na > 8 || tot > FOLD_MAX)
      return NOT_FOLDED;
    for (i = 0; i < tot; i++)
      o[i] = fill;
    return bind_const(I, n, o, tot, dims, na, v && v->t ? fi : 0);
  }
  if (strcmp(op, "Expand") == 0) {
    int64_t tot = 1;
    if ((rc = input_of(I, n, 0, &x)))
      return rc;
    if (x->t == NULL)
      return NOT_FOLDED;
    if ((rc = small_in(I, n, 1, b, &nb, db, &ndb, &ib)))
      return rc;
    if ((na = const_num(x->t, a, &ia)) < 0) {
      /* A parameter expanded to the batch (ViT's class token, expanded
       * to [N, 1, H]): the parameter, broadcast. */
      if (nb != (int)x->t->n_dims || nb < 2 || x->t->dims[0] != 1)
        return node_err(I, n, "only a parameter expanded over the batch "
                        "dim is supported", NULL);
      I->rep->n_folded++;
      if (n->n_output == 0)
        return OOC_OK;
      if ((rc = bind(I, n->output[0], x->t, -1, 0)))
        return rc;
      I->v[I->n_v - 1].bcast = 1;
      return OOC_OK;
    }
    /* A small constant: numpy broadcasting to the shape. */
    nda = (int)x->t->n_dims;
    if (nb > 8 || nda > nb)
      return NOT_FOLDED;
    for (i = 0; i < nb; i++) {
      int64_t s = i - (nb - nda) >= 0 ? x->t->dims[i - (nb - nda)] : 1;
      dims[i] = s == 1 ? d2i(b[i]) : s;
      if (s != 1 && b[i] != 1 && d2i(b[i]) != s)
        return node_err(I, n, "shapes do not broadcast", NULL);
      if (dims[i] < 0 || dims[i] > MAX_DIM)
        return node_err(I, n, dims[i] < 0 ? "a negative dim"
                                          : "a dim above 2^40", NULL);
      tot = tot > FOLD_MAX ? tot : tot * dims[i];   /* < 2^47 */
    }
    if (tot > FOLD_MAX || (na != 1 && na != tot))
      return NOT_FOLDED;
    for (i = 0; i < tot; i++)
      o[i] = at(a, na, i);
    return bind_const(I, n, o, tot, dims, nb, ia);
  }
  if (strcmp(op, "Range") == 0) {
    int64_t tot;
    if ((rc = small_in(I, n, 0, a, &na, da, &nda, &ia)) ||
        (rc = small_in(I, n, 1, b, &nb, db, &ndb, &ib)) ||
        (rc = small_in(I, n, 2, c, &nc, dc, &ndc, &ic)))
      return rc;
    if (na != 1 || nb != 1 || nc != 1 || c[0] == 0)
      return NOT_FOLDED;
    tot = d2i(ceil((b[0] - a[0]) / c[0]));
    if (tot < 0)
      tot = 0;
    if (tot > FOLD_MAX)
      return NOT_FOLDED;
    for (i = 0; i < tot; i++)
      o[i] = a[0] + i * c[0];
    dims[0] = tot;
    return bind_const(I, n, o, tot, dims, 1, ia && ib && ic);
  }
  /* The rest need every input a small constant. */
  {
    size_t j;
    for (j = 0; j < n->n_input; j++) {
      if (n->input[j] == NULL || n->input[j][0] == '\0')
        continue;
      if ((rc = input_of(I, n, j, &x)))
        return rc;
      if (x->t == NULL || x->bcast || const_num(x->t, a, &ia) < 0)
        return NOT_FOLDED;
    }
  }
  if (strcmp(op, "Unsqueeze") == 0 || strcmp(op, "Squeeze") == 0) {
    int64_t ax[8];
    int nax = 0, nd, j, un = op[0] == 'U';
    const Attr *axes = attr(n, "axes");
    if ((rc = small_in(I, n, 0, a, &na, da, &nda, &ia)))
      return rc;
    if (axes) {
      for (i = 0; i < (int)axes->n_ints && i < 8; i++)
        ax[nax++] = axes->ints[i];
    } else if (n->n_input > 1 && n->input[1][0]) {
      if ((rc = small_in(I, n, 1, b, &nb, db, &ndb, &ib)))
        return rc;
      for (i = 0; i < nb && i < 8; i++)
        ax[nax++] = d2i(b[i]);
    }
    nd = un ? nda + nax : nda;
    for (j = 0; j < nax; j++)
      if (ax[j] < 0)
        ax[j] += nd;
    if (un) {
      int src = 0;
      if (nd > 8)
        return NOT_FOLDED;
      for (i = 0; i < nd; i++) {
        int ins = 0;
        for (j = 0; j < nax; j++)
          ins |= ax[j] == i;
        if (!ins && src >= nda)
          return node_err(I, n, "axes: out of range or repeated", NULL);
        dims[i] = ins ? 1 : da[src++];
      }
    } else {
      int m = 0;
      for (i = 0; i < nda; i++) {
        int drop = nax == 0 ? da[i] == 1 : 0;
        for (j = 0; j < nax; j++)
          drop |= ax[j] == i;
        if (!drop)
          dims[m++] = da[i];
      }
      nd = m;
    }
    return bind_const(I, n, a, na, dims, nd, ia);
  }
  if (strcmp(op, "Concat") == 0) {
    int64_t tot = 0;
    size_t j;
    for (j = 0; j < n->n_input; j++) {
      if ((rc = small_in(I, n, j, b, &nb, db, &ndb, &ib)))
        return rc;
      if (ndb > 1 || tot + nb > FOLD_MAX)
        return NOT_FOLDED;
      for (i = 0; i < nb; i++)
        o[tot++] = b[i];
      ia = j == 0 ? ib : ia && ib;
    }
    dims[0] = tot;
    return bind_const(I, n, o, tot, dims, 1, ia);
  }
  if (strcmp(op, "Gather") == 0) {
    int64_t ax = attr_i(n, "axis", 0);
    if ((rc = small_in(I, n, 0, a, &na, da, &nda, &ia)) ||
        (rc = small_in(I, n, 1, b, &nb, db, &ndb, &ib)))
      return rc;
    if (nda != 1 || (ax != 0 && ax != -1))
      return NOT_FOLDED;
    for (i = 0; i < nb; i++) {
      int64_t q = d2i(b[i]);
      q = q < 0 ? q + na : q;
      if (q < 0 || q >= na)
        return node_err(I, n, "an index out of range", NULL);
      o[i] = a[q];
    }
    return bind_const(I, n, o, nb, db, ndb, ia);
  }
  if (strcmp(op, "Slice") == 0) {
    int64_t s, e, st = 1, len;
    if (I->rep->opset < 10) {
      /* starts and ends as attributes (the axes all the data's one) */
      const Attr *as = attr(n, "starts"), *ae = attr(n, "ends");
      if ((rc = small_in(I, n, 0, a, &na, da, &nda, &ia)))
        return rc;
      if (as == NULL || ae == NULL || as->n_ints != 1 || ae->n_ints != 1)
        return NOT_FOLDED;
      b[0] = (double)as->ints[0];
      c[0] = (double)ae->ints[0];
      nb = nc = 1;
    } else if ((rc = small_in(I, n, 0, a, &na, da, &nda, &ia)) ||
               (rc = small_in(I, n, 1, b, &nb, db, &ndb, &ib)) ||
               (rc = small_in(I, n, 2, c, &nc, dc, &ndc, &ic))) {
      return rc;
    }
    if (nda != 1 || nb != 1 || nc != 1)
      return NOT_FOLDED;
    if (n->n_input > 4 && n->input[4][0]) {
      double sv[FOLD_MAX];
      int ns, is;
      int64_t dd[8];
      int ndd;
      if ((rc = small_in(I, n, 4, sv, &ns, dd, &ndd, &is)))
        return rc;
      st = ns == 1 ? d2i(sv[0]) : 0;
    }
    if (st != 1)
      return NOT_FOLDED;
    s = b[0] < -1e18 ? 0 : d2i(b[0]);
    e = c[0] > 1e18 ? na : d2i(c[0]);
    s = s < 0 ? s + na : s;
    e = e < 0 ? e + na : e;
    s = s < 0 ? 0 : s > na ? na : s;
    e = e < 0 ? 0 : e > na ? na : e;
    len = e > s ? e - s : 0;
    for (i = 0; i < len; i++)
      o[i] = a[s + i];
    dims[0] = len;
    return bind_const(I, n, o, len, dims, 1, ia);
  }
  if (strcmp(op, "Neg") == 0 || strcmp(op, "Sqrt") == 0) {
    if ((rc = small_in(I, n, 0, a, &na, da, &nda, &ia)))
      return rc;
    for (i = 0; i < na; i++)
      o[i] = op[0] == 'N' ? -a[i] : sqrt(a[i]);
    return bind_const(I, n, o, na, da, nda, op[0] == 'N' ? ia : 0);
  }
  if (strcmp(op, "Add") == 0 || strcmp(op, "Sub") == 0 ||
      strcmp(op, "Mul") == 0 || strcmp(op, "Div") == 0 ||
      strcmp(op, "Mod") == 0 || strcmp(op, "Equal") == 0 ||
      strcmp(op, "Where") == 0) {
    int w = op[0] == 'W', cnt, nd;
    const int64_t *dd;
    if ((rc = small_in(I, n, 0, a, &na, da, &nda, &ia)) ||
        (rc = small_in(I, n, 1, b, &nb, db, &ndb, &ib)) ||
        (w && (rc = small_in(I, n, 2, c, &nc, dc, &ndc, &ic))))
      return rc;
    if (!w)
      nc = 1, c[0] = 0;
    cnt = na > nb ? na : nb;
    cnt = nc > cnt ? nc : cnt;
    if ((na != 1 && na != cnt) || (nb != 1 && nb != cnt) ||
        (nc != 1 && nc != cnt))
      return NOT_FOLDED;        /* broadcasting beyond scalars */
    dd = na == cnt ? da : nb == cnt ? db : dc;
    nd = na == cnt ? nda : nb == cnt ? ndb : ndc;
    for (i = 0; i < cnt; i++) {
      double x0 = at(a, na, i), y0 = at(b, nb, i);
      switch (op[0]) {
      case 'A': o[i] = x0 + y0; break;
      case 'S': o[i] = x0 - y0; break;
      case 'M':
        if (op[1] == 'u')
          o[i] = x0 * y0;
        else if (y0 == 0)
          return node_err(I, n, "Mod by zero", NULL);
        else
          o[i] = x0 - y0 * floor(x0 / y0);
        break;
      case 'D':
        if (y0 == 0)
          return node_err(I, n, "a division by zero", NULL);
        o[i] = ia && ib ? trunc(x0 / y0) : x0 / y0;
        break;
      case 'E': o[i] = x0 == y0; break;
      default: o[i] = x0 != 0 ? y0 : at(c, nc, i); break;
      }
    }
    return bind_const(I, n, o, cnt, dd, nd,
                      op[0] == 'E' ? 1 : w ? ib && ic : ia && ib);
  }
  return NOT_FOLDED;
}

/* ---- the input ------------------------------------------------------------ */

static int
set_value(imp *I, const char *name, int64_t *v)
{
  int k;
  for (k = I->o->n_sets - 1; k >= 0; k--)
    if (strcmp(I->o->sets[k].key, name) == 0) {
      char what[120];
      snprintf(what, sizeof what, "--set %.60s", name);
      return ooc_parse_int(I->o->sets[k].value, what, v, I->err);
    }
  return OOC_ENOTFOUND;
}

static int
load_input(imp *I, const Graph *g)
{
  const OocsimOnnx__ValueInfoProto *in = NULL;
  const OocsimOnnx__TypeProto__Tensor *tt;
  cJSON *shape;
  ooc_shape in_shape = { 0 };
  size_t i;
  int n_in = 0, rc;

  for (i = 0; i < g->n_input; i++) {
    int is_init = 0;
    if (g->input[i]->name == NULL || g->input[i]->name[0] == '\0')
      return ooc_err_set(I->err, OOC_EINVAL, "%s: the graph's input %zu "
                         "has no name", I->path, i);
    {
      /* only initialisers are bound yet */
      const val *x = lookup(I, g->input[i]->name);
      is_init = x != NULL && x->t != NULL;
    }
    if (!is_init) {
      in = g->input[i];
      n_in++;
    }
  }
  if (n_in != 1)
    return ooc_err_set(I->err, OOC_EINVAL, "%s: the graph has %d data "
                       "inputs; an oocsim model takes one", I->path, n_in);
  tt = in->type && in->type->value_case ==
                       OOCSIM_ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE
           ? in->type->tensor_type : NULL;
  if (tt == NULL || tt->shape == NULL || tt->shape->n_dim < 2)
    return ooc_err_set(I->err, OOC_EINVAL, "%s: input '%s' has no tensor "
                       "shape of rank 2 or more (batch first)", I->path,
                       in->name ? in->name : "?");
  if (tt->shape->n_dim > OOC_MAX_DIMS + 1)
    return ooc_err_set(I->err, OOC_EINVAL, "%s: input '%s' has %zu dims "
                       "(at most %d: the batch and %d per sample)", I->path,
                       in->name, tt->shape->n_dim, OOC_MAX_DIMS + 1,
                       OOC_MAX_DIMS);
  switch (tt->elem_type) {
  case DT_FLOAT: case DT_INT64: case DT_INT32:
    break;
  case DT_FLOAT16:
    cJSON_AddStringToObject(I->root, "dtype", "fp16");
    break;
  case DT_BFLOAT16:
    cJSON_AddStringToObject(I->root, "dtype", "bf16");
    break;
  default:
    return ooc_err_set(I->err, OOC_EINVAL, "%s: input '%s' has element "
                       "type %d (float, float16, bfloat16, int32 or int64 "
                       "token ids expected)", I->path, in->name,
                       (int)tt->elem_type);
  }
  I->batch = tt->shape->dim[0]->value_case ==
                     OOCSIM_ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE &&
                 tt->shape->dim[0]->dim_value > 0
             ? tt->shape->dim[0]->dim_value : 1;
  if ((shape = cJSON_AddArrayToObject(I->root, "input")) == NULL)
    return nomem(I);
  for (i = 1; i < tt->shape->n_dim; i++) {
    const OocsimOnnx__TensorShapeProto__Dimension *d = tt->shape->dim[i];
    int64_t v = 0;
    if (d->value_case ==
        OOCSIM_ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE) {
      if ((v = d->dim_value) < 1)
        return ooc_err_set(I->err, OOC_EINVAL, "%s: input '%s' dim %zu is "
                           "%" PRId64 " (sizes start at 1)", I->path,
                           in->name, i, v);
    } else if (d->value_case ==
               OOCSIM_ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_PARAM &&
               d->dim_param && d->dim_param[0]) {
      rc = set_value(I, d->dim_param, &v);
      if (rc == OOC_ENOTFOUND)
        return ooc_err_set(I->err, OOC_EINVAL, "%s: input '%s' dim %zu is "
                           "'%s', set at run time: give it with --set "
                           "%s=N", I->path, in->name, i, d->dim_param,
                           d->dim_param);
      if (rc != OOC_OK)
        return rc;
      if (v < 1)
        return ooc_err_set(I->err, OOC_EINVAL, "%s: --set %s: expected a "
                           "size of at least 1", I->path, d->dim_param);
    } else {
      return ooc_err_set(I->err, OOC_EINVAL, "%s: input '%s' dim %zu has "
                         "no size (a dynamic dim with no name)", I->path,
                         in->name, i);
    }
    if (v > MAX_DIM)
      return ooc_err_set(I->err, OOC_EINVAL, "%s: input '%s' dim %zu is "
                         "%" PRId64 " (at most 2^40)", I->path, in->name, i,
                         v);
    in_shape.d[in_shape.ndim++] = v;
    if (!cJSON_AddItemToArray(shape, cJSON_CreateNumber((double)v)))
      return nomem(I);
  }
  /* A --set that names no dim would be ignored: refuse it, as a model's
   * loader refuses an unknown parameter, with the names there are. */
  for (int k = 0; k < I->o->n_sets; k++) {
    char list[300];
    size_t off = 0;
    int found = 0;
    list[0] = '\0';
    for (i = 1; i < tt->shape->n_dim; i++) {
      const OocsimOnnx__TensorShapeProto__Dimension *d = tt->shape->dim[i];
      if (d->value_case !=
              OOCSIM_ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_PARAM ||
          d->dim_param == NULL || d->dim_param[0] == '\0')
        continue;
      found |= strcmp(d->dim_param, I->o->sets[k].key) == 0;
      off += (size_t)snprintf(list + off,
                              off < sizeof list ? sizeof list - off : 0,
                              "%s%s", off ? ", " : "", d->dim_param);
    }
    if (!found)
      return ooc_err_set(I->err, OOC_EINVAL, "%s: --set %s: unknown "
                         "parameter (%s%s)", I->path, I->o->sets[k].key,
                         off ? "valid: " : "the model has none",
                         off ? list : "");
  }
  if (grow((void **)&I->names, &I->cap_names, 1, sizeof *I->names) ||
      grow((void **)&I->lyr, &I->cap_lyr, 1, sizeof *I->lyr) ||
      (I->names[0] = strdup("input")) == NULL)
    return nomem(I);
  I->n_names = 1;
  if (map_put(&I->lmap, I->names[0], 2) ||
      map_put(&I->lidx, I->names[0], 0))
    return nomem(I);
  I->lyr[0] = (struct lyr){ .known = 1, .out = in_shape };
  return bind(I, in->name, NULL, 0, 0);
}

/* ---- patterns ---------------------------------------------------------------
 * Exporters spell some of oocsim's ops as subgraphs: the attention of a
 * packed q,k,v projection (Split, per-head Reshape and Transpose, MatMul,
 * scale, mask, Softmax, MatMul, Transpose, Reshape) and the tanh form of
 * GELU. Where the whole subgraph is there, one layer stands for it and
 * its other nodes are skipped (counted as folded). */

/* The index of the one node that reads value `name`; -1 when none does,
 * several do, or it is a graph output. */
static int
consumer(const imp *I, const char *name)
{
  const int *j = map_get(&I->cons, name);
  return j != NULL ? *j : -1;
}

/* "[8,3,3,3]": the dims of t, cut short past len. */
static const char *
dims_str(const Tensor *t, char *buf, size_t len)
{
  size_t off = 0, i;
  off += (size_t)snprintf(buf, len, "[");
  for (i = 0; i < t->n_dims && off < len; i++)
    off += (size_t)snprintf(buf + off, len - off, "%s%" PRId64,
                            i ? "," : "", t->dims[i]);
  if (off < len)
    snprintf(buf + off, len - off, "]");
  return buf;
}

/* What is wrong with a constant's dims, which must be none negative or
 * above MAX_DIM and come to at most 2^62 elements (so numel() cannot
 * overflow): 0 nothing, 1 dim *at, 2 the elements. No message: a caller
 * that would label a bad tensor asks first, and labels only a bad one. */
static int
tensor_bad(const Tensor *t, size_t *at)
{
  int64_t e = 1;
  size_t i;

  for (i = 0; i < t->n_dims; i++) {
    *at = i;
    if (t->dims[i] < 0 || t->dims[i] > MAX_DIM)
      return 1;
    if (t->dims[i] > 0 && e > ((int64_t)1 << 62) / t->dims[i])
      return 2;
    e *= t->dims[i];
  }
  return 0;
}

/* The same, as an error naming the file and `what`. */
static int
check_tensor(imp *I, const Tensor *t, const char *what)
{
  char b[80];
  size_t i = 0;

  switch (tensor_bad(t, &i)) {
  case 1:
    return ooc_err_set(I->err, OOC_EINVAL, "%s: %s has shape %s: dim "
                       "%zu is %s", I->path, what, dims_str(t, b, sizeof b),
                       i, t->dims[i] < 0 ? "negative" : "above 2^40");
  case 2:
    return ooc_err_set(I->err, OOC_EINVAL, "%s: %s has shape %s: more "
                       "than 2^62 elements", I->path, what,
                       dims_str(t, b, sizeof b));
  default:
    return OOC_OK;
  }
}

/* The ONNX attribute types (AttributeProto.AttributeType). */
enum { AT_FLOAT = 1, AT_INT = 2, AT_STRING = 3, AT_TENSOR = 4,
       AT_INTS = 7 };

/* An attribute read here has the type the importer reads it as (an int
 * given as a float would read as its default); the type field, or when
 * it is absent, the value present. */
static int
check_attrs(imp *I, const Node *n)
{
  static const struct { const char *name; int type; } want[] = {
    { "group", AT_INT }, { "transA", AT_INT }, { "transB", AT_INT },
    { "axis", AT_INT }, { "ceil_mode", AT_INT }, { "storage_order", AT_INT },
    { "allowzero", AT_INT }, { "spatial", AT_INT }, { "start", AT_INT },
    { "end", AT_INT }, { "to", AT_INT }, { "kernel_shape", AT_INTS },
    { "strides", AT_INTS }, { "pads", AT_INTS }, { "dilations", AT_INTS },
    { "output_padding", AT_INTS }, { "perm", AT_INTS }, { "axes", AT_INTS },
    { "split", AT_INTS }, { "starts", AT_INTS }, { "ends", AT_INTS },
    { "ratio", AT_FLOAT }, { "auto_pad", AT_STRING },
  };
  static const char *const tname[] = { "?", "a FLOAT", "an INT", "a STRING",
                                       "a TENSOR", "a GRAPH", "FLOATS",
                                       "INTS", "STRINGS" };
  size_t i, k;
  char b[96];

  for (i = 0; i < n->n_attribute; i++) {
    const Attr *a = n->attribute[i];
    int type = a->has_type ? a->type : a->has_i ? AT_INT : a->has_f
               ? AT_FLOAT : a->has_s ? AT_STRING : a->t ? AT_TENSOR
               : a->n_ints ? AT_INTS : a->n_floats ? 6 : a->n_strings ? 8
               : 0;
    if (a->name == NULL || type == 0)
      continue;
    for (k = 0; k < sizeof want / sizeof want[0]; k++)
      if (strcmp(want[k].name, a->name) == 0 && want[k].type != type)
        return ooc_err_set(I->err, OOC_EINVAL, "%s: %s: attribute '%.40s' "
                           "is %s, expected %s", I->path,
                           node_label(I->g, n, b, sizeof b), a->name,
                           type > 0 && type <= 8 ? tname[type]
                                                 : "of an unknown type",
                           tname[want[k].type]);
    /* "value" is a TENSOR where the importer reads it; only there, since
     * Pad's opset-2 "value" is a FLOAT and Pad, not imported, must reach
     * the unsupported-op error with the others. */
    if (strcmp(a->name, "value") == 0 && type != AT_TENSOR &&
        n->op_type != NULL && (strcmp(n->op_type, "Constant") == 0 ||
                               strcmp(n->op_type, "ConstantOfShape") == 0))
      return ooc_err_set(I->err, OOC_EINVAL, "%s: %s: attribute 'value' "
                         "is %s, expected %s", I->path,
                         node_label(I->g, n, b, sizeof b),
                         type > 0 && type <= 8 ? tname[type]
                                               : "of an unknown type",
                         tname[AT_TENSOR]);
    size_t at;
    if (a->t != NULL && tensor_bad(a->t, &at)) {
      /* The label only for the message: an unnamed node's is found by a
       * scan of the graph. */
      char what[120];
      snprintf(what, sizeof what, "%s: attribute '%.40s'",
               node_label(I->g, n, b, sizeof b), a->name);
      if (check_tensor(I, a->t, what))
        return OOC_EINVAL;
    }
  }
  return OOC_OK;
}

static int
default_domain(const char *d)
{
  return d == NULL || d[0] == '\0' || strcmp(d, "ai.onnx") == 0;
}

/* Index the graph's values: the node that writes each (I->prod) and the
 * one node that reads each (I->cons). O(nodes + edges) expected. */
static int
index_graph(imp *I)
{
  const Graph *g = I->g;
  size_t i, k;

  for (i = 0; i < g->n_node; i++) {
    const Node *n = g->node[i];
    if (!default_domain(n->domain)) {
      char b[96];
      return ooc_err_set(I->err, OOC_EINVAL, "%s: %s: domain '%.60s' is "
                         "not supported (oocsim import reads the default "
                         "ONNX domain only)", I->path,
                         node_label(g, n, b, sizeof b), n->domain);
    }
    if (check_attrs(I, n))
      return OOC_EINVAL;
    for (k = 0; k < n->n_output; k++) {
      const int *j;
      const val *x;
      char b[96], b2[96];
      if (n->output[k] == NULL || n->output[k][0] == '\0')
        continue;                  /* an optional output left out */
      if ((j = map_get(&I->prod, n->output[k])) != NULL)
        return ooc_err_set(I->err, OOC_EINVAL, "%s: %s and %s both write "
                           "'%.60s' (each value has one writer)", I->path,
                           node_label(g, g->node[*j], b, sizeof b),
                           node_label(g, n, b2, sizeof b2),
                           n->output[k]);
      if ((x = lookup(I, n->output[k])) != NULL)
        return ooc_err_set(I->err, OOC_EINVAL, "%s: %s writes '%.60s', "
                           "which is the graph's %s", I->path,
                           node_label(g, n, b, sizeof b), n->output[k],
                           x->t != NULL ? "initialiser of that name"
                                        : "input");
      if (map_put(&I->prod, n->output[k], (int)i))
        return nomem(I);
    }
    for (k = 0; k < n->n_input; k++) {
      int *j;
      if (n->input[k] == NULL || n->input[k][0] == '\0')
        continue;
      if ((j = map_get(&I->cons, n->input[k])) != NULL) {
        if (*j != (int)i)
          *j = -1;                 /* read by several nodes */
      } else if (map_put(&I->cons, n->input[k], (int)i)) {
        return nomem(I);
      }
    }
  }
  for (i = 0; i < g->n_output; i++)
    if (g->output[i]->name != NULL &&
        map_put(&I->cons, g->output[i]->name, -1))
      return nomem(I);
  return OOC_OK;
}

static int
is_op(const Node *n, const char *op)
{
  return n->op_type && strcmp(n->op_type, op) == 0;
}

/* Node j when it is op `op` and reads `name` as input k (k < 0: any). */
static const Node *
node_if(const imp *I, int j, const char *op, const char *name, int k)
{
  const Node *n;
  size_t q;
  if (j < 0)
    return NULL;
  n = I->g->node[j];
  if (!is_op(n, op) || n->n_output < 1)
    return NULL;
  for (q = 0; q < n->n_input; q++)
    if ((k < 0 || (int)q == k) && n->input[q] &&
        strcmp(n->input[q], name) == 0)
      return n;
  return NULL;
}

/* A scalar float constant input k of n, into *v. */
static int
scalar_in(imp *I, const Node *n, size_t k, double *v)
{
  val *x = k < n->n_input && n->input[k] ? lookup(I, n->input[k]) : NULL;
  return x != NULL && x->t != NULL && !x->bcast && const_float(x->t, v) == 0;
}

/* The permutation of Transpose n equals p[0..4). */
static int
perm_is(const Node *n, const int64_t *p)
{
  const Attr *a = attr(n, "perm");
  int k;
  if (a == NULL || a->n_ints != 4)
    return 0;
  for (k = 0; k < 4; k++)
    if (a->ints[k] != p[k])
      return 0;
  return 1;
}

/* Reshape node n to [B, S, heads, d] (the batch given as itself, 0 or -1):
 * heads into *h. */
static int
heads_reshape(imp *I, const Node *n, int64_t S, int64_t H, int64_t *h)
{
  val *sh;
  int64_t w[5];
  if (!is_op(n, "Reshape") || n->n_input < 2 ||
      (sh = lookup(I, n->input[1])) == NULL || sh->t == NULL ||
      const_ints(sh->t, w, 5) != 4)
    return 0;
  if ((w[0] != I->batch && w[0] != 0 && w[0] != -1) || w[1] != S ||
      (w[2] < 1 && w[3] < 1))
    return 0;
  if (w[2] == -1 && w[3] > 0 && H % w[3] == 0)
    w[2] = H / w[3];
  else if (w[3] == -1 && w[2] > 0 && H % w[2] == 0)
    w[3] = H / w[2];
  if (w[2] < 1 || w[3] < 1 || w[2] > H || w[3] > H || w[2] * w[3] != H)
    return 0;
  *h = w[2];
  return 1;
}

/* Split node n of a packed q,k,v activation [S, 3H] (per sample) along
 * its last dim, and the attention that reads the three parts: one
 * attention layer. OOC_ENOTFOUND when the nodes after it are not that
 * pattern. */
static int
attention_pattern(imp *I, const Node *n)
{
  static const int64_t qv_perm[4] = { 0, 2, 1, 3 }, k_perm[4] = { 0, 2, 3, 1 };
  int chain[24], nc = 0, j, k, causal = 0, rc;
  int64_t heads = 0, h2 = 0, S, H, axis = attr_i(n, "axis", 0);
  const Node *t[3] = { NULL, NULL, NULL }, *mm, *x;
  const char *cur;
  val *in;
  ooc_shape s;
  cJSON *L;

  if ((rc = input_of(I, n, 0, &in)))
    return rc;
  if (in->t != NULL || n->n_output != 3)
    return OOC_ENOTFOUND;
  if ((rc = layer_shape(I, in->layer, &s)))
    return rc;
  if (s.ndim != 2 || (axis != 2 && axis != -1) || s.d[1] % 3 != 0)
    return OOC_ENOTFOUND;
  if (n->n_input > 1 && n->input[1][0]) {      /* explicit sizes: equal */
    val *sp = lookup(I, n->input[1]);
    int64_t w[3];
    if (sp == NULL || sp->t == NULL || const_ints(sp->t, w, 3) != 3 ||
        w[0] != s.d[1] / 3 || w[1] != w[0] || w[2] != w[0])
      return OOC_ENOTFOUND;
  } else if (attr(n, "split") != NULL) {      /* before opset 13 */
    const Attr *sp = attr(n, "split");
    if (sp->n_ints != 3 || sp->ints[0] != s.d[1] / 3 ||
        sp->ints[1] != sp->ints[0] || sp->ints[2] != sp->ints[0])
      return OOC_ENOTFOUND;
  }
  S = s.d[0];
  H = s.d[1] / 3;
  for (k = 0; k < 3; k++) {              /* q, k, v: Reshape, Transpose */
    const Node *r;
    int jr = consumer(I, n->output[k]), jt;
    if (jr < 0 || (r = I->g->node[jr]) == NULL || r->n_output < 1 ||
        !heads_reshape(I, r, S, H, k == 0 ? &heads : &h2) ||
        (k > 0 && h2 != heads))
      return OOC_ENOTFOUND;
    jt = consumer(I, r->output[0]);
    if ((t[k] = node_if(I, jt, "Transpose", r->output[0], 0)) == NULL ||
        !perm_is(t[k], k == 1 ? k_perm : qv_perm))
      return OOC_ENOTFOUND;
    chain[nc++] = jr;
    chain[nc++] = jt;
  }
  /* scores = MatMul(q, k^T) */
  j = consumer(I, t[0]->output[0]);
  if ((mm = node_if(I, j, "MatMul", t[0]->output[0], 0)) == NULL ||
      mm->n_input < 2 || strcmp(mm->input[1], t[1]->output[0]) != 0 ||
      consumer(I, t[1]->output[0]) != j)
    return OOC_ENOTFOUND;
  chain[nc++] = j;
  cur = mm->output[0];
  /* scale (Mul or Div by a scalar), mask (Add of a constant), in either
   * order, then Softmax over the last dim */
  for (;;) {
    double c;
    j = consumer(I, cur);
    if (j < 0 || nc >= 20 || I->g->node[j]->n_output < 1)
      return OOC_ENOTFOUND;
    x = I->g->node[j];
    if ((is_op(x, "Mul") || is_op(x, "Div")) && x->n_input == 2 &&
        strcmp(x->input[0], cur) == 0 && scalar_in(I, x, 1, &c)) {
      ;
    } else if (is_op(x, "Mul") && x->n_input == 2 &&
               strcmp(x->input[1], cur) == 0 && scalar_in(I, x, 0, &c)) {
      ;
    } else if (is_op(x, "Add") && x->n_input == 2 && !causal) {
      val *mk = lookup(I, x->input[strcmp(x->input[0], cur) == 0 ? 1 : 0]);
      /* a mask: a constant that is no parameter (a learned bias added
       * to the scores would be one, and has no place in oocsim's op) */
      if (mk == NULL || mk->t == NULL || mk->bcast || mk->pos_rows > 0 ||
          (!mk->opaque && mk->t->data_type == DT_FLOAT &&
           numel(mk->t) > FOLD_MAX))
        return OOC_ENOTFOUND;
      causal = 1;
    } else if (is_op(x, "Softmax") &&
               (attr_i(x, "axis", I->rep->opset < 13 ? 1 : -1) == -1 ||
                attr_i(x, "axis", 1) == 3)) {
      chain[nc++] = j;
      cur = x->output[0];
      break;
    } else {
      return OOC_ENOTFOUND;
    }
    chain[nc++] = j;
    cur = x->output[0];
  }
  /* optional dropout, then MatMul(p, v) */
  j = consumer(I, cur);
  if (j >= 0 && (x = node_if(I, j, "Dropout", cur, 0)) != NULL) {
    chain[nc++] = j;
    cur = x->output[0];
    j = consumer(I, cur);
  }
  if ((mm = node_if(I, j, "MatMul", cur, 0)) == NULL || mm->n_input < 2 ||
      strcmp(mm->input[1], t[2]->output[0]) != 0 ||
      consumer(I, t[2]->output[0]) != j)
    return OOC_ENOTFOUND;
  chain[nc++] = j;
  /* heads back: Transpose, then a Reshape to [B, S, H] or [B * S, H] */
  j = consumer(I, mm->output[0]);
  if ((x = node_if(I, j, "Transpose", mm->output[0], 0)) == NULL ||
      !perm_is(x, qv_perm))
    return OOC_ENOTFOUND;
  chain[nc++] = j;
  j = consumer(I, x->output[0]);
  if ((x = node_if(I, j, "Reshape", x->output[0], 0)) == NULL)
    return OOC_ENOTFOUND;
  {
    val *sh = x->n_input > 1 ? lookup(I, x->input[1]) : NULL;
    int64_t w[4];
    int nw = sh && sh->t ? const_ints(sh->t, w, 4) : -1;
    if (!((nw == 3 && (w[0] == I->batch || w[0] == 0 || w[0] == -1) &&
           w[1] == S && (w[2] == H || w[2] == -1)) ||
          (nw == 2 && (w[0] == -1 || (S > 0 && I->batch <= INT64_MAX / S &&
                                      w[0] == I->batch * S)) &&
           w[1] == H)))
      return OOC_ENOTFOUND;
  }
  chain[nc++] = j;
  if ((L = layer_obj("attention")) == NULL ||
      cJSON_AddNumberToObject(L, "heads", (double)heads) == NULL ||
      (causal && cJSON_AddTrueToObject(L, "causal") == NULL))
    return cJSON_Delete(L), nomem(I);
  for (k = 0; k < nc; k++)
    I->skip[chain[k]] = 1;
  I->rep->n_folded += nc;
  if ((rc = emit(I, n, L, (const val *const[]){ in }, 1, 0)) != OOC_OK)
    return rc;
  return bind(I, x->output[0], NULL, I->n_names - 1, 0);
}

/* GELU's tanh form, 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))), from
 * its Pow node: x^3, times 0.044715, plus x, times sqrt(2/pi), tanh,
 * plus 1, times 0.5 x (a Mul of x by 0.5 the exporter placed before). One
 * gelu layer. OOC_ENOTFOUND when the nodes are not that. */
static int
gelu_tanh_pattern(imp *I, const Node *n)
{
  const char *xs = n->n_input > 0 ? n->input[0] : "";
  static const char *const ops[5] = { "Mul", "Add", "Mul", "Tanh", "Add" };
  int chain[8], nc = 0, j, k;
  double c;
  const Node *y = n, *half = NULL;
  val *x;
  int rc;

  if (n->n_input != 2 || n->n_output < 1 || !scalar_in(I, n, 1, &c) ||
      c != 3)
    return OOC_ENOTFOUND;
  if ((rc = input_of(I, n, 0, &x)))
    return rc;
  if (x->t != NULL)
    return OOC_ENOTFOUND;
  for (k = 0; k < 5; k++) {
    j = consumer(I, y->output[0]);
    if (j < 0 || !is_op(I->g->node[j], ops[k]) ||
        I->g->node[j]->n_output < 1)
      return OOC_ENOTFOUND;
    y = I->g->node[j];
    chain[nc++] = j;
    if (k == 1) {         /* + x */
      if (y->n_input != 2 || (strcmp(y->input[0], xs) != 0 &&
                              strcmp(y->input[1], xs) != 0))
        return OOC_ENOTFOUND;
    } else if (k != 3) {  /* a scalar: 0.044715, sqrt(2/pi), 1 */
      double want = k == 0 ? 0.044715 : k == 2 ? 0.7978845608 : 1.0;
      if (y->n_input != 2 || !(scalar_in(I, y, 1, &c) ||
                               scalar_in(I, y, 0, &c)) ||
          fabs(c - want) > 1e-4)
        return OOC_ENOTFOUND;
    }
  }
  /* the last Mul: this times (0.5 x), 0.5 x being Mul(x, 0.5) */
  j = consumer(I, y->output[0]);
  if (j < 0 || !is_op(I->g->node[j], "Mul") || I->g->node[j]->n_input != 2 ||
      I->g->node[j]->n_output < 1)
    return OOC_ENOTFOUND;
  {
    const Node *m = I->g->node[j];
    const char *other = strcmp(m->input[0], y->output[0]) == 0 ? m->input[1]
                                                               : m->input[0];
    const int *ph = map_get(&I->prod, other);
    if (ph != NULL) {
      const Node *h = I->g->node[*ph];
      if (is_op(h, "Mul") && h->n_output == 1 &&
          strcmp(h->output[0], other) == 0 && h->n_input == 2 &&
          ((strcmp(h->input[0], xs) == 0 && scalar_in(I, h, 1, &c)) ||
           (strcmp(h->input[1], xs) == 0 && scalar_in(I, h, 0, &c))) &&
          c == 0.5)
        half = h;
    }
    if (half == NULL || consumer(I, half->output[0]) != j)
      return OOC_ENOTFOUND;
    chain[nc++] = j;
    y = m;
  }
  for (k = 0; k < nc; k++)
    I->skip[chain[k]] = 1;
  I->rep->n_folded += nc;
  {
    cJSON *L = layer_obj("gelu");
    if (L == NULL)
      return nomem(I);
    if ((rc = emit(I, n, L, (const val *const[]){ x }, 1, 0)) != OOC_OK)
      return rc;
  }
  return bind(I, y->output[0], NULL, I->n_names - 1, 0);
}

/* A node of constants only that is not small enough to evaluate (an
 * attention mask built from boolean tensors): its outputs are constants
 * whose values are never read and that are no parameter. */
static int
opaque_const(imp *I, const Node *n)
{
  static const char *const ops[] = { "And", "Or", "Xor", "Not", "Where",
                                     "Less", "LessOrEqual", "Greater",
                                     "GreaterOrEqual", "Equal", "Cast",
                                     "Expand", "Trilu", "ConstantOfShape",
                                     "Range", NULL };
  int64_t dims[8];
  int nd = 0, k, fl = 0, rc, q;
  size_t j;
  const Tensor *t;

  for (k = 0; ops[k] && !is_op(n, ops[k]); k++)
    ;
  if (ops[k] == NULL || n->n_output < 1)
    return NOT_FOLDED;
  for (j = 0; j < n->n_input; j++) {
    val *x;
    if (n->input[j] == NULL || n->input[j][0] == '\0')
      continue;
    if ((rc = input_of(I, n, j, &x)))
      return rc;
    if (x->t == NULL || x->bcast || x->pos_rows > 0 ||
        (!x->opaque && x->t->data_type == DT_FLOAT &&
         numel(x->t) > FOLD_MAX))
      return NOT_FOLDED;       /* an activation or a parameter */
    if (is_op(n, "Where") && j > 0)
      fl |= x->t->data_type == DT_FLOAT;
    if (j > 0 && !is_op(n, "Where"))
      continue;                /* shapes, axes: the first input's dims */
    if (x->t->n_dims > 8)
      return NOT_FOLDED;
    {                          /* numpy broadcasting, right-aligned */
      int r = (int)x->t->n_dims, R = nd > r ? nd : r;
      int64_t o[8];
      for (q = 0; q < R; q++) {
        int64_t a = q - (R - nd) >= 0 ? dims[q - (R - nd)] : 1;
        int64_t b = q - (R - r) >= 0 ? x->t->dims[q - (R - r)] : 1;
        o[q] = a == 1 ? b : a;
      }
      memcpy(dims, o, (size_t)R * sizeof *o);
      nd = R;
    }
  }
  if ((t = new_const(I, NULL, 0, dims, nd, !fl)) == NULL)
    return OOC_ENOMEM;
  I->rep->n_folded++;
  for (j = 0; j < n->n_output; j++)
    if ((rc = bind(I, n->output[j], t, -1, 0)) != OOC_OK)
      return rc;
    else
      I->v[I->n_v - 1].opaque = 1;
  return OOC_OK;
}

/* ---- ops ------------------------------------------------------------------ */

/* An attribute with one value per spatial dim that has another count. */
static int
count_err(imp *I, const Node *n, const char *name, int nsp, size_t got)
{
  char b[96];
  return ooc_err_set(I->err, OOC_EINVAL, "%s: %s: %s: expected %d values, "
                     "one per spatial dim, got %zu", I->path,
                     node_label(I->g, n, b, sizeof b), name, nsp, got);
}

/* Spatial attributes of a conv or pool node with nsp spatial dims into L:
 * kernel (given), stride, pad (symmetric only), dilation. */
static int
spatial(imp *I, const Node *n, cJSON *L, const int64_t *kernel, int nsp,
        int with_dilation)
{
  const Attr *a;
  int64_t v[3], pad[3] = { 0, 0, 0 };
  char buf[32];
  int k;
  const char *ap = attr_s(n, "auto_pad", "NOTSET", buf, sizeof buf);

  if (strcmp(ap, "NOTSET") != 0 && strcmp(ap, "VALID") != 0)
    return node_err(I, n, "auto_pad SAME_UPPER/SAME_LOWER (padding by the "
                    "output size) is not supported: export with explicit "
                    "pads", NULL);
  for (k = 0; k < nsp; k++)
    if (kernel[k] < 1 || kernel[k] > MAX_DIM)
      return node_err(I, n, "kernel_shape: sizes of 1 to 2^40 expected",
                      NULL);
  if (add_ints(L, "kernel", kernel, nsp))
    return nomem(I);
  a = attr(n, "strides");
  if (a != NULL && a->n_ints != (size_t)nsp)
    return count_err(I, n, "strides", nsp, a->n_ints);
  for (k = 0; k < nsp; k++)
    if ((v[k] = a != NULL ? a->ints[k] : 1) < 1 || v[k] > MAX_DIM)
      return node_err(I, n, "strides: 1 to 2^40 expected", NULL);
  if (add_ints(L, "stride", v, nsp))
    return nomem(I);
  a = attr(n, "pads");
  if (a && strcmp(ap, "NOTSET") == 0) {
    if (a->n_ints != 2 * (size_t)nsp)
      return node_err(I, n, "pads: expected begins and ends for each "
                      "spatial dim", NULL);
    for (k = 0; k < nsp; k++) {
      if (a->ints[k] != a->ints[k + nsp])
        return node_err(I, n, "pads: asymmetric padding (begin and end "
                        "differ) is not supported", NULL);
      if (a->ints[k] < 0 || a->ints[k] > MAX_DIM)
        return node_err(I, n, "pads: 0 to 2^40 expected", NULL);
      pad[k] = a->ints[k];
    }
  }
  if (add_ints(L, "pad", pad, nsp))
    return nomem(I);
  if (with_dilation) {
    a = attr(n, "dilations");
    if (a != NULL && a->n_ints != (size_t)nsp)
      return count_err(I, n, "dilations", nsp, a->n_ints);
    for (k = 0; k < nsp; k++)
      if ((v[k] = a != NULL ? a->ints[k] : 1) < 1 || v[k] > MAX_DIM)
        return node_err(I, n, "dilations: 1 to 2^40 expected", NULL);
    if (add_ints(L, "dilation", v, nsp))
      return nomem(I);
  }
  return OOC_OK;
}

/* The message of a weight that does not fit: "PATH: node 'c' (Conv):
 * weight 'w' has shape [8,4,3,3] but " and why. */
static int
weight_err(imp *I, const Node *n, const char *role, const val *w,
           const char *why)
{
  char lb[96], db[80];
  return ooc_err_set(I->err, OOC_EINVAL, "%s: %s: %s '%.60s' has shape %s "
                     "but %s", I->path, node_label(I->g, n, lb, sizeof lb),
                     role, w->onnx, dims_str(w->t, db, sizeof db), why);
}

/* A convolution's weight against its input and group: Conv's [M, C /
 * group, k...], ConvTranspose's [C, M / group, k...] for C input
 * channels; kernel_shape, when given, the weight's; the bias [M]. */
static int
conv_weights(imp *I, const Node *n, const val *x, const val *w,
             const val *b, int nsp, int64_t group, int transpose)
{
  const Tensor *W = w->t;
  const Attr *ks = attr(n, "kernel_shape");
  ooc_shape s;
  int64_t c, m;
  int rc, k;
  char why[160];

  if ((rc = layer_shape(I, x->layer, &s)))
    return rc;
  c = s.d[0];
  if (s.ndim != nsp + 1) {
    snprintf(why, sizeof why, "the input has %d dims per sample, not %d "
             "(channels first)", s.ndim, nsp + 1);
    return weight_err(I, n, "weight", w, why);
  }
  for (k = 0; k < nsp + 2; k++)
    if (W->dims[k] < 1)
      return weight_err(I, n, "weight", w, "a dim is 0");
  if (group < 1 || group > c || c % group != 0) {
    snprintf(why, sizeof why, "group %" PRId64 " does not divide the "
             "input's %" PRId64 " channels", group, c);
    return weight_err(I, n, "weight", w, why);
  }
  if (transpose ? W->dims[0] != c : W->dims[1] != c / group) {
    snprintf(why, sizeof why, "the input has %" PRId64 " channels (group %"
             PRId64 ")", c, group);
    return weight_err(I, n, "weight", w, why);
  }
  if (!transpose && W->dims[0] % group != 0) {
    snprintf(why, sizeof why, "its %" PRId64 " output channels are not a "
             "multiple of group %" PRId64, W->dims[0], group);
    return weight_err(I, n, "weight", w, why);
  }
  if (ks != NULL) {
    int same = ks->n_ints == (size_t)nsp;
    for (k = 0; same && k < nsp; k++)
      same = ks->ints[k] == W->dims[k + 2];
    if (!same)
      return weight_err(I, n, "weight", w, "kernel_shape differs from its "
                        "spatial dims");
  }
  if (transpose && W->dims[1] > MAX_DIM / group) {
    snprintf(why, sizeof why, "group %" PRId64 " makes more than 2^40 "
             "output channels", group);
    return weight_err(I, n, "weight", w, why);
  }
  m = transpose ? W->dims[1] * group : W->dims[0];
  if (b != NULL && (b->t->n_dims != 1 || b->t->dims[0] != m)) {
    snprintf(why, sizeof why, "the weight has %" PRId64 " output channels",
             m);
    return weight_err(I, n, "bias", b, why);
  }
  return OOC_OK;
}

static int
conv(imp *I, const Node *n, int transpose)
{
  val *x, *w, *b = NULL;
  const Tensor *W;
  cJSON *L;
  int nsp, rc;
  int64_t group = attr_i(n, "group", 1), out;
  char msg[96];

  if ((rc = input_of(I, n, 0, &x)) || (rc = input_of(I, n, 1, &w)))
    return rc;
  if (n->n_input > 2 && n->input[2][0] && (rc = input_of(I, n, 2, &b)))
    return rc;
  if (x->t != NULL || w->t == NULL || (b && b->t == NULL))
    return node_err(I, n, "the weights and bias must be initialisers and "
                    "the data an activation", NULL);
  W = w->t;
  nsp = (int)W->n_dims - 2;
  if (nsp < 2 || nsp > 3 || (transpose && nsp != 2))
    return node_err(I, n, transpose ? "only 2-D transposed convolutions "
                    "are supported" : "only 2-D and 3-D convolutions are "
                    "supported", NULL);
  if ((rc = conv_weights(I, n, x, w, b, nsp, group, transpose)))
    return rc;
  out = transpose ? W->dims[1] * group : W->dims[0];
  L = layer_obj(transpose ? "deconv2d" : nsp == 2 ? "conv2d" : "conv3d");
  if (L == NULL ||
      cJSON_AddNumberToObject(L, "out", (double)out) == NULL)
    return cJSON_Delete(L), nomem(I);
  if ((rc = spatial(I, n, L, W->dims + 2, nsp, 1)) != OOC_OK) {
    cJSON_Delete(L);
    return rc;
  }
  if (transpose) {
    const Attr *a = attr(n, "output_padding");
    int64_t op[2] = { 0, 0 };
    /* output_shape sets the pads from the shape wanted (the spec's
     * auto-padding), which this importer does not derive: refused, not
     * read as pads it is not. */
    if (attr(n, "output_shape") != NULL) {
      cJSON_Delete(L);
      return node_err(I, n, "output_shape is not supported (export the "
                      "transposed convolution with pads and "
                      "output_padding)", NULL);
    }
    if (a && a->n_ints != 2) {
      cJSON_Delete(L);
      snprintf(msg, sizeof msg, "output_padding: expected 2 values, one "
               "per spatial dim, got %zu", a->n_ints);
      return node_err(I, n, msg, NULL);
    }
    if (a) {
      op[0] = a->ints[0];
      op[1] = a->ints[1];
    }
    if (add_ints(L, "out_pad", op, 2))
      return cJSON_Delete(L), nomem(I);
  }
  if ((group != 1 && cJSON_AddNumberToObject(L, "groups", (double)group)
                         == NULL) ||
      cJSON_AddBoolToObject(L, "bias", b != NULL) == NULL)
    return cJSON_Delete(L), nomem(I);
  return emit(I, n, L, (const val *const[]){ x }, 1, 0);
}

static int
pool(imp *I, const Node *n, const char *op)
{
  val *x;
  const Attr *k = attr(n, "kernel_shape");
  cJSON *L;
  int rc;

  if ((rc = input_of(I, n, 0, &x)))
    return rc;
  if (k == NULL || k->n_ints < 1 || k->n_ints > 3)
    return node_err(I, n, "kernel_shape: expected 1 to 3 sizes", NULL);
  if (attr_i(n, "storage_order", 0) != 0)
    return node_err(I, n, "storage_order 1 is not supported", NULL);
  if ((L = layer_obj(op)) == NULL)
    return nomem(I);
  if ((rc = spatial(I, n, L, k->ints, (int)k->n_ints,
                    attr(n, "dilations") != NULL)) != OOC_OK) {
    cJSON_Delete(L);
    return rc;
  }
  {
    /* oocsim pools take no dilation: a dilated pool is not supported */
    cJSON *d = cJSON_GetObjectItemCaseSensitive(L, "dilation");
    int j;
    for (j = 0; d && j < cJSON_GetArraySize(d); j++)
      if (cJSON_GetArrayItem(d, j)->valuedouble != 1) {
        cJSON_Delete(L);
        return node_err(I, n, "dilated pooling is not supported", NULL);
      }
    cJSON_DeleteItemFromObjectCaseSensitive(L, "dilation");
  }
  if (attr_i(n, "ceil_mode", 0) &&
      cJSON_AddTrueToObject(L, "ceil_mode") == NULL)
    return cJSON_Delete(L), nomem(I);
  return emit(I, n, L, (const val *const[]){ x }, 1, 0);
}

/* An op of one activation input and no attributes the model needs. */
static int
unary(imp *I, const Node *n, const char *op, const char *act)
{
  val *x;
  cJSON *L;
  int rc;

  if ((rc = input_of(I, n, 0, &x)))
    return rc;
  if (x->t != NULL)
    return node_err(I, n, "a constant input is not supported", NULL);
  if ((L = layer_obj(op)) == NULL ||
      (act && cJSON_AddStringToObject(L, "act", act) == NULL))
    return cJSON_Delete(L), nomem(I);
  return emit(I, n, L, (const val *const[]){ x }, 1, 0);
}

/* An op over the last dim of an activation (the axis attribute -1, or
 * the last one counted with the batch), as oocsim op `op`; `refusal`
 * names any other axis. */
static int
last_dim(imp *I, const Node *n, const char *op, const char *refusal)
{
  ooc_shape s;
  /* Softmax before opset 13: axis 1 by default, over the dims from it
   * on as one (the last dim when that is the last) */
  int64_t axis = attr_i(n, "axis", I->rep->opset < 13 && is_op(n, "Softmax")
                                      ? 1 : -1);
  val *x;
  int rc;

  if ((rc = input_of(I, n, 0, &x)) || x->t != NULL)
    return rc ? rc : node_err(I, n, "a constant input", NULL);
  if ((rc = layer_shape(I, x->layer, &s)))
    return rc;
  if (axis != -1 && axis != s.ndim)
    return node_err(I, n, refusal, I->rep->opset < 13 && attr(n, "axis") ==
                    NULL && is_op(n, "Softmax") ? " (before opset 13 its "
                    "axis is 1 by default: the dims from 1 on as one)"
                    : NULL);
  return unary(I, n, op, NULL);
}

/* The node's output stands for its input (a folded node). */
static int
fold(imp *I, const Node *n, size_t k)
{
  val *x;
  int rc;
  if ((rc = input_of(I, n, k, &x)))
    return rc;
  I->rep->n_folded++;
  return n->n_output > 0 ? bind(I, n->output[0], x->t, x->layer, 0)
                         : OOC_OK;
}

/* A layer with the same storage and another shape: oocsim's reshape. */
static int
reshape_to(imp *I, const Node *n, val *x, const int64_t *dims, int nd)
{
  cJSON *L = layer_obj("reshape");
  if (L == NULL || add_ints(L, "shape", dims, nd))
    return cJSON_Delete(L), nomem(I);
  I->rep->n_folded++;
  return emit(I, n, L, (const val *const[]){ x }, 1, 0);
}

static int
matmul(imp *I, const Node *n, int gemm)
{
  val *a, *b, *c = NULL;
  cJSON *L;
  int rc;

  if ((rc = input_of(I, n, 0, &a)) || (rc = input_of(I, n, 1, &b)))
    return rc;
  if (gemm && n->n_input > 2 && n->input[2][0] &&
      (rc = input_of(I, n, 2, &c)))
    return rc;
  if (a->t != NULL)
    return node_err(I, n, "a constant left operand is not supported", NULL);
  if (b->t == NULL) {
    if (gemm)
      return node_err(I, n, "Gemm of two activations is not supported",
                      NULL);
    if ((L = layer_obj("matmul")) == NULL)
      return nomem(I);
    return emit(I, n, L, (const val *const[]){ a, b }, 2, 0);
  }
  if (b->t->n_dims != 2 || (gemm && attr_i(n, "transA", 0) != 0) ||
      (c && c->t == NULL))
    return node_err(I, n, "expected activation x 2-D weight initialiser "
                    "(+ constant bias)", NULL);
  {
    int tb = gemm && attr_i(n, "transB", 0);
    int64_t out = tb ? b->t->dims[0] : b->t->dims[1],
            in = tb ? b->t->dims[1] : b->t->dims[0];
    const Tensor *w = b->tsrc ? b->tsrc : b->t;
    ooc_shape s;
    char why[160];
    if ((rc = layer_shape(I, a->layer, &s)))
      return rc;
    if (s.ndim < 1 || in != s.d[s.ndim - 1] || out < 1) {
      if (out < 1)
        snprintf(why, sizeof why, "a dim is 0");
      else
        snprintf(why, sizeof why, "the input has %" PRId64 " features "
                 "(its last dim)%s", s.ndim ? s.d[s.ndim - 1] : 0,
                 gemm ? tb ? " (transB 1: [out, in])"
                           : " (transB 0: [in, out])" : "");
      return weight_err(I, n, "weight", b, why);
    }
    if (c != NULL && numel(c->t) != out) {
      snprintf(why, sizeof why, "the weight has %" PRId64 " output "
               "features", out);
      return weight_err(I, n, "bias", c, why);
    }
    int tied = 0, q;
    for (q = 0; q < I->n_emb; q++)
      tied |= I->emb[q] == w;    /* the embedding's table: a tied head */
    L = layer_obj("linear");
    if (L == NULL || cJSON_AddNumberToObject(L, "out", (double)out) == NULL
        || cJSON_AddBoolToObject(L, "bias", c != NULL) == NULL ||
        (tied && cJSON_AddTrueToObject(L, "tied") == NULL))
      return cJSON_Delete(L), nomem(I);
    return emit(I, n, L, (const val *const[]){ a }, 1, c == NULL);
  }
}

/* Add, Sub, Mul, Div. Two activations: add (same shapes); a 1-D constant
 * added to a linear layer without bias: that layer's bias; a scalar
 * constant: folded (its work is an element-wise pass; its memory that of
 * a tensor freed with its input). */
static int
binary(imp *I, const Node *n)
{
  val *a, *b, *x, *c;
  int rc, add = strcmp(n->op_type, "Add") == 0;

  if ((rc = input_of(I, n, 0, &a)) || (rc = input_of(I, n, 1, &b)))
    return rc;
  if (a->t == NULL && b->t == NULL) {
    cJSON *L;
    if (!add)
      return node_err(I, n, "an element-wise product or quotient of two "
                      "activations has no oocsim op", NULL);
    if ((L = layer_obj("add")) == NULL)
      return nomem(I);
    return emit(I, n, L, (const val *const[]){ a, b }, 2, 0);
  }
  if (a->t != NULL && b->t != NULL)
    return OOC_ENOTFOUND;     /* shape arithmetic: listed as unsupported */
  x = a->t ? b : a;
  c = a->t ? a : b;
  if (add && c->pos_rows > 0) {
    /* Positions added to the token embedding: its "positions" (the
     * table's rows, its parameters). */
    cJSON *L = I->lyr[x->layer].obj, *o, *pos;
    o = L ? cJSON_GetObjectItemCaseSensitive(L, "op") : NULL;
    pos = L ? cJSON_GetObjectItemCaseSensitive(L, "positions") : NULL;
    if (o == NULL || !cJSON_IsString(o) ||
        strcmp(o->valuestring, "embedding") != 0 || pos != NULL)
      return node_err(I, n, "a position table added to something other "
                      "than a token embedding", NULL);
    if (cJSON_AddNumberToObject(L, "positions", (double)c->pos_rows) == NULL)
      return nomem(I);
    I->rep->n_folded++;
    return n->n_output > 0 ? bind(I, n->output[0], NULL, x->layer, 0)
                           : OOC_OK;
  }
  if (numel(c->t) == 1) {
    if (strcmp(n->op_type, "Div") == 0 && c == a)
      return node_err(I, n, "a constant divided by an activation has no "
                      "oocsim op", NULL);
    return fold(I, n, c == a ? 1 : 0);
  }
  if (add && x->linear_nobias && c->t->n_dims == 1) {
    cJSON *L = I->lyr[x->layer].obj;
    cJSON *out = L ? cJSON_GetObjectItemCaseSensitive(L, "out") : NULL;
    if (out && cJSON_IsNumber(out) &&
        (int64_t)out->valuedouble == c->t->dims[0]) {
      cJSON_ReplaceItemInObjectCaseSensitive(L, "bias", cJSON_CreateTrue());
      I->rep->n_folded++;
      return n->n_output > 0 ? bind(I, n->output[0], NULL, x->layer, 0)
                             : OOC_OK;
    }
  }
  if (add && (c->t->n_dims == 3 ? c->t->dims[0] == 1 : c->t->n_dims == 2)) {
    /* Learned positions added to a sequence [T, H]: into the tokens
     * layer that made it, or a tokens layer of its own. */
    const int64_t *pd = c->t->dims + (c->t->n_dims - 2);
    ooc_shape s;
    cJSON *L = I->lyr[x->layer].obj, *o, *pos;
    if ((rc = layer_shape(I, x->layer, &s)))
      return rc;
    if (s.ndim == 2 && pd[0] == s.d[0] && pd[1] == s.d[1]) {
      o = L ? cJSON_GetObjectItemCaseSensitive(L, "op") : NULL;
      pos = L ? cJSON_GetObjectItemCaseSensitive(L, "positions") : NULL;
      if (o && cJSON_IsString(o) && strcmp(o->valuestring, "tokens") == 0 &&
          pos == NULL) {
        if (cJSON_AddNumberToObject(L, "positions", (double)pd[0]) == NULL)
          return nomem(I);
        I->rep->n_folded++;
        return n->n_output > 0 ? bind(I, n->output[0], NULL, x->layer, 0)
                               : OOC_OK;
      }
      if ((L = layer_obj("tokens")) == NULL ||
          cJSON_AddNumberToObject(L, "positions", (double)pd[0]) == NULL)
        return cJSON_Delete(L), nomem(I);
      return emit(I, n, L, (const val *const[]){ x }, 1, 0);
    }
  }
  return node_err(I, n, "an element-wise op with a constant tensor has no "
                  "oocsim op (only a linear layer's bias, learned "
                  "positions, or a scalar)", NULL);
}

/* A norm's constant inputs after the data (BatchNormalization's scale,
 * bias, mean and variance; LayerNormalization's scale and bias): one
 * value per channel (the input's first dim per sample) or, for `last`,
 * per feature of the last dim. */
static int
norm_params(imp *I, const Node *n, int last)
{
  static const char *const role[] = { "", "scale", "bias", "mean",
                                      "variance" };
  val *x, *p;
  ooc_shape s;
  size_t k;
  int rc;
  char why[160];

  if ((rc = input_of(I, n, 0, &x)) || x->t != NULL)
    return rc;                 /* a constant input: refused after */
  if ((rc = layer_shape(I, x->layer, &s)))
    return rc;
  for (k = 1; k < n->n_input && k < 5; k++) {
    int64_t want = s.ndim < 1 ? 0 : last ? s.d[s.ndim - 1] : s.d[0];
    if (n->input[k][0] == '\0')
      continue;
    if ((rc = input_of(I, n, k, &p)))
      return rc;
    if (p->t == NULL || numel(p->t) == want)
      continue;
    snprintf(why, sizeof why, "the input has %" PRId64 " %s", want,
             last ? "features (its last dim)" : "channels");
    return weight_err(I, n, role[k], p, why);
  }
  return OOC_OK;
}

/* What ONNX defines, every opset, for the ops node() maps: the most
 * inputs the op takes, and its attributes (space-separated, each with a
 * space on both sides; NULL: not checked). An input or attribute past
 * these would be ignored, so that a file would import as something it
 * is not: an 'Add' of three inputs as an Add of two, a Conv whose pads
 * are misspelt without padding. NULL for the other ops. */
struct op_spec {
  const char *op;
  int max_inputs;
  const char *attrs;
};

static const struct op_spec *
op_spec(const char *op)
{
  static const struct op_spec t[] = {
    { "Conv", 3, " auto_pad dilations group kernel_shape pads strides " },
    { "ConvTranspose", 3, " auto_pad dilations group kernel_shape "
                          "output_padding output_shape pads strides " },
    { "MaxPool", 1, " auto_pad ceil_mode dilations kernel_shape pads "
                    "storage_order strides " },
    { "AveragePool", 1, " auto_pad ceil_mode count_include_pad dilations "
                        "kernel_shape pads strides " },
    { "GlobalAveragePool", 1, " " },
    { "BatchNormalization", 5, " consumed_inputs epsilon is_test momentum "
                               "spatial training_mode " },
    { "Relu", 1, " consumed_inputs " },
    { "Sigmoid", 1, " consumed_inputs " },
    { "Tanh", 1, " consumed_inputs " },
    { "Elu", 1, " alpha consumed_inputs " },
    { "HardSwish", 1, " " },
    { "LeakyRelu", 1, " alpha consumed_inputs " },
    { "Gelu", 1, " approximate " },
    { "Add", 2, " axis broadcast consumed_inputs " },
    { "Sub", 2, " axis broadcast consumed_inputs " },
    { "Mul", 2, " axis broadcast consumed_inputs " },
    { "Div", 2, " axis broadcast consumed_inputs " },
    { "MatMul", 2, " " },
    { "Gemm", 3, " alpha beta broadcast transA transB " },
    { "Identity", 1, " " },
    { "Dropout", 3, " consumed_inputs is_test ratio seed " },
    { "Constant", 0, NULL },
    { "Softmax", 1, " axis " },
    { "LayerNormalization", 3, " axis epsilon stash_type " },
    { "Flatten", 1, " axis " },
    { "Reshape", 2, " allowzero consumed_inputs shape " },
    { "Transpose", 1, " perm " },
    { "Pow", 2, " " },
    { "Split", 2, NULL },
    { "Gather", 2, NULL },
  };
  for (size_t k = 0; k < sizeof t / sizeof t[0]; k++)
    if (strcmp(op, t[k].op) == 0)
      return &t[k];
  return NULL;
}

static int
node(imp *I, const Node *n)
{
  const char *op = n->op_type ? n->op_type : "";
  const struct op_spec *sp = op_spec(op);
  const char *known = sp != NULL ? sp->attrs : NULL;
  val *x;
  cJSON *L;
  int rc;
  char b[96], key[80];

  if (sp != NULL && n->n_input > (size_t)sp->max_inputs)
    return ooc_err_set(I->err, OOC_EINVAL, "%s: %s: %s takes at most %d "
                       "input%s, got %zu", I->path,
                       node_label(I->g, n, b, sizeof b), op, sp->max_inputs,
                       sp->max_inputs == 1 ? "" : "s", n->n_input);
  for (size_t k = 0; known != NULL && k < n->n_attribute; k++) {
    const char *an = n->attribute[k]->name ? n->attribute[k]->name : "";
    snprintf(key, sizeof key, " %.70s ", an);
    if (strstr(known, key) == NULL || strchr(an, ' ') != NULL)
      return ooc_err_set(I->err, OOC_EINVAL, "%s: %s: '%.60s' is not an "
                         "attribute of %s", I->path,
                         node_label(I->g, n, b, sizeof b), an, op);
  }
  if ((rc = fold_const(I, n, op)) != NOT_FOLDED ||
      (rc = opaque_const(I, n)) != NOT_FOLDED)
    return rc;
  if (strcmp(op, "Split") == 0)
    return attention_pattern(I, n);
  if (strcmp(op, "Pow") == 0)
    return gelu_tanh_pattern(I, n);
  if (strcmp(op, "Conv") == 0)
    return conv(I, n, 0);
  if (strcmp(op, "ConvTranspose") == 0)
    return conv(I, n, 1);
  if (strcmp(op, "MaxPool") == 0)
    return n->n_output > 1 ? node_err(I, n, "the indices output is not "
                                      "supported", NULL)
                           : pool(I, n, "maxpool");
  if (strcmp(op, "AveragePool") == 0)
    return pool(I, n, "avgpool");
  if (strcmp(op, "GlobalAveragePool") == 0)
    return unary(I, n, "globalpool", NULL);
  if (strcmp(op, "BatchNormalization") == 0) {
    if (attr_i(n, "spatial", 1) == 0)     /* opsets 7, 8 */
      return node_err(I, n, "spatial 0 (statistics per element) is not "
                      "supported", NULL);
    if ((rc = norm_params(I, n, 0)))
      return rc;
    return unary(I, n, "batchnorm", NULL);
  }
  if (strcmp(op, "Relu") == 0)
    return unary(I, n, "relu", NULL);
  if (strcmp(op, "Sigmoid") == 0)
    return unary(I, n, "act", "sigmoid");
  if (strcmp(op, "Tanh") == 0)
    return unary(I, n, "act", "tanh");
  if (strcmp(op, "Elu") == 0)
    return unary(I, n, "act", "elu");
  if (strcmp(op, "HardSwish") == 0)
    return unary(I, n, "act", "hardswish");
  if (strcmp(op, "LeakyRelu") == 0)
    return unary(I, n, "act", "leaky_relu");
  if (strcmp(op, "Gelu") == 0)
    return unary(I, n, "gelu", NULL);
  if (strcmp(op, "Add") == 0 || strcmp(op, "Sub") == 0 ||
      strcmp(op, "Mul") == 0 || strcmp(op, "Div") == 0)
    return binary(I, n);
  if (strcmp(op, "MatMul") == 0 || strcmp(op, "Gemm") == 0)
    return matmul(I, n, op[0] == 'G');
  if (strcmp(op, "Identity") == 0)
    return fold(I, n, 0);
  if (strcmp(op, "Dropout") == 0) {
    /* Exported for training (opset 12+: a training_mode input), a
     * dropout with its ratio (an attribute before opset 12, else a
     * constant input); for inference, the identity. */
    double p = attr_f(n, "ratio", 0.5);
    if ((rc = input_of(I, n, 0, &x)))
      return rc;
    if (n->n_input > 1 && n->input[1][0]) {
      val *r;
      if ((rc = input_of(I, n, 1, &r)))
        return rc;
      if (r->t == NULL || const_float(r->t, &p) != 0)
        return node_err(I, n, "the ratio must be a constant float", NULL);
    }
    if (n->n_input > 2 && n->input[2][0]) {
      if ((L = layer_obj("dropout")) == NULL ||
          cJSON_AddNumberToObject(L, "p", p) == NULL)
        return cJSON_Delete(L), nomem(I);
      return emit(I, n, L, (const val *const[]){ x }, 1, 0);
    }
    return fold(I, n, 0);
  }
  if (strcmp(op, "Constant") == 0) {
    const Attr *v = attr(n, "value");
    if (v == NULL || v->t == NULL)
      return node_err(I, n, "only a tensor 'value' is supported", NULL);
    I->rep->n_folded++;
    return n->n_output > 0 ? bind(I, n->output[0], v->t, -1, 0) : OOC_OK;
  }
  if (strcmp(op, "Softmax") == 0)
    return last_dim(I, n, "softmax", "only a softmax over the last dim is "
                    "supported");
  if (strcmp(op, "LayerNormalization") == 0) {
    /* The axis first (-1, or the last dim given by number), then the
     * scale and bias against that dim. */
    if ((rc = last_dim(I, n, "layernorm", "only a norm over the last dim "
                       "is supported")))
      return rc;
    return norm_params(I, n, 1);
  }
  if (strcmp(op, "Flatten") == 0) {
    if (attr_i(n, "axis", 1) != 1)
      return node_err(I, n, "only axis 1 (keep the batch) is supported",
                      NULL);
    return unary(I, n, "flatten", NULL);
  }
  if (strcmp(op, "Reshape") == 0 || strcmp(op, "Transpose") == 0) {
    ooc_shape s;
    int64_t dims[OOC_MAX_DIMS + 1];
    int nd, k;
    if ((rc = input_of(I, n, 0, &x)))
      return rc;
    if (x->t != NULL && op[0] == 'T' && x->t->n_dims == 2 && !x->opaque &&
        !x->bcast && x->pos_rows == 0) {
      /* A weight used transposed (a linear's [out, in] as MatMul's [in,
       * out]; a tied LM head reads the embedding's table so). */
      const Attr *p = attr(n, "perm");
      int64_t d2[2] = { x->t->dims[1], x->t->dims[0] };
      const Tensor *tt;
      if (p != NULL && (p->n_ints != 2 || p->ints[0] != 1 || p->ints[1] != 0))
        return node_err(I, n, "a constant input", NULL);
      if ((tt = new_const(I, NULL, 0, d2, 2, 0)) == NULL)
        return OOC_ENOMEM;
      I->rep->n_folded++;
      if (n->n_output == 0)
        return OOC_OK;
      if ((rc = bind(I, n->output[0], tt, -1, 0)))
        return rc;
      I->v[I->n_v - 1].tsrc = x->tsrc ? x->tsrc : x->t;
      return OOC_OK;
    }
    if (x->t != NULL)
      return node_err(I, n, "a constant input", NULL);
    if ((rc = layer_shape(I, x->layer, &s)))
      return rc;
    if (op[0] == 'T') {
      const Attr *p = attr(n, "perm");
      /* A permutation that keeps the batch first: a view of the same
       * bytes with the dims permuted (PyTorch's transpose). */
      if (p == NULL || p->n_ints != (size_t)s.ndim + 1 || p->ints[0] != 0)
        return node_err(I, n, "only a permutation that keeps the batch "
                        "dim first is supported", NULL);
      for (k = 1; k <= s.ndim; k++) {
        int q;
        if (p->ints[k] < 1 || p->ints[k] > s.ndim)
          return node_err(I, n, "perm: out of range", NULL);
        for (q = 1; q < k; q++)
          if (p->ints[q] == p->ints[k])
            return node_err(I, n, "perm: a dim given twice", NULL);
        dims[k - 1] = s.d[p->ints[k] - 1];
      }
      return reshape_to(I, n, x, dims, s.ndim);
    } else {
      val *sh;
      int64_t want[OOC_MAX_DIMS + 1];
      if ((rc = input_of(I, n, 1, &sh)))
        return rc;
      nd = sh->t ? const_ints(sh->t, want, OOC_MAX_DIMS + 1) : -1;
      if (nd < 2)
        return node_err(I, n, "the shape is computed at run time or is "
                        "not a constant int64 list of rank 2 or more "
                        "(export with constant folding and a static "
                        "shape)", NULL);
      for (k = 0; k < nd; k++) {
        if ((want[k] == 0 && attr_i(n, "allowzero", 0) != 0) ||
            want[k] < -1)
          return node_err(I, n, "the shape has a dim below -1 or a zero "
                          "dim (allowzero 1): no per-sample shape", NULL);
        if (want[k] > MAX_DIM)
          return node_err(I, n, "the shape has a dim above 2^40", NULL);
      }
      /* [B * S, H] from [B, S, H]: the batch merged with the leading
       * dims for a matrix product over the last one (a Gemm); per
       * sample, the same [S, H]. */
      if (nd == 2 && s.ndim >= 2 && want[1] == s.d[s.ndim - 1]) {
        int64_t rows = I->batch;
        for (k = 0; k < s.ndim - 1 && rows > 0; k++)
          rows = s.d[k] > 0 && rows <= INT64_MAX / s.d[k] ? rows * s.d[k]
                                                          : -2;
        if (want[0] == -1 || (rows > 0 && want[0] == rows))
          return fold(I, n, 0);
      }
      /* want[0] is the batch (0: copy it, -1, or its value) */
      for (k = 1; k < nd; k++)
        dims[k - 1] = want[k] == 0 && k - 1 < s.ndim ? s.d[k - 1]
                                                     : want[k];
      if (nd - 1 == s.ndim) {   /* the shape it has: nothing to do */
        for (k = 0; k < s.ndim && dims[k] == s.d[k]; k++)
          ;
        if (k == s.ndim)
          return fold(I, n, 0);
      }
      return reshape_to(I, n, x, dims, nd - 1);
    }
  }
  if (strcmp(op, "Concat") == 0) {
    ooc_shape s;
    const val *ins[64];
    int64_t axis = attr_i(n, "axis", 1), pre = 0;
    size_t k, n_const = 0;
    if (n->n_input < 1 || n->n_input > 64)
      return node_err(I, n, "expected 1 to 64 inputs", NULL);
    for (k = 0; k < n->n_input; k++) {
      val *y;
      if ((rc = input_of(I, n, k, &y)))
        return rc;
      if (y->t != NULL) {
        /* Learned tokens put before a sequence (ViT's class token,
         * expanded over the batch): parameters [1, P, H], first. */
        if (k != n_const || y->t->n_dims != 3 || y->t->dims[0] != 1)
          return OOC_ENOTFOUND;  /* a parameter joined: no oocsim op */
        pre += y->t->dims[1];
        n_const++;
        continue;
      }
      ins[k - n_const] = y;
    }
    if (n_const > 0) {
      val *seq;
      if (n->n_input - n_const != 1 || (axis != 1 && axis != -2))
        return node_err(I, n, "learned tokens are supported before one "
                        "sequence, along its rows (axis 1)", NULL);
      seq = lookup(I, n->input[n_const]);
      if ((rc = layer_shape(I, seq->layer, &s)))
        return rc;
      if (s.ndim != 2 ||
          s.d[1] != lookup(I, n->input[0])->t->dims[2])
        return node_err(I, n, "the tokens' width differs from the "
                        "sequence's", NULL);
      if ((L = layer_obj("tokens")) == NULL ||
          cJSON_AddNumberToObject(L, "prepend", (double)pre) == NULL)
        return cJSON_Delete(L), nomem(I);
      return emit(I, n, L, (const val *const[]){ seq }, 1, 0);
    }
    if ((rc = layer_shape(I, ins[0]->layer, &s)))
      return rc;
    {
      /* ONNX's rank is the batch dim plus the per-sample shape's. */
      int64_t a0 = axis;
      char why[96];
      if (axis < 0)
        axis += s.ndim + 1;
      if (axis < 0 || axis > s.ndim) {
        snprintf(why, sizeof why, "%lld is out of range [%d, %d] for "
                 "rank %d", (long long)a0, -(s.ndim + 1), s.ndim,
                 s.ndim + 1);
        return node_err(I, n, "axis ", why);
      }
      if (axis == 0)
        return node_err(I, n, "concatenation along the batch dim is not "
                        "supported", NULL);
    }
    if ((L = layer_obj("concat")) == NULL ||
        cJSON_AddNumberToObject(L, "axis", (double)(axis - 1)) == NULL)
      return cJSON_Delete(L), nomem(I);
    return emit(I, n, L, ins, (int)n->n_input, 0);
  }
  if (strcmp(op, "Gather") == 0) {
    val *t, *ids;
    if ((rc = input_of(I, n, 0, &t)) || (rc = input_of(I, n, 1, &ids)))
      return rc;
    if (t->t != NULL && t->t->n_dims == 2 && !t->opaque && ids->t != NULL &&
        !ids->opaque && attr_i(n, "axis", 0) == 0 &&
        t->t->data_type == DT_FLOAT) {
      /* A table read at constant indices (GPT-2's positions 0..S-1): the
       * position embedding, added to the token embedding next. Its value
       * has the shape it has (the indices' dims and the width; no data),
       * so that no other op reads it as the table. */
      int64_t d[9];
      const Tensor *g;
      size_t q;
      if (ids->t->n_dims > 8)
        return OOC_ENOTFOUND;
      for (q = 0; q < ids->t->n_dims; q++)
        d[q] = ids->t->dims[q];
      d[q] = t->t->dims[1];
      if ((g = new_const(I, NULL, 0, d, (int)q + 1, 0)) == NULL)
        return OOC_ENOMEM;
      I->rep->n_folded++;
      if (n->n_output == 0)
        return OOC_OK;
      if ((rc = bind(I, n->output[0], g, -1, 0)))
        return rc;
      I->v[I->n_v - 1].pos_rows = t->t->dims[0];
      return OOC_OK;
    }
    if (t->t == NULL || t->t->n_dims != 2 || ids->t != NULL ||
        attr_i(n, "axis", 0) != 0)
      return OOC_ENOTFOUND;   /* not an embedding lookup */
    if (grow((void **)&I->emb, &I->cap_emb, I->n_emb + 1, sizeof *I->emb))
      return nomem(I);
    I->emb[I->n_emb++] = t->t;
    if ((L = layer_obj("embedding")) == NULL ||
        cJSON_AddNumberToObject(L, "vocab", (double)t->t->dims[0]) == NULL ||
        cJSON_AddNumberToObject(L, "out", (double)t->t->dims[1]) == NULL)
      return cJSON_Delete(L), nomem(I);
    return emit(I, n, L, (const val *const[]){ ids }, 1, 0);
  }
  return ooc_err_set(I->err, OOC_ENOTFOUND, "no oocsim op");
}

static void
count_op(ooc_onnx_report *r, const char *op)
{
  int k;
  for (k = 0; k < r->n_ops; k++)
    if (strcmp(r->ops[k].op, op) == 0) {
      r->ops[k].n++;
      return;
    }
  if (r->n_ops < OOC_ONNX_MAX_OPS) {
    snprintf(r->ops[r->n_ops].op, sizeof r->ops[0].op, "%s", op);
    r->ops[r->n_ops++].n = 1;
  }
}

/* ---- the model ------------------------------------------------------------ */

static int
finish(imp *I, const Graph *g)
{
  val *y;
  cJSON *L;
  int last = cJSON_GetArraySize(I->layers) - 1;

  if (g->n_output < 1 || g->output[0]->name == NULL)
    return ooc_err_set(I->err, OOC_EINVAL, "%s: the graph has no output",
                       I->path);
  y = lookup(I, g->output[0]->name);
  if (y == NULL || y->t != NULL || y->layer < 1)
    return ooc_err_set(I->err, OOC_EINVAL, "%s: the graph's output '%s' "
                       "is not computed by an imported layer", I->path,
                       g->output[0]->name);
  if (!I->o->loss)
    return OOC_OK;
  /* A final softmax becomes the loss's: softmax_ce on its input. */
  L = cJSON_GetArrayItem(I->layers, last);
  if (y->layer == last + 1 && L &&
      strcmp(cJSON_GetObjectItemCaseSensitive(L, "op")->valuestring,
             "softmax") == 0) {
    /* its "in" stays: softmax_ce reads the softmax's input */
    cJSON_ReplaceItemInObjectCaseSensitive(L, "op",
                                           cJSON_CreateString("softmax_ce"));
    cJSON_ReplaceItemInObjectCaseSensitive(L, "name",
                                           cJSON_CreateString("loss"));
    return OOC_OK;
  }
  if ((L = layer_obj("softmax_ce")) == NULL ||
      cJSON_AddStringToObject(L, "name", "loss") == NULL ||
      cJSON_AddStringToObject(L, "in", I->names[y->layer]) == NULL ||
      !cJSON_AddItemToArray(I->layers, L))
    return cJSON_Delete(L), nomem(I);
  return OOC_OK;
}

/* The default domain's opset, from ModelProto.opset_import (required by
 * the ONNX spec), into rep->opset: OPSET_MIN .. OPSET_MAX, the versions
 * whose semantics of the ops read here the importer follows. */
static int
check_opset(imp *I)
{
  size_t i;
  int found = 0;

  for (i = 0; i < I->m->n_opset_import; i++) {
    const OocsimOnnx__OperatorSetIdProto *os = I->m->opset_import[i];
    if (!default_domain(os->domain))
      continue;                /* a node in it is refused by its domain */
    if (found)
      return ooc_err_set(I->err, OOC_EINVAL, "%s: opset_import lists the "
                         "default domain twice", I->path);
    if (!os->has_version || os->version < OPSET_MIN ||
        os->version > OPSET_MAX)
      return ooc_err_set(I->err, OOC_EINVAL, "%s: opset %" PRId64 " of "
                         "the default domain is not supported (oocsim "
                         "import reads opsets %d to %d: export with one of "
                         "them)", I->path, os->has_version ? os->version : 0,
                         OPSET_MIN, OPSET_MAX);
    I->rep->opset = (int)os->version;
    found = 1;
  }
  if (!found)
    return ooc_err_set(I->err, OOC_EINVAL, "%s: no opset_import for the "
                       "default domain (the ONNX spec requires it; oocsim "
                       "import reads opsets %d to %d)", I->path, OPSET_MIN,
                       OPSET_MAX);
  return OOC_OK;
}

/* The whole file; at most 2 GiB (protobuf's limit for one message). */
static int
read_binary(const char *path, char **out, size_t *len, ooc_err *err)
{
  FILE *f = fopen(path, "rb");
  char *buf = NULL;
  size_t cap = 0, n = 0;

  *out = NULL;
  if (f == NULL)
    return ooc_err_set(err, OOC_EIO, "%s: %s", path, strerror(errno));
  for (;;) {
    size_t got;
    if (n == cap) {
      char *q;
      if (cap >= ((size_t)1 << 31)) {
        free(buf);
        fclose(f);
        return ooc_err_set(err, OOC_ERANGE, "%s: larger than 2 GiB (the "
                           "limit of one protobuf message; keep the weights "
                           "as external data)", path);
      }
      cap = cap ? 2 * cap : 1 << 16;
      if ((q = realloc(buf, cap)) == NULL) {
        free(buf);
        fclose(f);
        return ooc_err_set(err, OOC_ENOMEM, "%s: out of memory", path);
      }
      buf = q;
    }
    got = fread(buf + n, 1, cap - n, f);
    if (n == 0 && got > 0 && buf[0] == 0) {
      /* Field 0 does not exist: no protobuf starts so (/dev/zero would
       * be read to the 2 GiB limit first). */
      free(buf);
      fclose(f);
      return ooc_err_set(err, OOC_EPARSE, "%s: not an ONNX model (it starts "
                         "with a zero byte, which no protobuf does)", path);
    }
    n += got;
    if (got == 0)
      break;
  }
  if (ferror(f)) {
    int e = errno;
    free(buf);
    fclose(f);
    return ooc_err_set(err, OOC_EIO, "%s: %s", path, strerror(e));
  }
  fclose(f);
  if (n == 0) {
    free(buf);
    return ooc_err_set(err, OOC_EPARSE, "%s: empty file, not an ONNX model",
                       path);
  }
  *out = buf;
  *len = n;
  return OOC_OK;
}

static void
stem(const char *path, char *out, size_t n)
{
  const char *b = strrchr(path, '/'), *e;
  size_t k = 0;
  b = b ? b + 1 : path;
  e = strrchr(b, '.');
  if (e == NULL || e == b)
    e = b + strlen(b);
  for (; b < e && k + 1 < n; b++)
    out[k++] = isalnum((unsigned char)*b) ? *b : '_';
  out[k] = '\0';
  if (k == 0)
    snprintf(out, n, "imported");
}

int
ooc_onnx_available(void)
{
  return 1;
}

int
ooc_onnx_import(const char *path, const ooc_onnx_opts *o, cJSON **out,
                ooc_onnx_report *rep, ooc_err *err)
{
  char *buf = NULL;
  size_t len = 0;
  int rc;

  *out = NULL;
  memset(rep, 0, sizeof *rep);
  if ((rc = read_binary(path, &buf, &len, err)) != OOC_OK)
    return rc;
  rc = ooc_onnx_import_mem((const uint8_t *)buf, len, path, o, out, rep,
                           err);
  free(buf);
  return rc;
}

int
ooc_onnx_import_mem(const uint8_t *buf, size_t len, const char *path,
                    const ooc_onnx_opts *o, cJSON **out,
                    ooc_onnx_report *rep, ooc_err *err)
{
  imp I = { .path = path, .o = o, .rep = rep, .err = err };
  char name[80], desc[256];
  size_t i;
  int rc = OOC_OK;
  const Graph *g;

  *out = NULL;
  memset(rep, 0, sizeof *rep);
  I.m = oocsim_onnx__model_proto__unpack(NULL, len, buf);
  if (I.m == NULL || I.m->graph == NULL) {
    rc = ooc_err_set(err, OOC_EPARSE, "%s: not an ONNX model (the "
                     "protobuf does not parse%s: truncated or another "
                     "format?)", path,
                     I.m ? " to a model with a graph" : "");
    oocsim_onnx__model_proto__free_unpacked(I.m, NULL);
    return rc;
  }
  g = I.m->graph;
  I.g = g;
  if ((I.skip = calloc(g->n_node + 1, 1)) == NULL) {
    rc = nomem(&I);
    goto out;
  }
  if ((rc = check_opset(&I)) != OOC_OK)
    goto out;
  snprintf(rep->producer, sizeof rep->producer, "%s%s%s",
           I.m->producer_name ? I.m->producer_name : "",
           I.m->producer_version ? " " : "",
           I.m->producer_version ? I.m->producer_version : "");
  ooc_text_one_line(rep->producer);  /* printed, and kept in the JSON */
  rep->n_nodes = (int)g->n_node;

  if (o->name)
    snprintf(name, sizeof name, "%s", o->name);
  else
    stem(path, name, sizeof name);
  snprintf(desc, sizeof desc, "imported from %s by oocsim import "
           "(producer %s, opset %d, %d nodes)",
           strrchr(path, '/') ? strrchr(path, '/') + 1 : path,
           rep->producer[0] ? rep->producer : "unknown", rep->opset,
           rep->n_nodes);
  /* Both may come from the file's name, which need not be UTF-8. */
  ooc_text_one_line(name);
  ooc_text_one_line(desc);
  if ((I.root = cJSON_CreateObject()) == NULL ||
      cJSON_AddNumberToObject(I.root, "format", 1) == NULL ||
      cJSON_AddStringToObject(I.root, "name", name) == NULL ||
      cJSON_AddStringToObject(I.root, "description", desc) == NULL) {
    rc = nomem(&I);
    goto out;
  }
  {
    /* ONNX records no in-place ops: the rules stay the layers' (none in
     * place) until the user sets them as the source model runs. */
    cJSON *fw = cJSON_AddObjectToObject(I.root, "framework");
    if (fw == NULL ||
        cJSON_AddStringToObject(fw, "name",
                                I.m->producer_name &&
                                        strcmp(I.m->producer_name,
                                               "pytorch") == 0
                                    ? "pytorch" : "onnx") == NULL ||
        cJSON_AddStringToObject(fw, "_in_place", "ONNX does not record "
                                "in-place ops: set relu_in_place and "
                                "add_in_place to true where the source "
                                "model runs them in place (torchvision's "
                                "ResNets do)") == NULL) {
      rc = nomem(&I);
      goto out;
    }
  }
  for (i = 0; i < g->n_initializer; i++) {
    const Tensor *t = g->initializer[i];
    char what[96];
    if (t->name == NULL)
      continue;
    snprintf(what, sizeof what, "initialiser '%.60s'", t->name);
    if (lookup(&I, t->name) != NULL) {
      rc = ooc_err_set(err, OOC_EINVAL, "%s: %s is given twice", path,
                       what);
      goto out;
    }
    if ((rc = check_tensor(&I, t, what)) ||
        (rc = bind(&I, t->name, t, -1, 0)))
      goto out;
  }
  if ((rc = load_input(&I, g)) != OOC_OK ||
      (rc = index_graph(&I)) != OOC_OK)
    goto out;
  if ((I.layers = cJSON_AddArrayToObject(I.root, "layers")) == NULL) {
    rc = nomem(&I);
    goto out;
  }
  for (i = 0; i < g->n_node; i++) {
    const Node *n = g->node[i];
    count_op(rep, n->op_type ? n->op_type : "?");
    if (I.skip[i])
      continue;              /* part of a fused pattern */
    rc = node(&I, n);
    if (rc == OOC_ENOTFOUND) {
      if (rep->n_unsupported < OOC_ONNX_MAX_UNSUPPORTED)
        node_label(g, n, rep->unsupported[rep->n_unsupported],
                   sizeof rep->unsupported[0]);
      rep->n_unsupported++;
      /* Its outputs are unknown: later nodes reading them fail too, so
       * bind them to the node's first input where there is one, to list
       * every unsupported op in one pass. */
      if (n->n_input > 0 && n->n_output > 0 && lookup(&I, n->input[0])) {
        val *x = lookup(&I, n->input[0]);
        size_t k;
        for (k = 0; k < n->n_output; k++)
          if ((rc = bind(&I, n->output[k], x->t, x->layer, 0)))
            goto out;
      }
      rc = OOC_OK;
      continue;
    }
    if (rc != OOC_OK && rep->n_unsupported > 0)
      break;       /* most likely a consequence: report the cause */
    if (rc != OOC_OK)
      goto out;
  }
  if (rep->n_unsupported > 0) {
    char list[400];
    size_t off = 0;
    int k;
    list[0] = '\0';
    for (k = 0; k < rep->n_unsupported && k < 4; k++)
      off += (size_t)snprintf(list + off, off < sizeof list
                                            ? sizeof list - off : 0,
                              "%s%s", k ? ", " : "", rep->unsupported[k]);
    rc = ooc_err_set(err, OOC_EINVAL, "%s: %d node%s ha%s no oocsim op: "
                     "%s%s", path, rep->n_unsupported,
                     rep->n_unsupported == 1 ? "" : "s",
                     rep->n_unsupported == 1 ? "s" : "ve", list,
                     rep->n_unsupported > 4 ? ", ..." : "");
    goto out;
  }
  if ((rc = finish(&I, g)) != OOC_OK)
    goto out;
  /* The result must load as an oocsim model. */
  {
    ooc_model_opts mo = { .batch = 1 };
    ooc_model *m = NULL;
    ooc_err e = { 0 };
    char *text = cJSON_PrintUnformatted(I.root);
    if (text == NULL) {
      rc = nomem(&I);
      goto out;
    }
    rc = ooc_model_load_string(text, path, &mo, &m, &e);
    free(text);
    if (rc != OOC_OK) {
      rc = ooc_err_set(err, rc, "%s: the imported model does not load: %s",
                       path, e.msg);
      goto out;
    }
    rep->n_layers = m->n_layers;
    ooc_model_free(m);
  }
  *out = I.root;
  I.root = NULL;
out:
  cJSON_Delete(I.root);
  free(I.lyr);
  free(I.lidx.s);
  for (i = 0; i < (size_t)I.n_names; i++)
    free(I.names[i]);
  free(I.names);
  free(I.v);
  free(I.vmap.s);
  free(I.lmap.s);
  free(I.prod.s);
  free(I.cons.s);
  for (i = 0; i < (size_t)I.n_owned; i++)
    free(I.owned[i]);
  free(I.owned);
  free(I.skip);
  free(I.emb);
  oocsim_onnx__model_proto__free_unpacked(I.m, NULL);
  return rc;
}

#endif
