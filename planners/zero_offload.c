/* planners/zero_offload.c — ZeRO-Offload: the optimizer's state and step
 * on the CPU, the weights on the GPU, and another planner's plan for the
 * activations in the room that leaves.
 *
 * Follows Ren et al. 2021, "ZeRO-Offload: Democratizing Billion-Scale
 * Model Training" (USENIX ATC), §4.1 (the offload strategy: the
 * half-precision parameters and the forward and backward stay on the GPU;
 * the gradients go to the CPU, where the fp32 master weights and the
 * optimizer state live and the parameter update runs; the updated
 * parameters come back) and §4.2 (one GPU). Each layer with parameters
 * is placed at OOC_PARAM_OFFLOAD (plan/plan.h): its weight gradients are
 * allocated for its backward and copied out right after it, its CPU step
 * (a HOST instruction, timed at the profile's host.optimizer_GBps) starts
 * as soon as they arrive, while the backward of the layers below goes
 * on, and its new weights are copied back after the iteration's last
 * swap-in. What the paper overlaps across iterations (§4.3, one-step
 * delayed parameter update) changes the training algorithm and is not
 * modelled: the next iteration's forward waits for the last copy. An
 * embedding whose table a tied linear shares stays on the device.
 *
 * The activations: ZeRO-Offload trains with activation checkpointing (its
 * evaluation's models use Megatron's), so the default is the
 * `checkpoint-dp` planner's plan; `--opt act=NAME` takes any other
 * planner but this one and joint. `--opt params=stream` streams the
 * weights too (OOC_PARAM_STREAM). `--opt device_layers=K` keeps the K
 * layers with the longest CPU steps on the device (the paper keeps none;
 * joint searches K). It plans against the budget plus the
 * device bytes the offload frees, less the largest weight gradient a
 * backward allocates, on an oracle at that budget; the combined plan is
 * then simulated at the real budget, and while it does not fit, the
 * activations' budget is lowered by the shortfall the simulator reports
 * (at most 6 tries; the last plan is returned either way, so the front
 * end reports its out-of-memory).
 *
 * Cost: one run of the activations' planner per try, one simulation each.
 * Ownership: the state owns its plans and its oracle (zo_free).
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "plan/planner.h"

enum { ZO_TRIES = 6 };

struct zo_state {
  ooc_plan act;               /* the activations' plan */
  int32_t *order;             /* layers with parameters, by CPU step */
  uint8_t *on_dev;            /* per layer: kept on the device */
  ooc_sim *sim;               /* oracle at the activations' budget */
  double work;                /* the activation planner's work_events,
                                 summed over its runs */
  int act_inited;
};

static const char *const zo_options[] = { "act", "params",
                                           "device_layers", NULL };

/* The layers with parameters by decreasing CPU step (ties: index), the
 * order in which device_layers keeps them on the device. */
static _Thread_local const int64_t *zo_key;
static int
by_cpu(const void *x, const void *y)
{
  int32_t i = *(const int32_t *)x, j = *(const int32_t *)y;

  if (zo_key[i] != zo_key[j])
    return zo_key[i] > zo_key[j] ? -1 : 1;
  return (i > j) - (i < j);
}

static void zo_free(void *state)
{
  struct zo_state *st = state;

  if (st->act_inited)
    ooc_plan_fini(&st->act);
  free(st->order);
  free(st->on_dev);
  ooc_sim_free(st->sim);
}

/* The planner named `name` among ctx's peers. */
static const ooc_planner_type *
find_peer(const ooc_planner_ctx *ctx, const char *name, ooc_err *err)
{
  int i;

  if (strcmp(name, "zero-offload") == 0 || strcmp(name, "joint") == 0)
    return ooc_err_set(err, OOC_EINVAL, "option act=%s: the activations' "
                       "planner cannot be zero-offload or joint", name),
           NULL;
  for (i = 0; ctx->peers != NULL && ctx->peers[i] != NULL; i++)
    if (strcmp(ctx->peers[i]->name, name) == 0)
      return ctx->peers[i];
  ooc_err_set(err, OOC_EINVAL, "option act=%s: no such planner", name);
  return NULL;
}

/* Plan the activations at budget b into st->act (OOC_OK, OOC_EOOM when
 * that planner has no plan there, or an error). */
static int
plan_acts(struct zo_state *st, const ooc_planner_ctx *ctx,
          const ooc_planner_type *t, uint64_t b, ooc_err *err)
{
  ooc_sim_config cfg = {
    .model = ctx->model, .hw = ctx->hw, .costs = ctx->costs,
    .allocator = ctx->allocator, .allocator_options = ctx->allocator_options,
    .budget = b, .chunk_bytes = ctx->chunk_bytes,
  };
  ooc_planner_ctx sub = *ctx;
  int rc;

  ooc_sim_free(st->sim);
  st->sim = NULL;
  if ((rc = ooc_sim_alloc(&cfg, &st->sim, err)) < 0)
    return rc;
  sub.budget = b;
  sub.sim = st->sim;
  sub.opts = NULL;
  sub.n_opts = 0;
  rc = ooc_planner_run(t, &sub, &st->act, ctx->scratch, err);
  /* Its simulations are planning's too (plan_simulations), and so is
   * the work it reports beside them (checkpoint-dp's tables). */
  ooc_sim_add_runs(ctx->sim, ooc_sim_runs(st->sim));
  if (rc == OOC_OK)
    st->work += ooc_metric_value(st->act.metrics, st->act.n_metrics,
                                 OOC_METRIC_WORK_EVENTS);
  return rc;
}

static int zo_plan(void *state, const ooc_planner_ctx *ctx, ooc_plan *pl,
                   ooc_err *err)
{
  struct zo_state *st = state;
  const ooc_liveness *lv = ctx->live;
  const ooc_model *m = ctx->model;
  const ooc_planner_type *t;
  const char *name = "checkpoint-dp", *where = "resident";
  uint64_t max_g, saved, extra, host = 0;
  ooc_sim_result r;
  int32_t l, n_off = 0;
  int tried, rc;

  int stream;
  int64_t keep = 0;
  int32_t n_par = 0;

  st->work = 0;
  if ((rc = ooc_planner_opt_int(ctx, "device_layers", &keep, err)) < 0)
    return rc;
  if (keep < 0)
    return ooc_err_set(err, OOC_EINVAL, "option device_layers=%lld: must "
                       "be >= 0", (long long)keep);
  ooc_planner_opt_str(ctx, "act", &name);
  ooc_planner_opt_str(ctx, "params", &where);
  if (strcmp(where, "resident") != 0 && strcmp(where, "stream") != 0)
    return ooc_err_set(err, OOC_EINVAL, "option params=%s: expected "
                       "resident or stream", where);
  stream = where[0] == 's';
  if ((t = find_peer(ctx, name, err)) == NULL)
    return OOC_EINVAL;
  /* No CPU optimizer on this profile: no plan (a result, as a budget
   * too small is; compare shows the row). */
  if (ctx->hw->host_opt_Bps <= 0)
    return ooc_err_set(err, OOC_EOOM, "profile '%s' gives no "
                       "host.optimizer_GBps (the CPU optimizer's rate)",
                       ctx->hw->name ? ctx->hw->name : "?");
  if ((rc = ooc_plan_init(&st->act, lv, err)) < 0)
    return rc;
  st->act_inited = 1;

  /* Which layers go: all but the device_layers with the longest CPU
   * steps. */
  st->order = malloc(((size_t)m->n_layers + 1) * sizeof *st->order);
  st->on_dev = calloc((size_t)m->n_layers + 1, 1);
  if (st->order == NULL || st->on_dev == NULL)
    return ooc_err_set(err, OOC_ENOMEM, "out of memory");
  for (l = 0; l < m->n_layers; l++)
    if (m->layers[l].params > 0)
      st->order[n_par++] = l;
  zo_key = ctx->costs->host_opt_ns;
  qsort(st->order, (size_t)n_par, sizeof *st->order, by_cpu);
  for (l = 0; l < n_par && l < keep; l++)
    st->on_dev[st->order[l]] = 1;

  /* The room the offload makes: the state it moves, less what a step
   * allocates instead (streamed: the next layer's weights arrive while
   * one runs). */
  saved = ooc_liveness_offloadable(lv, stream, st->on_dev, &max_g);
  max_g *= stream ? 2 : 1;
  extra = saved > max_g ? saved - max_g : 0;
  for (tried = 0; tried < ZO_TRIES; tried++) {
    ooc_err e;
    ooc_err_clear(&e);
    rc = plan_acts(st, ctx, t, ctx->budget + extra, &e);
    if (rc == OOC_ENOMEM) {
      *err = e;
      return rc;
    }
    if (rc == OOC_EOOM) {
      /* No activation plan at this budget (its largest step does not fit
       * even with the room offload makes): keep them all and let the
       * simulator say where memory runs out, a result as for any plan. */
      ooc_plan_reset(&st->act);
      extra = 0;
    } else if (rc != OOC_OK) {
      *err = e;
      return ooc_err_prefix(err, rc, "activations by '%s': ", t->name);
    }
    if ((rc = ooc_plan_copy(pl, &st->act)) < 0)
      return ooc_err_set(err, OOC_ENOMEM, "out of memory");
    pl->note[0] = '\0';
    pl->n_metrics = 0;
    for (l = 0, n_off = 0, host = 0; l < m->n_layers; l++) {
      if (!ooc_liveness_can_offload(lv, l) || st->on_dev[l] ||
          ooc_plan_set_param(pl, l, stream ? OOC_PARAM_STREAM
                                           : OOC_PARAM_OFFLOAD,
                             NULL) != OOC_OK)
        continue;
      n_off++;
      host += m->layers[l].param_bytes + m->layers[l].grad_bytes +
              m->layers[l].opt_bytes;
    }
    if ((rc = ooc_planner_evaluate(ctx, pl, &r, err)) < 0)
      return rc;
    if (r.feasible || extra == 0)
      break;
    /* Lower the activations' budget by what the simulator says is
     * missing (at least a sixteenth of the room the offload gave). */
    {
      uint64_t miss = r.oom.requested_bytes > r.oom.largest_free_bytes
                          ? r.oom.requested_bytes - r.oom.largest_free_bytes
                          : 0;
      if (miss < saved / 16)
        miss = saved / 16;
      extra = extra > miss ? extra - miss : 0;
    }
  }
  pl->sched_budget = ctx->budget;
  snprintf(pl->note, sizeof pl->note, "optimizer of %d layers on the CPU"
           "%s (%.2f GiB on the host); activations by %s at the budget + "
           "%.2f GiB", (int)n_off, stream ? ", weights streamed" : "",
           (double)host / (1u << 30), t->name, (double)extra / (1u << 30));
  ooc_plan_add_metric(pl, "offloaded_layers", n_off);
  ooc_plan_add_metric(pl, "host_state_GiB", (double)host / (1u << 30));
  ooc_plan_add_metric(pl, "act_budget_extra_GiB",
                      (double)extra / (1u << 30));
  ooc_plan_add_metric(pl, OOC_METRIC_WORK_EVENTS, st->work);
  return OOC_OK;
}

const ooc_planner_type ooc_planner_zero_offload = {
  .name = "zero-offload",
  .summary = "ZeRO-Offload: gradients to the host, optimizer state and "
             "step on the CPU, weights on the GPU; activations by "
             "checkpoint-dp (--opt act=)",
  .cite = "Ren et al. 2021, ZeRO-Offload, §4.1-4.2",
  .state_size = sizeof(struct zo_state),
  .options = zo_options,
  .flags = OOC_PLANNER_OFFLOAD,
  .free = zo_free,
  .plan = zo_plan,
};
