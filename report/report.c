/* report/report.c — the planner comparison report: report.md and a
 * self-contained report.html (report.h).
 *
 * Every figure comes from sweeps run through sweep.h (their CSVs are kept
 * under DIR/data/) and from one traced run of the winner; the text that
 * explains the winner is built from those figures, never written by hand.
 * Markdown and HTML are written side by side through a tiny document layer
 * (headings, paragraphs, lists, tables, images), so both say the same.
 *
 * Owner: report helper. Cost: see report.h; the document itself is linear
 * in the number of planners.
 */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ir/hw.h"
#include "ir/model.h"
#include "base/util.h"
#include "report/plot.h"
#include "report/report.h"
#include "analysis/scenario.h"
#include "report/sweep.h"
#include "report/trace_out.h"

/* ---- document layer -------------------------------------------------------- */

typedef struct doc {
  FILE *md, *html;
} doc;

static void
html_esc(FILE *f, const char *s)
{
  for (; *s; s++) {
    switch (*s) {
    case '<': fputs("&lt;", f); break;
    case '>': fputs("&gt;", f); break;
    case '&': fputs("&amp;", f); break;
    case '"': fputs("&quot;", f); break;
    default: fputc(*s, f);
    }
  }
}

/* Markdown table cells must not contain '|'. */
static void
md_cell(FILE *f, const char *s)
{
  for (; *s; s++)
    fputc(*s == '|' ? '/' : *s == '\n' ? ' ' : *s, f);
}

/* text as a Markdown line (md_pre text md_post) and as an HTML element
 * <tag>text</tag>. */
static void
doc_text(doc *d, const char *md_pre, const char *md_post, const char *tag,
         const char *text)
{
  fprintf(d->md, "%s%s%s", md_pre, text, md_post);
  fprintf(d->html, "<%s>", tag);
  html_esc(d->html, text);
  fprintf(d->html, "</%s>\n", tag);
}

static void
doc_h(doc *d, int level, const char *text)
{
  char pre[16], tag[8];

  snprintf(pre, sizeof pre, "\n%.*s ", level, "######");
  snprintf(tag, sizeof tag, "h%d", level);
  doc_text(d, pre, "\n\n", tag, text);
}

static void
doc_p(doc *d, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void
doc_p(doc *d, const char *fmt, ...)
{
  char buf[4096];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  doc_text(d, "", "\n\n", "p", buf);
}

static void
doc_ul(doc *d, int open)
{
  if (open)
    fputs("<ul>\n", d->html);
  else {
    fputs("</ul>\n", d->html);
    fputs("\n", d->md);
  }
}

static void
doc_li(doc *d, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void
doc_li(doc *d, const char *fmt, ...)
{
  char buf[2048];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  doc_text(d, "- ", "\n", "li", buf);
}

static void
doc_table_head(doc *d, int n, const char *const *h)
{
  fputs("|", d->md);
  for (int i = 0; i < n; i++) {
    fputc(' ', d->md);
    md_cell(d->md, h[i]);
    fputs(" |", d->md);
  }
  fputs("\n|", d->md);
  for (int i = 0; i < n; i++)
    fputs(i ? "---:|" : "---|", d->md);
  fputs("\n", d->md);
  fputs("<table>\n<tr>", d->html);
  for (int i = 0; i < n; i++) {
    fputs("<th>", d->html);
    html_esc(d->html, h[i]);
    fputs("</th>", d->html);
  }
  fputs("</tr>\n", d->html);
}

/* A row; `mark` highlights it (the winner). */
static void
doc_table_row(doc *d, int n, char cells[][96], int mark)
{
  fputs("|", d->md);
  for (int i = 0; i < n; i++) {
    fputs(mark && i == 0 ? " **" : " ", d->md);
    md_cell(d->md, cells[i]);
    fputs(mark && i == 0 ? "** |" : " |", d->md);
  }
  fputs("\n", d->md);
  fputs(mark ? "<tr class=\"win\">" : "<tr>", d->html);
  for (int i = 0; i < n; i++) {
    fputs(i ? "<td class=\"n\">" : "<td>", d->html);
    html_esc(d->html, cells[i]);
    fputs("</td>", d->html);
  }
  fputs("</tr>\n", d->html);
}

static void
doc_table_end(doc *d)
{
  fputs("\n", d->md);
  fputs("</table>\n", d->html);
}

/* An image beside the report, or a note saying why it is not there. */
static void
doc_img(doc *d, const char *dir, const char *file, const char *alt,
        const char *missing)
{
  char path[4096];
  snprintf(path, sizeof path, "%s/%s", dir, file);
  if (access(path, R_OK) == 0) {
    fprintf(d->md, "![%s](%s)\n\n", alt, file);
    fputs("<figure><img src=\"", d->html);
    html_esc(d->html, file);
    fputs("\" alt=\"", d->html);
    html_esc(d->html, alt);
    fputs("\"><figcaption>", d->html);
    html_esc(d->html, alt);
    fputs("</figcaption></figure>\n", d->html);
  } else {
    doc_p(d, "(%s: not drawn: %s)", alt, missing);
  }
}

static const char html_head[] =
"<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
"<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
"<title>%s</title>\n<style>\n"
"body{font-family:-apple-system,'Segoe UI',Helvetica,Arial,sans-serif;"
"max-width:1000px;margin:2em auto;padding:0 1em;color:#222;line-height:1.5}\n"
"h1{border-bottom:2px solid #1f77b4;padding-bottom:.2em}\n"
"h2{margin-top:1.8em;border-bottom:1px solid #ddd}\n"
"table{border-collapse:collapse;margin:1em 0;font-size:.85em;"
"display:block;overflow-x:auto;max-width:100%%}\n"
"th,td{border:1px solid #ccc;padding:.3em .6em}\n"
"th{background:#f0f4f8;text-align:left}\n"
"td.n{text-align:right;font-variant-numeric:tabular-nums}\n"
"tr.win td{background:#e8f5e9;font-weight:600}\n"
"figure{margin:1em 0}img{max-width:100%%;border:1px solid #eee}\n"
"figcaption{color:#666;font-size:.9em}\n"
"footer{margin-top:3em;color:#888;font-size:.85em}\n"
"</style>\n</head>\n<body>\n";

/* ---- table access ------------------------------------------------------------- */

static double
tv(const ooc_table *t, int64_t r, const char *col)
{
  int c = ooc_table_col(t, col);
  char *e;
  double v;
  if (c < 0 || r < 0 || r >= t->nrows || !t->rows[r][c][0])
    return NAN;
  v = strtod(t->rows[r][c], &e);
  return *e ? NAN : v;
}

static const char *
ts(const ooc_table *t, int64_t r, const char *col)
{
  int c = ooc_table_col(t, col);
  return c < 0 || r < 0 || r >= t->nrows ? "" : t->rows[r][c];
}

static int
feasible(const ooc_table *t, int64_t r)
{
  return strcmp(ts(t, r, "feasible"), "1") == 0;
}

/* Row a sorts before row b: feasible before infeasible, then faster. */
static int
row_before(const ooc_table *t, int64_t a, int64_t b)
{
  int fa = feasible(t, a), fb = feasible(t, b);
  if (fa != fb)
    return fa > fb;
  return fa && tv(t, a, "iteration_s") < tv(t, b, "iteration_s");
}

/* Row of planner p (and batch b when b > 0), or -1. */
static int64_t
find_row(const ooc_table *t, const char *p, int64_t b)
{
  for (int64_t r = 0; r < t->nrows; r++)
    if (strcmp(ts(t, r, "planner"), p) == 0 &&
        (b <= 0 || (int64_t)tv(t, r, "batch") == b))
      return r;
  return -1;
}

/* The feasible row with the smallest iteration time among rows at batch b
 * (b <= 0: all rows), -1 if none. Ties keep the first (planner order). */
static int64_t
best_row(const ooc_table *t, int64_t b)
{
  int64_t best = -1;
  for (int64_t r = 0; r < t->nrows; r++) {
    if (!feasible(t, r) || (b > 0 && (int64_t)tv(t, r, "batch") != b))
      continue;
    if (best < 0 || tv(t, r, "iteration_s") < tv(t, best, "iteration_s"))
      best = r;
  }
  return best;
}

static void
fmt_ms(char *b, size_t n, double s)
{
  if (isnan(s))
    snprintf(b, n, "-");
  else
    snprintf(b, n, "%.1f", s * 1e3);
}

static void
fmt_gib(char *b, size_t n, double bytes)
{
  if (isnan(bytes))
    snprintf(b, n, "-");
  else
    snprintf(b, n, "%.2f", bytes / 1073741824.0);
}

/* ---- sweeps ------------------------------------------------------------------------ */

static int
base_grid(const ooc_report_opts *o, const char *planners, ooc_sweep_grid *g,
          ooc_err *err)
{
  int rc;
  ooc_sweep_grid_init(g);
  if ((rc = ooc_sweep_set_model(g, o->model, err)) ||
      (rc = ooc_sweep_parse_hw(g, o->hw, err)) ||
      (rc = ooc_sweep_parse_planners(g, planners, err)) ||
      (rc = ooc_sweep_parse_allocators(g, o->allocator ? o->allocator
                                                       : "caching", err)) ||
      (rc = ooc_sweep_parse_budgets(g, o->budget ? o->budget : "default",
                                    err)))
    return rc;
  for (int i = 0; i < o->n_sets; i++) {
    char kv[512];
    snprintf(kv, sizeof kv, "%s=%s", o->sets[i].key, o->sets[i].value);
    if ((rc = ooc_sweep_add_set(g, kv, err)))
      return rc;
  }
  return OOC_OK;
}

/* Check and run g into DIR/data/NAME; rows in *t. Failed points are noted
 * in *failed (their first error in note). */
static int
run_sweep(const ooc_report_opts *o, ooc_sweep_grid *g, const char *name,
          ooc_table *t, int64_t *failed, char *note, size_t nn, ooc_err *err)
{
  char dir[4096];
  ooc_sweep_opts so = { .jobs = o->jobs, .resume = 0 };
  ooc_sweep_stats st;
  int rc;

  if ((rc = ooc_sweep_grid_check(g, err)))
    return rc;
  snprintf(dir, sizeof dir, "%s/data/%s", o->dir, name);
  so.dir = dir;
  if ((rc = ooc_sweep_run(g, &so, &st, t, err)))
    return rc;
  if (st.failed) {
    *failed += st.failed;
    if (!note[0])
      snprintf(note, nn, "%s: %s", name, st.first_error);
  }
  return OOC_OK;
}

/* Draw one plot; counts it and keeps the first failure. */
struct plots {
  int drawn, missing, failed;
  int first_rc;
  char first_msg[OOC_ERR_MSG_MAX];
};

static void
draw(struct plots *pl, ooc_plot_kind k, const char *in, const char *dir,
     const char *png, const ooc_plot_opts *po)
{
  char out[4096];
  ooc_err e = { 0 };
  int rc;
  snprintf(out, sizeof out, "%s/%s", dir, png);
  rc = ooc_plot_draw(k, in, out, po, &e);
  {
    /* The gnuplot data (OUT.dat) goes to data/ with the other data, so the
     * report directory holds the report and its images only. */
    char dat[4096], to[4096];
    const char *ext = strrchr(png, '.');
    int n = ext ? (int)(ext - png) : (int)strlen(png);
    snprintf(dat, sizeof dat, "%s/%.*s.dat", dir, n, png);
    snprintf(to, sizeof to, "%s/data/%.*s.dat", dir, n, png);
    if (access(dat, F_OK) == 0 && rename(dat, to) != 0 && rc == OOC_OK)
      rc = ooc_err_set(&e, OOC_EIO, "cannot move '%s' to '%s': %s", dat, to,
                       strerror(errno));
  }
  if (rc == OOC_OK) {
    pl->drawn++;
    return;
  }
  if (rc == OOC_EUNSUP)
    pl->missing++;
  else
    pl->failed++;
  if (!pl->first_rc) {
    pl->first_rc = rc;
    snprintf(pl->first_msg, sizeof pl->first_msg, "%s", e.msg);
  }
}

/* ---- the report ---------------------------------------------------------------------- */

/* The what-if links, slowest first (the table reads top to bottom). */
static const char *const link_profiles[] = {
  "v100-pcie3", "a100-pcie4", "h100-pcie5", "v100-nvlink2", "gh200-c2c", NULL
};

/* Overheads of row r, in seconds, in a fixed order. */
enum { OV_RECOMP, OV_SWAPIN, OV_SWAPOUT, OV_OTHER, OV_ALLOC, OV_COUNT };
static const char *const ov_names[OV_COUNT] = {
  "recompute", "stalls waiting for swap-in",
  "stalls waiting for a swap-out to free memory", "other stalls",
  "allocator calls"
};

static void
overheads(const ooc_table *t, int64_t r, double *ov)
{
  ov[OV_RECOMP] = tv(t, r, "recompute_s");
  ov[OV_SWAPIN] = tv(t, r, "stall_swapin_s");
  ov[OV_SWAPOUT] = tv(t, r, "stall_swapout_s");
  ov[OV_OTHER] = tv(t, r, "stall_other_s");
  ov[OV_ALLOC] = tv(t, r, "alloc_s");
  for (int i = 0; i < OV_COUNT; i++)
    if (isnan(ov[i]))
      ov[i] = 0;
}

static int
largest(const double *ov)
{
  int m = 0;
  for (int i = 1; i < OV_COUNT; i++)
    if (ov[i] > ov[m])
      m = i;
  return m;
}

/* "stalls waiting for swap-out 252.6 ms, stalls waiting for swap-in
 * 248.2 ms": the overheads of at least 0.5 ms, largest first (at most
 * three); "" when there is none. */
static void
ov_text(const double *ov, char *buf, size_t n)
{
  int used[OV_COUNT] = { 0 };
  size_t k = 0;
  buf[0] = '\0';
  for (int shown = 0; shown < 3; shown++) {
    int m = -1;
    for (int i = 0; i < OV_COUNT; i++)
      if (!used[i] && ov[i] >= 0.5e-3 && (m < 0 || ov[i] > ov[m]))
        m = i;
    if (m < 0)
      break;
    used[m] = 1;
    k += (size_t)snprintf(buf + k, k < n ? n - k : 0, "%s%s %.1f ms",
                          k ? ", " : "", ov_names[m], ov[m] * 1e3);
  }
}

/* Default throughput batches: B/4, B/2, B, 3B/2, 2B (distinct, >= 1). */
static void
default_batches(int64_t b, char *buf, size_t n)
{
  int64_t v[5] = { b / 4, b / 2, b, b + b / 2, 2 * b };
  size_t k = 0;
  int64_t last = 0;
  buf[0] = '\0';
  for (int i = 0; i < 5; i++) {
    if (v[i] < 1 || v[i] <= last)
      continue;
    k += (size_t)snprintf(buf + k, n - k, "%s%" PRId64, k ? "," : "", v[i]);
    last = v[i];
  }
}

int
ooc_report_run(const ooc_report_opts *o, ooc_report_info *info,
               ooc_err *err)
{
  ooc_sweep_grid g;
  ooc_table thr, bw, mb, wi[8];
  int have_mb = 0, n_wi = 0, bw_any = 0, rc;
  const char *wi_name[8];
  int64_t failed = 0, win = -1;
  char note[OOC_ERR_MSG_MAX + 200] = "", path[4096], batches[256];
  char title[512], md_path[4096], html_path[4096];
  ooc_model *model = NULL;
  ooc_hw *hw = NULL;
  ooc_model_opts mo;
  struct plots pl = { 0 };
  doc d = { NULL, NULL };
  double t0 = ooc_wall_s();
  const char *planners = o->planners ? o->planners : "all";
  const char *gp;
  double win_stall_s = 0;

  *info = (ooc_report_info){ .wall_s = 0 };
  ooc_table_init(&thr);
  ooc_table_init(&bw);
  ooc_table_init(&mb);
  if (!o->model || !o->hw || o->batch < 1 || !o->dir)
    return ooc_err_set(err, OOC_EINVAL, "report needs -m MODEL, -b BATCH, "
                       "--hw HW and -o DIR");
  if ((rc = ooc_sweep_mkdir(o->dir, err)))
    return rc;
  snprintf(path, sizeof path, "%s/data", o->dir);
  if ((rc = ooc_sweep_mkdir(path, err)))
    return rc;
  mo = (ooc_model_opts){ .batch = o->batch, .sets = o->sets,
                         .n_sets = o->n_sets };
  if ((rc = ooc_model_load(o->model, &mo, &model, err)))
    return rc;
  if ((rc = ooc_hw_load(o->hw, NULL, 0, &hw, err)))
    goto out;

  /* 1. Throughput around B (contains the comparison at B). */
  if (o->batches)
    snprintf(batches, sizeof batches, "%s", o->batches);
  else
    default_batches(o->batch, batches, sizeof batches);
  if ((rc = base_grid(o, planners, &g, err)) ||
      (rc = ooc_sweep_parse_batches(&g, batches, err))) {
    ooc_sweep_grid_fini(&g);
    goto out;
  }
  {
    int has_b = 0;
    for (int i = 0; i < g.n_batches; i++)
      has_b |= g.batches[i] == o->batch;
    if (!has_b) {
      char b[32];
      snprintf(b, sizeof b, "%" PRId64, o->batch);
      if ((rc = ooc_sweep_parse_batches(&g, b, err))) {
        ooc_sweep_grid_fini(&g);
        goto out;
      }
    }
  }
  rc = run_sweep(o, &g, "throughput", &thr, &failed, note, sizeof note, err);
  ooc_sweep_grid_fini(&g);
  if (rc)
    goto out;
  win = best_row(&thr, o->batch);

  /* 2. Slowdown vs link bandwidth at B: a symmetric full-duplex link. */
  if ((rc = base_grid(o, planners, &g, err)) ||
      (rc = ooc_sweep_add_hwset(&g, "link.h2d_GBps+link.d2h_GBps+"
                                "link.duplex_h2d_GBps+link.duplex_d2h_GBps="
                                "8,16,32,64,128,256,512", err))) {
    ooc_sweep_grid_fini(&g);
    goto out;
  }
  {
    char b[32];
    snprintf(b, sizeof b, "%" PRId64, o->batch);
    rc = ooc_sweep_parse_batches(&g, b, err);
  }
  if (!rc)
    rc = run_sweep(o, &g, "bandwidth", &bw, &failed, note, sizeof note, err);
  ooc_sweep_grid_fini(&g);
  if (rc)
    goto out;

  /* 3. Largest batch per planner on this GPU. */
  if (o->maxbatch) {
    if ((rc = base_grid(o, planners, &g, err))) {
      ooc_sweep_grid_fini(&g);
      goto out;
    }
    g.maxbatch = 1;
    rc = run_sweep(o, &g, "maxbatch", &mb, &failed, note, sizeof note, err);
    ooc_sweep_grid_fini(&g);
    if (rc)
      goto out;
    have_mb = 1;
  }

  /* 4. What-if: this GPU with the host link of each link profile. */
  for (int i = 0; link_profiles[i] && n_wi < 8; i++) {
    ooc_hw *lh = NULL;
    char kv[8][128], b[32];
    if (ooc_hw_load(link_profiles[i], NULL, 0, &lh, NULL) != OOC_OK)
      continue;
    snprintf(kv[0], sizeof kv[0], "link.h2d_GBps=%.6g", lh->h2d_Bps / 1e9);
    snprintf(kv[1], sizeof kv[1], "link.d2h_GBps=%.6g", lh->d2h_Bps / 1e9);
    snprintf(kv[2], sizeof kv[2], "link.h2d_pageable_GBps=%.6g",
             lh->h2d_pageable_Bps / 1e9);
    snprintf(kv[3], sizeof kv[3], "link.d2h_pageable_GBps=%.6g",
             lh->d2h_pageable_Bps / 1e9);
    snprintf(kv[4], sizeof kv[4], "link.duplex_h2d_GBps=%.6g",
             lh->duplex_h2d_Bps / 1e9);
    snprintf(kv[5], sizeof kv[5], "link.duplex_d2h_GBps=%.6g",
             lh->duplex_d2h_Bps / 1e9);
    snprintf(kv[6], sizeof kv[6], "link.latency_us=%.6g",
             (double)lh->copy_latency_ns / 1e3);
    snprintf(kv[7], sizeof kv[7], "link.copy_engines=%d", lh->copy_engines);
    ooc_hw_free(lh);
    rc = base_grid(o, planners, &g, err);
    for (int k = 0; k < 8 && !rc; k++)
      rc = ooc_sweep_add_hwset(&g, kv[k], err);
    snprintf(b, sizeof b, "%" PRId64, o->batch);
    if (!rc)
      rc = ooc_sweep_parse_batches(&g, b, err);
    snprintf(path, sizeof path, "whatif-%s", link_profiles[i]);
    ooc_table_init(&wi[n_wi]);
    if (!rc)
      rc = run_sweep(o, &g, path, &wi[n_wi], &failed, note, sizeof note, err);
    ooc_sweep_grid_fini(&g);
    if (rc) {
      ooc_table_fini(&wi[n_wi]);
      goto out;
    }
    wi_name[n_wi++] = link_profiles[i];
  }

  /* 5. Plots. */
  snprintf(path, sizeof path, "%s/data/throughput/results.csv", o->dir);
  draw(&pl, OOC_PLOT_THROUGHPUT, path, o->dir, "throughput.png",
       &(ooc_plot_opts){ .title = NULL });
  for (int64_t r = 0; r < bw.nrows; r++)
    bw_any |= feasible(&bw, r);
  snprintf(path, sizeof path, "%s/data/bandwidth/results.csv", o->dir);
  if (bw_any)
    draw(&pl, OOC_PLOT_BANDWIDTH, path, o->dir, "bandwidth.png",
         &(ooc_plot_opts){ .title = NULL });
  if (have_mb) {
    snprintf(path, sizeof path, "%s/data/maxbatch/results.csv", o->dir);
    draw(&pl, OOC_PLOT_MAXBATCH, path, o->dir, "maxbatch.png",
         &(ooc_plot_opts){ .title = NULL });
  }
  if (win >= 0) {
    ooc_program prog;
    ooc_trace tr;
    ooc_summary sum;
    ooc_model *wm = NULL;
    ooc_scenario_out so;
    FILE *f;
    char mem[4096], tl[4096], ttl[256];
    ooc_scenario_spec spec = {
      .model = o->model, .batch = o->batch, .sets = o->sets,
      .n_sets = o->n_sets, .hw = o->hw, .planner = ts(&thr, win, "planner"),
      .allocator = o->allocator, .budget = (uint64_t)tv(&thr, win,
                                                        "budget_bytes"),
    };
    ooc_program_init(&prog);
    ooc_trace_init(&tr);
    so = (ooc_scenario_out){ .program = &prog, .trace = &tr, .model = &wm };
    rc = ooc_scenario_run(&spec, &sum, &so, err);
    if (!rc) {
      snprintf(mem, sizeof mem, "%s/data/memory.csv", o->dir);
      snprintf(tl, sizeof tl, "%s/data/timeline.csv", o->dir);
      rc = ooc_trace_save_mem_csv(mem, &tr, err);
      if (!rc) {
        f = fopen(tl, "w");
        if (!f)
          rc = ooc_err_set(err, OOC_EIO, "cannot write '%s': %s", tl,
                           strerror(errno));
        else if (ooc_plot_write_timeline(f, wm, &prog, &tr) | fclose(f))
          rc = ooc_err_set(err, OOC_EIO, "cannot write '%s'", tl);
      }
      if (!rc) {
        snprintf(ttl, sizeof ttl, "Device memory over one iteration: %s",
                 sum.planner);
        draw(&pl, OOC_PLOT_MEMORY, mem, o->dir, "memory.png",
             &(ooc_plot_opts){ .title = ttl, .budget = sum.budget_bytes });
        for (int st = 0; st < OOC_STALL_COUNT; st++)
          win_stall_s += sum.stall_s[st];
        snprintf(ttl, sizeof ttl, "Timeline of one iteration: %s%s",
                 sum.planner, win_stall_s > 0 ? " (red: compute stalls)"
                                              : " (no compute stalls)");
        draw(&pl, OOC_PLOT_GANTT, tl, o->dir, "gantt.png",
             &(ooc_plot_opts){ .title = ttl });
      }
      ooc_summary_fini(&sum);
    }
    ooc_model_free(wm);
    ooc_trace_fini(&tr);
    ooc_program_fini(&prog);
    if (rc)
      goto out;
  }

  /* 6. The document. */
  snprintf(md_path, sizeof md_path, "%s/report.md", o->dir);
  snprintf(html_path, sizeof html_path, "%s/report.html", o->dir);
  d.md = fopen(md_path, "w");
  d.html = fopen(html_path, "w");
  if (!d.md || !d.html) {
    rc = ooc_err_set(err, OOC_EIO, "cannot write '%s': %s",
                     d.md ? html_path : md_path, strerror(errno));
    goto out;
  }
  snprintf(title, sizeof title, "oocsim report: %s, batch %" PRId64 ", %s",
           model->name, o->batch, hw->name);
  fprintf(d.html, html_head, title);
  fprintf(d.md, "# %s\n", title);
  fputs("<h1>", d.html);
  html_esc(d.html, title);
  fputs("</h1>\n", d.html);

  {
    char b1[32], b2[32], b3[32];
    int64_t r0 = thr.nrows ? find_row(&thr, ts(&thr, 0, "planner"), o->batch)
                           : -1;
    double budget = tv(&thr, r0, "budget_bytes");
    double incore = tv(&thr, r0, "incore_iteration_s");
    doc_h(&d, 2, "Scenario");
    doc_ul(&d, 1);
    doc_li(&d, "Model: %s%s%s%s, batch %" PRId64 ", %s; %.1f M parameters; "
           "weights + gradients + optimizer state %s GiB; activations kept "
           "for backward %s GiB", model->name,
           /* the file only when the user named one: a zoo name reads the
            * same on every machine, its install path does not */
           strchr(o->model, '/') ? " (" : "",
           strchr(o->model, '/') ? o->model : "",
           strchr(o->model, '/') ? ")" : "",
           o->batch, ooc_dtype_name(model->dtype),
           (double)model->total_params / 1e6,
           (fmt_gib(b1, sizeof b1, (double)(model->weight_bytes +
                                            model->grad_bytes +
                                            model->opt_bytes)), b1),
           (fmt_gib(b2, sizeof b2, (double)model->activation_bytes), b2));
    doc_li(&d, "Hardware: %s (%s): %s GiB usable device memory; host link "
           "H2D %.1f GB/s, D2H %.1f GB/s pinned, %d copy engine(s)",
           hw->name, hw->gpu, (fmt_gib(b1, sizeof b1,
                                       (double)hw->mem_usable), b1),
           hw->h2d_Bps / 1e9, hw->d2h_Bps / 1e9, hw->copy_engines);
    doc_li(&d, "Budget: %s GiB%s; allocator %s",
           (fmt_gib(b3, sizeof b3, budget), b3),
           o->budget ? "" : " (the profile's usable memory)",
           o->allocator ? o->allocator : "caching");
    doc_li(&d, "Without a memory limit (in-core) one iteration takes %s ms; "
           "training naively needs %s GiB at this batch", (fmt_ms(b2,
           sizeof b2, incore), b2), (fmt_gib(b1, sizeof b1,
           (double)model->naive_peak_bytes), b1));
    doc_ul(&d, 0);
  }

  /* Comparison table. */
  {
    static const char *const head[] = {
      "planner", "feasible", "iteration (ms)", "samples/s", "slowdown",
      "x lower bound", "peak allocated (GiB)", "peak reserved (GiB)",
      "H2D (GiB)", "D2H (GiB)", "recompute (GFLOP)",
      "tensors kept / swapped / recomputed"
    };
    doc_h(&d, 2, "Planners compared");
    doc_p(&d, "Every planner on the scenario above (batch %" PRId64 "). "
          "Slowdown is the iteration time over the in-core time; "
          "\"x lower bound\" is the iteration time over a bound no plan can "
          "beat under this budget (compute, or the bytes that must cross the "
          "link).", o->batch);
    doc_table_head(&d, 12, head);
    /* Rows in the order of `oocsim compare`: fastest first, infeasible
     * last, ties in registry order. */
    int64_t *order = malloc(sizeof *order * (size_t)(thr.nrows ? thr.nrows : 1));
    int64_t n_order = 0;
    if (order == NULL) {
      rc = ooc_err_set(err, OOC_ENOMEM, "out of memory");
      goto out;
    }
    for (int64_t r = 0; r < thr.nrows; r++)
      if ((int64_t)tv(&thr, r, "batch") == o->batch)
        order[n_order++] = r;
    for (int64_t a = 1; a < n_order; a++) /* insertion sort: stable */
      for (int64_t b = a; b > 0 && row_before(&thr, order[b], order[b - 1]);
           b--) {
        int64_t tmp = order[b];
        order[b] = order[b - 1];
        order[b - 1] = tmp;
      }
    for (int64_t k = 0; k < n_order; k++) {
      int64_t r = order[k];
      char c[12][96];
      int f;
      f = feasible(&thr, r);
      snprintf(c[0], 96, "%s", ts(&thr, r, "planner"));
      snprintf(c[1], 96, "%s", f ? "yes" : "OOM");
      fmt_ms(c[2], 96, f ? tv(&thr, r, "iteration_s") : NAN);
      snprintf(c[3], 96, f ? "%.1f" : "-", tv(&thr, r, "samples_per_s"));
      snprintf(c[4], 96, f ? "%.2f" : "-", tv(&thr, r, "slowdown"));
      snprintf(c[5], 96, f ? "%.2f" : "-", tv(&thr, r, "iteration_s") /
               tv(&thr, r, "lower_bound_s"));
      fmt_gib(c[6], 96, tv(&thr, r, "peak_allocated_bytes"));
      fmt_gib(c[7], 96, tv(&thr, r, "peak_reserved_bytes"));
      fmt_gib(c[8], 96, tv(&thr, r, "h2d_bytes"));
      fmt_gib(c[9], 96, tv(&thr, r, "d2h_bytes"));
      snprintf(c[10], 96, "%.1f", tv(&thr, r, "recompute_flops") / 1e9);
      snprintf(c[11], 96, "%s/%s/%s", ts(&thr, r, "keep"), ts(&thr, r, "swap"),
               ts(&thr, r, "recompute"));
      doc_table_row(&d, 12, c, r == win);
    }
    free(order);
    doc_table_end(&d);
  }

  /* Winner and why. */
  doc_h(&d, 2, win >= 0 ? "Winner and why" : "No planner fits");
  if (win < 0) {
    doc_p(&d, "No planner trains batch %" PRId64 " within the budget. The "
          "reasons, per planner:", o->batch);
  } else {
    double ov[OV_COUNT], it = tv(&thr, win, "iteration_s");
    double lb = tv(&thr, win, "lower_bound_s");
    double busy = tv(&thr, win, "compute_busy_s");
    int m;
    overheads(&thr, win, ov);
    m = largest(ov);
    snprintf(info->winner, sizeof info->winner, "%s", ts(&thr, win,
                                                          "planner"));
    doc_p(&d, "Winner: %s, %.1f ms per iteration (%.1f samples/s), %.2fx "
          "the in-core time and %.2fx the lower bound of %.1f ms.",
          info->winner, it * 1e3, tv(&thr, win, "samples_per_s"),
          tv(&thr, win, "slowdown"), it / lb, lb * 1e3);
    {
      /* Planners within 0.5% of the winner: a tie, say so. */
      char ties[512] = "";
      size_t k = 0;
      for (int64_t r = 0; r < thr.nrows; r++)
        if (r != win && (int64_t)tv(&thr, r, "batch") == o->batch &&
            feasible(&thr, r) && tv(&thr, r, "iteration_s") <= it * 1.005 &&
            k < sizeof ties)
          k += (size_t)snprintf(ties + k, sizeof ties - k, "%s%s",
                                k ? ", " : "", ts(&thr, r, "planner"));
      if (k)
        doc_p(&d, "Within 0.5%% of it, a tie at this precision: %s.",
              ties);
    }
    {
      char ovs[512];
      double rf = tv(&thr, win, "recompute_flops");
      ov_text(ov, ovs, sizeof ovs);
      int moves = tv(&thr, win, "swap") > 0 || tv(&thr, win, "recompute") > 0;
      if (moves)
        doc_p(&d, "How: it keeps %s tensors resident, swaps %s (%.2f GiB out "
              "to the host and %.2f GiB back per iteration) and recomputes "
              "%s%s.", ts(&thr, win, "keep"), ts(&thr, win, "swap"),
              tv(&thr, win, "d2h_bytes") / 1073741824.0,
              tv(&thr, win, "h2d_bytes") / 1073741824.0,
              ts(&thr, win, "recompute"),
              rf > 0 ? "" : " (no extra compute)");
      else
        doc_p(&d, "How: this batch fits the budget as it is; it keeps all "
              "%s tensors resident and moves nothing over the link.",
              ts(&thr, win, "keep"));
      if (ov[m] > 0.02 * it)
        doc_p(&d, "Where its time goes: the compute stream is busy %.0f%% of "
              "the iteration; the rest is overhead: %s. That overhead is "
              "what separates it from the lower bound.", 100 * busy / it,
              ovs);
      else
        doc_p(&d, "Where its time goes: %sthe compute stream is busy %.0f%% "
              "of the iteration and no overhead (stalls, recompute, "
              "allocator) reaches 2%% of it%s%s.", moves ? "its transfers "
              "hide behind compute; " : "", 100 * busy / it,
              ovs[0] ? "; the largest: " : "", ovs);
    }
  }
  if (thr.nrows > 1)
    doc_p(&d, "%s", win >= 0 ? "The other planners at this batch:"
                             : "Why each planner fails:");
  doc_ul(&d, 1);
  for (int64_t r = 0; r < thr.nrows; r++) {
    double ov[OV_COUNT], itr, itw;
    char ovs[512];
    if ((int64_t)tv(&thr, r, "batch") != o->batch || r == win)
      continue;
    if (!feasible(&thr, r)) {
      const char *op = ts(&thr, r, "oom_op");
      doc_li(&d, "%s does not fit: %s%s%s%s", ts(&thr, r, "planner"),
             ts(&thr, r, "oom_reason"), op[0] ? " (at " : "", op,
             op[0] ? ")" : "");
      continue;
    }
    overheads(&thr, r, ov);
    ov_text(ov, ovs, sizeof ovs);
    itr = tv(&thr, r, "iteration_s");
    itw = tv(&thr, win, "iteration_s");
    doc_li(&d, "%s: %.1f ms, %.2fx the lower bound, %.1f ms (%.1f%%) slower "
           "than the winner; %s%s", ts(&thr, r, "planner"), itr * 1e3,
           itr / tv(&thr, r, "lower_bound_s"), (itr - itw) * 1e3,
           100 * (itr - itw) / itw,
           ovs[0] ? "overheads: " : "no overhead reaches 0.5 ms", ovs);
  }
  doc_ul(&d, 0);

  /* Where the time goes. */
  if (win >= 0) {
    static const char *const head[] = {
      "planner", "iteration (ms)", "compute (ms)", "recompute (ms)",
      "stall swap-in (ms)", "stall swap-out (ms)", "other stalls (ms)",
      "allocator (ms)", "lower bound (ms)", "x lower bound"
    };
    doc_h(&d, 3, "Where the time goes");
    doc_p(&d, "Compute is the in-core compute of one iteration; recompute "
          "is the time spent in recompute kernels; stalls are times the "
          "compute stream waited with work left (for a swap-in, for a "
          "swap-out to free the memory the next step allocates, or for "
          "another dependency); allocator is time spent in allocator "
          "calls.");
    doc_table_head(&d, 10, head);
    for (int64_t r = 0; r < thr.nrows; r++) {
      char c[10][96];
      double ov[OV_COUNT];
      if ((int64_t)tv(&thr, r, "batch") != o->batch || !feasible(&thr, r))
        continue;
      overheads(&thr, r, ov);
      snprintf(c[0], 96, "%s", ts(&thr, r, "planner"));
      fmt_ms(c[1], 96, tv(&thr, r, "iteration_s"));
      fmt_ms(c[2], 96, tv(&thr, r, "compute_s"));
      fmt_ms(c[3], 96, ov[OV_RECOMP]);
      fmt_ms(c[4], 96, ov[OV_SWAPIN]);
      fmt_ms(c[5], 96, ov[OV_SWAPOUT]);
      fmt_ms(c[6], 96, ov[OV_OTHER]);
      fmt_ms(c[7], 96, ov[OV_ALLOC]);
      fmt_ms(c[8], 96, tv(&thr, r, "lower_bound_s"));
      snprintf(c[9], 96, "%.2f", tv(&thr, r, "iteration_s") /
               tv(&thr, r, "lower_bound_s"));
      doc_table_row(&d, 10, c, r == win);
    }
    doc_table_end(&d);
  }

  /* Plots. */
  {
    const char *why = pl.missing ? "gnuplot is missing" : pl.first_msg;
    doc_h(&d, 2, "Plots");
    doc_p(&d, "Throughput over batch sizes %s, one line per planner. "
          "Crosses along the bottom, one row per planner in its colour, "
          "mark the batches it cannot fit; the dashed black line is in-core "
          "speed with unlimited memory.", batches);
    doc_img(&d, o->dir, "throughput.png", "samples/s vs batch", why);
    if (win >= 0) {
      doc_p(&d, "The winner (%s) over one iteration: device memory against "
            "the budget, and its timeline (compute, H2D and D2H lanes). %s",
            info->winner, win_stall_s > 0 ? "Red boxes on the compute lane "
            "are stalls: the GPU idle, waiting for a copy or for memory."
            : "Its compute lane never stalls.");
      doc_img(&d, o->dir, "memory.png", "memory over one iteration", why);
      doc_img(&d, o->dir, "gantt.png", "timeline of one iteration", why);
    }
    if (have_mb) {
      doc_p(&d, "Largest batch each planner can train on %s (search by "
            "doubling then bisection; data/maxbatch/results.csv).", hw->name);
      doc_img(&d, o->dir, "maxbatch.png", "largest trainable batch", why);
    }
    doc_p(&d, "Slowdown against host link bandwidth at batch %" PRId64 ", "
          "with the link made a symmetric full-duplex link of that rate "
          "(--hw-set link.h2d_GBps, d2h, duplex); dotted lines mark the "
          "measured H2D rates of the link profiles.", o->batch);
    doc_img(&d, o->dir, "bandwidth.png", "slowdown vs link bandwidth",
            bw_any ? why : "no planner fits at any of these bandwidths");
  }

  /* What-if over the link profiles. */
  {
    const char *head[] = {
      "link of", "H2D (GB/s)", "best planner", "iteration (ms)", "slowdown",
      "winner here (ms)"
    };
    char whead[96];
    int lo = -1, fast = -1;     /* slowest link; slowest that hides all */
    double lo_bw = INFINITY, fast_bw = INFINITY;
    doc_h(&d, 2, "What if: other host links");
    doc_p(&d, "The same GPU, model and budget with the host link (pinned "
          "and pageable rates, duplex rates, latency, copy engines) of each "
          "link profile; every planner re-run at batch %" PRId64 ".",
          o->batch);
    if (win >= 0) {
      snprintf(whead, sizeof whead, "%s here (ms)", info->winner);
      head[5] = whead;
    }
    doc_table_head(&d, 6, head);
    for (int i = 0; i < n_wi; i++) {
      char c[6][96];
      int64_t b = best_row(&wi[i], o->batch);
      int64_t w = win >= 0 ? find_row(&wi[i], info->winner, o->batch) : -1;
      int hc = -1;
      for (int k = 0; k < wi[i].ncols && hc < 0; k++)
        if (strcmp(wi[i].cols[k], "hw_set:link.h2d_GBps") == 0)
          hc = k;
      snprintf(c[0], 96, "%s%s", wi_name[i],
               strcmp(wi_name[i], hw->name) == 0 ? " (this profile)" : "");
      snprintf(c[1], 96, "%s", hc >= 0 && wi[i].nrows ? wi[i].rows[0][hc]
                                                      : "-");
      snprintf(c[2], 96, "%s", b >= 0 ? ts(&wi[i], b, "planner") : "none fits");
      fmt_ms(c[3], 96, b >= 0 ? tv(&wi[i], b, "iteration_s") : NAN);
      snprintf(c[4], 96, b >= 0 ? "%.2f" : "-", tv(&wi[i], b, "slowdown"));
      fmt_ms(c[5], 96, w >= 0 && feasible(&wi[i], w)
                           ? tv(&wi[i], w, "iteration_s") : NAN);
      doc_table_row(&d, 6, c, 0);
      {
        double bwv = hc >= 0 && wi[i].nrows ? strtod(wi[i].rows[0][hc], NULL)
                                            : NAN;
        if (bwv < lo_bw) {
          lo_bw = bwv;
          lo = i;
        }
        if (b >= 0 && tv(&wi[i], b, "slowdown") <= 1.01 && bwv < fast_bw) {
          fast_bw = bwv;
          fast = i;
        }
      }
    }
    doc_table_end(&d);
    /* One sentence a reader can act on: from which link on the transfers
     * stop costing time, and what the slowest link costs. */
    if (lo >= 0) {
      int64_t b = best_row(&wi[lo], o->batch);
      int all_fast = fast >= 0;
      for (int i = 0; i < n_wi && all_fast; i++) {
        int64_t bi = best_row(&wi[i], o->batch);
        double bwv = NAN;
        for (int k = 0; k < wi[i].ncols; k++)
          if (strcmp(wi[i].cols[k], "hw_set:link.h2d_GBps") == 0 &&
              wi[i].nrows)
            bwv = strtod(wi[i].rows[0][k], NULL);
        if (bwv >= fast_bw && (bi < 0 || tv(&wi[i], bi, "slowdown") > 1.01))
          all_fast = 0;
      }
      if (fast == lo)
        doc_p(&d, "Every one of these links is fast enough: the best plan "
              "runs within 1%% of in-core speed even on the slowest, %s "
              "(%.4g GB/s).", wi_name[lo], lo_bw);
      else if (b < 0)
        doc_p(&d, "On the slowest link, %s (%.4g GB/s), no planner fits "
              "batch %" PRId64 ".", wi_name[lo], lo_bw, o->batch);
      else if (all_fast)
        doc_p(&d, "From the link of %s (%.4g GB/s) up, the best plan runs "
              "within 1%% of in-core speed: the transfers hide behind "
              "compute. Below that the link is the bottleneck: on %s "
              "(%.4g GB/s) the best plan, %s, takes %.2fx the in-core time.",
              wi_name[fast], fast_bw, wi_name[lo], lo_bw,
              ts(&wi[lo], b, "planner"), tv(&wi[lo], b, "slowdown"));
      else
        doc_p(&d, "The link matters on every profile here: on the slowest, "
              "%s (%.4g GB/s), the best plan (%s) takes %.2fx the in-core "
              "time.", wi_name[lo], lo_bw, ts(&wi[lo], b, "planner"),
              tv(&wi[lo], b, "slowdown"));
    }
  }

  doc_h(&d, 2, "Data");
  doc_ul(&d, 1);
  doc_li(&d, "data/throughput/results.csv: every planner at batches %s",
         batches);
  doc_li(&d, "data/bandwidth/results.csv: the link bandwidth sweep");
  if (have_mb)
    doc_li(&d, "data/maxbatch/results.csv: largest batch per planner");
  doc_li(&d, "data/whatif-*/results.csv: the what-if runs");
  doc_li(&d, "data/*.dat: the gnuplot data of each plot (plots/README.md "
         "says how to restyle a plot)");
  if (win >= 0)
    doc_li(&d, "data/memory.csv, data/timeline.csv: the winner's iteration");
  if (failed)
    doc_li(&d, "%" PRId64 " points failed and are missing; first: %s", failed,
           note);
  doc_ul(&d, 0);
  fprintf(d.md, "\n---\nGenerated by oocsim %s.\n", PACKAGE_VERSION);
  fprintf(d.html, "<footer>Generated by oocsim %s.</footer>\n"
          "</body>\n</html>\n", PACKAGE_VERSION);
  rc = OOC_OK;
out:
  info->wall_s = ooc_wall_s() - t0;
  if (d.md && fclose(d.md) != 0 && !rc)
    rc = ooc_err_set(err, OOC_EIO, "cannot write '%s'", md_path);
  if (d.html && fclose(d.html) != 0 && !rc)
    rc = ooc_err_set(err, OOC_EIO, "cannot write '%s'", html_path);
  for (int i = 0; i < n_wi; i++)
    ooc_table_fini(&wi[i]);
  ooc_table_fini(&thr);
  ooc_table_fini(&bw);
  ooc_table_fini(&mb);
  ooc_model_free(model);
  ooc_hw_free(hw);
  info->plots_drawn = pl.drawn;
  if (!rc && pl.first_rc) {
    if (pl.missing && !ooc_plot_gnuplot(&gp))
      rc = ooc_err_set(err, OOC_EUNSUP, "gnuplot is missing ('%s' is not "
                       "runnable; install gnuplot or set OOCSIM_GNUPLOT): "
                       "wrote %s/report.md and report.html without plots",
                       gp, o->dir);
    else
      rc = ooc_err_set(err, pl.first_rc, "%s", pl.first_msg);
  }
  if (!rc && failed)
    rc = ooc_err_set(err, OOC_EINVAL, "report: %" PRId64 " points failed "
                     "(the report leaves them out); first: %s", failed, note);
  return rc;
}
