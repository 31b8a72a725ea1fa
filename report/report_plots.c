/* report/report_plots.c — the report's plots (report_parts.h): throughput,
 * bandwidth and maxbatch from the sweeps' CSVs, then the winner run once
 * more with a trace for its memory curve and timeline.
 *
 * A plot that cannot be drawn (gnuplot missing or failing) is counted and
 * the report goes on; the document says why the image is missing. Each
 * plot's gnuplot data (.dat) moves to DIR/data/, so DIR holds the report
 * and its images only.
 *
 * Ownership: the winner's program, trace and model live for one call.
 * Cost: one gnuplot process per plot and one traced simulation.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "report/report_parts.h"
#include "report/plot.h"
#include "report/trace_out.h"
#include "analysis/scenario.h"

const char *const ooc_report_plot_files[OOC_REPORT_PLOTS] = {
  "throughput.png", "bandwidth.png", "maxbatch.png", "memory.png",
  "gantt.png",
};

const char *
ooc_report_plot_why(const ooc_report_plots *pl, const char *file)
{
  for (int k = 0; k < OOC_REPORT_PLOTS; k++)
    if (strcmp(ooc_report_plot_files[k], file) == 0 && pl->why[k][0])
      return pl->why[k];
  return pl->first_msg;
}

/* msg with the first "from" replaced by "to" (the .dat moved to data/),
 * into out. */
static void
moved(char *out, size_t n, const char *msg, const char *from, const char *to)
{
  const char *at = strstr(msg, from);

  if (at == NULL)
    snprintf(out, n, "%s", msg);
  else
    snprintf(out, n, "%.*s%s%s", (int)(at - msg), msg, to,
             at + strlen(from));
}

/* Draw one plot into DIR/PNG; counts it and keeps the first failure and
 * its own. */
static void
draw(ooc_report_plots *pl, ooc_plot_kind k, const char *in, const char *dir,
     const char *png, const ooc_plot_opts *po)
{
  char out[4096], dat[4096], to[4096];
  const char *ext = strrchr(png, '.');
  int n = ext ? (int)(ext - png) : (int)strlen(png);
  ooc_err e = { 0 };
  int rc;

  snprintf(out, sizeof out, "%s/%s", dir, png);
  rc = ooc_plot_draw(k, in, out, po, &e);
  /* The gnuplot data (OUT.dat) goes to data/ with the other data. */
  snprintf(dat, sizeof dat, "%s/%.*s.dat", dir, n, png);
  snprintf(to, sizeof to, "%s/data/%.*s.dat", dir, n, png);
  if (access(dat, F_OK) == 0 && rename(dat, to) != 0 && rc == OOC_OK)
    rc = ooc_err_set(&e, OOC_EIO, "cannot move '%s' to '%s': %s", dat, to,
                     strerror(errno));
  if (rc == OOC_OK) {
    pl->drawn++;
    return;
  }
  if (rc == OOC_EUNSUP)
    pl->missing++;
  else
    pl->failed++;
  for (int f = 0; f < OOC_REPORT_PLOTS; f++)
    if (strcmp(ooc_report_plot_files[f], png) == 0)
      moved(pl->why[f], sizeof pl->why[f], e.msg, dat, to);
  if (!pl->first_rc) {
    pl->first_rc = rc;
    moved(pl->first_msg, sizeof pl->first_msg, e.msg, dat, to);
  }
}

/* data/memory.csv and data/timeline.csv of the winner's traced run, and
 * their plots; the winner's compute stalls go to d->win_stall_s. */
static int
draw_winner(const ooc_report_opts *o, ooc_report_data *d, ooc_err *err)
{
  const ooc_table *thr = &d->thr;
  ooc_program prog;
  ooc_trace tr;
  ooc_summary sum;
  ooc_model *wm = NULL;
  ooc_scenario_out so;
  char mem[4096], tl[4096], ttl[256];
  ooc_scenario_spec spec = {
    .model = o->model, .batch = o->batch, .sets = o->sets,
    .n_sets = o->n_sets, .hw = o->hw,
    .hw_sets = o->hw_sets, .n_hw_sets = o->n_hw_sets,
    .dtype_set = d->model->precision == OOC_PREC_NONE,
    .dtype = d->model->dtype, .precision = d->model->precision,
    .optimizer = d->model->optimizer,
    .planner = ts(thr, d->win, "planner"),
    .allocator = o->allocator,
    .budget = (uint64_t)tv(thr, d->win, "budget_bytes"),
    .steady = o->steady,
  };
  int rc;

  ooc_program_init(&prog);
  ooc_trace_init(&tr);
  so = (ooc_scenario_out){ .program = &prog, .trace = &tr, .model = &wm };
  rc = ooc_scenario_run(&spec, &sum, &so, err);
  if (!rc) {
    snprintf(mem, sizeof mem, "%s/data/memory.csv", o->dir);
    snprintf(tl, sizeof tl, "%s/data/timeline.csv", o->dir);
    rc = ooc_trace_save_mem_csv(mem, &tr, err);
    if (!rc)
      rc = ooc_trace_save_timeline(tl, wm, &prog, &tr, err);
    if (!rc) {
      snprintf(ttl, sizeof ttl, "Device memory over one iteration: %s",
               sum.planner);
      draw(&d->pl, OOC_PLOT_MEMORY, mem, o->dir, "memory.png",
           &(ooc_plot_opts){ .title = ttl, .budget = sum.budget_bytes,
                             .allocator = sum.allocator });
      for (int st = 0; st < OOC_STALL_COUNT; st++)
        d->win_stall_s += sum.stall_s[st];
      snprintf(ttl, sizeof ttl, "Timeline of one iteration: %s%s",
               sum.planner, d->win_stall_s > 0 ? " (red: compute stalls)"
                                               : " (no compute stalls)");
      draw(&d->pl, OOC_PLOT_GANTT, tl, o->dir, "gantt.png",
           &(ooc_plot_opts){ .title = ttl });
    }
    /* Per tensor class, what it does and what that costs ("Winner and
     * why"), from the same plan: the explanation takes the summary. */
    if (!rc)
      rc = ooc_explain_program(&spec, &prog, wm, &sum, &d->win_explain,
                               err);
    ooc_summary_fini(&sum);
  }
  ooc_model_free(wm);
  ooc_trace_fini(&tr);
  ooc_program_fini(&prog);
  return rc;
}

int
ooc_report_clear(const ooc_report_opts *o, ooc_err *err)
{
  char path[4096];

  for (int k = -2; k < OOC_REPORT_PLOTS; k++) {
    snprintf(path, sizeof path, "%s/%s", o->dir,
             k == -2 ? "report.html" : k == -1 ? "report.md"
                                                : ooc_report_plot_files[k]);
    if (unlink(path) != 0 && errno != ENOENT)
      return ooc_err_set(err, OOC_EIO, "cannot remove the old '%s': %s",
                         path, strerror(errno));
  }
  /* Without the maxbatch search, an earlier report's would be left in
   * data/ describing other planners or another scenario. */
  for (int k = 0; !o->maxbatch && k < 6; k++) {
    static const char *const mb[6] = {
      "data/maxbatch/results.csv", "data/maxbatch/results.json",
      "data/maxbatch/grid.json", "data/maxbatch/.oocsim.lock",
      "data/maxbatch.dat", "data/maxbatch" };
    snprintf(path, sizeof path, "%s/%s", o->dir, mb[k]);
    /* The folder stays when it holds files of the user's. */
    if ((k < 5 ? unlink(path) : rmdir(path)) != 0 && errno != ENOENT &&
        errno != ENOTEMPTY && errno != EEXIST)
      return ooc_err_set(err, OOC_EIO, "cannot remove the old '%s': %s",
                         path, strerror(errno));
  }
  return OOC_OK;
}

int
ooc_report_draw(const ooc_report_opts *o, ooc_report_data *d, ooc_err *err)
{
  char path[4096];

  snprintf(path, sizeof path, "%s/data/throughput/results.csv", o->dir);
  draw(&d->pl, OOC_PLOT_THROUGHPUT, path, o->dir, "throughput.png",
       &(ooc_plot_opts){ .title = NULL });
  for (int64_t r = 0; r < d->bw.nrows; r++)
    d->bw_any |= feasible(&d->bw, r);
  snprintf(path, sizeof path, "%s/data/bandwidth/results.csv", o->dir);
  if (d->bw_any)
    draw(&d->pl, OOC_PLOT_BANDWIDTH, path, o->dir, "bandwidth.png",
         &(ooc_plot_opts){ .title = NULL });
  if (d->have_mb) {
    snprintf(path, sizeof path, "%s/data/maxbatch/results.csv", o->dir);
    draw(&d->pl, OOC_PLOT_MAXBATCH, path, o->dir, "maxbatch.png",
         &(ooc_plot_opts){ .title = NULL });
  }
  return d->win >= 0 ? draw_winner(o, d, err) : OOC_OK;
}
