/* planners/superneurons.c — SuperNeurons: liveness, a unified tensor pool
 * with an LRU tensor cache, cost-aware recomputation and the fastest
 * convolution algorithm that fits.
 *
 * Follows the SuperNeurons seed (Dynamic GPU Memory Management for
 * Training Deep Neural Networks), §3:
 *   §3.1 Alg. 1: the route (ir/route.c); the schedule keeps the model's
 *        order, and the planner metric route_moved_layers says how many
 *        forward steps the route would place elsewhere;
 *   §3.2 liveness: every tensor freed after its last use (the schedule's
 *        liveness, as incore); §3.2.1's heap is the `pool` allocator
 *        (`--allocator pool`: one preallocated arena of 1 KiB blocks, first
 *        fit), which the planner does not choose for the user;
 *   checkpoints: the outputs of CONV layers, and, as the released
 *        implementation does, of FC, JOIN (add) and CONCAT layers (its FORK
 *        layer has no counterpart here: a tensor with several readers is
 *        one tensor);
 *   §3.3.1 UTP offload / prefetch (stage offload and recompute): every
 *        checkpoint output backward reads again is offloaded after its last
 *        forward use, the next checkpoint layer's forward waiting for the
 *        copy; in backward, at each checkpoint layer the tensors needed up
 *        to the previous checkpoint layer are prefetched;
 *   §3.3.2 Tensor Cache, Alg. 2 (stage all): transfers happen only when
 *        memory runs short. The steps are walked in order with the bytes
 *        resident at each; a step that would exceed the budget evicts
 *        (offloads) the least recently used checkpoint output it does not
 *        use (locked: used by the step or by a recompute before it), and
 *        waits for the copy, which the plan issues right after the
 *        tensor's last use so far (the UTP's offload is asynchronous; a
 *        plan knows in advance which tensors the cache will evict); an
 *        evicted tensor comes back by the prefetch rule above (each
 *        tensor is evicted at most once);
 *   §3.4 cost-aware recomputation (stage recompute and all): the
 *        non-checkpoint outputs backward reads are dropped after their
 *        last forward use. Per segment (a run of non-checkpoint layers
 *        between checkpoints), memcost = its forward outputs + the working
 *        set of its last layer's backward; against l_peak (the largest
 *        working set of one step): speed-centric when memcost <= l_peak
 *        (the segment recomputed once, before its first backward use, and
 *        kept), memory-centric otherwise (before each backward step that
 *        reads the segment, what it reads is recomputed from the
 *        checkpoint, with the chain's other links freed as soon as the
 *        next is built, and dropped again after the step);
 *   §3.5 (stage all): each convolution's forward and backward take the
 *        fastest algorithm whose workspace fits the memory free at its
 *        step in the simulated plan (the plan's free bytes as the kernel
 *        starts, plus its own workspace); the plan is simulated again and
 *        kept only if it still fits.
 * `--opt stage=liveness|offload|recompute|all` stops after a stage; each
 * run simulates every stage up to the one asked and the note and the
 * planner metrics (`planner_metrics` in the summary) give the peak each
 * one allocates (the seed's §4.1.1 analysis) and l_peak.
 *
 * Departure: the memory walk of the cache counts bytes, while the
 * simulator's allocator places blocks; a plan that fragments is reported
 * as it simulates (no budget lowering: the seed's runtime has none).
 *
 * Cost: O(steps x resident checkpoints) for the walk, O(records) for the
 * rest, 2 to 6 simulations. Ownership: scratch in the state (sn_alloc /
 * sn_free); writes only the caller's plan.
 */
#include "config.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "ir/algo.h"
#include "ir/route.h"
#include "plan/planner.h"
#include "plan/toolkit.h"

enum { ST_LIVENESS = 0, ST_OFFLOAD, ST_RECOMPUTE, ST_ALL, ST_COUNT };

struct sn_state {
  uint8_t *ckpt;            /* per act: a checkpoint layer's output */
  uint8_t *mark;            /* per act: toolkit scratch */
  uint8_t *chain;           /* per act: in the current recompute chain */
  uint8_t *resident;        /* per act: on the device in the walk */
  uint8_t *evicted;         /* per act: evicted once already */
  int32_t *prev;            /* per act: the step after which it was last
                               dropped (memory-centric records) */
  int32_t *need;            /* per act: its first read after its last
                               forward use (backward or a recompute) */
  int32_t *lock;            /* per act: the last step that reads it so far
                               in the walk (LRU order), or locks it */
  int32_t *back;            /* per act: walk: prefetched, resident from
                               this step (-1 none) */
  int32_t *ck_bwd;          /* backward steps of checkpoint layers, asc */
  int32_t n_ck_bwd;
  int32_t *rd, n_rd;        /* (step, act) reads by recomputes */
  int32_t *rda, *rda_first; /* the same by act: act a's steps ascending
                               rda[rda_first[a] .. rda_first[a + 1]) */
  int32_t *acts;            /* scratch list of acts (cap_in or more) */
  int32_t cap_in;           /* ooc_plan_recompute_inputs' bound */
  int32_t *stack;           /* chain_close's work list */
  int32_t *ext;             /* per act: the last step its plan keeps it
                               resident beyond liveness (recomputes) */
  int32_t *comp;            /* per step: its COMPUTE in the last lowering */
  int32_t *arrive;          /* per step: the walk's first act prefetched
                               back then (-1 none), then arrive_next[] */
  int32_t *arrive_next;     /* per act */
  int32_t *drop_first;      /* per step + 1: the checkpoint outputs the
                               walk drops after it, drop_acts[drop_first[s]
                               .. drop_first[s + 1]) (counting sort) */
  int32_t *drop_acts;       /* per act */
  ooc_timeline tl;
  ooc_sim_detail det;
  int64_t peak[ST_COUNT];
  int feasible[ST_COUNT];
  int n_sims;
  int n_off, n_evict, n_speed, n_mem, n_algo;
  uint64_t l_peak;
  uint64_t walk_budget;     /* the budget the cache's walk used */
  int32_t route_moved;      /* layers Alg. 1's route places elsewhere
                               than the schedule's forward order */
};

static int is_ckpt_op(int op)
{
  return op == OOC_OPK_CONV2D || op == OOC_OPK_CONV3D ||
         op == OOC_OPK_DECONV2D || op == OOC_OPK_LINEAR ||
         op == OOC_OPK_ADD || op == OOC_OPK_CONCAT;
}

static int32_t step_act(const ooc_liveness *lv, int32_t s);

static int sn_alloc(void *state, const ooc_planner_ctx *ctx, ooc_err *err)
{
  struct sn_state *st = state;
  const ooc_liveness *lv = ctx->live;
  size_t na = (size_t)lv->n_acts + 1, ns = (size_t)lv->n_steps + 1;
  int32_t a, s;

  ooc_sim_detail_init(&st->det);
  st->ckpt = calloc(na, 1);
  st->mark = calloc(na, 1);
  st->chain = calloc(na, 1);
  st->resident = calloc(na, 1);
  st->evicted = calloc(na, 1);
  st->prev = calloc(na, sizeof *st->prev);
  st->need = calloc(na, sizeof *st->need);
  st->lock = calloc(na, sizeof *st->lock);
  st->back = calloc(na, sizeof *st->back);
  st->ext = calloc(na, sizeof *st->ext);
  st->cap_in = ooc_plan_recompute_inputs_max(lv) + 1;
  st->acts = calloc(na + (size_t)st->cap_in, sizeof *st->acts);
  st->stack = calloc(na, sizeof *st->stack);
  st->ck_bwd = calloc(ns, sizeof *st->ck_bwd);
  st->comp = calloc(ns, sizeof *st->comp);
  st->arrive = calloc(ns, sizeof *st->arrive);
  st->arrive_next = calloc(na, sizeof *st->arrive_next);
  st->drop_first = calloc(ns + 1, sizeof *st->drop_first);
  st->drop_acts = calloc(na, sizeof *st->drop_acts);
  if (st->arrive == NULL || st->arrive_next == NULL ||
      st->drop_first == NULL || st->drop_acts == NULL ||
      st->ckpt == NULL || st->mark == NULL || st->chain == NULL ||
      st->resident == NULL || st->evicted == NULL || st->prev == NULL ||
      st->need == NULL || st->lock == NULL || st->back == NULL ||
      st->ext == NULL || st->acts == NULL || st->ck_bwd == NULL ||
      st->stack == NULL ||
      st->comp == NULL)
    return ooc_err_set(err, OOC_ENOMEM, "planner 'superneurons': out of "
                       "memory");
  if (ooc_timeline_init(&st->tl, lv->n_steps, err) != OOC_OK)
    return OOC_ENOMEM;
  /* An act is a checkpoint when any layer writing its storage is: an
   * in-place residual add over a batch-norm's output leaves the storage
   * holding the join's result, which is what later layers read. */
  for (a = 1; a < lv->n_acts; a++) {
    int32_t k;
    st->ckpt[a] = 0;
    for (k = 0; k < lv->act_nlayers[a] && !st->ckpt[a]; k++)
      st->ckpt[a] = is_ckpt_op(
          ctx->model->layers[lv->act_layers[lv->act_lfirst[a] + k]].op);
    /* Departure: an output rebuilt in backward would be wrong (its input
     * rewritten in place since, ooc_kit_recomputable): kept, as a
     * checkpoint is. */
    if (!st->ckpt[a] && !ooc_kit_recomputable(lv, a))
      st->ckpt[a] = 1;
  }
  /* Departure: segments are runs of layers between checkpoints, each
   * rebuilt from the checkpoint before it, as in the seed's chains. A
   * layer that reads an output of an earlier segment (matmul(l5, l1)
   * with l1 before the checkpoint l5) would rebuild from a tensor that
   * segment dropped: that output is kept as a checkpoint instead, until
   * no segment reads another's (each pass O(steps + inputs); marking one
   * splits its segment, which may expose another such read). */
  {
    const ooc_model *m = ctx->model;
    int32_t *seg = malloc(((size_t)lv->n_steps + 1) * sizeof *seg);
    int changed = 1;
    if (seg == NULL)
      return ooc_err_set(err, OOC_ENOMEM, "planner 'superneurons': out of "
                         "memory");
    while (changed) {
      int32_t id = 0;
      changed = 0;
      for (s = 0; s < lv->n_steps && lv->steps[s].phase == OOC_PH_FWD; s++) {
        if (st->ckpt[step_act(lv, s)])
          id++;
        seg[s] = id;
      }
      for (s = 0; s < lv->n_steps && lv->steps[s].phase == OOC_PH_FWD; s++) {
        const ooc_layer *ly = &m->layers[lv->steps[s].layer];
        if (st->ckpt[step_act(lv, s)])
          continue;
        for (int32_t j = 0; j < ly->n_in; j++) {
          int32_t b = lv->layer_act[ooc_layer_input(m, ly, j)];
          int32_t p = ooc_kit_producer(lv, b);
          if (b > 0 && !st->ckpt[b] && p >= 0 && p < s && seg[p] != seg[s]) {
            st->ckpt[b] = 1;
            changed = 1;
          }
        }
      }
    }
    free(seg);
  }
  for (s = 0; s < lv->n_steps; s++)
    if (lv->steps[s].phase == OOC_PH_BWD &&
        st->ckpt[lv->layer_act[lv->steps[s].layer]] &&
        lv->layer_act[lv->steps[s].layer] > 0)
      st->ck_bwd[st->n_ck_bwd++] = s;
  st->l_peak = lv->max_step_bytes;
  /* §3.1, Alg. 1: the route; the schedule runs the model's order, so
   * report how far the two differ. */
  {
    const ooc_model *m = ctx->model;
    int32_t *order = calloc((size_t)m->n_layers + 1, sizeof *order);
    int32_t n, pos = 0;
    if (order == NULL)
      return ooc_err_set(err, OOC_ENOMEM, "planner 'superneurons': out of "
                         "memory");
    n = ooc_route_construct(m, order, err);
    if (n < 0) {
      free(order);
      return n;
    }
    st->route_moved = 0;
    for (s = 0; s < lv->n_steps && lv->steps[s].phase == OOC_PH_FWD; s++) {
      while (pos < n && lv->fwd_step[order[pos]] < 0)
        pos++;                  /* the input layer has no step */
      if (pos < n && order[pos] != lv->steps[s].layer)
        st->route_moved++;
      pos++;
    }
    free(order);
  }
  return OOC_OK;
}

static void sn_free(void *state)
{
  struct sn_state *st = state;

  free(st->ckpt);
  free(st->mark);
  free(st->chain);
  free(st->resident);
  free(st->evicted);
  free(st->prev);
  free(st->need);
  free(st->lock);
  free(st->back);
  free(st->ext);
  free(st->acts);
  free(st->stack);
  free(st->ck_bwd);
  free(st->rd);
  free(st->rda);
  free(st->rda_first);
  free(st->comp);
  free(st->arrive);
  free(st->arrive_next);
  free(st->drop_first);
  free(st->drop_acts);
  ooc_timeline_fini(&st->tl);
  ooc_sim_detail_fini(&st->det);
}

/* An activation backward reads again after a gap (not the input, not the
 * loss). */
static int gap_read(const ooc_planner_ctx *ctx, int32_t a)
{
  const ooc_liveness *lv = ctx->live;

  return a > 0 && lv->act_bytes[a] > 0 && lv->act_last_fwd[a] >= 0 &&
         lv->act_first_bwd[a] > lv->act_last_fwd[a] + 1 &&
         ctx->model->layers[lv->act_layer[a]].op != OOC_OPK_SOFTMAX_CE;
}

/* The storage act of forward step s (its layer's). */
static int32_t step_act(const ooc_liveness *lv, int32_t s)
{
  return lv->layer_act[lv->steps[s].layer];
}

/* Mark in st->chain the acts produced in forward steps [lo, hi] that the
 * recompute of act a reads, transitively (a itself included): a work list
 * in st->stack, each act's inputs through ooc_plan_recompute_inputs. */
static void chain_close(struct sn_state *st, const ooc_planner_ctx *ctx,
                        int32_t a, int32_t lo, int32_t hi)
{
  const ooc_liveness *lv = ctx->live;
  int32_t top = 0;

  if (st->chain[a])
    return;
  st->chain[a] = 1;
  st->stack[top++] = a;
  while (top > 0) {
    int32_t x = st->stack[--top];
    int32_t n = ooc_plan_recompute_inputs(lv, x, lv->act_last_fwd[x],
                                          st->acts, st->cap_in);
    for (int32_t k = 0; k < n && k < st->cap_in; k++) {
      int32_t b = st->acts[k], p = ooc_kit_producer(lv, b);
      if (b > 0 && p >= lo && p <= hi && !st->chain[b]) {
        st->chain[b] = 1;
        st->stack[top++] = b;
      }
    }
  }
}

/* Memory-centric recomputation of segment [lo, hi]: before each backward
 * step reading what the segment dropped, that and what it is built from
 * in the segment, each act dropped again after the step. 0 when a chain
 * would rebuild an act after its last backward use (then the caller
 * falls back to speed-centric), else the records added; OOC_ENOMEM. */
static int memory_centric(struct sn_state *st, const ooc_planner_ctx *ctx,
                          ooc_plan *pl, int32_t lo, int32_t hi, ooc_err *err)
{
  const ooc_liveness *lv = ctx->live;
  int32_t b, a, n = 0, s, q, first = -1;

  for (s = lo; s <= hi; s++)
    for (q = 0; q < lv->step_nacts[s]; q++) {
      a = lv->step_acts[lv->step_first[s] + q];
      if (ooc_kit_producer(lv, a) == s && gap_read(ctx, a)) {
        st->prev[a] = lv->act_last_fwd[a];
        if (first < 0 || lv->act_first_bwd[a] < first)
          first = lv->act_first_bwd[a];
      }
    }
  if (first < 0)
    return 0;
  /* Check first: every chain only rebuilds acts still to be read. */
  for (int pass = 0; pass < 2; pass++) {
    for (s = lo; s <= hi; s++)
      for (q = 0; q < lv->step_nacts[s]; q++) {
        a = lv->step_acts[lv->step_first[s] + q];
        if (ooc_kit_producer(lv, a) == s && gap_read(ctx, a))
          st->prev[a] = lv->act_last_fwd[a];
      }
    for (b = first; b < lv->n_steps; b++) {
      int any = 0;
      for (q = 0; q < lv->step_nacts[b]; q++) {
        a = lv->step_acts[lv->step_first[b] + q];
        int32_t p = ooc_kit_producer(lv, a);
        if (p >= lo && p <= hi && gap_read(ctx, a) && b > lv->act_last_fwd[a]) {
          chain_close(st, ctx, a, lo, hi);
          any = 1;
        }
      }
      if (!any)
        continue;
      for (s = lo; s <= hi; s++)
        for (q = 0; q < lv->step_nacts[s]; q++) {
          a = lv->step_acts[lv->step_first[s] + q];
          if (ooc_kit_producer(lv, a) != s || !st->chain[a])
            continue;
          st->chain[a] = 0;
          if (lv->act_first_bwd[a] >= 0 && b > lv->act_last[a])
            return 0;               /* not expressible: fall back */
          if (pass == 1) {
            ooc_recompute r = { .act = a, .free_after = st->prev[a],
                                .before = b };
            if (lv->act_first_bwd[a] < 0 && st->prev[a] != lv->act_last_fwd[a])
              continue;             /* a transient is rebuilt once */
            if (ooc_plan_add_recompute(pl, &r) != OOC_OK)
              return ooc_err_set(err, OOC_ENOMEM, "planner 'superneurons': "
                                 "out of memory");
            n++;
          }
          st->prev[a] = b;
        }
    }
  }
  return n;
}

/* §3.4 on the plan (all keep so far): records for every segment. */
static int recompute(struct sn_state *st, const ooc_planner_ctx *ctx,
                     ooc_plan *pl, ooc_err *err)
{
  const ooc_liveness *lv = ctx->live;
  int32_t n_fwd, lo = 0, s;

  for (n_fwd = 0; n_fwd < lv->n_steps &&
                  lv->steps[n_fwd].phase == OOC_PH_FWD; n_fwd++)
    ;
  st->n_speed = st->n_mem = 0;
  while (lo < n_fwd) {
    int32_t hi, q, a, last_bwd = -1;
    uint64_t memcost = 0;
    int any = 0, n;
    if (st->ckpt[step_act(lv, lo)]) {
      lo++;
      continue;
    }
    for (hi = lo; hi + 1 < n_fwd && !st->ckpt[step_act(lv, hi + 1)]; hi++)
      ;
    for (s = lo; s <= hi; s++)
      for (q = 0; q < lv->step_nacts[s]; q++) {
        a = lv->step_acts[lv->step_first[s] + q];
        if (ooc_kit_producer(lv, a) == s && gap_read(ctx, a)) {
          memcost += ooc_kit_footprint(ctx, lv->act_bytes[a]);
          any = 1;
        }
      }
    if (lv->bwd_step[lv->steps[hi].layer] >= 0)
      last_bwd = lv->bwd_step[lv->steps[hi].layer];
    if (last_bwd >= 0)
      memcost += lv->step_bytes[last_bwd];
    if (any) {
      n = 0;
      if (memcost > st->l_peak) {
        if ((n = memory_centric(st, ctx, pl, lo, hi, err)) < 0)
          return n;
        if (n > 0)
          st->n_mem++;
      }
      if (n == 0) {
        if ((n = ooc_kit_recompute_segment(ctx, pl, lo, hi, -1, st->mark,
                                           err)) < 0)
          return n;
        if (n > 0)
          st->n_speed++;
      }
    }
    lo = hi + 1;
  }
  return OOC_OK;
}

/* The acts recompute record r reads at its `before` that are not rebuilt
 * by it (ooc_plan_recompute_inputs, after their last forward use), into
 * out (room for st->cap_in); returns how many. */
static int32_t rc_reads(const struct sn_state *st, const ooc_planner_ctx *ctx,
                        const ooc_recompute *r, int32_t *out)
{
  const ooc_liveness *lv = ctx->live;
  int32_t n = ooc_plan_recompute_inputs(lv, r->act, r->free_after, out,
                                        st->cap_in), w = 0;

  for (int32_t k = 0; k < n && k < st->cap_in; k++)
    if (r->before > lv->act_last_fwd[out[k]])
      out[w++] = out[k];
  return w;
}

/* Each checkpoint output's first read after its last forward use: a
 * backward step or a recompute. */
static void needs(struct sn_state *st, const ooc_planner_ctx *ctx,
                  const ooc_plan *pl)
{
  const ooc_liveness *lv = ctx->live;

  for (int32_t a = 0; a < lv->n_acts; a++)
    st->need[a] = lv->act_first_bwd[a] > lv->act_last_fwd[a]
                      ? lv->act_first_bwd[a] : -1;
  for (int32_t i = 0; i < pl->n_recomps; i++) {
    const ooc_recompute *r = &pl->recomps[i];
    int32_t n = rc_reads(st, ctx, r, st->acts);
    for (int32_t k = 0; k < n; k++)
      if (st->need[st->acts[k]] < 0 || r->before < st->need[st->acts[k]])
        st->need[st->acts[k]] = r->before;
  }
}

/* The prefetch of a tensor first needed at step n: issued at the
 * checkpoint layer's backward before the one that needs it (the last
 * checkpoint-layer backward step before n), not before `from`. */
static int32_t prefetch_after(const struct sn_state *st, int32_t n,
                              int32_t from)
{
  int32_t lo = 0, hi = st->n_ck_bwd, r;

  while (lo < hi) {       /* the first checkpoint backward >= n */
    int32_t mid = lo + (hi - lo) / 2;
    if (st->ck_bwd[mid] < n)
      lo = mid + 1;
    else
      hi = mid;
  }
  r = lo > 0 ? st->ck_bwd[lo - 1] : from;
  if (r < from)
    r = from;
  if (r >= n)
    r = n - 1;
  return r;
}

/* §3.3.1: every checkpoint output read again after a gap offloaded, the
 * next checkpoint layer's forward waiting for it. */
static int offload_all(struct sn_state *st, const ooc_planner_ctx *ctx,
                       ooc_plan *pl, ooc_err *err)
{
  const ooc_liveness *lv = ctx->live;

  st->n_off = 0;
  for (int32_t a = 1; a < lv->n_acts; a++) {
    int32_t lf = lv->act_last_fwd[a], n = st->need[a], w = -1, s;
    ooc_swap sw;
    if (!st->ckpt[a] || lf < 0 || n <= lf + 1 || pl->action[a] != OOC_KEEP)
      continue;
    for (s = lf + 1; s < n && lv->steps[s].phase == OOC_PH_FWD; s++)
      if (st->ckpt[step_act(lv, s)] &&
          ooc_kit_producer(lv, step_act(lv, s)) == s) {
        w = s;
        break;
      }
    sw = (ooc_swap){ .act = a, .out_after = lf, .out_wait = w,
                     .in_after = prefetch_after(st, n, lf), .in_before = n };
    if (ooc_plan_add_swap(pl, &sw) != OOC_OK)
      return ooc_err_set(err, OOC_ENOMEM, "planner 'superneurons': out of "
                         "memory");
    st->n_off++;
  }
  return OOC_OK;
}

static int by_step(const void *x, const void *y)
{
  const int32_t *p = x, *q = y;
  return p[0] != q[0] ? (p[0] < q[0] ? -1 : 1)
                      : (p[1] < q[1] ? -1 : p[1] > q[1]);
}

/* §3.3.2, Alg. 2: walk the steps with the bytes resident; when a step
 * would exceed the budget, offload the least recently used unlocked
 * checkpoint outputs. */
static int cache(struct sn_state *st, const ooc_planner_ctx *ctx,
                 ooc_plan *pl, int64_t budget, ooc_err *err)
{
  const ooc_liveness *lv = ctx->live;
  int64_t res = 0;
  int32_t a, s, k, i, rd = 0;

  /* Everything but the checkpoint outputs, at the plan's lives: a
   * recomputed act from production to its last forward use and from its
   * first rebuild to its last use. */
  ooc_timeline_memory(&st->tl, lv, ctx,
                      OOC_TL_PERSISTENT | OOC_TL_WORKSPACE | OOC_TL_GRADS);
  for (a = 0; a < lv->n_acts; a++) {
    st->ext[a] = -1;
    st->prev[a] = lv->act_last[a];  /* its free step, as lowering extends */
  }
  for (i = 0; i < pl->n_recomps; i++) {
    int32_t m;
    a = pl->recomps[i].act;
    if (st->ext[a] < 0 || pl->recomps[i].before < st->ext[a])
      st->ext[a] = pl->recomps[i].before;
    if (pl->recomps[i].before > st->prev[a])
      st->prev[a] = pl->recomps[i].before;
    m = rc_reads(st, ctx, &pl->recomps[i], st->acts);
    for (k = 0; k < m; k++)
      if (pl->recomps[i].before > st->prev[st->acts[k]])
        st->prev[st->acts[k]] = pl->recomps[i].before;
  }
  for (a = 1; a < lv->n_acts; a++) {
    int32_t p = ooc_kit_producer(lv, a);
    int64_t fb = (int64_t)ooc_kit_footprint(ctx, lv->act_bytes[a]);
    st->resident[a] = st->evicted[a] = 0;
    st->back[a] = -1;
    st->lock[a] = p;
    if (st->ckpt[a] || p < 0)
      continue;
    if (pl->action[a] == OOC_RECOMPUTE && st->ext[a] >= 0) {
      ooc_timeline_add(&st->tl, p, lv->act_last_fwd[a], fb);
      ooc_timeline_add(&st->tl, st->ext[a], st->prev[a], fb);
    } else {
      ooc_timeline_add(&st->tl, p, st->prev[a], fb);
    }
  }
  /* Reads by recomputes lock a tensor at their step: (step, act) pairs
   * in step order. */
  {
    int32_t cap = 0, n = 0;
    for (i = 0; i < pl->n_recomps; i++)
      cap += rc_reads(st, ctx, &pl->recomps[i], st->acts);
    free(st->rd);
    st->rd = malloc(((size_t)cap + 1) * 2 * sizeof *st->rd);
    if (st->rd == NULL)
      return ooc_err_set(err, OOC_ENOMEM, "planner 'superneurons': out of "
                         "memory");
    for (i = 0; i < pl->n_recomps; i++) {
      int32_t m = rc_reads(st, ctx, &pl->recomps[i], st->acts);
      for (k = 0; k < m; k++) {
        st->rd[2 * n] = pl->recomps[i].before;
        st->rd[2 * n + 1] = st->acts[k];
        n++;
      }
    }
    qsort(st->rd, (size_t)n, 2 * sizeof *st->rd, by_step);
    st->n_rd = n;
    /* By act (counting sort, stable: each act's steps stay ascending),
     * for the victims' next reads below. */
    free(st->rda);
    free(st->rda_first);
    st->rda = malloc(((size_t)n + 1) * sizeof *st->rda);
    st->rda_first = calloc((size_t)lv->n_acts + 1, sizeof *st->rda_first);
    if (st->rda == NULL || st->rda_first == NULL)
      return ooc_err_set(err, OOC_ENOMEM, "planner 'superneurons': out of "
                         "memory");
    for (i = 0; i < n; i++)
      st->rda_first[st->rd[2 * i + 1] + 1]++;
    for (a = 0; a < lv->n_acts; a++)
      st->rda_first[a + 1] += st->rda_first[a];
    for (i = 0; i < n; i++)
      st->rda[st->rda_first[st->rd[2 * i + 1]]++] = st->rd[2 * i];
    for (a = lv->n_acts; a > 0; a--)      /* back to the starts */
      st->rda_first[a] = st->rda_first[a - 1];
    st->rda_first[0] = 0;
  }
  /* The walk's arrivals and drops by step, so that each step looks only
   * at its own (a scan of every act per step made gpt2 at 1,000 layers
   * take 0.8 s to plan): drops by prev[], fixed during the walk, sorted
   * by counting; arrivals pushed as evictions set back[] (each act is
   * evicted once at most). */
  for (s = 0; s <= lv->n_steps; s++)
    st->drop_first[s] = 0;
  for (a = 1; a < lv->n_acts; a++)
    if (st->ckpt[a] && st->prev[a] >= 0 && st->prev[a] < lv->n_steps)
      st->drop_first[st->prev[a] + 1]++;
  for (s = 0; s < lv->n_steps; s++) {
    st->drop_first[s + 1] += st->drop_first[s];
    st->arrive[s] = -1;
  }
  for (a = 1; a < lv->n_acts; a++)
    if (st->ckpt[a] && st->prev[a] >= 0 && st->prev[a] < lv->n_steps)
      st->drop_acts[st->drop_first[st->prev[a]]++] = a;
  for (s = lv->n_steps; s > 0; s--)     /* back to the buckets' starts */
    st->drop_first[s] = st->drop_first[s - 1];
  st->drop_first[0] = 0;
  st->n_evict = 0;
  for (s = 0; s < lv->n_steps; s++) {
    /* Arrivals, productions and locks. */
    for (a = st->arrive[s]; a >= 0; a = st->arrive_next[a]) {
      st->resident[a] = 1;
      res += (int64_t)ooc_kit_footprint(ctx, lv->act_bytes[a]);
    }
    for (k = 0; k < lv->step_nacts[s]; k++) {
      a = lv->step_acts[lv->step_first[s] + k];
      if (!st->ckpt[a])
        continue;
      if (ooc_kit_producer(lv, a) == s && !st->resident[a]) {
        st->resident[a] = 1;
        res += (int64_t)ooc_kit_footprint(ctx, lv->act_bytes[a]);
      }
      st->lock[a] = s;
    }
    for (; rd < st->n_rd && st->rd[2 * rd] <= s; rd++)
      if (st->rd[2 * rd] == s && st->ckpt[st->rd[2 * rd + 1]])
        st->lock[st->rd[2 * rd + 1]] = s;
    while (ooc_timeline_at(&st->tl, s) + res > budget) {
      int32_t v = -1, n = -1, in_after = -1;
      /* The least recently used unlocked resident output whose next read
       * is far enough that its prefetch comes after this step. */
      for (a = 1; a < lv->n_acts; a++) {
        int32_t na = -1, ia;
        if (!st->ckpt[a] || !st->resident[a] || st->evicted[a] ||
            st->lock[a] >= s || pl->action[a] != OOC_KEEP ||
            (v >= 0 && st->lock[a] >= st->lock[v]))
          continue;
        for (k = 0; k < lv->act_nuses[a]; k++)
          if (lv->use_steps[lv->act_first[a] + k] > s) {
            na = lv->use_steps[lv->act_first[a] + k];
            break;
          }
        if (st->need[a] > s && (na < 0 || st->need[a] < na))
          na = st->need[a];
        /* A recompute that reads it is a read too: the first after s
         * (matmul(l2, l2) rebuilt before a backward step between two of
         * l2's own backward reads). */
        for (k = st->rda_first[a]; k < st->rda_first[a + 1]; k++)
          if (st->rda[k] > s) {
            if (na < 0 || st->rda[k] < na)
              na = st->rda[k];
            break;
          }
        if (na < 0)
          continue;            /* dead: liveness frees it */
        ia = prefetch_after(st, na, st->lock[a]);
        if (ia < s)
          continue;            /* it would be back at once */
        v = a;
        n = na;
        in_after = ia;
      }
      if (v < 0)
        break;               /* nothing left to evict: the plan says so */
      st->resident[v] = 0;
      st->evicted[v] = 1;
      res -= (int64_t)ooc_kit_footprint(ctx, lv->act_bytes[v]);
      {
        /* The copy starts after the victim's last use so far, as the
         * UTP offloads asynchronously; the step that needs the room
         * waits for it. */
        ooc_swap sw = { .act = v, .out_after = st->lock[v], .out_wait = s,
                        .in_after = in_after, .in_before = n };
        if (ooc_plan_add_swap(pl, &sw) != OOC_OK)
          return ooc_err_set(err, OOC_ENOMEM, "planner 'superneurons': "
                             "out of memory");
        st->back[v] = in_after + 1;       /* > s: a later step */
        if (st->back[v] < lv->n_steps) {
          st->arrive_next[v] = st->arrive[st->back[v]];
          st->arrive[st->back[v]] = v;
        }
        st->n_evict++;
      }
    }
    for (k = st->drop_first[s]; k < st->drop_first[s + 1]; k++) {
      a = st->drop_acts[k];
      if (st->resident[a]) {
        st->resident[a] = 0;
        res -= (int64_t)ooc_kit_footprint(ctx, lv->act_bytes[a]);
      }
    }
  }
  return OOC_OK;
}

/* Simulate pl, recording stage k's peak; with detail into st->det. */
static int run(struct sn_state *st, const ooc_planner_ctx *ctx,
               const ooc_plan *pl, int k, int detail, ooc_err *err)
{
  ooc_sim_result r;
  int rc;

  st->n_sims++;
  rc = detail ? ooc_planner_evaluate_detail(ctx, pl, &r, &st->det, err)
              : ooc_planner_evaluate(ctx, pl, &r, err);
  if (rc < 0)
    return rc;
  if (k >= 0) {
    st->peak[k] = (int64_t)r.peak_allocated;
    st->feasible[k] = r.feasible;
  }
  return r.feasible;
}

static void metric(ooc_plan *pl, const char *name, double v)
{
  ooc_plan_add_metric(pl, name, v);
}

static int sn_plan(void *state, const ooc_planner_ctx *ctx, ooc_plan *pl,
                   ooc_err *err)
{
  static const char *const stages[] = { "liveness", "offload", "recompute",
                                        "all" };
  static const char *const keys[] = { "peak_liveness_bytes",
                                      "peak_offload_bytes",
                                      "peak_recompute_bytes",
                                      "peak_all_bytes" };
  struct sn_state *st = state;
  const char *sv = NULL;
  char peaks[112];
  int stage = ST_ALL, k, rc;
  size_t len = 0;

  if (ooc_planner_opt_str(ctx, "stage", &sv)) {
    for (stage = 0; stage < ST_COUNT; stage++)
      if (strcmp(sv, stages[stage]) == 0)
        break;
    if (stage == ST_COUNT)
      return ooc_err_set(err, OOC_EINVAL, "planner 'superneurons': option "
                         "stage=%s: expected liveness, offload, recompute "
                         "or all", sv);
  }
  st->n_sims = st->n_off = st->n_evict = st->n_speed = st->n_mem = 0;
  st->n_algo = 0;
  for (k = 0; k < ST_COUNT; k++)
    st->peak[k] = -1;
  /* liveness */
  ooc_plan_reset(pl);
  pl->sched_budget = ctx->budget;
  if ((rc = run(st, ctx, pl, ST_LIVENESS, 0, err)) < 0)
    return rc;
  /* offload: UTP alone */
  if (stage >= ST_OFFLOAD) {
    needs(st, ctx, pl);
    if ((rc = offload_all(st, ctx, pl, err)) < 0)
      return rc;
    if ((rc = run(st, ctx, pl, ST_OFFLOAD, 0, err)) < 0)
      return rc;
  }
  /* recompute: + cost-aware recomputation (offloads re-derived: a
   * recompute reads the checkpoint before it) */
  if (stage >= ST_RECOMPUTE) {
    ooc_plan_reset(pl);
    pl->sched_budget = ctx->budget;
    if ((rc = recompute(st, ctx, pl, err)) < 0)
      return rc;
    needs(st, ctx, pl);
    if (stage == ST_RECOMPUTE) {
      if ((rc = offload_all(st, ctx, pl, err)) < 0)
        return rc;
      if ((rc = run(st, ctx, pl, ST_RECOMPUTE, 0, err)) < 0)
        return rc;
    } else {
      ooc_plan probe;
      if ((rc = ooc_plan_init(&probe, ctx->live, err)) != OOC_OK)
        return rc;
      if ((rc = ooc_plan_copy(&probe, pl)) != OOC_OK ||
          (rc = offload_all(st, ctx, &probe, err)) < 0 ||
          (rc = run(st, ctx, &probe, ST_RECOMPUTE, 0, err)) < 0) {
        ooc_plan_fini(&probe);
        return rc < 0 ? rc : ooc_err_set(err, OOC_ENOMEM, "planner "
                                         "'superneurons': out of memory");
      }
      ooc_plan_fini(&probe);
    }
  }
  /* all: the tensor cache in place of offloading everything, then the
   * convolution algorithms. */
  if (stage == ST_ALL) {
    int fits = 0;
    ooc_plan base;
    /* The walk counts bytes; the allocator places blocks. As the
     * schedule-window seed does (§4), the walk's budget is lowered in
     * 16ths until the plan fits. */
    if ((rc = ooc_plan_init(&base, ctx->live, err)) != OOC_OK)
      return rc;
    if (ooc_plan_copy(&base, pl) != OOC_OK) {
      ooc_plan_fini(&base);
      return ooc_err_set(err, OOC_ENOMEM, "planner 'superneurons': out of "
                         "memory");
    }
    for (k = 16; k >= 8 && !fits; k--) {
      st->walk_budget = ctx->budget / 16 * (uint64_t)k;
      if (k < 16 && ooc_plan_copy(pl, &base) != OOC_OK)
        rc = ooc_err_set(err, OOC_ENOMEM, "planner 'superneurons': out of "
                         "memory");
      else
        rc = cache(st, ctx, pl, (int64_t)st->walk_budget, err);
      if (rc < 0 || (fits = run(st, ctx, pl, -1, 1, err)) < 0) {
        ooc_plan_fini(&base);
        return rc < 0 ? rc : fits;
      }
    }
    ooc_plan_fini(&base);
    if (fits) {
      ooc_plan save;
      if ((rc = ooc_plan_init(&save, ctx->live, err)) != OOC_OK)
        return rc;
      if (ooc_plan_copy(&save, pl) != OOC_OK) {
        ooc_plan_fini(&save);
        return ooc_err_set(err, OOC_ENOMEM, "planner 'superneurons': out "
                           "of memory");
      }
      /* §3.5 */
      st->n_algo = ooc_kit_fit_algos(ctx, &st->det, pl, st->comp);
      if (st->n_algo > 0 && (rc = run(st, ctx, pl, -1, 0, err)) <= 0) {
        if (rc < 0 || ooc_plan_copy(pl, &save) != OOC_OK) {
          ooc_plan_fini(&save);
          return rc < 0 ? rc : ooc_err_set(err, OOC_ENOMEM, "planner "
                                           "'superneurons': out of memory");
        }
        st->n_algo = 0;     /* the faster algorithms did not fit */
      }
      ooc_plan_fini(&save);
    }
    if ((rc = run(st, ctx, pl, ST_ALL, 0, err)) < 0)
      return rc;
  }
  for (k = 0; k <= stage && len < sizeof peaks; k++)
    len += (size_t)snprintf(peaks + len, sizeof peaks - len,
                            "%s%s %.3f%s", k ? ", " : "", stages[k],
                            (double)st->peak[k] / 1073741824.0,
                            st->feasible[k] ? "" : " (OOM)");
  for (k = 0; k <= stage; k++)
    metric(pl, keys[k], (double)st->peak[k]);
  metric(pl, "l_peak_bytes", (double)st->l_peak);
  metric(pl, "route_moved_layers", (double)st->route_moved);
  {
    char buf[512];
    size_t n;
    snprintf(buf, sizeof buf,
             "superneurons (%s): %d offloaded%s, %d segments recomputed (%d "
             "speed-, %d memory-centric), %d conv algorithms changed; "
             "l_peak %.3f GiB; peaks GiB: %s; walk budget %.3f GiB; "
             "%d simulations",
             stages[stage], stage == ST_ALL ? st->n_evict : st->n_off,
             stage == ST_ALL ? " (LRU cache)" : "",
             st->n_speed + st->n_mem, st->n_speed, st->n_mem, st->n_algo,
             (double)st->l_peak / 1073741824.0, peaks,
             (double)(stage == ST_ALL ? st->walk_budget : ctx->budget) /
                 1073741824.0, st->n_sims);
    n = strlen(buf);
    if (n >= sizeof pl->note)
      n = sizeof pl->note - 1;
    memcpy(pl->note, buf, n);
    pl->note[n] = '\0';
  }
  return OOC_OK;
}

static const char *const sn_options[] = { "stage", NULL };

const ooc_planner_type ooc_planner_superneurons = {
  .name = "superneurons",
  .summary = "SuperNeurons: liveness, conv/fc/add/concat outputs offloaded "
             "through an LRU tensor cache, cost-aware recomputation, "
             "fastest conv algorithm that fits (hybrid)",
  .cite = "SuperNeurons paper (SuperNeurons: Dynamic GPU Memory Management "
          "for Training Deep Neural Networks) §3.1-3.5",
  .state_size = sizeof(struct sn_state),
  /* 1.8 s to plan gpt2 at 1,000 layers, its plan simulated in 14 ms. */
  .flags = OOC_PLANNER_COSTLY,
  .options = sn_options,
  .alloc = sn_alloc,
  .free = sn_free,
  .plan = sn_plan,
};
