/* executor/data.c — the data a replay computes on: seeded parameters and
 * input batch, so that every run of every plan of a model starts from the
 * same bits (docs/executor.md, "Data").
 *
 * One idea: every element is drawn from the counter-based generator of
 * backend.h, keyed by (seed, layer, index), so the contents of a tensor do
 * not depend on where it is placed, in what order tensors are filled or on
 * which backend. Weights are uniform in [-1/sqrt(fan-in), 1/sqrt(fan-in))
 * (PyTorch's default for convolutions and linear layers), batch and layer
 * norms start at scale 1, shift 0, embeddings uniform in [-0.1, 0.1);
 * gradients and optimizer state start at 0. The input batch is uniform in
 * [-1, 1), or token ids when an embedding reads it.
 *
 * Parameter layout inside a layer's param tensor (shared with the
 * kernels): weights, then the bias (out values) when the layer has one;
 * a norm's scale then shift; an embedding's (vocab + positions) x out
 * table. The gradients follow at param_bytes in the same layout, the
 * optimizer state at param_bytes + grad_bytes; a layer whose optimizer
 * runs on the host (docs/offload.md) has a weights-only param tensor,
 * its gradients in a wgrad tensor and its state in an optstate one, in
 * the same layouts, all starting at 0 but the weights.
 *
 * Cost: O(elements), once per tensor in the prologue.
 */
#include "config.h"

#include <math.h>
#include <stdint.h>
#include <string.h>

#include "executor/core.h"

void
ooc_exec_ce_shape(const ooc_model *m, int layer, int64_t *rows,
                  int64_t *classes)
{
  const ooc_layer *ly = &m->layers[layer];
  const ooc_shape *x = &m->layers[ooc_layer_input(m, ly, 0)].out;

  *classes = x->d[x->ndim - 1];
  *rows = ooc_shape_elems(x) / *classes;
}

/* The smallest vocabulary of an embedding reading the input, 0: none. */
static int64_t
input_vocab(const ooc_model *m)
{
  int64_t v = 0;
  int l, j;

  for (l = 1; l < m->n_layers; l++) {
    const ooc_layer *ly = &m->layers[l];
    if (ly->op != OOC_OPK_EMBEDDING)
      continue;
    for (j = 0; j < ly->n_in; j++)
      if (ooc_model_storage(m, ooc_layer_input(m, ly, j)) == 0 &&
          (v == 0 || ly->a.vocab < v))
        v = ly->a.vocab;
  }
  return v;
}

static void
fill_params(const ooc_model *m, int l, uint64_t seed, float *w)
{
  const ooc_layer *ly = &m->layers[l];
  uint64_t n = ly->params, i, nb = 0, stream = OOC_RNG_WEIGHTS |
                                               ((uint64_t)l << 8);
  float bound;

  switch (ly->op) {
  case OOC_OPK_BATCHNORM:
  case OOC_OPK_LAYERNORM:
    for (i = 0; i < n; i++)
      w[i] = i < n / 2 ? 1.0f : 0.0f;
    return;
  case OOC_OPK_RMSNORM:
    for (i = 0; i < n; i++)
      w[i] = 1.0f;
    return;
  case OOC_OPK_TOKENS:
  case OOC_OPK_EMBEDDING:
    for (i = 0; i < n; i++)
      w[i] = 0.1f * ooc_exec_uniform(seed, stream, i);
    return;
  default:
    break;
  }
  if (ly->a.bias && ly->a.out > 0 && (uint64_t)ly->a.out <= n)
    nb = (uint64_t)ly->a.out;
  bound = n > nb && ly->a.out > 0
              ? 1.0f / sqrtf((float)((n - nb) / (uint64_t)ly->a.out))
              : 1.0f;
  if (ly->op == OOC_OPK_LINEAR) {
    const ooc_shape *x = &m->layers[ooc_layer_input(m, ly, 0)].out;
    bound = 1.0f / sqrtf((float)x->d[x->ndim - 1]);
  }
  for (i = 0; i < n; i++)
    w[i] = bound * ooc_exec_uniform(seed, stream, i);
}

void
ooc_exec_data_fill(const ooc_model *m, const ooc_program *p, int32_t t,
                   uint64_t seed, void *buf)
{
  const ooc_ptensor *pt = &p->tensors[t];
  uint64_t i, n;

  memset(buf, 0, pt->bytes);
  if (pt->kind == OOC_T_PARAM) {
    const ooc_layer *ly = &m->layers[pt->layer];
    if (ly->param_bytes <= pt->bytes)
      fill_params(m, pt->layer, seed, buf);
  } else if (pt->kind == OOC_T_INPUT) {
    int64_t v = input_vocab(m);
    n = m->layers[0].out_bytes / sizeof(float);
    if (n * sizeof(float) > pt->bytes)
      n = pt->bytes / sizeof(float);
    for (i = 0; i < n; i++) {
      if (v > 0)
        ((int32_t *)buf)[i] =
            (int32_t)(ooc_exec_mix(seed, OOC_RNG_INPUT, i) % (uint64_t)v);
      else
        ((float *)buf)[i] = ooc_exec_uniform(seed, OOC_RNG_INPUT, i);
    }
  }
}

/* --- the optimizer --------------------------------------------------------- */

#define LR_SGD 0.01f
#define MOMENTUM 0.9f
#define LR_ADAM 1e-3f
#define BETA1 0.9f
#define BETA2 0.999f
#define ADAM_EPS 1e-8f

/* SGD's step (o NULL: d = g) and momentum's (o = 0.9 o + g, rounded
 * after the product and after the sum, then d = o), in one pass: the
 * weight step w - lr * d rounded once, as a fused multiply-add. That is
 * what the cuda backend's device update computes (cuBLAS: SSCAL o * 0.9,
 * SAXPY + g, SAXPY w + (-lr) o, fused), so a layer stepped on the host
 * (docs/offload.md) gets the same bits as one stepped on the GPU. x86-64
 * without -mfma has no FMA instruction in the baseline ISA, so the loop is
 * compiled twice and the FMA version picked when the CPU has it; elsewhere
 * fmaf (correctly rounded, the same bits). The executor is built with
 * -ffp-contract=off, so 0.9 o + g stays two roundings. */
#define SGD_STEP(FMA)                                                       \
  do {                                                                      \
    int64_t i_;                                                             \
    if (o != NULL) {                                                        \
      _Pragma("omp parallel for schedule(static)")                          \
      for (i_ = 0; i_ < n; i_++) {                                          \
        o[i_] = MOMENTUM * o[i_] + g[i_];                                   \
        w[i_] = FMA(-LR_SGD, o[i_], w[i_]);                                 \
      }                                                                     \
    } else {                                                                \
      _Pragma("omp parallel for schedule(static)")                          \
      for (i_ = 0; i_ < n; i_++)                                            \
        w[i_] = FMA(-LR_SGD, g[i_], w[i_]);                                 \
    }                                                                       \
  } while (0)

#if defined(__x86_64__) && defined(__GNUC__)
__attribute__((target("fma"))) static void
sgd_step_hw(float *w, const float *g, float *o, int64_t n)
{
  SGD_STEP(__builtin_fmaf);
}
#endif

static void
sgd_step(float *w, const float *g, float *o, int64_t n)
{
#if defined(__x86_64__) && defined(__GNUC__)
  if (__builtin_cpu_supports("fma")) {
    sgd_step_hw(w, g, o, n);
    return;
  }
#endif
  SGD_STEP(fmaf);
}

void
ooc_exec_optimizer_step(ooc_optimizer opt, float *w, const float *g,
                        float *o, int64_t n, int iteration)
{
  float c1 = 1.0f - powf(BETA1, (float)(iteration + 1));
  float c2 = 1.0f - powf(BETA2, (float)(iteration + 1));
  int64_t i;

  switch (opt) {
  case OOC_OPT_SGD:
    sgd_step(w, g, NULL, n);
    break;
  case OOC_OPT_ADAM:
#pragma omp parallel for schedule(static)
    for (i = 0; i < n; i++) {
      o[i] = BETA1 * o[i] + (1 - BETA1) * g[i];
      o[n + i] = BETA2 * o[n + i] + (1 - BETA2) * g[i] * g[i];
      w[i] -= LR_ADAM * (o[i] / c1) / (sqrtf(o[n + i] / c2) + ADAM_EPS);
    }
    break;
  default:
    sgd_step(w, g, o, n);
    break;
  }
}
