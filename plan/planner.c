/* plan/planner.c — the planner front end: option checking, the
 * budget check, dispatch, lowering and validation of the result, the
 * simulator as a search planner's oracle, and --opt helpers.
 *
 * The registry and lookup by name live a layer up, in planners/registry.c:
 * this front end runs whichever descriptor it is given.
 *
 * One idea (GSL's generic front end, e.g. min/fsolver.c): check everything
 * a planner could trip on before dispatching to it, and check its result
 * after, so each planner file only plans.
 *
 * Ownership: borrows the context; allocates the planner's state
 * (state_size bytes, zeroed) for one call and frees it. Cost: O(options x
 * accepted keys) for the checks plus the planner and one lowering.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ir/semantics.h"
#include "plan/planner.h"
#include "plan/toolkit.h"
#include "base/util.h"

int
ooc_planner_check_opts(const ooc_planner_type *t, const ooc_kv *opts, int n,
                       ooc_err *err)
{
  char list[512];
  int i, j, k;

  for (i = 0; i < n; i++) {
    const char *key = opts[i].key;
    int ok = 0;
    if (key == NULL || opts[i].value == NULL)
      return ooc_err_set(err, OOC_EINVAL, "planner '%s': option %d has no "
                         "key or value", t->name, i);
    for (k = 0; t->options != NULL && t->options[k] != NULL; k++)
      if (strcmp(t->options[k], key) == 0)
        ok = 1;
    if (!ok) {
      if (t->options == NULL || t->options[0] == NULL)
        return ooc_err_set(err, OOC_EINVAL, "planner '%s': unknown option "
                           "'%s' (it takes no options)", t->name, key);
      return ooc_err_set(err, OOC_EINVAL, "planner '%s': unknown option "
                         "'%s' (valid: %s)", t->name, key,
                         ooc_join_names(t->options, list, sizeof list));
    }
    for (j = 0; j < i; j++)
      if (strcmp(opts[j].key, key) == 0)
        return ooc_err_set(err, OOC_EINVAL, "planner '%s': option '%s' "
                           "given twice", t->name, key);
  }
  return OOC_OK;
}

int
ooc_planner_run(const ooc_planner_type *t, const ooc_planner_ctx *ctx,
                ooc_plan *pl, ooc_program *prog, ooc_err *err)
{
  void *state = NULL;
  int rc;

  if (t == NULL || ctx == NULL || ctx->model == NULL || ctx->live == NULL)
    return ooc_err_set(err, OOC_EINVAL, "planner: missing planner or "
                       "context");
  rc = ooc_planner_check_opts(t, ctx->opts, ctx->n_opts, err);
  if (rc != OOC_OK)
    return rc;
  /* No plan can fit: a result (OOC_EOOM), which the caller reports as an
   * INFEASIBLE scenario or, for a budget the user chose, as bad input. */
  if (((t->flags & OOC_PLANNER_OFFLOAD)
           ? ooc_plan_check_budget_offload(ctx->live, ctx->budget, err)
           : ooc_plan_check_budget(ctx->live, ctx->budget, err)) != OOC_OK) {
    if (err != NULL)
      err->code = OOC_EOOM;
    return OOC_EOOM;
  }
  if (pl->live != ctx->live || pl->action == NULL) {
    ooc_plan_fini(pl);
    rc = ooc_plan_init(pl, ctx->live, err);
    if (rc != OOC_OK)
      return rc;
  }
  ooc_plan_reset(pl);
  if (t->state_size > 0) {
    state = calloc(1, t->state_size);
    if (state == NULL)
      return ooc_err_set(err, OOC_ENOMEM, "planner '%s': out of memory",
                         t->name);
  }
  rc = t->alloc != NULL ? t->alloc(state, ctx, err) : OOC_OK;
  if (rc == OOC_OK)
    rc = t->plan(state, ctx, pl, err);
  if (t->free != NULL)
    t->free(state);
  free(state);
  if (rc != OOC_OK) {
    if (err != NULL && strncmp(err->msg, "planner '", 9) != 0)
      ooc_err_prefix(err, rc, "planner '%s': ", t->name);
    return rc;
  }
  if (pl->sched_budget == 0)
    pl->sched_budget = ctx->budget;
  if (ctx->layer_algo != NULL) {
    const ooc_liveness *lv = ctx->live;
    int32_t l;
    for (l = 0; l < ctx->model->n_layers; l++) {
      if (lv->fwd_step[l] >= 0)
        pl->algo[lv->fwd_step[l]] = ctx->layer_algo[2 * l];
      if (lv->bwd_step[l] >= 0)
        pl->algo[lv->bwd_step[l]] = ctx->layer_algo[2 * l + 1];
    }
  }
  rc = ooc_plan_lower(pl, ctx->live, prog, err);
  if (rc == OOC_OK)
    rc = ooc_program_validate(prog, err);
  if (rc != OOC_OK)
    return ooc_err_prefix(err, rc, "planner '%s' made an invalid plan: ",
                          t->name);
  return OOC_OK;
}

int
ooc_planner_evaluate(const ooc_planner_ctx *ctx, const ooc_plan *pl,
                     ooc_sim_result *r, ooc_err *err)
{
  return ooc_planner_evaluate_detail(ctx, pl, r, NULL, err);
}

/* The oracle's first half: pl lowered into ctx->scratch. */
static int
lower_for_oracle(const ooc_planner_ctx *ctx, const ooc_plan *pl,
                 ooc_err *err)
{
  if (ctx->sim == NULL || ctx->scratch == NULL)
    return ooc_err_set(err, OOC_EINVAL, "planner: no simulator oracle in "
                       "the context");
  return ooc_plan_lower(pl, ctx->live, ctx->scratch, err);
}

int
ooc_planner_evaluate_detail(const ooc_planner_ctx *ctx, const ooc_plan *pl,
                            ooc_sim_result *r, ooc_sim_detail *d,
                            ooc_err *err)
{
  int rc = lower_for_oracle(ctx, pl, err);

  return rc != OOC_OK ? rc
                      : ooc_sim_run_detail(ctx->sim, ctx->scratch, r, NULL,
                                           d, err);
}

uint64_t
ooc_planner_events(const ooc_sim_result *r)
{
  return r->iterations > 2 ? r->events * 2 / (uint64_t)r->iterations
                           : r->events;
}

int
ooc_planner_evaluate_cutoff(const ooc_planner_ctx *ctx, const ooc_plan *pl,
                            int64_t cutoff_ns, ooc_sim_result *r,
                            ooc_err *err)
{
  int rc;

  if (cutoff_ns > 0 && ctx->sim != NULL && ctx->scratch != NULL) {
    /* Its kernels back to back (or its swapped bytes on the link) already
     * take longer: no run could answer otherwise. */
    int64_t b = ooc_kit_plan_bound(ctx, pl);
    if (b > cutoff_ns) {
      *r = (ooc_sim_result){ .feasible = 1, .cut = 1, .iteration_ns = b };
      return OOC_OK;
    }
  }
  rc = lower_for_oracle(ctx, pl, err);
  return rc != OOC_OK ? rc
                      : ooc_sim_run_cutoff(ctx->sim, ctx->scratch, cutoff_ns,
                                           r, err);
}

int
ooc_planner_evaluate_profile(const ooc_planner_ctx *ctx, const ooc_plan *pl,
                             ooc_sim_result *r, ooc_sim_detail *d,
                             ooc_err *err)
{
  int rc;

  if (ctx->sim == NULL)
    return ooc_planner_evaluate_detail(ctx, pl, r, d, err);
  ooc_sim_set_host_unlimited(ctx->sim, 1);
  rc = ooc_planner_evaluate_detail(ctx, pl, r, d, err);
  ooc_sim_set_host_unlimited(ctx->sim, 0);
  return rc;
}

/* The value of key, or NULL. When what is not NULL it receives "--opt
 * KEY", the option's name in messages. */
static const char *
opt_find(const ooc_planner_ctx *ctx, const char *key, char *what, size_t n)
{
  int i;

  if (what != NULL)
    snprintf(what, n, "--opt %s", key);
  for (i = 0; i < ctx->n_opts; i++)
    if (ctx->opts[i].key != NULL && strcmp(ctx->opts[i].key, key) == 0)
      return ctx->opts[i].value;
  return NULL;
}

int
ooc_planner_opt_int(const ooc_planner_ctx *ctx, const char *key, int64_t *v,
                    ooc_err *err)
{
  char what[96];
  const char *s = opt_find(ctx, key, what, sizeof what);
  int rc;

  if (s == NULL)
    return 0;
  rc = ooc_parse_int(s, what, v, err);
  return rc == OOC_OK ? 1 : rc;
}

void
ooc_reserve_init(ooc_reserve *r, double budget_s)
{
  r->eval_s = 0;
  r->slack = 0.01 * budget_s;
}

void
ooc_reserve_timed(ooc_reserve *r, double t0)
{
  double d = ooc_wall_s() - t0;

  if (d > r->eval_s)
    r->eval_s = d;
}

double
ooc_reserve_s(const ooc_reserve *r, int k)
{
  return k * r->eval_s + r->slack;
}

int
ooc_planner_opt_seconds(const ooc_planner_ctx *ctx, const char *planner,
                        const char *key, double *v, ooc_err *err)
{
  char what[96];
  const char *s = opt_find(ctx, key, what, sizeof what);
  double x;
  int rc;

  if (s == NULL)
    return 0;
  if ((rc = ooc_parse_double(s, what, &x, err)) != OOC_OK)
    return rc;
  if (x < 0 || x > 1e9)
    return ooc_err_set(err, OOC_EINVAL, "planner '%s': option %s=%g: must "
                       "be in [0, 1e9] seconds (0: none)", planner, key, x);
  *v = x;
  return 1;
}

int
ooc_planner_opt_size(const ooc_planner_ctx *ctx, const char *key,
                     uint64_t *v, ooc_err *err)
{
  char what[96];
  const char *s = opt_find(ctx, key, what, sizeof what);
  int rc;

  if (s == NULL)
    return 0;
  rc = ooc_parse_size(s, what, v, err);
  return rc == OOC_OK ? 1 : rc;
}

int
ooc_planner_opt_str(const ooc_planner_ctx *ctx, const char *key,
                    const char **v)
{
  const char *s = opt_find(ctx, key, NULL, 0);

  if (s == NULL)
    return 0;
  *v = s;
  return 1;
}

int
ooc_planner_opt_sched(const ooc_planner_ctx *ctx, const char *planner,
                      uint64_t *v, ooc_err *err)
{
  const char *given = "";
  char b[32];
  int rc = ooc_planner_opt_size(ctx, "sched_budget", v, err);

  if (rc <= 0 || (*v > 0 && *v <= ctx->budget))
    return rc;
  ooc_planner_opt_str(ctx, "sched_budget", &given);
  return ooc_err_set(err, OOC_EINVAL, "planner '%s': option sched_budget=%s: "
                     "must be in (0, %s], the device budget", planner, given,
                     ooc_fmt_bytes(ctx->budget, b, sizeof b));
}

int
ooc_planner_accepts(const ooc_planner_type *t, const char *key)
{
  for (int i = 0; t->options != NULL && t->options[i] != NULL; i++)
    if (strcmp(t->options[i], key) == 0)
      return 1;
  return 0;
}

int
ooc_planner_opts_for(const ooc_planner_type *t, const ooc_kv *opts, int n,
                     ooc_kv *out)
{
  int k = 0;

  for (int j = 0; j < n; j++)
    if (opts[j].key != NULL && ooc_planner_accepts(t, opts[j].key))
      out[k++] = opts[j];
  return k;
}
