/* executor/calibrate.h — measure this machine through an executor backend
 * (`oocsim calibrate`, docs/calibration.md): what the simulator needs to
 * predict what the executor will measure.
 *
 * Everything is measured the way a replay runs it:
 *   - kernels: the model's in-core program is replayed `repeat` times (one
 *     warm-up and one timed iteration each); per layer the median forward
 *     and backward kernel time; the optimizer step; and the per-kernel
 *     overhead of the replay (the compute stream's time outside kernels,
 *     ALLOC/FREE and issue included, per kernel: what the simulator's launch
 *     stands for);
 *   - convolution algorithms (cfg->algorithms): for each family a >= 1 the
 *     base profile offers (`compute.conv_algorithms`), the same program
 *     with every convolution the family applies to (ir/algo.h) naming a,
 *     replayed `repeat` times; a kernel the backend has no such algorithm
 *     for is recorded as refused (the executor's `refused` option) and
 *     not run; the rest are timed as above (workspaces beyond the
 *     program's come from the backend's side buffer);
 *   - interference: the same replay with one, then two copy threads
 *     copying without pause (through the backend, paced when link_GBps is
 *     set): per op class, x = sum k y_k / sum k^2 with y_k the class's
 *     kernel time with k copies over its time alone, minus 1;
 *   - copies: through the backend's copy(), H2D and D2H alone and both at
 *     once on two threads, sizes 64 KiB .. copy_max (x4 steps), median of
 *     `repeat` (x4 for copies under 1 MiB), t = latency + bytes / bandwidth
 *     fitted by weighted least squares (GSL gsl_fit_wlinear, weights 1 /
 *     t^2: every size counts by its relative error);
 *   - driver actions: segment malloc (against size, fitted the same way)
 *     and free of a touched segment, physical chunk create / map / unmap /
 *     release inside a reserved range, a pinned host buffer;
 *   - the host: the replay's own cost per iteration (outside its first and
 *     last instruction) and a stream thread waking another (half a
 *     condition-variable ping-pong); and, where the backend has a host_api
 *     hook (CUDA), its API's host costs: an asynchronous copy's issue, an
 *     event synchronisation, and cudaFree while work is queued (whether
 *     it synchronises).
 *
 * Ownership: the config borrows everything; the result owns its arrays
 * (ooc_calib_result_fini). Cost: about 2 x repeat + 4 training iterations
 * (+ repeat + 1 per algorithm family measured),
 * plus the copies (2 x copy_max host and device bytes).
 */
#ifndef OOC_CALIBRATE_H
#define OOC_CALIBRATE_H

#include <stdint.h>
#include "base/error.h"
#include "base/progress.h"
#include "ir/model.h"
#include "ir/hw.h"
#include "ir/program.h"
#include "ir/algo.h"
#include "alloc/alloc.h"
#include "executor/executor.h"

typedef struct ooc_calib_config {
  const ooc_exec_backend *backend;
  const ooc_model *model;
  const ooc_program *program;   /* the model's in-core program */
  const ooc_hw *hw;             /* the base profile (va chunk) */
  const ooc_allocator_type *allocator;  /* for the replays */
  uint64_t budget;              /* for the replays */
  int threads;                  /* kernel threads (0: the backend's) */
  int repeat;                   /* >= 1 */
  double link_GBps;             /* copy pacing (0: none) */
  uint64_t copy_max;            /* largest copy (0: 64 MiB) */
  uint64_t seed;
  int algorithms;               /* 1: also replay each convolution
                                   algorithm family hw offers (below) */
  ooc_progress *progress;       /* may be NULL */
} ooc_calib_config;

/* t = intercept + slope x, weighted least squares with weights 1 / t^2. */
typedef struct ooc_calib_fit {
  double intercept, slope;
  double max_rel_residual;      /* largest |fit - t| / t over the points */
  int n;
} ooc_calib_fit;

typedef struct ooc_calib_result {
  char note[256];               /* the backend's line */
  int32_t n_layers;
  int64_t *fwd_ns, *bwd_ns;     /* per layer, medians; -1: no kernel */
  /* Per convolution algorithm family a >= 1 that was replayed
   * (algo_fwd_ns[a] != NULL): per layer, the medians run with it; -1: the
   * family does not apply to the layer (ir/algo.h) or it has no such
   * kernel; OOC_CALIB_REFUSED: the backend has no kernel of the family
   * for the layer. */
  int64_t *algo_fwd_ns[OOC_ALGO_COUNT], *algo_bwd_ns[OOC_ALGO_COUNT];
  /* A family whose replay failed past its kernels' preparation: why (its
   * layers are then all OOC_CALIB_REFUSED); "" otherwise. */
  char algo_failed[OOC_ALGO_COUNT][192];
  int64_t update_ns;            /* the optimizer step */
  int32_t update_launches;      /* layers with parameters */
  int64_t overhead_ns;          /* per kernel, outside kernels */
  int64_t iteration_ns;         /* the in-core replay, median */
  int64_t iter_overhead_ns;     /* per iteration, outside the first and
                                   last instruction (host.iteration_us) */
  int64_t wake_ns;              /* one stream thread waking another */
  ooc_optimizer host_opt;       /* the optimizer host_opt_Bps timed: the
                                   model's */
  double host_opt_Bps;          /* the host's optimizer step (fp32) over
                                   4 Mi parameters: bytes moved per
                                   second, as host.optimizer_GBps counts
                                   them (docs/offload.md) */
  int64_t host_opt_call_ns;     /* one such step over 256 parameters
                                   (its fixed cost), median of 201 */
  int has_api;                  /* the backend measured its API (api) */
  ooc_exec_host_api api;
  /* Interference per op class (ir/model.h), and the kernel time of the
   * class alone and with 1 and 2 copies running (ns, per iteration). */
  double interference[OOC_CLASS_COUNT];
  int64_t class_ns[OOC_CLASS_COUNT][3];
  /* Copies: seconds per size, medians. */
  int n_sizes;
  double sizes[16], t_h2d[16], t_d2h[16], t_dup_h2d[16], t_dup_d2h[16];
  ooc_calib_fit h2d, d2h, dup_h2d, dup_d2h;   /* x bytes, t seconds */
  int pinned;                   /* host buffers were pinned */
  /* Driver actions, ns (medians); malloc fitted against bytes. */
  ooc_calib_fit seg_malloc;     /* x bytes, t seconds */
  int64_t free_ns, chunk_create_ns, chunk_map_ns, chunk_unmap_ns,
      chunk_release_ns, host_alloc_ns;
  uint64_t chunk_bytes;
} ooc_calib_result;

#define OOC_CALIB_REFUSED (-2)

void ooc_calib_result_init(ooc_calib_result *r);
void ooc_calib_result_fini(ooc_calib_result *r);

/* Measure (above). OOC_OK; OOC_EUNSUP (no device), OOC_EINVAL (a program
 * the backend cannot run), OOC_ENOMEM, with err naming it. */
int ooc_calib_run(const ooc_calib_config *cfg, ooc_calib_result *r,
                  ooc_err *err);

/* Fit t = latency + bytes / bandwidth to n >= 2 points (x bytes, t
 * seconds) by weighted least squares, weights 1 / t^2 (gsl_fit_wlinear).
 * OOC_EINVAL when the points are too few or not positive, or the slope is
 * not positive. The intercept is not clamped. */
int ooc_calib_fit_line(const double *x, const double *t, int n,
                       ooc_calib_fit *out, ooc_err *err);

/* The interference factor of a class from its time alone t[0] and with k
 * copies running t[k] (k = 1..n): the least-squares x through the origin
 * of t[k] / t[0] - 1 = k x, clamped at 0; 0 when t[0] <= 0 or n = 0. */
double ooc_calib_fit_interference(const double *t, int n);

#endif
