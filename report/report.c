/* report/report.c — the planner comparison report (report.h): the data
 * (report_data.c), the plots (report_plots.c) and the document
 * (report_write.c), in that order, then the status of the whole.
 *
 * Ownership: the report data lives for one call. Cost: see report.h.
 */
#include "config.h"

#include <inttypes.h>
#include <stdio.h>

#include "report/report.h"
#include "report/report_parts.h"
#include "report/plot.h"
#include "report/sweep.h"
#include "base/atomic.h"
#include "base/util.h"

/* What the report's status says once everything is written: a plot that
 * could not be drawn (gnuplot missing, or its first failure), then points
 * that failed. */
static int
final_status(const ooc_report_opts *o, const ooc_report_data *d,
             ooc_err *err)
{
  const char *gp;

  if (d->pl.first_rc) {
    if (d->pl.missing && !ooc_plot_gnuplot(&gp))
      return ooc_err_set(err, OOC_EUNSUP, "gnuplot is missing ('%s' is not "
                         "runnable; install gnuplot or set OOCSIM_GNUPLOT): "
                         "wrote %s/report.md and report.html without plots",
                         gp, o->dir);
    return ooc_err_set(err, d->pl.first_rc, "%s", d->pl.first_msg);
  }
  if (d->failed)
    return ooc_err_set(err, OOC_EINVAL, "report: %" PRId64 " points failed "
                       "(the report leaves them out); first: %s", d->failed,
                       d->note);
  return OOC_OK;
}

int
ooc_report_run(const ooc_report_opts *o, ooc_report_info *info,
               ooc_err *err)
{
  ooc_report_data d;
  char path[4096];
  double t0 = ooc_wall_s();
  int rc, lock = -1;

  *info = (ooc_report_info){ .wall_s = 0 };
  if (!o->model || !o->hw || o->batch < 1 || !o->dir)
    return ooc_err_set(err, OOC_EINVAL, "report needs -m MODEL, -b BATCH, "
                       "--hw HW and -o DIR");
  /* Every option checked before the folder is made: bad input leaves
   * nothing behind. */
  ooc_report_data_init(&d);
  if ((rc = ooc_report_load(o, &d, err))) {
    ooc_report_data_fini(&d);
    return rc;
  }
  /* Two reports into one folder would mix their files: one at a time. */
  if ((rc = ooc_sweep_mkdir(o->dir, err)) ||
      (rc = ooc_dir_lock(o->dir, &lock, err))) {
    ooc_report_data_fini(&d);
    return rc;
  }
  snprintf(path, sizeof path, "%s/data", o->dir);
  if ((rc = ooc_sweep_mkdir(path, err))) {
    ooc_report_data_fini(&d);
    ooc_dir_unlock(o->dir, lock);
    return rc;
  }
  if (!(rc = ooc_report_clear(o, err)) &&
      !(rc = ooc_report_collect(o, &d, err)) &&
      !(rc = ooc_report_draw(o, &d, err)))
    rc = ooc_report_write(o, &d, info, err);
  info->wall_s = ooc_wall_s() - t0;
  info->plots_drawn = d.pl.drawn;
  if (!rc)
    rc = final_status(o, &d, err);
  ooc_report_data_fini(&d);
  ooc_dir_unlock(o->dir, lock);
  return rc;
}
