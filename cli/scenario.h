/* cli/scenario.h — one scenario (model, batch, profile, planner, allocator,
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
#include "../sim/error.h"
#include "../sim/model.h"
#include "../sim/hw.h"
#include "../sim/sim.h"
#include "../sim/plan.h"
#include "../sim/planner.h"

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

/* Largest feasible batch for spec (spec->batch ignored) by doubling then
 * bisection; *best = 0 when even batch 1 does not fit. at_max receives the
 * summary at the best batch. */
int ooc_scenario_maxbatch(const ooc_scenario_spec *spec, int64_t *best,
                          ooc_summary *at_max, ooc_err *err);

/* Writers. JSON is the ARCHITECTURE.md summary object (cJSON). */
int ooc_summary_write_json(FILE *f, const ooc_summary *s, int pretty);
void ooc_summary_write_text(FILE *f, const ooc_summary *s);

#endif
