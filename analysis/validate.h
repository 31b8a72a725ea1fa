/* analysis/validate.h — `oocsim validate`: for each planner, plan,
 * simulate, execute and compare (docs/validation.md).
 *
 * Each planner's plan is predicted and measured by ooc_measure_program
 * (measure.h). The in-core plan is executed once more, for as many
 * iterations, as the integrity reference: after the run, a plan that only
 * swaps must leave every weight and weight gradient bit-identical to the
 * in-core plan's (the same kernels on the same data, only moved); a plan
 * that recomputes must match within OOC_VALIDATE_RECOMP_TOL (relative, per
 * value; the cpu backend's kernels are deterministic, so in practice it is
 * bit-identical too); with --verify no swapped tensor may come back
 * different.
 *
 * Errors are signed, (measured - predicted) / measured: positive when the
 * hardware is slower than predicted.
 *
 * Ownership: ooc_validate is caller-embedded (ooc_validate_init/_fini) and
 * owns its rows (each with its ooc_measure when keep_measures). Cost: per
 * planner one planner run, one simulation and one execution of warmup +
 * iterations iterations; one more execution for the reference.
 */
#ifndef OOC_VALIDATE_H
#define OOC_VALIDATE_H

#include <stdint.h>
#include "base/error.h"
#include "base/progress.h"
#include "plan/planner.h"
#include "analysis/scenario.h"
#include "analysis/measure.h"

#define OOC_VALIDATE_RECOMP_TOL 1e-5

typedef struct ooc_validate_row {
  char planner[64];
  int feasible_predicted, feasible_measured;
  double predicted_iteration_s, measured_iteration_s;
  double iteration_error;       /* 0 unless both feasible */
  double predicted_stall_s, measured_stall_s;
  uint64_t predicted_peak_reserved_bytes, measured_peak_reserved_bytes;
  uint64_t predicted_peak_allocated_bytes, measured_peak_allocated_bytes;
  double op_error_median, op_error_p95;
  int refused;                  /* the planner or the backend refused this
                                   plan: integrity holds the message */
  int integrity_ok;
  char integrity[192];          /* how it was checked, or what differed */
  int counts[3];                /* keep, swap, recompute */
  uint64_t h2d_bytes;
  double loss;
  ooc_measure *m;               /* with traces, when keep_measures */
} ooc_validate_row;

typedef struct ooc_validate {
  char model[128], hw[128], backend[16], allocator[64];
  int64_t batch;
  uint64_t budget_bytes;
  double link_GBps;
  int warmup, iterations, threads;
  char note[256];               /* the backend's line of the reference */
  double reference_iteration_s; /* the in-core plan, measured */
  double reference_predicted_s; /* and predicted */
  double reference_error;       /* (measured - predicted) / measured: how
                                   far the machine is from its calibration
                                   now (0 when not measured) */
  int n_rows;
  ooc_validate_row *rows;
  double mean_abs_iteration_error, max_abs_iteration_error;
  double max_abs_peak_error;    /* |measured - predicted| / predicted
                                   peak reserved, worst over rows */
  int n_compared;               /* rows feasible on both sides */
} ooc_validate;

void ooc_validate_init(ooc_validate *v);
void ooc_validate_fini(ooc_validate *v);

/* Run the n planners ts on spec's scenario. Every row keeps its
 * ooc_measure (traces included) when keep_measures (for the report).
 * spec->budget 0: the profile's usable memory. OOC_OK, or the first
 * error that is not a result (bad input, a backend that cannot run the
 * in-core reference). A planner that fails, or whose plan the backend
 * refuses (a kernel algorithm it lacks, say), gets a row with refused set
 * and the message in integrity; the other planners still run. */
int ooc_validate_run(const ooc_scenario_spec *spec,
                     const ooc_planner_type *const *ts, int n,
                     const ooc_measure_config *mc, int keep_measures,
                     ooc_progress *progress, ooc_validate *v, ooc_err *err);

/* The results object: {"model", "batch", "hw", "backend", ..., "results":
 * [...], "mean_abs_iteration_error", "max_abs_iteration_error"} as text
 * (heap, caller frees), NULL when out of memory. */
char *ooc_validate_json(const ooc_validate *v);

#endif
