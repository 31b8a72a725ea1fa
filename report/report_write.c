/* report/report_write.c — the report's document (report_parts.h): one
 * function per section, in reading order: scenario, planners compared,
 * winner and why, the other planners, where the time goes, plots, what-if
 * over other host links, data.
 *
 * Every figure comes from the sweeps' tables (report_data.c) and the
 * winner's traced run (report_plots.c); the text that explains the winner
 * is built from those figures, never written by hand. Markdown and HTML
 * are written side by side (doc.h), so both say the same.
 *
 * Ownership: reads the report data, owns only the document while writing
 * it. Cost: linear in the rows of the tables (the comparison sorts the
 * planners at B by insertion: a handful of rows).
 */
#include "config.h"

#include <inttypes.h>
#include <stdio.h>

#include "report/report_parts.h"
#include "report/doc.h"

/* Row a sorts before row b: feasible before infeasible, then faster. */
static int
row_before(const ooc_table *t, int64_t a, int64_t b)
{
  int fa = feasible(t, a), fb = feasible(t, b);
  if (fa != fb)
    return fa > fb;
  return fa && tv(t, a, "iteration_s") < tv(t, b, "iteration_s");
}

static void
fmt_ms(char *b, size_t n, double s)
{
  if (isnan(s))
    snprintf(b, n, "-");
  else
    snprintf(b, n, "%.1f", s * 1e3);
}

/* Bytes in the unit that suits them ("15.50 GiB", "2.02 KiB"), "-" when
 * absent: a tiny model must not read as 0.00 GiB. */
static void
fmt_size(char *b, size_t n, double bytes)
{
  if (isnan(bytes) || bytes < 0)
    snprintf(b, n, "-");
  else
    ooc_fmt_bytes((uint64_t)bytes, b, n);
}

/* Overheads of row r, in seconds, in a fixed order. */
enum { OV_RECOMP, OV_SWAPIN, OV_SWAPOUT, OV_OTHER, OV_HOST, OV_ALLOC,
       OV_COUNT };
static const char *const ov_names[OV_COUNT] = {
  "recompute", "stalls waiting for swap-in",
  "stalls waiting for a swap-out to free memory", "other stalls",
  "waits for the host (framework overhead)", "allocator calls"
};

static void
overheads(const ooc_table *t, int64_t r, double *ov)
{
  ov[OV_RECOMP] = tv(t, r, "recompute_s");
  ov[OV_SWAPIN] = tv(t, r, "stall_swapin_s");
  ov[OV_SWAPOUT] = tv(t, r, "stall_swapout_s");
  ov[OV_OTHER] = tv(t, r, "stall_other_s");
  ov[OV_HOST] = tv(t, r, "stall_host_s");
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

/* The scenario: model, hardware, budget, the in-core time. */
static void
section_scenario(ooc_doc *d, const ooc_report_opts *o,
                 const ooc_report_data *rd)
{
  const ooc_table *thr = &rd->thr;
  const ooc_model *model = rd->model;
  const ooc_hw *hw = rd->hw;
  char b1[32], b2[32], b3[32], b4[32];
  int64_t r0 = thr->nrows ? ooc_report_find_row(thr, ts(thr, 0, "planner"),
                                                o->batch)
                         : -1;
  double budget = tv(thr, r0, "budget_bytes");
  double incore = tv(thr, r0, "incore_iteration_s");
  ooc_doc_h(d, 2, "Scenario");
  ooc_doc_ul(d, 1);
  ooc_doc_li(d, "Model: %s%s%s%s, batch %" PRId64 ", %s%s%s%s; %s parameters; "
             "weights + gradients + optimizer state %s; activations kept "
             "for backward %s", model->name,
             /* the file only when the user named one: a zoo name reads the
              * same on every machine, its install path does not */
             strchr(o->model, '/') ? " (" : "",
             strchr(o->model, '/') ? o->model : "",
             strchr(o->model, '/') ? ")" : "",
             o->batch, ooc_dtype_name(model->dtype),
             ooc_precision_name(model->precision) ? " (precision " : "",
             ooc_precision_name(model->precision)
                 ? ooc_precision_name(model->precision) : "",
             ooc_precision_name(model->precision) ? ")" : "",
             ooc_fmt_count(model->total_params, b4, sizeof b4),
             ooc_fmt_bytes(model->weight_bytes + model->grad_bytes +
                           model->opt_bytes, b1, sizeof b1),
             ooc_fmt_bytes(model->activation_bytes, b2, sizeof b2));
  ooc_doc_li(d, "Hardware: %s (%s): %s usable device memory; host link "
             "H2D %.1f GB/s, D2H %.1f GB/s pinned, %d copy engine(s)",
             hw->name, hw->gpu, (fmt_size(b1, sizeof b1,
                                         (double)hw->mem_usable), b1),
             hw->h2d_Bps / 1e9, hw->d2h_Bps / 1e9, hw->copy_engines);
  ooc_doc_li(d, "Budget: %s%s; allocator %s",
             (fmt_size(b3, sizeof b3, budget), b3),
             o->budget ? "" : " (the profile's usable memory)",
             o->allocator ? o->allocator : "caching");
  ooc_doc_li(d, "Without a memory limit (in-core) one iteration takes %s ms; "
             "training naively needs %s (allocated) at this batch",
             (fmt_ms(b2, sizeof b2, incore), b2),
             ooc_fmt_bytes(model->naive_peak_bytes, b1, sizeof b1));
  ooc_doc_ul(d, 0);
}

/* Every planner at B, fastest first, the winner marked. */
static int
section_comparison(ooc_doc *d, const ooc_report_opts *o,
                   const ooc_report_data *rd, ooc_err *err)
{
  const ooc_table *thr = &rd->thr;
  int64_t win = rd->win;
  static const char *const head[] = {
    "planner", "feasible", "iteration (ms)", "samples/s", "slowdown",
    "x lower bound", "peak allocated", "peak reserved",
    "H2D", "D2H", "recompute (GFLOP)",
    "tensors kept / swapped / recomputed"
  };
  ooc_doc_h(d, 2, "Planners compared");
  ooc_doc_p(d, "Every planner on the scenario above (batch %" PRId64 "). "
            "Slowdown is the iteration time over the in-core time; "
            "\"x lower bound\" is the iteration time over a bound no plan "
            "can beat under this budget (compute, or the bytes that must "
            "cross the link).", o->batch);
  ooc_doc_table_head(d, 12, head);
  /* Rows in the order of `oocsim compare`: fastest first, infeasible
   * last, ties in registry order. */
  int64_t *order = malloc(sizeof *order *
                          (size_t)(thr->nrows ? thr->nrows : 1));
  int64_t n_order = 0;
  if (order == NULL)
    return ooc_err_set(err, OOC_ENOMEM, "out of memory");
  for (int64_t r = 0; r < thr->nrows; r++)
    if ((int64_t)tv(thr, r, "batch") == o->batch)
      order[n_order++] = r;
  for (int64_t a = 1; a < n_order; a++) /* insertion sort: stable */
    for (int64_t b = a; b > 0 && row_before(thr, order[b], order[b - 1]);
         b--) {
      int64_t tmp = order[b];
      order[b] = order[b - 1];
      order[b - 1] = tmp;
    }
  for (int64_t k = 0; k < n_order; k++) {
    int64_t r = order[k];
    char c[12][96];
    int f;
    f = feasible(thr, r);
    snprintf(c[0], 96, "%s", ts(thr, r, "planner"));
    snprintf(c[1], 96, "%s", f ? "yes" : "OOM");
    fmt_ms(c[2], 96, f ? tv(thr, r, "iteration_s") : NAN);
    snprintf(c[3], 96, f ? "%.1f" : "-", tv(thr, r, "samples_per_s"));
    snprintf(c[4], 96, f ? "%.2f" : "-", tv(thr, r, "slowdown"));
    snprintf(c[5], 96, f ? "%.2f" : "-", tv(thr, r, "iteration_s") /
             tv(thr, r, "lower_bound_s"));
    fmt_size(c[6], 96, tv(thr, r, "peak_allocated_bytes"));
    fmt_size(c[7], 96, tv(thr, r, "peak_reserved_bytes"));
    /* An iteration's traffic: an OOM row's stopped before its end. */
    if (f) {
      fmt_size(c[8], 96, tv(thr, r, "h2d_bytes"));
      fmt_size(c[9], 96, tv(thr, r, "d2h_bytes"));
      snprintf(c[10], 96, "%.1f", tv(thr, r, "recompute_flops") / 1e9);
    } else {
      snprintf(c[8], 96, "-");
      snprintf(c[9], 96, "-");
      snprintf(c[10], 96, "-");
    }
    snprintf(c[11], 96, "%s/%s/%s", ts(thr, r, "keep"), ts(thr, r, "swap"),
             ts(thr, r, "recompute"));
    ooc_doc_table_row(d, 12, c, r == win);
  }
  free(order);
  ooc_doc_table_end(d);
  return OOC_OK;
}

/* Planners within 0.5% of the winner (row win of thr at B): a tie at
 * this precision, say so. */
static void
winner_ties(ooc_doc *d, const ooc_report_opts *o, const ooc_table *thr,
            int64_t win)
{
  double it = tv(thr, win, "iteration_s");
  char ties[512] = "";
  size_t k = 0;

  for (int64_t r = 0; r < thr->nrows; r++)
    if (r != win && (int64_t)tv(thr, r, "batch") == o->batch &&
        feasible(thr, r) && tv(thr, r, "iteration_s") <= it * 1.005 &&
        k < sizeof ties)
      k += (size_t)snprintf(ties + k, sizeof ties - k, "%s%s",
                            k ? ", " : "", ts(thr, r, "planner"));
  if (k)
    ooc_doc_p(d, "Within 0.5%% of it, a tie at this precision: %s.", ties);
}

/* When the winner is joint: where its search started, against the
 * runner-up (the fastest other feasible planner at B), and what it
 * changed (its plan note: the improving moves by kind). */
static void
winner_search(ooc_doc *d, const ooc_report_opts *o, const ooc_table *thr,
              int64_t win)
{
  const char *note = ts(thr, win, "plan_note");
  double it = tv(thr, win, "iteration_s"), best = 0;
  int64_t r, ru = -1;

  if (strcmp(ts(thr, win, "planner"), "joint") != 0 ||
      strncmp(note, "joint: ", 7) != 0)
    return;
  for (r = 0; r < thr->nrows; r++)
    if (r != win && (int64_t)tv(thr, r, "batch") == o->batch &&
        feasible(thr, r) && (ru < 0 || tv(thr, r, "iteration_s") < best)) {
      ru = r;
      best = tv(thr, r, "iteration_s");
    }
  if (ru < 0) {
    ooc_doc_p(d, "Search: %s.", note + 7);
    return;
  }
  ooc_doc_p(d, "Against the runner-up: %s takes %.1f ms. joint searched "
            "keep / swap / recompute, swap-in timing and convolution "
            "algorithms with the simulator, starting from the best of the "
            "other planners' plans, and is %.1f ms (%.1f%%) faster: %s.",
            ts(thr, ru, "planner"), best * 1e3, (best - it) * 1e3,
            best > 0 ? 100 * (best - it) / best : 0.0, note + 7);
}

/* How the winner fits (what it keeps, swaps, recomputes) and where its
 * time goes: busy compute, and its overheads when one passes 2%. */
static void
winner_how(ooc_doc *d, const ooc_table *thr, int64_t win)
{
  double ov[OV_COUNT], it = tv(thr, win, "iteration_s");
  double busy = tv(thr, win, "compute_busy_s");
  double rf = tv(thr, win, "recompute_flops");
  int moves = tv(thr, win, "swap") > 0 || tv(thr, win, "recompute") > 0;
  char ovs[512];

  overheads(thr, win, ov);
  ov_text(ov, ovs, sizeof ovs);
  if (moves) {
    char out[32], in[32];
    fmt_size(out, sizeof out, tv(thr, win, "d2h_bytes"));
    fmt_size(in, sizeof in, tv(thr, win, "h2d_bytes"));
    ooc_doc_p(d, "How: it keeps %s tensors resident, swaps %s (%s out "
              "to the host and %s back per iteration) and recomputes "
              "%s%s.", ts(thr, win, "keep"), ts(thr, win, "swap"), out, in,
              ts(thr, win, "recompute"),
              rf > 0 ? "" : " (no extra compute)");
  }
  else
    ooc_doc_p(d, "How: this batch fits the budget as it is; it keeps all "
              "%s tensors resident and moves nothing over the link.",
              ts(thr, win, "keep"));
  if (tv(thr, win, "slowdown") < 0.99)
    ooc_doc_p(d, "It is faster than in-core: the in-core plan runs every "
              "convolution with its default kernel algorithm, and %s runs "
              "some with a faster one whose workspace fits (the profile's "
              "compute.conv_algorithms, or a calibration's).",
              ts(thr, win, "planner"));
  if (ov[largest(ov)] > 0.02 * it)
    ooc_doc_p(d, "Where its time goes: the compute stream is busy %.0f%% of "
              "the iteration; the rest is overhead: %s. That overhead is "
              "what separates it from the lower bound.", 100 * busy / it,
              ovs);
  else
    ooc_doc_p(d, "Where its time goes: %sthe compute stream is busy %.0f%% "
              "of the iteration and no overhead (stalls, recompute, "
              "allocator) reaches 2%% of it%s%s.",
              moves ? "its transfers hide behind compute; " : "",
              100 * busy / it, ovs[0] ? "; the largest: " : "", ovs);
}

/* When the winner's allocator had not settled in the reported iteration
 * (sim/sim.h, the steady state), say what that means and how to plan for
 * it. */
static void
winner_steady(ooc_doc *d, const ooc_summary *s)
{
  if (!s->feasible || s->steady || s->measured)
    return;
  ooc_doc_p(d, "Its allocator had not settled: the last of the %d "
            "iterations simulated still took or gave back device memory, "
            "so a longer run may differ from this one or run out of memory "
            "(docs/fidelity.md)%s", s->iterations,
            s->iterations <= 2 ? "; `--steady` plans and simulates until "
                                 "it settles."
                               : ".");
}

/* Where the winner's parameters are, when it offloads some: the CPU's
 * optimizer steps beside the GPU (docs/offload.md). */
static void
winner_offload(ooc_doc *d, const ooc_summary *s)
{
  char b[32];

  if (s->offloaded_layers <= 0 || !s->feasible || s->iteration_s <= 0)
    return;
  ooc_fmt_bytes(s->offload_host_bytes, b, sizeof b);
  ooc_doc_p(d, "Its parameters: the optimizer of %d layers runs on the "
            "CPU, with %s of their weights, gradients and optimizer state "
            "in host memory; the CPU is busy %.1f ms per iteration (%.0f%% "
            "of it). The iteration ends when the last of those steps and "
            "the weights it updates are back, so a CPU that is busier than "
            "the GPU sets the pace (the profile's host.optimizer_GBps).",
            s->offloaded_layers, b, s->host_optimizer_s * 1e3,
            100 * s->host_optimizer_s / s->iteration_s);
}

/* The winner's decisions per tensor class and what they cost (oocsim
 * explain), the costliest first; classes that cost nothing and move
 * nothing (all kept) are one row, "other classes, all kept", so that the
 * rows add up to the total. */
static void
winner_classes(ooc_doc *d, const ooc_explain *x)
{
  static const char *const h[] = { "tensor class", "tensors", "kept",
                                   "swapped", "recomputed", "moved",
                                   "swap-in wait s", "swap-out wait s",
                                   "recompute s" };
  char c[9][96];
  ooc_explain_row rest = { .op = "other classes, all kept" };
  int32_t i, n_rest = 0;

  if (x->n_rows == 0 || x->total.swap + x->total.recompute == 0)
    return;
  for (i = 0; i < x->n_rows; i++) {
    const ooc_explain_row *r = &x->rows[i];
    if (r->swap + r->recompute != 0)
      continue;
    n_rest++;
    rest.tensors += r->tensors;
    rest.bytes += r->bytes;
    rest.keep += r->keep;
    rest.exposed_swapin_s += r->exposed_swapin_s;
    rest.exposed_swapout_s += r->exposed_swapout_s;
  }
  ooc_doc_p(d, "What it does per tensor class (the op that produced each "
            "activation; oocsim explain): how many it keeps, swaps and "
            "recomputes, and what each choice costs in compute-stream "
            "waiting and recompute time.");
  ooc_doc_table_head(d, 9, h);
  for (i = 0; i <= x->n_rows + 1; i++) {
    const ooc_explain_row *r = i < x->n_rows ? &x->rows[i]
                               : i == x->n_rows ? &rest : &x->total;
    if (i < x->n_rows ? r->swap + r->recompute == 0 : i == x->n_rows &&
                                                      n_rest == 0)
      continue;
    snprintf(c[0], sizeof c[0], "%s", r->op);
    snprintf(c[1], sizeof c[1], "%d", (int)r->tensors);
    snprintf(c[2], sizeof c[2], "%d", (int)r->keep);
    snprintf(c[3], sizeof c[3], "%d", (int)r->swap);
    snprintf(c[4], sizeof c[4], "%d", (int)r->recompute);
    ooc_fmt_bytes(r->swapped_bytes, c[5], sizeof c[5]);
    snprintf(c[6], sizeof c[6], "%.4f", r->exposed_swapin_s);
    snprintf(c[7], sizeof c[7], "%.4f", r->exposed_swapout_s);
    snprintf(c[8], sizeof c[8], "%.4f", r->recompute_s);
    ooc_doc_table_row(d, 9, c, i == x->n_rows + 1);
  }
  ooc_doc_table_end(d);
}

/* The winner: its time against in-core and the bound, ties, how it fits
 * and where its time goes; or that no planner fits. Sets info->winner. */
static void
section_winner(ooc_doc *d, const ooc_report_opts *o,
               const ooc_report_data *rd, ooc_report_info *info)
{
  const ooc_table *thr = &rd->thr;
  int64_t win = rd->win;
  double it, lb;

  ooc_doc_h(d, 2, win >= 0 ? "Winner and why" : "No planner fits");
  if (win < 0) {
    ooc_doc_p(d, "No planner trains batch %" PRId64 " within the budget. The "
              "reasons, per planner:", o->batch);
    return;
  }
  it = tv(thr, win, "iteration_s");
  lb = tv(thr, win, "lower_bound_s");
  snprintf(info->winner, sizeof info->winner, "%s",
           ts(thr, win, "planner"));
  ooc_doc_p(d, "Winner: %s, %.1f ms per iteration (%.1f samples/s), %.2fx "
            "the in-core time and %.2fx the lower bound of %.1f ms.",
            info->winner, it * 1e3, tv(thr, win, "samples_per_s"),
            tv(thr, win, "slowdown"), it / lb, lb * 1e3);
  winner_ties(d, o, thr, win);
  winner_how(d, thr, win);
  winner_offload(d, &rd->win_explain.sum);
  winner_steady(d, &rd->win_explain.sum);
  winner_search(d, o, thr, win);
  winner_classes(d, &rd->win_explain);
}

/* The other planners at B: why each does not fit, or how far it is from
 * the winner and what its overheads are. */
static void
section_others(ooc_doc *d, const ooc_report_opts *o,
               const ooc_report_data *rd)
{
  const ooc_table *thr = &rd->thr;
  int64_t win = rd->win;

  if (thr->nrows > 1)
    ooc_doc_p(d, "%s", win >= 0 ? "The other planners at this batch:"
                                 : "Why each planner fails:");
  ooc_doc_ul(d, 1);
  for (int64_t r = 0; r < thr->nrows; r++) {
    double ov[OV_COUNT], itr, itw;
    char ovs[512];
    if ((int64_t)tv(thr, r, "batch") != o->batch || r == win)
      continue;
    if (!feasible(thr, r)) {
      const char *op = ts(thr, r, "oom_op");
      ooc_doc_li(d, "%s does not fit: %s%s%s%s", ts(thr, r, "planner"),
                 ts(thr, r, "oom_reason"), op[0] ? " (at " : "", op,
                 op[0] ? ")" : "");
      continue;
    }
    overheads(thr, r, ov);
    ov_text(ov, ovs, sizeof ovs);
    itr = tv(thr, r, "iteration_s");
    itw = tv(thr, win, "iteration_s");
    ooc_doc_li(d, "%s: %.1f ms, %.2fx the lower bound, %.1f ms (%.1f%%) "
               "slower than the winner; %s%s", ts(thr, r, "planner"),
               itr * 1e3, itr / tv(thr, r, "lower_bound_s"),
               (itr - itw) * 1e3, 100 * (itr - itw) / itw,
               ovs[0] ? "overheads: " : "no overhead reaches 0.5 ms", ovs);
  }
  ooc_doc_ul(d, 0);
}

/* Where the time goes, per feasible planner at B (when one fits). */
static void
section_time(ooc_doc *d, const ooc_report_opts *o, const ooc_report_data *rd)
{
  const ooc_table *thr = &rd->thr;
  int64_t win = rd->win;

  if (win >= 0) {
    static const char *const head[] = {
      "planner", "iteration (ms)", "compute (ms)", "recompute (ms)",
      "stall swap-in (ms)", "stall swap-out (ms)", "other stalls (ms)",
      "host waits (ms)", "allocator (ms)", "lower bound (ms)",
      "x lower bound"
    };
    ooc_doc_h(d, 3, "Where the time goes");
    ooc_doc_p(d, "Compute is the time the compute stream ran the plan's "
              "forward, backward and update kernels (the in-core compute, "
              "or more where the plan takes slower kernel algorithms); "
              "recompute is the time spent in recompute kernels; stalls are "
              "times the compute stream waited with work left (for a "
              "swap-in, for a swap-out to free the memory the next step "
              "allocates, or for another dependency); host waits are times "
              "it waited for the host to issue the next kernel (framework "
              "overhead, a host synchronisation); allocator is time "
              "spent in allocator calls, a call's wait for the device to "
              "drain included. Allocator calls on the copy streams overlap "
              "the compute stream, so the columns may add up to more than "
              "the iteration.");
    ooc_doc_table_head(d, 11, head);
    for (int64_t r = 0; r < thr->nrows; r++) {
      char c[11][96];
      double ov[OV_COUNT];
      if ((int64_t)tv(thr, r, "batch") != o->batch || !feasible(thr, r))
        continue;
      overheads(thr, r, ov);
      snprintf(c[0], 96, "%s", ts(thr, r, "planner"));
      fmt_ms(c[1], 96, tv(thr, r, "iteration_s"));
      fmt_ms(c[2], 96, tv(thr, r, "compute_busy_s") - ov[OV_RECOMP]);
      fmt_ms(c[3], 96, ov[OV_RECOMP]);
      fmt_ms(c[4], 96, ov[OV_SWAPIN]);
      fmt_ms(c[5], 96, ov[OV_SWAPOUT]);
      fmt_ms(c[6], 96, ov[OV_OTHER]);
      fmt_ms(c[7], 96, ov[OV_HOST]);
      fmt_ms(c[8], 96, ov[OV_ALLOC]);
      fmt_ms(c[9], 96, tv(thr, r, "lower_bound_s"));
      snprintf(c[10], 96, "%.2f", tv(thr, r, "iteration_s") /
               tv(thr, r, "lower_bound_s"));
      ooc_doc_table_row(d, 11, c, r == win);
    }
    ooc_doc_table_end(d);
  }
}

/* Plot `file` in the document, or, where it was not drawn, why: `why`
 * when not NULL, else gnuplot missing or its own failure. */
static void
plot_img(ooc_doc *d, const ooc_report_opts *o, const ooc_report_plots *pl,
         const char *file, const char *alt, const char *why)
{
  ooc_doc_img(d, o->dir, file, alt,
              why != NULL    ? why
              : pl->missing ? "gnuplot is missing"
                            : ooc_report_plot_why(pl, file));
}

/* The plots, or why each is missing. */
static void
section_plots(ooc_doc *d, const ooc_report_opts *o,
              const ooc_report_data *rd, const char *winner)
{
  const ooc_hw *hw = rd->hw;
  int64_t win = rd->win;
  const ooc_report_plots *pl = &rd->pl;
  ooc_doc_h(d, 2, "Plots");
  ooc_doc_p(d, "Throughput over batch sizes %s, one line per planner; "
            "planners that reach the same speed at every batch share one "
            "line (\"lms = capacity = window\"). Crosses in the strip under "
            "the plot, one row per planner in its colour, mark the batches "
            "it cannot fit; the dashed black line is in-core speed with "
            "unlimited memory.", rd->batches);
  plot_img(d, o, pl, "throughput.png", "samples/s vs batch", NULL);
  if (win >= 0) {
    ooc_doc_p(d, "The winner (%s) over one iteration: device memory against "
              "the budget, and its timeline (compute, H2D and D2H lanes). %s",
              winner, rd->win_stall_s > 0 ? "Red boxes on the compute lane "
              "are stalls, the GPU idle: red while it waits for a swap-in, "
              "dark red for a swap-out (the room it makes), light red for "
              "anything else. Where spans are too short to see one by one, "
              "stacked bars show each one's share of the time."
              : "Its compute lane never stalls.");
    plot_img(d, o, pl, "memory.png", "memory over one iteration", NULL);
    plot_img(d, o, pl, "gantt.png", "timeline of one iteration", NULL);
  }
  if (rd->have_mb) {
    ooc_doc_p(d, "Largest batch each planner can train on %s (search by "
              "doubling then bisection, looking ahead past the first batch "
              "that does not fit; data/maxbatch/results.csv, whose fail_* "
              "columns say what stops the next batch, and fail_below a "
              "smaller batch that does not fit where a planner's "
              "feasibility is not monotone). A numbered bracket over bars "
              "of equal height, and its note under the plot, say why they "
              "stop there.", hw->name);
    plot_img(d, o, pl, "maxbatch.png", "largest trainable batch", NULL);
  }
  ooc_doc_p(d, "Slowdown against host link bandwidth at batch %" PRId64 ", "
            "with the link made a symmetric full-duplex link of that rate "
            "(--hw-set link.h2d_GBps, d2h, duplex); dotted lines mark the "
            "measured H2D rates of the link profiles.", o->batch);
  plot_img(d, o, pl, "bandwidth.png", "slowdown vs link bandwidth",
           rd->bw_any ? NULL : "no planner fits at any of these bandwidths");
}

/* The H2D rate (GB/s) a what-if table was run with; NaN when unknown. */
static double
whatif_h2d(const ooc_table *t)
{
  int c = ooc_table_col(t, "hw_set:link.h2d_GBps");
  return c >= 0 && t->nrows ? strtod(t->rows[0][c], NULL) : NAN;
}

/* One row per link: its rate, the best planner there, and the winner's
 * time there. */
static void
whatif_table(ooc_doc *d, const ooc_report_opts *o,
             const ooc_report_data *rd, const char *winner)
{
  const char *head[] = {
    "link of", "H2D (GB/s)", "best planner", "iteration (ms)", "slowdown",
    "winner here (ms)"
  };
  char whead[96];

  if (rd->win >= 0) {
    snprintf(whead, sizeof whead, "%s here (ms)", winner);
    head[5] = whead;
  }
  ooc_doc_table_head(d, 6, head);
  for (int i = 0; i < rd->n_wi; i++) {
    const ooc_table *t = &rd->wi[i];
    char c[6][96];
    int64_t b = ooc_report_best_row(t, o->batch);
    int64_t w = rd->win >= 0 ? ooc_report_find_row(t, winner, o->batch) : -1;
    int hc = ooc_table_col(t, "hw_set:link.h2d_GBps");

    snprintf(c[0], 96, "%s%s", rd->wi_name[i],
             strcmp(rd->wi_name[i], rd->hw->name) == 0 ? " (this profile)"
                                                       : "");
    snprintf(c[1], 96, "%s", hc >= 0 && t->nrows ? t->rows[0][hc] : "-");
    snprintf(c[2], 96, "%s", b >= 0 ? ts(t, b, "planner") : "none fits");
    fmt_ms(c[3], 96, b >= 0 ? tv(t, b, "iteration_s") : NAN);
    snprintf(c[4], 96, b >= 0 ? "%.2f" : "-", tv(t, b, "slowdown"));
    fmt_ms(c[5], 96, w >= 0 && feasible(t, w) ? tv(t, w, "iteration_s")
                                              : NAN);
    ooc_doc_table_row(d, 6, c, 0);
  }
  ooc_doc_table_end(d);
}

/* One sentence a reader can act on: from which link on the transfers stop
 * costing time (the best plan within 1% of in-core speed), and what the
 * slowest link costs. */
static void
whatif_verdict(ooc_doc *d, const ooc_report_opts *o,
               const ooc_report_data *rd)
{
  const ooc_table *wi = rd->wi;
  const char *const *wi_name = rd->wi_name;
  int lo = -1, fast = -1;     /* slowest link; slowest that hides all */
  double lo_bw = INFINITY, fast_bw = INFINITY;
  int64_t b;
  int all_fast;

  for (int i = 0; i < rd->n_wi; i++) {
    int64_t bi = ooc_report_best_row(&wi[i], o->batch);
    double bwv = whatif_h2d(&wi[i]);
    if (bwv < lo_bw) {
      lo_bw = bwv;
      lo = i;
    }
    if (bi >= 0 && tv(&wi[i], bi, "slowdown") <= 1.01 && bwv < fast_bw) {
      fast_bw = bwv;
      fast = i;
    }
  }
  if (lo < 0)
    return;
  b = ooc_report_best_row(&wi[lo], o->batch);
  all_fast = fast >= 0;
  for (int i = 0; i < rd->n_wi && all_fast; i++) {
    int64_t bi = ooc_report_best_row(&wi[i], o->batch);
    if (whatif_h2d(&wi[i]) >= fast_bw &&
        (bi < 0 || tv(&wi[i], bi, "slowdown") > 1.01))
      all_fast = 0;
  }
  if (fast == lo && b >= 0 && tv(&wi[lo], b, "slowdown") < 0.99)
    ooc_doc_p(d, "Every one of these links is fast enough: even on the "
              "slowest, %s (%.4g GB/s), the best plan runs faster than "
              "in-core (%.2fx its time: it takes faster convolution "
              "algorithms than in-core's defaults).", wi_name[lo], lo_bw,
              tv(&wi[lo], b, "slowdown"));
  else if (fast == lo)
    ooc_doc_p(d, "Every one of these links is fast enough: the best plan "
              "runs within 1%% of in-core speed even on the slowest, %s "
              "(%.4g GB/s).", wi_name[lo], lo_bw);
  else if (b < 0)
    ooc_doc_p(d, "On the slowest link, %s (%.4g GB/s), no planner fits "
              "batch %" PRId64 ".", wi_name[lo], lo_bw, o->batch);
  else if (all_fast)
    ooc_doc_p(d, "From the link of %s (%.4g GB/s) up, the best plan runs "
              "within 1%% of in-core speed: the transfers hide behind "
              "compute. Below that the link is the bottleneck: on %s "
              "(%.4g GB/s) the best plan, %s, takes %.2fx the in-core time.",
              wi_name[fast], fast_bw, wi_name[lo], lo_bw,
              ts(&wi[lo], b, "planner"), tv(&wi[lo], b, "slowdown"));
  else
    ooc_doc_p(d, "The link matters on every profile here: on the slowest, "
              "%s (%.4g GB/s), the best plan (%s) takes %.2fx the in-core "
              "time.", wi_name[lo], lo_bw, ts(&wi[lo], b, "planner"),
              tv(&wi[lo], b, "slowdown"));
}

/* What if: this GPU with the host link of each link profile. */
static void
section_whatif(ooc_doc *d, const ooc_report_opts *o,
               const ooc_report_data *rd, const char *winner)
{
  ooc_doc_h(d, 2, "What if: other host links");
  ooc_doc_p(d, "The same GPU, model and budget with the host link (pinned "
            "and pageable rates, duplex rates, latency, copy engines) of each "
            "link profile; every planner re-run at batch %" PRId64 ".",
            o->batch);
  whatif_table(d, o, rd, winner);
  whatif_verdict(d, o, rd);
}

/* Where the data behind the report is. */
static void
section_data(ooc_doc *d, const ooc_report_data *rd)
{
  int64_t win = rd->win;

  ooc_doc_h(d, 2, "Data");
  ooc_doc_ul(d, 1);
  ooc_doc_li(d, "data/throughput/results.csv: every planner at batches %s",
             rd->batches);
  ooc_doc_li(d, "data/bandwidth/results.csv: the link bandwidth sweep");
  if (rd->have_mb)
    ooc_doc_li(d, "data/maxbatch/results.csv: largest batch per planner");
  ooc_doc_li(d, "data/whatif-*/results.csv: the what-if runs");
  ooc_doc_li(d, "data/*.dat: the gnuplot data of each plot (plots/README.md "
             "says how to restyle a plot)");
  if (win >= 0)
    ooc_doc_li(d, "data/memory.csv, data/timeline.csv: the winner's "
               "iteration");
  if (rd->failed)
    ooc_doc_li(d, "%" PRId64 " points failed and are missing; first: %s",
               rd->failed, rd->note);
  ooc_doc_ul(d, 0);
}

int
ooc_report_write(const ooc_report_opts *o, const ooc_report_data *rd,
                 ooc_report_info *info, ooc_err *err)
{
  char *title, md_path[4096], html_path[4096];
  ooc_doc d;
  int rc;

  snprintf(md_path, sizeof md_path, "%s/report.md", o->dir);
  snprintf(html_path, sizeof html_path, "%s/report.html", o->dir);
  {
    /* As long as the names: a model's may run to thousands of bytes. */
    int len = snprintf(NULL, 0, "oocsim report: %s, batch %" PRId64 ", %s",
                       rd->model->name, o->batch, rd->hw->name);
    if (len < 0 || (title = malloc((size_t)len + 1)) == NULL)
      return ooc_err_set(err, OOC_ENOMEM, "out of memory");
    snprintf(title, (size_t)len + 1, "oocsim report: %s, batch %" PRId64
             ", %s", rd->model->name, o->batch, rd->hw->name);
  }
  rc = ooc_doc_open(&d, md_path, html_path, title, err);
  free(title);
  if (rc == OOC_OK) {
    section_scenario(&d, o, rd);
    rc = section_comparison(&d, o, rd, err);
  }
  if (rc == OOC_OK) {
    section_winner(&d, o, rd, info);
    section_others(&d, o, rd);
    section_time(&d, o, rd);
    section_plots(&d, o, rd, info->winner);
    section_whatif(&d, o, rd, info->winner);
    section_data(&d, rd);
    ooc_doc_footer(&d);
  }
  if (rc != OOC_OK) {
    ooc_doc_abort(&d);
    return rc;
  }
  return ooc_doc_close(&d, err);
}
