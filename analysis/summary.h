/* analysis/summary.h — the summary object of one run (oocsim(1), SUMMARY
 * OBJECT): what every command prints, sweeps tabulate and reports compare.
 *
 * ooc_summary_fill() derives it from a lowered program and the simulator's
 * result (plus the baseline and bound figures the caller computed); the
 * writers print it as JSON (cJSON) or as readable text.
 *
 * Ownership: ooc_summary is caller-embedded; it owns its strings, freed by
 * ooc_summary_fini() (which accepts NULL). ooc_summary_source borrows
 * everything it points to. Cost: O(instructions + tensors) to fill (the
 * keep/swap/recompute counts read the program), O(1) to write.
 */
#ifndef OOC_SUMMARY_H
#define OOC_SUMMARY_H

#include <stdint.h>
#include <stdio.h>
#include "base/error.h"
#include "plan/plan.h"
#include "ir/model.h"
#include "ir/program.h"
#include "sim/sim.h"

/* The summary object, plus extensions. */
typedef struct ooc_summary {
  char *model, *hw, *planner, *allocator;
  int64_t batch;
  ooc_dtype dtype;
  ooc_precision precision;     /* OOC_PREC_NONE: not given */
  ooc_optimizer optimizer;    /* whose state counts in memory */
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
  /* Parameter offload (plan/plan.h OOC_PARAM_OFFLOAD): the layers whose
   * optimizer runs on the CPU, its busy time per iteration and the host
   * bytes their weights, gradients and state take; all 0 without. */
  int offloaded_layers;
  double host_optimizer_s;
  uint64_t offload_host_bytes;
  int counts[3];              /* keep, swap, recompute (activation tensors) */
  uint64_t events;
  int iterations;             /* timed iterations simulated */
  int steady;                 /* the last asked the allocator for no driver
                                 call (sim/sim.h): every later repeats it */
  double sim_wall_s;
  double plan_wall_s;
  uint64_t plan_simulations;  /* simulations the planner ran */
  char *plan_note;
  ooc_metric metrics[OOC_PLAN_METRICS];  /* the planner's (planner_metrics) */
  int n_metrics;
  int measured;               /* 1: the figures were measured by the
                                 executor (oocsim exec), 0: predicted */
} ooc_summary;

/* What a summary is made of: the scenario's names, the program that ran
 * and the simulator's result, and the figures computed beside them. */
typedef struct ooc_summary_source {
  const ooc_model *model;     /* name, batch and dtype */
  const char *hw, *planner, *allocator;
  uint64_t budget;
  const ooc_program *program; /* what ran: counts and the OOM's operation */
  const ooc_sim_result *result;
  const char *plan_note;
  const ooc_metric *metrics;  /* the planner's metrics (NULL: none) */
  int n_metrics;
  double plan_wall_s, sim_wall_s;
  uint64_t plan_simulations;
  double incore_s;            /* in-core baseline (0: none) */
  double compute_s;           /* pure compute time of one iteration */
  double lower_bound_s;
} ooc_summary_source;

/* Fill sum from src. The keep / swap / recompute counts come from what the
 * program does (a D2H of an activation is a swap, a RECOMP kernel writing
 * it a recompute), so a one-shot run and a plan reloaded from plan.json
 * count the same; an infeasible run names the operation behind the OOM
 * (the first kernel or copy its stream issues at or after the failed
 * ALLOC: "fwd conv1", "h2d res2a"). Returns OOC_OK, or OOC_ENOMEM with sum
 * left empty. */
int ooc_summary_fill(ooc_summary *sum, const ooc_summary_source *src,
                     ooc_err *err);

/* The fields that come from the in-core baseline and the lower bound
 * (incore_iteration_s, slowdown, compute_s, lower_bound_s), set on a
 * filled summary: what ooc_summary_fill sets from src's. */
void ooc_summary_set_baseline(ooc_summary *sum, double incore_s,
                              double compute_s, double lower_bound_s);

void ooc_summary_fini(ooc_summary *s);

/* Zero the wall-clock fields (sim_wall_s, plan_wall_s) and the planning
 * cost (plan_simulations): --no-timing, so two runs, or a run and its
 * plan.json replay, can be compared byte for byte. */
void ooc_summary_clear_timing(ooc_summary *s);

/* Writers. JSON is the summary object of oocsim(1) (cJSON), followed by
 * the extension fields (compute_s, peak_host_pinned_bytes, fragmentation,
 * stall_s{swapin,swapout,other}, alloc_s, plan_wall_s, plan_note,
 * optimizer). When feasible is 0, iteration_s, samples_per_s and slowdown
 * are 0 in the struct and written as JSON null (docs/output-schema.md). */
int ooc_summary_write_json(FILE *f, const ooc_summary *s, int pretty);
void ooc_summary_write_text(FILE *f, const ooc_summary *s);

/* The summary as the result columns of every table (sweep results,
 * compare --format csv; docs/output-schema.md): the names, in order,
 * NULL-terminated, and OOC_SUMMARY_NCOLS of them. The wall-clock columns
 * (plan_wall_s, sim_wall_s) are last so byte comparisons can cut them. */
extern const char *const ooc_summary_columns[];
#define OOC_SUMMARY_NCOLS 40

/* How each column's cells are written (and so read back, as a resumed
 * or merged sweep does): OOC_CELL_FLAG "0" or "1"; OOC_CELL_COUNT a
 * non-negative integer; OOC_CELL_NUMBER a finite non-negative decimal,
 * %.9f or %.9g; OOC_CELL_TEXT anything. Any but a flag may be empty (the
 * value does not exist). Indexed as ooc_summary_columns. */
enum { OOC_CELL_TEXT, OOC_CELL_FLAG, OOC_CELL_COUNT, OOC_CELL_NUMBER };
extern const unsigned char ooc_summary_column_kinds[];

/* The cells of s under ooc_summary_columns, as heap strings into
 * cells[0 .. OOC_SUMMARY_NCOLS): simulated times as "%.9f" with trailing
 * zeros dropped, other numbers as "%.9g" or integers, feasible
 * as "1" or "0", and "" where a value does not exist: iteration_s,
 * samples_per_s, slowdown and vs_lower_bound of an infeasible run, the oom_*
 * cells of a feasible one. OOC_ENOMEM when a cell could not be made (those
 * made are in cells, for the caller to free). */
int ooc_summary_cells(const ooc_summary *s, char **cells);

/* The same cells for a point with no run to summarise (a maxbatch point
 * where not even batch 1 fits): budget_bytes, feasible "0" and oom_reason
 * from s, every other cell "" (a value that does not exist). OOC_ENOMEM
 * as above. */
int ooc_summary_cells_none(const ooc_summary *s, char **cells);

/* Iteration time over the lower bound, 0 when infeasible or unbounded. */
double ooc_summary_vs_bound(const ooc_summary *s);

/* Total compute stall time (every stall reason), seconds. */
double ooc_summary_stall_s(const ooc_summary *s);

/* The summary as a cJSON object (caller deletes it with cJSON_Delete; the
 * return type is void * so this header does not need cJSON.h). NULL when
 * out of memory. */
void *ooc_summary_to_cjson(const ooc_summary *s);

#endif
