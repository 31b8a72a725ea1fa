/* plan/toolkit.c — memory timelines, footprints, segment frontiers and
 * recompute costs for planners (toolkit.h).
 *
 * One idea: what every planner used to derive on its own (capacity and
 * window each built the per-step memory of the liveness, vdnn and capacity
 * each scanned the use lists for the last forward and first backward use)
 * is computed here once, the same way for all.
 *
 * The timeline is a segment tree without push-down: each node keeps the
 * add pending for its whole range (lz) and the maximum of its range with
 * that add included (mx), so an update touches O(log n) nodes and a query
 * adds up the pending adds along its path. Cost: as toolkit.h states.
 */
#include "config.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "plan/toolkit.h"
#include "ir/algo.h"

/* --- memory timeline ------------------------------------------------------ */

int
ooc_timeline_init(ooc_timeline *t, int32_t n_steps, ooc_err *err)
{
  int32_t leaves = 1;

  memset(t, 0, sizeof *t);
  while (leaves < n_steps)
    leaves *= 2;
  t->n = n_steps;
  t->leaves = leaves;
  t->mx = calloc(2 * (size_t)leaves, sizeof *t->mx);
  t->lz = calloc(2 * (size_t)leaves, sizeof *t->lz);
  if (t->mx == NULL || t->lz == NULL) {
    ooc_timeline_fini(t);
    return ooc_err_set(err, OOC_ENOMEM, "timeline: out of memory");
  }
  return OOC_OK;
}

void
ooc_timeline_fini(ooc_timeline *t)
{
  if (t == NULL)
    return;
  free(t->mx);
  free(t->lz);
  memset(t, 0, sizeof *t);
}

void
ooc_timeline_clear(ooc_timeline *t)
{
  memset(t->mx, 0, 2 * (size_t)t->leaves * sizeof *t->mx);
  memset(t->lz, 0, 2 * (size_t)t->leaves * sizeof *t->lz);
}

void
ooc_timeline_copy(ooc_timeline *dst, const ooc_timeline *src)
{
  memcpy(dst->mx, src->mx, 2 * (size_t)src->leaves * sizeof *dst->mx);
  memcpy(dst->lz, src->lz, 2 * (size_t)src->leaves * sizeof *dst->lz);
}

static inline int64_t
max64(int64_t a, int64_t b)
{
  return a > b ? a : b;
}

/* The max of node v's range again, from its children and its own pending
 * add, for every ancestor of node v (bottom-up). */
static void
tl_rebuild(ooc_timeline *t, int32_t v)
{
  while (v > 1) {
    v >>= 1;
    t->mx[v] = max64(t->mx[2 * v], t->mx[2 * v + 1]) + t->lz[v];
  }
}

/* Bottom-up, without recursion: the O(log n) nodes that cover [from, to]
 * exactly take the add (their own pending add and their max), then the
 * two boundary paths are rebuilt; the same nodes as a top-down descent
 * would touch, so the tree is the same. */
void
ooc_timeline_add(ooc_timeline *t, int32_t from, int32_t to, int64_t bytes)
{
  int32_t l, r;

  if (from < 0)
    from = 0;
  if (to >= t->n)
    to = t->n - 1;
  if (to < from || bytes == 0)
    return;
  l = from + t->leaves;
  r = to + 1 + t->leaves;
  {
    int32_t l0 = l, r0 = r - 1;
    for (; l < r; l >>= 1, r >>= 1) {
      if (l & 1) {
        t->lz[l] += bytes;
        t->mx[l++] += bytes;
      }
      if (r & 1) {
        t->lz[--r] += bytes;
        t->mx[r] += bytes;
      }
    }
    tl_rebuild(t, l0);
    tl_rebuild(t, r0);
  }
}

int64_t
ooc_timeline_at(const ooc_timeline *t, int32_t s)
{
  int32_t v = 1, l = 0, r = t->leaves - 1;
  int64_t acc = 0;

  while (l < r) {
    int32_t m = l + (r - l) / 2;
    acc += t->lz[v];
    if (s <= m) {
      v = 2 * v;
      r = m;
    } else {
      v = 2 * v + 1;
      l = m + 1;
    }
  }
  return acc + t->mx[v];
}

static int64_t
tl_max(const ooc_timeline *t, int32_t v, int32_t l, int32_t r, int32_t from,
       int32_t to)
{
  int32_t m;

  if (to < l || r < from)
    return INT64_MIN;
  if (from <= l && r <= to)
    return t->mx[v];
  m = l + (r - l) / 2;
  return max64(tl_max(t, 2 * v, l, m, from, to),
               tl_max(t, 2 * v + 1, m + 1, r, from, to)) + t->lz[v];
}

int64_t
ooc_timeline_max(const ooc_timeline *t, int32_t from, int32_t to)
{
  if (from < 0)
    from = 0;
  if (to >= t->n)
    to = t->n - 1;
  if (to < from)
    return INT64_MIN;
  return tl_max(t, 1, 0, t->leaves - 1, from, to);
}

/* acc: the adds pending above v. */
static int32_t
tl_last_above(const ooc_timeline *t, int32_t v, int32_t l, int32_t r,
              int32_t from, int32_t to, int64_t limit, int64_t acc)
{
  int32_t m, hit;

  if (to < l || r < from || t->mx[v] + acc <= limit)
    return -1;
  if (l == r)
    return l;
  acc += t->lz[v];
  m = l + (r - l) / 2;
  hit = tl_last_above(t, 2 * v + 1, m + 1, r, from, to, limit, acc);
  if (hit >= 0)
    return hit;
  return tl_last_above(t, 2 * v, l, m, from, to, limit, acc);
}

int32_t
ooc_timeline_last_above(const ooc_timeline *t, int32_t from, int32_t to,
                        int64_t limit)
{
  if (from < 0)
    from = 0;
  if (to >= t->n)
    to = t->n - 1;
  if (to < from)
    return -1;
  return tl_last_above(t, 1, 0, t->leaves - 1, from, to, limit, 0);
}

static int32_t
tl_first_above(const ooc_timeline *t, int32_t v, int32_t l, int32_t r,
               int32_t from, int32_t to, int64_t limit, int64_t acc)
{
  int32_t m, hit;

  if (to < l || r < from || t->mx[v] + acc <= limit)
    return -1;
  if (l == r)
    return l;
  acc += t->lz[v];
  m = l + (r - l) / 2;
  hit = tl_first_above(t, 2 * v, l, m, from, to, limit, acc);
  if (hit >= 0)
    return hit;
  return tl_first_above(t, 2 * v + 1, m + 1, r, from, to, limit, acc);
}

int32_t
ooc_timeline_first_above(const ooc_timeline *t, int32_t from, int32_t to,
                         int64_t limit)
{
  if (from < 0)
    from = 0;
  if (to >= t->n)
    to = t->n - 1;
  if (to < from)
    return -1;
  return tl_first_above(t, 1, 0, t->leaves - 1, from, to, limit, 0);
}

static void
tl_values(const ooc_timeline *t, int32_t v, int32_t l, int32_t r,
          int64_t acc, int64_t *out)
{
  int32_t m;

  if (l >= t->n)
    return;
  if (l == r) {
    out[l] = acc + t->mx[v];
    return;
  }
  acc += t->lz[v];
  m = l + (r - l) / 2;
  tl_values(t, 2 * v, l, m, acc, out);
  tl_values(t, 2 * v + 1, m + 1, r, acc, out);
}

void
ooc_timeline_values(const ooc_timeline *t, int64_t *out)
{
  if (t->n > 0)
    tl_values(t, 1, 0, t->leaves - 1, 0, out);
}

void
ooc_timeline_set_values(ooc_timeline *t, const int64_t *v)
{
  int32_t i;

  memcpy(t->mx + t->leaves, v, (size_t)t->n * sizeof *v);
  memset(t->mx + t->leaves + t->n, 0,
         (size_t)(t->leaves - t->n) * sizeof *t->mx);
  memset(t->lz, 0, 2 * (size_t)t->leaves * sizeof *t->lz);
  for (i = t->leaves - 1; i >= 1; i--)
    t->mx[i] = max64(t->mx[2 * i], t->mx[2 * i + 1]);
}

/* --- footprints --------------------------------------------------------------- */

uint64_t
ooc_kit_footprint(const ooc_planner_ctx *ctx, uint64_t bytes)
{
  ooc_alloc_config cfg;

  if (ctx == NULL)
    return bytes;
  cfg = (ooc_alloc_config){ .budget = ctx->budget,
                            .chunk_bytes = ctx->chunk_bytes,
                            .hw = ctx->hw,
                            .options = ctx->allocator_options };
  return ooc_alloc_footprint(ctx->allocator, &cfg, bytes);
}

uint64_t
ooc_kit_persistent(const ooc_planner_ctx *ctx, const ooc_liveness *lv)
{
  const ooc_model *m = lv->model;
  uint64_t sum = ooc_kit_footprint(ctx, lv->act_bytes[0]);
  int32_t i;

  for (i = 0; i < lv->n_layers; i++) {
    const ooc_layer *ly = &m->layers[i];
    uint64_t pb = ly->param_bytes + ly->grad_bytes + ly->opt_bytes;
    if (pb > 0)
      sum += ooc_kit_footprint(ctx, pb);
  }
  return sum;
}

void
ooc_timeline_memory(ooc_timeline *t, const ooc_liveness *lv,
                    const ooc_planner_ctx *ctx, unsigned what)
{
  const ooc_model *m = lv->model;
  int32_t s, a;

  if (what & OOC_TL_PERSISTENT)
    ooc_timeline_add(t, 0, lv->n_steps - 1,
                     (int64_t)ooc_kit_persistent(ctx, lv));
  if (what & OOC_TL_WORKSPACE)
    for (s = 0; s < lv->n_steps; s++)
      if (lv->steps[s].phase != OOC_PH_UPDATE)
        ooc_timeline_add(t, s, s, (int64_t)ooc_kit_footprint(
                             ctx, m->layers[lv->steps[s].layer]
                                      .workspace_bytes));
  for (a = 1; a < lv->n_acts; a++) {
    if ((what & OOC_TL_GRADS) && lv->grad_first[a] >= 0)
      ooc_timeline_add(t, lv->grad_first[a], lv->grad_last[a],
                       (int64_t)ooc_kit_footprint(ctx, lv->grad_bytes[a]));
    if ((what & OOC_TL_ACTS) && lv->act_nuses[a] > 0)
      ooc_timeline_add(t, lv->use_steps[lv->act_first[a]], lv->act_last[a],
                       (int64_t)ooc_kit_footprint(ctx, lv->act_bytes[a]));
  }
}

/* --- segments ------------------------------------------------------------------- */

int
ooc_plankit_init(ooc_plankit *k, const ooc_liveness *lv,
                 const ooc_costs *costs, ooc_err *err)
{
  int32_t s;

  memset(k, 0, sizeof *k);
  k->lv = lv;
  k->costs = costs;
  k->fwd_prefix = calloc((size_t)lv->n_steps + 1, sizeof *k->fwd_prefix);
  k->stamp = calloc((size_t)lv->n_acts + 1, sizeof *k->stamp);
  if (k->fwd_prefix == NULL || k->stamp == NULL) {
    ooc_plankit_fini(k);
    return ooc_err_set(err, OOC_ENOMEM, "planning toolkit: out of memory");
  }
  for (s = 0; s < lv->n_steps; s++) {
    const ooc_step *st = &lv->steps[s];
    int64_t ns = 0;
    if (st->phase == OOC_PH_FWD && costs != NULL && st->layer >= 0 &&
        st->layer < costs->n_layers)
      ns = costs->recomp_ns[st->layer];
    k->fwd_prefix[s + 1] = k->fwd_prefix[s] + ns;
  }
  return OOC_OK;
}

void
ooc_plankit_fini(ooc_plankit *k)
{
  if (k == NULL)
    return;
  free(k->fwd_prefix);
  free(k->stamp);
  memset(k, 0, sizeof *k);
}

int32_t
ooc_kit_producer(const ooc_liveness *lv, int32_t a)
{
  return a <= 0 ? -1 : lv->fwd_step[lv->act_layer[a]];
}

int
ooc_kit_recomputable(const ooc_liveness *lv, int32_t a)
{
  return a > 0 && a < lv->n_acts && lv->act_rebuild[a];
}

int32_t
ooc_kit_frontier(ooc_plankit *k, int32_t first, int32_t last, int32_t *out)
{
  const ooc_liveness *lv = k->lv;
  int32_t n = 0, s, j;

  if (++k->gen == 0) {
    memset(k->stamp, 0, (size_t)lv->n_acts * sizeof *k->stamp);
    k->gen = 1;
  }
  for (s = first; s <= last && s < lv->n_steps; s++) {
    if (lv->steps[s].phase != OOC_PH_FWD)
      continue;
    for (j = 0; j < lv->step_nacts[s]; j++) {
      int32_t a = lv->step_acts[lv->step_first[s] + j];
      if (k->stamp[a] == k->gen || ooc_kit_producer(lv, a) >= first)
        continue;
      k->stamp[a] = k->gen;
      out[n++] = a;
    }
  }
  return n;
}

int64_t
ooc_kit_recompute_ns(const ooc_plankit *k, int32_t first, int32_t last)
{
  if (first < 0)
    first = 0;
  if (last >= k->lv->n_steps)
    last = k->lv->n_steps - 1;
  if (last < first)
    return 0;
  return k->fwd_prefix[last + 1] - k->fwd_prefix[first];
}

int32_t
ooc_kit_chain_cuts(const ooc_liveness *lv, int32_t *cuts, int32_t *cut_act,
                   int32_t *n_fwd, ooc_err *err)
{
  int32_t n = lv->n_steps, a, s, run = 0, nf, n_cuts = 0;
  int32_t *cross = calloc((size_t)n + 2, sizeof *cross);
  int32_t *cross_act = calloc((size_t)n + 2, sizeof *cross_act);

  if (cross == NULL || cross_act == NULL) {
    free(cross);
    free(cross_act);
    return ooc_err_set(err, OOC_ENOMEM, "chain cuts: out of memory");
  }
  /* Forward steps come first in the schedule. */
  for (nf = 0; nf < n && lv->steps[nf].phase == OOC_PH_FWD; nf++)
    ;
  /* Activation a is live across the cuts [producer, last forward use). */
  for (a = 1; a < lv->n_acts; a++) {
    int32_t p = ooc_kit_producer(lv, a), lf = lv->act_last_fwd[a];
    if (p < 0 || lf <= p)
      continue;
    cross[p]++;
    cross[lf]--;
  }
  for (s = 0; s < nf; s++) {
    run += cross[s];
    cross[s] = run;
  }
  for (a = 1; a < lv->n_acts; a++) {
    int32_t p = ooc_kit_producer(lv, a), lf = lv->act_last_fwd[a];
    for (s = p; p >= 0 && s < lf; s++)
      if (cross[s] == 1)
        cross_act[s] = a;
  }
  for (s = 0; s + 1 < nf; s++)
    if (cross[s] == 1) {
      cut_act[n_cuts] = cross_act[s];
      cuts[n_cuts++] = s;
    }
  free(cross);
  free(cross_act);
  *n_fwd = nf;
  return n_cuts;
}

int32_t
ooc_kit_recompute_segment(const ooc_planner_ctx *ctx, ooc_plan *pl,
                          int32_t lo, int32_t hi, int32_t keep,
                          uint8_t *mark, ooc_err *err)
{
  const ooc_liveness *lv = ctx->live;
  const ooc_model *m = ctx->model;
  int32_t before = -1, s, a, k, q, n = 0;

#define SEG_ACT(s, q) lv->step_acts[lv->step_first[s] + (q)]
#define OWN(s, a) ((a) > 0 && ooc_kit_producer(lv, a) == (s) && (a) != keep && \
                   lv->act_last_fwd[a] >= 0 && pl->action[a] == OOC_KEEP && \
                   m->layers[lv->act_layer[a]].op != OOC_OPK_SOFTMAX_CE && \
                   ooc_kit_recomputable(lv, a))
  for (s = lo; s <= hi; s++)
    for (q = 0; q < lv->step_nacts[s]; q++) {
      a = SEG_ACT(s, q);
      if (OWN(s, a) && lv->act_first_bwd[a] >= 0 &&
          (before < 0 || lv->act_first_bwd[a] < before))
        before = lv->act_first_bwd[a];
    }
  if (before < 0)
    return 0;
  /* What backward reads, then, from the outputs back, the inputs of what
   * is recomputed. */
  for (s = lo; s <= hi; s++)
    for (q = 0; q < lv->step_nacts[s]; q++) {
      a = SEG_ACT(s, q);
      if (OWN(s, a) && lv->act_first_bwd[a] >= 0 &&
          lv->act_last_fwd[a] < before)
        mark[a] = 1;
    }
  {
    int32_t cap = ooc_plan_recompute_inputs_max(lv) + 1, n_in;
    int32_t *in = malloc((size_t)cap * sizeof *in);
    if (in == NULL) {
      for (s = lo; s <= hi; s++)
        for (q = 0; q < lv->step_nacts[s]; q++)
          mark[SEG_ACT(s, q)] = 0;
      return ooc_err_set(err, OOC_ENOMEM, "recompute: out of memory");
    }
    for (s = hi; s >= lo; s--)
      for (q = 0; q < lv->step_nacts[s]; q++) {
        a = SEG_ACT(s, q);
        if (ooc_kit_producer(lv, a) != s || !mark[a])
          continue;
        n_in = ooc_plan_recompute_inputs(lv, a, lv->act_last_fwd[a], in,
                                         cap);
        for (k = 0; k < n_in && k < cap; k++) {
          int32_t b = in[k], p = ooc_kit_producer(lv, b);
          if (p >= lo && p <= hi && OWN(p, b) &&
              lv->act_first_bwd[b] < 0 && lv->act_last_fwd[b] < before)
            mark[b] = 1;
        }
      }
    free(in);
  }
#undef OWN
  /* In forward order, so each recompute finds its inputs. */
  for (s = lo; s <= hi; s++)
    for (q = 0; q < lv->step_nacts[s]; q++) {
      ooc_recompute r;
      a = SEG_ACT(s, q);
      if (ooc_kit_producer(lv, a) != s || !mark[a])
        continue;
      mark[a] = 0;
      r = (ooc_recompute){ .act = a, .free_after = lv->act_last_fwd[a],
                           .before = before };
      if (ooc_plan_add_recompute(pl, &r) != OOC_OK) {
        for (; s <= hi; s++)
          for (q = 0; q < lv->step_nacts[s]; q++)
            mark[SEG_ACT(s, q)] = 0;
        return ooc_err_set(err, OOC_ENOMEM, "recompute: out of memory");
      }
      n++;
    }
#undef SEG_ACT
  return n;
}

/* --- a plan's bound ------------------------------------------------------ */

/* The compute stream runs every kernel one
 * after another, each at least its cost-model time (sim/engine.c: a
 * kernel's time is ooc_sim_instr_ns, stretched by interference, never
 * shortened), so the iteration is at least the sum over the steps at
 * their algorithms plus the recomputes the records add; and each copy
 * direction moves every swapped byte at no more than its fastest rate
 * (alone or duplex). Both happen within the timed iteration: every
 * kernel, and every copy, which starts after a kernel of the iteration
 * and ends before one. O(steps + records + recomputed layers). */
int64_t
ooc_kit_plan_bound(const ooc_planner_ctx *ctx, const ooc_plan *pl)
{
  const ooc_liveness *lv = ctx->live;
  const ooc_costs *c = ctx->costs;
  const ooc_hw *hw = ctx->hw;
  double bytes[2] = { 0, 0 }, rate[2], link = 0;
  int64_t comp = 0, t, upd = c->update_ns;
  int32_t s, i, k;

  int64_t host = 0;

  /* Offloaded layers: their steps on the CPU one after another, their
   * gradients out and their weights in (at least once) on the link, the
   * device update over the others (as the simulator prices it). */
  if (pl->n_offloaded > 0) {
    const ooc_model *m = ctx->model;
    double u = 0;
    int32_t n_dev = 0, l;
    for (l = 0; l < m->n_layers; l++) {
      if (m->layers[l].params == 0)
        continue;
      if (pl->param_where[l] == OOC_PARAM_DEVICE) {
        u += c->update_layer_ns[l];
        n_dev++;
        continue;
      }
      host += c->host_opt_ns[l] > 0 ? c->host_opt_ns[l] : 0;
      bytes[1] += (double)m->layers[l].grad_bytes;
      bytes[0] += (double)m->layers[l].param_bytes;
    }
    upd = n_dev >= c->n_param_layers ? c->update_ns
          : n_dev == 0 ? 0 : (int64_t)llround(u) + n_dev * hw->launch_ns;
  }
  for (s = 0; s < lv->n_steps; s++) {
    const ooc_step *sp = &lv->steps[s];
    if (sp->phase == OOC_PH_UPDATE)
      t = upd;
    else if (sp->layer >= 0 && sp->layer < c->n_layers)
      t = ooc_costs_algo_ns(c, sp->layer, sp->phase, pl->algo[s]);
    else
      t = 0;
    comp += t > 0 ? t : 0;
  }
  for (i = 0; i < pl->n_recomps; i++) {
    const ooc_recompute *r = &pl->recomps[i];
    int32_t a = r->act;
    for (k = 0; k < lv->act_nlayers[a]; k++) {
      int32_t l = lv->act_layers[lv->act_lfirst[a] + k];
      if (lv->fwd_step[l] > r->free_after)
        break;
      t = ooc_costs_algo_ns(c, l, OOC_PH_RECOMP, pl->algo[lv->fwd_step[l]]);
      comp += t > 0 ? t : 0;
    }
  }
  for (i = 0; i < pl->n_swaps; i++) {
    const ooc_swap *w = &pl->swaps[i];
    double b = w->grad ? (double)lv->grad_bytes[w->act]
                       : (double)lv->act_bytes[w->act];
    bytes[1] += b;
    if (w->in_before >= 0)
      bytes[0] += b;
  }
  rate[0] = hw->h2d_Bps > hw->duplex_h2d_Bps ? hw->h2d_Bps
                                             : hw->duplex_h2d_Bps;
  rate[1] = hw->d2h_Bps > hw->duplex_d2h_Bps ? hw->d2h_Bps
                                             : hw->duplex_d2h_Bps;
  for (k = 0; k < 2; k++)
    if (rate[k] > 0 && bytes[k] / rate[k] * 1e9 > link)
      link = bytes[k] / rate[k] * 1e9;
  if ((double)host > link)
    link = (double)host;
  return link > (double)comp ? (int64_t)link : comp;
}

int
ooc_kit_fastest_algo(const ooc_planner_ctx *ctx, int32_t s, uint64_t avail,
                     int need_recomp, int64_t *ns)
{
  const ooc_liveness *lv = ctx->live;
  int32_t l = lv->steps[s].layer;
  int ph = lv->steps[s].phase, a, best = -1;
  int64_t best_ns = -1;

  if ((ph != OOC_PH_FWD && ph != OOC_PH_BWD) || l < 0 ||
      !ooc_algo_has_choice(ctx->model, l))
    return -1;
  for (a = 0; a < OOC_ALGO_COUNT; a++) {
    int64_t t = ooc_costs_algo_ns(ctx->costs, l, ph, a);
    uint64_t ws;
    if (t < 0 || (best_ns >= 0 && t >= best_ns))
      continue;
    if (avail != UINT64_MAX &&
        (ooc_algo_workspace(ctx->model, l, (ooc_algo)a, &ws) != OOC_OK ||
         ooc_kit_footprint(ctx, ws) > avail))
      continue;
    if (need_recomp && ph == OOC_PH_FWD &&
        ooc_costs_algo_ns(ctx->costs, l, OOC_PH_RECOMP, a) < 0)
      continue;
    best_ns = t;
    best = a;
  }
  if (best >= 0 && ns != NULL)
    *ns = best_ns;
  return best;
}

int32_t
ooc_kit_fit_algos(const ooc_planner_ctx *ctx, const ooc_sim_detail *det,
                  ooc_plan *pl, int32_t *comp)
{
  const ooc_liveness *lv = ctx->live;
  const ooc_program *p = ctx->scratch;
  int32_t i, s, n = 0;

  for (s = 0; s < lv->n_steps; s++)
    comp[s] = -1;
  for (i = p->prologue_end; i < p->n_instr && i < det->n_instr; i++) {
    const ooc_instr *in = &p->instr[i];
    if (in->kind != OOC_I_COMPUTE || in->layer < 0 ||
        in->layer >= ctx->model->n_layers)
      continue;
    if (in->phase == OOC_PH_FWD)
      comp[lv->fwd_step[in->layer]] = i;
    else if (in->phase == OOC_PH_BWD)
      comp[lv->bwd_step[in->layer]] = i;
  }
  /* A recomputed forward: marked by a comp of -2 - instruction. */
  for (i = 0; i < pl->n_recomps; i++) {
    int32_t q = ooc_kit_producer(lv, pl->recomps[i].act);
    if (q >= 0 && comp[q] >= 0)
      comp[q] = -2 - comp[q];
  }
  for (s = 0; s < lv->n_steps; s++) {
    int32_t l = lv->steps[s].layer, c = comp[s], rc = 0;
    uint64_t cur = 0;
    int best;
    if (c < -1) {
      c = -2 - c;
      rc = 1;
    }
    if (c < 0 || !ooc_algo_has_choice(ctx->model, l) ||
        det->start_ns[c] < 0)
      continue;
    if (ooc_algo_workspace(ctx->model, l, (ooc_algo)pl->algo[s], &cur) !=
        OOC_OK)
      cur = 0;
    best = ooc_kit_fastest_algo(ctx, s,
                                det->free_bytes[c] +
                                    ooc_kit_footprint(ctx, cur),
                                rc, NULL);
    if (best >= 0 && best != pl->algo[s]) {
      pl->algo[s] = (uint8_t)best;
      n++;
    }
  }
  return n;
}
