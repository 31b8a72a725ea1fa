/* report/sweep_row.h — the columns of a sweep's results and one point's
 * row in them.
 *
 * Columns (docs/output-schema.md): the coordinates (model, set, hw,
 * "hw_set:KEY" per --hw-set axis, allocator, budget, planner, batch, dtype,
 * optimizer; sweep_grid.h); in --maxbatch mode "max_batch" and what stops
 * the next batch (maxbatch.h): fail_batch (the first batch that does not
 * fit; empty at the cap), fail_limit ("working_set" when one step's working
 * set exceeds the budget, so no plan fits it; "largest_step" when the plan
 * ran out of memory at the step with the largest working set; "oom" at
 * another step), fail_op (the step the OOM names) and fail_below (a
 * batch below max_batch that does not fit, empty when the search found
 * none: feasibility is not monotone, maxbatch.h); then the summary's
 * result columns (ooc_summary_columns: budget_bytes, feasible, ...,
 * oom_reason, plan_note), with the wall-clock columns (plan_wall_s,
 * sim_wall_s) last so byte comparisons can cut them.
 *
 * Ownership: the header's names and a row's cells are heap strings the
 * table or the caller owns. Cost: O(columns).
 */
#ifndef OOC_SWEEP_ROW_H
#define OOC_SWEEP_ROW_H

#include <stdint.h>
#include "base/error.h"
#include "analysis/maxbatch.h"
#include "analysis/summary.h"
#include "report/sweep_grid.h"
#include "report/table.h"

/* Set t's columns to the header of g's results (t has none yet). */
int ooc_sweep_header(const ooc_sweep_grid *g, ooc_table *t, ooc_err *err);

/* Fill row (as many cells as the header has columns) for point i of g with
 * summary s; best is the largest batch and lim (may be NULL) what stops
 * the next in --maxbatch mode. OOC_ENOMEM when a cell could not be made
 * (those made are in row, for the caller to free). */
int ooc_sweep_row(const ooc_sweep_grid *g, int64_t i, int64_t best,
                  const ooc_maxbatch_limit *lim, const ooc_summary *s,
                  char **row);

/* How the cells of result column `name` (one after the coordinates) are
 * written: an OOC_CELL_* of analysis/summary.h, or OOC_SWEEP_CELL_LIMIT
 * for fail_limit (one of ooc_limit_kind_name's names); OOC_CELL_TEXT for
 * a name that is not a result column. */
#define OOC_SWEEP_CELL_LIMIT (OOC_CELL_NUMBER + 1)
int ooc_sweep_col_kind(const char *name);

#endif
