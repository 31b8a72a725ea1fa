/* sim/cost.c — per-layer compute times, copy times and the prices of the
 * allocator policies' driver actions (cost.h).
 *
 * One idea: every compute time the simulator charges is computed here, once
 * per (model, profile), in integer nanoseconds. A kernel costs
 *
 *   t = round(max(FLOPs / (peak x eff[class]), bytes / (HBM x mem_eff)))
 *       + launches x launch_ns
 *
 * (OOC-Paleo §3.6, after PALEO's compute model), where peak is the
 * tensor-core rate for conv/gemm classes when the dtype runs on tensor cores
 * (fp16/bf16 when the profile has a tensor rate for them, fp32 as TF32 when
 * fp32_uses_tf32), with the profile's tensor_eff[class], and the CUDA-core
 * rate with eff[class] otherwise. Rounding is to the
 * nearest nanosecond (llround, halves away from zero), once per kernel, on
 * the roofline term only; launch and latency are already integers.
 *
 * - Forward: one kernel (fwd_flops, fwd_bytes_rw). The input layer and the
 *   no-copy views (flatten, reshape) cost 0; so does any layer with neither
 *   FLOPs nor bytes.
 * - Backward: data-gradient + weight-gradient FLOPs and bwd_bytes_rw in one
 *   roofline; conv and gemm layers with both gradients launch two kernels
 *   (cuDNN backward-data and backward-filter; two GEMMs), others one.
 * - A calibrated entry in the profile for the layer's signature (and the
 *   default kernel algorithm) replaces the forward and/or backward time it
 *   carries (measured times include launch). A recompute costs the entry's
 *   recompute time when it has one, else the forward's (recomp_ns).
 * - Wave quantisation (ooc_cost_gemm_util, when the profile gives
 *   compute.sms): a convolution or linear layer's forward, data-gradient
 *   and weight-gradient GEMMs (implicit GEMM shapes, layer_util) keep only
 *   a fraction of the GPU busy when their output tiles
 *   (compute.gemm_tile squared) do not fill whole waves over the
 *   multiprocessors, the weight gradient's split-K up to
 *   compute.max_split_k ways helping; the
 *   compute term of the roofline is divided by that fraction. Small
 *   batches thus run below the large-batch efficiency (docs/fidelity.md).
 * - Optimizer step (update_ns), memory-bound: it reads the weights, the
 *   gradients and the optimizer state and writes the weights and the state:
 *     bytes = 2 x weight_bytes + grad_bytes + 2 x opt_bytes
 *   i.e. 3P for plain SGD, 5P for SGD with momentum (one velocity), 7P for
 *   Adam (two moments), P = parameter bytes; time = bytes / (HBM x mem_eff)
 *   plus one launch per layer that has parameters (a per-tensor update, as
 *   in Caffe, Chainer and PyTorch's non-fused optimizers).
 * - The optimizer step's host time (update_host_ns): host.optimizer_param_us
 *   per parameter tensor, one per layer with parameters (the per-tensor
 *   loop of a non-fused optimizer); the simulator's host clock pays it.
 * - Kernel algorithms (ir/algo.h, SuperNeurons §3.5): a convolution run
 *   with another algorithm family costs the default's kernel time
 *   (launches aside) times the profile's factor for that family
 *   (`compute.conv_algorithms`), the launches unchanged; a family the
 *   profile does not list, or that does not apply to the layer, has no
 *   time (-1) and a program naming it is rejected by the simulator. A
 *   calibrated entry for (signature, family) gives that family's forward,
 *   backward and recompute times where it has them (a recompute without
 *   one: the entry's forward), and one marked not offered removes the
 *   family for such layers.
 * - Copy alone on the link: latency + bytes / pinned bandwidth of the
 *   direction, rounded up as the engine does (sim/engine.c, which also
 *   models two copies sharing the link).
 * - Allocator driver actions (ooc_cost_drv_ns): the profile's allocator
 *   fields, one per action kind; a segment malloc has a size-dependent
 *   part rounded to the nearest ns.
 *
 * Cost: O(layers) per ooc_costs_alloc(), plus one signature and
 * O(algorithms) lookups of O(log n) per layer when the profile has a
 * calibration table.
 * Ownership: see cost.h.
 */
#include "config.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "sim/cost.h"

/* The FLOP rate a kernel of class cls achieves for dtype dt: the peak
 * (tensor-core or CUDA-core) times the class's efficiency against it. */
static double
achieved_rate(const ooc_hw *hw, ooc_dtype dt, ooc_op_class cls)
{
  if (cls == OOC_CLASS_CONV || cls == OOC_CLASS_GEMM) {
    if (dt == OOC_FP32) {
      if (hw->fp32_uses_tf32 && hw->tensor_flops[OOC_FP32] > 0)
        return hw->tensor_flops[OOC_FP32] * hw->tensor_eff[cls];
    } else if (hw->tensor_flops[dt] > 0) {
      return hw->tensor_flops[dt] * hw->tensor_eff16[cls];
    }
  }
  return hw->peak_flops[dt] * hw->eff[cls];
}

/* Roofline seconds, without launch, of a kernel whose compute keeps a
 * fraction util of the GPU busy (1: all of it). */
static double
roofline_util_s(const ooc_hw *hw, ooc_dtype dt, ooc_op_class cls,
                double flops, double bytes, double util)
{
  double tc = 0, tm = 0;

  if (flops > 0)
    tc = flops / (achieved_rate(hw, dt, cls) * util);
  if (bytes > 0)
    tm = bytes / (hw->hbm_Bps * hw->mem_eff);
  return tc > tm ? tc : tm;
}

static double
roofline_s(const ooc_hw *hw, ooc_dtype dt, ooc_op_class cls, double flops,
           double bytes)
{
  return roofline_util_s(hw, dt, cls, flops, bytes, 1.0);
}

/* The smallest reduction a split-K slice is given. */
#define MIN_SPLIT_K 128.0

double
ooc_cost_gemm_util(const ooc_hw *hw, double m, double n, double k,
                   int max_split)
{
  double t = hw->gemm_tile > 0 ? hw->gemm_tile : 128;
  double tiles, best = 0, sms = hw->sms;
  int split;

  if (hw->sms <= 0 || !(m >= 1) || !(n >= 1) || !(k >= 1))
    return 1.0;
  tiles = ceil(m / t) * ceil(n / t);
  for (split = 1; split <= max_split; split *= 2) {
    double ctas, waves, u;
    if (split > 1 && k / split < MIN_SPLIT_K)
      break;
    ctas = tiles * split;
    waves = ceil(ctas / sms);
    /* Useful tile area over the tile slots of every wave. */
    u = m * n * split / (t * t) / (waves * sms);
    if (u > best)
      best = u;
  }
  return best > 1 ? 1.0 : best;
}

/* The GEMM shape of each kernel of a convolution or a linear layer
 * (implicit GEMM): forward M = batch x output positions, N = output
 * channels, K from the FLOPs (2 M N K); backward-data the same over the
 * input; backward-weight M = output channels, N = weights per output
 * channel, K = batch x output positions. Only the weight gradient, whose
 * reduction runs over the whole batch, is split along K (as cuDNN's
 * backward-filter kernels do); forward and backward-data kernels are not
 * (fitting the H200 measurements of docs/fidelity.md, split-K there made
 * small batches too fast). util[0] forward, [1] data gradient, [2] weight
 * gradient; 1 where the layer is none of these. */
static void
layer_util(const ooc_model *m, const ooc_layer *l, const ooc_hw *hw,
           double util[3])
{
  double b = (double)m->batch, cout, pos, cin, inpos, wper;
  const ooc_layer *in;

  util[0] = util[1] = util[2] = 1.0;
  if (hw->sms <= 0 || l->n_in < 1 || l->a.out <= 0 ||
      (l->op != OOC_OPK_CONV2D && l->op != OOC_OPK_CONV3D &&
       l->op != OOC_OPK_DECONV2D && l->op != OOC_OPK_LINEAR))
    return;
  in = &m->layers[m->inputs[l->in_first]];
  cout = (double)l->a.out;
  pos = (double)ooc_shape_elems(&l->out) / cout;
  if (l->op == OOC_OPK_LINEAR) {
    cin = (double)in->out.d[in->out.ndim - 1];
  } else {
    cin = (double)in->out.d[0];
  }
  inpos = (double)ooc_shape_elems(&in->out) / cin;
  if (l->fwd_flops > 0)
    util[0] = ooc_cost_gemm_util(hw, b * pos, cout,
                                 l->fwd_flops / (2 * b * pos * cout), 1);
  if (l->bwd_data_flops > 0)
    util[1] = ooc_cost_gemm_util(hw, b * inpos, cin,
                                 l->bwd_data_flops / (2 * b * inpos * cin),
                                 1);
  wper = l->fwd_flops / (2 * b * pos * cout);   /* weights per output */
  if (l->bwd_weight_flops > 0)
    util[2] = ooc_cost_gemm_util(hw, cout, wper, b * pos, hw->max_split_k);
}

int64_t
ooc_cost_roofline_ns(const ooc_hw *hw, ooc_dtype dt, ooc_op_class cls,
                     double flops, double bytes)
{
  if (!(flops > 0) && !(bytes > 0))
    return 0;
  return (int64_t)llround(roofline_s(hw, dt, cls, flops, bytes) * 1e9) +
         hw->launch_ns;
}

int64_t
ooc_cost_copy_ns(const ooc_hw *hw, int dir, uint64_t bytes)
{
  double x = (double)bytes * 1e9 / (dir == 0 ? hw->h2d_Bps : hw->d2h_Bps);
  double rx = nearbyint(x);

  /* Up to the next nanosecond, except that float noise within 0.001 ns of
   * an integer is not rounded up (the engine's rule, sim/engine.c). */
  return hw->copy_latency_ns + (int64_t)(fabs(x - rx) < 1e-3 ? rx : ceil(x));
}

/* Times above this (about 146 years) are treated as overflow. */
#define MAX_NS ((double)OOC_TIME_MAX_NS)

/* *out = a + b when it stays within OOC_TIME_MAX_NS (a, b >= 0); else 0
 * is returned and *out untouched. */
static int
add_ns(int64_t a, int64_t b, int64_t *out)
{
  if (a < 0 || b < 0 || a > OOC_TIME_MAX_NS - b)
    return 0;
  *out = a + b;
  return 1;
}

static int
no_kernel(const ooc_layer *l)
{
  return l->op == OOC_OPK_INPUT || l->op == OOC_OPK_FLATTEN ||
         l->op == OOC_OPK_RESHAPE;
}

/* Forward and backward roofline times of layer l, in ns. */
static int
layer_times(const ooc_model *m, const ooc_layer *l, const ooc_hw *hw,
            int64_t *fwd, int64_t *bwd, ooc_err *err)
{
  double bf = l->bwd_data_flops + l->bwd_weight_flops;
  double tf, tb, util[3];
  int launches;

  *fwd = *bwd = 0;
  if (no_kernel(l))
    return OOC_OK;
  if ((unsigned)l->cls >= OOC_CLASS_COUNT)
    return ooc_err_set(err, OOC_EINVAL, "layer %s: bad op class %d", l->name,
                       (int)l->cls);
  if (!(l->fwd_flops >= 0) || !(bf >= 0) || !(l->fwd_bytes_rw >= 0) ||
      !(l->bwd_bytes_rw >= 0))
    return ooc_err_set(err, OOC_EINVAL,
                       "layer %s: negative or undefined FLOPs or bytes",
                       l->name);
  layer_util(m, l, hw, util);
  tf = roofline_util_s(hw, m->dtype, l->cls, l->fwd_flops, l->fwd_bytes_rw,
                       util[0]) * 1e9;
  /* The backward's two GEMMs at their own utilisation: the effective
   * FLOPs are each one's over its utilisation. */
  tb = roofline_s(hw, m->dtype, l->cls,
                  l->bwd_data_flops / util[1] + l->bwd_weight_flops / util[2],
                  l->bwd_bytes_rw) * 1e9;
  if (!(tf < MAX_NS) || !(tb < MAX_NS))
    return ooc_err_set(err, OOC_ERANGE,
                       "layer %s: compute time overflows (FLOPs or bytes too "
                       "large, or profile '%s' rates and efficiencies too "
                       "small)", l->name, ooc_hw_origin(hw));
  launches = 0;
  if (bf > 0 || l->bwd_bytes_rw > 0)
    launches = 1;
  if ((l->cls == OOC_CLASS_CONV || l->cls == OOC_CLASS_GEMM) &&
      l->bwd_data_flops > 0 && l->bwd_weight_flops > 0)
    launches = 2;
  if (((l->fwd_flops > 0 || l->fwd_bytes_rw > 0) &&
       !add_ns((int64_t)llround(tf), hw->launch_ns, fwd)) ||
      (launches > 0 &&
       (hw->launch_ns > OOC_TIME_MAX_NS / 2 ||
        !add_ns((int64_t)llround(tb), launches * hw->launch_ns, bwd))))
    return ooc_err_set(err, OOC_ERANGE,
                       "layer %s: compute time overflows: profile '%s' "
                       "compute.launch_us is out of range", l->name,
                       ooc_hw_origin(hw));
  return OOC_OK;
}

/* The layer's signature for calibration lookups into buf (n bytes), or a
 * heap copy in *heap when it does not fit; returns the string or NULL
 * (out of memory). */
static const char *
signature(const ooc_model *m, int i, char *buf, size_t n, char **heap)
{
  int len = ooc_layer_signature(m, i, buf, n);

  *heap = NULL;
  if ((size_t)len < n)
    return buf;
  *heap = malloc((size_t)len + 1);
  if (*heap != NULL)
    ooc_layer_signature(m, i, *heap, (size_t)len + 1);
  return *heap;
}

/* Replace the roofline times of layer i by the profile's calibrated entry
 * for its signature and the default algorithm, if any; the recompute time
 * is the entry's, else the forward's. */
static void
apply_calibration(const ooc_hw *hw, const char *sig, int i, ooc_costs *c)
{
  const ooc_calib_entry *e = sig ? ooc_hw_calib_find(hw, sig) : NULL;

  c->recomp_ns[i] = -1;
  if (e != NULL) {
    if (e->fwd_ns >= 0)
      c->fwd_ns[i] = e->fwd_ns;
    if (e->bwd_ns >= 0)
      c->bwd_ns[i] = e->bwd_ns;
    c->recomp_ns[i] = e->recomp_ns;
    c->calibrated[i] = 1;
  }
  if (c->recomp_ns[i] < 0)
    c->recomp_ns[i] = c->fwd_ns[i];
}

/* The algorithm rows of layer i (cost.h): each family the profile offers
 * and the layer takes costs, per phase, the calibrated time of (signature,
 * family) where the profile has one (a recompute without one: the
 * entry's forward), else the default's time of that phase with its kernel
 * part scaled by the profile's factor and its launches kept. An entry
 * saying the family is not offered removes it. O(algorithms x log n). */
static int
algo_rows(const ooc_model *m, const ooc_hw *hw, const char *sig, int i,
          ooc_costs *c, ooc_err *err)
{
  const ooc_layer *l = &m->layers[i];
  int64_t *row[3];
  int a, ph;

  for (ph = 0; ph < 3; ph++)
    row[ph] = c->algo_ns + ((size_t)i * 3 + (size_t)ph) * OOC_ALGO_COUNT;
  row[0][0] = c->fwd_ns[i];
  row[1][0] = c->bwd_ns[i];
  row[2][0] = c->recomp_ns[i];
  for (a = 1; a < OOC_ALGO_COUNT; a++) {
    const ooc_calib_entry *e =
        sig ? ooc_hw_calib_find_algo(hw, sig, a) : NULL;
    uint64_t ws;
    row[0][a] = row[1][a] = row[2][a] = -1;
    if (!(hw->algo_factor[a] > 0) || (e != NULL && !e->offered) ||
        ooc_algo_workspace(m, i, (ooc_algo)a, &ws) != OOC_OK)
      continue;
    if (e != NULL)
      c->calibrated[i] = 1;
    for (ph = 0; ph < 3; ph++) {
      int64_t base = row[ph][0];
      int64_t launch = base > 0 ? hw->launch_ns : 0;
      int64_t measured = -1;
      double t;
      if (e != NULL)
        measured = ph == 0 ? e->fwd_ns : ph == 1 ? e->bwd_ns
                 : e->recomp_ns >= 0 ? e->recomp_ns : e->fwd_ns;
      if (measured >= 0) {
        row[ph][a] = measured;
        continue;
      }
      if (ph == 1 && (l->cls == OOC_CLASS_CONV || l->cls == OOC_CLASS_GEMM) &&
          l->bwd_data_flops > 0 && l->bwd_weight_flops > 0)
        launch *= 2;
      if (launch > base)
        launch = base;
      t = (double)(base - launch) * hw->algo_factor[a];
      if (!(t < MAX_NS))
        return ooc_err_set(err, OOC_ERANGE, "layer %s: compute time of "
                           "algorithm %s overflows: profile '%s' "
                           "compute.conv_algorithms.%s is out of range",
                           l->name, ooc_algo_name((ooc_algo)a),
                           ooc_hw_origin(hw),
                           ooc_algo_name((ooc_algo)a));
      row[ph][a] = (int64_t)llround(t) + launch;
    }
  }
  return OOC_OK;
}

int
ooc_costs_alloc(const ooc_model *m, const ooc_hw *hw, ooc_costs **out,
                ooc_err *err)
{
  ooc_costs *c = NULL;
  double ubytes, ut;
  int64_t param_layers = 0;
  int i, n, rc, choice = 0;

  if (out == NULL || m == NULL || hw == NULL)
    return ooc_err_set(err, OOC_EINVAL, "ooc_costs_alloc: NULL argument");
  *out = NULL;
  if ((unsigned)m->dtype > OOC_BF16)
    return ooc_err_set(err, OOC_EINVAL, "model %s: bad dtype %d", m->name,
                       (int)m->dtype);
  n = m->n_layers;
  if (n < 0 || (n > 0 && m->layers == NULL))
    return ooc_err_set(err, OOC_EINVAL, "model %s: no layers", m->name);
  c = calloc(1, sizeof *c);
  if (c == NULL)
    goto nomem;
  c->n_layers = n;
  c->fwd_ns = calloc((size_t)n + 1, sizeof *c->fwd_ns);
  c->bwd_ns = calloc((size_t)n + 1, sizeof *c->bwd_ns);
  c->recomp_ns = calloc((size_t)n + 1, sizeof *c->recomp_ns);
  c->calibrated = calloc((size_t)n + 1, sizeof *c->calibrated);
  c->host_opt_ns = calloc((size_t)n + 1, sizeof *c->host_opt_ns);
  c->update_layer_ns = calloc((size_t)n + 1, sizeof *c->update_layer_ns);
  if (c->fwd_ns == NULL || c->bwd_ns == NULL || c->recomp_ns == NULL ||
      c->calibrated == NULL || c->host_opt_ns == NULL ||
      c->update_layer_ns == NULL)
    goto nomem;
  for (i = 0; i < n && !choice; i++)
    choice = ooc_algo_has_choice(m, i);
  if (choice &&
      (c->algo_ns = malloc((size_t)n * 3 * OOC_ALGO_COUNT *
                           sizeof *c->algo_ns)) == NULL)
    goto nomem;
  for (i = 0; i < n; i++) {
    const ooc_layer *l = &m->layers[i];
    char buf[512], *heap = NULL;
    const char *sig = NULL;
    if ((rc = layer_times(m, l, hw, &c->fwd_ns[i], &c->bwd_ns[i], err)) < 0)
      goto fail;
    if (hw->n_calib > 0 && l->op != OOC_OPK_INPUT &&
        (sig = signature(m, i, buf, sizeof buf, &heap)) == NULL)
      goto nomem;
    apply_calibration(hw, sig, i, c);
    rc = c->algo_ns != NULL ? algo_rows(m, hw, sig, i, c, err) : OOC_OK;
    free(heap);
    if (rc < 0)
      goto fail;
    if (l->params > 0)
      param_layers++;
    if (!add_ns(c->total_fwd_ns, c->fwd_ns[i], &c->total_fwd_ns) ||
        !add_ns(c->total_bwd_ns, c->bwd_ns[i], &c->total_bwd_ns)) {
      /* Calibrated layers take their times from the table (each in
       * range on its own): the sum of those is what overflows then. */
      int cal = 0;
      for (int k = 0; k <= i && !cal; k++)
        cal = c->calibrated[k];
      rc = ooc_err_set(err, OOC_ERANGE, "model %s: one iteration's compute "
                       "time overflows: profile '%s' %s out of range",
                       m->name, ooc_hw_origin(hw),
                       cal ? "calibration.layers times are (their sum is)"
                           : "compute.launch_us or its rates are");
      goto fail;
    }
  }
  ubytes = 2.0 * (double)m->weight_bytes + (double)m->grad_bytes +
           2.0 * (double)m->opt_bytes;
  if (ubytes > 0) {
    ut = ubytes / (hw->hbm_Bps * hw->mem_eff) * 1e9;
    if (hw->launch_ns > 0 && param_layers > OOC_TIME_MAX_NS / hw->launch_ns)
      ut = MAX_NS;
    if (!(ut < MAX_NS) || !add_ns((int64_t)llround(ut),
                                  param_layers * hw->launch_ns,
                                  &c->update_ns)) {
      rc = ooc_err_set(err, OOC_ERANGE, "model %s: optimizer step time "
                       "overflows: profile '%s' compute.hbm_GBps, mem_eff or "
                       "launch_us is out of range", m->name,
                       ooc_hw_origin(hw));
      goto fail;
    }
  }
  if ((hw->host_opt_param_ns > 0 &&
       param_layers > OOC_TIME_MAX_NS / hw->host_opt_param_ns) ||
      (double)param_layers * m->fw_host_optimizer_param_us * 1e3 > 1e18) {
    rc = ooc_err_set(err, OOC_ERANGE, "model %s: optimizer step host time "
                     "overflows: profile '%s' host.optimizer_param_us is out "
                     "of range", m->name, ooc_hw_origin(hw));
    goto fail;
  }
  {
    /* The model's framework block over the profile's host costs. */
    double opt = m->fw_host_optimizer_param_us >= 0
                     ? m->fw_host_optimizer_param_us * 1e3
                     : (double)hw->host_opt_param_ns;
    c->update_host_ns = (int64_t)llround((double)param_layers * opt);
    c->update_host_tensor_ns = opt;
    c->n_param_layers = (int32_t)param_layers;
    /* Parameter offload: each layer's step on the CPU and its share of
     * the device step, the same bytes at the host's and the HBM's rate. */
    for (i = 0; i < n; i++) {
      const ooc_layer *l = &m->layers[i];
      double b = 2.0 * (double)l->param_bytes + (double)l->grad_bytes +
                 2.0 * (double)l->opt_bytes, t;
      if (l->params == 0)
        continue;
      c->update_layer_ns[i] = b / (hw->hbm_Bps * hw->mem_eff) * 1e9;
      if (hw->host_opt_Bps <= 0) {
        c->host_opt_ns[i] = -1;
        continue;
      }
      t = b / hw->host_opt_Bps * 1e9 +
          (hw->host_opt_call_ns > 0 ? (double)hw->host_opt_call_ns : opt);
      if (!(t < MAX_NS)) {
        rc = ooc_err_set(err, OOC_ERANGE, "model %s: the CPU optimizer step "
                         "of layer %d overflows: profile '%s' "
                         "host.optimizer_GBps is out of range", m->name, i,
                         ooc_hw_origin(hw));
        goto fail;
      }
      c->host_opt_ns[i] = (int64_t)llround(t);
    }
    c->host_op_ns = m->fw_host_op_us >= 0
                        ? (int64_t)llround(m->fw_host_op_us * 1e3)
                        : hw->host_op_ns;
    c->host_iter_ns = m->fw_host_iteration_us >= 0
                          ? (int64_t)llround(m->fw_host_iteration_us * 1e3)
                          : hw->host_iter_ns;
  }
  *out = c;
  return OOC_OK;
nomem:
  rc = ooc_err_set(err, OOC_ENOMEM, "out of memory computing layer costs");
fail:
  ooc_costs_free(c);
  return rc;
}

void
ooc_costs_free(ooc_costs *c)
{
  if (c == NULL)
    return;
  free(c->fwd_ns);
  free(c->bwd_ns);
  free(c->recomp_ns);
  free(c->calibrated);
  free(c->host_opt_ns);
  free(c->update_layer_ns);
  free(c->algo_ns);
  free(c);
}

int64_t
ooc_costs_update_ns(const ooc_costs *c, const ooc_hw *hw,
                    const ooc_program *p, const ooc_instr *in)
{
  double t = 0;
  int32_t k;

  if (in->n_args >= c->n_param_layers)
    return c->update_ns;
  if (in->n_args == 0)
    return 0;
  for (k = 0; k < in->n_args; k++) {
    int32_t l = p->tensors[OOC_ARG_TENSOR(p->args[in->arg_first + k])].layer;
    if (l >= 0 && l < c->n_layers)
      t += c->update_layer_ns[l];
  }
  /* Each term is below update_ns, which fitted. */
  return (int64_t)llround(t) + (int64_t)in->n_args * hw->launch_ns;
}

int64_t
ooc_cost_drv_ns(const ooc_hw *hw, const ooc_drv_action *a)
{
  switch ((ooc_drv_kind)a->kind) {
  case OOC_DRV_SEG_MALLOC: {
    double x = (double)a->bytes * hw->malloc_ns_per_GiB / 1073741824.0 + 0.5;
    int64_t t;
    if (!(x < MAX_NS) || !add_ns(hw->malloc_ns, (int64_t)x, &t))
      return OOC_TIME_MAX_NS;   /* the simulator reports the overflow */
    return t;
  }
  case OOC_DRV_SEG_FREE:
    return hw->free_ns;
  case OOC_DRV_CHUNK_CREATE:
    return hw->va_create_ns;
  case OOC_DRV_CHUNK_MAP:
    return hw->va_map_ns > OOC_TIME_MAX_NS - hw->va_access_ns
               ? OOC_TIME_MAX_NS : hw->va_map_ns + hw->va_access_ns;
  case OOC_DRV_CHUNK_UNMAP:
    return hw->va_unmap_ns;
  case OOC_DRV_CHUNK_RELEASE:
    return hw->va_release_ns;
  default:
    return 0;
  }
}
