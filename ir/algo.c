/* ir/algo.c — kernel algorithms and their workspaces (algo.h).
 *
 * One idea: a table of the convolution algorithm families with, for each,
 * an applicability rule and a workspace formula over the layer's shapes.
 * Notation: batch N, input channels C, output channels K, groups g,
 * kernel R x S (kprod elements in 2D or 3D), input H x W, output P x Q,
 * padding p, element size e (the model's dtype). Formulas:
 *
 *   default            the op table's workspace_bytes: one sample's im2col
 *                      matrix, (C k^n) x (P Q) x e, 0 for a 1x1 stride-1
 *                      unpadded conv, which is a plain GEMM (ir/ops.c)
 *   implicit_gemm      0: the matrix is never formed
 *   precomp_gemm       4 B x (C/g) x kprod: one precomputed input offset
 *                      per filter tap
 *   fft                (N C + K C + N K) complex planes of Hf x (Wf/2 + 1)
 *                      at 8 B (single-precision complex, what cuFFT
 *                      computes in for every input type), Hf = H + 2p,
 *                      Wf = W + 2p: the transformed inputs, filters and
 *                      outputs held at once
 *   fft_tiling         the same with 32 x 32 tiles: each plane becomes
 *                      T = ceil(P / (33 - R)) x ceil(Q / (33 - S)) tiles of
 *                      32 x 17 complex values; filters are transformed once
 *   winograd           36 K (C/g) e: the filters transformed to 6 x 6
 *                      tiles (F(4x4, 3x3)); the inputs are transformed in
 *                      registers
 *   winograd_nonfused  36 e x (N C T + N K T + K C), T = ceil(P/4) ceil(Q/4):
 *                      transformed input and output tiles and filters in
 *                      memory
 *
 * Applicability (cuDNN's documented restrictions, simplified): the GEMM
 * families take every convolution (2D, 3D, transposed); FFT and tiled FFT
 * only 2D forward convolutions with stride 1, no dilation and one group,
 * FFT with a padded plane of at most 256 x 256 and tiled FFT with a
 * kernel of at most 32 x 32; both Winograd variants only 3 x 3 kernels
 * under the same conditions. A workspace above 2^62 bytes is "does not
 * apply".
 */
#include "config.h"

#include <string.h>

#include "ir/algo.h"

const char *const ooc_algo_names[OOC_ALGO_COUNT] = {
  "default", "implicit_gemm", "precomp_gemm", "fft", "fft_tiling",
  "winograd", "winograd_nonfused",
};

const char *
ooc_algo_name(ooc_algo a)
{
  return (unsigned)a < OOC_ALGO_COUNT ? ooc_algo_names[a] : "?";
}

int
ooc_algo_parse(const char *s, ooc_algo *out)
{
  int i;

  for (i = 0; s != NULL && i < OOC_ALGO_COUNT; i++)
    if (strcmp(s, ooc_algo_names[i]) == 0) {
      *out = (ooc_algo)i;
      return OOC_OK;
    }
  return OOC_EINVAL;
}

static int
is_conv(ooc_op_kind k)
{
  return k == OOC_OPK_CONV2D || k == OOC_OPK_CONV3D ||
         k == OOC_OPK_DECONV2D;
}

int
ooc_algo_has_choice(const ooc_model *m, int layer)
{
  return layer > 0 && layer < m->n_layers &&
         is_conv(m->layers[layer].op);
}

/* Bytes from a double, or -1 when it is not a sane size. */
static int
to_bytes(double b, uint64_t *out)
{
  if (!(b >= 0) || b > 4611686018427387904.0)
    return OOC_EINVAL;
  *out = (uint64_t)b;
  return OOC_OK;
}

static double
ceil_div(double a, double b)
{
  double q = a / b;
  double f = (double)(int64_t)q;
  return f < q ? f + 1 : f;
}

int
ooc_algo_workspace(const ooc_model *m, int layer, ooc_algo a,
                   uint64_t *bytes)
{
  const ooc_layer *l;
  const ooc_shape *x, *y;
  double N, C, K, g, e, kprod = 1, H, W, P, Q, R, S, pad_h, pad_w;
  int plain2d, i;

  if (layer < 0 || layer >= m->n_layers || (unsigned)a >= OOC_ALGO_COUNT)
    return OOC_EINVAL;
  l = &m->layers[layer];
  if (a == OOC_ALGO_DEFAULT) {
    *bytes = l->workspace_bytes;
    return OOC_OK;
  }
  if (!ooc_algo_has_choice(m, layer) || l->n_in < 1)
    return OOC_EINVAL;
  x = &m->layers[ooc_layer_input(m, l, 0)].out;
  y = &l->out;
  N = (double)m->batch;
  C = (double)x->d[0];
  K = (double)l->a.out;
  g = l->a.groups > 0 ? (double)l->a.groups : 1;
  e = (double)ooc_dtype_size(m->dtype);
  for (i = 0; i + 1 < x->ndim && i < 3; i++)
    kprod *= (double)l->a.kernel[i];
  switch (a) {
  case OOC_ALGO_IMPLICIT_GEMM:
    *bytes = 0;
    return OOC_OK;
  case OOC_ALGO_PRECOMP_GEMM:
    return to_bytes(4.0 * (C / g) * kprod, bytes);
  default:
    break;
  }
  /* The transform families: 2D forward convolutions, stride 1, no
   * dilation, one group. */
  plain2d = l->op == OOC_OPK_CONV2D && x->ndim == 3 && l->a.groups <= 1 &&
            l->a.stride[0] == 1 && l->a.stride[1] == 1 &&
            l->a.dilation[0] == 1 && l->a.dilation[1] == 1;
  if (!plain2d)
    return OOC_EINVAL;
  H = (double)x->d[1];
  W = (double)x->d[2];
  P = (double)y->d[1];
  Q = (double)y->d[2];
  R = (double)l->a.kernel[0];
  S = (double)l->a.kernel[1];
  pad_h = (double)l->a.pad[0];
  pad_w = (double)l->a.pad[1];
  switch (a) {
  case OOC_ALGO_FFT: {
    double hf = H + 2 * pad_h, wf = W + 2 * pad_w;
    if (hf > 256 || wf > 256)
      return OOC_EINVAL;
    return to_bytes(8.0 * hf * (wf / 2 + 1) * (N * C + K * C + N * K),
                    bytes);
  }
  case OOC_ALGO_FFT_TILING: {
    double t;
    if (R > 32 || S > 32)
      return OOC_EINVAL;
    t = ceil_div(P, 33 - R) * ceil_div(Q, 33 - S);
    return to_bytes(8.0 * 32 * 17 * (N * C * t + K * C + N * K * t), bytes);
  }
  case OOC_ALGO_WINOGRAD:
    if (R != 3 || S != 3)
      return OOC_EINVAL;
    return to_bytes(36.0 * K * C * e, bytes);
  case OOC_ALGO_WINOGRAD_NONFUSED: {
    double t = ceil_div(P, 4) * ceil_div(Q, 4);
    if (R != 3 || S != 3)
      return OOC_EINVAL;
    return to_bytes(36.0 * e * (N * C * t + N * K * t + K * C), bytes);
  }
  default:
    return OOC_EINVAL;
  }
}

uint64_t
ooc_algo_min_workspace(const ooc_model *m, int layer)
{
  uint64_t best, b;
  int a;

  if (layer < 0 || layer >= m->n_layers)
    return 0;
  best = m->layers[layer].workspace_bytes;
  for (a = 1; a < OOC_ALGO_COUNT; a++)
    if (ooc_algo_workspace(m, layer, (ooc_algo)a, &b) == OOC_OK && b < best)
      best = b;
  return best;
}
