/* analysis/summary_write.c — the summary object (summary.h) as JSON (cJSON)
 * and as readable text.
 *
 * Field order is the contract's, then the extensions (summary.h). An
 * infeasible run writes "iteration_s": null and "slowdown": null (there is
 * no iteration to time), "samples_per_s": 0 and the "oom" object; every
 * other number stays a number. Output is deterministic: the same summary
 * prints the same bytes. O(1) per summary.
 */
#include "config.h"

#include <cJSON.h>
#include <stdlib.h>

#include "analysis/summary.h"
#include "base/util.h"

static const char *const stall_keys[OOC_STALL_COUNT] = {
  [OOC_STALL_SWAPIN] = "swapin",
  [OOC_STALL_SWAPOUT] = "swapout",
  [OOC_STALL_OTHER] = "other",
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
       add_num(o, "samples_per_s", s->samples_per_s) &&
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
  ok = add_num(o, "alloc_s", s->alloc_s) &&
       add_num(o, "plan_wall_s", s->plan_wall_s) &&
       add_str(o, "plan_note", s->plan_note);
  if (!ok)
    goto fail;
  return o;
fail:
  cJSON_Delete(o);
  return NULL;
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
    fprintf(f, "            requested %s, live %s, reserved %s",
            ooc_fmt_bytes(s->oom.requested_bytes, b1, sizeof b1),
            ooc_fmt_bytes(s->oom.live_bytes, b2, sizeof b2),
            ooc_fmt_bytes(s->oom.reserved_bytes, b3, sizeof b3));
    fprintf(f, ", largest free %s\n",
            ooc_fmt_bytes(s->oom.largest_free_bytes, b1, sizeof b1));
    fprintf(f, "            %s\n", s->oom.reason);
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
  fprintf(f, "stalls      %.6f s: swap-in %.6f, swap-out %.6f, other %.6f\n",
          stall, s->stall_s[OOC_STALL_SWAPIN], s->stall_s[OOC_STALL_SWAPOUT],
          s->stall_s[OOC_STALL_OTHER]);
  fprintf(f, "tensors     keep %d, swap %d, recompute %d\n", s->counts[0],
          s->counts[1], s->counts[2]);
  fprintf(f, "simulation  %llu events in %.3f ms (planning %.3f ms)\n",
          (unsigned long long)s->events, s->sim_wall_s * 1e3,
          s->plan_wall_s * 1e3);
}
