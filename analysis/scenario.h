/* analysis/scenario.h — one scenario (model, batch, profile, planner,
 * allocator, budget) from loading to its summary (summary.h).
 *
 * ooc_scenario_run() is the path every command shares: simulate, compare,
 * maxbatch, sweep and report. It loads (or reuses) the model and profile,
 * computes costs and liveness, runs the planner and simulates the lowered
 * program (plansim.h), and fills the summary with the in-core baseline
 * (baseline.h) and the lower bound (lower_bound.h) beside it.
 *
 * Ownership: ooc_scenario_spec is caller-owned and borrowed. ooc_summary is
 * caller-embedded; ooc_summary_fini() frees its strings. A program and
 * trace returned through ooc_scenario_out are caller-owned too.
 */
#ifndef OOC_SCENARIO_H
#define OOC_SCENARIO_H

#include <stdint.h>
#include "base/error.h"
#include "ir/model.h"
#include "ir/hw.h"
#include "ir/program.h"
#include "ir/trace.h"
#include "alloc/alloc.h"
#include "plan/planner.h"
#include "analysis/summary.h"

typedef struct ooc_scenario_spec {
  const char *model;          /* name or path */
  int64_t batch;
  int dtype_set;
  ooc_dtype dtype;
  ooc_precision precision;    /* --precision (sets the dtype; fp32 and
                                 tf32 also the profile's
                                 compute.fp32_uses_tf32) */
  ooc_optimizer optimizer;
  const ooc_kv *sets; int n_sets;             /* --set */
  const char *hw;             /* name or path */
  const ooc_hw_override *hw_sets; int n_hw_sets; /* --hw-set */
  const char *planner;
  const ooc_kv *opts; int n_opts;             /* --opt */
  const char *opts_planner;   /* non-NULL: a search over several planners
                                 (minbudget) gives --opt to this one only,
                                 the others run at their defaults */
  const char *allocator;      /* NULL: "caching" */
  uint64_t budget;            /* 0: the profile's usable memory */
  const char *budget_field;   /* where budget came from, for messages
                                 (NULL: "--budget"; a plan file's
                                 "scenario.budget_bytes") */
  int budget_any;             /* 1: budget may exceed the profile's device
                                 memory (searches past the device, such as
                                 minbudget's); 0: that is bad input */
  int iterations;             /* 0: default (2) */
  int steady;                 /* 1 (--steady): then more, up to
                                 OOC_SIM_MAX_ITERATIONS, until the allocator
                                 is steady (sim/sim.h), for the planner's
                                 oracle too */
  const uint8_t *layer_algo;  /* NULL, or 2 per layer: the kernel
                                 algorithms every step takes
                                 (ooc_planner_ctx.layer_algo) */
} ooc_scenario_spec;

/* Optional outputs of a run. */
typedef struct ooc_scenario_out {
  ooc_program *program;       /* if non-NULL: receives the lowered program */
  ooc_trace *trace;           /* if non-NULL: spans + memory of the run */
  ooc_model **model;          /* if non-NULL: receives the model (caller
                                 frees with ooc_model_free) */
  ooc_hw **hw;                /* likewise for the profile */
  struct ooc_sim_detail *detail;  /* if non-NULL (ooc_scenario_run_program
                                 only): the simulator's per-instruction
                                 record, with the allocator order an
                                 executor replays (sim/sim.h) */
} ooc_scenario_out;

int ooc_scenario_run(const ooc_scenario_spec *spec, ooc_summary *sum,
                     ooc_scenario_out *out, ooc_err *err);

/* Check an allocator spec ("caching:max_split_size_mb=64") whole: its
 * name, its option keys and their values (the allocator's init() run once
 * on a small configuration). OOC_OK, or the allocator's error ("unknown
 * allocator 'x' (valid: ...)", "allocator 'caching': max_split_size_mb
 * must be ...") for the caller to prefix with where the spec came from. */
int ooc_scenario_check_allocator(const char *spec, ooc_err *err);

/* Find spec's planner and allocator (NULL: "caching") in their registries,
 * with the errors every run gives: "missing -p PLANNER", "-p: unknown
 * planner ...", "--allocator: unknown allocator ..." (and the allocator's
 * option values are checked, ooc_scenario_check_allocator, so that a bad
 * one is blamed on --allocator, not on the planner that would have
 * met it first). planner may be NULL:
 * then only the allocator is looked up. *alloc_opts (when not NULL)
 * receives the allocator's options, the part of spec->allocator after
 * the name ("caching:expandable_segments"), or NULL. */
int ooc_scenario_lookup(const ooc_scenario_spec *spec,
                        const ooc_planner_type **planner,
                        const ooc_allocator_type **allocator,
                        const char **alloc_opts, ooc_err *err);

/* The allocator spec of a summary: spec->allocator as given ("caching"
 * when none). */
const char *ooc_scenario_alloc_spec(const ooc_scenario_spec *spec);

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
/* The largest working set of the opened scenario: persistent bytes plus
 * the bytes of its largest step (ooc_plan_check_budget), whose name
 * ("fwd res3_3_add") goes to step (n bytes; step may be NULL). No plan fits
 * a budget below it. */
uint64_t ooc_scenario_working_set(const ooc_scenario *sc, char *step,
                                  size_t n);
/* The same for a planner that may run optimizer steps on the CPU
 * (OOC_PLANNER_OFFLOAD): the persistent bytes with the offloadable
 * parameters on the host (ooc_plan_check_budget_offload). */
uint64_t ooc_scenario_working_set_offload(const ooc_scenario *sc);

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

/* ooc_scenario_run_in without the in-core baseline and the lower bound
 * (incore_iteration_s, slowdown, compute_s and lower_bound_s are 0) and
 * without outputs: for searches that only ask whether a plan fits and how
 * fast it runs (maxbatch.h). */
int ooc_scenario_probe(ooc_scenario *sc, const ooc_scenario_spec *spec,
                       ooc_summary *sum, ooc_err *err);
/* Complete a probe's summary (of this opened scenario, at its budget)
 * with the baseline and the lower bound: then it is the summary
 * ooc_scenario_run_in gives, without planning again. */
int ooc_scenario_add_baseline(ooc_scenario *sc, ooc_summary *sum,
                              ooc_err *err);

/* A budget above the profile's total device memory is bad input: "budget
 * X exceeds the Y of profile 'P' (to emulate a larger device, ...)". A
 * budget between the usable and the total memory is allowed (a leaner
 * context than the profile assumes). */
int ooc_scenario_check_budget_size(const ooc_scenario *sc, uint64_t budget,
                                   ooc_err *err);

/* Check a budget the user gave against the profile's memory
 * (ooc_scenario_check_budget_size) and the largest working set of the
 * opened scenario (ooc_plan_check_budget): OOC_EINVAL and its message.
 * 0, the profile's usable memory, always passes: when it is too small,
 * ooc_scenario_run_in returns an INFEASIBLE summary, not an error. */
int ooc_scenario_check_budget(const ooc_scenario *sc, uint64_t budget,
                              ooc_err *err);
/* The same for planners that may offload parameters (offload != 0: one
 * of them has OOC_PLANNER_OFFLOAD): against the persistent state that
 * offload leaves (ooc_plan_check_budget_offload). */
int ooc_scenario_check_budget_for(const ooc_scenario *sc, uint64_t budget,
                                  int offload, ooc_err *err);

/* The INFEASIBLE summary ooc_scenario_run_in gives when spec's budget (0:
 * the profile's) is below the largest working set, for any budget: for a
 * sweep over budgets, where a too small one is a point, not bad input.
 * The oom object names the step and the shortfall (docs/lower-bound.md);
 * its reason is `reason` when not NULL (the budget check's own words,
 * e.g. a planner's that must keep its parameters on the device), else
 * "working set ... exceeds the budget by ...: no plan can fit". */
int ooc_scenario_no_fit(ooc_scenario *sc, const ooc_scenario_spec *spec,
                        const char *reason, ooc_summary *sum, ooc_err *err);

/* The in-core baseline (incore planner, ideal allocator, unlimited device)
 * of the opened scenario: its iteration time and the pure compute time of
 * one iteration, in seconds. Cached after the first call. */
int ooc_scenario_baseline(ooc_scenario *sc, double *incore_s,
                          double *compute_s, ooc_err *err);

/* The lower bound of docs/lower-bound.md (ooc_lower_bound_compute) of the
 * opened scenario for a budget, given the compute time of one iteration
 * (seconds). */
double ooc_scenario_lower_bound(const ooc_scenario *sc, uint64_t budget,
                                double compute_s);

#endif
