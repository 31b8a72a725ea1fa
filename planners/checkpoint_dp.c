/* planners/checkpoint_dp.c — checkpointing under the memory budget by
 * dynamic programming over the chain: which segments to drop and
 * recompute, with heterogeneous per-node recompute times and memory.
 *
 * Follows the dynamic program of Griewank's optimal checkpointing as
 * Beaumont, Eyraud-Dubois, Herrmann, Joly and Shilova 2019 ("Optimal
 * checkpointing for heterogeneous chains: how to train deep neural
 * networks with limited memory", rotor) set it up for heterogeneous
 * chains: a chain of stages with their own forward times and activation
 * sizes, a memory budget, and a table over (stage, memory) of the least
 * recomputation that fits. Here:
 *
 *   - Chain nodes are the forward between consecutive chain cuts
 *     (ooc_kit_chain_cuts: a residual or concat block is one node, a
 *     plain layer is one node); the last node is kept.
 *   - A schedule is a partition of the nodes into kept nodes and
 *     recomputed segments [i, k]: a recomputed segment keeps its last
 *     cut's checkpoint, drops every other activation backward reads after
 *     its last forward use and recomputes them once, in forward order,
 *     right before the first backward step that reads any of them (as
 *     the `checkpoint` planner does for its sqrt(n) segments). This
 *     single-recompute table has the exact memory model below, so its
 *     optimum is the optimum of that family.
 *   - Memory of a schedule at step s = the in-core memory at s (the
 *     liveness timeline at the allocator's footprints) less the savings
 *     of the recomputed segments before s's node: a recomputed segment
 *     saves, from its forward on until its recompute, the bytes of its
 *     dropped activations; inside its forward it saves what it has
 *     dropped so far. Activations its recompute reads that backward does
 *     not are recomputed as transients (ooc_kit_recompute_segment), which
 *     costs their time and no memory but at the recompute's step.
 *     Backward steps are given to the node whose activations they read
 *     first (the update and what follows, to node 0); a segment's
 *     backward steps are counted with its activations back.
 *   - Table: dp[i][u] = the least recompute time of a schedule of nodes
 *     [0, i) that fits and saves at least u quanta (a quantum is 1/512 of
 *     the bytes all nodes could drop; savings are rounded down, so the
 *     table never takes a schedule for fitting that does not fit the
 *     model). O(nodes^2 x 512) time, O(nodes x 512) memory. Above 256
 *     nodes, consecutive nodes are merged into 256 (the note says so).
 *   - The model counts bytes; the simulator places blocks. The plan is
 *     simulated, and while it does not fit the table is solved again for
 *     a budget 1/64 smaller, down to half (as the schedule-window seed,
 *     §4, lowers its scheduling budget).
 *
 *   - Rotor's own table (Beaumont et al. 2019, §4, the "persistent"
 *     schedules, which may recompute a stage several times): C(s, t, m)
 *     over stages s..t of the chain (the nodes, merged into at most 128)
 *     and memory m in 256 columns, with the choices Fall (stage s forward
 *     storing all its backward reads) and Fck s' (stages s..s'-1 forward
 *     storing only the checkpoint before s', then [s', t], then [s, s'-1]
 *     again from the checkpoint before s, in a new pass). A stage's
 *     figures come from the liveness timeline: its forward's and its
 *     backward's memory but the earlier stages' activations, the bytes of
 *     its activations backward reads, its checkpoint and the gradient
 *     live while a later pass recomputes it. A pass runs right before the
 *     first backward step of its last stage; it becomes recompute records
 *     (an activation rebuilt by several passes carries several records:
 *     dropped again after the step of a pass that does not store it). The
 *     model is coarser than the single-recompute one (it counts bytes per
 *     stage, transients not at all, and a stored checkpoint until its
 *     stages are done, not until its last use), so both tables are solved
 *     and simulated and the faster plan that fits is taken (`--opt
 *     family=single|rotor|both`, default both).
 *
 * Cost: O(steps + acts) to set up, O(nodes^2 x 512) per single-recompute
 * solve and O(stages^3 x 256) per rotor solve, at most 33 solves and
 * simulations of each. Ownership: scratch in the state (dp_alloc /
 * dp_free); writes only the caller's plan.
 */
#include "config.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "plan/planner.h"
#include "plan/toolkit.h"

enum { Q = 512, MAX_NODES = 256, QR = 256, MAX_GRP = 128 };
#define ROTOR_CELLS_PER_EVENT 400.0
enum { SKIP = INT32_MIN };

struct dp_state {
  double rotor_cells;         /* cells rotor_solve filled in this plan */
  int32_t n_fwd, n_cuts, n_nodes;
  int32_t *cuts, *cut_act;    /* chain cuts and their checkpoints */
  int32_t *node_hi;           /* per node: its last forward step */
  int32_t *node_keep;         /* per node: the checkpoint after it (-1 for
                                 the last) */
  int32_t *step_node;         /* per step: its node */
  uint8_t *droppable;         /* per act: backward reads it (not the loss,
                                 not the input) */
  uint8_t *pinned;            /* per act: not recomputable
                                 (ooc_kit_recomputable): always stored */
  int64_t *fb;                /* per act: footprint */
  int64_t *inc;               /* per step: in-core memory */
  int64_t *rc_step;           /* per step: recompute time when it produces
                                 an act a recompute may rebuild (0
                                 otherwise) */
  int32_t *n_drop_step;       /* per step: such acts it produces */
  int64_t *need_k;            /* per node: its steps' largest in-core
                                 memory */
  int32_t *bs, *be;           /* per node: its backward steps */
  int32_t *fb_all, *fb_nokeep;  /* per node: first backward read of its
                                   droppable acts / but its checkpoint */
  int64_t *need_r;            /* [i * n + k]: largest memory of the
                                 segment [i, k]'s steps before savings */
  int64_t *save;              /* [i * n + k]: bytes segment [i, k] saves */
  int64_t *cost;              /* [i * n + k]: its recompute time */
  int64_t *dp;                /* [(i) * (Q + 1) + u] */
  int32_t *from;              /* [.]: previous node index (-1: none) */
  int16_t *from_u;            /* [.]: previous quantum */
  uint8_t *recomp;            /* [.]: the step into it was a segment */
  uint8_t *mark;              /* per act: scratch of the toolkit */
  ooc_timeline tl;
  /* Rotor's table (multi-level): nodes merged into at most MAX_GRP
   * groups g, each a stage of the chain. */
  int32_t n_grp;
  int32_t *g_lo, *g_hi;       /* its first and last node */
  int64_t *g_a;               /* bytes of its acts backward reads (abar) */
  int64_t *g_mf, *g_mb;       /* its forward / backward steps' memory but
                                 the acts of earlier groups */
  int64_t *g_mn;              /* g_mf when it stores none of its acts */
  int64_t *g_x;               /* bytes of the checkpoint before it */
  int32_t *g_xact;            /* that checkpoint (0 for group 0) */
  uint8_t *g_xok;             /* it may be stored by a recompute pass
                                 (backward reads it) */
  int64_t *g_d;               /* the gradient live while a pass ending at
                                 it recomputes (0 for the last) */
  int64_t *g_f;               /* its forward's recompute time */
  int32_t *g_pb;              /* the backward step a pass ending at it
                                 runs before (SKIP: none) */
  int64_t r_lo, r_q;          /* memory of table column u: r_lo + u r_q */
  int64_t *rc;                /* [tri(s, t) * (QR + 1) + u] */
  int16_t *rfirst;            /* per (s, t): its first column that fits
                                 (QR + 1: none); every column above fits
                                 too (more memory never hurts) */
  int32_t *prevfree;          /* per act: where its next record drops it */
  uint8_t *res;               /* per act: resident (stored) */
  int n_rrec;                 /* recompute records emitted */
};

static int is_droppable(const ooc_planner_ctx *ctx, int32_t a)
{
  const ooc_liveness *lv = ctx->live;

  return a > 0 && lv->act_bytes[a] > 0 && lv->act_first_bwd[a] >= 0 &&
         lv->act_last_fwd[a] >= 0 &&
         ctx->model->layers[lv->act_layer[a]].op != OOC_OPK_SOFTMAX_CE;
}

static int dp_alloc(void *state, const ooc_planner_ctx *ctx, ooc_err *err)
{
  struct dp_state *st = state;
  const ooc_liveness *lv = ctx->live;
  int32_t n = lv->n_steps, a, s, j, nn;
  size_t cells;

  st->cuts = calloc((size_t)n + 2, sizeof *st->cuts);
  st->cut_act = calloc((size_t)n + 2, sizeof *st->cut_act);
  st->node_hi = calloc((size_t)n + 2, sizeof *st->node_hi);
  st->node_keep = calloc((size_t)n + 2, sizeof *st->node_keep);
  st->step_node = calloc((size_t)n + 2, sizeof *st->step_node);
  st->droppable = calloc((size_t)lv->n_acts + 1, 1);
  st->pinned = calloc((size_t)lv->n_acts + 1, 1);
  st->fb = calloc((size_t)lv->n_acts + 1, sizeof *st->fb);
  st->inc = calloc((size_t)n + 2, sizeof *st->inc);
  st->rc_step = calloc((size_t)n + 2, sizeof *st->rc_step);
  st->n_drop_step = calloc((size_t)n + 2, sizeof *st->n_drop_step);
  st->mark = calloc((size_t)lv->n_acts + 1, 1);
  if (st->cuts == NULL || st->cut_act == NULL || st->node_hi == NULL ||
      st->node_keep == NULL || st->step_node == NULL ||
      st->droppable == NULL || st->pinned == NULL || st->fb == NULL ||
      st->inc == NULL || st->rc_step == NULL || st->n_drop_step == NULL ||
      st->mark == NULL)
    return ooc_err_set(err, OOC_ENOMEM, "planner 'checkpoint-dp': out of "
                       "memory");
  st->n_cuts = ooc_kit_chain_cuts(lv, st->cuts, st->cut_act, &st->n_fwd,
                                  err);
  if (st->n_cuts < 0)
    return st->n_cuts;
  /* A cut whose checkpoint no layer of the node before it writes (l0
   * read past a dead-end branch l1 -> l2 as well as before it: the cuts
   * after l0 and after l2 both hold it) is no boundary: the table takes
   * a checkpoint as the node before it makes it, and the passes of its
   * readers would rebuild it too late. Its node merges with the next.
   * (An in-place layer writes its storage: conv -> bn -> relu in place
   * keeps the cut after the relu.) */
  for (j = 0, a = 0; a < st->n_cuts; a++) {
    int32_t x = st->cut_act[a], prev = j > 0 ? st->cuts[j - 1] : -1, k;
    int writes = 0;
    for (k = 0; k < lv->act_nlayers[x] && !writes; k++) {
      int32_t w = lv->fwd_step[lv->act_layers[lv->act_lfirst[x] + k]];
      writes = w > prev && w <= st->cuts[a];
    }
    if (writes) {
      st->cuts[j] = st->cuts[a];
      st->cut_act[j++] = x;
    }
  }
  st->n_cuts = j;
  /* Nodes: the forward between cuts, merged evenly above MAX_NODES. */
  nn = st->n_cuts + 1;
  st->n_nodes = nn <= MAX_NODES ? nn : MAX_NODES;
  for (j = 0; j < st->n_nodes - 1; j++) {
    int32_t c = nn <= MAX_NODES ? j
                                : (int32_t)((int64_t)(j + 1) * nn /
                                            MAX_NODES) - 1;
    st->node_hi[j] = st->cuts[c];
    st->node_keep[j] = st->cut_act[c];
  }
  st->node_hi[st->n_nodes - 1] = st->n_fwd - 1;
  st->node_keep[st->n_nodes - 1] = -1;
  for (s = 0, j = 0; s < st->n_fwd; s++) {
    while (s > st->node_hi[j])
      j++;
    st->step_node[s] = j;
  }
  /* Backward steps: to the node whose activations they read first; the
   * steps before the first such read (the loss's backward) to the last
   * node, the update and what follows node 0's reads to node 0. */
  {
    int32_t *first = st->n_drop_step;   /* scratch: per node */
    for (j = 0; j < st->n_nodes; j++)
      first[j] = n;
    for (a = 1; a < lv->n_acts; a++) {
      int32_t p = ooc_kit_producer(lv, a);
      if (p < 0 || p >= st->n_fwd || lv->act_first_bwd[a] < 0)
        continue;
      j = st->step_node[p];
      if (lv->act_first_bwd[a] < first[j])
        first[j] = lv->act_first_bwd[a];
    }
    /* Later nodes are read first in backward; make it monotone (a node
     * backward does not read gets an empty range). */
    if (first[st->n_nodes - 1] == n)
      first[st->n_nodes - 1] = st->n_fwd;
    for (j = st->n_nodes - 2; j >= 0; j--)
      if (first[j] == n || first[j] < first[j + 1])
        first[j] = first[j + 1];
    for (s = st->n_fwd; s < n; s++) {
      j = st->n_nodes - 1;
      while (j > 0 && first[j - 1] <= s)
        j--;
      st->step_node[s] = j;
    }
    memset(first, 0, (size_t)(n + 2) * sizeof *first);
  }
  if (ooc_timeline_init(&st->tl, n, err) != OOC_OK)
    return OOC_ENOMEM;
  ooc_timeline_memory(&st->tl, lv, ctx, OOC_TL_ALL);
  ooc_timeline_values(&st->tl, st->inc);
  {
    ooc_plankit kit;
    if (ooc_plankit_init(&kit, lv, ctx->costs, err) != OOC_OK)
      return OOC_ENOMEM;
    for (a = 1; a < lv->n_acts; a++) {
      int32_t p = ooc_kit_producer(lv, a);
      st->fb[a] = (int64_t)ooc_kit_footprint(ctx, lv->act_bytes[a]);
      if (p < 0 || p >= st->n_fwd)
        continue;
      if (!ooc_kit_recomputable(lv, a)) {
        st->pinned[a] = 1;        /* neither dropped nor a transient */
        continue;
      }
      if (is_droppable(ctx, a)) {
        st->droppable[a] = 1;
        st->n_drop_step[p]++;
        st->rc_step[p] = ooc_kit_recompute_ns(&kit, p, p);
      } else if (lv->act_last_fwd[a] > p && lv->act_first_bwd[a] < 0) {
        /* Recomputed as a transient when a recompute reads it. */
        st->n_drop_step[p]++;
        st->rc_step[p] = ooc_kit_recompute_ns(&kit, p, p);
      }
    }
    ooc_plankit_fini(&kit);
  }
  cells = (size_t)st->n_nodes * (size_t)st->n_nodes;
  st->need_k = calloc((size_t)st->n_nodes, sizeof *st->need_k);
  st->bs = calloc((size_t)st->n_nodes, sizeof *st->bs);
  st->be = calloc((size_t)st->n_nodes, sizeof *st->be);
  st->fb_all = calloc((size_t)st->n_nodes, sizeof *st->fb_all);
  st->fb_nokeep = calloc((size_t)st->n_nodes, sizeof *st->fb_nokeep);
  st->need_r = calloc(cells, sizeof *st->need_r);
  st->save = calloc(cells, sizeof *st->save);
  st->cost = calloc(cells, sizeof *st->cost);
  cells = (size_t)(st->n_nodes + 1) * (Q + 1);
  st->dp = calloc(cells, sizeof *st->dp);
  st->from = calloc(cells, sizeof *st->from);
  st->from_u = calloc(cells, sizeof *st->from_u);
  st->recomp = calloc(cells, 1);
  if (st->need_k == NULL || st->bs == NULL || st->be == NULL ||
      st->fb_all == NULL || st->fb_nokeep == NULL ||
      st->need_r == NULL || st->save == NULL ||
      st->cost == NULL || st->dp == NULL || st->from == NULL ||
      st->from_u == NULL || st->recomp == NULL)
    return ooc_err_set(err, OOC_ENOMEM, "planner 'checkpoint-dp': out of "
                       "memory");
  /* Rotor's groups and table. */
  st->n_grp = st->n_nodes <= MAX_GRP ? st->n_nodes : MAX_GRP;
  nn = st->n_grp;
  st->g_lo = calloc((size_t)nn, sizeof *st->g_lo);
  st->g_hi = calloc((size_t)nn, sizeof *st->g_hi);
  st->g_a = calloc((size_t)nn, sizeof *st->g_a);
  st->g_mf = calloc((size_t)nn, sizeof *st->g_mf);
  st->g_mb = calloc((size_t)nn, sizeof *st->g_mb);
  st->g_mn = calloc((size_t)nn, sizeof *st->g_mn);
  st->g_x = calloc((size_t)nn, sizeof *st->g_x);
  st->g_xact = calloc((size_t)nn, sizeof *st->g_xact);
  st->g_xok = calloc((size_t)nn, 1);
  st->g_d = calloc((size_t)nn, sizeof *st->g_d);
  st->g_f = calloc((size_t)nn, sizeof *st->g_f);
  st->g_pb = calloc((size_t)nn, sizeof *st->g_pb);
  cells = (size_t)nn * (size_t)(nn + 1) / 2 * (QR + 1);
  st->rc = malloc(cells * sizeof *st->rc);
  st->rfirst = malloc((size_t)nn * (size_t)(nn + 1) / 2 *
                      sizeof *st->rfirst);
  st->prevfree = calloc((size_t)lv->n_acts + 1, sizeof *st->prevfree);
  st->res = calloc((size_t)lv->n_acts + 1, 1);
  if (st->g_lo == NULL || st->g_hi == NULL || st->g_a == NULL ||
      st->g_mf == NULL || st->g_mb == NULL || st->g_mn == NULL ||
      st->g_x == NULL ||
      st->g_xact == NULL || st->g_xok == NULL || st->g_d == NULL ||
      st->g_f == NULL || st->g_pb == NULL || st->rc == NULL ||
      st->prevfree == NULL || st->res == NULL ||
      st->rfirst == NULL)
    return ooc_err_set(err, OOC_ENOMEM, "planner 'checkpoint-dp': out of "
                       "memory");
  return OOC_OK;
}

static void dp_free(void *state)
{
  struct dp_state *st = state;

  free(st->cuts);
  free(st->cut_act);
  free(st->node_hi);
  free(st->node_keep);
  free(st->step_node);
  free(st->droppable);
  free(st->pinned);
  free(st->fb);
  free(st->inc);
  free(st->rc_step);
  free(st->n_drop_step);
  free(st->need_k);
  free(st->bs);
  free(st->be);
  free(st->fb_all);
  free(st->fb_nokeep);
  free(st->need_r);
  free(st->save);
  free(st->cost);
  free(st->dp);
  free(st->from);
  free(st->from_u);
  free(st->recomp);
  free(st->mark);
  free(st->g_lo);
  free(st->g_hi);
  free(st->g_a);
  free(st->g_mf);
  free(st->g_mb);
  free(st->g_mn);
  free(st->g_x);
  free(st->g_xact);
  free(st->g_xok);
  free(st->g_d);
  free(st->g_f);
  free(st->g_pb);
  free(st->rc);
  free(st->rfirst);
  free(st->prevfree);
  free(st->res);
  ooc_timeline_fini(&st->tl);
}

static int32_t node_lo(const struct dp_state *st, int32_t j)
{
  return j == 0 ? 0 : st->node_hi[j - 1] + 1;
}

/* need_k, need_r, save and cost of every node and segment. Backward
 * steps of a segment's nodes are counted at the savings before it (its
 * activations are back); its forward steps save what the segment dropped
 * so far. */
static void tables(struct dp_state *st, const ooc_planner_ctx *ctx)
{
  const ooc_liveness *lv = ctx->live;
  int32_t n = st->n_nodes, i, k, s, j, a;

  /* Per node: its backward range and the first backward reads of its
   * activations (all of them / all but its checkpoint). */
  for (j = 0; j < n; j++) {
    st->bs[j] = INT32_MAX;
    st->be[j] = -1;
    st->fb_all[j] = st->fb_nokeep[j] = INT32_MAX;
  }
  for (s = st->n_fwd; s < lv->n_steps; s++) {
    j = st->step_node[s];
    if (s < st->bs[j])
      st->bs[j] = s;
    st->be[j] = s;
  }
  for (a = 1; a < lv->n_acts; a++) {
    int32_t p = ooc_kit_producer(lv, a), f = lv->act_first_bwd[a];
    if (p < 0 || p >= st->n_fwd || !st->droppable[a])
      continue;
    j = st->step_node[p];
    if (f < st->fb_all[j])
      st->fb_all[j] = f;
    if (a != st->node_keep[j] && f < st->fb_nokeep[j])
      st->fb_nokeep[j] = f;
  }
  for (i = 0; i < n; i++) {
    int64_t within = 0, fmax = 0, save = 0, cost = 0;
    int32_t minall = INT32_MAX, lo_b = INT32_MAX, hi_b = -1;
    for (k = i; k < n; k++) {
      int32_t keep = st->node_keep[k], before;
      int64_t sv, c, need, v;
      for (s = node_lo(st, k); s <= st->node_hi[k]; s++) {
        /* Acts whose last forward use was before s are gone by now. */
        v = st->inc[s] - within;
        if (v > fmax)
          fmax = v;
        for (int32_t q = 0; q < lv->step_nacts[s]; q++) {
          a = lv->step_acts[lv->step_first[s] + q];
          if (a <= 0 || lv->act_last_fwd[a] != s ||
              ooc_kit_producer(lv, a) < node_lo(st, i))
            continue;
          if (st->droppable[a] && a != keep)
            within += st->fb[a];
        }
        for (int32_t q = 0; q < lv->step_nacts[s]; q++) {
          a = lv->step_acts[lv->step_first[s] + q];
          if (a > 0 && ooc_kit_producer(lv, a) == s && st->droppable[a])
            save += st->fb[a];
        }
        cost += st->rc_step[s];
      }
      if (st->bs[k] < lo_b)
        lo_b = st->bs[k];
      if (st->be[k] > hi_b)
        hi_b = st->be[k];
      /* The checkpoint after k stays; so does its producer's run when
       * it produces nothing else to drop. */
      sv = save;
      c = cost;
      if (keep > 0 && st->droppable[keep]) {
        int32_t p = ooc_kit_producer(lv, keep);
        sv -= st->fb[keep];
        if (st->n_drop_step[p] == 1)
          c -= st->rc_step[p];
      }
      /* Backward: before the recompute the dropped bytes are still
       * saved; from it on they are back. */
      before = minall < st->fb_nokeep[k] ? minall : st->fb_nokeep[k];
      need = fmax;
      if (hi_b >= 0) {
        int32_t cut = before < lo_b ? lo_b : before > hi_b + 1 ? hi_b + 1
                                                               : before;
        v = ooc_timeline_max(&st->tl, lo_b, cut - 1);
        if (v != INT64_MIN && v - sv > need)
          need = v - sv;
        v = ooc_timeline_max(&st->tl, cut, hi_b);
        if (v != INT64_MIN && v > need)
          need = v;
      }
      st->need_r[(size_t)i * n + k] = need;
      st->save[(size_t)i * n + k] = sv;
      st->cost[(size_t)i * n + k] = c;
      if (st->fb_all[k] < minall)
        minall = st->fb_all[k];
    }
  }
  for (j = 0; j < n; j++) {
    int64_t m = st->be[j] >= 0 ? ooc_timeline_max(&st->tl, st->bs[j],
                                                   st->be[j])
                               : 0;
    for (s = node_lo(st, j); s <= st->node_hi[j]; s++)
      if (st->inc[s] > m)
        m = st->inc[s];
    st->need_k[j] = m;
  }
}

/* The table for budget m: 1 and the cells filled when some schedule fits
 * the model, 0 when none does. */
static int solve(struct dp_state *st, int64_t m, int64_t quantum,
                 int64_t *best_cost, int32_t *best_u)
{
  int32_t n = st->n_nodes, i, k, u;
  size_t cells = (size_t)(n + 1) * (Q + 1);

  for (size_t c = 0; c < cells; c++)
    st->dp[c] = INT64_MAX;
  st->dp[0] = 0;
  for (i = 0; i < n; i++)
    for (u = 0; u <= Q; u++) {
      int64_t cur = st->dp[(size_t)i * (Q + 1) + u];
      int64_t have = (int64_t)u * quantum;
      if (cur == INT64_MAX)
        continue;
      /* Node i kept. */
      if (st->need_k[i] - have <= m) {
        size_t to = (size_t)(i + 1) * (Q + 1) + u;
        if (cur < st->dp[to]) {
          st->dp[to] = cur;
          st->from[to] = i;
          st->from_u[to] = (int16_t)u;
          st->recomp[to] = 0;
        }
      }
      /* Segment [i, k] recomputed (the last node is kept). */
      for (k = i; k < n - 1; k++) {
        int64_t sv = st->save[(size_t)i * n + k];
        int64_t c = st->cost[(size_t)i * n + k];
        int32_t du, v;
        size_t to;
        if (st->need_r[(size_t)i * n + k] - have > m || sv <= 0)
          continue;
        du = (int32_t)(sv / quantum);
        v = u + du > Q ? Q : u + du;
        to = (size_t)(k + 1) * (Q + 1) + v;
        if (cur + c < st->dp[to]) {
          st->dp[to] = cur + c;
          st->from[to] = i;
          st->from_u[to] = (int16_t)u;
          st->recomp[to] = 1;
        }
      }
    }
  *best_cost = INT64_MAX;
  for (u = 0; u <= Q; u++) {
    int64_t c = st->dp[(size_t)n * (Q + 1) + u];
    if (c < *best_cost) {
      *best_cost = c;
      *best_u = u;
    }
  }
  return *best_cost != INT64_MAX;
}

/* The plan of the table's best schedule; *n_seg, *n_rc counted. */
static int emit(struct dp_state *st, const ooc_planner_ctx *ctx,
                ooc_plan *pl, int32_t u, int32_t *n_seg, int32_t *n_rc,
                ooc_err *err)
{
  int32_t i = st->n_nodes;

  ooc_plan_reset(pl);
  pl->sched_budget = ctx->budget;
  *n_seg = *n_rc = 0;
  while (i > 0) {
    size_t c = (size_t)i * (Q + 1) + u;
    int32_t p = st->from[c], k = i - 1;
    if (st->recomp[c]) {
      int32_t n = ooc_kit_recompute_segment(ctx, pl, node_lo(st, p),
                                            st->node_hi[k],
                                            st->node_keep[k], st->mark, err);
      if (n < 0)
        return n;
      (*n_seg)++;
      *n_rc += n;
    }
    u = st->from_u[c];
    i = p;
  }
  return OOC_OK;
}

/* --- rotor's table: several recomputes per stage ------------------------ */

static size_t tri(int32_t s, int32_t t)
{
  return (size_t)t * (size_t)(t + 1) / 2 + (size_t)s;
}

/* The groups' figures, from the nodes' (tables() first). */
static void rotor_tables(struct dp_state *st, const ooc_planner_ctx *ctx)
{
  const ooc_liveness *lv = ctx->live;
  int32_t nn = st->n_nodes, r = st->n_grp, g, j, s, q, a;
  int64_t pre = 0;

  for (g = 0; g < r; g++) {
    st->g_lo[g] = nn <= MAX_GRP ? g : (int32_t)((int64_t)g * nn / r);
    st->g_hi[g] = nn <= MAX_GRP ? g
                                : (int32_t)((int64_t)(g + 1) * nn / r) - 1;
  }
  for (g = 0; g < r; g++) {
    int32_t lo = node_lo(st, st->g_lo[g]), hi = st->node_hi[st->g_hi[g]];
    int32_t blo = INT32_MAX, bhi = -1;
    int64_t ab = 0, mf = 0, mb = 0, mn = 0, gone = 0, f = 0;
    for (s = lo; s <= hi; s++) {
      for (q = 0; q < lv->step_nacts[s]; q++) {
        a = lv->step_acts[lv->step_first[s] + q];
        if (a > 0 && ooc_kit_producer(lv, a) == s && st->droppable[a])
          ab += st->fb[a];
      }
      if (st->inc[s] - pre > mf)
        mf = st->inc[s] - pre;
      /* Forwarded without storing: what backward reads is dropped after
       * its last forward use. */
      if (st->inc[s] - pre - gone > mn)
        mn = st->inc[s] - pre - gone;
      for (q = 0; q < lv->step_nacts[s]; q++) {
        a = lv->step_acts[lv->step_first[s] + q];
        if (a > 0 && lv->act_last_fwd[a] == s && st->droppable[a] &&
            ooc_kit_producer(lv, a) >= lo)
          gone += st->fb[a];
      }
      f += st->rc_step[s];
    }
    for (j = st->g_lo[g]; j <= st->g_hi[g]; j++)
      if (st->be[j] >= 0) {
        if (st->bs[j] < blo)
          blo = st->bs[j];
        if (st->be[j] > bhi)
          bhi = st->be[j];
      }
    if (bhi >= 0) {
      int64_t v = ooc_timeline_max(&st->tl, blo, bhi);
      if (v != INT64_MIN && v - pre > mb)
        mb = v - pre;
      st->g_pb[g] = blo;
    } else {
      st->g_pb[g] = g > 0 ? st->g_pb[g - 1] : SKIP;
    }
    st->g_a[g] = ab;
    st->g_mf[g] = mf;
    st->g_mb[g] = mb;
    st->g_mn[g] = mn;
    st->g_f[g] = f;
    if (g > 0) {
      a = st->node_keep[st->g_hi[g - 1]];
      st->g_xact[g] = a;
      st->g_x[g] = a > 0 ? st->fb[a] : 0;
      st->g_xok[g] = a > 0 && st->droppable[a];
      st->g_d[g - 1] = st->g_x[g];
    }
    pre += ab;
  }
  st->g_xact[0] = 0;
  st->g_x[0] = 0;
  st->g_xok[0] = 0;
  st->g_d[r - 1] = 0;
}

/* Table columns at or above which memory m suffices (QR + 1: none). */
static int32_t r_thr(const struct dp_state *st, int64_t m)
{
  int64_t u;

  if (m <= st->r_lo)
    return 0;
  u = (m - st->r_lo + st->r_q - 1) / st->r_q;
  return u > QR ? QR + 1 : (int32_t)u;
}

/* Columns that bytes b take (rounded up: a column's memory is never more
 * than what is left). */
static int32_t r_cols(const struct dp_state *st, int64_t b)
{
  int64_t u = (b + st->r_q - 1) / st->r_q;

  return u > QR + 1 ? QR + 1 : (int32_t)u;
}

/* The Fall choice of cell (s, t): the first column where it fits
 * (*lo_u), the columns group s's stored acts take (*da) and group s's
 * recompute time f, returned (0 for the iteration's own forward); its
 * value at u >= *lo_u is f, plus rc(s + 1, t)[u - *da] when s < t. */
static int64_t r_fall(const struct dp_state *st, int32_t s, int32_t t,
                      int32_t *lo_u, int32_t *da)
{
  int32_t thr = r_thr(st, st->g_mf[s] + st->g_d[t]);
  int32_t thb = r_thr(st, st->g_mb[s]);
  int64_t f = t < st->n_grp - 1 ? st->g_f[s] : 0;

  if (thb > thr)
    thr = thb;
  *da = 0;
  *lo_u = thr;
  if (s < t) {
    *da = r_cols(st, st->g_a[s]);
    if (st->rfirst[tri(s + 1, t)] + *da > thr)
      *lo_u = st->rfirst[tri(s + 1, t)] + *da;
  }
  return f;
}

/* The Fck s' choice of cell (s, t), for s' = s + 1, s + 2, ... in turn:
 * group s' - 1 added to *fmax (the largest need of the groups s .. s' - 1
 * forwarded without storing) and *fs (their forward time); returns the
 * first column where the choice fits (QR + 1: it may not be taken) and
 * *dx, the checkpoint's columns; the cell's value at u >= that is fc +
 * rc(s', t)[u - dx] + rc(s, s' - 1)[u], fc = *fs but for the last pass. */
static int32_t r_fck(const struct dp_state *st, int32_t s, int32_t t,
                     int32_t sp, int64_t *fmax, int64_t *fs, int32_t *dx)
{
  int32_t thr, lo_u, k = sp - 1;
  int64_t need = st->g_mn[k] + (k > s ? st->g_x[k] : 0);

  if (need > *fmax)
    *fmax = need;
  *fs += st->g_f[k];
  *dx = 0;
  if (!st->g_xok[sp] && t < st->n_grp - 1)
    return QR + 1;              /* a pass would free it after its step */
  thr = r_thr(st, *fmax + st->g_d[t]);
  *dx = r_cols(st, st->g_x[sp]);
  if (*dx > thr)
    thr = *dx;
  lo_u = st->rfirst[tri(sp, t)] + *dx;
  if (lo_u < st->rfirst[tri(s, sp - 1)])
    lo_u = st->rfirst[tri(s, sp - 1)];
  if (lo_u < thr)
    lo_u = thr;
  return lo_u;
}

/* Columns of memory m in the table (m above its lowest column). */
static int32_t r_top(const struct dp_state *st, int64_t m)
{
  int64_t u = (m - st->r_lo) / st->r_q;

  return u > QR ? QR : (int32_t)u;
}

/* Rotor's table (Beaumont et al. 2019, §4): C(s, t, u) = the least
 * recompute time to run the backward of groups [s, t] from the gradient
 * after t, with the checkpoint before s stored and u columns of memory
 * for the rest:
 *   Fall: group s forward storing all it backward reads, then [s + 1, t]
 *         with a_s less memory, then s's backward;
 *   Fck s': groups s .. s' - 1 forward storing only the checkpoint before
 *         s', then [s', t] with that checkpoint stored, then [s, s' - 1]
 *         in a new pass with the whole u.
 * The pass ending at the last group is the iteration's forward, whose
 * kernels cost nothing extra. Its 257 columns span the memory from the
 * least any group needs to m (r_top: the column of m). Only the values
 * are kept; rotor_choice finds a cell's choice again when the schedule
 * is read out, so the inner loop is a plain minimum, which on x86-64 is
 * also built for AVX2 (four 64-bit lanes; the same integers, so the same
 * table) and picked at load time where the CPU has it (not under
 * ThreadSanitizer, whose instrumented load-time resolver runs before its
 * runtime does and crashes). Returns 0 when m is at or below that least
 * need. O(groups^3 x QR). */
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && \
    defined(__has_attribute) && !defined(__SANITIZE_THREAD__)
#if __has_attribute(target_clones)
__attribute__((target_clones("avx2", "default"),
               optimize("tree-vectorize")))
#endif
#endif
static int rotor_solve(struct dp_state *st, int64_t m)
{
  int32_t r = st->n_grp, len, s, t, sp, u;
  int64_t lo = INT64_MAX;

  for (s = 0; s < r; s++)
    if (st->g_mf[s] < lo)
      lo = st->g_mf[s];
  if (m <= lo)
    return 0;
  st->r_lo = lo;
  st->rotor_cells += (double)r * (r + 1) * (r + 2) / 6 * (QR + 1);
  st->r_q = (m - lo + QR - 1) / QR;
  if (st->r_q < 1)
    st->r_q = 1;
  for (len = 0; len < r; len++)
    for (s = 0; s + len < r; s++) {
      int64_t *restrict c, fs = 0, fmax = 0, f;
      int32_t lo_u, da;
      t = s + len;
      c = st->rc + tri(s, t) * (QR + 1);
      for (u = 0; u <= QR; u++)
        c[u] = INT64_MAX;
      f = r_fall(st, s, t, &lo_u, &da);
      if (s == t) {
        for (u = lo_u; u <= QR; u++)
          c[u] = f;
      } else {
        const int64_t *nx = st->rc + tri(s + 1, t) * (QR + 1);
        for (u = lo_u; u <= QR; u++)
          c[u] = f + nx[u - da];
      }
      /* Fck s'. Where a table holds INT64_MAX is below its first fitting
       * column, so the loop starts above both tables' and adds finite
       * times only. */
      for (sp = s + 1; sp <= t; sp++) {
        const int64_t *restrict ca, *restrict cb;
        int32_t dx;
        int64_t fc;
        lo_u = r_fck(st, s, t, sp, &fmax, &fs, &dx);
        ca = st->rc + tri(sp, t) * (QR + 1);
        cb = st->rc + tri(s, sp - 1) * (QR + 1);
        fc = t < r - 1 ? fs : 0;
        for (u = lo_u; u <= QR; u++) {
          int64_t v = fc + ca[u - dx] + cb[u];
          c[u] = v < c[u] ? v : c[u];
        }
      }
      for (u = 0; u <= QR && c[u] == INT64_MAX; u++)
        ;
      st->rfirst[tri(s, t)] = (int16_t)u;
    }
  return 1;
}

/* The choice rotor_solve made at cell (s, t), column u (a finite cell):
 * 0 for Fall, s' for Fck s'; the first that reaches its value, in the
 * order the table tried them. */
static int32_t rotor_choice(const struct dp_state *st, int32_t s, int32_t t,
                            int32_t u)
{
  int32_t r = st->n_grp, lo_u, da, sp, h = -1;
  int64_t best = INT64_MAX, fs = 0, fmax = 0, f;

  f = r_fall(st, s, t, &lo_u, &da);
  if (u >= lo_u) {
    best = s == t ? f : f + st->rc[tri(s + 1, t) * (QR + 1) + u - da];
    h = 0;
  }
  for (sp = s + 1; sp <= t; sp++) {
    int32_t dx;
    int64_t v;
    lo_u = r_fck(st, s, t, sp, &fmax, &fs, &dx);
    if (u < lo_u)
      continue;
    v = (t < r - 1 ? fs : 0) + st->rc[tri(sp, t) * (QR + 1) + u - dx] +
        st->rc[tri(s, sp - 1) * (QR + 1) + u];
    if (v < best) {
      best = v;
      h = sp;
    }
  }
  return h;
}

/* Group g's forward in the pass that runs before step b (-1: the
 * iteration's forward; SKIP: nothing to rebuild), storing what backward
 * reads (save) or only the act `keep`: its acts' recompute records. */
static int rotor_forward(struct dp_state *st, const ooc_planner_ctx *ctx,
                         ooc_plan *pl, int32_t g, int32_t b, int save,
                         int32_t keep, ooc_err *err)
{
  const ooc_liveness *lv = ctx->live;
  int32_t lo = node_lo(st, st->g_lo[g]), hi = st->node_hi[st->g_hi[g]];
  int32_t s, q, a;

  if (b == SKIP)
    return OOC_OK;
  for (s = lo; s <= hi; s++)
    for (q = 0; q < lv->step_nacts[s]; q++) {
      int stays;
      a = lv->step_acts[lv->step_first[s] + q];
      if (a <= 0 || ooc_kit_producer(lv, a) != s ||
          lv->act_last_fwd[a] < 0 ||
          ctx->model->layers[lv->act_layer[a]].op == OOC_OPK_SOFTMAX_CE)
        continue;
      /* Stored too: what no pass could rebuild in time, backward reading
       * it before the group's pass (an act that skips a node whose
       * backward reads none of it, a dead-end branch: the nodes' ranges
       * are made monotone, and the group's pass starts later). */
      stays = a == keep || (save && st->droppable[a]) || st->pinned[a] ||
              (st->droppable[a] && st->g_pb[g] != SKIP &&
               lv->act_first_bwd[a] < st->g_pb[g]);
      if (b < 0) {
        /* The forward: what stays lives to its last use; the rest is
         * dropped (or freed by liveness) after its last forward use. */
        st->res[a] = (uint8_t)stays;
        st->prevfree[a] = lv->act_last_fwd[a];
        continue;
      }
      if (st->res[a])
        continue;               /* stored by an earlier pass */
      if (st->prevfree[a] >= b) {
        /* Rebuilt for this very step already: a group whose nodes
         * backward does not read (a dead-end branch) runs in the pass of
         * the group before it, and the two passes share the step. */
        if (stays)
          st->res[a] = 1;
        continue;
      }
      {
        ooc_recompute rec = { .act = a, .free_after = st->prevfree[a],
                              .before = b };
        if (ooc_plan_add_recompute(pl, &rec) != OOC_OK)
          return ooc_err_set(err, OOC_ENOMEM, "planner 'checkpoint-dp': "
                             "out of memory");
      }
      st->n_rrec++;
      st->res[a] = (uint8_t)stays;
      st->prevfree[a] = b;
    }
  return OOC_OK;
}

/* The records of the table's schedule for [s, t] at column u, its pass
 * running before step b. */
static int rotor_emit(struct dp_state *st, const ooc_planner_ctx *ctx,
                      ooc_plan *pl, int32_t s, int32_t t, int32_t u,
                      int32_t b, ooc_err *err)
{
  while (s <= t) {
    int32_t h = rotor_choice(st, s, t, u), k, rc;
    if (h == 0) {
      if ((rc = rotor_forward(st, ctx, pl, s, b, 1, -1, err)) < 0)
        return rc;
      u -= r_cols(st, st->g_a[s]);
      s++;
      continue;
    }
    for (k = s; k < h; k++)
      if ((rc = rotor_forward(st, ctx, pl, k, b, 0,
                              k == h - 1 ? st->g_xact[h] : -1, err)) < 0)
        return rc;
    if ((rc = rotor_emit(st, ctx, pl, h, t, u - r_cols(st, st->g_x[h]), b,
                         err)) < 0)
      return rc;
    /* [s, h - 1] in a new pass with the whole u. */
    b = st->g_pb[h - 1];
    t = h - 1;
  }
  return OOC_OK;
}

/* Rotor's schedule for the largest budget, in 64ths, that the simulator
 * fits, into alt; *fits, its time and the figures for the note. */
static int plan_rotor(struct dp_state *st, const ooc_planner_ctx *ctx,
                      ooc_plan *alt, int *fits, int64_t *t_ns,
                      int64_t *cost, int32_t *n_rec, int32_t *sims,
                      ooc_err *err)
{
  int32_t f, u0;
  int64_t prev = -1;
  int rc;

  *fits = 0;
  *cost = INT64_MAX;
  rotor_tables(st, ctx);
  for (f = 64; f >= 32; f--) {
    ooc_sim_result r;
    int64_t c;
    int64_t m = (int64_t)ctx->budget / 64 * f;
    if (!rotor_solve(st, m))
      break;
    u0 = r_top(st, m);
    c = st->rc[tri(0, st->n_grp - 1) * (QR + 1) + u0];
    if (c == INT64_MAX)
      break;                    /* no schedule fits the model */
    if (c == prev)
      continue;                 /* most likely the same schedule */
    prev = c;
    ooc_plan_reset(alt);
    alt->sched_budget = ctx->budget;
    st->n_rrec = 0;
    if ((rc = rotor_emit(st, ctx, alt, 0, st->n_grp - 1, u0, -1, err)) < 0)
      return rc;
    (*sims)++;
    if ((rc = ooc_planner_evaluate(ctx, alt, &r, err)) < 0)
      return rc;
    if (r.feasible) {
      *fits = 1;
      *t_ns = r.iteration_ns;
      *cost = c;
      *n_rec = st->n_rrec;
      break;
    }
  }
  return OOC_OK;
}

/* Rotor's tables are this planner's work beyond its simulations:
 * O(groups^3 x QR) a solve (about 30 ms at 128 groups on this 2-core
 * machine), up to 33 solves a plan. A caller that caps a search's work,
 * as the hint under an infeasible simulate does (analysis/minbudget.c),
 * counts it in simulated events: a cell took 0.27-0.34 ns there (the
 * AVX2 loop) and an event about 140 ns, so one event per 400 cells,
 * a count that does not depend on the machine. The single-recompute
 * table skips most of its cells (0.02-0.03 ns each): not counted. */
static void add_work(const struct dp_state *st, ooc_plan *pl)
{
  ooc_plan_add_metric(pl, OOC_METRIC_WORK_EVENTS,
                      st->rotor_cells / ROTOR_CELLS_PER_EVENT);
}

static int dp_plan(void *state, const ooc_planner_ctx *ctx, ooc_plan *pl,
                   ooc_err *err)
{
  struct dp_state *st = state;
  int64_t total = 0, quantum, cost = INT64_MAX, m = (int64_t)ctx->budget;
  int64_t first_cost = 0, first_m = m, t_single = INT64_MAX;
  int64_t t_rotor = 0, c_rotor = 0;
  int32_t u = 0, f, n_seg = 0, n_rc = 0, sims = 0, solved = 0, fits = 0;
  int32_t n_rrec = 0;
  int rc, fam = 2, rfits = 0;
  const char *fv = NULL, *tail = "";

  if (ooc_planner_opt_str(ctx, "family", &fv)) {
    if (strcmp(fv, "single") == 0)
      fam = 0;
    else if (strcmp(fv, "rotor") == 0)
      fam = 1;
    else if (strcmp(fv, "both") == 0)
      fam = 2;
    else
      return ooc_err_set(err, OOC_EINVAL, "planner 'checkpoint-dp': option "
                         "family=%s: expected single, rotor or both", fv);
  }
  tables(st, ctx);
  st->rotor_cells = 0;
  for (int32_t a = 1; a < ctx->live->n_acts; a++)
    if (st->droppable[a])
      total += st->fb[a];
  quantum = total / Q + 1;
  /* The largest budget, in 64ths, whose schedule the simulator fits;
   * when none does, the schedule of the largest (the simulator says what
   * does not fit). */
  for (f = 64; f >= 32 && fam != 1; f--) {
    ooc_sim_result r;
    int64_t mf = (int64_t)ctx->budget / 64 * f, c;
    if (!solve(st, mf, quantum, &c, &u))
      break;                   /* a smaller budget will not fit either */
    if (solved && c == cost)
      continue;                /* the same schedule */
    if ((rc = emit(st, ctx, pl, u, &n_seg, &n_rc, err)) < 0)
      return rc;
    if (!solved) {
      first_cost = c;
      first_m = mf;
    }
    solved = 1;
    cost = c;
    m = mf;
    sims++;
    if ((rc = ooc_planner_evaluate(ctx, pl, &r, err)) < 0)
      return rc;
    if (r.feasible) {
      fits = 1;
      t_single = r.iteration_ns;
      break;
    }
  }
  /* Rotor's table, when it may beat the single-recompute schedule: it
   * holds that schedule's family too, under a coarser memory model, so
   * the two are simulated and the faster that fits is taken (a tie: the
   * single-recompute one). */
  if (fam != 0) {
    ooc_plan alt;
    memset(&alt, 0, sizeof alt);
    if ((rc = ooc_plan_init(&alt, ctx->live, err)) < 0)
      return rc;
    rc = plan_rotor(st, ctx, &alt, &rfits, &t_rotor, &c_rotor, &n_rrec,
                    &sims, err);
    if (rc == OOC_OK && rfits && (!fits || t_rotor < t_single)) {
      if (ooc_plan_copy(pl, &alt) != OOC_OK)
        rc = ooc_err_set(err, OOC_ENOMEM, "planner 'checkpoint-dp': out "
                         "of memory");
    } else {
      rfits = 0;
    }
    ooc_plan_fini(&alt);
    if (rc < 0)
      return rc;
  }
  if (fam == 1 && !rfits) {
    ooc_plan_reset(pl);
    pl->sched_budget = ctx->budget;
    snprintf(pl->note, sizeof pl->note,
             "checkpoint-dp: rotor's table (several recomputes per stage): "
             "%d stages (%d chain cuts in %d forward steps%s); %d "
             "simulations; no schedule fitted", (int)st->n_grp,
             (int)st->n_cuts, (int)st->n_fwd,
             st->n_cuts + 1 > MAX_GRP ? ", merged" : "", (int)sims);
    add_work(st, pl);
    return OOC_OK;
  }
  if (rfits) {
    snprintf(pl->note, sizeof pl->note,
             "checkpoint-dp: rotor's table (several recomputes per stage): "
             "%d stages (%d chain cuts in %d forward steps%s), %d recompute "
             "records, recompute %.6f s (model); %d simulations",
             (int)st->n_grp, (int)st->n_cuts, (int)st->n_fwd,
             st->n_cuts + 1 > MAX_GRP ? ", merged" : "", (int)n_rrec,
             (double)c_rotor * 1e-9, (int)sims);
    add_work(st, pl);
    return OOC_OK;
  }
  if (solved && !fits) {
    solve(st, first_m, quantum, &cost, &u);
    if ((rc = emit(st, ctx, pl, u, &n_seg, &n_rc, err)) < 0)
      return rc;
    cost = first_cost;
    m = first_m;
  }
  if (!solved) {
    /* Nothing fits the model: keep everything, the simulator says why. */
    ooc_plan_reset(pl);
    pl->sched_budget = ctx->budget;
  }
  if (fam == 2)
    tail = t_rotor > 0 ? "; rotor's table: no faster"
                       : "; rotor's table: no schedule fitted";
  if (snprintf(pl->note, sizeof pl->note,
               "checkpoint-dp: %d nodes (%d chain cuts in %d forward "
               "steps%s), %d segments recomputed, %d activations, recompute "
               "%.6f s (model); model budget %.3f GiB; %d simulations%s%s%s",
               (int)st->n_nodes, (int)st->n_cuts, (int)st->n_fwd,
               st->n_cuts + 1 > MAX_NODES ? ", merged" : "", (int)n_seg,
               (int)n_rc, solved ? (double)cost * 1e-9 : 0.0,
               (double)m / 1073741824.0, (int)sims,
               solved ? "" : "; no schedule fits the model",
               solved && !fits ? "; none fitted the simulator" : "", tail)
      >= (int)sizeof pl->note)
    memcpy(pl->note + sizeof pl->note - 4, "...", 4);   /* cut: say so */
  add_work(st, pl);
  return OOC_OK;
}

static const char *const dp_options[] = { "family", NULL };

const ooc_planner_type ooc_planner_checkpoint_dp = {
  .name = "checkpoint-dp",
  .summary = "optimal checkpointing of the chain under the budget "
             "(rotor's and the single-recompute dynamic programs, "
             "heterogeneous costs)",
  .cite = "Beaumont et al. 2019, Optimal checkpointing for heterogeneous "
          "chains (rotor); Griewank and Walther 2000",
  .state_size = sizeof(struct dp_state),
  .options = dp_options,
  .alloc = dp_alloc,
  .free = dp_free,
  .plan = dp_plan,
};
