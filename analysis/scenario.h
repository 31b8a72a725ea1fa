/* analysis/scenario.h — one scenario (model, batch, profile, planner, allocator,
 * budget) from loading to the summary object of ARCHITECTURE.md.
 *
 * ooc_scenario_run() is the path every command shares: simulate, compare,
 * maxbatch, sweep and report. It loads (or reuses) the model and profile,
 * computes costs and liveness, runs the planner, simulates the lowered
 * program, and the in-core baseline on an unlimited device, and derives the
 * lower bound (docs/lower-bound.md).
 *
 * Ownership: ooc_scenario_spec is caller-owned and borrowed. ooc_summary is
 * caller-embedded; ooc_summary_fini() frees its strings. A program and
 * trace returned through ooc_scenario_out are caller-owned too.
 */
#ifndef OOC_SCENARIO_H
#define OOC_SCENARIO_H

#include <stdint.h>
#include <stdio.h>
#include "base/error.h"
#include "ir/model.h"
#include "ir/hw.h"
#include "sim/sim.h"
#include "plan/plan.h"
#include "plan/planner.h"

typedef struct ooc_scenario_spec {
  const char *model;          /* name or path */
  int64_t batch;
  int dtype_set;
  ooc_dtype dtype;
  ooc_optimizer optimizer;
  const ooc_kv *sets; int n_sets;             /* --set */
  const char *hw;             /* name or path */
  const ooc_hw_override *hw_sets; int n_hw_sets; /* --hw-set */
  const char *planner;
  const ooc_kv *opts; int n_opts;             /* --opt */
  const char *allocator;      /* NULL: "caching" */
  uint64_t budget;            /* 0: the profile's usable memory */
  int iterations;             /* 0: default (2) */
} ooc_scenario_spec;

/* The summary object (ARCHITECTURE.md), plus extensions. */
typedef struct ooc_summary {
  char *model, *hw, *planner, *allocator;
  int64_t batch;
  ooc_dtype dtype;
  uint64_t budget_bytes;
  int feasible;
  ooc_oom oom;
  char *oom_op;               /* "fwd conv1", "h2d res2a_out", ... */
  double iteration_s, samples_per_s;
  double incore_iteration_s, slowdown, lower_bound_s;
  double compute_s;           /* pure compute time of one iteration */
  uint64_t peak_allocated_bytes, peak_reserved_bytes, peak_host_pinned_bytes;
  double fragmentation;
  uint64_t h2d_bytes, d2h_bytes;
  double recompute_flops;
  double recompute_s;         /* time in recompute kernels, per iteration */
  double compute_busy_s, h2d_busy_s, d2h_busy_s;
  double stall_s[OOC_STALL_COUNT];
  double alloc_s;
  int counts[3];              /* keep, swap, recompute (activation tensors) */
  uint64_t events;
  double sim_wall_s;
  double plan_wall_s;
  char *plan_note;
} ooc_summary;

void ooc_summary_fini(ooc_summary *s);

/* Optional outputs of a run. */
typedef struct ooc_scenario_out {
  ooc_program *program;       /* if non-NULL: receives the lowered program */
  ooc_trace *trace;           /* if non-NULL: spans + memory of the run */
  ooc_model **model;          /* if non-NULL: receives the model (caller
                                 frees with ooc_model_free) */
  ooc_hw **hw;                /* likewise for the profile */
} ooc_scenario_out;

int ooc_scenario_run(const ooc_scenario_spec *spec, ooc_summary *sum,
                     ooc_scenario_out *out, ooc_err *err);

/* Simulate an already lowered program (plan.json path). */
int ooc_scenario_run_program(const ooc_scenario_spec *spec,
                             const ooc_program *prog, const char *plan_note,
                             ooc_summary *sum, ooc_scenario_out *out,
                             ooc_err *err);

/* A scenario opened once and run many times (compare, sweep): the model,
 * profile, costs and liveness of one (model, batch, dtype, --set, hw,
 * --hw-set) are loaded once; the in-core baseline and compute time are
 * computed on first use and cached. Not thread-safe: one per thread.
 * ooc_scenario_close() accepts NULL. */
typedef struct ooc_scenario ooc_scenario;

int ooc_scenario_open(const ooc_scenario_spec *spec, ooc_scenario **out,
                      ooc_err *err);
void ooc_scenario_close(ooc_scenario *sc);
const ooc_model *ooc_scenario_model(const ooc_scenario *sc);
const ooc_hw *ooc_scenario_hw(const ooc_scenario *sc);

/* Run spec's planner, allocator, budget, options and iterations on the
 * opened scenario (spec's model, batch, dtype, sets, hw and hw_sets are
 * ignored: those of ooc_scenario_open count). out->model and out->hw are
 * not filled here (use ooc_scenario_model/_hw). When the budget is below
 * the largest working set (ooc_plan_check_budget), no plan can fit: a
 * budget the user gave (spec->budget != 0) is bad input, OOC_EINVAL with
 * "--budget: budget ... is below the working set of step ..."; the
 * profile's own memory (spec->budget == 0) gives an INFEASIBLE summary
 * whose oom object names that step (op), its bytes (requested_bytes), the
 * persistent bytes (live_bytes) and what the budget leaves beside them
 * (largest_free_bytes), with no program (docs/lower-bound.md). */
int ooc_scenario_run_in(ooc_scenario *sc, const ooc_scenario_spec *spec,
                        ooc_summary *sum, ooc_scenario_out *out,
                        ooc_err *err);

/* Check a budget the user gave against the largest working set of the
 * opened scenario (ooc_plan_check_budget: OOC_EINVAL and its message).
 * 0, the profile's usable memory, always passes: when it is too small,
 * ooc_scenario_run_in returns an INFEASIBLE summary, not an error. */
int ooc_scenario_check_budget(const ooc_scenario *sc, uint64_t budget,
                              ooc_err *err);

/* The INFEASIBLE summary ooc_scenario_run_in gives when spec's budget (0:
 * the profile's) is below the largest working set, for any budget: for a
 * sweep over budgets, where a too small one is a point, not bad input.
 * The oom object names the step and the shortfall (docs/lower-bound.md). */
int ooc_scenario_no_fit(ooc_scenario *sc, const ooc_scenario_spec *spec,
                        ooc_summary *sum, ooc_err *err);

/* The in-core baseline (incore planner, ideal allocator, unlimited device)
 * of the opened scenario: its iteration time and the pure compute time of
 * one iteration, in seconds. Cached after the first call. */
int ooc_scenario_baseline(ooc_scenario *sc, double *incore_s,
                          double *compute_s, ooc_err *err);

/* The lower bound of docs/lower-bound.md for a budget, given the compute
 * time of one iteration (seconds). */
double ooc_scenario_lower_bound(const ooc_scenario *sc, uint64_t budget,
                                double compute_s);

/* The largest batch ooc_scenario_maxbatch tries; a result equal to it
 * means "at least this much". */
#define OOC_MAXBATCH_CAP ((int64_t)1 << 30)

/* The last step of the bound (docs/lower-bound.md): compute time C (s),
 * excess bytes E that must be absent at some step boundary, the cheapest
 * recompute cost r (s per byte; INFINITY when none) and the effective
 * link rate beta (bytes/s for x bytes out and back). Returns
 * max(C, min over x in [0,E] of max(C + r (E - x), x / beta)). */
double ooc_lower_bound_combine(double compute_s, double excess_bytes,
                               double recompute_s_per_byte, double link_Bps);

/* Largest feasible batch for spec (spec->batch ignored) by doubling then
 * bisection; *best = 0 when even batch 1 does not fit. at_max receives the
 * summary at the best batch. */
int ooc_scenario_maxbatch(const ooc_scenario_spec *spec, int64_t *best,
                          ooc_summary *at_max, ooc_err *err);

/* Writers. JSON is the ARCHITECTURE.md summary object (cJSON), followed by
 * the extension fields (compute_s, peak_host_pinned_bytes, fragmentation,
 * stall_s{swapin,swapout,memory,other}, alloc_s, plan_wall_s, plan_note).
 * When feasible is 0, iteration_s and slowdown are 0 in the struct and
 * written as JSON null; samples_per_s is 0. */
int ooc_summary_write_json(FILE *f, const ooc_summary *s, int pretty);
void ooc_summary_write_text(FILE *f, const ooc_summary *s);

/* The summary as a cJSON object (caller deletes it with cJSON_Delete; the
 * return type is void * so this header does not need cJSON.h). NULL when
 * out of memory. */
void *ooc_summary_to_cjson(const ooc_summary *s);

/* Zero the wall-clock fields (sim_wall_s, plan_wall_s): --no-timing, so
 * two runs can be compared byte for byte. */
void ooc_summary_clear_timing(ooc_summary *s);

#endif
