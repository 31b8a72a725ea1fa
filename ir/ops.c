/* ir/ops.c — the op table: one descriptor per op, each with an infer()
 * that checks the input shapes and fills a layer's output shape, bytes,
 * parameters, FLOPs, workspace and backward needs (model.h).
 *
 * Every infer() computes the op-specific figures per sample (FLOPs) or for
 * the batch (saved bytes, workspace); the front end ooc_op_infer() then
 * calls finish(), the one place that turns them into batch totals, dtype
 * bytes, optimizer state and the bytes read and written that the
 * memory-bound roofline uses. The counting rules (multiply-add = 2 FLOPs,
 * per-element costs of the cheap ops, the im2col workspace bound) are
 * listed in models/README.md, "Costs"; the
 * layer-wise cost model follows OOC-Paleo §3.6 (PALEO-style FLOP counts),
 * the backward needs follow SuperNeurons §3.2 (which tensors each layer's
 * backward reads).
 *
 * Owned by the model module. O(1) per layer; no allocation.
 */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "ir/model.h"

/* ---- helpers ------------------------------------------------------------- */

static int64_t
m64(int64_t a, int64_t b, int *ovf)
{
  int64_t r;
  if (__builtin_mul_overflow(a, b, &r)) {
    *ovf = 1;
    return INT64_MAX;
  }
  return r;
}

static void
shape_fmt(const ooc_shape *s, char *buf, size_t n)
{
  size_t off = 0;
  int i;
  off += (size_t)snprintf(buf, n, "[");
  for (i = 0; i < s->ndim && off < n; i++)
    off += (size_t)snprintf(buf + off, n - off, "%s%lld", i ? "," : "",
                            (long long)s->d[i]);
  if (off < n)
    snprintf(buf + off, n - off, "]");
}

static int64_t
elems(const ooc_shape *s, int *ovf)
{
  int64_t e = 1;
  int i;
  for (i = 0; i < s->ndim; i++)
    e = m64(e, s->d[i], ovf);
  return e;
}

static int
same_shape(const ooc_shape *a, const ooc_shape *b)
{
  int i;
  if (a->ndim != b->ndim)
    return 0;
  for (i = 0; i < a->ndim; i++)
    if (a->d[i] != b->d[i])
      return 0;
  return 1;
}

static int
want_rank(const ooc_layer *l, const ooc_shape *in, int lo, int hi,
          const char *what, ooc_err *err)
{
  char s[128];
  if (in->ndim >= lo && in->ndim <= hi)
    return OOC_OK;
  shape_fmt(in, s, sizeof s);
  return ooc_err_set(err, OOC_EINVAL, "in: %s needs %s, got %s",
                     ooc_op_name(l->op), what, s);
}

/* "in: shape A does not match B" (with " except on axis N" when axis >= 0)
 * for an input a that should have b's shape. */
static int
shape_mismatch(const ooc_shape *a, const ooc_shape *b, int axis,
               ooc_err *err)
{
  char sa[128], sb[128];

  shape_fmt(a, sa, sizeof sa);
  shape_fmt(b, sb, sizeof sb);
  if (axis >= 0)
    return ooc_err_set(err, OOC_EINVAL,
                       "in: shape %s does not match %s except on axis %d",
                       sa, sb, axis);
  return ooc_err_set(err, OOC_EINVAL, "in: shape %s does not match %s", sa,
                     sb);
}

/* FLOPs of a weighted layer from its multiply-adds per sample (2 FLOPs
 * each, forward and both backward passes alike), plus, with a bias, its
 * out values added at each of the positions (and their gradient). */
static void
weighted_flops(ooc_layer *l, double macs, int64_t out, double positions)
{
  l->fwd_flops = 2 * macs;
  l->bwd_data_flops = 2 * macs;
  l->bwd_weight_flops = 2 * macs;
  if (l->a.bias) {
    l->params += (uint64_t)out;
    l->fwd_flops += (double)out * positions;
    l->bwd_weight_flops += (double)out * positions;
  }
}

static const char *const spatial_names[5] = { "kernel", "stride", "pad",
                                              "dilation", "out_pad" };

/* List-valued spatial attributes must have one entry per spatial dim. */
static int
check_spatial(const ooc_layer *l, int nsp, ooc_err *err)
{
  int k;
  for (k = 0; k < 5; k++)
    if (l->a.spatial_n[k] != 0 && l->a.spatial_n[k] != nsp)
      return ooc_err_set(err, OOC_EINVAL,
                         "%s: %d values given, the input has %d spatial "
                         "dims", spatial_names[k], l->a.spatial_n[k], nsp);
  return OOC_OK;
}

/* Bytes of the optimizer state per parameter byte. */
static unsigned
opt_mult(ooc_optimizer o)
{
  switch (o) {
  case OOC_OPT_SGD: return 0;
  case OOC_OPT_ADAM: return 2;
  case OOC_OPT_SGD_MOMENTUM:
  default: return 1;
  }
}

/* Turn the per-sample FLOPs and the op's figures into batch totals and
 * bytes. Runs after a successful infer(), which has set l->out, params,
 * saved_bytes, workspace_bytes, per-sample flops, needs and alias_of
 * (position). */
static int
finish(ooc_layer *l, const ooc_shape *const *in, int n_in, int64_t batch,
       ooc_dtype dt, ooc_optimizer opt, ooc_err *err)
{
  int ovf = 0, i;
  uint64_t dts = ooc_dtype_size(dt);
  int64_t oe = elems(&l->out, &ovf);
  int64_t out_full = m64(m64(oe, batch, &ovf), (int64_t)dts, &ovf);
  double in_bytes = 0, out_b, pb;
  int no_copy = l->op == OOC_OPK_FLATTEN || l->op == OOC_OPK_RESHAPE;

  for (i = 0; i < l->out.ndim; i++)
    if (l->out.d[i] < 1) {
      char s[128];
      shape_fmt(&l->out, s, sizeof s);
      return ooc_err_set(err, OOC_EINVAL, "out: output shape %s is empty",
                         s);
    }
  for (i = 0; i < n_in; i++)
    in_bytes += (double)m64(m64(elems(in[i], &ovf), batch, &ovf),
                            (int64_t)dts, &ovf);
  if (!ovf && l->params > (UINT64_MAX >> 4))
    return ooc_err_set(err, OOC_ERANGE, "its %llu parameters overflow a "
                       "64-bit size", (unsigned long long)l->params);
  if (ovf || (uint64_t)out_full > (UINT64_MAX >> 2)) {
    char s[128];
    shape_fmt(&l->out, s, sizeof s);
    return ooc_err_set(err, OOC_ERANGE,
                       "out: shape %s x batch %lld overflows a 64-bit size",
                       s, (long long)batch);
  }
  l->out_bytes = l->alias_of >= 0 ? 0 : (uint64_t)out_full;
  l->param_bytes = l->params * dts;
  l->grad_bytes = l->param_bytes;
  l->opt_bytes = l->param_bytes * opt_mult(opt);
  l->fwd_flops *= (double)batch;
  l->bwd_data_flops *= (double)batch;
  l->bwd_weight_flops *= (double)batch;

  /* A tied linear has no parameters of its own but still computes the
   * gradient of the shared weights. */
  l->has_bwd = l->grad_in || l->params > 0 ||
               (l->op == OOC_OPK_LINEAR && l->a.tied);
  if (!l->grad_in)
    l->bwd_data_flops = 0;
  if (!l->has_bwd) {
    l->bwd_data_flops = l->bwd_weight_flops = 0;
    l->needs = OOC_NEED_NONE;
    /* Nothing runs the backward the indices were for: a framework pools
     * as in inference (PyTorch's autograd saves no indices for an input
     * that needs no gradient), and the executors keep no index tensor in
     * the output's storage (cuDNN has none; oneDNN's workspace is a side
     * buffer), so the output is all the pooling keeps. */
    if (l->op == OOC_OPK_MAXPOOL)
      l->saved_bytes = 0;
  }

  out_b = (double)out_full;
  pb = (double)l->param_bytes;
  if (no_copy) {
    l->fwd_bytes_rw = l->bwd_bytes_rw = 0;
    return OOC_OK;
  }
  /* Forward: read inputs and weights, write output and saved state. */
  l->fwd_bytes_rw = in_bytes + pb + out_b + (double)l->saved_bytes;
  /* Backward: read the output gradient, the tensors it needs and its saved
   * state; write the input gradients (reading the weights) and the weight
   * gradients (reading the inputs if not already counted). */
  l->bwd_bytes_rw = 0;
  if (l->has_bwd) {
    double b = out_b + (double)l->saved_bytes;
    if (l->needs & OOC_NEED_INPUT)
      b += in_bytes;
    if (l->needs & OOC_NEED_OUTPUT)
      b += out_b;
    if (l->grad_in)
      b += in_bytes + pb;
    if (l->params > 0)
      b += (double)l->grad_bytes;
    if (l->op == OOC_OPK_ADD)
      b = 0; /* the output gradient is passed on as it is */
    l->bwd_bytes_rw = b;
  }
  return OOC_OK;
}

/* ---- convolutions -------------------------------------------------------- */

static int
conv_like(ooc_layer *l, const ooc_shape *const *in, ooc_dtype dt,
          ooc_err *err, int nsp, int transposed)
{
  const ooc_shape *x = in[0];
  int64_t cin = x->d[0], cout = l->a.out, g = l->a.groups;
  int64_t kprod = 1, osp = 1, isp = 1;
  int ovf = 0, i, rc, gemm = 1;
  double macs;
  uint64_t dts = ooc_dtype_size(dt);

  if ((rc = want_rank(l, x, nsp + 1, nsp + 1,
                      nsp == 3 ? "a [C,D,H,W] input" : "a [C,H,W] input",
                      err)))
    return rc;
  if ((rc = check_spatial(l, nsp, err)))
    return rc;
  if (cin % g != 0)
    return ooc_err_set(err, OOC_EINVAL,
                       "groups: %lld does not divide the %lld input channels",
                       (long long)g, (long long)cin);
  if (cout % g != 0)
    return ooc_err_set(err, OOC_EINVAL,
                       "groups: %lld does not divide out = %lld",
                       (long long)g, (long long)cout);
  l->out.ndim = nsp + 1;
  l->out.d[0] = cout;
  for (i = 0; i < nsp; i++) {
    int64_t h = x->d[i + 1], k = l->a.kernel[i], s = l->a.stride[i],
            p = l->a.pad[i], d = l->a.dilation[i],
            op = l->a.out_pad[i], ek = d * (k - 1) + 1, o;
    if (!transposed) {
      if (h + 2 * p < ek)
        return ooc_err_set(err, OOC_EINVAL,
                           "kernel: %lld (dilated %lld) is larger than the "
                           "padded input %lld + 2*%lld along spatial dim %d",
                           (long long)k, (long long)ek, (long long)h,
                           (long long)p, i);
      o = (h + 2 * p - ek) / s + 1;
    } else {
      if (op >= s && op >= d)
        return ooc_err_set(err, OOC_EINVAL,
                           "out_pad: %lld must be smaller than the stride or "
                           "the dilation", (long long)op);
      o = (h - 1) * s - 2 * p + ek + op;
      if (o < 1)
        return ooc_err_set(err, OOC_EINVAL,
                           "pad: %lld leaves no output along spatial dim %d",
                           (long long)p, i);
    }
    l->out.d[i + 1] = o;
    kprod = m64(kprod, k, &ovf);
    osp = m64(osp, o, &ovf);
    isp = m64(isp, h, &ovf);
    if (k != 1 || s != 1 || p != 0)
      gemm = 0;
  }
  if (!transposed) {
    l->params = (uint64_t)m64(m64(cout, cin / g, &ovf), kprod, &ovf);
    macs = (double)cout * (double)osp * (double)(cin / g) * (double)kprod;
    /* im2col of one sample: (Cin k^n) x (output positions). */
    l->workspace_bytes = gemm ? 0 : (uint64_t)m64(m64(m64(cin, kprod, &ovf),
                                                      osp, &ovf),
                                                  (int64_t)dts, &ovf);
  } else {
    l->params = (uint64_t)m64(m64(cin, cout / g, &ovf), kprod, &ovf);
    macs = (double)cin * (double)isp * (double)(cout / g) * (double)kprod;
    /* col2im buffer of one sample: (Cout k^n) x (input positions). */
    l->workspace_bytes = gemm ? 0 : (uint64_t)m64(m64(m64(cout, kprod, &ovf),
                                                      isp, &ovf),
                                                  (int64_t)dts, &ovf);
  }
  if (ovf)
    return ooc_err_set(err, OOC_ERANGE, "out: the weights' size overflows");
  weighted_flops(l, macs, cout, (double)osp);
  l->needs = OOC_NEED_INPUT;
  return OOC_OK;
}

static int
conv2d_infer(ooc_layer *l, const ooc_shape *const *in, int n_in,
             int64_t batch, ooc_dtype dt, ooc_err *err)
{
  return conv_like(l, in, dt, err, 2, 0);
}

static int
conv3d_infer(ooc_layer *l, const ooc_shape *const *in, int n_in,
             int64_t batch, ooc_dtype dt, ooc_err *err)
{
  return conv_like(l, in, dt, err, 3, 0);
}

static int
deconv2d_infer(ooc_layer *l, const ooc_shape *const *in, int n_in,
               int64_t batch, ooc_dtype dt, ooc_err *err)
{
  return conv_like(l, in, dt, err, 2, 1);
}

static int
upsample_infer(ooc_layer *l, const ooc_shape *const *in, int n_in,
               int64_t batch, ooc_dtype dt, ooc_err *err)
{
  int ovf = 0, i, rc;
  int64_t oe;
  if ((rc = want_rank(l, in[0], 3, 4, "a [C,H,W] or [C,D,H,W] input", err)))
    return rc;
  l->out = *in[0];
  if (n_in == 2) {
    /* To the second input's spatial size, whatever the ratio (a 33 x 33
     * map to 129 x 129 at a 513 input). */
    if (in[1]->ndim != in[0]->ndim)
      return ooc_err_set(err, OOC_EINVAL,
                         "in: the second input (the size to resize to) must "
                         "have the first's rank %d (got %d)", in[0]->ndim,
                         in[1]->ndim);
    for (i = 1; i < l->out.ndim; i++)
      l->out.d[i] = in[1]->d[i];
  } else {
    for (i = 1; i < l->out.ndim; i++)
      l->out.d[i] = m64(l->out.d[i], l->a.scale, &ovf);
  }
  oe = elems(&l->out, &ovf);
  if (ovf)
    return ooc_err_set(err, OOC_ERANGE, "scale: the output size overflows");
  if (strcmp(l->a.mode, "bilinear") == 0) {
    l->fwd_flops = 8.0 * (double)oe;
    l->bwd_data_flops = 8.0 * (double)oe;
  } else {
    l->fwd_flops = 0;
    l->bwd_data_flops = (double)oe; /* sum the scale^n output gradients */
  }
  l->needs = OOC_NEED_NONE;
  return OOC_OK;
}

/* ---- dense layers -------------------------------------------------------- */

static int
linear_infer(ooc_layer *l, const ooc_shape *const *in, int n_in,
             int64_t batch, ooc_dtype dt, ooc_err *err)
{
  const ooc_shape *x = in[0];
  int ovf = 0;
  int64_t fin = x->d[x->ndim - 1], rows = elems(x, &ovf) / fin;
  double macs = (double)rows * (double)fin * (double)l->a.out;

  l->out = *x;
  l->out.d[x->ndim - 1] = l->a.out;
  l->params = l->a.tied ? 0 : (uint64_t)m64(fin, l->a.out, &ovf);
  if (ovf)
    return ooc_err_set(err, OOC_ERANGE, "out: the weights' size overflows");
  weighted_flops(l, macs, l->a.out, (double)rows);
  l->needs = OOC_NEED_INPUT;
  return OOC_OK;
}

static int
matmul_infer(ooc_layer *l, const ooc_shape *const *in, int n_in,
             int64_t batch, ooc_dtype dt, ooc_err *err)
{
  const ooc_shape *a = in[0], *b = in[1];
  int64_t m, k, kb, n, lead = 1;
  int i, ovf = 0;
  char sa[128], sb[128];

  shape_fmt(a, sa, sizeof sa);
  shape_fmt(b, sb, sizeof sb);
  if (a->ndim < 2 || b->ndim < 2)
    return ooc_err_set(err, OOC_EINVAL,
                       "in: matmul needs inputs of rank >= 2, got %s and %s",
                       sa, sb);
  m = a->d[a->ndim - 2];
  k = a->d[a->ndim - 1];
  kb = l->a.transpose_b ? b->d[b->ndim - 1] : b->d[b->ndim - 2];
  n = l->a.transpose_b ? b->d[b->ndim - 2] : b->d[b->ndim - 1];
  if (k != kb)
    return ooc_err_set(err, OOC_EINVAL,
                       "in: inner dimensions differ: %s x %s%s", sa, sb,
                       l->a.transpose_b ? " (B transposed)" : "");
  if (b->ndim != 2) {
    if (b->ndim != a->ndim)
      return ooc_err_set(err, OOC_EINVAL,
                         "in: leading dimensions differ: %s x %s", sa, sb);
    for (i = 0; i < a->ndim - 2; i++)
      if (a->d[i] != b->d[i])
        return ooc_err_set(err, OOC_EINVAL,
                           "in: leading dimensions differ: %s x %s", sa, sb);
  }
  for (i = 0; i < a->ndim - 2; i++)
    lead = m64(lead, a->d[i], &ovf);
  l->out = *a;
  l->out.d[a->ndim - 1] = n;
  l->fwd_flops = 2.0 * (double)lead * (double)m * (double)k * (double)n;
  l->bwd_data_flops = 2 * l->fwd_flops; /* gradients of both operands */
  l->needs = OOC_NEED_INPUT;
  return OOC_OK;
}

static int
attention_infer(ooc_layer *l, const ooc_shape *const *in, int n_in,
                int64_t batch, ooc_dtype dt, ooc_err *err)
{
  const ooc_shape *q = in[0];
  int64_t s, h, heads = l->a.heads,
          kv = l->a.kv_heads > 0 ? l->a.kv_heads : l->a.heads;
  int i, ovf = 0;
  char s0[128];

  if (q->ndim != 2) {
    shape_fmt(q, s0, sizeof s0);
    return ooc_err_set(err, OOC_EINVAL,
                       "in: attention needs [S,3H] or three [S,H] inputs, "
                       "got %s", s0);
  }
  if (n_in == 2)
    return ooc_err_set(err, OOC_EINVAL,
                       "in: attention takes one packed [S,3H] input or three "
                       "[S,H] inputs, not 2");
  s = q->d[0];
  if (heads % kv != 0)
    return ooc_err_set(err, OOC_EINVAL,
                       "kv_heads: %lld does not divide heads %lld",
                       (long long)kv, (long long)heads);
  if (n_in == 1) {
    /* [S, H + 2 kv H/heads]: q, then the kv heads' keys and values
     * (grouped-query attention; kv = heads is the packed [S, 3H]). */
    if ((q->d[1] * heads) % (heads + 2 * kv) != 0) {
      if (kv == heads)
        return ooc_err_set(err, OOC_EINVAL, "in: packed q,k,v width %lld "
                           "is not a multiple of 3", (long long)q->d[1]);
      return ooc_err_set(err, OOC_EINVAL, "in: packed q,k,v width %lld is "
                         "not H + 2 x %lld x H / %lld for any H",
                         (long long)q->d[1], (long long)kv,
                         (long long)heads);
    }
    h = q->d[1] * heads / (heads + 2 * kv);
  } else {
    ooc_shape kvs = *q;
    h = q->d[1];
    kvs.d[1] = h / heads * kv;
    for (i = 1; i < 3; i++)
      if (!same_shape(in[i], &kvs))
        return shape_mismatch(in[i], &kvs, -1, err);
  }
  if (h % heads != 0)
    return ooc_err_set(err, OOC_EINVAL,
                       "heads: %lld does not divide the hidden size %lld",
                       (long long)heads, (long long)h);
  l->out.ndim = 2;
  l->out.d[0] = s;
  l->out.d[1] = h;
  /* QK^T and PV: 2 x 2*S*S*H; scale + softmax: 5 per score. */
  l->fwd_flops = 4.0 * (double)s * (double)s * (double)h +
                 5.0 * (double)heads * (double)s * (double)s;
  /* dV, dP, dQ, dK: 4 x 2*S*S*H; softmax backward: 4 per score. */
  l->bwd_data_flops = 8.0 * (double)s * (double)s * (double)h +
                      4.0 * (double)heads * (double)s * (double)s;
  if (l->a.flash) {
    /* Memory-efficient (flash) attention (Dao et al. 2022, Alg. 1-2;
     * FlashAttention-2's backward): the forward keeps the output and one
     * fp32 log-sum-exp per row and head; the backward recomputes QK^T and
     * the softmax from them, then dV, dP, dQ, dK: 5 x 2*S*S*H and 9 per
     * score (softmax 5, its backward 4). */
    l->bwd_data_flops = 10.0 * (double)s * (double)s * (double)h +
                        9.0 * (double)heads * (double)s * (double)s;
    l->saved_bytes = (uint64_t)m64(m64(m64(heads, s, &ovf), batch, &ovf), 4,
                                   &ovf);
    if (ovf)
      return ooc_err_set(err, OOC_ERANGE, "heads: the saved log-sum-exp "
                         "[%lld,%lld] x batch overflows", (long long)heads,
                         (long long)s);
    l->needs = OOC_NEED_INPUT | OOC_NEED_OUTPUT;
    return OOC_OK;
  }
  l->saved_bytes = (uint64_t)m64(m64(m64(m64(heads, s, &ovf), s, &ovf),
                                     batch, &ovf),
                                 (int64_t)ooc_dtype_size(dt), &ovf);
  if (ovf)
    return ooc_err_set(err, OOC_ERANGE,
                       "heads: the saved softmax [%lld,%lld,%lld] x batch "
                       "overflows", (long long)heads, (long long)s,
                       (long long)s);
  l->needs = OOC_NEED_INPUT;
  return OOC_OK;
}

static int
embedding_infer(ooc_layer *l, const ooc_shape *const *in, int n_in,
                int64_t batch, ooc_dtype dt, ooc_err *err)
{
  const ooc_shape *x = in[0];
  int64_t s, rows;
  int ovf = 0, rc;

  if ((rc = want_rank(l, x, 1, 1, "a [S] input of token ids", err)))
    return rc;
  s = x->d[0];
  if (l->a.positions > 0 && l->a.positions < s)
    return ooc_err_set(err, OOC_EINVAL,
                       "positions: %lld is less than the sequence length "
                       "%lld", (long long)l->a.positions, (long long)s);
  l->out.ndim = 2;
  l->out.d[0] = s;
  l->out.d[1] = l->a.out;
  /* token rows, then position rows, then token-type rows (every token
   * takes type 0, as a single-segment batch does) */
  rows = l->a.vocab + l->a.positions + l->a.types;
  if (rows < l->a.vocab)
    ovf = 1;
  l->params = (uint64_t)m64(rows, l->a.out, &ovf);
  if (ovf)
    return ooc_err_set(err, OOC_ERANGE, "vocab: the table's size overflows");
  /* Gather, plus the position add; backward scatter-adds each row. */
  l->fwd_flops = (double)((l->a.positions > 0) + (l->a.types > 0)) *
                 (double)s * (double)l->a.out;
  l->bwd_weight_flops = (double)(1 + (l->a.positions > 0) +
                                 (l->a.types > 0)) *
                        (double)s * (double)l->a.out;
  l->needs = OOC_NEED_INPUT;
  return OOC_OK;
}

/* ---- normalisation ------------------------------------------------------- */

static int
batchnorm_infer(ooc_layer *l, const ooc_shape *const *in, int n_in,
                int64_t batch, ooc_dtype dt, ooc_err *err)
{
  int ovf = 0;
  int64_t c = in[0]->d[0], e = elems(in[0], &ovf);

  l->out = *in[0];
  l->params = 2 * (uint64_t)c; /* gamma, beta */
  l->saved_bytes = 2 * (uint64_t)c * ooc_dtype_size(dt); /* mean, inv-std */
  /* stats 3, normalise + affine 4 per element; backward 9 and 3 */
  l->fwd_flops = 7.0 * (double)e;
  l->bwd_data_flops = 9.0 * (double)e;
  l->bwd_weight_flops = 3.0 * (double)e;
  l->needs = OOC_NEED_INPUT;
  return OOC_OK;
}

static int
layernorm_infer(ooc_layer *l, const ooc_shape *const *in, int n_in,
                int64_t batch, ooc_dtype dt, ooc_err *err)
{
  int ovf = 0;
  const ooc_shape *x = in[0];
  int64_t h = x->d[x->ndim - 1], e = elems(x, &ovf), rows = e / h;

  l->out = *x;
  l->params = 2 * (uint64_t)h;
  l->saved_bytes = (uint64_t)m64(m64(2 * rows, batch, &ovf),
                                 (int64_t)ooc_dtype_size(dt), &ovf);
  l->fwd_flops = 7.0 * (double)e;
  l->bwd_data_flops = 9.0 * (double)e;
  l->bwd_weight_flops = 3.0 * (double)e;
  l->needs = OOC_NEED_INPUT;
  return OOC_OK;
}

/* RMSNorm (Zhang & Sennrich 2019; LLaMA): y = x / rms(x) * g over the
 * last dim, a weight and no bias, one fp32 reciprocal rms saved per row.
 * Forward: square, sum, scale, weight (4 per element); backward: the
 * data gradient 6, the weight's 2. */
static int
rmsnorm_infer(ooc_layer *l, const ooc_shape *const *in, int n_in,
              int64_t batch, ooc_dtype dt, ooc_err *err)
{
  int ovf = 0;
  const ooc_shape *x = in[0];
  int64_t h = x->d[x->ndim - 1], e = elems(x, &ovf), rows = e / h;

  l->out = *x;
  l->params = (uint64_t)h;
  l->saved_bytes = (uint64_t)m64(m64(rows, batch, &ovf), 4, &ovf);
  if (ovf)
    return ooc_err_set(err, OOC_ERANGE, "in: the saved statistics' size "
                                        "overflows");
  l->fwd_flops = 4.0 * (double)e;
  l->bwd_data_flops = 6.0 * (double)e;
  l->bwd_weight_flops = 2.0 * (double)e;
  l->needs = OOC_NEED_INPUT;
  return OOC_OK;
}

/* Rotary position embedding (Su et al. 2021, as LLaMA applies it): the
 * leading `rotate` columns of [S, W] (all by default; the packed q and k
 * of an attention input) in head_dim slices, each pair (i, i + head_dim
 * / 2) rotated by position x 10000^(-2i / head_dim). A new output; the
 * backward rotates the gradient back and reads nothing. 3 FLOPs per
 * rotated element each way. */
static int
rope_infer(ooc_layer *l, const ooc_shape *const *in, int n_in, int64_t batch,
           ooc_dtype dt, ooc_err *err)
{
  const ooc_shape *x = in[0];
  int rc;
  int64_t w, r;

  if ((rc = want_rank(l, x, 2, 2, "an [S, W] input", err)))
    return rc;
  w = x->d[1];
  r = l->a.rotate > 0 ? l->a.rotate : w;
  if (r > w)
    return ooc_err_set(err, OOC_EINVAL, "rotate: %lld is more than the "
                       "input's %lld columns", (long long)r, (long long)w);
  if (l->a.head_dim % 2 != 0 || r % l->a.head_dim != 0)
    return ooc_err_set(err, OOC_EINVAL, "head_dim: %d must be even and "
                       "divide the %lld rotated columns", l->a.head_dim,
                       (long long)r);
  l->out = *x;
  l->fwd_flops = 3.0 * (double)x->d[0] * (double)r;
  l->bwd_data_flops = l->fwd_flops;
  l->needs = OOC_NEED_NONE;
  return OOC_OK;
}

/* SwiGLU (Shazeer 2020; LLaMA's MLP): [.., 2F] -> [.., F], silu(a) * b
 * with a the first half and b the second (the gate and up projections
 * packed in one linear layer). Forward 5 per output element (silu 4,
 * product 1); backward 10. Reads its input. */
static int
swiglu_infer(ooc_layer *l, const ooc_shape *const *in, int n_in,
             int64_t batch, ooc_dtype dt, ooc_err *err)
{
  const ooc_shape *x = in[0];
  int ovf = 0;
  int64_t e;

  if (x->d[x->ndim - 1] % 2 != 0)
    return ooc_err_set(err, OOC_EINVAL, "in: the last dim %lld is odd (it "
                       "packs the gate and the up projection)",
                       (long long)x->d[x->ndim - 1]);
  l->out = *x;
  l->out.d[x->ndim - 1] /= 2;
  e = elems(&l->out, &ovf);
  l->fwd_flops = 5.0 * (double)e;
  l->bwd_data_flops = 10.0 * (double)e;
  l->needs = OOC_NEED_INPUT;
  return OOC_OK;
}

/* Learned tokens put before a sequence and learned positions added to
 * every row (ViT's class token and position embedding): [S, H] ->
 * [S + prepend, H], (prepend + positions) x H parameters, positions 0
 * or at least S + prepend. One add per element with positions. */
static int
tokens_infer(ooc_layer *l, const ooc_shape *const *in, int n_in,
             int64_t batch, ooc_dtype dt, ooc_err *err)
{
  const ooc_shape *x = in[0];
  int ovf = 0, rc;
  int64_t s;

  if ((rc = want_rank(l, x, 2, 2, "an [S, H] input", err)))
    return rc;
  s = x->d[0] + l->a.prepend;
  if (l->a.positions > 0 && l->a.positions < s)
    return ooc_err_set(err, OOC_EINVAL, "positions: %lld is less than the "
                       "%lld rows with the prepended tokens",
                       (long long)l->a.positions, (long long)s);
  l->out = *x;
  l->out.d[0] = s;
  l->params = (uint64_t)m64(l->a.prepend + l->a.positions, x->d[1], &ovf);
  if (ovf)
    return ooc_err_set(err, OOC_ERANGE, "prepend: the parameters' size "
                                        "overflows");
  l->fwd_flops = l->a.positions > 0 ? (double)s * (double)x->d[1] : 0;
  l->bwd_weight_flops = (double)s * (double)x->d[1];
  l->needs = OOC_NEED_NONE;
  return OOC_OK;
}

/* Rows [start, start + length) of the first dim (ViT's class token,
 * x[:, 0]): a copy; the backward puts the gradient there and zeros
 * elsewhere, reading nothing. */
static int
slice_infer(ooc_layer *l, const ooc_shape *const *in, int n_in,
            int64_t batch, ooc_dtype dt, ooc_err *err)
{
  const ooc_shape *x = in[0];
  if (l->a.start + l->a.length > x->d[0])
    return ooc_err_set(err, OOC_EINVAL, "length: rows %lld to %lld are "
                       "past the input's %lld", (long long)l->a.start,
                       (long long)(l->a.start + l->a.length - 1),
                       (long long)x->d[0]);
  l->out = *x;
  l->out.d[0] = l->a.length;
  l->needs = OOC_NEED_NONE;
  return OOC_OK;
}

static int
lrn_infer(ooc_layer *l, const ooc_shape *const *in, int n_in, int64_t batch,
          ooc_dtype dt, ooc_err *err)
{
  int ovf = 0;
  int64_t e = elems(in[0], &ovf);
  l->out = *in[0];
  l->fwd_flops = (2.0 * l->a.lrn_size + 4) * (double)e;
  l->bwd_data_flops = (2.0 * l->a.lrn_size + 6) * (double)e;
  l->needs = OOC_NEED_INPUT | OOC_NEED_OUTPUT;
  return OOC_OK;
}

/* ---- element-wise -------------------------------------------------------- */

static int
unary_eltwise(ooc_layer *l, const ooc_shape *const *in, ooc_err *err,
              double fwd, double bwd, unsigned needs)
{
  int ovf = 0;
  int64_t e = elems(in[0], &ovf);
  l->out = *in[0];
  l->fwd_flops = fwd * (double)e;
  l->bwd_data_flops = bwd * (double)e;
  l->needs = needs;
  if (l->a.in_place) {
    if (needs & OOC_NEED_INPUT)
      return ooc_err_set(err, OOC_EINVAL,
                         "in_place: the backward of %s needs its input, "
                         "which an in-place op overwrites",
                         l->op == OOC_OPK_ACT ? l->a.act : ooc_op_name(l->op));
    l->alias_of = 0;
  }
  return OOC_OK;
}

static int
relu_infer(ooc_layer *l, const ooc_shape *const *in, int n_in, int64_t batch,
           ooc_dtype dt, ooc_err *err)
{
  return unary_eltwise(l, in, err, 1, 1, OOC_NEED_OUTPUT);
}

static int
act_infer(ooc_layer *l, const ooc_shape *const *in, int n_in, int64_t batch,
          ooc_dtype dt, ooc_err *err)
{
  static const struct { const char *name; unsigned needs; } acts[] = {
    { "sigmoid", OOC_NEED_OUTPUT }, { "tanh", OOC_NEED_OUTPUT },
    { "silu", OOC_NEED_INPUT }, { "elu", OOC_NEED_INPUT },
    { "leaky_relu", OOC_NEED_INPUT }, { "hardswish", OOC_NEED_INPUT },
  };
  size_t i;
  for (i = 0; i < sizeof acts / sizeof acts[0]; i++)
    if (strcmp(l->a.act, acts[i].name) == 0)
      return unary_eltwise(l, in, err, 4, 3, acts[i].needs);
  return ooc_err_set(err, OOC_EINVAL,
                     "act: unknown activation '%s' (valid: sigmoid, tanh, "
                     "silu, elu, leaky_relu, hardswish)", l->a.act);
}

static int
gelu_infer(ooc_layer *l, const ooc_shape *const *in, int n_in, int64_t batch,
           ooc_dtype dt, ooc_err *err)
{
  return unary_eltwise(l, in, err, 8, 12, OOC_NEED_INPUT);
}

/* Softmax over the last dim, as an imported graph computes attention
 * scores: exp, sum, divide (5 per element, attention's count); the
 * backward y (dy - sum(dy y)) reads the output (4 per element). */
static int
softmax_infer(ooc_layer *l, const ooc_shape *const *in, int n_in,
              int64_t batch, ooc_dtype dt, ooc_err *err)
{
  return unary_eltwise(l, in, err, 5, 4, OOC_NEED_OUTPUT);
}

static int
dropout_infer(ooc_layer *l, const ooc_shape *const *in, int n_in,
              int64_t batch, ooc_dtype dt, ooc_err *err)
{
  int ovf = 0;
  l->saved_bytes = (uint64_t)m64(elems(in[0], &ovf), batch, &ovf); /* mask */
  if (ovf)
    return ooc_err_set(err, OOC_ERANGE, "p: the mask's size overflows");
  return unary_eltwise(l, in, err, 2, 2, OOC_NEED_NONE);
}

static int
add_infer(ooc_layer *l, const ooc_shape *const *in, int n_in, int64_t batch,
          ooc_dtype dt, ooc_err *err)
{
  int i, ovf = 0;
  for (i = 1; i < n_in; i++)
    if (!same_shape(in[i], in[0]))
      return shape_mismatch(in[i], in[0], -1, err);
  l->out = *in[0];
  l->fwd_flops = (double)(n_in - 1) * (double)elems(in[0], &ovf);
  l->needs = OOC_NEED_NONE;
  if (l->a.in_place)
    l->alias_of = 0;    /* PyTorch's `out += identity`: into the first */
  return OOC_OK;
}

static int
concat_infer(ooc_layer *l, const ooc_shape *const *in, int n_in,
             int64_t batch, ooc_dtype dt, ooc_err *err)
{
  int i, j, axis = l->a.axis, nd = in[0]->ndim;
  int64_t sum = 0;

  if (axis < 0)
    axis += nd;
  if (axis < 0 || axis >= nd)
    return ooc_err_set(err, OOC_EINVAL,
                       "axis: %d is out of range for rank %d", l->a.axis, nd);
  for (i = 0; i < n_in; i++) {
    int bad = in[i]->ndim != nd;
    for (j = 0; j < nd && !bad; j++)
      if (j != axis && in[i]->d[j] != in[0]->d[j])
        bad = 1;
    if (bad)
      return shape_mismatch(in[i], in[0], axis, err);
    if (__builtin_add_overflow(sum, in[i]->d[axis], &sum))
      return ooc_err_set(err, OOC_ERANGE, "in: the joined size overflows");
  }
  l->out = *in[0];
  l->out.d[axis] = sum;
  l->needs = OOC_NEED_NONE;
  return OOC_OK;
}

/* ---- pooling ------------------------------------------------------------- */

static int
pool_infer(ooc_layer *l, const ooc_shape *const *in, int n_in, int64_t batch,
           ooc_dtype dt, ooc_err *err)
{
  const ooc_shape *x = in[0];
  int nsp = x->ndim - 1, i, rc, ovf = 0;
  int64_t kprod = 1;

  if ((rc = want_rank(l, x, 3, 4, "a [C,H,W] or [C,D,H,W] input", err)))
    return rc;
  if ((rc = check_spatial(l, nsp, err)))
    return rc;
  l->out = *x;
  for (i = 0; i < nsp; i++) {
    /* A scalar applies to every dim; a 2-list on a 2D input is (H,W). */
    int64_t h = x->d[i + 1], k = l->a.kernel[i], s = l->a.stride[i],
            p = l->a.pad[i], o;
    if (2 * p > k)
      return ooc_err_set(err, OOC_EINVAL,
                         "pad: %lld is more than half the kernel %lld",
                         (long long)p, (long long)k);
    if (h + 2 * p < k)
      return ooc_err_set(err, OOC_EINVAL,
                         "kernel: %lld is larger than the padded input %lld "
                         "+ 2*%lld along spatial dim %d", (long long)k,
                         (long long)h, (long long)p, i);
    if (l->a.ceil_mode) {
      o = (h + 2 * p - k + s - 1) / s + 1;
      if ((o - 1) * s >= h + p) /* the last window starts in the padding */
        o--;
    } else {
      o = (h + 2 * p - k) / s + 1;
    }
    l->out.d[i + 1] = o;
    kprod = m64(kprod, k, &ovf);
  }
  l->fwd_flops = (double)kprod * (double)elems(&l->out, &ovf);
  l->bwd_data_flops = l->fwd_flops;
  l->needs = OOC_NEED_NONE;
  if (l->op == OOC_OPK_MAXPOOL && l->a.index_bytes > 0) {
    /* PyTorch's max_pool2d_with_indices saves the input and the argmax
     * (int64), Caffe's the argmax (int32): the saved state is the index
     * tensor, as large as the output or larger, so it keeps the output's
     * storage to the backward too (plan/liveness.c). */
    l->needs = OOC_NEED_INPUT;
    l->saved_bytes = (uint64_t)m64(m64(elems(&l->out, &ovf), batch, &ovf),
                                   l->a.index_bytes, &ovf);
    if (ovf)
      return ooc_err_set(err, OOC_ERANGE, "kernel: the saved indices' size "
                                          "overflows");
  } else if (l->op == OOC_OPK_MAXPOOL) {
    l->needs = OOC_NEED_INPUT | OOC_NEED_OUTPUT;   /* cuDNN's backward */
  }
  return OOC_OK;
}

static int
globalpool_infer(ooc_layer *l, const ooc_shape *const *in, int n_in,
                 int64_t batch, ooc_dtype dt, ooc_err *err)
{
  int i, rc, ovf = 0;
  if ((rc = want_rank(l, in[0], 2, 4, "a [C,H,W] or [C,D,H,W] input", err)))
    return rc;
  l->out = *in[0];
  for (i = 1; i < l->out.ndim; i++)
    l->out.d[i] = 1;
  l->fwd_flops = (double)elems(in[0], &ovf);
  l->bwd_data_flops = l->fwd_flops;
  l->needs = OOC_NEED_NONE;
  return OOC_OK;
}

/* ---- loss, shape ops ----------------------------------------------------- */

static int
softmax_ce_infer(ooc_layer *l, const ooc_shape *const *in, int n_in,
                 int64_t batch, ooc_dtype dt, ooc_err *err)
{
  int ovf = 0;
  int64_t e = elems(in[0], &ovf);
  l->out.ndim = 1;
  l->out.d[0] = 1;
  l->saved_bytes = (uint64_t)m64(m64(e, batch, &ovf),
                                 (int64_t)ooc_dtype_size(dt), &ovf);
  if (ovf)
    return ooc_err_set(err, OOC_ERANGE, "in: the saved probabilities' size "
                                        "overflows");
  l->fwd_flops = 5.0 * (double)e;
  l->bwd_data_flops = 2.0 * (double)e;
  /* The gradient (p - y) / B needs the saved probabilities and the labels,
   * not the loss value this layer outputs. */
  l->needs = OOC_NEED_NONE;
  return OOC_OK;
}

static int
flatten_infer(ooc_layer *l, const ooc_shape *const *in, int n_in,
              int64_t batch, ooc_dtype dt, ooc_err *err)
{
  int ovf = 0;
  l->out.ndim = 1;
  l->out.d[0] = elems(in[0], &ovf);
  l->alias_of = 0;
  l->needs = OOC_NEED_NONE;
  return OOC_OK;
}

static int
reshape_infer(ooc_layer *l, const ooc_shape *const *in, int n_in,
              int64_t batch, ooc_dtype dt, ooc_err *err)
{
  int ovf = 0, i, wild = -1;
  int64_t e = elems(in[0], &ovf), known = 1;
  char a[128], b[128];

  l->out.ndim = l->a.ndim;
  for (i = 0; i < l->a.ndim; i++) {
    l->out.d[i] = l->a.shape[i];
    if (l->a.shape[i] == -1)
      wild = i;
    else
      known = m64(known, l->a.shape[i], &ovf);
  }
  if (wild >= 0) {
    if (known == 0 || e % known != 0)
      goto mismatch;
    l->out.d[wild] = e / known;
  }
  if (ovf || elems(&l->out, &ovf) != e)
    goto mismatch;
  l->alias_of = 0;
  l->needs = OOC_NEED_NONE;
  return OOC_OK;
mismatch:
  shape_fmt(in[0], a, sizeof a);
  {
    ooc_shape t = { .ndim = l->a.ndim };
    memcpy(t.d, l->a.shape, sizeof t.d);
    shape_fmt(&t, b, sizeof b);
  }
  return ooc_err_set(err, OOC_EINVAL,
                     "shape: %s does not have the %lld elements of the input "
                     "%s", b, (long long)e, a);
}

static int
input_infer(ooc_layer *l, const ooc_shape *const *in, int n_in, int64_t batch,
            ooc_dtype dt, ooc_err *err)
{
  l->needs = OOC_NEED_NONE;
  return OOC_OK;
}

/* ---- the table ----------------------------------------------------------- */

#define CONV_ATTRS "out kernel stride pad dilation groups bias"
#define POOL_ATTRS "kernel stride pad ceil_mode"

/* One row of the table: the kind (index and .kind alike), its name, cost
 * class, input count range (-1: any number), attributes, required
 * attributes and infer(). */
#define OP(K, NAME, CLS, MIN_IN, MAX_IN, ATTRS, REQUIRED, INFER)            \
  [OOC_OPK_##K] = { .name = NAME, .kind = OOC_OPK_##K,                      \
                    .cls = OOC_CLASS_##CLS, .min_inputs = MIN_IN,           \
                    .max_inputs = MAX_IN, .attrs = ATTRS,                   \
                    .required = REQUIRED, .infer = INFER }

static const ooc_op_type op_table[OOC_OPK_COUNT] = {
  OP(INPUT, "input", OTHER, 0, 0, "", "", input_infer),
  OP(CONV2D, "conv2d", CONV, 1, 1, CONV_ATTRS, "out kernel", conv2d_infer),
  OP(CONV3D, "conv3d", CONV, 1, 1, CONV_ATTRS, "out kernel", conv3d_infer),
  OP(DECONV2D, "deconv2d", CONV, 1, 1,
      CONV_ATTRS " out_pad", "out kernel", deconv2d_infer),
  OP(UPSAMPLE, "upsample", ELTWISE, 1, 2, "scale mode", "", upsample_infer),
  OP(LINEAR, "linear", GEMM, 1, 1, "out bias tied", "out", linear_infer),
  OP(BATCHNORM, "batchnorm", NORM, 1, 1, "", "", batchnorm_infer),
  OP(RELU, "relu", ELTWISE, 1, 1, "in_place", "", relu_infer),
  OP(ACT, "act", ELTWISE, 1, 1, "act in_place", "act", act_infer),
  OP(MAXPOOL, "maxpool", POOL, 1, 1, POOL_ATTRS, "kernel", pool_infer),
  OP(AVGPOOL, "avgpool", POOL, 1, 1, POOL_ATTRS, "kernel", pool_infer),
  OP(GLOBALPOOL, "globalpool", POOL, 1, 1, "", "", globalpool_infer),
  OP(ADD, "add", ELTWISE, 2, -1, "in_place", "", add_infer),
  OP(CONCAT, "concat", ELTWISE, 1, -1, "axis", "", concat_infer),
  OP(LRN, "lrn", NORM, 1, 1, "size", "", lrn_infer),
  OP(DROPOUT, "dropout", ELTWISE, 1, 1, "p in_place", "", dropout_infer),
  OP(SOFTMAX_CE, "softmax_ce", OTHER, 1, 1, "", "", softmax_ce_infer),
  OP(FLATTEN, "flatten", ELTWISE, 1, 1, "", "", flatten_infer),
  OP(RESHAPE, "reshape", ELTWISE, 1, 1, "shape", "shape", reshape_infer),
  OP(EMBEDDING, "embedding", OTHER, 1, 1,
      "vocab out positions types", "vocab out", embedding_infer),
  OP(MATMUL, "matmul", GEMM, 2, 2, "transpose_b", "", matmul_infer),
  OP(ATTENTION, "attention", GEMM, 1, 3,
      "heads causal impl kv_heads", "heads", attention_infer),
  OP(LAYERNORM, "layernorm", NORM, 1, 1, "", "", layernorm_infer),
  OP(GELU, "gelu", ELTWISE, 1, 1, "", "", gelu_infer),
  OP(RMSNORM, "rmsnorm", NORM, 1, 1, "", "", rmsnorm_infer),
  OP(ROPE, "rope", ELTWISE, 1, 1, "head_dim rotate", "head_dim", rope_infer),
  OP(SWIGLU, "swiglu", ELTWISE, 1, 1, "", "", swiglu_infer),
  OP(TOKENS, "tokens", OTHER, 1, 1, "prepend positions", "", tokens_infer),
  OP(SLICE, "slice", ELTWISE, 1, 1, "start length", "length", slice_infer),
  OP(SOFTMAX, "softmax", ELTWISE, 1, 1, "", "", softmax_infer),
};

#undef OP

const ooc_op_type *
ooc_op_find(const char *name)
{
  int k;
  for (k = 0; k < OOC_OPK_COUNT; k++)
    if (strcmp(op_table[k].name, name) == 0)
      return &op_table[k];
  return NULL;
}

const ooc_op_type *
ooc_op_get(ooc_op_kind k)
{
  if ((int)k < 0 || k >= OOC_OPK_COUNT)
    return NULL;
  return &op_table[k];
}

const char *
ooc_op_name(ooc_op_kind k)
{
  const ooc_op_type *t = ooc_op_get(k);
  return t ? t->name : "?";
}

int
ooc_op_infer(ooc_layer *l, const ooc_shape *const *in, int n_in,
             int64_t batch, ooc_dtype dt, ooc_optimizer opt, ooc_err *err)
{
  const ooc_op_type *t = ooc_op_get(l->op);
  int rc;

  if (t == NULL)
    return ooc_err_set(err, OOC_EINVAL, "op: unknown op kind %d", (int)l->op);
  rc = t->infer(l, in, n_in, batch, dt, err);
  return rc ? rc : finish(l, in, n_in, batch, dt, opt, err);
}
