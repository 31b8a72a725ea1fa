/* executor/cpu_dnnl.c — the cpu backend's oneDNN kernels: forward and
 * backward of every op oneDNN has (docs/executor.md, "What each op runs").
 *
 * One idea: every tensor of a program is a plain, dense fp32 array (it is
 * copied and swapped as bytes), so every primitive is built on plain
 * memory descriptors ([N, C, spatial...] activations, oihw / goihw
 * weights), with oneDNN's 2.x C API: an op descriptor, a primitive
 * descriptor, a primitive, memory objects whose data handles are set to
 * the arena's pointers just before each execution. Primitives are built
 * once per layer and direction, on the compute thread before timing, with
 * a user scratchpad: among oneDNN's implementations (best first), the
 * first one whose scratchpad fits the program's workspace tensor for that
 * kernel is taken (a reference implementation only as the library's own
 * first choice), and the workspace tensor is its scratchpad; when none
 * fits, the library's first choice runs with its scratchpad in a side
 * buffer outside the arena, counted in the result's side_bytes.
 *
 * Kernel algorithms (ir/algo.h): default, implicit_gemm and precomp_gemm
 * map to dnnl_convolution_direct (oneDNN then picks its GEMM-based or
 * direct JIT kernel, within the workspace as above); winograd to
 * dnnl_convolution_winograd where oneDNN implements it for the layer on
 * this CPU (refused with a clear error otherwise); fft, fft_tiling and
 * winograd_nonfused have no oneDNN kernel and are refused.
 *
 * What oneDNN keeps between a forward and its backward that the program
 * has no tensor for (batch and layer norms' mean and variance, max
 * pooling's and LRN's workspace) lives in per-layer side buffers; a
 * recompute rewrites them with the same values. Gradients: the first
 * writer overwrites, later ones are computed into a side buffer and added
 * (ir/kernel.c decides which), so the sum order is the schedule's and runs
 * are deterministic.
 *
 * Cost: what oneDNN costs, plus an element-wise add per gradient that is
 * added to.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ir/algo.h"
#include "executor/cpu.h"

typedef union opdesc {
  dnnl_convolution_desc_t conv;
  dnnl_batch_normalization_desc_t bn;
  dnnl_layer_normalization_desc_t ln;
  dnnl_eltwise_desc_t elt;
  dnnl_pooling_desc_t pool;
  dnnl_lrn_desc_t lrn;
  dnnl_inner_product_desc_t ip;
  dnnl_matmul_desc_t mm;
  dnnl_resampling_desc_t rs;
} opdesc;

#define EPS 1e-5f
#define LRN_ALPHA 1e-4f
#define LRN_BETA 0.75f
#define LRN_K 1.0f

/* --- helpers -------------------------------------------------------------- */

static const char *
status_name(dnnl_status_t s)
{
  switch (s) {
  case dnnl_out_of_memory: return "out of memory";
  case dnnl_invalid_arguments: return "invalid arguments";
  case dnnl_unimplemented: return "no implementation for these shapes on "
                                  "this CPU";
  case dnnl_iterator_ends: return "no implementation left";
  case dnnl_runtime_error: return "runtime error";
  case dnnl_not_required: return "not required";
  default: return "error";
  }
}

static int
dfail(const cpu_state *st, const ooc_kernel *k, dnnl_status_t s,
      const char *what, ooc_err *err)
{
  const ooc_layer *l = &st->m->layers[k->layer];

  return ooc_err_set(err, s == dnnl_out_of_memory ? OOC_ENOMEM : OOC_EINVAL,
                     "cpu: layer %d '%s' (%s %s%s%s%s): oneDNN %s: %s",
                     k->layer, l->name ? l->name : "?", ooc_op_name(l->op),
                     ooc_phase_name((ooc_phase)k->phase),
                     k->algo ? ", kernel algorithm '" : "",
                     k->algo ? ooc_algo_name((ooc_algo)k->algo) : "",
                     k->algo ? "'" : "", what, status_name(s));
}

#define DN(call, what)                                                       \
  do {                                                                       \
    dnnl_status_t s_ = (call);                                               \
    if (s_ != dnnl_success)                                                  \
      return dfail(st, k, s_, (what), err);                                  \
  } while (0)

static void
md_plain(dnnl_memory_desc_t *md, int nd, const dnnl_dims_t dims)
{
  static const dnnl_format_tag_t tags[] = { dnnl_a, dnnl_ab, dnnl_abc,
                                            dnnl_abcd, dnnl_abcde,
                                            dnnl_abcdef };
  dnnl_memory_desc_init_by_tag(md, nd, dims, dnnl_f32, tags[nd - 1]);
}

static void
md_strided(dnnl_memory_desc_t *md, int nd, const dnnl_dims_t dims,
           const dnnl_dims_t strides)
{
  dnnl_memory_desc_init_by_strides(md, nd, dims, dnnl_f32, strides);
}

/* [N, shape...] of layer l's output; returns the rank. */
static int
dims_out(const ooc_model *m, int l, dnnl_dims_t d)
{
  const ooc_shape *s = &m->layers[l].out;
  int i;

  d[0] = m->batch;
  for (i = 0; i < s->ndim; i++)
    d[i + 1] = s->d[i];
  return s->ndim + 1;
}

static int
dims_in(const ooc_model *m, const ooc_kernel *k, int j, dnnl_dims_t d)
{
  const ooc_layer *l = &m->layers[k->layer];
  return dims_out(m, ooc_layer_input(m, l, j), d);
}

static uint64_t
in_bytes(const ooc_model *m, const ooc_kernel *k, int j)
{
  return cpu_out_bytes(m, ooc_layer_input(m, &m->layers[k->layer], j));
}

static size_t
scratch_of(const_dnnl_primitive_desc_t pd)
{
  const dnnl_memory_desc_t *md =
      dnnl_primitive_desc_query_md(pd, dnnl_query_scratchpad_md, 0);
  return md != NULL ? dnnl_memory_desc_get_size(md) : 0;
}

static int
is_ref(const_dnnl_primitive_desc_t pd)
{
  const char *name = NULL;

  dnnl_primitive_desc_query(pd, dnnl_query_impl_info_str, 0, &name);
  return name != NULL && strncmp(name, "ref", 3) == 0;
}

void
cpu_prim_free(cpu_prim *pr)
{
  int j;

  for (j = 0; j < pr->n; j++)
    dnnl_memory_destroy(pr->args[j].memory);
  free(pr->args);
  if (pr->p != NULL)
    dnnl_primitive_destroy(pr->p);
  if (pr->pd != NULL)
    dnnl_primitive_desc_destroy(pr->pd);
  memset(pr, 0, sizeof *pr);
}

/* The primitive of pd (taken over), with memory objects for args[0..n)
 * and, when it needs one, a scratchpad (the kernel's workspace tensor if
 * it fits, else the side scratch, grown here). */
static int
prim_finish(cpu_state *st, const ooc_kernel *k, cpu_prim *pr,
            dnnl_primitive_desc_t pd, const int *args, int n, ooc_err *err)
{
  int j;

  pr->pd = pd;
  pr->scratch = scratch_of(pd);
  pr->args = calloc((size_t)n + 1, sizeof *pr->args);
  if (pr->args == NULL)
    return ooc_err_set(err, OOC_ENOMEM, "cpu: out of memory");
  DN(dnnl_primitive_create(&pr->p, pd), "primitive");
  for (j = 0; j <= n; j++) {
    const dnnl_memory_desc_t *md;
    int arg = j < n ? args[j] : DNNL_ARG_SCRATCHPAD;
    if (j == n && pr->scratch == 0)
      break;
    md = j < n ? dnnl_primitive_desc_query_md(pd, dnnl_query_exec_arg_md,
                                              arg)
               : dnnl_primitive_desc_query_md(pd, dnnl_query_scratchpad_md,
                                              0);
    DN(dnnl_memory_create(&pr->args[j].memory, md, st->eng,
                          DNNL_MEMORY_NONE), "memory");
    pr->args[j].arg = arg;
    pr->n = j + 1;
  }
  if (pr->scratch > 0 && (k->ws < 0 || pr->scratch > k->ws_bytes))
    return cpu_grow(&st->scratch, &st->scratch_bytes, pr->scratch, err);
  return OOC_OK;
}

/* A primitive for op descriptor d: the first implementation whose
 * scratchpad fits the kernel's workspace (not a reference one, unless it
 * is the library's first choice), else the first. */
static int
prim_make(cpu_state *st, const ooc_kernel *k, cpu_prim *pr,
          const void *d, const_dnnl_primitive_desc_t hint, const int *args,
          int n, const char *what, ooc_err *err)
{
  dnnl_primitive_attr_t attr;
  dnnl_primitive_desc_iterator_t it;
  dnnl_primitive_desc_t pd, first = NULL, fit = NULL;
  uint64_t room = k->ws >= 0 ? k->ws_bytes : 0;
  dnnl_status_t s;

  DN(dnnl_primitive_attr_create(&attr), "attributes");
  dnnl_primitive_attr_set_scratchpad_mode(attr, dnnl_scratchpad_mode_user);
  s = dnnl_primitive_desc_iterator_create(&it, d, attr, st->eng, hint);
  dnnl_primitive_attr_destroy(attr);
  if (s != dnnl_success)
    return dfail(st, k, s, what, err);
  for (;;) {
    pd = dnnl_primitive_desc_iterator_fetch(it);
    if (pd == NULL)
      break;
    if (first == NULL) {
      first = pd;
      if (scratch_of(pd) <= room)
        break;
    } else if (scratch_of(pd) <= room && !is_ref(pd)) {
      fit = pd;
      break;
    } else {
      dnnl_primitive_desc_destroy(pd);
    }
    if (dnnl_primitive_desc_iterator_next(it) != dnnl_success)
      break;
  }
  dnnl_primitive_desc_iterator_destroy(it);
  if (first == NULL)
    return dfail(st, k, dnnl_unimplemented, what, err);
  if (fit != NULL) {
    dnnl_primitive_desc_destroy(first);
    first = fit;
  }
  return prim_finish(st, k, pr, first, args, n, err);
}

/* Run pr with handles h[] for its args (the scratchpad set here). */
static int
prim_run(cpu_state *st, const ooc_kernel *k, cpu_prim *pr,
         void *const *h, void *const *ptr, ooc_err *err)
{
  int j, nu = pr->n - (pr->scratch > 0);

  for (j = 0; j < nu; j++)
    dnnl_memory_set_data_handle(pr->args[j].memory, h[j]);
  if (pr->scratch > 0)
    dnnl_memory_set_data_handle(pr->args[nu].memory,
                                k->ws >= 0 && pr->scratch <= k->ws_bytes
                                    ? ptr[k->ws] : st->scratch);
  DN(dnnl_primitive_execute(pr->p, st->strm, pr->n, pr->args), "execute");
  DN(dnnl_stream_wait(st->strm), "stream wait");
  return OOC_OK;
}

/* A forward primitive descriptor to hint a backward one (caller
 * destroys). */
static int
hint_pd(cpu_state *st, const ooc_kernel *k, const void *fd,
        dnnl_primitive_desc_t *pd, ooc_err *err)
{
  DN(dnnl_primitive_desc_create(pd, fd, NULL, st->eng, NULL),
     "forward hint");
  return OOC_OK;
}

int
cpu_dnnl_has(const ooc_layer *l)
{
  switch (l->op) {
  case OOC_OPK_CONV2D: case OOC_OPK_CONV3D: case OOC_OPK_DECONV2D:
  case OOC_OPK_UPSAMPLE: case OOC_OPK_LINEAR: case OOC_OPK_BATCHNORM:
  case OOC_OPK_RELU: case OOC_OPK_ACT: case OOC_OPK_MAXPOOL:
  case OOC_OPK_AVGPOOL: case OOC_OPK_GLOBALPOOL: case OOC_OPK_ADD:
  case OOC_OPK_CONCAT: case OOC_OPK_LRN: case OOC_OPK_MATMUL:
  case OOC_OPK_LAYERNORM: case OOC_OPK_GELU:
    return 1;
  default:
    return 0;
  }
}

/* --- op descriptors ------------------------------------------------------- */

static int
conv_alg(cpu_state *st, const ooc_kernel *k, int algo, int deconv,
         dnnl_alg_kind_t *alg, ooc_err *err)
{
  const ooc_layer *l = &st->m->layers[k->layer];

  switch (algo) {
  case OOC_ALGO_DEFAULT:
  case OOC_ALGO_IMPLICIT_GEMM:
  case OOC_ALGO_PRECOMP_GEMM:
    *alg = deconv ? dnnl_deconvolution_direct : dnnl_convolution_direct;
    return OOC_OK;
  case OOC_ALGO_WINOGRAD:
    *alg = deconv ? dnnl_deconvolution_winograd : dnnl_convolution_winograd;
    return OOC_OK;
  default:
    return ooc_err_set(err, OOC_EINVAL,
                       "cpu: layer %d '%s' (%s %s) names kernel algorithm "
                       "'%s', which the cpu backend does not have (oneDNN "
                       "has direct, GEMM-based and Winograd convolutions)",
                       k->layer, l->name ? l->name : "?", ooc_op_name(l->op),
                       ooc_phase_name((ooc_phase)k->phase),
                       ooc_algo_name((ooc_algo)algo));
  }
}

typedef struct conv_geo {
  int nd;
  dnnl_memory_desc_t src, wei, bias, dst;
  dnnl_dims_t strides, dil, pl, pr;
  int has_bias;
} conv_geo;

static void
conv_geometry(const cpu_state *st, const ooc_kernel *k, conv_geo *g)
{
  const ooc_model *m = st->m;
  const ooc_layer *l = &m->layers[k->layer];
  dnnl_dims_t sd, dd, wd, bd;
  int nsp, i, wn = 0, deconv = l->op == OOC_OPK_DECONV2D;
  int64_t G = l->a.groups > 1 ? l->a.groups : 1;

  g->nd = dims_in(m, k, 0, sd);
  dims_out(m, k->layer, dd);
  nsp = g->nd - 2;
  if (G > 1)
    wd[wn++] = G;
  wd[wn++] = dd[1] / G;
  wd[wn++] = sd[1] / G;
  for (i = 0; i < nsp; i++) {
    int64_t h = sd[i + 2], o = dd[i + 2], kk = l->a.kernel[i],
            s = l->a.stride[i], p = l->a.pad[i], d = l->a.dilation[i],
            ek = d * (kk - 1) + 1;
    wd[wn++] = kk;
    g->strides[i] = s;
    g->dil[i] = d - 1;
    g->pl[i] = p;
    g->pr[i] = deconv ? (h - 1) * s + ek - o - p : (o - 1) * s + ek - h - p;
  }
  md_plain(&g->src, g->nd, sd);
  md_plain(&g->dst, g->nd, dd);
  md_plain(&g->wei, wn, wd);
  bd[0] = dd[1];
  md_plain(&g->bias, 1, bd);
  g->has_bias = l->a.bias != 0;
}

static int
conv_fwd_desc(cpu_state *st, const ooc_kernel *k, int algo,
              conv_geo *g, opdesc *d, ooc_err *err)
{
  int deconv = st->m->layers[k->layer].op == OOC_OPK_DECONV2D, rc;
  dnnl_alg_kind_t alg;

  if ((rc = conv_alg(st, k, algo, deconv, &alg, err)) != OOC_OK)
    return rc;
  conv_geometry(st, k, g);
  if (deconv)
    DN(dnnl_dilated_deconvolution_forward_desc_init(&d->conv,
         dnnl_forward_training, alg, &g->src, &g->wei,
         g->has_bias ? &g->bias : NULL, &g->dst, g->strides, g->dil, g->pl,
         g->pr), "deconvolution");
  else
    DN(dnnl_dilated_convolution_forward_desc_init(&d->conv,
         dnnl_forward_training, alg, &g->src, &g->wei,
         g->has_bias ? &g->bias : NULL, &g->dst, g->strides, g->dil, g->pl,
         g->pr), "convolution");
  return OOC_OK;
}

/* Linear as an inner product over rows of its last dimension. */
static void
linear_mds(const cpu_state *st, const ooc_kernel *k,
           dnnl_memory_desc_t *src, dnnl_memory_desc_t *wei,
           dnnl_memory_desc_t *bias, dnnl_memory_desc_t *dst)
{
  const ooc_model *m = st->m;
  const ooc_layer *l = &m->layers[k->layer];
  const ooc_shape *x = &m->layers[ooc_layer_input(m, l, 0)].out;
  int64_t fin = x->d[x->ndim - 1];
  dnnl_dims_t d;

  d[0] = m->batch * (ooc_shape_elems(x) / fin);
  d[1] = fin;
  md_plain(src, 2, d);
  d[1] = l->a.out;
  md_plain(dst, 2, d);
  d[0] = l->a.out;
  d[1] = fin;
  md_plain(wei, 2, d);
  md_plain(bias, 1, d);
}

/* Matmul as a batched [B, M, K] x [B, K, N]: a right operand of rank 2
 * per sample is shared by the left one's leading dimensions, which then
 * fold into M. */
typedef struct mm_geo {
  int64_t B, M, K, N;
  int tb;
} mm_geo;

static void
mm_geometry(const cpu_state *st, const ooc_kernel *k, mm_geo *g)
{
  const ooc_model *m = st->m;
  const ooc_layer *l = &m->layers[k->layer];
  const ooc_shape *a = &m->layers[ooc_layer_input(m, l, 0)].out;
  const ooc_shape *b = &m->layers[ooc_layer_input(m, l, 1)].out;
  int64_t lead = 1;
  int i;

  for (i = 0; i < a->ndim - 2; i++)
    lead *= a->d[i];
  g->tb = l->a.transpose_b != 0;
  g->K = a->d[a->ndim - 1];
  g->N = g->tb ? b->d[b->ndim - 2] : b->d[b->ndim - 1];
  if (b->ndim == 2) {
    g->B = m->batch;
    g->M = lead * a->d[a->ndim - 2];
  } else {
    g->B = m->batch * lead;
    g->M = a->d[a->ndim - 2];
  }
}

/* A [B, r, c] view: plain (t 0) or the transpose of a stored [B, c, r]. */
static void
md_view(dnnl_memory_desc_t *md, int64_t B, int64_t r, int64_t c, int t)
{
  dnnl_dims_t d = { B, r, c }, s = { r * c, c, 1 };

  if (t) {
    s[1] = 1;
    s[2] = r;
  }
  md_strided(md, 3, d, s);
}

static dnnl_alg_kind_t
elt_alg(const ooc_layer *l, float *alpha, int *use_dst)
{
  *alpha = 0;
  *use_dst = 0;
  if (l->op == OOC_OPK_RELU) {
    *use_dst = 1;
    return dnnl_eltwise_relu_use_dst_for_bwd;
  }
  if (l->op == OOC_OPK_GELU)
    return dnnl_eltwise_gelu_tanh;
  if (strcmp(l->a.act, "sigmoid") == 0) {
    *use_dst = 1;
    return dnnl_eltwise_logistic_use_dst_for_bwd;
  }
  if (strcmp(l->a.act, "tanh") == 0) {
    *use_dst = 1;
    return dnnl_eltwise_tanh_use_dst_for_bwd;
  }
  if (strcmp(l->a.act, "silu") == 0) {
    *alpha = 1;
    return dnnl_eltwise_swish;
  }
  if (strcmp(l->a.act, "elu") == 0) {
    *alpha = 1;
    return dnnl_eltwise_elu;
  }
  if (strcmp(l->a.act, "leaky_relu") == 0) {
    *alpha = 0.01f;
    return dnnl_eltwise_relu;
  }
  return dnnl_eltwise_hardswish;
}

typedef struct pool_geo {
  dnnl_memory_desc_t src, dst;
  dnnl_dims_t strides, kernel, pl, pr;
  dnnl_alg_kind_t alg;
} pool_geo;

static void
pool_geometry(const cpu_state *st, const ooc_kernel *k, pool_geo *g)
{
  const ooc_layer *l = &st->m->layers[k->layer];
  dnnl_dims_t sd, dd;
  int nd = dims_in(st->m, k, 0, sd), i;

  dims_out(st->m, k->layer, dd);
  for (i = 0; i < nd - 2; i++) {
    if (l->op == OOC_OPK_GLOBALPOOL) {
      g->kernel[i] = sd[i + 2];
      g->strides[i] = 1;
      g->pl[i] = g->pr[i] = 0;
    } else {
      g->kernel[i] = l->a.kernel[i];
      g->strides[i] = l->a.stride[i];
      g->pl[i] = l->a.pad[i];
      g->pr[i] = (dd[i + 2] - 1) * l->a.stride[i] + l->a.kernel[i] -
                 sd[i + 2] - l->a.pad[i];
    }
  }
  md_plain(&g->src, nd, sd);
  md_plain(&g->dst, nd, dd);
  g->alg = l->op == OOC_OPK_MAXPOOL ? dnnl_pooling_max
                                    : dnnl_pooling_avg_include_padding;
}

/* The forward op descriptor of layer k->layer under algorithm algo (d),
 * and its data descriptor for the norms, eltwise and LRN (data). */
static int
fwd_desc(cpu_state *st, const ooc_kernel *k, int algo, opdesc *d,
         dnnl_memory_desc_t *data, ooc_err *err)
{
  const ooc_model *m = st->m;
  const ooc_layer *l = &m->layers[k->layer];
  dnnl_dims_t dims;
  int nd;

  switch (l->op) {
  case OOC_OPK_CONV2D: case OOC_OPK_CONV3D: case OOC_OPK_DECONV2D: {
    conv_geo g;
    return conv_fwd_desc(st, k, algo, &g, d, err);
  }
  case OOC_OPK_LINEAR: {
    dnnl_memory_desc_t s, w, b, o;
    linear_mds(st, k, &s, &w, &b, &o);
    DN(dnnl_inner_product_forward_desc_init(&d->ip, dnnl_forward_training,
         &s, &w, l->a.bias ? &b : NULL, &o), "inner product");
    return OOC_OK;
  }
  case OOC_OPK_MATMUL: {
    mm_geo g;
    dnnl_memory_desc_t a, b, c;
    mm_geometry(st, k, &g);
    md_view(&a, g.B, g.M, g.K, 0);
    md_view(&b, g.B, g.K, g.N, g.tb);
    md_view(&c, g.B, g.M, g.N, 0);
    DN(dnnl_matmul_desc_init(&d->mm, &a, &b, NULL, &c), "matmul");
    return OOC_OK;
  }
  case OOC_OPK_BATCHNORM:
    nd = dims_in(m, k, 0, dims);
    md_plain(data, nd, dims);
    DN(dnnl_batch_normalization_forward_desc_init(&d->bn,
         dnnl_forward_training, data, EPS, dnnl_use_scaleshift),
       "batch normalization");
    return OOC_OK;
  case OOC_OPK_LAYERNORM: {
    const ooc_shape *x = &m->layers[ooc_layer_input(m, l, 0)].out;
    dims[1] = x->d[x->ndim - 1];
    dims[0] = m->batch * (ooc_shape_elems(x) / dims[1]);
    md_plain(data, 2, dims);
    DN(dnnl_layer_normalization_forward_desc_init(&d->ln,
         dnnl_forward_training, data, NULL, EPS, dnnl_use_scaleshift),
       "layer normalization");
    return OOC_OK;
  }
  case OOC_OPK_RELU: case OOC_OPK_ACT: case OOC_OPK_GELU: {
    float alpha;
    int use_dst;
    dnnl_alg_kind_t alg = elt_alg(l, &alpha, &use_dst);
    dims[0] = (int64_t)(in_bytes(m, k, 0) / sizeof(float));
    md_plain(data, 1, dims);
    DN(dnnl_eltwise_forward_desc_init(&d->elt, dnnl_forward_training, alg,
         data, alpha, 0), "eltwise");
    return OOC_OK;
  }
  case OOC_OPK_MAXPOOL: case OOC_OPK_AVGPOOL: case OOC_OPK_GLOBALPOOL: {
    pool_geo g;
    pool_geometry(st, k, &g);
    DN(dnnl_pooling_forward_desc_init(&d->pool, dnnl_forward_training,
         g.alg, &g.src, &g.dst, g.strides, g.kernel, g.pl, g.pr),
       "pooling");
    return OOC_OK;
  }
  case OOC_OPK_LRN:
    nd = dims_in(m, k, 0, dims);
    md_plain(data, nd, dims);
    DN(dnnl_lrn_forward_desc_init(&d->lrn, dnnl_forward_training,
         dnnl_lrn_across_channels, data,
         l->a.lrn_size > 0 ? l->a.lrn_size : 5, LRN_ALPHA, LRN_BETA, LRN_K),
       "LRN");
    return OOC_OK;
  case OOC_OPK_UPSAMPLE: {
    dnnl_memory_desc_t s, o;
    dnnl_dims_t od;
    float f[3];
    int i;
    nd = dims_in(m, k, 0, dims);
    dims_out(m, k->layer, od);
    md_plain(&s, nd, dims);
    md_plain(&o, nd, od);
    for (i = 0; i < nd - 2; i++)
      f[i] = (float)l->a.scale;
    /* Sized by a second input (scale 0): oneDNN takes the factors from
     * the two shapes. */
    DN(dnnl_resampling_forward_desc_init(&d->rs, dnnl_forward_training,
         strcmp(l->a.mode, "bilinear") == 0 ? dnnl_resampling_linear
                                            : dnnl_resampling_nearest,
         l->a.scale > 0 ? f : NULL, &s, &o), "resampling");
    return OOC_OK;
  }
  default:
    return ooc_err_set(err, OOC_EINVAL, "cpu: no oneDNN forward for op %s",
                       ooc_op_name(l->op));
  }
}

/* --- building ------------------------------------------------------------- */

/* Side state oneDNN keeps from forward to backward. */
static int
side_state(cpu_state *st, const ooc_kernel *k, cpu_layer *L,
           const cpu_prim *f, ooc_err *err)
{
  const ooc_layer *l = &st->m->layers[k->layer];
  const dnnl_memory_desc_t *md;
  size_t n;

  if ((l->op == OOC_OPK_BATCHNORM || l->op == OOC_OPK_LAYERNORM) &&
      L->stats == NULL) {
    md = dnnl_primitive_desc_query_md(f->pd, dnnl_query_exec_arg_md,
                                      DNNL_ARG_MEAN);
    n = 2 * dnnl_memory_desc_get_size(md);
    if (cpu_grow(&L->stats, &L->stats_bytes, n, err) != OOC_OK)
      return OOC_ENOMEM;
    memset(L->stats, 0, n);
    st->layer_side += n;
  }
  md = dnnl_primitive_desc_query_md(f->pd, dnnl_query_workspace_md, 0);
  n = md != NULL ? dnnl_memory_desc_get_size(md) : 0;
  if (n > 0 && L->pws == NULL) {
    if (cpu_grow(&L->pws, &L->pws_bytes, n, err) != OOC_OK)
      return OOC_ENOMEM;
    memset(L->pws, 0, n);
    st->layer_side += n;
  }
  return OOC_OK;
}

static int
build_fwd(cpu_state *st, const ooc_kernel *k, cpu_layer *L,
          ooc_err *err)
{
  const ooc_layer *l = &st->m->layers[k->layer];
  opdesc d;
  dnnl_memory_desc_t data;
  int rc, j;

  switch (l->op) {
  case OOC_OPK_ADD:
  case OOC_OPK_CONCAT: {
    dnnl_memory_desc_t *src = calloc((size_t)l->n_in, sizeof *src), dst;
    float *scales = calloc((size_t)l->n_in, sizeof *scales);
    int *args = calloc((size_t)l->n_in + 1, sizeof *args);
    dnnl_primitive_desc_t pd = NULL;
    dnnl_primitive_attr_t attr = NULL;
    dnnl_dims_t dims;
    dnnl_status_t s;
    if (src == NULL || scales == NULL || args == NULL ||
        cpu_grow((void **)&st->hv, &st->hv_bytes,
                 ((size_t)l->n_in + 1) * sizeof *st->hv, err) != OOC_OK) {
      free(src);
      free(scales);
      free(args);
      return ooc_err_set(err, OOC_ENOMEM, "cpu: out of memory");
    }
    for (j = 0; j < l->n_in; j++) {
      int nd = dims_in(st->m, k, j, dims);
      if (l->op == OOC_OPK_ADD) {
        dims[0] = (int64_t)(in_bytes(st->m, k, j) / sizeof(float));
        nd = 1;
      }
      md_plain(&src[j], nd, dims);
      scales[j] = 1.0f;
      args[j + 1] = DNNL_ARG_MULTIPLE_SRC + j;
    }
    args[0] = DNNL_ARG_DST;
    if (l->op == OOC_OPK_ADD) {
      dst = src[0];
    } else {
      int nd = dims_out(st->m, k->layer, dims);
      md_plain(&dst, nd, dims);
    }
    s = dnnl_primitive_attr_create(&attr);
    if (s == dnnl_success)
      s = dnnl_primitive_attr_set_scratchpad_mode(attr,
                                                  dnnl_scratchpad_mode_user);
    if (s == dnnl_success)
      s = l->op == OOC_OPK_ADD
              ? dnnl_sum_primitive_desc_create(&pd, &dst, l->n_in, scales,
                                               src, attr, st->eng)
              : dnnl_concat_primitive_desc_create(
                    &pd, &dst, l->n_in,
                    /* oneDNN's axis counts the batch; ours does not, and
                     * a negative one counts from the last dim. */
                    (l->a.axis < 0 ? l->a.axis + l->out.ndim : l->a.axis) + 1,
                    src, attr, st->eng);
    if (attr != NULL)
      dnnl_primitive_attr_destroy(attr);
    rc = s == dnnl_success
             ? prim_finish(st, k, &L->f, pd, args, l->n_in + 1, err)
             : dfail(st, k, s, l->op == OOC_OPK_ADD ? "sum" : "concat", err);
    free(src);
    free(scales);
    free(args);
    return rc;
  }
  default:
    break;
  }
  if ((rc = fwd_desc(st, k, k->algo, &d, &data, err)) != OOC_OK)
    return rc;
  switch (l->op) {
  case OOC_OPK_CONV2D: case OOC_OPK_CONV3D: case OOC_OPK_DECONV2D:
  case OOC_OPK_LINEAR: {
    int a[4] = { DNNL_ARG_SRC, DNNL_ARG_WEIGHTS, DNNL_ARG_DST,
                 DNNL_ARG_BIAS };
    rc = prim_make(st, k, &L->f, &d, NULL, a, l->a.bias ? 4 : 3,
                   "forward", err);
    break;
  }
  case OOC_OPK_MATMUL: {
    int a[3] = { DNNL_ARG_SRC, DNNL_ARG_WEIGHTS, DNNL_ARG_DST };
    rc = prim_make(st, k, &L->f, &d, NULL, a, 3, "forward", err);
    break;
  }
  case OOC_OPK_BATCHNORM: case OOC_OPK_LAYERNORM: {
    int a[5] = { DNNL_ARG_SRC, DNNL_ARG_DST, DNNL_ARG_SCALE_SHIFT,
                 DNNL_ARG_MEAN, DNNL_ARG_VARIANCE };
    rc = prim_make(st, k, &L->f, &d, NULL, a, 5, "forward", err);
    break;
  }
  case OOC_OPK_MAXPOOL: case OOC_OPK_LRN: {
    int a[3] = { DNNL_ARG_SRC, DNNL_ARG_DST, DNNL_ARG_WORKSPACE };
    const dnnl_memory_desc_t *ws;
    rc = prim_make(st, k, &L->f, &d, NULL, a, 2, "forward", err);
    if (rc != OOC_OK)
      break;
    ws = dnnl_primitive_desc_query_md(L->f.pd, dnnl_query_workspace_md, 0);
    if (ws != NULL && dnnl_memory_desc_get_size(ws) > 0) {
      cpu_prim_free(&L->f);
      rc = prim_make(st, k, &L->f, &d, NULL, a, 3, "forward", err);
    }
    break;
  }
  default: {
    int a[2] = { DNNL_ARG_SRC, DNNL_ARG_DST };
    rc = prim_make(st, k, &L->f, &d, NULL, a, 2, "forward", err);
    break;
  }
  }
  if (rc == OOC_OK)
    rc = side_state(st, k, L, &L->f, err);
  return rc;
}

/* Side buffer for a gradient computed before it is added. */
static int
want_tmp(cpu_state *st, uint64_t bytes, ooc_err *err)
{
  return cpu_grow(&st->tmp, &st->tmp_bytes, bytes, err);
}

static int
any_acc(const ooc_kernel *k)
{
  int j;

  for (j = 0; j < k->n_in; j++)
    if (k->din[j] >= 0 && k->din_acc[j])
      return 1;
  return 0;
}

static int
build_bwd(cpu_state *st, const ooc_kernel *k, cpu_layer *L,
          ooc_err *err)
{
  const ooc_model *m = st->m;
  const ooc_layer *l = &m->layers[k->layer];
  dnnl_primitive_desc_t hint = NULL;
  opdesc f, b;
  dnnl_memory_desc_t data, diff;
  uint64_t tmp = 0;
  int rc = OOC_OK, j;

  if (any_acc(k))
    for (j = 0; j < k->n_in; j++)
      if (in_bytes(m, k, j) > tmp)
        tmp = in_bytes(m, k, j);
  if (k->dparam_acc || k->tied_acc) {
    uint64_t wb = l->grad_bytes;
    if (k->tied >= 0) {  /* the table's rows it uses, then its own bias */
      const ooc_shape *x = &m->layers[ooc_layer_input(m, l, 0)].out;
      wb += (uint64_t)l->a.out * (uint64_t)x->d[x->ndim - 1] * sizeof(float);
    }
    tmp = tmp > wb ? tmp : wb;
  }
  if (l->op == OOC_OPK_ADD || l->op == OOC_OPK_CONCAT)
    return OOC_OK;      /* C copies, cpu_dnnl_run */
  if ((l->op == OOC_OPK_BATCHNORM || l->op == OOC_OPK_LAYERNORM) &&
      k->din[0] < 0 && in_bytes(m, k, 0) > tmp)
    tmp = in_bytes(m, k, 0);  /* oneDNN computes dx; it is dropped */
  if (tmp > 0 && (rc = want_tmp(st, tmp, err)) != OOC_OK)
    return rc;
  if ((rc = fwd_desc(st, k, k->algo, &f, &data, err)) != OOC_OK)
    return rc;
  if ((rc = hint_pd(st, k, &f, &hint, err)) != OOC_OK)
    return rc;
  switch (l->op) {
  case OOC_OPK_CONV2D: case OOC_OPK_CONV3D: case OOC_OPK_DECONV2D: {
    conv_geo g;
    dnnl_alg_kind_t alg;
    int deconv = l->op == OOC_OPK_DECONV2D;
    int ad[3] = { DNNL_ARG_DIFF_DST, DNNL_ARG_WEIGHTS, DNNL_ARG_DIFF_SRC };
    int aw[4] = { DNNL_ARG_SRC, DNNL_ARG_DIFF_DST, DNNL_ARG_DIFF_WEIGHTS,
                  DNNL_ARG_DIFF_BIAS };
    if ((rc = conv_alg(st, k, k->algo, deconv, &alg, err)) != OOC_OK)
      break;
    conv_geometry(st, k, &g);
    if (k->din[0] >= 0) {
      if (deconv)
        rc = dnnl_dilated_deconvolution_backward_data_desc_init(&b.conv,
               alg, &g.src, &g.wei, &g.dst, g.strides, g.dil, g.pl, g.pr);
      else
        rc = dnnl_dilated_convolution_backward_data_desc_init(&b.conv, alg,
               &g.src, &g.wei, &g.dst, g.strides, g.dil, g.pl, g.pr);
      rc = rc != dnnl_success
               ? dfail(st, k, (dnnl_status_t)rc, "backward data", err)
               : prim_make(st, k, &L->b1, &b, hint, ad, 3, "backward data",
                           err);
      if (rc != OOC_OK)
        break;
    }
    if (deconv)
      rc = dnnl_dilated_deconvolution_backward_weights_desc_init(&b.conv,
             alg, &g.src, &g.wei, g.has_bias ? &g.bias : NULL, &g.dst,
             g.strides, g.dil, g.pl, g.pr);
    else
      rc = dnnl_dilated_convolution_backward_weights_desc_init(&b.conv, alg,
             &g.src, &g.wei, g.has_bias ? &g.bias : NULL, &g.dst, g.strides,
             g.dil, g.pl, g.pr);
    rc = rc != dnnl_success
             ? dfail(st, k, (dnnl_status_t)rc, "backward weights", err)
             : prim_make(st, k, &L->b2, &b, hint, aw, g.has_bias ? 4 : 3,
                         "backward weights", err);
    break;
  }
  case OOC_OPK_LINEAR: {
    dnnl_memory_desc_t s, w, bi, o;
    int ad[3] = { DNNL_ARG_DIFF_DST, DNNL_ARG_WEIGHTS, DNNL_ARG_DIFF_SRC };
    int aw[4] = { DNNL_ARG_SRC, DNNL_ARG_DIFF_DST, DNNL_ARG_DIFF_WEIGHTS,
                  DNNL_ARG_DIFF_BIAS };
    linear_mds(st, k, &s, &w, &bi, &o);
    if (k->din[0] >= 0) {
      rc = dnnl_inner_product_backward_data_desc_init(&b.ip, &s, &w, &o);
      rc = rc != dnnl_success
               ? dfail(st, k, (dnnl_status_t)rc, "backward data", err)
               : prim_make(st, k, &L->b1, &b, hint, ad, 3, "backward data",
                           err);
      if (rc != OOC_OK)
        break;
    }
    rc = dnnl_inner_product_backward_weights_desc_init(&b.ip, &s, &w,
           l->a.bias ? &bi : NULL, &o);
    rc = rc != dnnl_success
             ? dfail(st, k, (dnnl_status_t)rc, "backward weights", err)
             : prim_make(st, k, &L->b2, &b, hint, aw, l->a.bias ? 4 : 3,
                         "backward weights", err);
    break;
  }
  case OOC_OPK_MATMUL: {
    mm_geo g;
    dnnl_memory_desc_t s, w, o;
    int a[3] = { DNNL_ARG_SRC, DNNL_ARG_WEIGHTS, DNNL_ARG_DST };
    mm_geometry(st, k, &g);
    if (k->din[0] >= 0) {      /* dA = dC B^T */
      md_view(&s, g.B, g.M, g.N, 0);
      md_view(&w, g.B, g.N, g.K, !g.tb);
      md_view(&o, g.B, g.M, g.K, 0);
      rc = dnnl_matmul_desc_init(&b.mm, &s, &w, NULL, &o);
      rc = rc != dnnl_success
               ? dfail(st, k, (dnnl_status_t)rc, "backward A", err)
               : prim_make(st, k, &L->b1, &b, NULL, a, 3, "backward A", err);
      if (rc != OOC_OK)
        break;
    }
    if (k->din[1] >= 0) {      /* dB = A^T dC, or dB^T = dC^T A */
      if (g.tb) {
        md_view(&s, g.B, g.N, g.M, 1);
        md_view(&w, g.B, g.M, g.K, 0);
        md_view(&o, g.B, g.N, g.K, 0);
      } else {
        md_view(&s, g.B, g.K, g.M, 1);
        md_view(&w, g.B, g.M, g.N, 0);
        md_view(&o, g.B, g.K, g.N, 0);
      }
      rc = dnnl_matmul_desc_init(&b.mm, &s, &w, NULL, &o);
      rc = rc != dnnl_success
               ? dfail(st, k, (dnnl_status_t)rc, "backward B", err)
               : prim_make(st, k, &L->b2, &b, NULL, a, 3, "backward B", err);
    }
    break;
  }
  case OOC_OPK_BATCHNORM: case OOC_OPK_LAYERNORM: {
    int a[7] = { DNNL_ARG_SRC, DNNL_ARG_MEAN, DNNL_ARG_VARIANCE,
                 DNNL_ARG_DIFF_DST, DNNL_ARG_SCALE_SHIFT, DNNL_ARG_DIFF_SRC,
                 DNNL_ARG_DIFF_SCALE_SHIFT };
    diff = data;
    if (l->op == OOC_OPK_BATCHNORM)
      rc = dnnl_batch_normalization_backward_desc_init(&b.bn, dnnl_backward,
             &diff, &data, EPS, dnnl_use_scaleshift);
    else
      rc = dnnl_layer_normalization_backward_desc_init(&b.ln, dnnl_backward,
             &diff, &data, NULL, EPS, dnnl_use_scaleshift);
    rc = rc != dnnl_success
             ? dfail(st, k, (dnnl_status_t)rc, "backward", err)
             : prim_make(st, k, &L->b1, &b, hint, a, 7, "backward", err);
    break;
  }
  case OOC_OPK_RELU: case OOC_OPK_ACT: case OOC_OPK_GELU: {
    float alpha;
    int use_dst;
    dnnl_alg_kind_t alg = elt_alg(l, &alpha, &use_dst);
    int a[3] = { use_dst ? DNNL_ARG_DST : DNNL_ARG_SRC, DNNL_ARG_DIFF_DST,
                 DNNL_ARG_DIFF_SRC };
    diff = data;
    rc = dnnl_eltwise_backward_desc_init(&b.elt, alg, &diff, &data, alpha, 0);
    rc = rc != dnnl_success
             ? dfail(st, k, (dnnl_status_t)rc, "backward", err)
             : prim_make(st, k, &L->b1, &b, hint, a, 3, "backward", err);
    break;
  }
  case OOC_OPK_MAXPOOL: case OOC_OPK_AVGPOOL: case OOC_OPK_GLOBALPOOL: {
    pool_geo g;
    int a[3] = { DNNL_ARG_DIFF_DST, DNNL_ARG_DIFF_SRC, DNNL_ARG_WORKSPACE };
    pool_geometry(st, k, &g);
    rc = dnnl_pooling_backward_desc_init(&b.pool, g.alg, &g.src, &g.dst,
           g.strides, g.kernel, g.pl, g.pr);
    rc = rc != dnnl_success
             ? dfail(st, k, (dnnl_status_t)rc, "backward", err)
             : prim_make(st, k, &L->b1, &b, hint, a,
                         l->op == OOC_OPK_MAXPOOL ? 3 : 2, "backward", err);
    break;
  }
  case OOC_OPK_LRN: {
    int a[4] = { DNNL_ARG_SRC, DNNL_ARG_DIFF_DST, DNNL_ARG_DIFF_SRC,
                 DNNL_ARG_WORKSPACE };
    const dnnl_memory_desc_t *ws =
        dnnl_primitive_desc_query_md(hint, dnnl_query_workspace_md, 0);
    diff = data;
    rc = dnnl_lrn_backward_desc_init(&b.lrn, dnnl_lrn_across_channels, &diff,
           &data, l->a.lrn_size > 0 ? l->a.lrn_size : 5, LRN_ALPHA,
           LRN_BETA, LRN_K);
    rc = rc != dnnl_success
             ? dfail(st, k, (dnnl_status_t)rc, "backward", err)
             : prim_make(st, k, &L->b1, &b, hint, a,
                         ws != NULL && dnnl_memory_desc_get_size(ws) > 0
                             ? 4 : 3, "backward", err);
    break;
  }
  case OOC_OPK_UPSAMPLE: {
    dnnl_memory_desc_t s, o;
    dnnl_dims_t dims, od;
    float fac[3];
    int nd = dims_in(m, k, 0, dims), i;
    int a[2] = { DNNL_ARG_DIFF_DST, DNNL_ARG_DIFF_SRC };
    dims_out(m, k->layer, od);
    md_plain(&s, nd, dims);
    md_plain(&o, nd, od);
    for (i = 0; i < nd - 2; i++)
      fac[i] = (float)l->a.scale;
    rc = dnnl_resampling_backward_desc_init(&b.rs,
           strcmp(l->a.mode, "bilinear") == 0 ? dnnl_resampling_linear
                                              : dnnl_resampling_nearest,
           l->a.scale > 0 ? fac : NULL, &s, &o);
    rc = rc != dnnl_success
             ? dfail(st, k, (dnnl_status_t)rc, "backward", err)
             : prim_make(st, k, &L->b1, &b, hint, a, 2, "backward", err);
    break;
  }
  default:
    rc = ooc_err_set(err, OOC_EINVAL, "cpu: no oneDNN backward for op %s",
                     ooc_op_name(l->op));
    break;
  }
  dnnl_primitive_desc_destroy(hint);
  if (rc == OOC_OK && (l->op == OOC_OPK_BATCHNORM ||
                       l->op == OOC_OPK_LAYERNORM || l->op == OOC_OPK_LRN ||
                       l->op == OOC_OPK_MAXPOOL) && !L->built[0]) {
    /* A backward whose forward never runs in this program still reads the
     * forward's side state. */
    rc = build_fwd(st, k, L, err);
    L->built[0] = rc == OOC_OK;
    L->algo[0] = k->algo;
  }
  return rc;
}

int
cpu_dnnl_prepare(cpu_state *st, const ooc_kernel *k, ooc_err *err)
{
  const ooc_layer *l = &st->m->layers[k->layer];
  cpu_layer *L = &st->lay[k->layer];
  int bwd = k->phase == OOC_PH_BWD, rc;

  if (L->built[bwd]) {
    if (L->algo[bwd] != k->algo)
      return ooc_err_set(err, OOC_EINVAL,
                         "cpu: layer %d '%s' runs its %s with kernel "
                         "algorithms '%s' and '%s' in one program; the cpu "
                         "backend builds one per layer and direction",
                         k->layer, l->name ? l->name : "?",
                         bwd ? "backward" : "forward",
                         ooc_algo_name((ooc_algo)L->algo[bwd]),
                         ooc_algo_name((ooc_algo)k->algo));
    return OOC_OK;
  }
  rc = bwd ? build_bwd(st, k, L, err) : build_fwd(st, k, L, err);
  if (rc == OOC_OK) {
    L->built[bwd] = 1;
    L->algo[bwd] = k->algo;
  }
  return rc;
}

/* --- running -------------------------------------------------------------- */

/* Where backward writes the gradient of input j: its tensor, or the side
 * buffer when it is added (NULL when it has none). */
static void *
dx_dst(cpu_state *st, const ooc_kernel *k, int j, void *const *ptr)
{
  if (k->din[j] < 0)
    return NULL;
  return k->din_acc[j] ? st->tmp : ptr[k->din[j]];
}

/* After dx_dst: add what went to the side buffer. */
static void
dx_done(cpu_state *st, const ooc_kernel *k, int j, void *const *ptr)
{
  if (k->din[j] >= 0 && k->din_acc[j])
    cpu_put(ptr[k->din[j]], st->tmp,
            in_bytes(st->m, k, j) / sizeof(float), 1);
}

static int
run_fwd(cpu_state *st, const ooc_kernel *k, cpu_layer *L,
        void *const *ptr, ooc_err *err)
{
  const ooc_layer *l = &st->m->layers[k->layer];
  void *h[16];
  char *w = k->param >= 0 ? ptr[k->param] : NULL;
  int j;

  switch (l->op) {
  case OOC_OPK_CONV2D: case OOC_OPK_CONV3D: case OOC_OPK_DECONV2D:
    h[0] = ptr[k->in[0]];
    h[1] = w;
    h[2] = ptr[k->out];
    h[3] = w + (l->param_bytes - (l->a.bias ? (uint64_t)l->a.out * 4 : 0));
    return prim_run(st, k, &L->f, h, ptr, err);
  case OOC_OPK_LINEAR:
    h[0] = ptr[k->in[0]];
    h[1] = k->tied >= 0 ? ptr[k->tied] : w;
    h[2] = ptr[k->out];
    h[3] = k->tied >= 0 ? w : w + (l->param_bytes - (uint64_t)l->a.out * 4);
    return prim_run(st, k, &L->f, h, ptr, err);
  case OOC_OPK_MATMUL:
    h[0] = ptr[k->in[0]];
    h[1] = ptr[k->in[1]];
    h[2] = ptr[k->out];
    return prim_run(st, k, &L->f, h, ptr, err);
  case OOC_OPK_BATCHNORM: case OOC_OPK_LAYERNORM:
    h[0] = ptr[k->in[0]];
    h[1] = ptr[k->out];
    h[2] = w;
    h[3] = L->stats;
    h[4] = (char *)L->stats + L->stats_bytes / 2;
    return prim_run(st, k, &L->f, h, ptr, err);
  case OOC_OPK_MAXPOOL: case OOC_OPK_LRN:
    h[0] = ptr[k->in[0]];
    h[1] = ptr[k->out];
    h[2] = L->pws;
    return prim_run(st, k, &L->f, h, ptr, err);
  case OOC_OPK_ADD: case OOC_OPK_CONCAT:
    /* hv holds n_in + 1 handles (build_fwd grew it) */
    st->hv[0] = ptr[k->out];
    for (j = 0; j < l->n_in; j++)
      st->hv[j + 1] = ptr[k->in[j]];
    return prim_run(st, k, &L->f, st->hv, ptr, err);
  default:
    h[0] = ptr[k->in[0]];
    h[1] = ptr[k->out];
    return prim_run(st, k, &L->f, h, ptr, err);
  }
}

/* Concat's backward: each input's slice of the output gradient. */
static void
concat_bwd(cpu_state *st, const ooc_kernel *k, void *const *ptr)
{
  const ooc_model *m = st->m;
  const ooc_layer *l = &m->layers[k->layer];
  int axis = l->a.axis < 0 ? l->a.axis + l->out.ndim : l->a.axis, i, j;
  int64_t outer = m->batch, inner = 1, total = l->out.d[axis], off = 0, o;
  const float *dy = ptr[k->dout];

  for (i = 0; i < axis; i++)
    outer *= l->out.d[i];
  for (i = axis + 1; i < l->out.ndim; i++)
    inner *= l->out.d[i];
  for (j = 0; j < l->n_in; j++) {
    const ooc_shape *x = &m->layers[ooc_layer_input(m, l, j)].out;
    int64_t c = x->d[axis];
    if (k->din[j] >= 0) {
      float *dx = ptr[k->din[j]];
      for (o = 0; o < outer; o++)
        cpu_put(dx + o * c * inner, dy + (o * total + off) * inner,
                (uint64_t)(c * inner), k->din_acc[j]);
    }
    off += c;
  }
}

static int
run_bwd(cpu_state *st, const ooc_kernel *k, cpu_layer *L,
        void *const *ptr, ooc_err *err)
{
  const ooc_model *m = st->m;
  const ooc_layer *l = &m->layers[k->layer];
  void *h[8];
  char *w = k->param >= 0 ? ptr[k->param] : NULL;
  char *dw = k->dparam >= 0 ? (char *)ptr[k->dparam] + k->dparam_off : NULL;
  uint64_t bias = l->a.bias ? (uint64_t)l->a.out * 4 : 0;
  int rc, j;

  switch (l->op) {
  case OOC_OPK_ADD:
    for (j = 0; j < l->n_in; j++)
      if (k->din[j] >= 0)
        cpu_put(ptr[k->din[j]], ptr[k->dout],
                in_bytes(m, k, j) / sizeof(float), k->din_acc[j]);
    return OOC_OK;
  case OOC_OPK_CONCAT:
    concat_bwd(st, k, ptr);
    return OOC_OK;
  case OOC_OPK_CONV2D: case OOC_OPK_CONV3D: case OOC_OPK_DECONV2D:
    if (k->din[0] >= 0) {
      h[0] = ptr[k->dout];
      h[1] = w;
      h[2] = dx_dst(st, k, 0, ptr);
      if ((rc = prim_run(st, k, &L->b1, h, ptr, err)) != OOC_OK)
        return rc;
      dx_done(st, k, 0, ptr);
    }
    h[0] = ptr[k->in[0]];
    h[1] = ptr[k->dout];
    h[2] = k->dparam_acc ? st->tmp : dw;
    h[3] = (char *)h[2] + (l->param_bytes - bias);
    if ((rc = prim_run(st, k, &L->b2, h, ptr, err)) != OOC_OK)
      return rc;
    if (k->dparam_acc)
      cpu_put((float *)dw, st->tmp, l->param_bytes / 4, 1);
    return OOC_OK;
  case OOC_OPK_LINEAR: {
    const ooc_shape *x = &m->layers[ooc_layer_input(m, l, 0)].out;
    uint64_t wn = (uint64_t)l->a.out * (uint64_t)x->d[x->ndim - 1];
    char *tw = k->tied >= 0 ? ptr[k->tied] : NULL;
    char *dtw = NULL;
    int wacc = k->tied >= 0 ? k->tied_acc : k->dparam_acc;
    if (tw != NULL) {
      const ooc_layer *e = &m->layers[m->n_layers > 0 ?
                                      ooc_model_tied_embedding(m, k->layer)
                                      : 0];
      dtw = (char *)ptr[k->tied_dparam] + k->tied_dparam_off;
      if (!wacc)   /* the table's position rows get no gradient here */
        memset(dtw + wn * 4, 0, e->param_bytes - wn * 4);
    }
    if (k->din[0] >= 0) {
      h[0] = ptr[k->dout];
      h[1] = tw != NULL ? tw : w;
      h[2] = dx_dst(st, k, 0, ptr);
      if ((rc = prim_run(st, k, &L->b1, h, ptr, err)) != OOC_OK)
        return rc;
      dx_done(st, k, 0, ptr);
    }
    h[0] = ptr[k->in[0]];
    h[1] = ptr[k->dout];
    h[2] = wacc ? st->tmp : (tw != NULL ? dtw : dw);
    h[3] = tw != NULL ? (k->dparam_acc ? (char *)st->tmp + wn * 4 : dw)
                      : (char *)h[2] + wn * 4;
    if ((rc = prim_run(st, k, &L->b2, h, ptr, err)) != OOC_OK)
      return rc;
    if (wacc)
      cpu_put((float *)(tw != NULL ? dtw : dw), st->tmp, wn, 1);
    if (bias > 0 && k->dparam_acc)
      cpu_put((float *)(tw != NULL ? dw : dw + wn * 4),
              (float *)st->tmp + wn, (uint64_t)l->a.out, 1);
    return OOC_OK;
  }
  case OOC_OPK_MATMUL:
    if (k->din[0] >= 0) {
      h[0] = ptr[k->dout];
      h[1] = ptr[k->in[1]];
      h[2] = dx_dst(st, k, 0, ptr);
      if ((rc = prim_run(st, k, &L->b1, h, ptr, err)) != OOC_OK)
        return rc;
      dx_done(st, k, 0, ptr);
    }
    if (k->din[1] >= 0) {
      int tb = l->a.transpose_b != 0;
      h[0] = tb ? ptr[k->dout] : ptr[k->in[0]];
      h[1] = tb ? ptr[k->in[0]] : ptr[k->dout];
      h[2] = dx_dst(st, k, 1, ptr);
      if ((rc = prim_run(st, k, &L->b2, h, ptr, err)) != OOC_OK)
        return rc;
      dx_done(st, k, 1, ptr);
    }
    return OOC_OK;
  case OOC_OPK_BATCHNORM: case OOC_OPK_LAYERNORM:
    h[0] = ptr[k->in[0]];
    h[1] = L->stats;
    h[2] = (char *)L->stats + L->stats_bytes / 2;
    h[3] = ptr[k->dout];
    h[4] = w;
    h[5] = k->din[0] >= 0 ? dx_dst(st, k, 0, ptr) : st->tmp;
    h[6] = k->dparam_acc ? (char *)st->tmp : dw;
    if (k->dparam_acc && h[5] == st->tmp)
      return ooc_err_set(err, OOC_EINVAL, "cpu: layer %d: a norm whose "
                         "input gradient and weight gradient are both added "
                         "to is not supported", k->layer);
    if ((rc = prim_run(st, k, &L->b1, h, ptr, err)) != OOC_OK)
      return rc;
    if (k->din[0] >= 0)
      dx_done(st, k, 0, ptr);
    if (k->dparam_acc)
      cpu_put((float *)dw, st->tmp, l->param_bytes / 4, 1);
    return OOC_OK;
  case OOC_OPK_RELU: case OOC_OPK_ACT: case OOC_OPK_GELU: {
    float alpha;
    int use_dst;
    elt_alg(l, &alpha, &use_dst);
    if (k->din[0] < 0)
      return OOC_OK;
    h[0] = use_dst ? ptr[k->out] : ptr[k->in[0]];
    h[1] = ptr[k->dout];
    h[2] = dx_dst(st, k, 0, ptr);
    if ((rc = prim_run(st, k, &L->b1, h, ptr, err)) != OOC_OK)
      return rc;
    dx_done(st, k, 0, ptr);
    return OOC_OK;
  }
  case OOC_OPK_LRN:
    if (k->din[0] < 0)
      return OOC_OK;
    h[0] = ptr[k->in[0]];
    h[1] = ptr[k->dout];
    h[2] = dx_dst(st, k, 0, ptr);
    h[3] = L->pws;
    if ((rc = prim_run(st, k, &L->b1, h, ptr, err)) != OOC_OK)
      return rc;
    dx_done(st, k, 0, ptr);
    return OOC_OK;
  default:    /* pooling, upsample: dy (+ workspace) -> dx */
    if (k->din[0] < 0)
      return OOC_OK;
    h[0] = ptr[k->dout];
    h[1] = dx_dst(st, k, 0, ptr);
    h[2] = L->pws;
    if ((rc = prim_run(st, k, &L->b1, h, ptr, err)) != OOC_OK)
      return rc;
    dx_done(st, k, 0, ptr);
    return OOC_OK;
  }
}

int
cpu_dnnl_run(cpu_state *st, const ooc_kernel *k, void *const *ptr,
             ooc_err *err)
{
  cpu_layer *L = &st->lay[k->layer];

  return k->phase == OOC_PH_BWD ? run_bwd(st, k, L, ptr, err)
                                : run_fwd(st, k, L, ptr, err);
}
