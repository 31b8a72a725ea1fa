/* sim/cost.h — per-layer compute times of a model on a profile.
 *
 * Roofline (OOC-Paleo §3.6 builds on PALEO's compute model):
 *   t = max(FLOPs / (peak x eff[class]), bytes / (HBM x mem_eff)) + launch
 * where peak is the tensor-core rate for conv/gemm when the dtype uses
 * tensor cores (fp16/bf16, or fp32 as TF32 when the profile says so) and
 * the CUDA-core rate otherwise. A calibrated time in the profile for the
 * layer's signature (and kernel algorithm) replaces the roofline, and a
 * calibrated recompute time the forward's for a recompute.
 *
 * Computed once per (model, profile) in O(layers) and then shared by every
 * simulation of that pair: search planners call the simulator thousands of
 * times with the same ooc_costs.
 *
 * Ownership: ooc_costs_alloc() returns a heap object freed by
 * ooc_costs_free() (accepts NULL). It does not own the model or profile.
 */
#ifndef OOC_COST_H
#define OOC_COST_H

#include <stdint.h>
#include "ir/model.h"
#include "ir/hw.h"
#include "ir/program.h"
#include "alloc/alloc.h"

/* The largest time, in ns, a cost or the simulator's clock may reach
 * (about 146 years): far enough below INT64_MAX that the sum of two such
 * times cannot wrap. Anything longer is a profile value out of range,
 * reported as an error naming it, never a wrapped time. */
#define OOC_TIME_MAX_NS 4600000000000000000LL

typedef struct ooc_costs {
  int n_layers;
  int64_t *fwd_ns;        /* forward time per layer */
  int64_t *bwd_ns;        /* backward time per layer (0 for the input) */
  int64_t *recomp_ns;     /* recompute time per layer: the calibrated one
                             when the profile has it, else fwd_ns */
  uint8_t *calibrated;    /* 1 where the profile's table was used */
  int64_t update_ns;      /* optimizer step over all parameters */
  int64_t update_host_ns; /* its host time (host.optimizer_param_us per
                             layer with parameters) */
  int64_t host_op_ns;     /* host time to issue a layer's kernel */
  /* Parameter offload (a HOST instruction runs a layer's optimizer step
   * on the CPU, and the device UPDATE covers the other layers): */
  int64_t *host_opt_ns;   /* per layer: its step on the CPU, bytes moved
                             (2 x weights + gradients + 2 x optimizer
                             state) / host.optimizer_GBps + the fixed
                             host.optimizer_call_us (else the per-tensor
                             host.optimizer_param_us); 0 without
                             parameters, -1 when the profile gives no
                             host.optimizer_GBps */
  double *update_layer_ns; /* per layer: its share of update_ns without
                              the launch (same bytes / HBM rate) */
  int32_t n_param_layers;  /* layers with parameters (update's args) */
  double update_host_tensor_ns; /* update_host_ns per parameter tensor */
  int64_t host_iter_ns;   /* host time per iteration before the first
                             issue; both the model's framework block's
                             when it gives them, else the profile's */
  int64_t total_fwd_ns, total_bwd_ns;
  /* Kernel algorithms (ir/algo.h): per layer, phase (0 forward, 1
   * backward, 2 recompute) and algorithm, the time, or -1 where the
   * algorithm does not apply to the layer or the profile does not offer
   * it: algo_ns[(layer * 3 + phase) * OOC_ALGO_COUNT + algo]. NULL when
   * no layer has a choice (then only the default exists). Use
   * ooc_costs_algo_ns(). */
  int64_t *algo_ns;
} ooc_costs;

/* The device optimizer step of an UPDATE over n_args parameter tensors
 * (args, the program's): update_ns when it covers every layer with
 * parameters; else the layers' shares, rounded once, plus a launch each.
 * O(n_args) for a partial update. */
int64_t ooc_costs_update_ns(const ooc_costs *c, const ooc_hw *hw,
                            const ooc_program *p, const ooc_instr *in);

/* The fraction of the GPU a GEMM of m x n outputs with reduction k keeps
 * busy under wave quantisation (sim/cost.c): the best over split-K of
 * useful tile area / tile slots of all waves; 1 when hw->sms is 0. */
double ooc_cost_gemm_util(const ooc_hw *hw, double m, double n, double k,
                          int max_split);

int ooc_costs_alloc(const ooc_model *m, const ooc_hw *hw, ooc_costs **out,
                    ooc_err *err);
void ooc_costs_free(ooc_costs *c);

/* The time of layer `layer` in phase OOC_PH_FWD, OOC_PH_BWD or
 * OOC_PH_RECOMP (ir/program.h) under algorithm a: fwd_ns / bwd_ns /
 * recomp_ns for the default; else the profile's calibrated time for the
 * layer's signature, a and the phase where it has one (a recompute
 * without one: the entry's forward), or the kernel part of the default's
 * time of that phase scaled by the profile's factor for a (launches
 * unchanged); -1 when a is not available for that layer. O(1). */
static inline int64_t
ooc_costs_algo_ns(const ooc_costs *c, int layer, int phase, int a)
{
  int ph = phase == OOC_PH_BWD ? 1 : phase == OOC_PH_RECOMP ? 2 : 0;

  if (a == 0)
    return ph == 1 ? c->bwd_ns[layer]
                   : ph == 2 ? c->recomp_ns[layer] : c->fwd_ns[layer];
  if (c->algo_ns == NULL || (unsigned)a >= OOC_ALGO_COUNT)
    return -1;
  return c->algo_ns[((int64_t)layer * 3 + ph) * OOC_ALGO_COUNT + a];
}

/* Roofline time of one kernel: flops on class cls, bytes moved. */
int64_t ooc_cost_roofline_ns(const ooc_hw *hw, ooc_dtype dt, ooc_op_class cls,
                             double flops, double bytes);

/* Time of a host<->device copy of `bytes` alone on the link, as the
 * simulator charges it: latency + ceil(bytes / pinned bandwidth) ns.
 * dir: 0 = H2D, 1 = D2H. */
int64_t ooc_cost_copy_ns(const ooc_hw *hw, int dir, uint64_t bytes);

/* What one driver action of an allocator policy (alloc/alloc.h) costs on
 * profile hw, in ns:
 *   SEG_MALLOC     malloc_ns + bytes x malloc_ns_per_GiB / GiB, the second
 *                  term rounded to the nearest ns
 *   SEG_FREE       free_ns
 *   CHUNK_CREATE   va_create_ns (allocator.va_create_us, default 0)
 *   CHUNK_MAP      va_map_ns (cuMemMap + cuMemSetAccess)
 *   CHUNK_UNMAP    va_unmap_ns (allocator.va_unmap_us, default 0)
 *   CHUNK_RELEASE  va_release_ns (allocator.va_release_us, default 0)
 *   VA_RESERVE, VA_FREE  0 (no profile field: address reservations are
 *                  not on the paths the simulator times)
 * The simulator charges nothing for a policy marked .unpriced. O(1). */
int64_t ooc_cost_drv_ns(const ooc_hw *hw, const ooc_drv_action *a);

#endif
