/* planners/pooch.c — PoocH: profiling-based keep / swap / recompute
 * classification of the feature maps, with the simulator as the profile.
 *
 * Follows the PoocH seed (Profiling based Out-of-core Hybrid Method for
 * Large Neural Networks), §4:
 *   §4.2 profiling: a swap-all iteration, here simulated on the profile
 *        (calibrated per-layer times when the profile has them,
 *        docs/calibration.md), with the detail recorder;
 *   swap-outs: issued after a map's last forward use; in forward, a step
 *        whose memory (on the timeline below, with the swap-outs not yet
 *        waited for still on the device) would exceed the budget waits for
 *        the oldest of them (the plan's out_wait), since a swap-out frees
 *        memory only when its copy is done;
 *   §4.3 swap-in scheduling: every swap-in is issued as early as memory
 *        allows: swapped maps in order of need, each issued after the
 *        earliest step from which its bytes fit under the budget until its
 *        use, on the memory timeline of the classification (persistent
 *        state, workspaces, gradients, kept and recomputed maps, earlier
 *        swap-ins);
 *   §4.4.2 keep / swap: from the swap-all timeline, L_O = the maps whose
 *        swap-out the compute stream waited for (exposed_out), L_I = those
 *        whose swap-in it waited for (exposed_in); maps in neither are
 *        swap at once. L_I is searched by its binary tree (keep or swap per
 *        element, keep first; a subtree whose keeps already do not fit is
 *        pruned, more keeps only take more memory); at each leaf the maps
 *        of L_O \ L_I are switched to keep one by one from the output side
 *        while the classification still fits (the greedy of Fig. 13), and
 *        the leaf is simulated. The fastest leaf is kept. The search is
 *        capped (`--opt max_sims=N`, default 2000; `--opt
 *        max_events=N`, the events all its simulations may process,
 *        default 0: no cap; and `--opt budget_s=T`, seconds of wall time,
 *        default 0: none, which makes the plan depend on the machine's
 *        speed, and which keeps back the final steps' time, four of the
 *        longest simulations so far and 1% of it, so that the solve ends
 *        within it; each stops every later step's search, and the
 *        note says which): the tree branches on the elements of L_I
 *        with the largest exposed swap-in, as many as the cap allows,
 *        the others stay swap, and the note says so;
 *   §4.4.3 recompute: with L the maps left swap, r(X) = recompute
 *        overhead / swap overhead, each measured by simulation against X
 *        kept (when keeping X does not fit, its swap overhead is its
 *        exposed transfer time); maps with r >= 1 stay swap; those with
 *        r < 1 become recompute in increasing r while the simulation says
 *        the iteration gets faster, in passes that re-measure r until one
 *        moves nothing (departure: r measured once per pass, not after
 *        each move, see passes(); X kept is simulated only where r < 1
 *        is possible, and a pass's measurements run in two threads,
 *        as do its group tests, speculatively (groups()),
 *        `--opt threads=1|2`, default 2, the same plan either way, see
 *        measure()); a map a recompute reads is swapped
 *        in for that recompute; where fragmentation stalls it, the
 *        step runs again at 2 and 4 64ths under the scheduling budget,
 *        and from the leaf's keeps as they stood when the first map of
 *        L_O \ L_I did not fit (departure, see recompute());
 *   departure, refill: the recomputes free memory the keep / swap step
 *        could not count on (it classified against swap-all), so the maps
 *        left swap or recompute go back to keep from the output side
 *        while the simulation says the iteration gets faster (refill());
 *   departure, kernels: the seed runs on Chainer, which takes cuDNN's
 *        fastest convolution algorithm under a workspace limit, as does
 *        the SuperNeurons baseline it is compared with (§5.2); the final
 *        plan's convolutions take the fastest algorithm whose workspace
 *        fits the memory free at their step (SuperNeurons §3.5's rule,
 *        ooc_kit_fit_algos), when the plan still fits and gets faster.
 * Host memory: the profile and the keep / swap search count device memory
 * only, as the seed's simulation does; a classification is taken only when
 * its pinned maps also fit the host (hw->host_mem).
 * Departure: the memory timeline counts bytes, while the simulator's
 * allocator places blocks and may fragment; as the schedule-window seed
 * does (§4), the scheduling budget is lowered (16/16 .. 8/16 of the
 * physical one) until the swap-all profile fits, and every later build
 * schedules against it.
 * `--opt stage=swapall-nosched|swapall|swapopt|full` stops after a stage
 * (the seed's §5.1 variants: swap-all with each swap-in issued with the
 * previous computation, swap-all with §4.3, keep/swap only, PoocH).
 *
 * A feature map is an activation that backward reads again after a gap
 * (not the input batch, not the loss); the others are left to liveness.
 * A recomputed map is dropped after its last forward use and rebuilt by its
 * forward kernel right before its first backward use; a recompute whose
 * inputs are not resident then is not a valid plan, which the oracle
 * reports and the search treats as not fitting.
 *
 * Where a step only compares a simulation with the best so far (a leaf's
 * time, the groups of §4.4.3 and of the refill, the final budget scan),
 * a candidate whose bound (ooc_kit_plan_bound) is already above it is not
 * simulated, and the simulator stops once the answer is certain
 * (ooc_sim_run_cutoff): the same plan, fewer events simulated.
 * Cost: O(maps) simulations for §4.4.2's scan per leaf times the leaves
 * (capped), O(|L|^2) for §4.4.3 (capped by the same budget); each build is
 * O(maps x steps) at worst. Ownership: scratch in the state (pooch_alloc /
 * pooch_free); writes only the caller's plan.
 */
#include "config.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "base/util.h"
#include "base/worker.h"
#include "plan/planner.h"
#include "plan/toolkit.h"
#include "sim/sim.h"

enum { C_KEEP = 0, C_SWAP = 1, C_RECOMP = 2 };
enum { ST_NOSCHED = 0, ST_SWAPALL, ST_SWAPOPT, ST_FULL };

struct pooch_state {
  int32_t n_fm;
  int32_t *fm;              /* feature maps (acts), producer order */
  uint8_t *cls;             /* per act: C_* */
  uint8_t *best;            /* per act: the best classification so far */
  uint8_t *start;           /* per act: where the recompute step starts */
  uint8_t *rbest;           /* per act: the fastest that fits the device,
                               host or not (host_relaxed) */
  int64_t *fb;              /* per act: footprint */
  int32_t *order;           /* scratch: swapped maps by first backward use */
  int32_t *byneed;          /* scratch: the same by first backward use */
  int32_t *wait;            /* per act: the step that waits for its
                               swap-out (-1 none) */
  int32_t *pend;            /* per act: the last step its swap-out may
                               still hold memory */
  int32_t *needx;           /* per act: first read after its forward */
  uint8_t *isfm;            /* per act: a feature map */
  int32_t *inbuf, cap_in;   /* what one recompute reads */
  int32_t *lo, *li, *tmp;   /* L_O \ L_I, L_I, scratch */
  int32_t n_lo, n_li;
  int64_t *exposed;         /* per act: exposed swap-in + swap-out (ns) */
  int64_t *ovl_in, *ovl_out;  /* per act: its H2D / D2H time during which
                                 the compute stream was idle (ns) */
  int32_t *comp;            /* per step: scratch of ooc_kit_fit_algos */
  uint8_t *algo;            /* per step: the kernel every build takes */
  uint8_t *algo_save;       /* scratch: st->algo before refill() */
  int32_t n_algo;           /* convolutions the final step sped up */
  int32_t *t2a;             /* per program tensor: its act, or 0 */
  int32_t n_t2a;
  int64_t *idle_s, *idle_e; /* the compute stream's idle intervals */
  int32_t cap_idle;
  ooc_timeline base, tl;
  int64_t *basev;           /* per step: base's values */
  int64_t *dv;              /* per step + 1: scratch difference array */
  int64_t *vals;            /* per step: scratch values */
  ooc_sim_detail det;
  int stage, sched;
  uint64_t sched_budget;    /* the budget the timeline schedules against */
  int64_t max_sims;
  int64_t max_events;       /* cap on the events simulated (0: none) */
  uint64_t events;          /* events simulated so far */
  int spent;                /* max_events or budget_s reached: no more
                               searching */
  double deadline;          /* budget_s's end in ooc_wall_s() (0: none) */
  ooc_reserve rsv;          /* what past_deadline keeps back of it */
  int timed_out;            /* budget_s reached (spent says so too) */
  int32_t m_done;           /* measure(): the measurements it took, a
                               prefix of those asked for */
  int64_t cap;              /* the simulations the current step may use */
  double *r;                /* per act: r(X) of §4.4.3 */
  int n_sims, cut, branched;
  int n_real;               /* the simulations run: n_sims counts each
                               r(X) measurement as two and a candidate
                               its bound rules out as one (the caps) */
  int threads;              /* r(X) measured in 1 or 2 threads */
  int64_t *mtr, *mtk;       /* per measurement of a pass: X recomputed, */
  uint64_t *mev;            /* X kept, the events of its runs */
  struct pooch_worker *w;   /* the second thread's state (threads=2) */
  ooc_sim *sim_owner;       /* the simulator its runs are counted in */
  int host_relaxed;         /* eval ignores the host memory limit */
  int host_ok;              /* the last eval's plan fits the host */
  int64_t best_ns, rbest_ns;
  int32_t n_meas, n_unfit;  /* r(X) measured, and of them those whose
                               recompute did not fit */
  int retry;                /* recompute(): a run under a lower budget */
  uint8_t *lstop;           /* leaf(): its classification when the first
                               map of L_O \ L_I did not fit */
  uint8_t *best_stop, *rbest_stop;  /* ... of the leaf that set best and
                                       rbest (valid: have_stop) */
  int have_stop, rhave_stop;
  uint64_t best_budget, rbest_budget;  /* their scheduling budgets */
};

static int is_fmap(const ooc_planner_ctx *ctx, int32_t a)
{
  const ooc_liveness *lv = ctx->live;

  return a > 0 && lv->act_bytes[a] > 0 && lv->act_last_fwd[a] >= 0 &&
         lv->act_first_bwd[a] > lv->act_last_fwd[a] + 1 &&
         ctx->model->layers[lv->act_layer[a]].op != OOC_OPK_SOFTMAX_CE;
}

static int pooch_alloc(void *state, const ooc_planner_ctx *ctx, ooc_err *err)
{
  struct pooch_state *st = state;
  const ooc_liveness *lv = ctx->live;
  int32_t a, n = lv->n_acts;

  ooc_sim_detail_init(&st->det);
  st->fm = calloc((size_t)n + 1, sizeof *st->fm);
  st->cls = calloc((size_t)n + 1, 1);
  st->best = calloc((size_t)n + 1, 1);
  st->rbest = calloc((size_t)n + 1, 1);
  st->start = calloc((size_t)n + 1, 1);
  st->lstop = calloc((size_t)n + 1, 1);
  st->best_stop = calloc((size_t)n + 1, 1);
  st->rbest_stop = calloc((size_t)n + 1, 1);
  st->fb = calloc((size_t)n + 1, sizeof *st->fb);
  st->order = calloc((size_t)n + 1, sizeof *st->order);
  st->byneed = calloc((size_t)n + 1, sizeof *st->byneed);
  st->wait = calloc((size_t)n + 1, sizeof *st->wait);
  st->pend = calloc((size_t)n + 1, sizeof *st->pend);
  st->needx = calloc((size_t)n + 1, sizeof *st->needx);
  st->isfm = calloc((size_t)n + 1, 1);
  st->cap_in = ooc_plan_recompute_inputs_max(lv) + 1;
  st->inbuf = calloc((size_t)st->cap_in, sizeof *st->inbuf);
  st->lo = calloc((size_t)n + 1, sizeof *st->lo);
  st->li = calloc((size_t)n + 1, sizeof *st->li);
  st->tmp = calloc((size_t)n + 1, sizeof *st->tmp);
  st->exposed = calloc((size_t)n + 1, sizeof *st->exposed);
  st->r = calloc((size_t)n + 1, sizeof *st->r);
  st->mtr = calloc((size_t)n + 1, sizeof *st->mtr);
  st->mtk = calloc((size_t)n + 1, sizeof *st->mtk);
  st->mev = calloc((size_t)n + 1, sizeof *st->mev);
  st->ovl_in = calloc((size_t)n + 1, sizeof *st->ovl_in);
  st->ovl_out = calloc((size_t)n + 1, sizeof *st->ovl_out);
  st->comp = calloc((size_t)lv->n_steps + 1, sizeof *st->comp);
  st->algo = calloc((size_t)lv->n_steps + 1, 1);
  st->algo_save = calloc((size_t)lv->n_steps + 1, 1);
  st->basev = calloc((size_t)lv->n_steps + 1, sizeof *st->basev);
  st->dv = calloc((size_t)lv->n_steps + 1, sizeof *st->dv);
  st->vals = calloc((size_t)lv->n_steps + 1, sizeof *st->vals);
  for (a = 0; a < n; a++)
    if (lv->act_tensor[a] + 1 > st->n_t2a)
      st->n_t2a = lv->act_tensor[a] + 1;
  st->t2a = calloc((size_t)st->n_t2a + 1, sizeof *st->t2a);
  if (st->fm == NULL || st->cls == NULL || st->best == NULL ||
      st->rbest == NULL || st->start == NULL || st->lstop == NULL ||
      st->best_stop == NULL || st->rbest_stop == NULL ||
      st->fb == NULL || st->order == NULL || st->wait == NULL ||
      st->byneed == NULL || st->pend == NULL || st->ovl_in == NULL ||
      st->needx == NULL || st->isfm == NULL || st->inbuf == NULL ||
      st->ovl_out == NULL || st->t2a == NULL ||
      st->lo == NULL ||
      st->li == NULL || st->tmp == NULL || st->exposed == NULL ||
      st->r == NULL || st->comp == NULL || st->algo == NULL ||
      st->mtr == NULL || st->mtk == NULL || st->mev == NULL ||
      st->algo_save == NULL || st->basev == NULL || st->dv == NULL ||
      st->vals == NULL)
    return ooc_err_set(err, OOC_ENOMEM, "planner 'pooch': out of memory");
  if (ooc_timeline_init(&st->base, lv->n_steps, err) != OOC_OK ||
      ooc_timeline_init(&st->tl, lv->n_steps, err) != OOC_OK)
    return OOC_ENOMEM;
  ooc_timeline_memory(&st->base, lv, ctx,
                      OOC_TL_PERSISTENT | OOC_TL_WORKSPACE | OOC_TL_GRADS);
  /* Acts freed by liveness without a gap (not feature maps) are resident
   * over their whole life in every classification. */
  for (a = 1; a < n; a++) {
    int32_t p = ooc_kit_producer(lv, a);
    st->fb[a] = (int64_t)ooc_kit_footprint(ctx, lv->act_bytes[a]);
    if (is_fmap(ctx, a)) {
      st->fm[st->n_fm++] = a;
      st->isfm[a] = 1;
      if (lv->act_tensor[a] >= 0)
        st->t2a[lv->act_tensor[a]] = a;
    }
    else if (p >= 0 && lv->act_last[a] >= p)
      ooc_timeline_add(&st->base, p, lv->act_last[a], st->fb[a]);
  }
  ooc_timeline_values(&st->base, st->basev);
  return OOC_OK;
}

static void worker_free(struct pooch_state *st);

static void pooch_free(void *state)
{
  struct pooch_state *st = state;

  worker_free(st);
  free(st->mtr);
  free(st->mtk);
  free(st->mev);
  free(st->fm);
  free(st->comp);
  free(st->algo);
  free(st->algo_save);
  free(st->basev);
  free(st->dv);
  free(st->vals);
  free(st->cls);
  free(st->best);
  free(st->rbest);
  free(st->start);
  free(st->lstop);
  free(st->best_stop);
  free(st->rbest_stop);
  free(st->fb);
  free(st->order);
  free(st->wait);
  free(st->byneed);
  free(st->pend);
  free(st->needx);
  free(st->isfm);
  free(st->inbuf);
  free(st->lo);
  free(st->li);
  free(st->tmp);
  free(st->exposed);
  free(st->r);
  free(st->ovl_in);
  free(st->ovl_out);
  free(st->t2a);
  free(st->idle_s);
  free(st->idle_e);
  ooc_timeline_fini(&st->base);
  ooc_timeline_fini(&st->tl);
  ooc_sim_detail_fini(&st->det);
}

/* qsort's keys, per thread: sweep -j plans in several threads. */
static _Thread_local const ooc_liveness *sort_lv;
static _Thread_local const int32_t *sort_need;
static int by_last_fwd(const void *x, const void *y)
{
  int32_t a = *(const int32_t *)x, b = *(const int32_t *)y;
  int32_t la = sort_lv->act_last_fwd[a], lb = sort_lv->act_last_fwd[b];
  return la != lb ? (la < lb ? -1 : 1) : (a < b ? -1 : a > b);
}

static int by_need(const void *x, const void *y)
{
  int32_t a = *(const int32_t *)x, b = *(const int32_t *)y;
  int32_t na = sort_need[a], nb = sort_need[b];
  return na != nb ? (na < nb ? -1 : 1) : (a < b ? -1 : a > b);
}

/* The plan of classification st->cls (§4.3 swap-in scheduling unless
 * st->sched is 0). OOC_ENOMEM. */
static int build(struct pooch_state *st, const ooc_planner_ctx *ctx,
                 ooc_plan *pl, ooc_err *err)
{
  const ooc_liveness *lv = ctx->live;
  int64_t budget = (int64_t)st->sched_budget;
  int32_t k, n_sw = 0;

  ooc_plan_reset(pl);
  memcpy(pl->algo, st->algo, (size_t)lv->n_steps);
  pl->sched_budget = st->sched_budget;
  /* The adds up to §4.3 go to a difference array (no query reads the
   * timeline between them but the walk below, in step order), and the
   * segment tree is built from its values once, for §4.3's queries. */
  memset(st->dv, 0, ((size_t)lv->n_steps + 1) * sizeof *st->dv);
  /* When each map is first needed after its forward: its first backward
   * use, or earlier, the recompute of a later map that reads it (from the
   * output side, so a chain of recomputes moves together). */
  for (k = 0; k < st->n_fm; k++)
    st->needx[st->fm[k]] = lv->act_first_bwd[st->fm[k]];
  for (k = st->n_fm - 1; k >= 0; k--) {
    int32_t x = st->fm[k];
    if (st->cls[x] != C_RECOMP)
      continue;
    int32_t n = ooc_plan_recompute_inputs(lv, x, lv->act_last_fwd[x],
                                          st->inbuf, st->cap_in);
    for (int32_t q = 0; q < n && q < st->cap_in; q++) {
      int32_t b = st->inbuf[q];
      if (st->isfm[b] && st->needx[x] < st->needx[b])
        st->needx[b] = st->needx[x];
    }
  }
  for (k = 0; k < st->n_fm; k++) {
    int32_t a = st->fm[k], p = ooc_kit_producer(lv, a);
    int32_t lf = lv->act_last_fwd[a], fb = st->needx[a];
    if (st->cls[a] == C_KEEP) {
      ooc_diff_add(st->dv, lv->n_steps, p, lv->act_last[a], st->fb[a]);
    } else {
      ooc_diff_add(st->dv, lv->n_steps, p, lf, st->fb[a]);
      if (st->cls[a] == C_RECOMP) {
        ooc_recompute r = { .act = a, .free_after = lf, .before = fb };
        ooc_diff_add(st->dv, lv->n_steps, fb, lv->act_last[a], st->fb[a]);
        if (ooc_plan_add_recompute(pl, &r) != OOC_OK)
          return ooc_err_set(err, OOC_ENOMEM, "planner 'pooch': out of "
                             "memory");
      } else {
        st->order[n_sw++] = a;
      }
    }
  }
  /* Swap-outs hold their memory until the D2H is done, and the timeline
   * cannot tell when that is: a swapped map is pending from its last
   * forward use until a step waits for it (out_wait) or its own swap-in,
   * whose ALLOC waits for the D2H's free. A step whose memory would exceed
   * the budget with the pending maps waits for the oldest of them, in
   * forward (the seed's computations wait for nothing else) and in
   * backward alike. */
  sort_lv = lv;
  sort_need = st->needx;
  memcpy(st->byneed, st->order, (size_t)n_sw * sizeof *st->order);
  qsort(st->order, (size_t)n_sw, sizeof *st->order, by_last_fwd);
  qsort(st->byneed, (size_t)n_sw, sizeof *st->byneed, by_need);
  {
    int32_t head = 0, tail = 0, nx = 0, s;
    int64_t pending = 0, run = 0;
    for (k = 0; k < n_sw; k++) {
      st->wait[st->order[k]] = -1;
      st->pend[st->order[k]] = -2;          /* not yet resolved */
    }
    for (s = 0; s < lv->n_steps; s++) {
      run += st->dv[s];
      st->vals[s] = st->basev[s] + run;
      for (; nx < n_sw && st->needx[st->byneed[nx]] <= s; nx++) {
        int32_t a = st->byneed[nx];
        if (st->pend[a] == -2) {
          st->pend[a] = st->needx[a] - 1;
          pending -= st->fb[a];
        }
      }
      while (tail < head && st->vals[s] + pending > budget) {
        int32_t a = st->order[tail++];
        if (st->pend[a] != -2)
          continue;
        st->wait[a] = s;
        st->pend[a] = s - 1;
        pending -= st->fb[a];
      }
      while (head < n_sw && lv->act_last_fwd[st->order[head]] == s)
        pending += st->fb[st->order[head++]];
    }
    memset(st->dv, 0, ((size_t)lv->n_steps + 1) * sizeof *st->dv);
    for (k = 0; k < n_sw; k++) {
      int32_t a = st->order[k];
      ooc_diff_add(st->dv, lv->n_steps, lv->act_last_fwd[a] + 1,
                   st->pend[a], st->fb[a]);
    }
    for (s = 0, run = 0; s < lv->n_steps; s++) {
      run += st->dv[s];
      st->vals[s] += run;
    }
    ooc_timeline_set_values(&st->tl, st->vals);
  }
  /* §4.3, in order of need; a map's own pending bytes do not keep its
   * swap-in out. */
  for (k = 0; k < n_sw; k++) {
    int32_t a = st->byneed[k], lf = lv->act_last_fwd[a], nb = st->needx[a];
    int32_t e, after = nb - 1, pe = st->pend[a];
    ooc_timeline_add(&st->tl, lf + 1, pe, -st->fb[a]);
    if (st->sched) {
      /* The earliest step after which its bytes fit until its use: just
       * after the last step in (lf, nb] they would not fit beside (a
       * segment-tree search, O(log^2 steps), not a walk over the steps). */
      e = ooc_timeline_last_above(&st->tl, lf + 1, nb, budget - st->fb[a]);
      after = e < 0 ? lf : e < nb - 1 ? e : nb - 1;
    }
    ooc_timeline_add(&st->tl, lf + 1, pe < after ? pe : after, st->fb[a]);
    ooc_timeline_add(&st->tl, after + 1, lv->act_last[a], st->fb[a]);
    {
      ooc_swap sw = { .act = a, .out_after = lf, .out_wait = st->wait[a],
                      .in_after = after, .in_before = nb };
      if (ooc_plan_add_swap(pl, &sw) != OOC_OK)
        return ooc_err_set(err, OOC_ENOMEM, "planner 'pooch': out of "
                           "memory");
    }
  }
  return OOC_OK;
}

/* max_events or budget_s is spent: no step searches any more (set_cap). */
static void spend(struct pooch_state *st)
{
  st->spent = 1;
  st->cut = 1;
  st->cap = st->n_sims;
}

/* ... the events cap, when the simulations so far have reached it. */
static void spend_events(struct pooch_state *st)
{
  if (st->max_events > 0 && st->events >= (uint64_t)st->max_events &&
      !st->spent)
    spend(st);
}

/* ... budget_s (the note says which). */
static void out_of_time(struct pooch_state *st)
{
  st->timed_out = 1;
  spend(st);
}

/* Is budget_s spent? The steps after the search (finish(): the plan at
 * its budget and with the framework's kernels) take up to three
 * simulations, and a caller that times the plan (joint) one more: four
 * are kept back (ooc_reserve). */
enum { KEEP_BACK = 4 };

static int past_deadline(const struct pooch_state *st)
{
  return ooc_wall_s() + ooc_reserve_s(&st->rsv, KEEP_BACK) >=
         st->deadline;
}

/* The simulations the current step may use: v, or none once max_events
 * or budget_s is spent. */
static void set_cap(struct pooch_state *st, int64_t v)
{
  st->cap = st->spent ? st->n_sims : v;
}

/* Build and simulate st->cls: *ns the iteration (INT64_MAX when it does
 * not fit or is not a valid plan: a recompute without its inputs). With
 * detail, the exposed times per act into st->exposed. A caller that only
 * asks whether the classification takes at most cutoff ns passes it (0:
 * none; not with detail): a candidate whose bound is above it is not
 * simulated, a run certain to take longer stops early
 * (ooc_sim_run_cutoff), and *ns is then a lower bound above cutoff, which
 * the caller rejects as it would the whole run's time: the search and its
 * plan are the same, only cheaper. Either way it counts in st->n_sims
 * (the caps), only a run in st->n_real. */
static int eval(struct pooch_state *st, const ooc_planner_ctx *ctx,
                ooc_plan *pl, int detail, int64_t cutoff, int64_t *ns,
                ooc_err *err)
{
  ooc_sim_result r;
  double t0;
  int rc;

  if ((rc = build(st, ctx, pl, err)) < 0)
    return rc;
  st->n_sims++;
  st->host_ok = 0;
  t0 = st->deadline > 0 ? ooc_wall_s() : 0;
  if (!detail && cutoff > 0 && ctx->sim != NULL) {
    if (st->host_relaxed)
      ooc_sim_set_host_unlimited(ctx->sim, 1);
    rc = ooc_planner_evaluate_cutoff(ctx, pl, cutoff, &r, err);
    if (st->host_relaxed)
      ooc_sim_set_host_unlimited(ctx->sim, 0);
  } else {
    rc = st->host_relaxed
             ? ooc_planner_evaluate_profile(ctx, pl, &r,
                                            detail ? &st->det : NULL, err)
         : detail ? ooc_planner_evaluate_detail(ctx, pl, &r, &st->det, err)
                  : ooc_planner_evaluate(ctx, pl, &r, err);
  }
  /* Not a run: answered by the plan's bound (ooc_planner_evaluate_cutoff). */
  st->n_real += rc != OOC_OK || !r.cut || r.iterations > 0;
  if (rc == OOC_EINVAL) {
    ooc_err_clear(err);
    *ns = INT64_MAX;
    return OOC_OK;
  }
  if (rc < 0)
    return rc;
  *ns = r.feasible ? r.iteration_ns : INT64_MAX;
  st->events += ooc_planner_events(&r);
  spend_events(st);
  if (st->deadline > 0)
    ooc_reserve_timed(&st->rsv, t0);
  if (st->deadline > 0 && !st->spent && past_deadline(st))
    out_of_time(st);
  st->host_ok = r.feasible && (ctx->hw->host_mem == 0 ||
                               r.peak_host_pinned <= ctx->hw->host_mem);
  if (detail && r.feasible) {
    const ooc_liveness *lv = ctx->live;
    for (int32_t k = 0; k < st->n_fm; k++) {
      int32_t a = st->fm[k], t = lv->act_tensor[a];
      st->exposed[a] = t >= 0 && t < st->det.n_tensors
                           ? st->det.exposed_in_ns[t] +
                                 st->det.exposed_out_ns[t]
                           : 0;
    }
  }
  return OOC_OK;
}

/* The fastest classification so far (best: one that fits the host too;
 * rbest: the device alone). */
static void remember(struct pooch_state *st, const ooc_planner_ctx *ctx,
                     int64_t ns)
{
  const ooc_liveness *lv = ctx->live;

  if (ns < st->best_ns && st->host_ok) {
    st->best_ns = ns;
    st->best_budget = st->sched_budget;
    memcpy(st->best, st->cls, (size_t)lv->n_acts);
  }
  if (ns < st->rbest_ns) {
    st->rbest_ns = ns;
    st->rbest_budget = st->sched_budget;
    memcpy(st->rbest, st->cls, (size_t)lv->n_acts);
  }
}

static int budget_left(const struct pooch_state *st)
{
  return st->n_sims < st->cap;
}

/* One leaf of the L_I tree: L_O \ L_I from the output side to keep while
 * the classification fits, then the leaf's time. */
static int leaf(struct pooch_state *st, const ooc_planner_ctx *ctx,
                ooc_plan *pl, int64_t *ns, ooc_err *err)
{
  const ooc_liveness *lv = ctx->live;
  int64_t t = INT64_MAX, b0 = st->best_ns, rb0 = st->rbest_ns;
  int32_t k;
  int rc, stopped = 0;

  for (k = st->n_lo - 1; k >= 0 && budget_left(st); k--) {
    int32_t a = st->lo[k];
    st->cls[a] = C_KEEP;
    if ((rc = eval(st, ctx, pl, 0, 0, &t, err)) < 0)
      return rc;
    if (t == INT64_MAX) {
      st->cls[a] = C_SWAP;
      if (!stopped)             /* Fig. 13 read as "while it fits" */
        memcpy(st->lstop, st->cls, (size_t)lv->n_acts);
      stopped = 1;
    }
  }
  if (!stopped)
    memcpy(st->lstop, st->cls, (size_t)lv->n_acts);
  /* Only remember() reads the leaf's time: no need to finish a run
   * slower than both bests. */
  if ((rc = eval(st, ctx, pl, 0,
                 st->best_ns != INT64_MAX && st->rbest_ns != INT64_MAX
                     ? (st->best_ns > st->rbest_ns ? st->best_ns
                                                   : st->rbest_ns) - 1
                     : 0,
                 &t, err)) < 0)
    return rc;
  remember(st, ctx, t);
  if (st->best_ns != b0) {
    memcpy(st->best_stop, st->lstop, (size_t)lv->n_acts);
    st->have_stop = 1;
  }
  if (st->rbest_ns != rb0) {
    memcpy(st->rbest_stop, st->lstop, (size_t)lv->n_acts);
    st->rhave_stop = 1;
  }
  /* Back to swap for the next leaf. */
  for (k = 0; k < st->n_lo; k++)
    st->cls[st->lo[k]] = C_SWAP;
  *ns = t;
  return OOC_OK;
}

/* The binary tree over L_I[i ..): keep first, pruned when the keeps so
 * far do not fit with everything else swapped. */
static int tree(struct pooch_state *st, const ooc_planner_ctx *ctx,
                ooc_plan *pl, int32_t i, ooc_err *err)
{
  int64_t t;
  int rc;

  if (i == st->branched)
    return leaf(st, ctx, pl, &t, err);
  if (!budget_left(st)) {
    st->cut = 1;
    return OOC_OK;
  }
  st->cls[st->li[i]] = C_KEEP;
  if ((rc = eval(st, ctx, pl, 0, 0, &t, err)) < 0)
    return rc;
  if (t != INT64_MAX && (rc = tree(st, ctx, pl, i + 1, err)) < 0)
    return rc;
  st->cls[st->li[i]] = C_SWAP;
  return tree(st, ctx, pl, i + 1, err);
}

/* The compute stream's idle time within [s, e), over the first n idle
 * intervals (in time order, disjoint). */
static int64_t idle_within(const struct pooch_state *st, int32_t n,
                           int64_t s, int64_t e)
{
  int32_t lo = 0, hi = n, k;
  int64_t t = 0;

  while (lo < hi) {               /* the first interval ending after s */
    int32_t mid = lo + (hi - lo) / 2;
    if (st->idle_e[mid] <= s)
      lo = mid + 1;
    else
      hi = mid;
  }
  for (k = lo; k < n && st->idle_s[k] < e; k++) {
    int64_t a = st->idle_s[k] > s ? st->idle_s[k] : s;
    int64_t b = st->idle_e[k] < e ? st->idle_e[k] : e;
    if (b > a)
      t += b - a;
  }
  return t;
}

/* §4.4.2 step 1-2 on the swap-all timeline (the last detailed run, its
 * program in ctx->scratch): for each swapped map, how much of its
 * swap-out and of its swap-in ran while the compute stream stood idle,
 * i.e. was not hidden by computation (Fig. 11). OOC_ENOMEM. */
static int examine(struct pooch_state *st, const ooc_planner_ctx *ctx,
                   ooc_err *err)
{
  const ooc_program *p = ctx->scratch;
  const ooc_sim_detail *d = &st->det;
  int32_t i, n = 0, k;

  if (p->n_instr > st->cap_idle) {
    int64_t *s = realloc(st->idle_s, (size_t)p->n_instr * sizeof *s);
    if (s != NULL)
      st->idle_s = s;
    int64_t *e = realloc(st->idle_e, (size_t)p->n_instr * sizeof *e);
    if (e != NULL)
      st->idle_e = e;
    if (s == NULL || e == NULL)
      return ooc_err_set(err, OOC_ENOMEM, "planner 'pooch': out of "
                         "memory");
    st->cap_idle = p->n_instr;
  }
  for (i = p->prologue_end; i < p->n_instr && i < d->n_instr; i++)
    if (p->instr[i].kind == OOC_I_COMPUTE && d->start_ns[i] >= 0 &&
        d->stall_ns[i] > 0) {
      st->idle_s[n] = d->start_ns[i] - d->stall_ns[i];
      st->idle_e[n++] = d->start_ns[i];
    }
  for (k = 0; k < st->n_fm; k++)
    st->ovl_in[st->fm[k]] = st->ovl_out[st->fm[k]] = 0;
  for (i = p->prologue_end; i < p->n_instr && i < d->n_instr; i++) {
    const ooc_instr *in = &p->instr[i];
    int32_t a;
    int64_t o;
    if ((in->kind != OOC_I_H2D && in->kind != OOC_I_D2H) ||
        d->start_ns[i] < 0 || in->tensor < 0 || in->tensor >= st->n_t2a ||
        (a = st->t2a[in->tensor]) == 0)
      continue;
    o = idle_within(st, n, d->start_ns[i], d->end_ns[i]);
    if (in->kind == OOC_I_H2D)
      st->ovl_in[a] += o;
    else
      st->ovl_out[a] += o;
  }
  return OOC_OK;
}

static _Thread_local const int64_t *sort_exp;
static int by_exposed(const void *x, const void *y)
{
  int32_t a = *(const int32_t *)x, b = *(const int32_t *)y;
  return sort_exp[a] != sort_exp[b] ? (sort_exp[a] > sort_exp[b] ? -1 : 1)
                                    : (a < b ? -1 : a > b);
}

/* §4.4.2 from the swap-all timeline (its detail in st->det). */
static int keep_or_swap(struct pooch_state *st, const ooc_planner_ctx *ctx,
                        ooc_plan *pl, ooc_err *err)
{
  int64_t leaves;
  int32_t k;
  int rc;

  if ((rc = examine(st, ctx, err)) < 0)
    return rc;
  st->n_lo = st->n_li = 0;
  for (k = 0; k < st->n_fm; k++) {
    int32_t a = st->fm[k];
    int in = st->ovl_in[a] > 0, out = st->ovl_out[a] > 0;
    if (in)
      st->li[st->n_li++] = a;
    else if (out)
      st->lo[st->n_lo++] = a;     /* producer order: output side last */
  }
  /* Branch on as many elements of L_I as the simulation budget allows:
   * 2^b leaves of |L_O \ L_I| + 1 simulations each, plus the inner
   * nodes. */
  sort_exp = st->ovl_in;
  qsort(st->li, (size_t)st->n_li, sizeof *st->li, by_exposed);
  st->branched = 0;
  leaves = 1;
  while (st->branched < st->n_li && st->branched < 40 &&
         (leaves * 2) * (st->n_lo + 3) <= st->cap - st->n_sims) {
    leaves *= 2;
    st->branched++;
  }
  if (st->branched < st->n_li)
    st->cut = 1;
  return tree(st, ctx, pl, 0, err);
}

static _Thread_local const double *sort_r;
static int by_r(const void *x, const void *y)
{
  int32_t a = *(const int32_t *)x, b = *(const int32_t *)y;
  return sort_r[a] != sort_r[b] ? (sort_r[a] < sort_r[b] ? -1 : 1)
                                : (a < b ? -1 : a > b);
}

/* The second thread of §4.4.3's measurements: a state of its own (the
 * same feature maps and base timeline, pooch_alloc), simulator, scratch
 * program and plan. Each measurement depends only on the classification
 * and X, so which thread runs it changes no result. */
struct pooch_worker {
  struct pooch_state st;
  ooc_planner_ctx ctx;
  ooc_program scratch;
  ooc_plan pl;
  ooc_sim *sim;
  int pl_inited;
  uint64_t dropped;         /* runs of groups()'s candidates not taken
                               (one thread would not have run them) */
};

static void worker_free(struct pooch_state *st)
{
  struct pooch_worker *w = st->w;

  if (w == NULL)
    return;
  if (w->sim != NULL && st->sim_owner != NULL)
    ooc_sim_add_runs(st->sim_owner, ooc_sim_runs(w->sim) - w->dropped);
  pooch_free(&w->st);
  if (w->pl_inited)
    ooc_plan_fini(&w->pl);
  ooc_program_fini(&w->scratch);
  ooc_sim_free(w->sim);
  free(w);
  st->w = NULL;
}

/* The worker, made on first use: 0, or OOC_ENOMEM and the like. */
static int worker_get(struct pooch_state *st, const ooc_planner_ctx *ctx,
                      ooc_err *err)
{
  struct pooch_worker *w;
  int rc;

  if (st->w != NULL)
    return OOC_OK;
  if ((w = calloc(1, sizeof *w)) == NULL)
    return ooc_err_set(err, OOC_ENOMEM, "planner 'pooch': out of memory");
  st->w = w;
  st->sim_owner = ctx->sim;
  ooc_program_init(&w->scratch);
  if ((rc = ooc_sim_clone(ctx->sim, &w->sim, err)) < 0)
    return rc;
  w->ctx = *ctx;
  w->ctx.sim = w->sim;
  w->ctx.scratch = &w->scratch;
  if ((rc = ooc_plan_init(&w->pl, ctx->live, err)) < 0)
    return rc;
  w->pl_inited = 1;
  return pooch_alloc(&w->st, &w->ctx, err);
}

/* The worker's state set as st's for what build() and eval() read
 * besides the classification: the kernels, the schedule and its budget,
 * the host rule; no caps of its own (the caller replays them in order).
 * The classification is the caller's to set. */
static struct pooch_state *worker_sync(struct pooch_state *st,
                                       const ooc_liveness *lv)
{
  struct pooch_state *ws = &st->w->st;

  memcpy(ws->algo, st->algo, (size_t)lv->n_steps);
  ws->sched = st->sched;
  ws->sched_budget = st->sched_budget;
  ws->host_relaxed = st->host_relaxed;
  ws->max_events = 0;
  ws->deadline = 0;
  return ws;
}

/* r(X)'s runs for X: *tr with X recomputed; *tk with X kept, only when
 * *tr < t0 (else INT64_MAX: not needed, see passes()); *ev their events. */
static int measure_one(struct pooch_state *st, const ooc_planner_ctx *ctx,
                       ooc_plan *pl, int32_t x, int64_t t0, int64_t *tr,
                       int64_t *tk, uint64_t *ev, ooc_err *err)
{
  uint64_t e0 = st->events;
  int rc;

  *tk = INT64_MAX;
  st->cls[x] = C_RECOMP;
  rc = eval(st, ctx, pl, 0, 0, tr, err);
  if (rc == OOC_OK && *tr < t0) {
    st->cls[x] = C_KEEP;
    rc = eval(st, ctx, pl, 0, 0, tk, err);
  }
  st->cls[x] = C_SWAP;
  *ev = st->events - e0;
  return rc;
}

struct meas_job {
  struct pooch_state *st;
  const ooc_planner_ctx *ctx;
  ooc_plan *pl;
  struct pooch_state *out;  /* where the results go */
  const int32_t *xs;
  int32_t m;
  int64_t t0;
  atomic_int *next;
  atomic_ullong *ev_sum;    /* the events of the measurements done, */
  uint64_t ev_left;         /* and the cap on them (0: none) */
  double deadline;          /* no new one after it (0: none), */
  double reserve;           /* less this (past_deadline) */
  int rc;
  ooc_err err;
};

static void *meas_main(void *arg)
{
  struct meas_job *j = arg;
  int k;

  /* Once the measurements done have spent the events cap, the ones
   * taken so far (a prefix) hold every one the caller will take. */
  while (j->rc == OOC_OK &&
         (j->ev_left == 0 || atomic_load(j->ev_sum) < j->ev_left) &&
         (j->deadline == 0 || ooc_wall_s() + j->reserve < j->deadline) &&
         (k = atomic_fetch_add(j->next, 1)) < j->m) {
    j->rc = measure_one(j->st, j->ctx, j->pl, j->xs[k], j->t0,
                        &j->out->mtr[k], &j->out->mtk[k], &j->out->mev[k],
                        &j->err);
    if (j->rc != OOC_OK)
      atomic_store(j->next, j->m);    /* the other thread stops too */
    else
      atomic_fetch_add(j->ev_sum, j->out->mev[k]);
  }
  return NULL;
}

/* r(X)'s runs for xs[0 .. m) into st->mtr, mtk, mev, in two threads when
 * st->threads is 2: the same figures as one thread's. Where max_events
 * binds, the runs stop once those done have spent it, which leaves every
 * measurement one thread would have taken done. Past budget_s's deadline
 * no new one starts: st->m_done says how many were taken (every one
 * taken is done, so they are the first m_done). The counters and the cap
 * are left to the caller (passes() replays them in order). */
static int measure(struct pooch_state *st, const ooc_planner_ctx *ctx,
                   ooc_plan *pl, const int32_t *xs, int32_t m, int64_t t0,
                   ooc_err *err)
{
  const ooc_liveness *lv = ctx->live;
  atomic_int next = 0;
  atomic_ullong ev_sum = 0;
  struct meas_job a, b;
  int64_t max_ev = st->max_events;
  double dl = st->deadline;
  uint64_t ev = st->events;
  int n_sims = st->n_sims, n_real = st->n_real, rc, threaded = 0;
  pthread_t th;

  st->max_events = 0;           /* replayed by the caller */
  st->deadline = 0;
  a = (struct meas_job){ .st = st, .ctx = ctx, .pl = pl, .out = st,
                         .xs = xs, .m = m, .t0 = t0, .next = &next,
                         .ev_sum = &ev_sum, .deadline = dl,
                         .reserve = ooc_reserve_s(&st->rsv, KEEP_BACK),
                         .ev_left = max_ev > 0 && (uint64_t)max_ev > ev
                                        ? (uint64_t)max_ev - ev
                                        : 0 };
  ooc_err_clear(&a.err);
  b = a;
  if (st->threads == 2 && m > 1 && ctx->sim != NULL) {
    if ((rc = worker_get(st, ctx, err)) < 0) {
      st->max_events = max_ev;
      st->deadline = dl;
      return rc;
    }
    struct pooch_state *ws = worker_sync(st, lv);
    memcpy(ws->cls, st->cls, (size_t)lv->n_acts);
    b.st = ws;
    b.ctx = &st->w->ctx;
    b.pl = &st->w->pl;
    threaded = pthread_create(&th, NULL, meas_main, &b) == 0;
  }
  meas_main(&a);
  if (threaded)
    pthread_join(th, NULL);
  st->max_events = max_ev;
  st->deadline = dl;
  st->m_done = atomic_load(&next) < m ? atomic_load(&next) : m;
  st->events = ev;
  st->n_sims = n_sims;
  st->n_real = n_real;
  if (a.rc != OOC_OK) {
    *err = a.err;
    return a.rc;
  }
  if (threaded && b.rc != OOC_OK) {
    *err = b.err;
    return b.rc;
  }
  return OOC_OK;
}

/* A candidate of groups() simulated in the second thread (base/worker.h),
 * on the worker's state (the same feature maps, kernels and scheduling
 * budget as the caller's), while this one simulates the one before it:
 * its result and what its run adds to the counters, for the caller to
 * take in order. */
struct spec_eval {
  struct pooch_state *ws;
  const ooc_planner_ctx *ctx;
  ooc_plan *pl;
  int64_t cutoff, t;
  int host_ok, n_real, rc;
  uint64_t events;
  ooc_err err;
};

static void spec_run(void *arg)
{
  struct spec_eval *j = arg;
  struct pooch_state *ws = j->ws;
  int n_real = ws->n_real;
  uint64_t ev = ws->events;

  ooc_err_clear(&j->err);
  j->rc = eval(ws, j->ctx, j->pl, 0, j->cutoff, &j->t, &j->err);
  j->host_ok = ws->host_ok;
  j->n_real = ws->n_real - n_real;
  j->events = ws->events - ev;
}

/* Group testing over list[0 .. n): each map moves to class `to` in
 * groups; a group that makes the iteration faster than *cur (or is the
 * first classification that fits the host) is kept whole, one that does
 * not is halved and its halves tried, down to single maps, each put back
 * in its class on failure. Many moves per simulation when most help.
 * *moved counts the maps moved; st->cut set when the cap stops it.
 * With threads=2 (and no budget_s), while a candidate is simulated the
 * second thread simulates the one that follows it when it is turned
 * down: the same classification on the same base, with the same cutoff.
 * When it is turned down that result is taken as this thread would have
 * made it (its counters added in order, the caps checked before it);
 * when it is kept the other is dropped. The same search and plan, sooner
 * where candidates fail (the refill, the later passes). */
static int groups(struct pooch_state *st, const ooc_planner_ctx *ctx,
                  ooc_plan *pl, const int32_t *list, int32_t n, int to,
                  int64_t *cur, int *moved, ooc_err *err)
{
  const ooc_liveness *lv = ctx->live;
  uint8_t was[16];
  int32_t k = 0, sk = -1, sg = 0;
  struct pooch_state *ws = NULL;
  struct spec_eval sp;
  ooc_worker wk;
  uint64_t runs = 0;         /* the simulator runs of the result held */
  int rc = OOC_OK, have = 0, spec = 0;

  *moved = 0;
  if (st->threads == 2 && ctx->sim != NULL && st->deadline == 0 && n > 1) {
    if ((rc = worker_get(st, ctx, err)) < 0)
      return rc;
    ws = worker_sync(st, lv);
    sp = (struct spec_eval){ .ws = ws, .ctx = &st->w->ctx,
                             .pl = &st->w->pl };
    spec = ooc_worker_start(&wk);
  }
  while (k < n && rc == OOC_OK) {
    int32_t g = n - k < 16 ? n - k : 16, i;
    int64_t t;
    for (;;) {
      int64_t cutoff = st->best_ns != INT64_MAX ? *cur - 1 : 0;
      if (st->n_sims >= st->cap) {
        st->cut = 1;
        break;
      }
      for (i = 0; i < g; i++)
        was[i] = st->cls[list[k + i]];
      if (have && sk == k && sg == g) {
        /* The second thread's run of this very candidate, on the same
         * base with the same cutoff: taken as this thread's own. */
        have = 0;
        ooc_worker_used();
        if (sp.rc < 0) {
          *err = sp.err;
          rc = sp.rc;
          break;
        }
        for (i = 0; i < g; i++)
          st->cls[list[k + i]] = (uint8_t)to;
        st->n_sims++;
        st->n_real += sp.n_real;
        st->events += sp.events;
        spend_events(st);
        st->host_ok = sp.host_ok;
        t = sp.t;
      } else {
        /* Posted: the one after it if it fails (half of it, else the
         * next map's group). */
        int32_t nk = g > 1 ? k : k + 1;
        int32_t ng = g > 1 ? g / 2 : n - nk < 16 ? n - nk : 16;
        int posted = 0;
        if (have)                 /* (not the one held: never so far) */
          st->w->dropped += runs;
        have = 0;
        if (spec && nk < n && ng > 0) {
          memcpy(ws->cls, st->cls, (size_t)lv->n_acts);
          for (i = 0; i < ng; i++)
            ws->cls[list[nk + i]] = (uint8_t)to;
          runs = ooc_sim_runs(st->w->sim);
          sp.cutoff = cutoff;
          ooc_worker_post(&wk, spec_run, &sp);
          posted = 1;
        }
        for (i = 0; i < g; i++)
          st->cls[list[k + i]] = (uint8_t)to;
        rc = eval(st, ctx, pl, 0, cutoff, &t, err);
        if (posted && ooc_worker_collect(&wk)) {
          have = 1;
          sk = nk;
          sg = ng;
          runs = ooc_sim_runs(st->w->sim) - runs;
        }
        if (rc < 0)
          break;
      }
      if (t < *cur || (t != INT64_MAX && st->host_ok &&
                       st->best_ns == INT64_MAX)) {
        *cur = t;
        remember(st, ctx, t);
        *moved += g;
        k += g;
        if (have)
          st->w->dropped += runs;
        have = 0;
        break;
      }
      for (i = 0; i < g; i++)
        st->cls[list[k + i]] = was[i];
      if (g == 1) {
        k++;
        break;
      }
      g /= 2;
    }
    if (st->cut && st->n_sims >= st->cap)
      break;
  }
  if (have)
    st->w->dropped += runs;
  if (spec)
    ooc_worker_stop(&wk);
  return rc;
}

/* §4.4.3 on the maps the classification in st->cls swaps: r(X) =
 * recompute overhead / swap overhead for every X in L, each measured by
 * simulation against the classification with X kept (when keeping X does
 * not fit, its swap overhead is its exposed transfer time). Maps with
 * r >= 1 stay swap. The seed re-measures every r after each move
 * (O(|L|^2) simulations); with hundreds of maps that is beyond the
 * budget, so each pass measures r once and reuses it: the maps with r < 1
 * are tried in increasing r, in groups kept when the simulation says the
 * iteration got faster (halved when not); then the next pass re-measures r
 * over the maps still swapped, until a pass moves none or the cap is
 * spent. The note says when the cap cut it. */
static int passes(struct pooch_state *st, const ooc_planner_ctx *ctx,
                  ooc_plan *pl, int *n_rc, ooc_err *err)
{
  int32_t n_l = 0, n_c = 0, k;
  int64_t t0, tk, tr, cur, m;
  int rc;

  for (;;) {
    int accepted = 0;
    n_l = n_c = 0;
    if ((rc = eval(st, ctx, pl, 1, 0, &t0, err)) < 0)
      return rc;
    if (t0 == INT64_MAX)
      break;
    remember(st, ctx, t0);
    /* (Not a map that may not be rebuilt: its input is rewritten in
     * place after it is read, ooc_kit_recomputable.) */
    for (k = 0; k < st->n_fm; k++)
      if (st->cls[st->fm[k]] == C_SWAP &&
          ooc_kit_recomputable(ctx->live, st->fm[k]))
        st->tmp[n_l++] = st->fm[k];
    /* The costliest transfers first, in case the budget cuts the pass. */
    sort_exp = st->exposed;
    qsort(st->tmp, (size_t)n_l, sizeof *st->tmp, by_exposed);
    /* Every measurement counts as two simulations, so the cap allows
     * the first m; measure() runs them (in two threads), then they are
     * taken in order, as one thread would, until max_events is spent. */
    m = st->cap - st->n_sims >= 2 ? (st->cap - st->n_sims) / 2 : 0;
    /* A retry (recompute()) measures with half of what it may simulate
     * at most, the rest left to its group tests, the step that moves
     * maps: measuring took all of it but one simulation. */
    if (st->retry)
      m /= 2;
    if (m > n_l)
      m = n_l;
    if ((rc = measure(st, ctx, pl, st->tmp, (int32_t)m, t0, err)) < 0)
      return rc;
    for (k = 0; k < n_l; k++) {
      int32_t x = st->tmp[k];
      double sw, rcv;
      if (k >= m || st->n_sims + 2 > st->cap) {
        st->cut = 1;
        break;
      }
      if (k >= st->m_done) {    /* budget_s ran out while measuring */
        out_of_time(st);
        break;
      }
      tr = st->mtr[k];
      tk = st->mtk[k];
      st->n_sims += 2;
      st->n_real += tr < t0 ? 2 : 1;
      st->events += st->mev[k];
      spend_events(st);
      st->n_meas++;
      st->n_unfit += tr == INT64_MAX;
      /* r(X) < 1 exactly when recomputing X beats t0 (below), so X
       * kept was simulated only then (measure_one). */
      sw = tk != INT64_MAX ? (double)(t0 - tk) : (double)st->exposed[x];
      rcv = tr != INT64_MAX ? (double)tr - ((double)t0 - sw) : -1;
      /* Not valid or not fitting: swap. A recompute cheaper than even
       * keeping X: r = 0. No measurable swap overhead: recompute only if
       * it makes the iteration faster. With a swap overhead sw > 0,
       * r = (tr - t0 + sw) / sw < 1 exactly when tr < t0; tk (and so sw)
       * matters only for the order of those. */
      st->r[x] = tr == INT64_MAX ? 2.0
                 : sw > 0 ? (rcv > 0 ? rcv / sw : 0.0)
                 : tr < t0 ? 0.0 : 2.0;
      if (st->r[x] < 1.0)
        st->tmp[n_c++] = x;
    }
    sort_r = st->r;
    qsort(st->tmp, (size_t)n_c, sizeof *st->tmp, by_r);
    cur = t0;
    if ((rc = groups(st, ctx, pl, st->tmp, n_c, C_RECOMP, &cur, &accepted,
                     err)) < 0)
      return rc;
    *n_rc += accepted;
    /* The seed's step 5: back to step 2 with the maps left in L, whose
     * r have changed with the moves (a recompute whose inputs are now
     * recomputed too, a swap that is now hidden). */
    if (accepted == 0 || st->n_sims >= st->cap)
      break;
  }
  (void)tr;
  return OOC_OK;
}

/* §4.4.3 from the keep / swap step's classification at its scheduling
 * budget. Departure: the timeline counts bytes while the allocator places
 * blocks, and as recomputes fill the budget to the byte, the blocks a
 * further recompute moves stop fitting: at densenet121 b252 on v100-pcie3
 * every candidate of the third pass ran out of memory to fragmentation,
 * and no r(X) < 1 was left (2.57 s; 1.13 s from 2 64ths under). When more
 * than half of the recomputes the step measured did not fit, it runs
 * again from the keep / swap classification at 2 and at 4 64ths of the
 * budget under it, each with a quarter of max_sims more, of which its
 * measurements take half at most (passes(): they took all of it but one
 * simulation, leaving the group tests, which move the maps, one group).
 * Then once more, at the budget, from the best leaf's classification as
 * it stood when the first map of L_O \ L_I did not fit: Fig. 13's
 * greedy read as "keep while it fits", where leaf() goes on to keep the
 * smaller maps after it that still fit. Those keeps fill the memory that
 * the recomputes need (deeplabv3plus b372 on h100-pcie5: 751 of 789
 * measured recomputes did not fit, 9.81 s; 4.59 s from the leaf's
 * stop). The fastest classification of the runs, with its budget, is
 * kept. */
/* One run of §4.4.3's passes from classification from at scheduling
 * budget b, with cap simulations in all (a retry: a run after the
 * first). */
static int run_from(struct pooch_state *st, const ooc_planner_ctx *ctx,
                    ooc_plan *pl, const uint8_t *from, uint64_t b,
                    int64_t cap, int retry, int *n_rc, ooc_err *err)
{
  int rc;

  st->sched_budget = b;
  memcpy(st->cls, from, (size_t)ctx->live->n_acts);
  set_cap(st, cap);
  st->n_meas = st->n_unfit = 0;
  st->retry = retry;
  rc = passes(st, ctx, pl, n_rc, err);
  st->retry = 0;
  return rc;
}

static int recompute(struct pooch_state *st, const ooc_planner_ctx *ctx,
                     ooc_plan *pl, int *n_rc, ooc_err *err)
{
  static const int margin[] = { 0, 2, 4 };
  const ooc_liveness *lv = ctx->live;
  const uint8_t *stop;
  uint64_t base;
  int i, rc = OOC_OK, stalled = 0, have_stop;

  /* No keep / swap classification fits the host (every swapped map is
   * pinned there): start from the fastest that fits the device, count
   * device memory only, and take the first classification the recomputes
   * make fit the host (each recompute frees the host of its map). */
  st->host_relaxed = st->best_ns == INT64_MAX && st->rbest_ns != INT64_MAX;
  memcpy(st->start, st->host_relaxed ? st->rbest : st->best,
         (size_t)lv->n_acts);
  stop = st->host_relaxed ? st->rbest_stop : st->best_stop;
  have_stop = st->host_relaxed ? st->rhave_stop : st->have_stop;
  base = st->host_relaxed ? st->rbest_budget : st->best_budget;
  for (i = 0; i < 3; i++) {
    uint64_t step = ctx->budget / 64 * (uint64_t)margin[i];
    if (base < step || base - step < ctx->budget / 2)
      break;
    rc = run_from(st, ctx, pl, st->start, base - step,
                  i == 0 ? st->max_sims : st->n_sims + st->max_sims / 4,
                  i > 0, n_rc, err);
    if (rc < 0)
      break;
    if (i == 0 && 2 * st->n_unfit <= st->n_meas)
      break;                    /* the budget did not stall it */
    stalled = 1;
  }
  /* Stalled: once more from the leaf's classification as it stood when
   * the first map of L_O \ L_I did not fit (Fig. 13 read as "keep while
   * it fits"), whose keeps leave the recomputes room, at the budget. */
  if (rc >= 0 && stalled && have_stop && !st->timed_out &&
      memcmp(stop, st->start, (size_t)lv->n_acts) != 0)
    rc = run_from(st, ctx, pl, stop, base, st->n_sims + st->max_sims / 4, 1,
                  n_rc, err);
  set_cap(st, st->max_sims);
  st->host_relaxed = 0;
  return rc < 0 ? rc : OOC_OK;
}

/* The kernels the runtime runs (departure, stated in the header): the
 * seed's PoocH runs on Chainer, which asks cuDNN for the fastest
 * convolution algorithm under a workspace limit, and so does the
 * SuperNeurons it is compared with (§5.2, both on the same Chainer). Here
 * each convolution of the plan of st->cls takes the fastest algorithm
 * whose workspace fits the memory free at its step in the plan's
 * simulation (ooc_kit_fit_algos, SuperNeurons §3.5's rule), kept (in
 * st->algo, for every later build) only when the plan then still fits
 * and runs faster. *ns: the plan's time with the kernels kept. */
static int framework_algos(struct pooch_state *st, const ooc_planner_ctx *ctx,
                           ooc_plan *pl, int64_t *ns, ooc_err *err)
{
  const ooc_liveness *lv = ctx->live;
  ooc_sim_result r;
  int rc;

  *ns = INT64_MAX;
  if ((rc = build(st, ctx, pl, err)) < 0)
    return rc;
  rc = ooc_planner_evaluate_detail(ctx, pl, &r, &st->det, err);
  st->n_sims++;
  st->n_real++;
  if (rc == OOC_EINVAL) {
    ooc_err_clear(err);
    return OOC_OK;
  }
  if (rc < 0 || !r.feasible)
    return rc < 0 ? rc : OOC_OK;
  *ns = r.iteration_ns;
  if (ooc_kit_fit_algos(ctx, &st->det, pl, st->comp) == 0)
    return OOC_OK;
  rc = ooc_planner_evaluate(ctx, pl, &r, err);
  st->n_sims++;
  st->n_real++;
  if (rc == OOC_EINVAL)
    ooc_err_clear(err);
  else if (rc < 0)
    return rc;
  if (rc == OOC_OK && r.feasible && r.iteration_ns < *ns &&
      (ctx->hw->host_mem == 0 || r.peak_host_pinned <= ctx->hw->host_mem)) {
    *ns = r.iteration_ns;
    memcpy(st->algo, pl->algo, (size_t)lv->n_steps);
    return OOC_OK;
  }
  memcpy(pl->algo, st->algo, (size_t)lv->n_steps);  /* they did not fit */
  return OOC_OK;
}

/* The plan of st->cls at the largest 64th of the budget, from
 * st->sched_budget up, at which it runs fastest (the scheduling budget
 * was set by the swap-all profile, or under it by the recompute step; the
 * final classification may fragment less), then with the framework's
 * kernels. *ns its time; pl its plan. */
static int finish(struct pooch_state *st, const ooc_planner_ctx *ctx,
                  ooc_plan *pl, int64_t *ns, ooc_err *err)
{
  uint64_t best_b = st->sched_budget;
  int64_t best_t, t;
  uint32_t f;
  int rc;

  if ((rc = eval(st, ctx, pl, 0, 0, &best_t, err)) < 0)
    return rc;
  /* (Not once budget_s has run out: the scan is a search too.) */
  if (st->stage >= ST_SWAPOPT && st->n_fm > 0 && best_t != INT64_MAX &&
      !st->timed_out)
    for (f = (uint32_t)(st->sched_budget / (ctx->budget / 64)) + 1; f <= 64;
         f++) {
      st->sched_budget = ctx->budget / 64 * f;
      if ((rc = eval(st, ctx, pl, 0, best_t - 1, &t, err)) < 0)
        return rc;
      if (t < best_t) {
        best_t = t;
        best_b = st->sched_budget;
      }
    }
  st->sched_budget = best_b;
  return framework_algos(st, ctx, pl, ns, err);
}

/* Departure: §4.4.3's recomputes free memory that the keep / swap step
 * could not count on (it classified against swap-all). The maps left swap
 * or recompute go back to keep from the output side, the side Fig. 13's
 * greedy and the seed's SuperNeurons baseline keep first, in groups while
 * the simulation (with the framework's kernels) says the iteration gets
 * faster; with a quarter of max_sims. The result is kept only if it then
 * finishes faster than t (the plan in pl, of st->cls). */
static int refill(struct pooch_state *st, const ooc_planner_ctx *ctx,
                  ooc_plan *pl, int64_t t, ooc_err *err)
{
  const ooc_liveness *lv = ctx->live;
  uint64_t budget = st->sched_budget;
  int64_t cur = t, t2;
  int32_t k, n = 0;
  int moved, rc;

  memcpy(st->start, st->cls, (size_t)lv->n_acts);
  memcpy(st->algo_save, st->algo, (size_t)lv->n_steps);
  for (k = st->n_fm - 1; k >= 0; k--)
    if (st->cls[st->fm[k]] != C_KEEP)
      st->tmp[n++] = st->fm[k];
  st->best_ns = t;
  set_cap(st, st->n_sims + st->max_sims / 4);
  rc = groups(st, ctx, pl, st->tmp, n, C_KEEP, &cur, &moved, err);
  set_cap(st, st->max_sims);
  if (rc < 0)
    return rc;
  if (moved > 0) {
    memcpy(st->cls, st->best, (size_t)lv->n_acts);
    if ((rc = finish(st, ctx, pl, &t2, err)) < 0)
      return rc;
    if (t2 < t)
      return OOC_OK;
  }
  /* Nothing gained: the plan before. */
  memcpy(st->cls, st->start, (size_t)lv->n_acts);
  memcpy(st->algo, st->algo_save, (size_t)lv->n_steps);
  st->sched_budget = budget;
  return build(st, ctx, pl, err);
}

static int pooch_plan(void *state, const ooc_planner_ctx *ctx, ooc_plan *pl,
                      ooc_err *err)
{
  static const char *const stages[] = { "swapall-nosched", "swapall",
                                        "swapopt", "full" };
  struct pooch_state *st = state;
  const ooc_liveness *lv = ctx->live;
  const char *sv = NULL;
  int64_t t_all = INT64_MAX;
  int64_t t_fin;
  int32_t k, s;
  int rc, n_rc = 0, c[3] = { 0, 0, 0 };

  st->stage = ST_FULL;
  if (ooc_planner_opt_str(ctx, "stage", &sv)) {
    for (st->stage = 0; st->stage < 4; st->stage++)
      if (strcmp(sv, stages[st->stage]) == 0)
        break;
    if (st->stage == 4)
      return ooc_err_set(err, OOC_EINVAL, "planner 'pooch': option stage="
                         "%s: expected swapall-nosched, swapall, swapopt or "
                         "full", sv);
  }
  if ((rc = ooc_planner_opt_int(ctx, "max_sims", &st->max_sims, err)) < 0)
    return rc;
  if (rc == 0)
    st->max_sims = 2000;
  else if (st->max_sims < 1)
    return ooc_err_set(err, OOC_EINVAL, "planner 'pooch': option max_sims="
                       "%lld: must be >= 1", (long long)st->max_sims);
  {
    int64_t th = 2;
    if ((rc = ooc_planner_opt_int(ctx, "threads", &th, err)) < 0)
      return rc;
    if (th != 1 && th != 2)
      return ooc_err_set(err, OOC_EINVAL, "planner 'pooch': option "
                         "threads=%lld: must be 1 or 2", (long long)th);
    st->threads = (int)th;
  }
  if ((rc = ooc_planner_opt_int(ctx, "max_events", &st->max_events,
                                err)) < 0)
    return rc;
  if (rc == 0)
    st->max_events = 0;
  else if (st->max_events < 0)
    return ooc_err_set(err, OOC_EINVAL, "planner 'pooch': option "
                       "max_events=%lld: must be >= 0 (0: no cap)",
                       (long long)st->max_events);
  {
    double b = 0;
    if ((rc = ooc_planner_opt_seconds(ctx, "pooch", "budget_s", &b,
                                      err)) < 0)
      return rc;
    st->deadline = b > 0 ? ooc_wall_s() + b : 0;
    ooc_reserve_init(&st->rsv, b);
  }
  st->events = 0;
  st->spent = st->timed_out = 0;
  st->best_ns = st->rbest_ns = INT64_MAX;
  st->have_stop = st->rhave_stop = 0;
  memset(st->algo, 0, (size_t)lv->n_steps);
  memset(st->cls, C_KEEP, (size_t)lv->n_acts);
  for (k = 0; k < st->n_fm; k++)
    st->cls[st->fm[k]] = C_SWAP;
  memcpy(st->best, st->cls, (size_t)lv->n_acts);
  /* §4.2 / §4.3: the swap-all profile, scheduled against the budget, or
   * less when the allocator fragments (the timeline counts bytes, not
   * blocks): 16/16, 15/16, ... 8/16 of it until swap-all fits, then up
   * again in 64ths towards the last fraction that did not. */
  st->sched = st->stage != ST_NOSCHED;
  st->sched_budget = ctx->budget;
  /* The profile and the keep / swap search count device memory only, as
   * the seed's simulation does: where the host cannot hold every map,
   * swap-all is still the profile, and only classifications that fit the
   * host are taken (remember). */
  st->host_relaxed = 1;
  {
    uint32_t f, lo = 0, hi = 64;        /* in 64ths: lo fits, hi not */
    for (f = 64; st->n_fm > 0 && f >= 32; f -= 4) {
      st->sched_budget = ctx->budget / 64 * f;
      if ((rc = eval(st, ctx, pl, 1, 0, &t_all, err)) < 0)
        return rc;
      if (t_all != INT64_MAX) {
        lo = f;
        break;
      }
      hi = f;
    }
    for (f = lo + 1; lo > 0 && f < hi; f++) {
      int64_t t;
      st->sched_budget = ctx->budget / 64 * f;
      if ((rc = eval(st, ctx, pl, 1, 0, &t, err)) < 0)
        return rc;
      if (t == INT64_MAX)
        break;
      lo = f;
      t_all = t;
    }
    if (lo > 0 && st->sched_budget != ctx->budget / 64 * lo) {
      /* The last try did not fit: the profile of the last that did. */
      st->sched_budget = ctx->budget / 64 * lo;
      if ((rc = eval(st, ctx, pl, 1, 0, &t_all, err)) < 0)
        return rc;
    }
    if (lo == 0)
      st->sched_budget = ctx->budget;
  }
  remember(st, ctx, t_all);
  if (st->stage >= ST_SWAPOPT && st->n_fm > 0 && t_all != INT64_MAX) {
    /* Keep / swap may use a quarter of what is left when recompute
     * follows: its passes gain more per simulation than deeper trees. */
    set_cap(st, st->stage == ST_FULL
                    ? st->n_sims + (st->max_sims - st->n_sims) / 4
                    : st->max_sims);
    if ((rc = keep_or_swap(st, ctx, pl, err)) < 0)
      return rc;
    set_cap(st, st->max_sims);
    st->host_relaxed = 0;
    if (st->stage == ST_FULL && (rc = recompute(st, ctx, pl, &n_rc, err)) < 0)
      return rc;
  }
  st->host_relaxed = 0;
  memcpy(st->cls, st->best, (size_t)lv->n_acts);
  if (st->best_ns != INT64_MAX)
    st->sched_budget = st->best_budget;
  if ((rc = finish(st, ctx, pl, &t_fin, err)) < 0)
    return rc;
  if (st->stage == ST_FULL && t_fin != INT64_MAX &&
      (rc = refill(st, ctx, pl, t_fin, err)) < 0)
    return rc;
  worker_free(st);               /* its runs counted in ctx->sim */
  for (s = 0, st->n_algo = 0; s < lv->n_steps; s++)
    st->n_algo += st->algo[s] != 0;
  for (k = 0; k < st->n_fm; k++)
    c[st->cls[st->fm[k]]]++;
  snprintf(pl->note, sizeof pl->note,
           "pooch (%s): %d feature maps: keep %d, swap %d, recompute %d; "
           "L_O\\L_I %d, L_I %d (branched on %d)%s; sched budget %.3f "
           "GiB; %d conv algorithms changed; %d simulations",
           stages[st->stage], (int)st->n_fm, c[C_KEEP], c[C_SWAP],
           c[C_RECOMP], (int)st->n_lo, (int)st->n_li, st->branched,
           st->timed_out ? ", search cut by budget_s"
           : st->spent ? ", search cut by max_events"
           : st->cut ? ", search cut by max_sims"
                     : "",
           (double)st->sched_budget / 1073741824.0, (int)st->n_algo,
           st->n_real);
  /* joint's start caps PoocH's events and says when the cap bound. */
  ooc_plan_add_metric(pl, "cut_by_max_events",
                      st->spent && !st->timed_out ? 1 : 0);
  return OOC_OK;
}

static const char *const pooch_options[] = { "stage", "max_sims",
                                             "max_events", "threads",
                                             "budget_s", NULL };

const ooc_planner_type ooc_planner_pooch = {
  .name = "pooch",
  .summary = "PoocH: keep / swap / recompute per feature map from a "
             "simulated swap-all profile (hybrid)",
  .cite = "PoocH paper (Profiling based Out-of-core Hybrid Method for "
          "Large Neural Networks) §4.2-4.4",
  .state_size = sizeof(struct pooch_state),
  .flags = OOC_PLANNER_COSTLY,
  .options = pooch_options,
  .alloc = pooch_alloc,
  .free = pooch_free,
  .plan = pooch_plan,
};
