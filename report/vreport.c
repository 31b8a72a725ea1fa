/* report/vreport.c — the validation report (vreport.h): results.json,
 * report.md, report.html, and three kinds of plot drawn by gnuplot from
 * data files under DIR/data.
 *
 * Ownership: everything is local to one call. Cost: linear in the spans
 * of the kept traces; one gnuplot process per plot.
 */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report/vreport.h"
#include "report/doc.h"
#include "report/plot.h"
#include "report/sweep.h"
#include "base/atomic.h"
#include "base/util.h"

#define HIST_BINS 41            /* 2.5% bins over [-51.25%, 51.25%] */

static int
write_text(const char *dir, const char *name, const char *text, ooc_err *err)
{
  char path[4096];

  snprintf(path, sizeof path, "%s/%s", dir, name);
  return ooc_atomic_write(path, text, err);
}

/* Open DIR/data/NAME for writing (atomically). */
static int
open_data(ooc_atomic_file *af, const char *dir, const char *name,
          char *path, size_t n, ooc_err *err)
{
  snprintf(path, n, "%s/data/%s", dir, name);
  return ooc_atomic_open(af, path, err);
}

/* Draw one plot; a failure to draw is counted, not fatal. */
static int
draw(const char *script, const char *dat, const char *dir, const char *png,
     const char *vars, int *missing, ooc_err *first)
{
  char out[4096];
  ooc_err e = { 0 };
  int rc;

  snprintf(out, sizeof out, "%s/%s", dir, png);
  rc = ooc_plot_script(script, dat, out, vars, &e);
  if (rc < 0) {
    (*missing)++;
    if (first->code == 0)
      *first = e;
  }
  return rc;
}

/* A planner name as a file name part: letters, digits, '-', '_'. */
static void
file_part(char *dst, size_t n, const char *s)
{
  size_t k = 0;

  for (; *s != '\0' && k + 1 < n; s++)
    dst[k++] = (char)((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') ||
                      (*s >= '0' && *s <= '9') || *s == '-' || *s == '_'
                          ? *s : '_');
  dst[k] = '\0';
}

static int
timeline_data(const ooc_validate_row *r, FILE *f, double *tmax)
{
  const ooc_trace *tr[2] = { &r->m->predicted_trace, &r->m->measured_trace };
  int b, i;

  *tmax = 0;
  for (b = 0; b < 2; b++) {
    for (i = 0; i < tr[b]->n_spans; i++) {
      const ooc_span *s = &tr[b]->spans[i];
      int lane;
      double y;
      if (s->instr < 0 || s->instr >= r->m->n_lane ||
          (lane = r->m->lane[s->instr]) > 2)
        continue;
      y = 3 - lane;
      fprintf(f, "%.6f %.6f %.2f %.2f\n", (double)s->start_ns * 1e-6,
              (double)s->end_ns * 1e-6, b == 0 ? y : y - 0.36,
              b == 0 ? y + 0.36 : y);
      if ((double)s->end_ns * 1e-6 > *tmax)
        *tmax = (double)s->end_ns * 1e-6;
    }
    fprintf(f, "%s", b == 0 ? "\n\n" : "\n");
  }
  return ferror(f) ? -1 : 0;
}

static void
histogram(const ooc_measure *m, int64_t *bins)
{
  int32_t i;

  memset(bins, 0, sizeof(int64_t) * HIST_BINS);
  for (i = 0; i < m->n_op_errors; i++) {
    double pc = 100 * m->op_errors[i];
    long k = lround(pc / 2.5) + HIST_BINS / 2;
    bins[k < 0 ? 0 : k >= HIST_BINS ? HIST_BINS - 1 : k]++;
  }
}

static int
both(const ooc_validate_row *r)
{
  return r->feasible_predicted && r->feasible_measured;
}

static void
pct(char *buf, size_t n, int ok, double x)
{
  if (ok)
    snprintf(buf, n, "%+.1f%%", 100 * x);
  else
    snprintf(buf, n, "-");
}

/* s for the report being written: HTML-escaped for the HTML one (a model
 * or profile name, an error message may hold markup), for the Markdown
 * with '<' as its entity (renderers that allow HTML would run it); kept
 * in pool (up to 16 strings, freed by pool_free), "" when out of memory
 * or full. */
struct pool {
  char *s[16];
  int n;
};

static const char *
txt(struct pool *pl, const char *s, int html)
{
  char *buf = NULL;
  size_t len = 0;
  FILE *f;

  if (s == NULL)
    return "";
  if (!html && strchr(s, '<') == NULL)
    return s;
  if (pl->n == 16 || (f = open_memstream(&buf, &len)) == NULL)
    return "";
  if (html)
    ooc_doc_html_esc(f, s);
  else
    for (; *s != '\0'; s++)
      fputs(*s == '<' ? "&lt;" : (char[2]){ *s, '\0' }, f);
  if (fclose(f) != 0) {
    free(buf);
    return "";
  }
  return pl->s[pl->n++] = buf;
}

static void
pool_free(struct pool *pl)
{
  for (int i = 0; i < pl->n; i++)
    free(pl->s[i]);
  pl->n = 0;
}

/* The Markdown report (html 0) or the body of the HTML one (html 1). */
static char *
report_text(const ooc_validate *v, int html, const int *drawn_tl,
            int drawn_iter, int drawn_hist)
{
  char *buf = NULL, b1[32], b2[32], e1[16], e2[16], e3[16], fp[96];
  char s1[24], s2[24];
  size_t len = 0;
  FILE *f = open_memstream(&buf, &len);
  struct pool pl = { .n = 0 };
  const char *model, *hw;
  int i;

  if (f == NULL)
    return NULL;
  model = txt(&pl, v->model, html);
  hw = txt(&pl, v->hw, html);
  if (html)
    fprintf(f, "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\">"
            "<title>oocsim validate: %s</title>\n<style>body{font-family:"
            "sans-serif;max-width:1100px;margin:2em auto;color:#222}"
            "table{border-collapse:collapse}td,th{border:1px solid #ccc;"
            "padding:3px 8px;text-align:right}th{background:#f4f4f4}"
            "td:first-child{text-align:left}img{max-width:100%%}</style>"
            "</head><body>\n<h1>Validation: %s, batch %lld on %s</h1>\n",
            model, model, (long long)v->batch, hw);
  else
    fprintf(f, "# Validation: %s, batch %lld on %s\n\n", model,
            (long long)v->batch, hw);
  fprintf(f, html ? "<p>" : "");
  fprintf(f, "Each planner's plan was simulated with profile `%s` and "
          "replayed on the **%s** backend (%s) under budget %s with the "
          "%s allocator: %d warm-up and %d timed iterations, the median "
          "reported%s.%s",
          hw, txt(&pl, v->backend, html), txt(&pl, v->note, html),
          ooc_fmt_bytes(v->budget_bytes, b1, sizeof b1),
          txt(&pl, v->allocator, html),
          v->warmup, v->iterations,
          v->link_GBps > 0 ? "; copies paced to the link rate" : "",
          html ? "</p>\n" : "\n\n");
  if (v->link_GBps > 0)
    fprintf(f, "%sLink: %.3g GB/s per direction (profile and pacing).%s",
            html ? "<p>" : "", v->link_GBps, html ? "</p>\n" : "\n\n");
  if (v->n_compared > 0)
    fprintf(f, "%sMean |iteration error| %.2f%%, max %.2f%%; peak reserved "
            "off by at most %.3f%%.%s", html ? "<p><b>" : "**",
            100 * v->mean_abs_iteration_error,
            100 * v->max_abs_iteration_error, 100 * v->max_abs_peak_error,
            html ? "</b></p>\n" : "**\n\n");
  if (html)
    fprintf(f, "<table><tr><th>planner</th><th>predicted s</th>"
            "<th>measured s</th><th>error</th><th>stall pred / meas s</th>"
            "<th>peak reserved pred / meas</th><th>op error median / p95"
            "</th><th>swaps</th><th>integrity</th></tr>\n");
  else
    fprintf(f, "| planner | predicted s | measured s | error | stall pred / "
            "meas s | peak reserved pred / meas | op error median / p95 | "
            "swaps | integrity |\n|---|---:|---:|---:|---:|---:|---:|---:|"
            "---|\n");
  for (i = 0; i < v->n_rows; i++) {
    const ooc_validate_row *r = &v->rows[i];
    pct(e1, sizeof e1, both(r), r->iteration_error);
    snprintf(e2, sizeof e2, both(r) ? "%.1f%%" : "-",
             100 * r->op_error_median);
    snprintf(e3, sizeof e3, both(r) ? "%.1f%%" : "-", 100 * r->op_error_p95);
    /* As in results.json: what was not measured (or predicted) is "-". */
    ooc_fmt_bytes(r->predicted_peak_reserved_bytes, b1, sizeof b1);
    if (r->feasible_predicted)
      ooc_fmt_bytes(r->measured_peak_reserved_bytes, b2, sizeof b2);
    else
      snprintf(b2, sizeof b2, "-");
    snprintf(s1, sizeof s1, r->feasible_predicted ? "%.4f" : "-",
             r->predicted_stall_s);
    snprintf(s2, sizeof s2, r->feasible_measured ? "%.4f" : "-",
             r->measured_stall_s);
    fprintf(f, html ? "<tr><td>%s</td><td>" : "| %s | ",
            txt(&pl, r->planner, html));
    if (r->feasible_predicted)
      fprintf(f, "%.4f", r->predicted_iteration_s);
    else
      fprintf(f, r->refused ? "-" : "OOM");
    fprintf(f, html ? "</td><td>" : " | ");
    if (r->feasible_measured)
      fprintf(f, "%.4f", r->measured_iteration_s);
    else
      fprintf(f, r->feasible_predicted ? "OOM" : "-");
    if (r->refused) {           /* no plan or no run: nothing to show */
      fprintf(f, html ? "</td><td>-</td><td>-</td><td>-</td><td>-</td>"
                        "<td>-</td><td>FAILED: %s</td></tr>\n"
                      : " | - | - | - | - | - | FAILED: %s |\n",
              txt(&pl, r->integrity, html));
      pool_free(&pl);
      continue;
    }
    /* Integrity: checked only on a run to the end; a plan predicted to
     * run out of memory is not run, which is no failure. */
    fprintf(f, html ? "</td><td>%s</td><td>%s / %s</td><td>%s / %s"
                      "</td><td>%s / %s</td><td>%d</td><td>%s%s</td></tr>\n"
                    : " | %s | %s / %s | %s / %s | %s / %s | %d | %s%s "
                      "|\n",
            e1, s1, s2, b1, b2, e2, e3, r->counts[1],
            !r->feasible_predicted ? ""
            : r->feasible_measured && r->integrity_ok ? "ok: " : "FAILED: ",
            txt(&pl, r->integrity, html));
    pool_free(&pl);
  }
  fprintf(f, html ? "</table>\n" : "\n");
  fprintf(f, html ? "<p>" : "");
  fprintf(f, "Errors are (measured - predicted) / measured. The per-op "
          "error is over the kernels and copies of the last timed "
          "iteration. Stall is the time the compute stream waits inside "
          "the iteration. Integrity compares every weight and weight "
          "gradient after the run with the in-core plan's.%s",
          html ? "</p>\n" : "\n\n");
  if (drawn_iter)
    fprintf(f, html ? "<h2>Iteration time</h2>\n<img src=\"iteration.png\" "
                      "alt=\"iteration time per planner\">\n"
                    : "## Iteration time\n\n![iteration time per planner]"
                      "(iteration.png)\n\n");
  if (drawn_hist)
    fprintf(f, html ? "<h2>Per-op error</h2>\n<img src=\"op-errors.png\" "
                      "alt=\"per-op error histogram\">\n"
                    : "## Per-op error\n\n![per-op error histogram]"
                      "(op-errors.png)\n\n");
  for (i = 0; i < v->n_rows; i++) {
    if (!drawn_tl[i])
      continue;
    file_part(fp, sizeof fp, v->rows[i].planner);
    if (html)
      fprintf(f, "<h2>Timeline: %s</h2>\n<img src=\"timeline-%s.png\" "
              "alt=\"%s predicted over measured\">\n", v->rows[i].planner,
              fp, v->rows[i].planner);
    else
      fprintf(f, "## Timeline: %s\n\n![%s predicted over measured]"
              "(timeline-%s.png)\n\n", v->rows[i].planner,
              v->rows[i].planner, fp);
  }
  if (html)
    fprintf(f, "<p>Data: <a href=\"results.json\">results.json</a>, "
            "data/*.dat.</p>\n</body></html>\n");
  else
    fprintf(f, "Data: `results.json`, `data/*.dat`.\n");
  pool_free(&pl);
  if (fclose(f) != 0) {
    free(buf);
    return NULL;
  }
  return buf;
}

int
ooc_vreport_write(const ooc_validate *v, const char *dir, int *plots_missing,
                  ooc_err *err)
{
  ooc_atomic_file af;
  ooc_err first = { 0 };
  char path[4096], data[4096], name[160], fp[96], vars[2048], *text = NULL;
  char title[512], q[1100];
  int *drawn_tl = NULL, drawn_iter = 0, drawn_hist = 0, i, rc, n_hist = 0;
  int64_t bins[HIST_BINS];

  *plots_missing = 0;
  snprintf(data, sizeof data, "%s/data", dir);
  if ((rc = ooc_sweep_mkdir(dir, err)) < 0 ||
      (rc = ooc_sweep_mkdir(data, err)) < 0)
    return ooc_err_prefix(err, rc, "-o: ");
  if ((drawn_tl = calloc((size_t)v->n_rows + 1, sizeof *drawn_tl)) == NULL)
    return ooc_err_set(err, OOC_ENOMEM, "out of memory");
  if ((text = ooc_validate_json(v)) == NULL) {
    rc = ooc_err_set(err, OOC_ENOMEM, "out of memory");
    goto done;
  }
  if ((rc = write_text(dir, "results.json", text, err)) < 0)
    goto done;
  free(text);
  text = NULL;

  /* Iteration time per planner. */
  if ((rc = open_data(&af, dir, "iteration.dat", path, sizeof path, err)) < 0)
    goto done;
  fprintf(af.f, "planner predicted_s measured_s min_s max_s error\n");
  for (i = 0; i < v->n_rows; i++) {
    const ooc_validate_row *r = &v->rows[i];
    if (!both(r))
      continue;
    fprintf(af.f, "%s %.9g %.9g %.9g %.9g %.6f\n", r->planner,
            r->predicted_iteration_s, r->measured_iteration_s,
            r->m != NULL ? (double)r->m->exec.min_iteration_ns * 1e-9
                         : r->measured_iteration_s,
            r->m != NULL ? (double)r->m->exec.max_iteration_ns * 1e-9
                         : r->measured_iteration_s,
            r->iteration_error);
    drawn_iter = 1;
  }
  if ((rc = ooc_atomic_commit(&af, err)) < 0)
    goto done;
  if (drawn_iter) {
    snprintf(title, sizeof title, "%s, batch %lld: iteration predicted "
             "and measured", v->model, (long long)v->batch);
    ooc_plot_quote(q, sizeof q, title);
    snprintf(vars, sizeof vars, "plottitle=%s; ", q);
    drawn_iter = draw("verrors", path, dir, "iteration.png", vars,
                      plots_missing, &first) == OOC_OK;
  }

  /* Per-op error histogram, a block per planner. */
  if ((rc = open_data(&af, dir, "op-errors.dat", path, sizeof path, err)) < 0)
    goto done;
  snprintf(vars, sizeof vars, "names='");
  for (i = 0; i < v->n_rows; i++) {
    const ooc_validate_row *r = &v->rows[i];
    int k;
    if (!both(r) || r->m == NULL || r->m->n_op_errors == 0)
      continue;
    histogram(r->m, bins);
    for (k = 0; k < HIST_BINS; k++)
      fprintf(af.f, "%.2f %lld\n", (k - HIST_BINS / 2) * 2.5,
              (long long)bins[k]);
    fprintf(af.f, "\n\n");
    if (strlen(vars) + strlen(r->planner) + 8 < sizeof vars)
      strcat(strcat(vars, n_hist > 0 ? " " : ""), r->planner);
    n_hist++;
  }
  strcat(vars, "'; ");
  if ((rc = ooc_atomic_commit(&af, err)) < 0)
    goto done;
  if (n_hist > 0) {
    snprintf(title, sizeof title, "%s, batch %lld: per-op error", v->model,
             (long long)v->batch);
    ooc_plot_quote(q, sizeof q, title);
    snprintf(vars + strlen(vars), sizeof vars - strlen(vars),
             "plottitle=%s; ", q);
    drawn_hist = draw("vhist", path, dir, "op-errors.png", vars,
                      plots_missing, &first) == OOC_OK;
  }

  /* Timelines. */
  for (i = 0; i < v->n_rows; i++) {
    const ooc_validate_row *r = &v->rows[i];
    double tmax;
    if (!both(r) || r->m == NULL || r->m->n_lane == 0)
      continue;
    file_part(fp, sizeof fp, r->planner);
    snprintf(name, sizeof name, "timeline-%s.dat", fp);
    if ((rc = open_data(&af, dir, name, path, sizeof path, err)) < 0)
      goto done;
    timeline_data(r, af.f, &tmax);
    if ((rc = ooc_atomic_commit(&af, err)) < 0)
      goto done;
    snprintf(title, sizeof title, "%s: predicted (upper) and measured "
             "(lower)", r->planner);
    ooc_plot_quote(q, sizeof q, title);
    snprintf(vars, sizeof vars, "tmax=%.6f; pred_ms=%.6f; meas_ms=%.6f; "
             "plottitle=%s; ",
             fmax(tmax, 1e3 * fmax(r->predicted_iteration_s,
                                   r->measured_iteration_s)) * 1.02,
             1e3 * r->predicted_iteration_s, 1e3 * r->measured_iteration_s,
             q);
    snprintf(name, sizeof name, "timeline-%s.png", fp);
    drawn_tl[i] = draw("vtimeline", path, dir, name, vars, plots_missing,
                       &first) == OOC_OK;
  }

  if ((text = report_text(v, 0, drawn_tl, drawn_iter, drawn_hist)) == NULL ||
      (rc = write_text(dir, "report.md", text, err)) < 0) {
    if (text == NULL)
      rc = ooc_err_set(err, OOC_ENOMEM, "out of memory");
    goto done;
  }
  free(text);
  if ((text = report_text(v, 1, drawn_tl, drawn_iter, drawn_hist)) == NULL ||
      (rc = write_text(dir, "report.html", text, err)) < 0) {
    if (text == NULL)
      rc = ooc_err_set(err, OOC_ENOMEM, "out of memory");
    goto done;
  }
  rc = OOC_OK;
  if (*plots_missing > 0) {
    *err = first;
    rc = first.code == OOC_EUNSUP ? OOC_EUNSUP : OOC_EIO;
  }
done:
  free(text);
  free(drawn_tl);
  return rc;
}
