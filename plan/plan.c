/* plan/plan.c — plans (keep | swap | recompute per activation) and their
 * lowering into the program IR.
 *
 * One idea: lowering walks the schedule once. Records are first bucketed by
 * the step at which they act (counting sort, stable), so each step emits
 * its recomputes, allocations, kernel, frees, swap-outs and swap-ins in
 * O(what it touches). A per-act state machine (absent, resident, swapped
 * out, swap-in in flight, dropped) checks the records against the uses as
 * it goes, so a bad record is reported by number before the simulator
 * ever sees the program. The emitted order is documented in plan.h and
 * docs/plan-format.md; the memory model is SuperNeurons §3.2 (free after
 * last use) and §3.3 (offload/prefetch), recompute as in §3.4.
 *
 * Ownership: ooc_plan owns its record arrays and a scratch area
 * (struct ooc_plan_scratch) that lowering reuses: after the first lowering
 * of a plan with a given number of records, ooc_plan_lower() allocates
 * nothing. Cost: O(steps + acts + records + uses + args) per lowering.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ir/algo.h"
#include "ir/kernel.h"
#include "ir/semantics.h"
#include "plan/plan.h"

/* Buckets of items keyed by step: items with key s are
 * idx[first[s] .. first[s+1]). */
typedef struct bucket {
  int32_t *first;   /* n_steps + 1 */
  int32_t *idx;     /* capacity items */
} bucket;

enum { B_OUT, B_INAFTER, B_INBEFORE, B_OUTWAIT, B_RCBEFORE, B_RCFREE,
       B_COUNT };

enum { ST_ABSENT = 0, ST_RESIDENT, ST_OUT, ST_IN_FLIGHT, ST_DROPPED };

struct ooc_plan_scratch {
  int32_t n_steps, n_acts;
  int32_t cap_items;          /* capacity of per-record arrays */
  bucket b[B_COUNT];
  bucket frees;               /* acts freed by liveness after step s */
  int32_t *key;               /* per item: bucket key (temp) */
  int32_t *order;             /* per item: iteration order (temp) */
  int32_t *cnt;               /* n_acts + 1 or n_steps + 1 counters */
  int32_t *h2d_instr;         /* per swap record: its H2D */
  int32_t *free_instr;        /* per swap record: the FREE after its D2H */
  int32_t *act_free;          /* per act: free step (extended last use) */
  int32_t *rec_of;            /* per act: last record that moved it */
  uint8_t *rec_is_rc;         /* per act: that record is a recompute */
  uint8_t *state;             /* per act: ST_* */
  uint8_t *grad_live;         /* per act: gradient allocated */
  uint8_t *gstate;            /* per act: its gradient's ST_* (swaps) */
  int32_t *grec_of;           /* per act: last record that moved its
                                 gradient */
  int32_t *stamp;             /* per act: dedupe (temp) */
  int32_t *argpos;            /* per act: arg index in the current COMPUTE */
  /* A batch of recomputes before one step: per act, the step the next
   * three are for, the batch position of the last recompute reading it
   * (INT32_MAX: the step itself reads it), the record dropping it after
   * that step (-1 none); and the step at which it was freed early. */
  int32_t *bat_step, *bat_last, *bat_drop, *early;
  int32_t *inbuf, cap_in;      /* what one recompute reads */
  /* The model's forced recomputes (lv->act_forced) added to a plan:
   * its records and actions plus theirs (forced_plan). */
  ooc_recompute *eff_rc;
  int32_t cap_eff_rc;
  uint8_t *eff_action;
  int32_t *need_by;            /* per act: earliest recompute reading it */
  int32_t *rec_first;          /* per act + 1: its plan records, */
  int32_t *rec_idx;            /* rec_idx[rec_first[a] .. rec_first[a+1])
                                  (>= 0 swap i, < 0 recompute -1 - i) */
  int32_t cap_rec_idx;
  /* Parameter offload, per layer: its OOC_T_WGRAD and OOC_T_OPTSTATE
   * tensors and its HOST step in the program being lowered (-1). */
  int32_t *wg_tensor, *os_tensor, *host_instr;
  /* Streamed weights (OOC_PARAM_STREAM): per layer the H2D of its current
   * copy; its residency intervals [pi_start, pi_end] over steps, with
   * the layer, and their indices by start and by end. */
  int32_t *p_h2d, *p_free;     /* and the FREE of its last copy */
  int32_t n_pi, cap_pi;
  int32_t *pi_layer, *pi_start, *pi_end, *pi_by_start, *pi_by_end;
};

static void
scratch_free(struct ooc_plan_scratch *sc)
{
  int k;

  if (sc == NULL)
    return;
  for (k = 0; k < B_COUNT; k++) {
    free(sc->b[k].first);
    free(sc->b[k].idx);
  }
  free(sc->frees.first);
  free(sc->frees.idx);
  free(sc->key);
  free(sc->order);
  free(sc->cnt);
  free(sc->h2d_instr);
  free(sc->free_instr);
  free(sc->act_free);
  free(sc->rec_of);
  free(sc->rec_is_rc);
  free(sc->state);
  free(sc->grad_live);
  free(sc->gstate);
  free(sc->grec_of);
  free(sc->stamp);
  free(sc->argpos);
  free(sc->bat_step);
  free(sc->bat_last);
  free(sc->bat_drop);
  free(sc->early);
  free(sc->inbuf);
  free(sc->eff_rc);
  free(sc->eff_action);
  free(sc->need_by);
  free(sc->rec_first);
  free(sc->rec_idx);
  free(sc->wg_tensor);
  free(sc->os_tensor);
  free(sc->host_instr);
  free(sc->p_h2d);
  free(sc->p_free);
  free(sc->pi_layer);
  free(sc->pi_start);
  free(sc->pi_end);
  free(sc->pi_by_start);
  free(sc->pi_by_end);
  free(sc);
}

static struct ooc_plan_scratch *
scratch_alloc(int32_t n_steps, int32_t n_acts)
{
  struct ooc_plan_scratch *sc = calloc(1, sizeof *sc);
  size_t nk = (size_t)(n_steps > n_acts ? n_steps : n_acts) + 2;
  int k;

  if (sc == NULL)
    return NULL;
  sc->n_steps = n_steps;
  sc->n_acts = n_acts;
  for (k = 0; k < B_COUNT; k++)
    if ((sc->b[k].first = calloc((size_t)n_steps + 2, sizeof(int32_t))) == NULL)
      goto fail;
  sc->frees.first = calloc((size_t)n_steps + 2, sizeof(int32_t));
  sc->frees.idx = calloc((size_t)n_acts + 1, sizeof(int32_t));
  sc->cnt = calloc(nk, sizeof(int32_t));
  sc->act_free = calloc((size_t)n_acts + 1, sizeof(int32_t));
  sc->rec_of = calloc((size_t)n_acts + 1, sizeof(int32_t));
  sc->rec_is_rc = calloc((size_t)n_acts + 1, 1);
  sc->state = calloc((size_t)n_acts + 1, 1);
  sc->grad_live = calloc((size_t)n_acts + 1, 1);
  sc->gstate = calloc((size_t)n_acts + 1, 1);
  sc->grec_of = calloc((size_t)n_acts + 1, sizeof(int32_t));
  sc->stamp = calloc((size_t)n_acts + 1, sizeof(int32_t));
  sc->argpos = calloc((size_t)n_acts + 1, sizeof(int32_t));
  sc->bat_step = calloc((size_t)n_acts + 1, sizeof(int32_t));
  sc->bat_last = calloc((size_t)n_acts + 1, sizeof(int32_t));
  sc->bat_drop = calloc((size_t)n_acts + 1, sizeof(int32_t));
  sc->early = calloc((size_t)n_acts + 1, sizeof(int32_t));
  if (!sc->frees.first || !sc->frees.idx || !sc->cnt || !sc->act_free ||
      !sc->rec_of || !sc->rec_is_rc || !sc->state || !sc->grad_live ||
      !sc->gstate || !sc->grec_of ||
      !sc->stamp || !sc->argpos || !sc->bat_step || !sc->bat_last ||
      !sc->bat_drop || !sc->early)
    goto fail;
  return sc;
fail:
  scratch_free(sc);
  return NULL;
}

/* Make the per-record arrays hold n items. */
static int
scratch_reserve(struct ooc_plan_scratch *sc, int32_t n)
{
  int32_t cap = sc->cap_items;
  int k;

  if (n <= cap)
    return OOC_OK;
  while (cap < n)
    cap = cap ? 2 * cap : 64;
#define GROW(p)                                                              \
  do {                                                                       \
    void *q_ = realloc((p), (size_t)cap * sizeof *(p));                      \
    if (q_ == NULL)                                                          \
      return OOC_ENOMEM;                                                     \
    (p) = q_;                                                                \
  } while (0)
  for (k = 0; k < B_COUNT; k++)
    GROW(sc->b[k].idx);
  GROW(sc->key);
  GROW(sc->order);
  GROW(sc->h2d_instr);
  GROW(sc->free_instr);
#undef GROW
  sc->cap_items = cap;
  return OOC_OK;
}

/* Stable counting sort of items 0..n-1 (visited in `order`, or 0..n-1 when
 * order is NULL) by key[] in [-1, nkeys); key -1 items are left out. */
static void
bucket_build(bucket *b, int32_t nkeys, const int32_t *key, int32_t n,
             const int32_t *order)
{
  int32_t i, k;

  for (k = 0; k <= nkeys; k++)
    b->first[k] = 0;
  for (i = 0; i < n; i++)
    if (key[i] >= 0)
      b->first[key[i] + 1]++;
  for (k = 0; k < nkeys; k++)
    b->first[k + 1] += b->first[k];
  /* first[k] now is the start of bucket k; fill using first[] as cursors
   * shifted by one, then restore. */
  for (i = 0; i < n; i++) {
    int32_t it = order ? order[i] : i;
    if (key[it] >= 0)
      b->idx[b->first[key[it]]++] = it;
  }
  for (k = nkeys; k > 0; k--)
    b->first[k] = b->first[k - 1];
  b->first[0] = 0;
}

/* --- plans ---------------------------------------------------------------- */

int
ooc_plan_init(ooc_plan *pl, const ooc_liveness *lv, ooc_err *err)
{
  *pl = (ooc_plan){ .live = lv, .n_acts = lv->n_acts };
  pl->action = calloc((size_t)lv->n_acts + 1, 1);
  pl->algo = calloc((size_t)lv->n_steps + 1, 1);
  pl->param_where = calloc((size_t)lv->model->n_layers + 1, 1);
  pl->scratch = scratch_alloc(lv->n_steps, lv->n_acts);
  if (pl->scratch != NULL) {
    size_t nl = (size_t)lv->model->n_layers + 1;
    pl->scratch->wg_tensor = malloc(nl * sizeof(int32_t));
    pl->scratch->os_tensor = malloc(nl * sizeof(int32_t));
    pl->scratch->host_instr = malloc(nl * sizeof(int32_t));
    pl->scratch->p_h2d = malloc(nl * sizeof(int32_t));
    pl->scratch->p_free = malloc(nl * sizeof(int32_t));
    if (!pl->scratch->wg_tensor || !pl->scratch->os_tensor ||
        !pl->scratch->host_instr || !pl->scratch->p_h2d ||
        !pl->scratch->p_free) {
      ooc_plan_fini(pl);
      return ooc_err_set(err, OOC_ENOMEM, "plan: out of memory");
    }
    pl->scratch->cap_in = ooc_plan_recompute_inputs_max(lv) + 1;
    pl->scratch->inbuf = calloc((size_t)pl->scratch->cap_in,
                                sizeof *pl->scratch->inbuf);
  }
  if (pl->action == NULL || pl->algo == NULL || pl->param_where == NULL ||
      pl->scratch == NULL || pl->scratch->inbuf == NULL) {
    ooc_plan_fini(pl);
    return ooc_err_set(err, OOC_ENOMEM, "plan: out of memory");
  }
  return OOC_OK;
}

void
ooc_plan_fini(ooc_plan *pl)
{
  if (pl == NULL)
    return;
  free(pl->action);
  free(pl->algo);
  free(pl->param_where);
  free(pl->swaps);
  free(pl->recomps);
  scratch_free(pl->scratch);
  memset(pl, 0, sizeof *pl);
}

void
ooc_plan_reset(ooc_plan *pl)
{
  if (pl->action)
    memset(pl->action, 0, (size_t)pl->n_acts);
  if (pl->algo && pl->live)
    memset(pl->algo, 0, (size_t)pl->live->n_steps);
  if (pl->param_where && pl->live && pl->n_offloaded > 0)
    memset(pl->param_where, 0, (size_t)pl->live->model->n_layers);
  pl->n_offloaded = 0;
  pl->n_swaps = 0;
  pl->n_recomps = 0;
  pl->flags = 0;
  pl->sched_budget = 0;
  pl->n_metrics = 0;
  pl->note[0] = '\0';
}

int
ooc_plan_add_swap(ooc_plan *pl, const ooc_swap *s)
{
  if (s->act < 0 || s->act >= pl->n_acts)
    return OOC_EINVAL;
  if (pl->n_swaps == pl->cap_swaps) {
    int32_t cap = pl->cap_swaps ? 2 * pl->cap_swaps : 64;
    ooc_swap *q = realloc(pl->swaps, (size_t)cap * sizeof *q);
    if (q == NULL)
      return OOC_ENOMEM;
    pl->swaps = q;
    pl->cap_swaps = cap;
  }
  pl->swaps[pl->n_swaps++] = *s;
  if (!s->grad)
    pl->action[s->act] = OOC_SWAP;
  return OOC_OK;
}

int32_t
ooc_plan_recompute_inputs(const ooc_liveness *lv, int32_t act,
                          int32_t free_after, int32_t *out, int32_t cap)
{
  const ooc_model *m = lv->model;
  int32_t k, j, n = 0;

  for (k = 0; k < lv->act_nlayers[act]; k++) {
    int32_t l = lv->act_layers[lv->act_lfirst[act] + k];
    const ooc_layer *ly = &m->layers[l];
    if (lv->fwd_step[l] > free_after)
      break;
    for (j = 0; j < ly->n_in; j++) {
      int32_t b = lv->layer_act[ooc_layer_input(m, ly, j)];
      if (b != act && b != 0) {
        if (n < cap)
          out[n] = b;
        n++;
      }
    }
  }
  return n;
}

int32_t
ooc_plan_recompute_inputs_max(const ooc_liveness *lv)
{
  return lv->recompute_inputs_max;
}

double
ooc_metric_value(const ooc_metric *m, int n, const char *name)
{
  for (int k = 0; k < n; k++)
    if (strcmp(m[k].name, name) == 0)
      return m[k].value;
  return 0;
}

void
ooc_plan_add_metric(ooc_plan *pl, const char *name, double value)
{
  if (pl->n_metrics >= OOC_PLAN_METRICS)
    return;
  snprintf(pl->metrics[pl->n_metrics].name,
           sizeof pl->metrics[pl->n_metrics].name, "%s", name);
  pl->metrics[pl->n_metrics++].value = value;
}

int
ooc_plan_add_recompute(ooc_plan *pl, const ooc_recompute *r)
{
  if (r->act < 0 || r->act >= pl->n_acts)
    return OOC_EINVAL;
  if (pl->n_recomps == pl->cap_recomps) {
    int32_t cap = pl->cap_recomps ? 2 * pl->cap_recomps : 64;
    ooc_recompute *q = realloc(pl->recomps, (size_t)cap * sizeof *q);
    if (q == NULL)
      return OOC_ENOMEM;
    pl->recomps = q;
    pl->cap_recomps = cap;
  }
  pl->recomps[pl->n_recomps++] = *r;
  pl->action[r->act] = OOC_RECOMPUTE;
  return OOC_OK;
}

int
ooc_plan_copy(ooc_plan *dst, const ooc_plan *src)
{
  int32_t i;

  if (dst->live != src->live || dst->action == NULL) {
    ooc_plan_fini(dst);
    if (ooc_plan_init(dst, src->live, NULL) != OOC_OK)
      return OOC_ENOMEM;
  }
  ooc_plan_reset(dst);
  for (i = 0; i < src->n_swaps; i++)
    if (ooc_plan_add_swap(dst, &src->swaps[i]) != OOC_OK)
      return OOC_ENOMEM;
  for (i = 0; i < src->n_recomps; i++)
    if (ooc_plan_add_recompute(dst, &src->recomps[i]) != OOC_OK)
      return OOC_ENOMEM;
  memcpy(dst->action, src->action, (size_t)src->n_acts);
  memcpy(dst->algo, src->algo, (size_t)src->live->n_steps);
  memcpy(dst->param_where, src->param_where,
         (size_t)src->live->model->n_layers);
  dst->n_offloaded = src->n_offloaded;
  dst->flags = src->flags;
  dst->sched_budget = src->sched_budget;
  memcpy(dst->note, src->note, sizeof dst->note);
  memcpy(dst->metrics, src->metrics, sizeof dst->metrics);
  dst->n_metrics = src->n_metrics;
  return OOC_OK;
}

int
ooc_plan_set_param(ooc_plan *pl, int32_t l, int where, ooc_err *err)
{
  const ooc_model *m = pl->live->model;
  int32_t i;

  if (l < 0 || l >= m->n_layers || m->layers[l].params == 0)
    return ooc_err_set(err, OOC_EINVAL, "plan: layer %d has no parameters "
                       "to place", l);
  if (where != OOC_PARAM_DEVICE && where != OOC_PARAM_OFFLOAD &&
      where != OOC_PARAM_STREAM)
    return ooc_err_set(err, OOC_EINVAL, "plan: layer %d: unknown parameter "
                       "placement %d", l, where);
  if (where != OOC_PARAM_DEVICE && !ooc_liveness_can_offload(pl->live, l)) {
    i = pl->live->tied_linear;
    return ooc_err_set(err, OOC_EINVAL, "plan: layer %d '%s' is an "
                       "embedding that tied linear '%s' shares; its "
                       "parameters stay on the device", l,
                       m->layers[l].name ? m->layers[l].name : "?",
                       m->layers[i].name ? m->layers[i].name : "?");
  }
  pl->n_offloaded += (where != OOC_PARAM_DEVICE) -
                     (pl->param_where[l] != OOC_PARAM_DEVICE);
  pl->param_where[l] = (uint8_t)where;
  return OOC_OK;
}

uint64_t
ooc_plan_offload_saved(const ooc_plan *pl, uint64_t *max_wgrad)
{
  const ooc_model *m = pl->live->model;
  uint64_t saved = 0, mx = 0;
  int32_t l;

  for (l = 0; l < m->n_layers && pl->n_offloaded > 0; l++)
    if (pl->param_where[l] != OOC_PARAM_DEVICE) {
      int st = pl->param_where[l] == OOC_PARAM_STREAM;
      uint64_t tr = m->layers[l].grad_bytes +
                    (st ? m->layers[l].param_bytes : 0);
      saved += m->layers[l].grad_bytes + m->layers[l].opt_bytes +
               (st ? m->layers[l].param_bytes : 0);
      if (tr > mx)
        mx = tr;
    }
  if (max_wgrad != NULL)
    *max_wgrad = mx;
  return saved;
}

void
ooc_plan_counts(const ooc_plan *pl, int counts[3])
{
  int32_t a;

  counts[0] = counts[1] = counts[2] = 0;
  for (a = 0; a < pl->n_acts; a++) {
    unsigned act = pl->action[a] < 3 ? pl->action[a] : 0;
    if (a == 0 && act == OOC_KEEP)
      continue;
    counts[act]++;
  }
}

int
ooc_plan_grad_swaps(const ooc_plan *pl)
{
  int32_t i, j;
  int n = 0;

  for (i = 0; i < pl->n_swaps; i++) {
    if (!pl->swaps[i].grad)
      continue;
    for (j = 0; j < i; j++)
      if (pl->swaps[j].grad && pl->swaps[j].act == pl->swaps[i].act)
        break;
    n += j == i;
  }
  return n;
}

int
ooc_liveness_step_uses_grad(const ooc_liveness *lv, int32_t s, int32_t a)
{
  const ooc_model *m = lv->model;
  const ooc_layer *ly;
  int32_t k, l;

  if (s < 0 || s >= lv->n_steps || lv->steps[s].phase != OOC_PH_BWD ||
      a < 0 || a >= lv->n_acts || lv->grad_tensor[a] < 0)
    return 0;
  l = lv->steps[s].layer;
  ly = &m->layers[l];
  for (k = -1; k < ly->n_in; k++)
    if (ooc_layer_bwd_grad(ly, k) &&
        lv->layer_act[k < 0 ? l : ooc_layer_input(m, ly, k)] == a)
      return 1;
  return 0;
}

/* --- lowering --------------------------------------------------------------- */

typedef struct lower {
  const ooc_plan *pl;
  const ooc_liveness *lv;
  const ooc_model *m;
  ooc_program *p;
  struct ooc_plan_scratch *sc;
  ooc_err *err;
  int32_t last_copy[OOC_NSTREAMS]; /* last instruction on each stream */
  int32_t synced[OOC_NSTREAMS];    /* last one the compute stream waited on */
  int32_t memwait;                 /* step whose swap-out waits go on the
                                      next compute-stream instruction, -1 */
  int batch_err;                   /* an early FREE could not be emitted */
  int32_t pi_next, pi_free;        /* streamed weights: next interval by
                                      start to copy in, by end to free */
  int32_t rc_key;                  /* the next recompute kernel's stamp
                                      (-2, -3, ...: one per kernel) */
} lower;

static const char *
act_name(const lower *L, int32_t a)
{
  const char *n = L->m->layers[L->lv->act_layer[a]].name;
  return n ? n : "?";
}

static int
oom(lower *L)
{
  return ooc_err_set(L->err, OOC_ENOMEM, "lowering: out of memory");
}

/* Emit and remember the last instruction per stream. The first
 * compute-stream instruction of a step (its first ALLOC, or its kernel)
 * carries the step's waits for swap-outs (out_wait): the room they make is
 * what the step allocates, and an ALLOC that finds no room is out of
 * memory, it does not wait. */
static int32_t
emit(lower *L, ooc_instr_kind kind, int stream, ooc_phase ph, int32_t layer,
     int32_t tensor, int where)
{
  const struct ooc_plan_scratch *sc = L->sc;
  int32_t i = ooc_program_emit(L->p, kind, stream, ph, layer, tensor, where);
  int32_t k, s = L->memwait;

  if (i < 0)
    return i;
  L->last_copy[stream] = i;
  if (s >= 0 && stream == OOC_STREAM_COMPUTE) {
    L->memwait = -1;
    for (k = sc->b[B_OUTWAIT].first[s]; k < sc->b[B_OUTWAIT].first[s + 1];
         k++)
      if (ooc_program_wait(L->p, sc->free_instr[sc->b[B_OUTWAIT].idx[k]]) !=
          OOC_OK)
        return OOC_ENOMEM;
  }
  return i;
}

#define EMIT(...)                                                            \
  do {                                                                       \
    if (emit(L, __VA_ARGS__) < 0)                                            \
      return oom(L);                                                         \
  } while (0)
#define WAIT(on)                                                             \
  do {                                                                       \
    if (ooc_program_wait(L->p, (on)) != OOC_OK)                              \
      return oom(L);                                                         \
  } while (0)
#define ARG(t, w)                                                            \
  do {                                                                       \
    if (ooc_program_arg(L->p, (t), (w)) != OOC_OK)                           \
      return oom(L);                                                         \
  } while (0)
#define ALGO(a)                                                              \
  do {                                                                       \
    if (ooc_program_algo(L->p, (a)) != OOC_OK)                               \
      return oom(L);                                                         \
  } while (0)

/* The workspace tensor layer l's forward/recompute (bwd 0) or backward
 * (bwd 1) kernel uses under the plan's algorithms, or -1 when it needs
 * none (the lowering sized the table, ooc_plan_lower). */
static int32_t
step_ws(const lower *L, int32_t l, int bwd)
{
  int32_t t = bwd ? L->lv->layer_bws_tensor[l] : L->lv->layer_ws_tensor[l];

  return t >= 0 && L->p->tensors[t].bytes > 0 ? t : -1;
}

/* Describe why act a is not usable at step s (state is not resident). */
static int
not_resident(lower *L, int32_t a, int32_t s)
{
  char sn[160], s1[160], s2[160];
  const ooc_liveness *lv = L->lv;
  int32_t r = L->sc->rec_of[a];

  ooc_step_name(lv, s, sn, sizeof sn);
  switch (L->sc->state[a]) {
  case ST_OUT:
  case ST_IN_FLIGHT: {
    const ooc_swap *w = &L->pl->swaps[r];
    return ooc_err_set(L->err, OOC_EINVAL,
                       "swap record %d (act '%s'): the tensor is used at "
                       "step '%s' between its swap-out after '%s' and its "
                       "swap-in before '%s'", r, act_name(L, a), sn,
                       ooc_step_name(lv, w->out_after, s1, sizeof s1),
                       ooc_step_name(lv, w->in_before, s2, sizeof s2));
  }
  case ST_DROPPED: {
    const ooc_recompute *c = &L->pl->recomps[r];
    return ooc_err_set(L->err, OOC_EINVAL,
                       "recompute record %d (act '%s'): the tensor is used "
                       "at step '%s' after it is dropped (after '%s') and "
                       "before it is recomputed (before '%s')", r,
                       act_name(L, a), sn,
                       ooc_step_name(lv, c->free_after, s1, sizeof s1),
                       ooc_step_name(lv, c->before, s2, sizeof s2));
  }
  default:
    if (L->sc->rec_of[a] >= 0)
      return ooc_err_set(L->err, OOC_EINVAL,
                         "%s record %d (act '%s'): the tensor is used at "
                         "step '%s' after it was freed",
                         L->sc->rec_is_rc[a] ? "recompute" : "swap", r,
                         act_name(L, a), sn);
    return ooc_err_set(L->err, OOC_EINVAL,
                       "act '%s' is used at step '%s' while not allocated",
                       act_name(L, a), sn);
  }
}

/* Every step's algorithm applies to its layer (ir/algo.h); the update has
 * none. */
static int
check_algos(lower *L)
{
  const ooc_liveness *lv = L->lv;
  int32_t s;
  uint64_t ws;
  char sn[160];

  for (s = 0; s < lv->n_steps; s++) {
    int a = L->pl->algo[s];
    if (a == OOC_ALGO_DEFAULT)
      continue;
    if (a >= OOC_ALGO_COUNT || lv->steps[s].phase == OOC_PH_UPDATE ||
        ooc_algo_workspace(L->m, lv->steps[s].layer, (ooc_algo)a, &ws)
            != OOC_OK)
      return ooc_err_set(L->err, OOC_EINVAL,
                         "plan: step '%s' names kernel algorithm '%s', which "
                         "does not apply to it",
                         ooc_step_name(lv, s, sn, sizeof sn),
                         ooc_algo_name((ooc_algo)a));
  }
  return OOC_OK;
}

/* Calls f(L, b, arg) for each act recompute record r reads
 * (ooc_plan_recompute_inputs; repeats possible). */
static void
recompute_inputs(lower *L, int32_t r, void (*f)(lower *, int32_t, int32_t),
                 int32_t arg)
{
  const ooc_recompute *rec = &L->pl->recomps[r];
  struct ooc_plan_scratch *sc = L->sc;
  int32_t n = ooc_plan_recompute_inputs(L->lv, rec->act, rec->free_after,
                                        sc->inbuf, sc->cap_in);

  for (int32_t k = 0; k < n && k < sc->cap_in; k++)
    f(L, sc->inbuf[k], arg);
}

/* Extend b's life to step `before`: a recompute reads it there. */
static void
extend_free(lower *L, int32_t b, int32_t before)
{
  if (L->sc->act_free[b] < before)
    L->sc->act_free[b] = before;
}

/* Range checks of every record; fills act_free (extended last uses). */
static int
check_records(lower *L)
{
  const ooc_plan *pl = L->pl;
  const ooc_liveness *lv = L->lv;
  struct ooc_plan_scratch *sc = L->sc;
  int32_t ns = lv->n_steps, i, a;
  char s1[160], s2[160], sc_name[160];

  for (a = 0; a < lv->n_acts; a++) {
    sc->act_free[a] = a == 0 ? -1 : lv->act_last[a];
    sc->bat_step[a] = sc->early[a] = -1;
  }
  for (i = 0; i < pl->n_recomps; i++) {
    const ooc_recompute *r = &pl->recomps[i];
    a = r->act;
    if (a < 0 || a >= lv->n_acts)
      return ooc_err_set(L->err, OOC_EINVAL,
                         "recompute record %d: act %d out of range [0, %d)",
                         i, a, lv->n_acts);
    if (a == 0)
      return ooc_err_set(L->err, OOC_EINVAL,
                         "recompute record %d: the input batch cannot be "
                         "recomputed", i);
    if (r->free_after < 0 || r->free_after >= ns || r->before <= r->free_after
        || r->before >= ns)
      return ooc_err_set(L->err, OOC_EINVAL,
                         "recompute record %d (act '%s'): steps free_after "
                         "%d, before %d must satisfy 0 <= free_after < "
                         "before < %d", i, act_name(L, a), r->free_after,
                         r->before, ns);
    if (r->free_after < lv->fwd_step[lv->act_layer[a]])
      return ooc_err_set(L->err, OOC_EINVAL,
                         "recompute record %d (act '%s'): dropped after "
                         "'%s', before it is produced", i, act_name(L, a),
                         ooc_step_name(lv, r->free_after, s1, sizeof s1));
    /* An activation backward never reads may be recomputed as a
     * transient: only as the input of other recomputes at `before`, and
     * freed after that step. */
    if (r->before > lv->act_last[a] && lv->act_first_bwd[a] >= 0)
      return ooc_err_set(L->err, OOC_EINVAL,
                         "recompute record %d (act '%s'): recomputed before "
                         "'%s', after its last use '%s'", i, act_name(L, a),
                         ooc_step_name(lv, r->before, s1, sizeof s1),
                         ooc_step_name(lv, lv->act_last[a], s2, sizeof s2));
  }
  /* A recompute reads its inputs at step `before`; a transient lives to
   * the end of that step. */
  for (i = 0; i < pl->n_recomps; i++) {
    const ooc_recompute *r = &pl->recomps[i];
    if (sc->act_free[r->act] < r->before)
      sc->act_free[r->act] = r->before;
    recompute_inputs(L, i, extend_free, r->before);
  }
  for (i = 0; i < pl->n_swaps; i++) {
    const ooc_swap *w = &pl->swaps[i];
    a = w->act;
    if (a < 0 || a >= lv->n_acts)
      return ooc_err_set(L->err, OOC_EINVAL,
                         "swap record %d: act %d out of range [0, %d)", i, a,
                         lv->n_acts);
    if (w->out_after < 0 || w->in_before <= w->out_after ||
        w->in_before >= ns)
      return ooc_err_set(L->err, OOC_EINVAL,
                         "swap record %d (act '%s'): steps out_after %d, "
                         "in_before %d must satisfy 0 <= out_after < "
                         "in_before < %d", i, act_name(L, a), w->out_after,
                         w->in_before, ns);
    if (w->in_after != -1 &&
        (w->in_after < w->out_after || w->in_after >= w->in_before))
      return ooc_err_set(L->err, OOC_EINVAL,
                         "swap record %d (act '%s'): in_after %d must be -1 "
                         "or in [out_after %d, in_before %d)", i,
                         act_name(L, a), w->in_after, w->out_after,
                         w->in_before);
    if (w->out_wait != -1 &&
        (w->out_wait <= w->out_after || w->out_wait > w->in_before))
      return ooc_err_set(L->err, OOC_EINVAL,
                         "swap record %d (act '%s'): out_wait %d must be -1 "
                         "or in (out_after %d, in_before %d]", i,
                         act_name(L, a), w->out_wait, w->out_after,
                         w->in_before);
    if (w->grad) {
      if (lv->grad_tensor[a] < 0)
        return ooc_err_set(L->err, OOC_EINVAL, "swap record %d (gradient "
                           "of '%s'): the act has no gradient", i,
                           act_name(L, a));
      if (w->out_after < lv->grad_first[a] ||
          w->out_after >= lv->grad_last[a] ||
          lv->steps[w->out_after].phase != OOC_PH_BWD)
        return ooc_err_set(L->err, OOC_EINVAL, "swap record %d (gradient "
                           "of '%s'): swapped out after '%s', outside its "
                           "life (written first at '%s', last used at "
                           "'%s')", i, act_name(L, a),
                           ooc_step_name(lv, w->out_after, s1, sizeof s1),
                           ooc_step_name(lv, lv->grad_first[a], s2,
                                         sizeof s2),
                           ooc_step_name(lv, lv->grad_last[a], sc_name,
                                         sizeof sc_name));
      if (w->in_before > lv->grad_last[a])
        return ooc_err_set(L->err, OOC_EINVAL, "swap record %d (gradient "
                           "of '%s'): swapped in before '%s', after its "
                           "last use '%s'", i, act_name(L, a),
                           ooc_step_name(lv, w->in_before, s1, sizeof s1),
                           ooc_step_name(lv, lv->grad_last[a], s2,
                                         sizeof s2));
      continue;
    }
    if (a != 0 && w->in_before > sc->act_free[a])
      return ooc_err_set(L->err, OOC_EINVAL,
                         "swap record %d (act '%s'): swapped in before "
                         "'%s', after its last use '%s'", i, act_name(L, a),
                         ooc_step_name(lv, w->in_before, s1, sizeof s1),
                         ooc_step_name(lv, sc->act_free[a], s2, sizeof s2));
  }
  return OOC_OK;
}

/* Bucket records and liveness frees by step. */
static void
build_buckets(lower *L)
{
  const ooc_plan *pl = L->pl;
  const ooc_liveness *lv = L->lv;
  struct ooc_plan_scratch *sc = L->sc;
  int32_t ns = lv->n_steps, na = lv->n_acts, nl = L->m->n_layers, i, a, k;

#define BY(field, bk, n, arr)                                                \
  do {                                                                       \
    for (i = 0; i < (n); i++)                                                \
      sc->key[i] = pl->arr[i].field;                                         \
    bucket_build(&sc->b[bk], ns, sc->key, (n), NULL);                        \
  } while (0)
  BY(out_after, B_OUT, pl->n_swaps, swaps);
  BY(in_after, B_INAFTER, pl->n_swaps, swaps);
  BY(in_before, B_INBEFORE, pl->n_swaps, swaps);
  BY(out_wait, B_OUTWAIT, pl->n_swaps, swaps);
  BY(free_after, B_RCFREE, pl->n_recomps, recomps);
#undef BY
  /* Recomputes before a step run in topological order: sorted by the
   * last layer each runs (the last of its act's storage forward by its
   * free_after), then stably by step. A recompute reads what the layers
   * it runs read, produced by lower layers, whose own recomputes run
   * only layers below the reader. (Not by act: an in-place add in a
   * storage whose first layer comes before the add's other input, a
   * pooling of the input, say, reads an act of a higher index.) */
  for (k = 0; k <= nl; k++)
    sc->cnt[k] = 0;
  for (i = 0; i < pl->n_recomps; i++) {
    const ooc_recompute *c = &pl->recomps[i];
    int32_t last = lv->act_layers[lv->act_lfirst[c->act]];
    for (k = 1; k < lv->act_nlayers[c->act]; k++) {
      int32_t l = lv->act_layers[lv->act_lfirst[c->act] + k];
      if (lv->fwd_step[l] > c->free_after)
        break;
      last = l;
    }
    sc->key[i] = last;
    sc->cnt[last + 1]++;
  }
  for (k = 0; k < nl; k++)
    sc->cnt[k + 1] += sc->cnt[k];
  for (i = 0; i < pl->n_recomps; i++)
    sc->order[sc->cnt[sc->key[i]]++] = i;
  for (i = 0; i < pl->n_recomps; i++)
    sc->key[i] = pl->recomps[i].before;
  bucket_build(&sc->b[B_RCBEFORE], ns, sc->key, pl->n_recomps, sc->order);
  /* Liveness frees: the key array is per act here (n_acts <= capacity of
   * the act-sized arrays), so use stamp as the key array. */
  for (a = 0; a < na; a++)
    sc->stamp[a] = sc->act_free[a];
  bucket_build(&sc->frees, ns, sc->stamp, na, NULL);
}

static int
emit_step_compute(lower *L, int32_t s, int32_t ws)
{
  const ooc_liveness *lv = L->lv;
  const ooc_model *m = L->m;
  struct ooc_plan_scratch *sc = L->sc;
  const ooc_step *st = &lv->steps[s];
  int32_t k, a, i, l = st->layer;

  /* The args: acts (the output written), the layer's parameters (weight
   * gradients written in backward), then gradients, each tensor once:
   * stamp/argpos merge a gradient read and written into one WRITE arg. */
  EMIT(OOC_I_COMPUTE, OOC_STREAM_COMPUTE, (ooc_phase)st->phase, l, -1,
       OOC_WHERE_DEVICE);
  ALGO(L->pl->algo[s]);
  /* Waits: swap-ins this step needs, swap-outs it must wait for, and with
   * SYNC_LAYERS every copy issued so far (the last on each copy stream
   * covers the ones before it: streams run in order). */
  for (k = sc->b[B_INBEFORE].first[s]; k < sc->b[B_INBEFORE].first[s + 1]; k++)
    WAIT(sc->h2d_instr[sc->b[B_INBEFORE].idx[k]]);
  if (L->pl->flags & OOC_PLAN_SYNC_LAYERS) {
    for (k = OOC_STREAM_H2D; k <= OOC_STREAM_D2H; k++)
      if (L->last_copy[k] > L->synced[k]) {
        WAIT(L->last_copy[k]);
        L->synced[k] = L->last_copy[k];
      }
  }
  if (st->phase == OOC_PH_UPDATE) {
    for (i = 0; i < m->n_layers; i++)
      if (lv->layer_param_tensor[i] >= 0 &&
          L->pl->param_where[i] == OOC_PARAM_DEVICE)
        ARG(lv->layer_param_tensor[i], 1);
    return OOC_OK;
  }
  for (k = 0; k < lv->step_nacts[s]; k++) {
    a = lv->step_acts[lv->step_first[s] + k];
    ARG(lv->act_tensor[a], st->phase == OOC_PH_FWD && a == lv->layer_act[l]);
  }
  if (lv->layer_param_tensor[l] >= 0) {
    /* An offloaded layer's backward writes its own gradient tensor; a
     * streamed one's kernel waits for its weights. */
    int off = L->pl->param_where[l] != OOC_PARAM_DEVICE;
    if (L->pl->param_where[l] == OOC_PARAM_STREAM)
      WAIT(sc->p_h2d[l]);
    ARG(lv->layer_param_tensor[l], st->phase == OOC_PH_BWD && !off);
    if (off && st->phase == OOC_PH_BWD)
      ARG(sc->wg_tensor[l], 1);
  }
  if (st->phase == OOC_PH_BWD) {
    const ooc_layer *ly = &m->layers[l];
    for (k = -1; k < ly->n_in; k++) {
      int write;
      a = lv->layer_act[k < 0 ? l : ooc_layer_input(m, ly, k)];
      if (lv->grad_tensor[a] < 0 || !ooc_layer_bwd_grad(ly, k))
        continue;
      write = k >= 0 || lv->grad_first[a] == s;
      if (sc->stamp[a] == s) {
        if (write)
          L->p->args[sc->argpos[a]] |= OOC_ARG_WRITE;
        continue;
      }
      sc->stamp[a] = s;
      sc->argpos[a] = L->p->n_args;
      ARG(lv->grad_tensor[a], write);
    }
  }
  if (ws >= 0)
    ARG(ws, 1);
  return OOC_OK;
}

/* Recompute act a (record r) before step s: re-run the layers sharing its
 * storage that had run when it was dropped. */
static int
emit_recompute(lower *L, int32_t r, int32_t s)
{
  const ooc_liveness *lv = L->lv;
  const ooc_model *m = L->m;
  struct ooc_plan_scratch *sc = L->sc;
  const ooc_recompute *rec = &L->pl->recomps[r];
  int32_t a = rec->act, k, j, q, ws;
  char sn[160];

  if (sc->state[a] != ST_DROPPED)
    return ooc_err_set(L->err, OOC_EINVAL,
                       "recompute record %d (act '%s'): recomputed before "
                       "'%s' but it was not dropped", r, act_name(L, a),
                       ooc_step_name(lv, s, sn, sizeof sn));
  for (k = 0; k < lv->act_nlayers[a]; k++) {
    int32_t l = lv->act_layers[lv->act_lfirst[a] + k];
    const ooc_layer *ly = &m->layers[l];
    if (lv->fwd_step[l] > rec->free_after)
      break;
    for (j = 0; j < ly->n_in; j++) {
      int32_t b = lv->layer_act[ooc_layer_input(m, ly, j)];
      if (b == a || sc->state[b] == ST_RESIDENT ||
          (sc->state[b] == ST_IN_FLIGHT &&
           L->pl->swaps[sc->rec_of[b]].in_before == s))
        continue;
      if (sc->state[b] == ST_ABSENT && sc->rec_of[b] < 0)
        return ooc_err_set(L->err, OOC_EINVAL,
                           "recompute record %d (act '%s'): its input '%s' "
                           "is not resident before '%s'", r, act_name(L, a),
                           act_name(L, b), ooc_step_name(lv, s, sn, sizeof sn));
      return not_resident(L, b, s);
    }
    if (k == 0)
      EMIT(OOC_I_ALLOC, OOC_STREAM_COMPUTE, OOC_PH_NONE, l, lv->act_tensor[a],
           OOC_WHERE_DEVICE);
    ws = step_ws(L, l, 0);
    if (ws >= 0)
      EMIT(OOC_I_ALLOC, OOC_STREAM_COMPUTE, OOC_PH_NONE, l, ws,
           OOC_WHERE_DEVICE);
    EMIT(OOC_I_COMPUTE, OOC_STREAM_COMPUTE, OOC_PH_RECOMP, l, -1,
         OOC_WHERE_DEVICE);
    ALGO(L->pl->algo[lv->fwd_step[l]]);
    for (q = sc->b[B_INBEFORE].first[s]; q < sc->b[B_INBEFORE].first[s + 1];
         q++)
      WAIT(sc->h2d_instr[sc->b[B_INBEFORE].idx[q]]);
    /* Each kernel lists its own inputs: one the chain's earlier kernel
     * read too (fc1 for a dropout and the in-place add into it) is read
     * again. */
    for (j = 0; j < ly->n_in; j++) {
      int32_t b = lv->layer_act[ooc_layer_input(m, ly, j)];
      if (b == a || sc->stamp[b] == L->rc_key)
        continue;
      sc->stamp[b] = L->rc_key;
      ARG(lv->act_tensor[b], 0);
    }
    L->rc_key--;
    if (lv->layer_param_tensor[l] >= 0) {
      if (L->pl->param_where[l] == OOC_PARAM_STREAM)
        WAIT(sc->p_h2d[l]);
      ARG(lv->layer_param_tensor[l], 0);
    }
    ARG(lv->act_tensor[a], 1);
    if (ws >= 0) {
      ARG(ws, 1);
      EMIT(OOC_I_FREE, OOC_STREAM_COMPUTE, OOC_PH_NONE, l, ws,
           OOC_WHERE_DEVICE);
    }
  }
  sc->state[a] = ST_RESIDENT;
  return OOC_OK;
}

/* Swap-in of record r, issued after the kernel after_compute (of step
 * w->in_after; -1: as soon as its own swap-out is done). Its ALLOC also
 * waits for the swap-outs step in_after + 1 waits for: the swap-in holds
 * memory from that step on, and those swap-outs are what make room for it
 * (the schedule-window seed's step (b): complete swap-outs, then swap in). */
static int
emit_swap_in(lower *L, int32_t r, int32_t after_compute)
{
  const ooc_swap *w = &L->pl->swaps[r];
  const ooc_liveness *lv = L->lv;
  const struct ooc_plan_scratch *sc = L->sc;
  int32_t a = w->act, l = lv->act_layer[a];
  int32_t t = w->grad ? lv->grad_tensor[a] : lv->act_tensor[a];
  int32_t i, k, s = w->in_after + 1;

  EMIT(OOC_I_ALLOC, OOC_STREAM_H2D, OOC_PH_NONE, l, t, OOC_WHERE_DEVICE);
  WAIT(after_compute);
  WAIT(L->sc->free_instr[r]);
  if (w->in_after >= 0 && s < lv->n_steps)
    for (k = sc->b[B_OUTWAIT].first[s]; k < sc->b[B_OUTWAIT].first[s + 1];
         k++)
      WAIT(sc->free_instr[sc->b[B_OUTWAIT].idx[k]]);
  i = emit(L, OOC_I_H2D, OOC_STREAM_H2D, OOC_PH_NONE, l, t, OOC_WHERE_DEVICE);
  if (i < 0)
    return oom(L);
  L->sc->h2d_instr[r] = i;
  if (w->grad) {
    L->sc->gstate[a] = ST_IN_FLIGHT;
    L->sc->grec_of[a] = r;
    return OOC_OK;
  }
  L->sc->state[a] = ST_IN_FLIGHT;
  L->sc->rec_of[a] = r;
  L->sc->rec_is_rc[a] = 0;
  return OOC_OK;
}

static void
batch_init(lower *L, int32_t b, int32_t s)
{
  struct ooc_plan_scratch *sc = L->sc;

  if (sc->bat_step[b] != s) {
    sc->bat_step[b] = s;
    sc->bat_last[b] = -1;
    sc->bat_drop[b] = -1;
  }
}

static void
batch_reader(lower *L, int32_t b, int32_t k)
{
  if (L->sc->bat_last[b] != INT32_MAX)
    L->sc->bat_last[b] = k;
}

/* Before the batch of recomputes [k0, k1) (B_RCBEFORE positions) at step
 * s: which acts it reads, which of them are dropped or freed after s
 * anyway, and which s itself (its compute, a swap-out after it) needs. */
static void
batch_plan(lower *L, int32_t s, int32_t k0, int32_t k1)
{
  const ooc_liveness *lv = L->lv;
  struct ooc_plan_scratch *sc = L->sc;
  const bucket *B = sc->b;
  int32_t k, a;

  for (k = k0; k < k1; k++)
    recompute_inputs(L, B[B_RCBEFORE].idx[k], batch_init, s);
  for (k = B[B_RCFREE].first[s]; k < B[B_RCFREE].first[s + 1]; k++) {
    a = L->pl->recomps[B[B_RCFREE].idx[k]].act;
    if (sc->bat_step[a] == s)
      sc->bat_drop[a] = B[B_RCFREE].idx[k];
  }
  for (k = 0; k < lv->step_nacts[s]; k++) {
    a = lv->step_acts[lv->step_first[s] + k];
    if (sc->bat_step[a] == s)
      sc->bat_last[a] = INT32_MAX;
  }
  for (k = B[B_OUT].first[s]; k < B[B_OUT].first[s + 1]; k++) {
    a = L->pl->swaps[B[B_OUT].idx[k]].act;
    if (sc->bat_step[a] == s)
      sc->bat_last[a] = INT32_MAX;
  }
  for (k = k0; k < k1; k++)
    recompute_inputs(L, B[B_RCBEFORE].idx[k], batch_reader, k);
}

/* After the recompute at batch position k of step s: free each act it
 * read that no later recompute of the batch and not step s reads, when
 * it is dropped (a record) or freed (its last use) after s anyway, so a
 * chain of recomputes holds one link at a time. */
static void
batch_free_one(lower *L, int32_t b, int32_t k)
{
  struct ooc_plan_scratch *sc = L->sc;
  int32_t s = sc->bat_step[b];

  if (sc->bat_last[b] != k || sc->state[b] != ST_RESIDENT ||
      sc->early[b] == s ||
      (sc->bat_drop[b] < 0 && sc->act_free[b] != s))
    return;
  if (emit(L, OOC_I_FREE, OOC_STREAM_COMPUTE, OOC_PH_NONE,
           L->lv->act_layer[b], L->lv->act_tensor[b], OOC_WHERE_DEVICE) < 0) {
    L->batch_err = 1;
    return;
  }
  sc->early[b] = s;
  if (sc->bat_drop[b] >= 0) {
    sc->state[b] = ST_DROPPED;
    sc->rec_of[b] = sc->bat_drop[b];
    sc->rec_is_rc[b] = 1;
  } else {
    sc->state[b] = ST_ABSENT;
  }
}

static int
lower_steps(lower *L)
{
  const ooc_plan *pl = L->pl;
  const ooc_liveness *lv = L->lv;
  const ooc_model *m = L->m;
  struct ooc_plan_scratch *sc = L->sc;
  const bucket *B = sc->b;
  int no_free = (pl->flags & OOC_PLAN_NO_FREE) != 0;
  int32_t s, k, a, r, comp, ws, ns = lv->n_steps;
  int rc;
  char sn[160];

  for (s = 0; s < ns; s++) {
    const ooc_step *st = &lv->steps[s];
    int32_t l = st->layer;

    /* Streamed weights needed from step s + 1 (from step 0: at once) are
     * copied in now, one step ahead. */
    while (L->pi_next < sc->n_pi &&
           sc->pi_start[sc->pi_by_start[L->pi_next]] <= s + 1) {
      int32_t q = sc->pi_by_start[L->pi_next++];
      int32_t y = sc->pi_layer[q], t = lv->layer_param_tensor[y];
      EMIT(OOC_I_ALLOC, OOC_STREAM_H2D, OOC_PH_NONE, y, t,
           OOC_WHERE_DEVICE);
      WAIT(sc->p_free[y]);      /* its previous copy is gone */
      if ((sc->p_h2d[y] = emit(L, OOC_I_H2D, OOC_STREAM_H2D, OOC_PH_NONE, y,
                               t, OOC_WHERE_DEVICE)) < 0)
        return oom(L);
    }

    L->memwait = s;

    /* Swap-ins this step needs become usable by it. */
    for (k = B[B_INBEFORE].first[s]; k < B[B_INBEFORE].first[s + 1]; k++) {
      r = B[B_INBEFORE].idx[k];
      a = pl->swaps[r].act;
      if (pl->swaps[r].grad ? sc->gstate[a] != ST_IN_FLIGHT ||
                                  sc->grec_of[a] != r
                            : sc->state[a] != ST_IN_FLIGHT ||
                                  sc->rec_of[a] != r)
        return ooc_err_set(L->err, OOC_EINVAL,
                           "swap record %d (%s '%s'): overlaps another "
                           "record of the same %s", r,
                           pl->swaps[r].grad ? "gradient of" : "act",
                           act_name(L, a),
                           pl->swaps[r].grad ? "gradient" : "act");
    }
    {
      int32_t k0 = B[B_RCBEFORE].first[s], k1 = B[B_RCBEFORE].first[s + 1];
      int batch = k1 - k0 > 1 && !no_free;
      if (batch)
        batch_plan(L, s, k0, k1);
      for (k = k0; k < k1; k++) {
        rc = emit_recompute(L, B[B_RCBEFORE].idx[k], s);
        if (rc != OOC_OK)
          return rc;
        if (batch) {
          L->batch_err = 0;
          recompute_inputs(L, B[B_RCBEFORE].idx[k], batch_free_one, k);
          if (L->batch_err)
            return oom(L);
        }
      }
    }
    for (k = B[B_INBEFORE].first[s]; k < B[B_INBEFORE].first[s + 1]; k++) {
      const ooc_swap *w = &pl->swaps[B[B_INBEFORE].idx[k]];
      if (w->grad)
        sc->gstate[w->act] = ST_RESIDENT;
      else
        sc->state[w->act] = ST_RESIDENT;
    }

    /* The layer owns its storage (alias_of -1), asked of the liveness's
     * compact arrays: the model's 496-byte layer records, one per step,
     * miss the cache on deep models (resnet depth=3002: 5 MB of them). */
    if (st->phase == OOC_PH_FWD && lv->act_layer[lv->layer_act[l]] == l) {
      a = lv->layer_act[l];
      if (sc->state[a] != ST_ABSENT)
        return ooc_err_set(L->err, OOC_EINVAL,
                           "act '%s' is allocated before its forward",
                           act_name(L, a));
      EMIT(OOC_I_ALLOC, OOC_STREAM_COMPUTE, OOC_PH_NONE, l, lv->act_tensor[a],
           OOC_WHERE_DEVICE);
      sc->state[a] = ST_RESIDENT;
    }
    for (k = 0; k < lv->step_nacts[s]; k++) {
      a = lv->step_acts[lv->step_first[s] + k];
      if (sc->state[a] != ST_RESIDENT)
        return not_resident(L, a, s);
    }
    if (st->phase == OOC_PH_BWD) {
      const ooc_layer *ly = &m->layers[l];
      for (k = -1; k < ly->n_in; k++) {
        if (!ooc_layer_bwd_grad(ly, k))
          continue;
        a = lv->layer_act[k < 0 ? l : ooc_layer_input(m, ly, k)];
        if (lv->grad_first[a] == s && !sc->grad_live[a]) {
          EMIT(OOC_I_ALLOC, OOC_STREAM_COMPUTE, OOC_PH_NONE,
               lv->act_layer[a], lv->grad_tensor[a], OOC_WHERE_DEVICE);
          sc->grad_live[a] = 1;
          sc->gstate[a] = ST_RESIDENT;
        }
        if (lv->grad_tensor[a] >= 0 && sc->grad_live[a] &&
            sc->gstate[a] != ST_RESIDENT)
          return ooc_err_set(L->err, OOC_EINVAL, "the gradient of act '%s' "
                             "is not resident at '%s' (swapped out without "
                             "a swap-in before it)", act_name(L, a),
                             ooc_step_name(lv, s, sn, sizeof sn));
      }
    }
    if (st->phase == OOC_PH_BWD && pl->param_where[l] != OOC_PARAM_DEVICE)
      EMIT(OOC_I_ALLOC, OOC_STREAM_COMPUTE, OOC_PH_NONE, l, sc->wg_tensor[l],
           OOC_WHERE_DEVICE);
    ws = st->phase == OOC_PH_UPDATE ? -1
         : step_ws(L, l, st->phase == OOC_PH_BWD);
    if (ws >= 0)
      EMIT(OOC_I_ALLOC, OOC_STREAM_COMPUTE, OOC_PH_NONE, l, ws,
           OOC_WHERE_DEVICE);
    rc = emit_step_compute(L, s, ws);
    if (rc != OOC_OK)
      return rc;
    comp = L->p->n_instr - 1;
    if (ws >= 0)
      EMIT(OOC_I_FREE, OOC_STREAM_COMPUTE, OOC_PH_NONE, l, ws,
           OOC_WHERE_DEVICE);

    /* Frees: liveness (unless NO_FREE), then drops for recompute. */
    if (!no_free) {
      for (k = sc->frees.first[s]; k < sc->frees.first[s + 1]; k++) {
        a = sc->frees.idx[k];
        if (sc->early[a] == s)
          continue;             /* freed inside the recompute batch */
        if (sc->state[a] != ST_RESIDENT)
          return ooc_err_set(L->err, OOC_EINVAL,
                             "act '%s' is not resident at its last use "
                             "'%s'", act_name(L, a),
                             ooc_step_name(lv, s, sn, sizeof sn));
        EMIT(OOC_I_FREE, OOC_STREAM_COMPUTE, OOC_PH_NONE, lv->act_layer[a],
             lv->act_tensor[a], OOC_WHERE_DEVICE);
        sc->state[a] = ST_ABSENT;
      }
      if (st->phase == OOC_PH_BWD) {
        const ooc_layer *ly = &m->layers[l];
        for (k = -1; k < ly->n_in; k++) {
          if (!ooc_layer_bwd_grad(ly, k))
            continue;
          a = lv->layer_act[k < 0 ? l : ooc_layer_input(m, ly, k)];
          if (lv->grad_last[a] == s && sc->grad_live[a]) {
            EMIT(OOC_I_FREE, OOC_STREAM_COMPUTE, OOC_PH_NONE,
                 lv->act_layer[a], lv->grad_tensor[a], OOC_WHERE_DEVICE);
            sc->grad_live[a] = 0;
            sc->gstate[a] = ST_ABSENT;
          }
        }
      }
    }
    for (k = B[B_RCFREE].first[s]; k < B[B_RCFREE].first[s + 1]; k++) {
      r = B[B_RCFREE].idx[k];
      a = pl->recomps[r].act;
      if (sc->early[a] == s)
        continue;               /* dropped inside the recompute batch */
      if (sc->state[a] != ST_RESIDENT)
        return ooc_err_set(L->err, OOC_EINVAL,
                           "recompute record %d (act '%s'): not resident "
                           "when dropped after '%s'", r, act_name(L, a),
                           ooc_step_name(lv, s, sn, sizeof sn));
      EMIT(OOC_I_FREE, OOC_STREAM_COMPUTE, OOC_PH_NONE, lv->act_layer[a],
           lv->act_tensor[a], OOC_WHERE_DEVICE);
      sc->state[a] = ST_DROPPED;
      sc->rec_of[a] = r;
      sc->rec_is_rc[a] = 1;
    }

    /* Streamed weights whose residency ends here go (whatever NO_FREE
     * says: the next use allocates them again). */
    while (L->pi_free < sc->n_pi &&
           sc->pi_end[sc->pi_by_end[L->pi_free]] == s) {
      int32_t q = sc->pi_by_end[L->pi_free++];
      if ((sc->p_free[sc->pi_layer[q]] =
               emit(L, OOC_I_FREE, OOC_STREAM_COMPUTE, OOC_PH_NONE,
                    sc->pi_layer[q], lv->layer_param_tensor[sc->pi_layer[q]],
                    OOC_WHERE_DEVICE)) < 0)
        return oom(L);
    }

    /* ZeRO-Offload: the weight gradients go to the host as soon as the
     * backward wrote them, the CPU steps the layer once they are there,
     * and the new weights come back after the iteration's last swap-in
     * (at the update, below), so that they hold no swap-in back. */
    if (st->phase == OOC_PH_BWD && pl->param_where[l] != OOC_PARAM_DEVICE) {
      int32_t g = sc->wg_tensor[l], d2h;
      d2h = emit(L, OOC_I_D2H, OOC_STREAM_D2H, OOC_PH_NONE, l, g,
                 OOC_WHERE_DEVICE);
      if (d2h < 0)
        return oom(L);
      WAIT(comp);
      EMIT(OOC_I_FREE, OOC_STREAM_D2H, OOC_PH_NONE, l, g, OOC_WHERE_DEVICE);
      sc->host_instr[l] = emit(L, OOC_I_HOST, OOC_STREAM_HOST, OOC_PH_UPDATE,
                               l, -1, OOC_WHERE_DEVICE);
      if (sc->host_instr[l] < 0)
        return oom(L);
      WAIT(d2h);
      ARG(g, 0);
      ARG(sc->os_tensor[l], 1);
      ARG(lv->layer_param_tensor[l], 1);
    }
    if (st->phase == OOC_PH_UPDATE && pl->n_offloaded > 0)
      for (k = m->n_layers - 1; k >= 0; k--)
        if (pl->param_where[k] == OOC_PARAM_OFFLOAD) {
          EMIT(OOC_I_H2D, OOC_STREAM_H2D, OOC_PH_NONE, (int32_t)k,
               lv->layer_param_tensor[k], OOC_WHERE_DEVICE);
          WAIT(sc->host_instr[k]);
        }

    /* Swap-outs issued after this step, and their early swap-ins. */
    for (k = B[B_OUT].first[s]; k < B[B_OUT].first[s + 1]; k++) {
      int32_t fi;
      r = B[B_OUT].idx[k];
      a = pl->swaps[r].act;
      if (pl->swaps[r].grad) {
        if (!sc->grad_live[a] || sc->gstate[a] != ST_RESIDENT)
          return ooc_err_set(L->err, OOC_EINVAL,
                             "swap record %d (gradient of '%s'): not "
                             "resident when swapped out after '%s'", r,
                             act_name(L, a),
                             ooc_step_name(lv, s, sn, sizeof sn));
        EMIT(OOC_I_D2H, OOC_STREAM_D2H, OOC_PH_NONE, lv->act_layer[a],
             lv->grad_tensor[a], OOC_WHERE_DEVICE);
        WAIT(comp);
        fi = emit(L, OOC_I_FREE, OOC_STREAM_D2H, OOC_PH_NONE,
                  lv->act_layer[a], lv->grad_tensor[a], OOC_WHERE_DEVICE);
        if (fi < 0)
          return oom(L);
        sc->free_instr[r] = fi;
        sc->gstate[a] = ST_OUT;
        sc->grec_of[a] = r;
        if (pl->swaps[r].in_after == -1 &&
            (rc = emit_swap_in(L, r, -1)) != OOC_OK)
          return rc;
        continue;
      }
      if (sc->state[a] != ST_RESIDENT)
        return ooc_err_set(L->err, OOC_EINVAL,
                           "swap record %d (act '%s'): not resident when "
                           "swapped out after '%s'", r, act_name(L, a),
                           ooc_step_name(lv, s, sn, sizeof sn));
      EMIT(OOC_I_D2H, OOC_STREAM_D2H, OOC_PH_NONE, lv->act_layer[a],
           lv->act_tensor[a], OOC_WHERE_DEVICE);
      WAIT(comp);
      fi = emit(L, OOC_I_FREE, OOC_STREAM_D2H, OOC_PH_NONE, lv->act_layer[a],
                lv->act_tensor[a], OOC_WHERE_DEVICE);
      if (fi < 0)
        return oom(L);
      sc->free_instr[r] = fi;
      sc->state[a] = ST_OUT;
      sc->rec_of[a] = r;
      sc->rec_is_rc[a] = 0;
      if (pl->swaps[r].in_after == -1) {
        rc = emit_swap_in(L, r, -1);
        if (rc != OOC_OK)
          return rc;
      }
    }
    for (k = B[B_INAFTER].first[s]; k < B[B_INAFTER].first[s + 1]; k++) {
      r = B[B_INAFTER].idx[k];
      a = pl->swaps[r].act;
      if (pl->swaps[r].grad) {
        if (sc->gstate[a] != ST_OUT || sc->grec_of[a] != r)
          return ooc_err_set(L->err, OOC_EINVAL,
                             "swap record %d (gradient of '%s'): not "
                             "swapped out when swapped in after '%s'", r,
                             act_name(L, a),
                             ooc_step_name(lv, s, sn, sizeof sn));
        if ((rc = emit_swap_in(L, r, comp)) != OOC_OK)
          return rc;
        continue;
      }
      if (sc->state[a] != ST_OUT || sc->rec_of[a] != r)
        return ooc_err_set(L->err, OOC_EINVAL,
                           "swap record %d (act '%s'): not swapped out when "
                           "swapped in after '%s'", r, act_name(L, a),
                           ooc_step_name(lv, s, sn, sizeof sn));
      rc = emit_swap_in(L, r, comp);
      if (rc != OOC_OK)
        return rc;
    }
  }

  /* End of the iteration: NO_FREE releases everything now; every act but
   * the input must be gone, the input resident. */
  if (L->pi_free != sc->n_pi || L->pi_next != sc->n_pi)
    return ooc_err_set(L->err, OOC_EINVAL, "lowering: streamed weights "
                       "left on the device");
  for (a = 0; a < lv->n_acts; a++) {
    if (no_free && a != 0 && sc->state[a] == ST_RESIDENT) {
      EMIT(OOC_I_FREE, OOC_STREAM_COMPUTE, OOC_PH_NONE, lv->act_layer[a],
           lv->act_tensor[a], OOC_WHERE_DEVICE);
      sc->state[a] = ST_ABSENT;
    }
    if (sc->state[a] != (a == 0 ? ST_RESIDENT : ST_ABSENT))
      return ooc_err_set(L->err, OOC_EINVAL,
                         "act '%s' is not %s at the end of the iteration",
                         act_name(L, a), a == 0 ? "resident" : "freed");
  }
  for (a = 0; a < lv->n_acts; a++)
    if (sc->grad_live[a]) {
      if (sc->gstate[a] != ST_RESIDENT)
        return ooc_err_set(L->err, OOC_EINVAL, "the gradient of act '%s' "
                           "is not resident at the end of the iteration",
                           act_name(L, a));
      EMIT(OOC_I_FREE, OOC_STREAM_COMPUTE, OOC_PH_NONE, lv->act_layer[a],
           lv->grad_tensor[a], OOC_WHERE_DEVICE);
      sc->grad_live[a] = 0;
    }
  return OOC_OK;
}

static _Thread_local const int32_t *pi_key;
static int
by_pi_key(const void *x, const void *y)
{
  int32_t i = *(const int32_t *)x, j = *(const int32_t *)y;

  if (pi_key[i] != pi_key[j])
    return pi_key[i] < pi_key[j] ? -1 : 1;
  return (i > j) - (i < j);
}

/* The residency intervals of streamed weights: each streamed layer's use
 * steps (its forward and backward, and the steps its recomputes run
 * before) sorted; uses at most two steps apart share one copy (freeing
 * it would only let the next copy start one step earlier). O(layers + recomputes +
 * intervals log intervals). */
static int
stream_intervals(lower *L)
{
  const ooc_plan *pl = L->pl;
  const ooc_liveness *lv = L->lv;
  const ooc_model *m = L->m;
  struct ooc_plan_scratch *sc = L->sc;
  int32_t l, r, k, n, u[64];

  sc->n_pi = 0;
  L->pi_next = L->pi_free = 0;
  if (pl->n_offloaded == 0)
    return OOC_OK;
  for (l = 0; l < m->n_layers; l++) {
    if (pl->param_where[l] != OOC_PARAM_STREAM)
      continue;
    n = 0;
    u[n++] = lv->fwd_step[l];
    u[n++] = lv->bwd_step[l];
    for (r = 0; r < pl->n_recomps; r++) {
      int32_t a = pl->recomps[r].act;
      for (k = 0; k < lv->act_nlayers[a]; k++)
        if (lv->act_layers[lv->act_lfirst[a] + k] == l &&
            lv->fwd_step[l] <= pl->recomps[r].free_after) {
          if (n == (int32_t)(sizeof u / sizeof *u))
            return ooc_err_set(L->err, OOC_EINVAL, "plan: layer %d's "
                               "streamed weights are recomputed more than "
                               "%d times", (int)l, (int)(sizeof u /
                                                         sizeof *u) - 2);
          u[n++] = pl->recomps[r].before;
        }
    }
    /* Sort the few uses (insertion), then merge runs of steps. */
    for (k = 1; k < n; k++)
      for (r = k; r > 0 && u[r] < u[r - 1]; r--) {
        int32_t x = u[r];
        u[r] = u[r - 1];
        u[r - 1] = x;
      }
    for (k = 0; k < n; k++) {
      if (u[k] < 0)
        continue;
      if (sc->n_pi > 0 && sc->pi_layer[sc->n_pi - 1] == l &&
          u[k] <= sc->pi_end[sc->n_pi - 1] + 2) {
        if (u[k] > sc->pi_end[sc->n_pi - 1])
          sc->pi_end[sc->n_pi - 1] = u[k];
        continue;
      }
      if (sc->n_pi == sc->cap_pi) {
        int32_t cap = sc->cap_pi ? 2 * sc->cap_pi : 64, **arr[5], j;
        arr[0] = &sc->pi_layer;
        arr[1] = &sc->pi_start;
        arr[2] = &sc->pi_end;
        arr[3] = &sc->pi_by_start;
        arr[4] = &sc->pi_by_end;
        for (j = 0; j < 5; j++) {
          int32_t *q = realloc(*arr[j], (size_t)cap * sizeof *q);
          if (q == NULL)
            return oom(L);
          *arr[j] = q;
        }
        sc->cap_pi = cap;
      }
      sc->pi_layer[sc->n_pi] = l;
      sc->pi_start[sc->n_pi] = sc->pi_end[sc->n_pi] = u[k];
      sc->n_pi++;
    }
  }
  if (sc->n_pi == 0)
    return OOC_OK;      /* the arrays are not there yet: qsort wants them */
  for (k = 0; k < sc->n_pi; k++)
    sc->pi_by_start[k] = sc->pi_by_end[k] = k;
  pi_key = sc->pi_start;
  qsort(sc->pi_by_start, (size_t)sc->n_pi, sizeof(int32_t), by_pi_key);
  pi_key = sc->pi_end;
  qsort(sc->pi_by_end, (size_t)sc->n_pi, sizeof(int32_t), by_pi_key);
  return OOC_OK;
}

/* Is act b away at step s under pl's own records (swapped out before s
 * and back only after it, or dropped before s and rebuilt after it)? */
static int
away_at(const ooc_plan *pl, const struct ooc_plan_scratch *sc, int32_t b,
        int32_t s)
{
  int32_t k;
  for (k = sc->rec_first[b]; k < sc->rec_first[b + 1]; k++) {
    int32_t i = sc->rec_idx[k];
    if (i >= 0 ? pl->swaps[i].out_after < s && s < pl->swaps[i].in_before
               : pl->recomps[-1 - i].free_after < s &&
                     s < pl->recomps[-1 - i].before)
      return 1;
  }
  return 0;
}

/* The plan the lowering runs when the model marks layers "recompute"
 * (lv->act_forced): pl's records, plus, for every forced act pl keeps, a
 * recompute dropping it after its last forward use and rebuilding it
 * before its first backward use, or earlier where another recompute
 * reads it (acts in reverse topological order, so a forced chain such as
 * a DenseNet layer's concatenation and batch norm rebuilds in order). A
 * forced act pl swaps or recomputes follows pl, and one whose rebuild
 * would read a tensor pl's records have away at that step stays (the
 * plan decided that tensor's timing for its own uses). *eff shares pl's
 * other arrays. O(acts + records + their inputs). */
static int
forced_plan(const ooc_plan *pl, const ooc_liveness *lv,
            struct ooc_plan_scratch *sc, ooc_plan *eff)
{
  int32_t na = lv->n_acts, n = pl->n_recomps, a, i, k, m;

  if (sc->eff_action == NULL) {
    sc->eff_action = malloc((size_t)na + 1);
    sc->need_by = malloc(((size_t)na + 1) * sizeof *sc->need_by);
    if (sc->eff_action == NULL || sc->need_by == NULL)
      return OOC_ENOMEM;
  }
  if (sc->cap_eff_rc < n + lv->n_forced) {
    int32_t cap = n + lv->n_forced;
    ooc_recompute *q = realloc(sc->eff_rc, (size_t)cap * sizeof *q);
    if (q == NULL)
      return OOC_ENOMEM;
    sc->eff_rc = q;
    sc->cap_eff_rc = cap;
  }
  *eff = *pl;
  memcpy(sc->eff_action, pl->action, (size_t)na);
  if (n > 0)
    memcpy(sc->eff_rc, pl->recomps, (size_t)n * sizeof *sc->eff_rc);
  /* The plan's activation records by act (counting sort). */
  if (sc->rec_first == NULL &&
      (sc->rec_first = malloc(((size_t)na + 2) * sizeof *sc->rec_first))
          == NULL)
    return OOC_ENOMEM;
  if (sc->cap_rec_idx < pl->n_swaps + n) {
    int32_t cap = pl->n_swaps + n;
    int32_t *q = realloc(sc->rec_idx, (size_t)cap * sizeof *q);
    if (q == NULL)
      return OOC_ENOMEM;
    sc->rec_idx = q;
    sc->cap_rec_idx = cap;
  }
  for (a = 0; a <= na + 1; a++)
    sc->rec_first[a] = 0;
#define ACT_OK(x) ((x) >= 0 && (x) < na)
  for (i = 0; i < pl->n_swaps; i++)
    if (!pl->swaps[i].grad && ACT_OK(pl->swaps[i].act))
      sc->rec_first[pl->swaps[i].act + 2]++;
  for (i = 0; i < n; i++)
    if (ACT_OK(pl->recomps[i].act))
      sc->rec_first[pl->recomps[i].act + 2]++;
  for (a = 0; a < na; a++)
    sc->rec_first[a + 2] += sc->rec_first[a + 1];
  for (i = 0; i < pl->n_swaps; i++)
    if (!pl->swaps[i].grad && ACT_OK(pl->swaps[i].act))
      sc->rec_idx[sc->rec_first[pl->swaps[i].act + 1]++] = i;
  for (i = 0; i < n; i++)
    if (ACT_OK(pl->recomps[i].act))
      sc->rec_idx[sc->rec_first[pl->recomps[i].act + 1]++] = -1 - i;
#undef ACT_OK

  for (a = 0; a < na; a++)
    sc->need_by[a] = INT32_MAX;
  for (i = 0; i < n; i++) {
    if (pl->recomps[i].act <= 0 || pl->recomps[i].act >= na)
      continue;                /* check_records() names it */
    m = ooc_plan_recompute_inputs(lv, pl->recomps[i].act,
                                  pl->recomps[i].free_after, sc->inbuf,
                                  sc->cap_in);
    for (k = 0; k < m && k < sc->cap_in; k++)
      if (sc->need_by[sc->inbuf[k]] > pl->recomps[i].before)
        sc->need_by[sc->inbuf[k]] = pl->recomps[i].before;
  }
  for (a = na - 1; a > 0; a--) {
    ooc_recompute r;
    if (!lv->act_forced[a] || pl->action[a] != OOC_KEEP ||
        lv->act_last_fwd[a] < 0)
      continue;
    r.act = a;
    r.free_after = lv->act_last_fwd[a];
    r.before = lv->act_first_bwd[a] >= 0 ? lv->act_first_bwd[a] : INT32_MAX;
    if (sc->need_by[a] < r.before)
      r.before = sc->need_by[a];
    if (r.before == INT32_MAX || r.before <= r.free_after + 1)
      continue;              /* nothing to gain: kept */
    m = ooc_plan_recompute_inputs(lv, a, r.free_after, sc->inbuf,
                                  sc->cap_in);
    for (k = 0; k < m && k < sc->cap_in; k++)
      if (away_at(pl, sc, sc->inbuf[k], r.before))
        break;
    if (k < m && k < sc->cap_in)
      continue;              /* an input is away then: kept */
    sc->eff_rc[n++] = r;
    sc->eff_action[a] = OOC_RECOMPUTE;
    for (k = 0; k < m && k < sc->cap_in; k++)
      if (sc->need_by[sc->inbuf[k]] > r.before)
        sc->need_by[sc->inbuf[k]] = r.before;
  }
  eff->recomps = sc->eff_rc;
  eff->n_recomps = eff->cap_recomps = n;
  eff->action = sc->eff_action;
  return OOC_OK;
}

int
ooc_plan_lower(const ooc_plan *pl, const ooc_liveness *lv, ooc_program *p,
               ooc_err *err)
{
  const ooc_model *m = lv->model;
  struct ooc_plan_scratch *sc = pl->scratch;
  lower L = { .pl = pl, .lv = lv, .m = m, .p = p, .sc = sc, .err = err,
              .last_copy = { -1, -1, -1 }, .synced = { -1, -1, -1 },
              .memwait = -1, .rc_key = -2 };
  int32_t i, a, t, n_items;
  int rc;
  ooc_plan eff;

  if (sc == NULL || pl->action == NULL || pl->n_acts != lv->n_acts ||
      sc->n_steps != lv->n_steps)
    return ooc_err_set(err, OOC_EINVAL,
                       "plan was not initialised for this liveness");
  if (lv->n_forced > 0) {
    if (forced_plan(pl, lv, sc, &eff) != OOC_OK)
      return ooc_err_set(err, OOC_ENOMEM, "lowering: out of memory");
    L.pl = pl = &eff;
  }
  n_items = pl->n_swaps > pl->n_recomps ? pl->n_swaps : pl->n_recomps;
  if (scratch_reserve(sc, n_items) != OOC_OK)
    return ooc_err_set(err, OOC_ENOMEM, "lowering: out of memory");
  for (i = 0; i < lv->n_acts; i++)
    if (pl->action[i] > OOC_RECOMPUTE)
      return ooc_err_set(err, OOC_EINVAL, "plan: act '%s' has action %u",
                         m->layers[lv->act_layer[i]].name, pl->action[i]);
  rc = check_algos(&L);
  if (rc == OOC_OK)
    rc = check_records(&L);
  if (rc != OOC_OK)
    return rc;
  build_buckets(&L);
  if ((rc = stream_intervals(&L)) != OOC_OK)
    return rc;

  ooc_program_reset(p);
  p->model_fingerprint = m->fingerprint;
  p->n_layers = m->n_layers;

  /* The tensor table, in liveness's order. */
  for (i = 0; i < m->n_layers; i++)
    if (lv->layer_param_tensor[i] >= 0) {
      const ooc_layer *l = &m->layers[i];
      uint64_t b = pl->param_where[i] != OOC_PARAM_DEVICE
                       ? l->param_bytes
                       : l->param_bytes + l->grad_bytes + l->opt_bytes;
      if (ooc_program_tensor(p, OOC_T_PARAM, i, b) < 0)
        return oom(&L);
    }
  if (ooc_program_tensor(p, OOC_T_INPUT, 0, lv->act_bytes[0]) < 0)
    return oom(&L);
  for (a = 1; a < lv->n_acts; a++)
    if (ooc_program_tensor(p, OOC_T_ACT, lv->act_layer[a], lv->act_bytes[a]) < 0)
      return oom(&L);
  for (a = 0; a < lv->n_acts; a++)
    if (lv->grad_tensor[a] >= 0 &&
        ooc_program_tensor(p, OOC_T_GRAD, lv->act_layer[a],
                           lv->grad_bytes[a]) < 0)
      return oom(&L);
  for (i = 0; i < m->n_layers; i++)
    if (lv->layer_ws_tensor[i] >= 0) {
      uint64_t fb, bb;
      if (ooc_algo_workspace(m, i, (ooc_algo)pl->algo[lv->fwd_step[i]],
                             &fb) != OOC_OK ||
          ooc_algo_workspace(m, i, (ooc_algo)pl->algo[lv->bwd_step[i]],
                             &bb) != OOC_OK)
        return oom(&L);   /* check_algos() said they apply */
      if (ooc_program_tensor(p, OOC_T_WORKSPACE, i, fb) < 0 ||
          ooc_program_tensor(p, OOC_T_WORKSPACE, i, bb) < 0)
        return oom(&L);
    }
  if (p->n_tensors != lv->n_tensors)
    return ooc_err_set(err, OOC_EINVAL, "lowering: tensor table mismatch");
  /* Offloaded layers' gradients and optimizer state, after the table. */
  for (i = 0; i < m->n_layers; i++) {
    sc->wg_tensor[i] = sc->os_tensor[i] = sc->host_instr[i] = -1;
    sc->p_h2d[i] = sc->p_free[i] = -1;
    if (pl->param_where[i] == OOC_PARAM_DEVICE)
      continue;
    if (lv->layer_param_tensor[i] < 0)
      return ooc_err_set(err, OOC_EINVAL, "plan: layer %d has no "
                         "parameters to offload", (int)i);
    sc->wg_tensor[i] = ooc_program_tensor(p, OOC_T_WGRAD, i,
                                          m->layers[i].grad_bytes);
    sc->os_tensor[i] = ooc_program_tensor(p, OOC_T_OPTSTATE, i,
                                          m->layers[i].opt_bytes);
    if (sc->wg_tensor[i] < 0 || sc->os_tensor[i] < 0)
      return oom(&L);
  }

  /* Prologue: parameters, the input, pinned host buffers. */
  for (i = 0; i < m->n_layers; i++)
    if ((t = lv->layer_param_tensor[i]) >= 0 &&
        pl->param_where[i] != OOC_PARAM_STREAM &&
        emit(&L, OOC_I_ALLOC, OOC_STREAM_COMPUTE, OOC_PH_NONE, i, t,
             OOC_WHERE_DEVICE) < 0)
      return oom(&L);
  if (emit(&L, OOC_I_ALLOC, OOC_STREAM_COMPUTE, OOC_PH_NONE, 0,
           lv->act_tensor[0], OOC_WHERE_DEVICE) < 0)
    return oom(&L);
  /* Offloaded layers: pinned host copies of the weights and gradients,
   * and the master weights and optimizer state in host memory. */
  for (i = 0; i < m->n_layers; i++)
    if (pl->param_where[i] != OOC_PARAM_DEVICE &&
        (emit(&L, OOC_I_ALLOC, OOC_STREAM_COMPUTE, OOC_PH_NONE, i,
              lv->layer_param_tensor[i], OOC_WHERE_HOST) < 0 ||
         emit(&L, OOC_I_ALLOC, OOC_STREAM_COMPUTE, OOC_PH_NONE, i,
              sc->wg_tensor[i], OOC_WHERE_HOST) < 0 ||
         emit(&L, OOC_I_ALLOC, OOC_STREAM_COMPUTE, OOC_PH_NONE, i,
              sc->os_tensor[i], OOC_WHERE_HOST) < 0))
      return oom(&L);
  for (a = 0; a < lv->n_acts; a++) {
    sc->stamp[a] = 0;
    sc->state[a] = a == 0 ? ST_RESIDENT : ST_ABSENT;
    sc->rec_of[a] = -1;
    sc->rec_is_rc[a] = 0;
    sc->grad_live[a] = 0;
    sc->gstate[a] = ST_ABSENT;
    sc->grec_of[a] = -1;
  }
  /* One pinned host buffer per tensor swapped: bit 1 of stamp for the
   * act, bit 2 for its gradient. */
  for (i = 0; i < pl->n_swaps; i++) {
    int bit = pl->swaps[i].grad ? 2 : 1;
    a = pl->swaps[i].act;
    if (sc->stamp[a] & bit)
      continue;
    sc->stamp[a] |= bit;
    if (emit(&L, OOC_I_ALLOC, OOC_STREAM_COMPUTE, OOC_PH_NONE,
             lv->act_layer[a],
             pl->swaps[i].grad ? lv->grad_tensor[a] : lv->act_tensor[a],
             OOC_WHERE_HOST) < 0)
      return oom(&L);
  }
  p->prologue_end = p->n_instr;
  for (a = 0; a < lv->n_acts; a++)
    sc->stamp[a] = -1;
  for (i = 0; i < n_items; i++)
    sc->h2d_instr[i] = sc->free_instr[i] = -1;

  return lower_steps(&L);
}

/* "tensor 108 (act, layer 1): ..." */
static int
tensor_err(ooc_err *err, const ooc_program *p, int32_t t, const char *fmt,
           uint64_t got, uint64_t want)
{
  char what[160];

  snprintf(what, sizeof what, fmt, (unsigned long long)got,
           (unsigned long long)want);
  return ooc_err_set(err, OOC_EINVAL, "tensor %d (%s, layer %d): %s", t,
                     ooc_tensor_kind_name((ooc_tensor_kind)p->tensors[t].kind),
                     p->tensors[t].layer, what);
}

int
ooc_plan_check_tensors(const ooc_program *p, const ooc_liveness *lv,
                       ooc_err *err)
{
  /* What lowering puts at each id of the table (plan.h's order). */
  struct role { uint64_t want, alt; int32_t layer; uint8_t kind; } *r;
  const ooc_model *m = lv->model;
  int32_t t, i, a, k;
  uint64_t *wmax;
  uint8_t *host;
  int rc = OOC_OK;

  if (p->n_tensors < lv->n_tensors)
    return ooc_err_set(err, OOC_EINVAL, "the tensor table has %d tensors, "
                       "the model's plans %d", p->n_tensors, lv->n_tensors);
  if ((r = calloc((size_t)lv->n_tensors + 1, sizeof *r)) == NULL)
    return ooc_err_set(err, OOC_ENOMEM, "out of memory");
  for (t = 0; t < lv->n_tensors; t++)
    r[t].kind = OOC_T_COUNT;
  for (i = 0; i < m->n_layers; i++) {
    const ooc_layer *l = &m->layers[i];
    if ((t = lv->layer_param_tensor[i]) >= 0)
      r[t] = (struct role){ .kind = OOC_T_PARAM, .layer = i,
                            .want = l->param_bytes + l->grad_bytes +
                                    l->opt_bytes,
                            .alt = l->param_bytes };
    if ((t = lv->layer_ws_tensor[i]) >= 0)
      r[t] = (struct role){ .kind = OOC_T_WORKSPACE, .layer = i };
    if ((t = lv->layer_bws_tensor[i]) >= 0)
      r[t] = (struct role){ .kind = OOC_T_WORKSPACE, .layer = i };
  }
  for (a = 0; a < lv->n_acts; a++) {
    if ((t = lv->act_tensor[a]) >= 0)
      r[t] = (struct role){ .kind = a == 0 ? OOC_T_INPUT : OOC_T_ACT,
                            .layer = a == 0 ? 0 : lv->act_layer[a],
                            .want = lv->act_bytes[a] };
    if ((t = lv->grad_tensor[a]) >= 0)
      r[t] = (struct role){ .kind = OOC_T_GRAD, .layer = lv->act_layer[a],
                            .want = lv->grad_bytes[a] };
  }
  /* host[l]: 4 when a HOST step runs layer l's optimizer on the CPU, | 1
   * once its wgrad tensor is met below, | 2 its optstate. */
  if ((host = calloc((size_t)m->n_layers + 1, 1)) == NULL) {
    free(r);
    return ooc_err_set(err, OOC_ENOMEM, "out of memory");
  }
  for (i = 0; i < p->n_instr && rc == OOC_OK; i++) {
    const ooc_instr *in = &p->instr[i];
    /* The step itself first (as the simulator and the executor check
     * it): its message names what was edited. */
    if (in->kind == OOC_I_HOST && i >= p->prologue_end &&
        (rc = ooc_program_check_host_step(m, p, i, err)) != OOC_OK)
      break;
    if (in->kind == OOC_I_HOST && in->layer >= 0 && in->layer < m->n_layers)
      host[in->layer] = 4;
    /* A CPU step's optimizer state lives on the host, where it runs. */
    if (in->kind == OOC_I_ALLOC && in->where == OOC_WHERE_DEVICE &&
        in->tensor >= 0 && in->tensor < p->n_tensors &&
        p->tensors[in->tensor].kind == OOC_T_OPTSTATE)
      rc = ooc_err_set(err, OOC_EINVAL, "instruction %d (ALLOC) puts tensor "
                       "%d (optstate of layer %d) on the device; a CPU "
                       "step's optimizer state lives on the host", i,
                       in->tensor, p->tensors[in->tensor].layer);
  }
  for (t = 0; t < p->n_tensors && rc == OOC_OK; t++) {
    const ooc_ptensor *x = &p->tensors[t];
    struct role w = t < lv->n_tensors ? r[t] : (struct role){ 0 };
    if (t >= lv->n_tensors) {
      /* A CPU-run layer's gradient and state, after the table: one of
       * each per layer that the plan steps on the CPU. */
      uint8_t bit;
      w.kind = x->kind == OOC_T_WGRAD ? OOC_T_WGRAD : OOC_T_OPTSTATE;
      w.layer = x->layer;
      if (x->layer < 0 || x->layer >= m->n_layers) {
        rc = ooc_err_set(err, OOC_EINVAL, "tensor %d (%s): layer %d out of "
                         "range", t,
                         ooc_tensor_kind_name((ooc_tensor_kind)x->kind),
                         x->layer);
        break;
      }
      bit = w.kind == OOC_T_WGRAD ? 1 : 2;
      if (x->kind == w.kind && (!host[x->layer] || (host[x->layer] & bit))) {
        rc = ooc_err_set(err, OOC_EINVAL, "tensor %d: %s of layer %d ('%s'), "
                         "%s", t, ooc_tensor_kind_name(w.kind), x->layer,
                         m->layers[x->layer].name
                             ? m->layers[x->layer].name : "?",
                         !host[x->layer]
                             ? "a layer whose optimizer step the program "
                               "does not run on the CPU"
                             : "a second one");
        break;
      }
      host[x->layer] |= bit;
      w.want = w.kind == OOC_T_WGRAD ? m->layers[x->layer].grad_bytes
                                     : m->layers[x->layer].opt_bytes;
    }
    if (x->kind != w.kind || x->layer != w.layer)
      rc = ooc_err_set(err, OOC_EINVAL, "tensor %d: %s of layer %d, where "
                       "the model's plans have %s of layer %d", t,
                       ooc_tensor_kind_name((ooc_tensor_kind)x->kind),
                       x->layer,
                       ooc_tensor_kind_name(w.kind == OOC_T_COUNT
                                                ? OOC_T_ACT
                                                : (ooc_tensor_kind)w.kind),
                       w.layer);
    else if (w.kind != OOC_T_WORKSPACE && x->bytes != w.want &&
             !(w.alt != 0 && x->bytes == w.alt))
      rc = tensor_err(err, p, t, "%llu bytes, the model needs %llu",
                      x->bytes, w.want);
  }
  free(r);
  free(host);
  if (rc != OOC_OK)
    return rc;
  /* The timed program runs every forward and backward step once, and the
   * optimizer update once (a program cut short would time less work). */
  {
    int32_t *nf = calloc((size_t)m->n_layers * 2 + 1, sizeof *nf);
    int n_upd = 0, n_host = 0;
    if (nf == NULL)
      return ooc_err_set(err, OOC_ENOMEM, "out of memory");
    for (i = p->prologue_end; i < p->n_instr; i++) {
      const ooc_instr *in = &p->instr[i];
      if (in->kind == OOC_I_HOST)
        n_host++;
      if (in->kind != OOC_I_COMPUTE)
        continue;
      if (in->phase == OOC_PH_UPDATE)
        n_upd++;
      else if (in->layer >= 0 && in->layer < m->n_layers &&
               (in->phase == OOC_PH_FWD || in->phase == OOC_PH_BWD))
        nf[2 * in->layer + (in->phase == OOC_PH_BWD)]++;
    }
    for (i = 0; i < m->n_layers && rc == OOC_OK; i++)
      for (k = 0; k < 2 && rc == OOC_OK; k++) {
        int want = (k ? lv->bwd_step[i] : lv->fwd_step[i]) >= 0;
        if (nf[2 * i + k] != want)
          rc = ooc_err_set(err, OOC_EINVAL, "the timed program runs the "
                           "%s of layer %d ('%s') %d times, not %d",
                           k ? "backward" : "forward", (int)i,
                           m->layers[i].name ? m->layers[i].name : "?",
                           nf[2 * i + k], want);
      }
    free(nf);
    if (rc == OOC_OK && n_upd > 1)
      rc = ooc_err_set(err, OOC_EINVAL, "the timed program runs the "
                       "optimizer update %d times, not once", n_upd);
    if (rc == OOC_OK && n_upd == 0 && n_host == 0 && m->total_params > 0)
      rc = ooc_err_set(err, OOC_EINVAL, "the timed program has no "
                       "optimizer update");
    /* The optimizer steps update every parameter tensor once: the
     * update lists it as written, or its layer's CPU step does (an update
     * that skips some is priced as less work). */
    if (rc == OOC_OK) {
      int32_t *nu = calloc((size_t)p->n_tensors + 1, sizeof *nu);
      if (nu == NULL)
        return ooc_err_set(err, OOC_ENOMEM, "out of memory");
      for (i = p->prologue_end; i < p->n_instr; i++) {
        const ooc_instr *in = &p->instr[i];
        if (!((in->kind == OOC_I_COMPUTE && in->phase == OOC_PH_UPDATE) ||
              in->kind == OOC_I_HOST))
          continue;
        for (k = 0; k < in->n_args; k++) {
          int32_t g = p->args[in->arg_first + k];
          t = OOC_ARG_TENSOR(g);
          if (t >= 0 && t < p->n_tensors &&
              p->tensors[t].kind == OOC_T_PARAM && (g & OOC_ARG_WRITE))
            nu[t]++;
        }
      }
      for (t = 0; t < p->n_tensors && rc == OOC_OK; t++) {
        const ooc_ptensor *x = &p->tensors[t];
        if (x->kind == OOC_T_PARAM && nu[t] != 1)
          rc = ooc_err_set(err, OOC_EINVAL, "the timed program's optimizer "
                           "steps update tensor %d (param of layer %d '%s') "
                           "%d times, not once", t, x->layer,
                           x->layer >= 0 && x->layer < m->n_layers &&
                                   m->layers[x->layer].name
                               ? m->layers[x->layer].name : "?",
                           nu[t]);
      }
      free(nu);
    }
    if (rc != OOC_OK)
      return rc;
  }
  /* Each kernel lists the workspace its algorithm needs, and each
   * workspace holds what the kernels that use it need: a kernel run
   * without it would fail on the hardware (or take scratch the plan never
   * allocated), and a simulation would not count that memory. */
  wmax = calloc((size_t)p->n_tensors + 1, sizeof *wmax);
  if (wmax == NULL)
    return ooc_err_set(err, OOC_ENOMEM, "out of memory");
  for (i = 0; i < p->n_instr && rc == OOC_OK; i++) {
    const ooc_instr *in = &p->instr[i];
    uint64_t need = 0;
    int listed = 0;
    if (in->kind != OOC_I_COMPUTE || in->layer < 0 ||
        in->layer >= m->n_layers)
      continue;
    if (ooc_algo_workspace(m, in->layer, (ooc_algo)in->algo, &need) !=
        OOC_OK)
      need = 0;
    for (k = 0; k < in->n_args; k++) {
      t = OOC_ARG_TENSOR(p->args[in->arg_first + k]);
      if (t < 0 || t >= p->n_tensors ||
          p->tensors[t].kind != OOC_T_WORKSPACE)
        continue;
      if (p->tensors[t].layer != in->layer) {
        rc = ooc_kernel_err(err, m, i, in->phase, in->layer, "lists tensor "
                            "%d, the workspace of layer %d, not one of its "
                            "own", t, p->tensors[t].layer);
        break;
      }
      listed = 1;
      if (p->tensors[t].bytes < need) {
        rc = tensor_err(err, p, t, "%llu bytes, its kernel needs %llu",
                        p->tensors[t].bytes, need);
        break;
      }
      if (need > wmax[t])
        wmax[t] = need;
    }
    if (rc == OOC_OK && need > 0 && !listed)
      rc = ooc_kernel_err(err, m, i, in->phase, in->layer, "its kernel "
                          "(algorithm %s) needs %llu bytes of workspace, and "
                          "the instruction lists none",
                          ooc_algo_name((ooc_algo)in->algo),
                          (unsigned long long)need);
  }
  /* ... and no more: the lowering sizes each by its kernels' algorithms
   * (a larger one is memory no kernel asked for). */
  for (t = 0; t < p->n_tensors && rc == OOC_OK; t++)
    if (p->tensors[t].kind == OOC_T_WORKSPACE &&
        p->tensors[t].bytes > wmax[t])
      rc = tensor_err(err, p, t, "%llu bytes, more than the %llu its "
                      "kernels' algorithms need", p->tensors[t].bytes,
                      wmax[t]);
  free(wmax);
  return rc;
}
