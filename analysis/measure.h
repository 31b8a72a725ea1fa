/* analysis/measure.h — a lowered program predicted and measured: the
 * simulator runs it with its detail recorder, then the executor replays
 * the very same program with the same allocator policy, options, budget
 * and profile, applying the simulator's allocator order, for the same
 * number of iterations (docs/executor.md, docs/validation.md).
 *
 * `oocsim exec` prints the measured summary; `oocsim validate`
 * (validate.h) compares it with the predicted one. Both summaries are
 * filled by ooc_summary_fill from a simulator result: the measured one
 * from the executor's figures (ooc_measure_result_of), so every field is
 * computed the same way on both sides. Fields the executor cannot
 * measure are the profile's: the in-core baseline, the pure compute time
 * and the lower bound stay those of the prediction.
 *
 * Stall, in both: the time the compute stream is idle inside the
 * iteration (neither running a kernel nor an ALLOC/FREE), attributed to
 * what the next compute-stream instruction waited for last (an H2D: swap
 * in; a D2H: swap out; anything else: other), the simulator's rule
 * (sim/engine.c, track_stall).
 *
 * Ownership: ooc_measure is caller-embedded (ooc_measure_init/_fini) and
 * owns its summaries, traces, model, profile and parameters. The spec and
 * program are borrowed. Cost: one simulation of warmup + iterations
 * iterations and one execution of as many, plus the kernels' build.
 */
#ifndef OOC_MEASURE_H
#define OOC_MEASURE_H

#include <stdint.h>
#include "base/error.h"
#include "ir/model.h"
#include "ir/hw.h"
#include "ir/program.h"
#include "ir/trace.h"
#include "executor/executor.h"
#include "analysis/scenario.h"
#include "analysis/summary.h"

/* Defaults of `oocsim exec` and `oocsim validate`. */
#define OOC_MEASURE_WARMUP 1
#define OOC_MEASURE_ITERATIONS 3
#define OOC_MEASURE_SEED 42

typedef struct ooc_measure_config {
  const char *backend;          /* "cpu" | "cuda" */
  int warmup;                   /* untimed iterations (>= 0) */
  int iterations;               /* timed ones (>= 1) */
  int threads;                  /* kernel threads (0: the backend's) */
  double link_GBps;             /* pace copies (cpu; 0: none) */
  int verify;                   /* checksum swapped tensors */
  uint64_t seed;                /* data (0: OOC_MEASURE_SEED) */
  int want_params;              /* keep every parameter's weights and
                                   gradients after the run (integrity) */
  int want_traces;              /* keep the predicted and measured
                                   traces of the last iteration */
} ooc_measure_config;

typedef struct ooc_measure {
  ooc_summary predicted, measured;
  ooc_exec_result exec;         /* the executor's own figures */
  int64_t predicted_stall_ns, measured_stall_ns;
  /* Per kernel and copy of the last iteration: (measured - predicted) /
   * measured of its duration; median and 95th percentile of the absolute
   * value, and the signed values (n_op_errors of them) for histograms. */
  double op_error_median, op_error_p95;
  double *op_errors;
  int32_t n_op_errors;
  ooc_trace predicted_trace, measured_trace;  /* when want_traces */
  uint8_t *lane;                /* when want_traces: per instruction, its
                                   stream (OOC_STREAM_*) for kernels and
                                   copies, 255 for ALLOC/FREE */
  int32_t n_lane;
  float *params;                /* when want_params: weights then
                                   gradients of every parameter tensor in
                                   tensor order */
  uint64_t n_params;
  ooc_model *model;             /* loaded for the run */
  ooc_hw *hw;
} ooc_measure;

void ooc_measure_init(ooc_measure *m);
void ooc_measure_fini(ooc_measure *m);

/* Predict and measure prog (lowered for spec's scenario; note is the
 * planner's). spec->iterations is ignored: the simulator runs warmup +
 * iterations, as the executor. OOC_OK with m filled (m->measured.feasible
 * 0 when the executor ran out of memory, m->predicted.feasible 0 when the
 * simulator did: then nothing is executed and m->exec.feasible is 0 too);
 * OOC_EINVAL for bad input or a program the backend cannot run, OOC_EUNSUP
 * when the backend cannot run here (no device), with err saying why. */
int ooc_measure_program(const ooc_scenario_spec *spec,
                        const ooc_program *prog, const char *note,
                        const ooc_measure_config *mc, ooc_measure *m,
                        ooc_err *err);

/* The executor's figures as a simulator result, so ooc_summary_fill makes
 * the measured summary as it makes the predicted one: iteration time,
 * peaks, bytes, busy times, alloc time from r; stall and recompute time
 * from the measured trace tr (NULL: both 0) of program p. */
void ooc_measure_result_of(const ooc_exec_result *r, const ooc_program *p,
                           const ooc_trace *tr, ooc_sim_result *out);

/* Stall of one iteration's trace of p (the rule above), total and per
 * reason into by (may be NULL). */
int64_t ooc_measure_stall(const ooc_program *p, const ooc_trace *tr,
                          int64_t by[OOC_STALL_COUNT]);

#endif
