/* report/vreport.h — the validation report (`oocsim validate -o DIR`).
 *
 * DIR gets:
 *   results.json      the results object (analysis/validate.h)
 *   report.md         the scenario, a table per planner (predicted,
 *                     measured, error, stalls, peaks, per-op error,
 *                     integrity) and the plots
 *   report.html       the same, self-contained but for the images
 *   iteration.png     predicted and measured iteration per planner, with
 *                     the signed error (plots/verrors.gp)
 *   op-errors.png     histogram of per-op errors (plots/vhist.gp)
 *   timeline-P.png    planner P's iteration, predicted over measured
 *                     (plots/vtimeline.gp)
 *   data/            the data behind every plot (.dat)
 * Every file is written atomically (base/atomic.h). A plot gnuplot cannot
 * draw is left out (its data stays) and counted.
 *
 * Ownership: borrows the validation. Cost: one gnuplot process per plot.
 */
#ifndef OOC_VREPORT_H
#define OOC_VREPORT_H

#include "base/error.h"
#include "analysis/validate.h"

/* Write the report of v (rows with their measures) into dir (created if
 * missing). *plots_missing counts plots not drawn. OOC_OK; OOC_EUNSUP when
 * gnuplot is missing (everything else is written, err says so); another
 * error when a file cannot be written. */
int ooc_vreport_write(const ooc_validate *v, const char *dir,
                      int *plots_missing, ooc_err *err);

#endif
