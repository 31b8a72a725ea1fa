/* analysis/explain.h — what a planner decided and what each decision
 * costs (`oocsim explain`, and the report's "why" section).
 *
 * A scenario is planned and its program simulated with the detail
 * recorder. The decisions are read from the program, as the summary's
 * counts are (a D2H of an activation is a swap, a RECOMP kernel writing it
 * a recompute, anything else is kept), and grouped by tensor class: the op
 * of the activation's storage layer (conv2d, batchnorm, relu, ...).
 * Activation gradients the plan swaps form one more class, "gradient".
 * Per class:
 *   - tensors, bytes: the activations of that op, and their bytes;
 *   - keep / swap / recompute: how many were kept, swapped, recomputed;
 *   - swapped_bytes: bytes moved to the host per iteration (D2H);
 *   - exposed_swapin_s, exposed_swapout_s: compute-stream idle time the
 *     simulator attributes to waiting for these tensors' swap-ins, and for
 *     their swap-outs (or the FREE after them) to make room (ooc_sim_detail
 *     exposed_in_ns / exposed_out_ns): what swapping them costs;
 *   - recompute_s: time in the RECOMP kernels that rebuild them: what
 *     recomputing them costs.
 * Rows are sorted by total cost (exposed + recompute), then by name.
 *
 * Ownership: ooc_explain is caller-embedded (ooc_explain_init/_fini) and
 * owns its rows and its summary. Cost: one planner run and two
 * simulations (the scenario's, then one with the detail recorder);
 * ooc_explain_program, the second only.
 */
#ifndef OOC_EXPLAIN_H
#define OOC_EXPLAIN_H

#include <stdint.h>
#include <stdio.h>
#include "base/error.h"
#include "analysis/scenario.h"
#include "analysis/summary.h"

typedef struct ooc_explain_row {
  char op[32];                  /* the op name, or "gradient" */
  int32_t tensors;
  uint64_t bytes;
  int32_t keep, swap, recompute;
  uint64_t swapped_bytes;
  double exposed_swapin_s, exposed_swapout_s, recompute_s;
} ooc_explain_row;

typedef struct ooc_explain {
  ooc_summary sum;              /* the scenario's summary */
  int32_t n_rows;
  ooc_explain_row *rows;
  ooc_explain_row total;        /* "total": every class (gradients too) */
  int planned;                  /* 1 when a program was planned and
                                 * simulated (it may have no rows: a model
                                 * whose layers are all views) */
} ooc_explain;

void ooc_explain_init(ooc_explain *x);
void ooc_explain_fini(ooc_explain *x);

/* Plan and simulate spec's scenario and explain it into x. OOC_OK (an
 * infeasible scenario is explained too: the rows are those of the plan,
 * the costs 0 where nothing ran), or the scenario's error. */
int ooc_explain_run(const ooc_scenario_spec *spec, ooc_explain *x,
                    ooc_err *err);
/* The same from a scenario already planned and simulated: its program
 * prog (lowered for model m) and summary *sum, which x takes over (*sum is
 * left empty). One simulation, with the detail recorder. */
int ooc_explain_program(const ooc_scenario_spec *spec,
                        const ooc_program *prog, const ooc_model *m,
                        ooc_summary *sum, ooc_explain *x, ooc_err *err);

/* Write x as text (a table) or as the explain object (JSON: the summary's
 * scenario fields, iteration_s, "classes": [rows], "total": row). */
int ooc_explain_write_text(FILE *f, const ooc_explain *x);
int ooc_explain_write_json(FILE *f, const ooc_explain *x);

#endif
