/* ir/model.h — a network as C structs: layers in topological order, their
 * tensors' shapes and bytes, FLOPs, and what each backward needs.
 *
 * A model is loaded from JSON (models/README.md documents the format) by
 * ooc_model_load(), which applies the batch size and the --set overrides,
 * expands repeat blocks, infers and checks every shape through the op table
 * (ir/ops.c) and fills the per-layer costs. Everything downstream
 * (simulator, planners, executor, reports) reads only these structs.
 *
 * Ownership: ooc_model_load() returns a heap model that the caller frees
 * with ooc_model_free() (which accepts NULL). All strings and arrays inside
 * belong to the model.
 *
 * Conventions: shapes are per sample, without the batch dimension; the batch
 * is model->batch. CNN tensors are [C,H,W] (3D: [C,D,H,W]); transformer
 * tensors are [S,H] (sequence, hidden). Bytes and FLOPs in ooc_layer are for
 * the whole batch. One multiply-add counts as 2 FLOPs.
 */
#ifndef OOC_MODEL_H
#define OOC_MODEL_H

#include <stdint.h>
#include <stddef.h>
#include "base/error.h"

#define OOC_MAX_DIMS 5

/* The largest model file and nesting the loader reads: a 10^6-layer model
 * written layer by layer (about 60 B a layer) fits, while the JSON
 * parser's memory (tens of bytes per input byte) stays bounded. */
#define OOC_MODEL_MAX_BYTES ((size_t)64 << 20)
#define OOC_MODEL_MAX_DEPTH 64
/* The most layers a model has (the input included); a plan file's
 * n_layers above it cannot be any model's. */
#define OOC_MODEL_MAX_LAYERS (1 << 20)
/* The most bytes a model's tensors may come to at its batch: its
 * activations, weights, gradients, optimizer state and largest
 * workspace, summed (the naive in-core peak). 64 PiB is thousands of
 * times any device or host, and keeps every sum the liveness, the
 * planners and the simulator take over live tensors (in int64, some of
 * them a few times over) far from overflowing. */
#define OOC_MODEL_MAX_TOTAL_BYTES ((uint64_t)1 << 56)

typedef enum { OOC_FP32 = 0, OOC_FP16 = 1, OOC_BF16 = 2 } ooc_dtype;

/* "fp32" -> OOC_FP32 ... ; returns 0 or OOC_EINVAL. */
int ooc_dtype_parse(const char *s, ooc_dtype *out);
const char *ooc_dtype_name(ooc_dtype d);
unsigned ooc_dtype_size(ooc_dtype d);

typedef enum {
  OOC_OPK_INPUT = 0,
  OOC_OPK_CONV2D,
  OOC_OPK_CONV3D,
  OOC_OPK_DECONV2D,   /* transposed conv2d */
  OOC_OPK_UPSAMPLE,   /* nearest or bilinear, scale factor */
  OOC_OPK_LINEAR,
  OOC_OPK_BATCHNORM,
  OOC_OPK_RELU,
  OOC_OPK_ACT,        /* sigmoid, tanh, silu, ...: attrs.act */
  OOC_OPK_MAXPOOL,
  OOC_OPK_AVGPOOL,
  OOC_OPK_GLOBALPOOL, /* global average pool to [C,1,1] */
  OOC_OPK_ADD,
  OOC_OPK_CONCAT,     /* along channels (dim 0) unless attrs.axis */
  OOC_OPK_LRN,
  OOC_OPK_DROPOUT,
  OOC_OPK_SOFTMAX_CE, /* softmax + cross-entropy loss: output [1] */
  OOC_OPK_FLATTEN,    /* no copy: aliases its input */
  OOC_OPK_RESHAPE,    /* no copy: aliases its input */
  OOC_OPK_EMBEDDING,  /* token (+position) embedding: [S] -> [S,H] */
  OOC_OPK_MATMUL,     /* batched matmul of two tensors */
  OOC_OPK_ATTENTION,  /* scaled dot-product attention core on q,k,v */
  OOC_OPK_LAYERNORM,
  OOC_OPK_GELU,
  OOC_OPK_RMSNORM,    /* root-mean-square norm over the last dim */
  OOC_OPK_ROPE,       /* rotary position embedding of leading columns */
  OOC_OPK_SWIGLU,     /* silu(first half) x second half */
  OOC_OPK_TOKENS,     /* prepend learned tokens, add learned positions */
  OOC_OPK_SLICE,      /* rows [start, start + length) of the first dim */
  OOC_OPK_SOFTMAX,    /* softmax over the last dim (an imported graph's) */
  OOC_OPK_COUNT
} ooc_op_kind;

/* What a layer's backward reads from forward (bit set). */
enum {
  OOC_NEED_NONE = 0,
  OOC_NEED_INPUT = 1u << 0,  /* its input activations */
  OOC_NEED_OUTPUT = 1u << 1  /* its own output activation */
};

/* Op classes for the roofline's per-class efficiency (hw->eff[]). */
typedef enum {
  OOC_CLASS_CONV = 0,   /* convolutions, transposed conv */
  OOC_CLASS_GEMM,       /* linear, matmul, attention */
  OOC_CLASS_NORM,       /* batch-norm, layer-norm, LRN */
  OOC_CLASS_ELTWISE,    /* activations, add, dropout, concat, upsample */
  OOC_CLASS_POOL,       /* pooling */
  OOC_CLASS_OTHER,      /* embedding, softmax/loss, optimizer */
  OOC_CLASS_COUNT
} ooc_op_class;

const char *ooc_op_class_name(ooc_op_class c);

/* Attributes parsed from JSON. Unused ones are zero. Spatial arrays are
 * in (D,)H,W order; for 2D ops index 0 is H and 1 is W. */
typedef struct ooc_attrs {
  int64_t out;          /* out channels (conv) or out features (linear) */
  int kernel[3], stride[3], pad[3], dilation[3], out_pad[3];
  int groups;           /* conv groups, default 1 */
  int bias;             /* 1 if a bias vector is present */
  int in_place;         /* relu/act/dropout/add: overwrite the input */
  int in_place_set;     /* in_place was written on the layer (else the
                           model's framework block decides) */
  int index_bytes;      /* maxpool: bytes per saved argmax index (the
                           framework's maxpool_indices; 0: none, the
                           backward reads the input and the output) */
  int axis;             /* concat axis (per-sample dims), default 0 */
  int ceil_mode;        /* pooling output rounding */
  int scale;            /* upsample factor */
  int heads;            /* attention heads */
  int causal;           /* attention causal mask */
  int flash;            /* attention impl: 0 eager (saves the softmax), 1
                           flash (saves the log-sum-exp, recomputes) */
  int kv_heads;         /* attention: key/value heads (grouped-query
                           attention); 0 means heads */
  int head_dim;         /* rope: width of one head's slice */
  int64_t rotate;       /* rope: leading columns rotated (0: all) */
  int64_t prepend;      /* tokens: learned tokens put before the input */
  int64_t types;        /* embedding: token-type (segment) rows */
  int64_t start, length; /* slice: rows kept along the first dim */
  int64_t vocab;        /* embedding rows */
  int64_t positions;    /* embedding: learned position rows (0: none) */
  int tied;             /* linear: weights tied to an embedding (0 params) */
  int transpose_b;      /* matmul: multiply by B transposed */
  int lrn_size;         /* LRN window */
  double p;             /* dropout probability */
  char act[16];         /* act: "sigmoid", "tanh", "silu", "elu", ... */
  char mode[16];        /* upsample: "nearest" | "bilinear"; pool: - */
  int ndim;             /* reshape target rank */
  int64_t shape[OOC_MAX_DIMS]; /* reshape target per-sample shape */
  int spatial_n[5];     /* list length given for kernel, stride, pad,
                           dilation, out_pad (0: a scalar, applied to every
                           spatial dim); checked against the input's rank */
} ooc_attrs;

typedef struct ooc_shape {
  int ndim;
  int64_t d[OOC_MAX_DIMS];
} ooc_shape;

/* Elements per sample (product of dims). */
int64_t ooc_shape_elems(const ooc_shape *s);

/* Optimizer whose state is counted in the memory model. */
typedef enum { OOC_OPT_SGD_MOMENTUM = 0, OOC_OPT_SGD = 1, OOC_OPT_ADAM = 2 } ooc_optimizer;

/* "sgd", "momentum" (or "sgd-momentum") and "adam"; returns 0 or
 * OOC_EINVAL. The name is the canonical one ("momentum" for SGD with
 * momentum). */
int ooc_optimizer_parse(const char *s, ooc_optimizer *out);

/* Training precision as frameworks set it (--precision):
 * - fp32: everything fp32, convolutions and GEMMs on FP32 math;
 * - tf32: fp32 tensors, convolutions and GEMMs as TF32 where the GPU has
 *   it (the profile's compute.fp32_uses_tf32);
 * - amp-fp16, amp-bf16: activations, a weight copy and the gradients in
 *   half precision, fp32 master weights and fp32 optimizer state (the
 *   ZeRO paper's mixed-precision accounting, Rajbhandari et al. 2020,
 *   sec. 3.1: 2 + 2 + 12 bytes per parameter with Adam; loss scaling
 *   keeps no tensors).
 * OOC_PREC_NONE: not set, the model's dtype alone (as --dtype). */
typedef enum {
  OOC_PREC_NONE = 0, OOC_PREC_FP32, OOC_PREC_TF32, OOC_PREC_AMP_FP16,
  OOC_PREC_AMP_BF16
} ooc_precision;
int ooc_precision_parse(const char *s, ooc_precision *out);
const char *ooc_precision_name(ooc_precision p);   /* NULL for NONE */
/* The dtype precision p gives activations: fp16 for amp-fp16, bf16 for
 * amp-bf16, fp32 otherwise. */
ooc_dtype ooc_precision_dtype(ooc_precision p);
const char *ooc_optimizer_name(ooc_optimizer o);

typedef struct ooc_layer {
  const char *name;     /* owned by the model */
  ooc_op_kind op;
  ooc_op_class cls;
  ooc_attrs a;
  int n_in;             /* number of inputs */
  int in_first;         /* index into model->inputs of the first input */
  ooc_shape out;        /* per-sample output shape */

  /* Filled by the op table for the loaded batch and dtype. */
  uint64_t out_bytes;      /* output activation (0 if it aliases its input) */
  uint64_t saved_bytes;    /* extra state kept for backward (BN stats, dropout
                              mask, attention softmax, ...) */
  uint64_t params;         /* parameter count */
  uint64_t param_bytes;    /* params * dtype size */
  uint64_t grad_bytes;     /* weight gradients */
  uint64_t opt_bytes;      /* optimizer state */
  uint64_t workspace_bytes;/* scratch during fwd/bwd (conv: im2col-sized) */
  double fwd_flops;
  double bwd_data_flops;   /* gradient w.r.t. inputs */
  double bwd_weight_flops; /* gradient w.r.t. parameters */
  double fwd_bytes_rw;     /* bytes read + written by forward */
  double bwd_bytes_rw;     /* bytes read + written by backward */
  unsigned needs;          /* OOC_NEED_* */
  int alias_of;            /* layer index whose tensor this output reuses
                              (flatten, reshape, in-place ops); -1 if none */
  int grad_in;             /* 1 if backward computes the gradient w.r.t. its
                              inputs (some input depends on a parameter) */
  int has_bwd;             /* 1 if the layer has a backward at all (grad_in
                              or parameters); else bwd costs are 0 and
                              needs is OOC_NEED_NONE */
  int recompute;           /* "recompute": true: the framework drops the
                              output after its last forward use and
                              recomputes it for the backward (a memory-
                              efficient DenseNet's shared buffers,
                              torch.utils.checkpoint); plan lowering adds
                              the recompute wherever a plan keeps it */
} ooc_layer;

typedef struct ooc_model_param {
  const char *name;       /* owned by the model */
  double value;           /* a word parameter: the word's index */
  int set;                /* 1 if overridden by --set */
  const char *word;       /* a word parameter's word (owned by the model);
                             NULL for a number */
} ooc_model_param;

typedef struct ooc_model {
  char *name;              /* model name (file's "name") */
  char *path;              /* file it was loaded from */
  ooc_dtype dtype;
  ooc_optimizer optimizer;
  int64_t batch;
  int n_layers;
  ooc_layer *layers;       /* topological order; layers[0] is the input */
  int *inputs;             /* flattened input lists (layer indices) */
  int n_params;
  ooc_model_param *params; /* declared parameters after overrides */
  char *strings;           /* string pool backing names */
  uint64_t fingerprint;    /* hash of layers, shapes, batch, dtype */

  /* Totals for the batch. */
  uint64_t total_params;
  uint64_t weight_bytes, grad_bytes, opt_bytes; /* persistent state */
  uint64_t activation_bytes;   /* sum of out_bytes + saved_bytes */
  double fwd_flops, bwd_flops;
  /* The framework that trains it (the optional "framework" block,
   * models/README.md): its name ("pytorch" when absent) and host costs
   * that replace the profile's host.op_us, host.iteration_us and
   * host.optimizer_param_us (microseconds; -1 where not given). */
  char framework[32];
  double fw_host_op_us, fw_host_iteration_us, fw_host_optimizer_param_us;
  /* How the framework builds ops: bytes per saved max-pool index (8:
   * PyTorch's int64, 4: Caffe's int32, 0: none, cuDNN's backward reads
   * x and y), and whether every relu / add without its own in_place
   * attribute runs in place where that is legal (1), never (0), or as
   * each layer says (-1, the default). */
  ooc_precision precision;     /* as loaded (OOC_PREC_NONE: not given) */
  int fw_maxpool_index_bytes;
  int fw_relu_in_place, fw_add_in_place;
  uint64_t naive_peak_bytes;   /* all forward outputs kept + weights + grads
                                  + optimizer state + largest workspace */
} ooc_model;

/* A --set K=V override. */
typedef struct ooc_kv {
  const char *key;
  const char *value;
} ooc_kv;

typedef struct ooc_model_opts {
  int64_t batch;           /* >= 1 */
  int dtype_set;           /* 1 to override the file's dtype */
  ooc_dtype dtype;
  ooc_optimizer optimizer;
  const ooc_kv *sets;      /* --set overrides */
  int n_sets;
  ooc_precision precision; /* --precision (OOC_PREC_NONE: not given; else
                              it sets the dtype, and dtype_set must be 0) */
} ooc_model_opts;

/* Load a model by path or zoo name (see ooc_data_find in util.h).
 * Returns OOC_OK and *out, or a negative code with err naming the file,
 * layer and field. */
int ooc_model_load(const char *name_or_path, const ooc_model_opts *opts,
                   ooc_model **out, ooc_err *err);

/* Build a model from an in-memory JSON text (tests; `origin` names it in
 * messages). */
int ooc_model_load_string(const char *json, const char *origin,
                          const ooc_model_opts *opts, ooc_model **out,
                          ooc_err *err);

void ooc_model_free(ooc_model *m);

/* The i-th input (a layer index) of layer l. */
static inline int ooc_layer_input(const ooc_model *m, const ooc_layer *l, int i)
{
  return m->inputs[l->in_first + i];
}

/* Does layer l's backward touch the gradient of its input i, or with i
 * -1 of its output? Its inputs' only when it computes input gradients
 * (grad_in): a layer none of whose inputs depends on a parameter (the
 * first convolution, a pooling before it) has none to give. Its output's
 * only when it has a backward at all (has_bwd): a layer with neither
 * parameters nor such inputs (that pooling) has no use for one. So an
 * activation that depends on no parameter has a gradient only when a
 * consumer computes its input gradients for another, trained input
 * (grad_in is per layer: a concat of that pooling and a trained branch
 * computes both). */
static inline int ooc_layer_bwd_grad(const ooc_layer *l, int i)
{
  return i < 0 ? l->has_bwd : l->grad_in;
}

/* Index of a layer by name, or -1. O(n). */
int ooc_model_find_layer(const ooc_model *m, const char *name);

/* The layer whose memory holds layer i's output: follows alias_of. */
int ooc_model_storage(const ooc_model *m, int i);

/* A 64-bit FNV-1a-style hash of every layer's name, op, inputs, attributes
 * and output shape plus the batch, dtype and optimizer (the loader stores
 * it in m->fingerprint; a plan records it to detect a different model).
 * O(layers). */
uint64_t ooc_model_fingerprint(const ooc_model *m);

/* --- op table (ir/ops.c) ------------------------------------------------ */

/* Per-op descriptor: name, class and inference. infer() gets the layer with
 * attrs and grad_in filled, alias_of = -1, and its input shapes, and fills
 * the op's own figures: out, params, saved and workspace bytes, per-sample
 * flops, needs and alias_of (as a position among inputs, translated by the
 * loader). It returns OOC_EINVAL with err naming the attribute when the
 * inputs do not fit, OOC_ERANGE when a size overflows (the loader prefixes
 * file and layer). Callers go through ooc_op_infer(). */
typedef struct ooc_op_type {
  const char *name;         /* JSON "op" value, e.g. "conv2d" */
  ooc_op_kind kind;
  ooc_op_class cls;
  int min_inputs, max_inputs; /* max -1: unbounded */
  const char *attrs;        /* space-separated JSON attributes it accepts */
  const char *required;     /* the ones that must be present */
  int (*infer)(ooc_layer *l, const ooc_shape *const *in, int n_in,
               int64_t batch, ooc_dtype dt, ooc_err *err);
} ooc_op_type;

/* Infer layer l (l->op set) from its n_in input shapes: the op's infer(),
 * then the common part every op shares: batch totals, dtype bytes,
 * optimizer state, has_bwd and the bytes read and written. Returns OOC_OK
 * or infer()'s error. O(inputs). */
int ooc_op_infer(ooc_layer *l, const ooc_shape *const *in, int n_in,
                 int64_t batch, ooc_dtype dt, ooc_optimizer opt,
                 ooc_err *err);

const ooc_op_type *ooc_op_find(const char *name);
const ooc_op_type *ooc_op_get(ooc_op_kind k);
const char *ooc_op_name(ooc_op_kind k);
/* "input", "output", "input+output", "none" */
const char *ooc_needs_name(unsigned needs);

/* Layer signature used to key calibrated times: op, input and output shapes
 * with batch, key attributes and dtype, e.g.
 * "conv2d b=256 in=64x56x56 out=256x56x56 k=1x1 s=1x1 p=0x0 d=1x1 g=1 fp32".
 * Writes at most n bytes; returns the length. */
int ooc_layer_signature(const ooc_model *m, int layer, char *buf, size_t n);

/* The embedding whose table tied linear `layer` computes with: the first
 * with vocab == the linear's out and width (out) == its input features,
 * or -1 (the loader refuses a model whose tied linear has none). */
int ooc_model_tied_embedding(const ooc_model *m, int layer);

#endif
