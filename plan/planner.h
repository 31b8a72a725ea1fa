/* plan/planner.h — pluggable planners, GSL "type descriptor" style.
 *
 * Each planner is one file in planners/, everything static except one
 * exported `const ooc_planner_type`. The registry (planners/registry.h)
 * lists them, a layer above this front end. The front end ooc_planner_run() checks the options against the
 * planner's list before it dispatches, and checks the plan after (lowering
 * and validity), so a planner can trust what it is given.
 *
 * A planner reads the model, liveness, profile, budget and options and fills
 * a plan; it never prints and never simulates by hand. A planner that
 * searches calls ooc_planner_evaluate() — the simulator as its oracle.
 *
 * Ownership: the context borrows everything; the front end owns the
 * planner's state (state_size bytes, zeroed) for the duration of one run:
 * alloc(), plan(), free(), then the state itself is freed.
 */
#ifndef OOC_PLANNER_H
#define OOC_PLANNER_H

#include <stdint.h>
#include "base/error.h"
#include "ir/model.h"
#include "ir/hw.h"
#include "sim/cost.h"
#include "alloc/alloc.h"
#include "plan/plan.h"
#include "sim/sim.h"

typedef struct ooc_planner_ctx {
  const ooc_model *model;
  const ooc_hw *hw;
  const ooc_costs *costs;
  const ooc_liveness *live;
  const ooc_allocator_type *allocator;
  const char *allocator_options; /* its options, "key=value:key" (NULL:
                                 none), as the oracle was configured */
  uint64_t budget;            /* device bytes (allocator's budget) */
  uint64_t chunk_bytes;       /* va chunk the oracle uses (0: the profile's) */
  const ooc_kv *opts;         /* --opt K=V, already checked against names */
  int n_opts;
  ooc_sim *sim;               /* oracle (configured for this scenario) */
  ooc_program *scratch;       /* scratch program for the oracle */
  /* NULL, or 2 per layer (forward, backward): the kernel algorithm
   * (ir/algo.h) the plan's steps then take, whatever the planner chose
   * (validate's in-core reference for a plan that changes algorithms). */
  const uint8_t *layer_algo;
  /* NULL, or the NULL-terminated registry of planners (planners/registry.h)
   * for a planner that starts from the others' plans (joint); passed in
   * so that no planner links the registry that lists it. */
  const struct ooc_planner_type *const *peers;
} ooc_planner_ctx;

/* What the conformance suites may expect of a planner beyond the
 * properties every planner has (valid programs, nothing used while absent,
 * peaks within the budget when feasible, an OOM report otherwise, the same
 * plan for the same input). */
enum {
  /* It searches with the oracle (ooc_planner_evaluate) and so finds a
   * feasible plan wherever the in-core plan fits, and wherever any other
   * registered planner finds one. */
  OOC_PLANNER_SEARCH = 1u << 0,
  /* It may move parameters' gradients and optimizer state to the host
   * (OOC_PARAM_OFFLOAD): the front end checks the budget against the
   * persistent state that leaves (ooc_plan_check_budget_offload). */
  OOC_PLANNER_OFFLOAD = 1u << 1,
  /* Planning it costs far more than simulating its plan (it searches
   * with the simulator in the loop, or does per-layer work to match):
   * the hint an infeasible simulate prints leaves it out, so that the
   * hint costs about what the command did (cli/cmd_minbudget.c);
   * compare's hint and `oocsim minbudget` try it. */
  OOC_PLANNER_COSTLY = 1u << 2
};

typedef struct ooc_planner_type {
  const char *name;
  const char *summary;        /* one line for `oocsim list planners` */
  const char *cite;           /* the paper section it follows */
  size_t state_size;
  const char *const *options; /* NULL-terminated accepted --opt keys */
  unsigned flags;             /* OOC_PLANNER_* */
  /* Optional, as GSL's multimin alloc/free: size the state's scratch for
   * ctx (the front end has zeroed the state), and release it. free() is
   * called whenever alloc() was, even when alloc() failed partway, so it
   * must accept a partly built state. */
  int (*alloc)(void *state, const ooc_planner_ctx *ctx, ooc_err *err);
  void (*free)(void *state);
  int (*plan)(void *state, const ooc_planner_ctx *ctx, ooc_plan *plan,
              ooc_err *err);
} ooc_planner_type;

/* Run planner t: checks opts (unknown or repeated keys: "planner 'lms':
 * unknown option 'foo' (valid: swapout_threshold, ...)"), rejects a budget
 * below persistent + the largest step's working set with OOC_EOOM and
 * ooc_plan_check_budget's message (no planner can fit: a result, not a
 * bug; the caller decides whether it is an INFEASIBLE scenario or a bad
 * --budget), zeroes its state and calls its alloc() hook, resets pl and
 * plans into it, calls its free() hook, sets
 * pl->sched_budget to ctx->budget if the planner left it 0, lowers it
 * into prog and validates the program. pl must have been ooc_plan_init'ed
 * (for any liveness: it is re-initialised when it differs from ctx->live)
 * or be zeroed. Returns OOC_OK or an error naming the
 * planner and option. */
int ooc_planner_run(const ooc_planner_type *t, const ooc_planner_ctx *ctx,
                    ooc_plan *pl, ooc_program *prog, ooc_err *err);

/* The oracle: lower pl into ctx->scratch and simulate it. Returns the
 * lowering's error (a bad record) or ooc_sim_run's status; an infeasible
 * plan is OOC_OK with r->feasible == 0. */
int ooc_planner_evaluate(const ooc_planner_ctx *ctx, const ooc_plan *pl,
                         ooc_sim_result *r, ooc_err *err);

/* ooc_planner_evaluate for a search that only asks whether pl beats
 * cutoff_ns (ooc_sim_run_cutoff): a run certain to take longer stops
 * early with r->cut set; 0 runs it whole. A plan whose bound
 * (ooc_kit_plan_bound) is already above cutoff_ns is not lowered nor
 * simulated: r->cut is 1, r->iterations 0 and r->iteration_ns the bound
 * (ctx->scratch keeps the program before). */
int ooc_planner_evaluate_cutoff(const ooc_planner_ctx *ctx,
                                const ooc_plan *pl, int64_t cutoff_ns,
                                ooc_sim_result *r, ooc_err *err);

/* The events of r counted as a run of two timed iterations (the default)
 * would: r->events x 2 / r->iterations when more ran (--steady). The
 * event caps of the search planners (max_events) count these, so that a
 * cap bounds the same number of simulations whatever the iterations. */
uint64_t ooc_planner_events(const ooc_sim_result *r);

/* ooc_planner_evaluate with the simulator's detail recorder d (NULL:
 * none) (per kernel
 * and per tensor: stalls and exposed transfer times, sim/sim.h), for
 * planners that classify tensors by what the timeline shows (PoocH
 * §4.4.2). */
int ooc_planner_evaluate_detail(const ooc_planner_ctx *ctx,
                                const ooc_plan *pl, ooc_sim_result *r,
                                ooc_sim_detail *d, ooc_err *err);

/* ooc_planner_evaluate_detail for a profiling run that measures times
 * only: pinned host memory is not limited (ooc_sim_set_host_unlimited), so
 * a profile is taken where the host could not hold it; r->feasible is then
 * set as if it were, and the caller compares r->peak_host_pinned with
 * hw->host_mem before it takes the plan. */
int ooc_planner_evaluate_profile(const ooc_planner_ctx *ctx,
                                 const ooc_plan *pl, ooc_sim_result *r,
                                 ooc_sim_detail *d, ooc_err *err);

/* Every key of opts[0 .. n) must be one t accepts, and given once:
 * OOC_OK, or OOC_EINVAL with "planner 'lms': unknown option 'foo' (valid:
 * swapout_threshold, ...)" ("(it takes no options)" when it has none) or
 * "planner 'lms': option 'ahead' given twice". Values are not parsed
 * (the planner does that when it runs). ooc_planner_run checks ctx's
 * options so; a plan file's reader checks the options it recorded. */
int ooc_planner_check_opts(const ooc_planner_type *t, const ooc_kv *opts,
                           int n, ooc_err *err);

/* Whether planner t accepts --opt key. */
int ooc_planner_accepts(const ooc_planner_type *t, const char *key);
/* The options among opts[0 .. n) that t accepts, in order, into out (room
 * for n); returns how many. For commands that give one --opt list to
 * several planners (compare, minbudget, validate). */
int ooc_planner_opts_for(const ooc_planner_type *t, const ooc_kv *opts,
                         int n, ooc_kv *out);

/* Option helpers: look up key in ctx->opts. Return 1 and set *v when
 * present (OOC_EINVAL via err on a malformed value), 0 when absent. */
int ooc_planner_opt_int(const ooc_planner_ctx *ctx, const char *key,
                        int64_t *v, ooc_err *err);
/* A wall-time budget in seconds, in [0, 1e9] (fractions allowed; 0: none);
 * out of range: OOC_EINVAL naming planner, key and value. */
int ooc_planner_opt_seconds(const ooc_planner_ctx *ctx, const char *planner,
                            const char *key, double *v, ooc_err *err);

/* What a search under budget_s keeps back before its deadline, so that
 * the solve ends within the budget rather than the steps after the
 * search past it: k of its longest evaluations so far (the ones that
 * follow the stop) and 1% of the budget (threads that share the cores
 * may be descheduled for milliseconds). ooc_reserve_timed records an
 * evaluation begun at t0 (ooc_wall_s()). */
typedef struct ooc_reserve {
  double eval_s;        /* the longest evaluation so far, seconds */
  double slack;         /* 1% of the budget */
} ooc_reserve;

void ooc_reserve_init(ooc_reserve *r, double budget_s);
void ooc_reserve_timed(ooc_reserve *r, double t0);
double ooc_reserve_s(const ooc_reserve *r, int k);

int ooc_planner_opt_size(const ooc_planner_ctx *ctx, const char *key,
                         uint64_t *v, ooc_err *err);
int ooc_planner_opt_str(const ooc_planner_ctx *ctx, const char *key,
                        const char **v);
/* The `sched_budget` option (capacity, window): a size in (0,
 * ctx->budget]. 1 and *v set when given, 0 when not, or OOC_EINVAL naming
 * planner, the value as given and the device budget. */
int ooc_planner_opt_sched(const ooc_planner_ctx *ctx, const char *planner,
                          uint64_t *v, ooc_err *err);

#endif
