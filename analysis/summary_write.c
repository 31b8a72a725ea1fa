/* analysis/summary_write.c — the summary object (summary.h) as JSON
 * (cJSON), as the flat result columns every table shares, and as readable
 * text. docs/output-schema.md documents every field and column.
 *
 * Field order is the contract's, then the extensions (summary.h). An
 * infeasible run writes "iteration_s", "samples_per_s" and "slowdown" as
 * null (there is no iteration to time) and the "oom" object; in the flat
 * columns the same values are empty cells. Every other number stays a
 * number. Output is deterministic: the same summary prints the same bytes.
 * O(1) per summary.
 */
#include "config.h"

#include <cJSON.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/summary.h"
#include "base/util.h"

static int add_metrics(cJSON *o, const ooc_summary *s);

static const char *const stall_keys[OOC_STALL_COUNT] = {
  [OOC_STALL_SWAPIN] = "swapin",
  [OOC_STALL_SWAPOUT] = "swapout",
  [OOC_STALL_OTHER] = "other",
  [OOC_STALL_HOST] = "host",
};

static int
add_num(cJSON *o, const char *k, double v)
{
  return cJSON_AddNumberToObject(o, k, v) != NULL;
}

static int
add_str(cJSON *o, const char *k, const char *v)
{
  return cJSON_AddStringToObject(o, k, v != NULL ? v : "") != NULL;
}

static int
add_num_or_null(cJSON *o, const char *k, int valid, double v)
{
  if (valid)
    return add_num(o, k, v);
  return cJSON_AddNullToObject(o, k) != NULL;
}

void *
ooc_summary_to_cjson(const ooc_summary *s)
{
  cJSON *o = cJSON_CreateObject(), *oom, *c, *st;
  int ok, i;

  if (o == NULL)
    return NULL;
  ok = add_str(o, "model", s->model) &&
       add_num(o, "batch", (double)s->batch) &&
       add_str(o, "dtype", ooc_dtype_name(s->dtype)) &&
       add_str(o, "hw", s->hw) &&
       add_str(o, "planner", s->planner) &&
       add_str(o, "allocator", s->allocator) &&
       add_num(o, "budget_bytes", (double)s->budget_bytes) &&
       cJSON_AddBoolToObject(o, "feasible", s->feasible != 0) != NULL;
  if (!ok)
    goto fail;
  if (s->feasible) {
    if (cJSON_AddNullToObject(o, "oom") == NULL)
      goto fail;
  } else {
    if ((oom = cJSON_AddObjectToObject(o, "oom")) == NULL)
      goto fail;
    ok = add_str(oom, "op", s->oom_op) &&
         add_num(oom, "time_s", (double)s->oom.time_ns * 1e-9) &&
         add_num(oom, "requested_bytes", (double)s->oom.requested_bytes) &&
         add_num(oom, "live_bytes", (double)s->oom.live_bytes) &&
         add_num(oom, "reserved_bytes", (double)s->oom.reserved_bytes) &&
         add_num(oom, "largest_free_bytes",
                 (double)s->oom.largest_free_bytes) &&
         add_str(oom, "reason", s->oom.reason);
    if (!ok)
      goto fail;
  }
  ok = add_num_or_null(o, "iteration_s", s->feasible, s->iteration_s) &&
       add_num_or_null(o, "samples_per_s", s->feasible, s->samples_per_s) &&
       add_num(o, "incore_iteration_s", s->incore_iteration_s) &&
       add_num_or_null(o, "slowdown", s->feasible && s->slowdown > 0,
                       s->slowdown) &&
       add_num(o, "lower_bound_s", s->lower_bound_s) &&
       add_num(o, "peak_allocated_bytes", (double)s->peak_allocated_bytes) &&
       add_num(o, "peak_reserved_bytes", (double)s->peak_reserved_bytes) &&
       add_num(o, "h2d_bytes", (double)s->h2d_bytes) &&
       add_num(o, "d2h_bytes", (double)s->d2h_bytes) &&
       add_num(o, "recompute_flops", s->recompute_flops) &&
       add_num(o, "recompute_s", s->recompute_s) &&
       add_num(o, "compute_busy_s", s->compute_busy_s) &&
       add_num(o, "h2d_busy_s", s->h2d_busy_s) &&
       add_num(o, "d2h_busy_s", s->d2h_busy_s);
  if (!ok || (c = cJSON_AddObjectToObject(o, "counts")) == NULL)
    goto fail;
  ok = add_num(c, "keep", s->counts[0]) && add_num(c, "swap", s->counts[1]) &&
       add_num(c, "recompute", s->counts[2]) &&
       add_num(o, "events", (double)s->events) &&
       (s->measured ||
        (add_num(o, "simulated_iterations", s->iterations) &&
         cJSON_AddBoolToObject(o, "steady", s->steady != 0) != NULL)) &&
       add_num(o, "sim_wall_s", s->sim_wall_s) &&
       add_num(o, "compute_s", s->compute_s) &&
       add_num(o, "peak_host_pinned_bytes",
               (double)s->peak_host_pinned_bytes) &&
       add_num(o, "fragmentation", s->fragmentation);
  if (!ok || (st = cJSON_AddObjectToObject(o, "stall_s")) == NULL)
    goto fail;
  for (i = 0; i < OOC_STALL_COUNT; i++)
    if (!add_num(st, stall_keys[i], s->stall_s[i]))
      goto fail;
  if (s->offloaded_layers > 0) {
    /* Only for a plan that offloads parameters (the key is absent
     * otherwise, so earlier summaries read the same). */
    cJSON *po = cJSON_AddObjectToObject(o, "param_offload");
    if (po == NULL || !add_num(po, "layers", s->offloaded_layers) ||
        !add_num(po, "host_optimizer_s", s->host_optimizer_s) ||
        !add_num(po, "host_bytes", (double)s->offload_host_bytes))
      goto fail;
  }
  ok = add_num(o, "alloc_s", s->alloc_s) &&
       add_num(o, "plan_wall_s", s->plan_wall_s) &&
       add_str(o, "plan_note", s->plan_note) &&
       add_num(o, "plan_simulations", (double)s->plan_simulations) &&
       add_metrics(o, s) &&
       add_str(o, "optimizer", ooc_optimizer_name(s->optimizer)) &&
       (ooc_precision_name(s->precision)
            ? add_str(o, "precision", ooc_precision_name(s->precision))
            : cJSON_AddNullToObject(o, "precision") != NULL) &&
       cJSON_AddBoolToObject(o, "measured", s->measured != 0) != NULL;
  if (!ok)
    goto fail;
  return o;
fail:
  cJSON_Delete(o);
  return NULL;
}

const char *const ooc_summary_columns[] = {
  "budget_bytes", "feasible", "iteration_s", "samples_per_s",
  "incore_iteration_s", "slowdown", "vs_lower_bound", "lower_bound_s",
  "compute_s", "peak_allocated_bytes", "peak_reserved_bytes",
  "peak_host_pinned_bytes", "fragmentation", "h2d_bytes", "d2h_bytes",
  "recompute_flops", "recompute_s", "compute_busy_s", "h2d_busy_s",
  "d2h_busy_s", "stall_total_s", "stall_swapin_s", "stall_swapout_s",
  "stall_other_s", "stall_host_s", "alloc_s", "keep", "swap", "recompute", "events",
  "oom_op", "oom_time_s", "oom_requested_bytes", "oom_live_bytes",
  "oom_reserved_bytes", "oom_largest_free_bytes", "oom_reason", "plan_note",
  "plan_wall_s", "sim_wall_s", NULL
};

#define C_ OOC_CELL_COUNT
#define N_ OOC_CELL_NUMBER
#define T_ OOC_CELL_TEXT
const unsigned char ooc_summary_column_kinds[] = {
  C_, OOC_CELL_FLAG, N_, N_,
  N_, N_, N_, N_,
  N_, C_, C_,
  C_, N_, C_, C_,
  N_, N_, N_, N_,           /* recompute_flops: %.9g from 1e18 on */
  N_, N_, N_, N_,
  N_, N_, N_, C_, C_, C_, C_,
  T_, N_, C_, C_,
  C_, C_, T_, T_,
  N_, N_,
};
#undef C_
#undef N_
#undef T_

_Static_assert(sizeof ooc_summary_columns / sizeof ooc_summary_columns[0] ==
               OOC_SUMMARY_NCOLS + 1, "OOC_SUMMARY_NCOLS is the column count");
_Static_assert(sizeof ooc_summary_column_kinds == OOC_SUMMARY_NCOLS,
               "one kind per column");
_Static_assert(OOC_STALL_COUNT == 4, "one stall column per reason");

double
ooc_summary_vs_bound(const ooc_summary *s)
{
  return s->feasible && s->lower_bound_s > 0
             ? s->iteration_s / s->lower_bound_s : 0;
}

double
ooc_summary_stall_s(const ooc_summary *s)
{
  double t = 0;
  for (int i = 0; i < OOC_STALL_COUNT; i++)
    t += s->stall_s[i];
  return t;
}

static char *
cell_d(double v)
{
  char b[48];
  snprintf(b, sizeof b, "%.9g", v);
  return strdup(b);
}

/* A time in seconds, which the simulator keeps in whole nanoseconds: to
 * the nanosecond (as simulate --json prints it; %.9g gave 4.06488132 for
 * 4.064881323), trailing zeros dropped. */
static char *
cell_s(double v)
{
  char b[48];
  size_t n;

  if (!isfinite(v) || fabs(v) >= 1e9)
    return cell_d(v);
  snprintf(b, sizeof b, "%.9f", v);
  n = strlen(b);
  while (n > 1 && b[n - 1] == '0' && b[n - 2] != '.')
    b[--n] = '\0';
  if (n > 2 && b[n - 1] == '0' && b[n - 2] == '.')
    b[n -= 2] = '\0';
  return strdup(b);
}

/* A count kept in a double (recompute_flops): an integer, not 3.7e+11. */
static char *
cell_n(double v)
{
  char b[48];

  if (!isfinite(v) || fabs(v) >= 1e18)
    return cell_d(v);
  snprintf(b, sizeof b, "%.0f", v);
  return strdup(b);
}

/* A double that exists only when `valid`: "" otherwise. */
static char *
cell_d_if(int valid, double v)
{
  return valid ? cell_d(v) : strdup("");
}

static char *
cell_s_if(int valid, double v)
{
  return valid ? cell_s(v) : strdup("");
}

static char *
cell_u(uint64_t v)
{
  char b[32];
  snprintf(b, sizeof b, "%" PRIu64, v);
  return strdup(b);
}

static char *
cell_u_if(int valid, uint64_t v)
{
  return valid ? cell_u(v) : strdup("");
}

int
ooc_summary_cells(const ooc_summary *s, char **c)
{
  int k = 0, oom = !s->feasible, st;

  c[k++] = cell_u(s->budget_bytes);
  c[k++] = strdup(s->feasible ? "1" : "0");
  c[k++] = cell_s_if(s->feasible, s->iteration_s);
  c[k++] = cell_d_if(s->feasible, s->samples_per_s);
  c[k++] = cell_s(s->incore_iteration_s);
  c[k++] = cell_d_if(s->feasible && s->slowdown > 0, s->slowdown);
  c[k++] = cell_d_if(s->feasible && s->lower_bound_s > 0,
                     ooc_summary_vs_bound(s));
  c[k++] = cell_s(s->lower_bound_s);
  c[k++] = cell_s(s->compute_s);
  c[k++] = cell_u(s->peak_allocated_bytes);
  c[k++] = cell_u(s->peak_reserved_bytes);
  c[k++] = cell_u(s->peak_host_pinned_bytes);
  c[k++] = cell_d(s->fragmentation);
  c[k++] = cell_u(s->h2d_bytes);
  c[k++] = cell_u(s->d2h_bytes);
  c[k++] = cell_n(s->recompute_flops);
  c[k++] = cell_s(s->recompute_s);
  c[k++] = cell_s(s->compute_busy_s);
  c[k++] = cell_s(s->h2d_busy_s);
  c[k++] = cell_s(s->d2h_busy_s);
  c[k++] = cell_s(ooc_summary_stall_s(s));
  for (st = 0; st < OOC_STALL_COUNT; st++)
    c[k++] = cell_s(s->stall_s[st]);
  c[k++] = cell_s(s->alloc_s);
  c[k++] = cell_u((uint64_t)s->counts[0]);
  c[k++] = cell_u((uint64_t)s->counts[1]);
  c[k++] = cell_u((uint64_t)s->counts[2]);
  c[k++] = cell_u(s->events);
  c[k++] = strdup(oom && s->oom_op ? s->oom_op : "");
  c[k++] = cell_s_if(oom, (double)s->oom.time_ns / 1e9);
  c[k++] = cell_u_if(oom, s->oom.requested_bytes);
  c[k++] = cell_u_if(oom, s->oom.live_bytes);
  c[k++] = cell_u_if(oom, s->oom.reserved_bytes);
  c[k++] = cell_u_if(oom, s->oom.largest_free_bytes);
  c[k++] = strdup(oom ? s->oom.reason : "");
  c[k++] = strdup(s->plan_note ? s->plan_note : "");
  c[k++] = cell_d(s->plan_wall_s);
  c[k++] = cell_d(s->sim_wall_s);
  for (int j = 0; j < k; j++)
    if (!c[j])
      return OOC_ENOMEM;
  return OOC_OK;
}

int
ooc_summary_cells_none(const ooc_summary *s, char **c)
{
  for (int k = 0; k < OOC_SUMMARY_NCOLS; k++) {
    const char *name = ooc_summary_columns[k];
    if (strcmp(name, "budget_bytes") == 0)
      c[k] = cell_u(s->budget_bytes);
    else if (strcmp(name, "feasible") == 0)
      c[k] = strdup("0");
    else if (strcmp(name, "oom_reason") == 0)
      c[k] = strdup(s->oom.reason);
    else
      c[k] = strdup("");
    if (c[k] == NULL)
      return OOC_ENOMEM;
  }
  return OOC_OK;
}

int
ooc_summary_write_json(FILE *f, const ooc_summary *s, int pretty)
{
  cJSON *o = ooc_summary_to_cjson(s);
  char *text;
  int rc = OOC_OK;

  if (o == NULL)
    return OOC_ENOMEM;
  text = pretty ? cJSON_Print(o) : cJSON_PrintUnformatted(o);
  cJSON_Delete(o);
  if (text == NULL)
    return OOC_ENOMEM;
  if (fputs(text, f) == EOF || fputc('\n', f) == EOF)
    rc = OOC_EIO;
  free(text);
  return rc;
}

void
ooc_summary_write_text(FILE *f, const ooc_summary *s)
{
  char b1[32], b2[32], b3[32];
  double stall = 0;
  int i;

  for (i = 0; i < OOC_STALL_COUNT; i++)
    stall += s->stall_s[i];
  fprintf(f, "scenario    %s, batch %lld, %s on %s\n", s->model,
          (long long)s->batch, ooc_dtype_name(s->dtype), s->hw);
  fprintf(f, "plan        %s with the %s allocator, budget %s\n", s->planner,
          s->allocator, ooc_fmt_bytes(s->budget_bytes, b1, sizeof b1));
  if (s->plan_note != NULL && s->plan_note[0] != '\0')
    fprintf(f, "planner     %s\n", s->plan_note);
  if (s->feasible) {
    fprintf(f, "result      feasible: %.6f s per iteration, %.2f samples/s\n",
            s->iteration_s, s->samples_per_s);
  } else {
    fprintf(f, "result      INFEASIBLE: out of memory at %s (t = %.6f s)\n",
            s->oom_op, (double)s->oom.time_ns * 1e-9);
    if (s->iterations > 2)
      fprintf(f, "            in timed iteration %d: the earlier ones fit, "
              "but the allocator had not settled\n", s->iterations);
    fprintf(f, "            requested %s, live %s, reserved %s",
            ooc_fmt_bytes(s->oom.requested_bytes, b1, sizeof b1),
            ooc_fmt_bytes(s->oom.live_bytes, b2, sizeof b2),
            ooc_fmt_bytes(s->oom.reserved_bytes, b3, sizeof b3));
    fprintf(f, ", largest free %s\n",
            ooc_fmt_bytes(s->oom.largest_free_bytes, b1, sizeof b1));
    fprintf(f, "            %s\n", s->oom.reason);
    if (!s->measured && s->iterations >= 1)
      fprintf(f, "            link, compute and stalls below: timed "
              "iteration %d up to then\n", s->iterations);
  }
  fprintf(f, "in-core     %.6f s per iteration on an unlimited device",
          s->incore_iteration_s);
  if (s->feasible && s->slowdown > 0)
    fprintf(f, " (slowdown %.3fx)", s->slowdown);
  fputc('\n', f);
  fprintf(f, "lower bound %.6f s", s->lower_bound_s);
  if (s->feasible && s->lower_bound_s > 0)
    fprintf(f, " (iteration is %.3fx the bound)",
            s->iteration_s / s->lower_bound_s);
  fprintf(f, "; pure compute %.6f s\n", s->compute_s);
  fprintf(f, "memory      peak allocated %s, peak reserved %s",
          ooc_fmt_bytes(s->peak_allocated_bytes, b1, sizeof b1),
          ooc_fmt_bytes(s->peak_reserved_bytes, b2, sizeof b2));
  fprintf(f, ", fragmentation %.3f, pinned host %s\n", s->fragmentation,
          ooc_fmt_bytes(s->peak_host_pinned_bytes, b3, sizeof b3));
  fprintf(f, "link        H2D %s in %.6f s, D2H %s in %.6f s\n",
          ooc_fmt_bytes(s->h2d_bytes, b1, sizeof b1), s->h2d_busy_s,
          ooc_fmt_bytes(s->d2h_bytes, b2, sizeof b2), s->d2h_busy_s);
  fprintf(f, "compute     busy %.6f s, recompute %.6f s (%.4g GFLOP), "
          "allocator %.6f s\n", s->compute_busy_s, s->recompute_s,
          s->recompute_flops * 1e-9, s->alloc_s);
  fprintf(f, "stalls      %.6f s: swap-in %.6f, swap-out %.6f, other %.6f, "
          "host %.6f\n", stall, s->stall_s[OOC_STALL_SWAPIN],
          s->stall_s[OOC_STALL_SWAPOUT], s->stall_s[OOC_STALL_OTHER],
          s->stall_s[OOC_STALL_HOST]);
  fprintf(f, "tensors     keep %d, swap %d, recompute %d\n", s->counts[0],
          s->counts[1], s->counts[2]);
  if (s->offloaded_layers > 0)
    fprintf(f, "offload     optimizer of %d layers on the CPU, busy %.6f s; "
            "%s on the host\n", s->offloaded_layers, s->host_optimizer_s,
            ooc_fmt_bytes(s->offload_host_bytes, b1, sizeof b1));
  fprintf(f, "simulation  %llu events in %.3f ms (planning %.3f ms, %llu "
          "simulation%s)\n", (unsigned long long)s->events,
          s->sim_wall_s * 1e3, s->plan_wall_s * 1e3,
          (unsigned long long)s->plan_simulations,
          s->plan_simulations == 1 ? "" : "s");
  if (s->feasible && !s->steady && !s->measured)
    fprintf(f, "warning     not steady: the allocator still took or gave "
            "back device memory in the last of %d iterations; a longer run "
            "may differ or run out of memory (--steady)\n", s->iterations);
}
/* "planner_metrics": {name: value, ...}, only when the planner gave any. */
static int
add_metrics(cJSON *o, const ooc_summary *s)
{
  cJSON *m;

  if (s->n_metrics <= 0)
    return 1;
  if ((m = cJSON_AddObjectToObject(o, "planner_metrics")) == NULL)
    return 0;
  for (int k = 0; k < s->n_metrics; k++)
    if (cJSON_AddNumberToObject(m, s->metrics[k].name,
                                s->metrics[k].value) == NULL)
      return 0;
  return 1;
}

