/* planners/joint.c — oocsim's own planner: keep, swap or recompute per
 * activation, when each swap-in is issued, and each convolution's kernel
 * algorithm, searched jointly with the simulator in the loop
 * (docs/planners.md, "joint").
 *
 * None of the seed planners decides all of these at once: window times
 * transfers, PoocH classifies keep / swap / recompute, SuperNeurons decides
 * by layer type and picks algorithms, checkpointing only recomputes. joint
 * starts from the best of their plans and improves it by local search:
 *
 * 1. Start. Every other registered planner (ctx->peers; none when it is
 *    NULL, and then there is no start) plans the scenario with its
 *    defaults (`start_sims` > 0 caps PoocH's simulations, for speed, at
 *    the price of the guarantee below; `start_events`, default 3.5 x
 *    10^7, caps the events PoocH's simulations may process, which binds
 *    only on programs far beyond the zoo's, where it keeps the start's
 *    cost proportionate: every benchmark scenario's PoocH plan is the
 *    uncapped one at 3.5 x 10^7, and one of the zoo's costliest PoocH
 *    runs, gpt2_xl b24 on h100-pcie5, processes 2.2 to 2.4 x 10^7, its
 *    plan cut at 2.0 x 10^7); each plan is simulated
 *    and the fastest feasible one is the incumbent (ties: registry order).
 *    joint's plan is never slower than it: the search only replaces the
 *    incumbent with a faster feasible plan. (With `start_sims` set and no
 *    feasible start, the start runs again uncapped.) PoocH, whose
 *    simulations are most of the start's cost, plans in a second thread
 *    on its own simulator while this one runs the other planners and the
 *    whole search from the best of theirs; when PoocH's plan is the
 *    incumbent after all, the search runs from it too (in PoocH's thread,
 *    on a state and simulator of its own, beside the first search should
 *    that still run; peer_search), and the faster of the two searches'
 *    plans is joint's (a tie: the one from PoocH's; two_starts):
 *    PoocH's plans already take the framework's algorithms and fill the
 *    memory to a local optimum, where a plan that leaves the algorithms
 *    to the sweep below can search its way further
 *    (resnet50 b2340 gh200-c2c: from PoocH's 1.035 s to 1.026 s, from
 *    window's 1.115 s to 0.995 s). Without budget_s the first search runs
 *    at a lower priority (search_low), so that PoocH takes the cores it
 *    can use and the search the rest. The plan is the one a sequential
 *    start gives, byte for byte, which runs the two searches in the same
 *    order (start_parallel; `threads=1` plans the start sequentially,
 *    and PoocH measures in one thread too, its own `threads=1`).
 * 2. Algorithm sweep: every convolution step of the incumbent whose
 *    fastest offered algorithm (for a forward, one its recompute can run
 *    too) is faster than its current one, by decreasing saving, is moved
 *    to it: all at once first, kept when the simulated plan is faster;
 *    otherwise each half again, down to single steps (group testing:
 *    O(k log n) simulations when k of the n do not pay, at most 2n - 1).
 *    A faster algorithm may need a workspace that does not fit at its
 *    step, or take room a prefetch needed: the simulator decides. The
 *    seed planners other than SuperNeurons (§3.5) keep the default
 *    algorithms, and the annealing's single algorithm moves find few of
 *    the gains one at a time.
 *    Class sweeps, the same group testing over activations: what the
 *    incumbent swaps, recomputed instead where its forward kernels take
 *    less time than its bytes on the link (batch-norm, activations and
 *    adds rebuild at the device memory's rate, far above the link's), by
 *    decreasing difference; then what it recomputes, swapped instead, by
 *    decreasing recompute time less link time (checkpointing's plans
 *    leave the link idle). A changed plan's recomputes get their inputs
 *    back in time (a swap-in brought forward, an input's recompute run
 *    first). Each sweep runs twice: first the swaps it adds are timed as
 *    early as the scheduling budget allows on the timeline of the rest,
 *    which keep their timing (a start's own, window's say, was tuned to
 *    where its allocator fragments); then every swap-in is re-timed so
 *    (what sometimes pays where the first pass's candidates did not).
 *    Before them, one candidate re-times every swap-in alone. Each pass
 *    capped at max_evals / 2 and max_evals / 4 simulations, on top of
 *    the search's. They run again on the annealing's plan (whose memory
 *    leaves room for changes the swept plan did not); the note says what
 *    that changed. `sweep=0` skips these sweeps and the algorithm
 *    sweep. With threads=2 a helper thread simulates the candidate that
 *    follows each of their candidates should it fail (sweep()): the
 *    same sweeps, sooner.
 * 3. Search: simulated annealing (Kirkpatrick et al. 1983) over moves that
 *    change one decision:
 *    - keep: a swapped or recomputed activation stays resident;
 *    - swap: an activation backward reads goes to host memory after its
 *      last forward use and comes back before its first backward use,
 *      the swap-in issued as early as memory allows;
 *    - recompute: an activation is dropped after its last forward use and
 *      rebuilt by its forward kernel before backward needs it (the
 *      toolkit's one-step segment);
 *    - earlier / later: a swap-in is issued 1 to 4 steps earlier or later;
 *    - algorithm: a convolution's forward or backward takes another kernel
 *      algorithm family the cost model offers (its workspace follows);
 *    - segment: the forward between two chain cuts (one to three blocks)
 *      is dropped and recomputed from the first cut's checkpoint, as
 *      checkpointing does (the toolkit's segment), a neighbourhood move;
 *    - schedule budget: every swap-in re-timed, as early as a scheduling
 *      budget 1/64 to 4/64 of the budget lower or higher allows on the
 *      plan's memory timeline (the window planner's allocator-aware
 *      budget), a global move.
 *    Moves are steered by the oracle's per-tensor record of the current
 *    plan (sim/sim.h's detail): with probability 1/2 the target is drawn
 *    among the activations whose swap-in or swap-out the compute stream
 *    waited for, by the time it waited; an exposed swap-in is moved
 *    earlier or its activation kept or recomputed, an exposed swap-out
 *    kept or recomputed. A steered keep is steered by the peak step too
 *    (the detail's free memory per kernel): where the activation's bytes
 *    do not fit at the step of its span with the least free memory, the
 *    keep becomes an exchange, a neighbourhood move: the kept activation
 *    resident across that step whose bytes cover the shortfall and whose
 *    recompute is the cheapest, and cheaper than its bytes on the link, is
 *    recomputed in the same move (none: a plain keep). A move is
 *    accepted when the simulated iteration is faster, or slower by d
 *    with probability exp(-d / T), T falling
 *    linearly from 0.2% of the start's time to 0 over the evaluations.
 *    An infeasible plan (out of memory) or one the lowering or the
 *    simulator rejects is never accepted. The annealing's draw is made
 *    before simulating, which makes acceptance a threshold on the time; a
 *    candidate whose bound (ooc_kit_plan_bound: its kernels back to back,
 *    or its swapped bytes at the link's rate) is at or above it is pruned
 *    unsimulated, and does not count as an evaluation; one that is
 *    simulated stops as soon as its time is certain to reach it
 *    (ooc_sim_run_cutoff; the sweeps and the start likewise against the
 *    time to beat), which leaves every decision as it was.
 * 4. It is deterministic: the moves come from a xorshift64* generator
 *    seeded with `seed` (default 1), and it stops after `max_evals`
 *    simulations of the algorithm sweep and the search together (default
 *    400; the class sweeps above have their own caps), or
 *    once they have simulated `max_events` events (default 1.25 x 10^7;
 *    0: no cap), which binds only on the largest programs, so that the
 *    search's cost stays proportionate there: no benchmark scenario's
 *    plan changes at 1.25 x 10^7 (at 10^7 gpt2_xl b24 on h100-pcie5,
 *    about 10,000 events a simulation, would come out 0.2% slower), and
 *    the 10^4-layer resnet (223,000) gets 56 simulations. `budget_s`
 *    (seconds, default 0: none) bounds the whole solve, which makes the
 *    plan depend on the machine's speed: PoocH gets what is left of it
 *    (its own budget_s), no other planner of the start begins after it
 *    once one plan fits, the sweeps and the chains stop at it (stopped:
 *    two evaluations before it, ooc_reserve, so that the solve ends
 *    within it, not an evaluation after), and the first search of the
 *    parallel start runs to it, the one from PoocH's plan getting what
 *    PoocH left (the sequential start, which would leave the second
 *    nothing, searches from the start alone); when nothing fits and
 *    the budget cut PoocH, the start runs again without it. The note
 *    then ends "cut by budget_s".
 * 5. Two chains: the annealing runs twice, from the swept plan and, the
 *    second chain, from the plan before the class sweeps when they
 *    changed it (their greedy steps can lead the annealing into a worse
 *    basin; else from the swept plan too), with a generator of its own
 *    (derived from the first's) on its own state and simulator, each
 *    with the whole budget; the faster result is taken (a tie: the first
 *    chain's, which is the plan one chain finds, so two are never
 *    slower). With `threads=2` (the default) the second chain runs in a
 *    second thread, else after the first: the same plan either way. The
 *    note says when the second chain's plan was taken, and from where.
 *
 * The note says which plan it started from, what the sweep gained (when
 * it moved any convolution), how much faster the result is, what it
 * changed and how many simulations it ran; the metrics carry them
 * (simulations, sweep_simulations, pruned, start_s, improvement,
 * post_sweep_simulations, exchanges, cut_simulations, bound_simulations,
 * resim_shared_prefix).
 *
 * Cost: the start's planners, then per evaluation one lowering and one
 * simulation, O(steps + records + events); moves are O(records); the
 * sweep's sort O(n log n) over its n convolution steps.
 * Ownership: the state's plans and arrays, freed by jt_free.
 */
#include "config.h"

#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#if defined(__linux__)
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>
#endif

#include "base/util.h"
#include "base/worker.h"
#include "ir/algo.h"
#include "plan/planner.h"
#include "plan/toolkit.h"
#include "sim/cost.h"
#include "sim/sim.h"

enum { MV_KEEP, MV_SWAP, MV_RECOMP, MV_EARLIER, MV_LATER, MV_ALGO,
       MV_SEGMENT, MV_OUTPOINT, MV_BUDGET, MV_EXCHANGE, MV_COUNT };
static const char *const mv_names[MV_COUNT] = {
  "keep", "swap", "recompute", "earlier", "later", "algorithm", "segment",
  "swap-out point", "schedule budget", "exchange"
};

/* PoocH's plan in the parallel start (start_parallel), from its thread:
 * while PoocH plans there, the first thread searches from the best of the
 * other plans. */
struct jt_stop {
  pthread_mutex_t mu;       /* guards np_ready, np_fatal, t_np and idx_np
                               (and the peer job's rsv) */
  pthread_cond_t cv;
  int np_ready;             /* t_np and idx_np are set (or the start
                               failed: np_fatal) */
  int np_fatal;
  int rc;                   /* its planner's return */
  int64_t t;                /* its time (INT64_MAX: infeasible) */
  int64_t t_np;             /* the other plans' best: its time, */
  int idx_np, ip;           /* its index and PoocH's in ctx->peers */
  double t_end;             /* when its planner returned (ooc_wall_s()) */
};

struct jt_state {
  ooc_plan cur, best, cand, start;
  ooc_plan placed;          /* the plan before the class sweeps */
  int inited;
  ooc_sim_detail det;
  /* The current plan's program, to measure how much of each candidate's
   * an incremental simulator could skip (the prefix both share). */
  ooc_program prev;
  int prev_ok;
  double skip_sum;
  int64_t skip_n;
  int det_inited;
  uint64_t rng;
  uint8_t *mark;            /* per act, toolkit scratch (all 0) */
  uint8_t *fresh;           /* per act, swapped by a class sweep (all 0) */
  int32_t *acts;            /* acts backward reads (candidates) */
  int32_t n_acts;
  int32_t *conv_steps;      /* steps whose kernel has a choice */
  int32_t n_conv;
  int32_t *sw_s;            /* algorithm sweep: its steps; per step, */
  uint8_t *sw_k;            /* its fastest algorithm and */
  int64_t *sw_gain;         /* what that saves (scratch) */
  int32_t *cuts, *cut_act;  /* the forward's chain cuts (toolkit) */
  int32_t n_cuts;
  int32_t *hot;             /* acts with exposed transfers */
  int64_t *hot_w;           /* their cumulative weights */
  int32_t n_hot;
  int hot_in;               /* hot list from swap-ins (1) or outs (0) */
  uint64_t *step_free;      /* per step: device bytes free as its kernel
                               starts in the plan the hot list is of
                               (UINT64_MAX: none ran) */
  int free_ok;              /* step_free is of a plan */
  ooc_timeline base, tl;    /* schedule budget move: the persistent
                               state, workspaces and gradients; scratch */
  int tl_inited;
  int32_t *order;           /* its swaps by first use (scratch) */
  int32_t cap_order;
  uint64_t events;          /* simulated events of the search so far */
  uint64_t cut;             /* of its simulations, those a cutoff stopped */
  uint64_t bound_skips;     /* evaluations its bound answered, unsimulated */
  int last_bound;           /* eval's last answer was its bound */
  uint64_t max_events;      /* ... and its cap (0: none) */
  int32_t *rin;             /* a recompute's inputs (scratch) */
  int32_t *swap_of;         /* per act: its first swap record, */
  int32_t *swap_nx;         /* per record: the act's next (scratch) */
  int32_t cap_nx;
  int32_t *rc_of, *rc_nx;   /* the same for recompute records */
  int32_t cap_rnx;
  int beside;               /* searching while PoocH plans in another
                               thread (start_parallel): the sweeps take
                               no helper thread */
  double deadline;          /* budget_s's end in ooc_wall_s() (0: none) */
  ooc_reserve rsv;          /* what stopped() keeps back of it */
  int timed_out;            /* stopped() found it passed */
  int start_cut;            /* start_plans: budget_s cut a planner */
  int events_cut;           /* start_plans: start_events cut a planner's
                               search (its metric cut_by_max_events) */
  int64_t t_result;         /* search(): its plan's time */
  const ooc_planner_type *apart;  /* start_plans: the planner whose plan
                                     is kept apart (PoocH), */
  ooc_plan other;           /* its plan (then the other search's), */
  int64_t t_apart;          /* its time (INT64_MAX: none, or infeasible) */
  int idx_apart;            /* and its index in ctx->peers */
  int32_t cap_rin;
  int threads;              /* search(): the option threads (1 or 2) */
};

static int
jt_alloc(void *state, const ooc_planner_ctx *ctx, ooc_err *err)
{
  struct jt_state *st = state;
  const ooc_liveness *lv = ctx->live;
  int32_t a, s;

  st->mark = calloc((size_t)lv->n_acts + 1, 1);
  st->fresh = calloc((size_t)lv->n_acts + 1, 1);
  st->acts = malloc(sizeof(int32_t) * ((size_t)lv->n_acts + 1));
  st->hot = malloc(sizeof(int32_t) * ((size_t)lv->n_acts + 1));
  st->hot_w = malloc(sizeof(int64_t) * ((size_t)lv->n_acts + 1));
  st->conv_steps = malloc(sizeof(int32_t) * ((size_t)lv->n_steps + 1));
  st->sw_s = malloc(sizeof(int32_t) * ((size_t)lv->n_steps + 1));
  st->sw_k = malloc((size_t)lv->n_steps + 1);
  st->sw_gain = malloc(sizeof(int64_t) * ((size_t)lv->n_steps + 1));
  st->cuts = malloc(sizeof(int32_t) * ((size_t)lv->n_steps + 1));
  st->cut_act = malloc(sizeof(int32_t) * ((size_t)lv->n_steps + 1));
  st->cap_rin = ooc_plan_recompute_inputs_max(lv);
  st->rin = malloc(sizeof(int32_t) * ((size_t)st->cap_rin + 1));
  st->swap_of = malloc(sizeof(int32_t) * ((size_t)lv->n_acts + 1));
  st->rc_of = malloc(sizeof(int32_t) * ((size_t)lv->n_acts + 1));
  st->step_free = malloc(sizeof(uint64_t) * ((size_t)lv->n_steps + 1));
  if (st->rin == NULL || st->step_free == NULL || st->swap_of == NULL ||
      st->mark == NULL || st->fresh == NULL || st->rc_of == NULL ||
      st->acts == NULL || st->hot == NULL ||
      st->hot_w == NULL || st->conv_steps == NULL || st->sw_s == NULL ||
      st->sw_k == NULL || st->sw_gain == NULL || st->cuts == NULL ||
      st->cut_act == NULL)
    return ooc_err_set(err, OOC_ENOMEM, "out of memory");
  {
    int32_t n_fwd = 0, n = ooc_kit_chain_cuts(lv, st->cuts, st->cut_act,
                                              &n_fwd, err);
    if (n < 0)
      return n;
    st->n_cuts = n;
  }
  if (ooc_timeline_init(&st->base, lv->n_steps, err) != OOC_OK ||
      ooc_timeline_init(&st->tl, lv->n_steps, err) != OOC_OK)
    return OOC_ENOMEM;
  st->tl_inited = 1;
  ooc_timeline_memory(&st->base, lv, ctx,
                      OOC_TL_PERSISTENT | OOC_TL_WORKSPACE | OOC_TL_GRADS);
  st->inited = 1;
  ooc_program_init(&st->prev);
  if (ooc_plan_init(&st->cur, lv, err) < 0 ||
      ooc_plan_init(&st->best, lv, err) < 0 ||
      ooc_plan_init(&st->cand, lv, err) < 0 ||
      ooc_plan_init(&st->start, lv, err) < 0 ||
      ooc_plan_init(&st->other, lv, err) < 0 ||
      ooc_plan_init(&st->placed, lv, err) < 0)
    return OOC_ENOMEM;
  ooc_sim_detail_init(&st->det);
  st->det_inited = 1;
  for (a = 1; a < lv->n_acts; a++)
    if (lv->act_first_bwd[a] >= 0 && lv->act_last_fwd[a] >= 0 &&
        lv->act_last_fwd[a] < lv->act_first_bwd[a])
      st->acts[st->n_acts++] = a;
  for (s = 0; s < lv->n_steps; s++) {
    const ooc_step *sp = &lv->steps[s];
    if (sp->phase != OOC_PH_UPDATE && sp->layer >= 0 &&
        ooc_algo_has_choice(ctx->model, sp->layer))
      st->conv_steps[st->n_conv++] = s;
  }
  return OOC_OK;
}

static void
jt_free(void *state)
{
  struct jt_state *st = state;

  if (st->inited) {
    ooc_plan_fini(&st->cur);
    ooc_plan_fini(&st->best);
    ooc_plan_fini(&st->cand);
    ooc_plan_fini(&st->start);
    ooc_plan_fini(&st->other);
    ooc_plan_fini(&st->placed);
  }
  if (st->det_inited)
    ooc_sim_detail_fini(&st->det);
  if (st->inited)
    ooc_program_fini(&st->prev);
  if (st->tl_inited) {
    ooc_timeline_fini(&st->base);
    ooc_timeline_fini(&st->tl);
  }
  free(st->order);
  free(st->mark);
  free(st->fresh);
  free(st->swap_nx);
  free(st->rc_of);
  free(st->rc_nx);
  free(st->acts);
  free(st->hot);
  free(st->hot_w);
  free(st->conv_steps);
  free(st->sw_s);
  free(st->sw_k);
  free(st->sw_gain);
  free(st->cuts);
  free(st->cut_act);
  free(st->rin);
  free(st->swap_of);
  free(st->step_free);
}

/* xorshift64* (Vigna 2016): deterministic, no global state. */
static uint64_t
rnd(struct jt_state *st)
{
  st->rng ^= st->rng >> 12;
  st->rng ^= st->rng << 25;
  st->rng ^= st->rng >> 27;
  return st->rng * 2685821657736338717ull;
}

static uint32_t
rnd_below(struct jt_state *st, uint32_t n)
{
  return n > 0 ? (uint32_t)((rnd(st) >> 33) % n) : 0;
}

static double
rnd_unit(struct jt_state *st)
{
  return (double)(rnd(st) >> 11) * (1.0 / 9007199254740992.0);
}

/* Would a plan of time t, by planner ip of ctx->peers, be the start
 * rather than the best of the others (t_np, by idx_np; -1: none): the
 * fastest feasible plan, ties to the registry's order, as start_plans
 * chooses? */
static int
beats(int64_t t, int ip, int64_t t_np, int idx_np)
{
  return t < INT64_MAX &&
         (idx_np < 0 || t < t_np || (t == t_np && ip < idx_np));
}

/* Is PoocH's plan the start? */
static int
pooch_wins(const struct jt_stop *x)
{
  return x->rc == OOC_OK && beats(x->t, x->ip, x->t_np, x->idx_np);
}

/* Should the search stop now: has budget_s run out? */
static int
stopped(struct jt_state *st)
{
  /* Two evaluations are kept back (ooc_reserve): the one that would
   * start now and the result's. */
  if (st->deadline > 0 &&
      ooc_wall_s() + ooc_reserve_s(&st->rsv, 2) >= st->deadline) {
    st->timed_out = 1;
    return 1;
  }
  return 0;
}

/* Remove act a's activation records (its gradient's swaps stay) and keep
 * it. O(records). */
static void
drop_records(ooc_plan *pl, int32_t a)
{
  int32_t i, n = 0;

  for (i = 0; i < pl->n_swaps; i++)
    if (pl->swaps[i].act != a || pl->swaps[i].grad)
      pl->swaps[n++] = pl->swaps[i];
  pl->n_swaps = n;
  n = 0;
  for (i = 0; i < pl->n_recomps; i++)
    if (pl->recomps[i].act != a)
      pl->recomps[n++] = pl->recomps[i];
  pl->n_recomps = n;
  pl->action[a] = OOC_KEEP;
}

/* Pick an activation: from the hot list (by exposed time) or uniformly
 * among those backward reads. -1 when there is none. */
static int32_t
pick_act(struct jt_state *st, int steer)
{
  if (steer && st->n_hot > 0) {
    int64_t x = (int64_t)(rnd_unit(st) * (double)st->hot_w[st->n_hot - 1]);
    int32_t lo = 0, hi = st->n_hot - 1;
    while (lo < hi) {
      int32_t mid = lo + (hi - lo) / 2;
      if (st->hot_w[mid] > x)
        hi = mid;
      else
        lo = mid + 1;
    }
    return st->hot[lo];
  }
  return st->n_acts > 0 ? st->acts[rnd_below(st, (uint32_t)st->n_acts)]
                        : -1;
}

/* dst = src's instructions, waits and args (tensors are the liveness's,
 * the same for every plan). OOC_OK or OOC_ENOMEM. */
static int
prog_copy(ooc_program *dst, const ooc_program *src)
{
#define GROW(arr, n, cap)                                                    \
  do {                                                                       \
    if ((n) > (cap)) {                                                       \
      void *q_ = realloc(dst->arr, (size_t)(n) * sizeof *dst->arr);          \
      if (q_ == NULL)                                                        \
        return OOC_ENOMEM;                                                   \
      dst->arr = q_;                                                         \
      (cap) = (n);                                                           \
    }                                                                        \
  } while (0)
  GROW(instr, src->n_instr, dst->cap_instr);
  GROW(waits, src->n_waits, dst->cap_waits);
  GROW(args, src->n_args, dst->cap_args);
#undef GROW
  if (src->n_instr > 0)
    memcpy(dst->instr, src->instr, (size_t)src->n_instr * sizeof *src->instr);
  if (src->n_waits > 0)
    memcpy(dst->waits, src->waits, (size_t)src->n_waits * sizeof *src->waits);
  if (src->n_args > 0)
    memcpy(dst->args, src->args, (size_t)src->n_args * sizeof *src->args);
  dst->n_instr = src->n_instr;
  dst->n_waits = src->n_waits;
  dst->n_args = src->n_args;
  dst->prologue_end = src->prologue_end;
  return OOC_OK;
}

/* The share of b's timed instructions before the first one that differs
 * from a's (kind, stream, phase, place, algorithm, layer, tensor, waits
 * and arguments): what a simulator that restarted at the first change
 * would not have to run again, at most. */
static double
shared_prefix(const ooc_program *a, const ooc_program *b)
{
  int32_t i, n = a->n_instr < b->n_instr ? a->n_instr : b->n_instr;
  int32_t pe = b->prologue_end;

  if (a->prologue_end != pe || b->n_instr <= pe)
    return 0;
  for (i = 0; i < n; i++) {
    const ooc_instr *x = &a->instr[i], *y = &b->instr[i];
    if (x->kind != y->kind || x->stream != y->stream ||
        x->phase != y->phase || x->where != y->where || x->algo != y->algo ||
        x->layer != y->layer || x->tensor != y->tensor ||
        x->n_waits != y->n_waits || x->n_args != y->n_args ||
        (x->n_waits > 0 &&
         memcmp(a->waits + x->wait_first, b->waits + y->wait_first,
                (size_t)x->n_waits * sizeof *a->waits) != 0) ||
        (x->n_args > 0 &&
         memcmp(a->args + x->arg_first, b->args + y->arg_first,
                (size_t)x->n_args * sizeof *a->args) != 0))
      break;
  }
  if (i < pe)
    return 0;
  return (double)(i - pe) / (double)(b->n_instr - pe);
}

/* qsort's key, per thread (sweep -j plans in several threads). */
static _Thread_local const ooc_swap *sort_sw;
static int
by_need(const void *x, const void *y)
{
  const ooc_swap *a = &sort_sw[*(const int32_t *)x];
  const ooc_swap *b = &sort_sw[*(const int32_t *)y];
  if (a->in_before != b->in_before)
    return a->in_before < b->in_before ? -1 : 1;
  return a->act < b->act ? -1 : a->act > b->act;
}

/* *p room for n int32s at least (*cap: its room): 0, or OOC_ENOMEM. */
static int
grow_i32(int32_t **p, int32_t *cap, int32_t n)
{
  int32_t *x;

  if (n <= *cap)
    return 0;
  if ((x = realloc(*p, (size_t)n * sizeof *x)) == NULL)
    return OOC_ENOMEM;
  *p = x;
  *cap = n;
  return 0;
}

/* The schedule budget move: every activation swap-in of pl re-timed
 * against a scheduling budget of b bytes, the allocator-aware budget the
 * window planner tunes (schedule-window seed, §3 (d)). On the memory
 * timeline of pl's other decisions (persistent state, workspaces and
 * gradients; activations kept over their lives, swapped ones until their
 * swap-out, recomputed ones outside their gaps, each at its allocator
 * footprint), the swap-ins in order of need each go after the last step
 * before their use at which their bytes would not fit under b (none: as
 * soon as the swap-out allows), as early as b lets them. With only
 * (per act, NULL: all), just the swap-ins of the acts it marks are timed,
 * on the timeline of the others at their own timing. Returns 0, -1 when
 * there is none to time, or OOC_ENOMEM. O(acts + swaps log steps + swaps
 * log swaps). */
static int
retime(struct jt_state *st, const ooc_planner_ctx *ctx, ooc_plan *pl,
       uint64_t b, const uint8_t *only)
{
  const ooc_liveness *lv = ctx->live;
  int32_t a, i, n = 0;

  if (grow_i32(&st->order, &st->cap_order, pl->n_swaps) < 0)
    return OOC_ENOMEM;
  ooc_timeline_copy(&st->tl, &st->base);
  for (a = 1; a < lv->n_acts; a++) {
    int32_t p = ooc_kit_producer(lv, a);
    if (p >= 0 && pl->action[a] == OOC_KEEP && lv->act_bytes[a] > 0)
      ooc_timeline_add(&st->tl, p, lv->act_last[a],
                       (int64_t)ooc_kit_footprint(ctx, lv->act_bytes[a]));
  }
  for (i = 0; i < pl->n_recomps; i++) {
    const ooc_recompute *r = &pl->recomps[i];
    int64_t f = (int64_t)ooc_kit_footprint(ctx, lv->act_bytes[r->act]);
    ooc_timeline_add(&st->tl, ooc_kit_producer(lv, r->act), r->free_after, f);
    ooc_timeline_add(&st->tl, r->before, lv->act_last[r->act], f);
  }
  for (i = 0; i < pl->n_swaps; i++) {
    const ooc_swap *w = &pl->swaps[i];
    int64_t f = (int64_t)ooc_kit_footprint(ctx, lv->act_bytes[w->act]);
    if (w->grad)
      continue;
    ooc_timeline_add(&st->tl, ooc_kit_producer(lv, w->act), w->out_after, f);
    if (w->in_before < 0)
      continue;
    if (only == NULL || only[w->act])
      st->order[n++] = i;
    else
      ooc_timeline_add(&st->tl, (w->in_after >= 0 ? w->in_after
                                                  : w->out_after) + 1,
                       lv->act_last[w->act], f);
  }
  if (n == 0)
    return -1;
  sort_sw = pl->swaps;
  qsort(st->order, (size_t)n, sizeof *st->order, by_need);
  for (i = 0; i < n; i++) {
    ooc_swap *w = &pl->swaps[st->order[i]];
    int64_t f = (int64_t)ooc_kit_footprint(ctx, lv->act_bytes[w->act]);
    int32_t e = ooc_timeline_last_above(&st->tl, w->out_after + 1,
                                        w->in_before - 1, (int64_t)b - f);
    w->in_after = e > w->out_after ? e : -1;
    ooc_timeline_add(&st->tl, w->in_after >= 0 ? w->in_after + 1
                                               : w->out_after + 1,
                     lv->act_last[w->act], f);
  }
  pl->sched_budget = b;
  return 0;
}

static int exchange(struct jt_state *st, const ooc_planner_ctx *ctx,
                    ooc_plan *pl, int32_t a, ooc_err *err);
static int64_t act_rc_ns(const ooc_planner_ctx *ctx, const ooc_plan *pl,
                         int32_t a);
static int64_t act_link_ns(const ooc_planner_ctx *ctx, int32_t a);

/* Apply one random move to pl (a copy of the current plan). Returns the
 * move, or -1 when the drawn move does not apply (nothing changed). */
static int
move(struct jt_state *st, const ooc_planner_ctx *ctx, ooc_plan *pl,
     ooc_err *err)
{
  const ooc_liveness *lv = ctx->live;
  int steer = st->n_hot > 0 && (rnd(st) & 1);
  int m = (int)rnd_below(st, MV_EXCHANGE);  /* an exchange is a steered keep */
  int32_t a, i, s;

  if (steer)   /* exposed transfers: bring in earlier, keep or recompute */
    m = st->hot_in ? (int[]){ MV_EARLIER, MV_EARLIER, MV_KEEP,
                              MV_RECOMP }[rnd_below(st, 4)]
                   : (rnd(st) & 1 ? MV_KEEP : MV_RECOMP);
  if (m == MV_ALGO) {
    int32_t l;
    int ph, cur, k, tries;
    if (st->n_conv == 0)
      return -1;
    s = st->conv_steps[rnd_below(st, (uint32_t)st->n_conv)];
    l = lv->steps[s].layer;
    ph = lv->steps[s].phase == OOC_PH_BWD;
    cur = pl->algo[s];
    for (tries = 0; tries < 4; tries++) {
      k = (int)rnd_below(st, OOC_ALGO_COUNT);
      if (k != cur && ooc_costs_algo_ns(ctx->costs, l, ph, k) >= 0 &&
          (ph || ooc_costs_algo_ns(ctx->costs, l, OOC_PH_RECOMP, k) >= 0)) {
        pl->algo[s] = (uint8_t)k;
        return m;
      }
    }
    return -1;
  }
  if (m == MV_EARLIER || m == MV_LATER) {
    ooc_swap *w = NULL;
    int32_t d = 1 + (int32_t)rnd_below(st, 4);
    if (steer) {
      a = pick_act(st, 1);
      for (i = 0; i < pl->n_swaps; i++)
        if (pl->swaps[i].act == a && !pl->swaps[i].grad)
          w = &pl->swaps[i];
    } else if (pl->n_swaps > 0) {
      w = &pl->swaps[rnd_below(st, (uint32_t)pl->n_swaps)];
    }
    if (w == NULL || w->in_before < 0)
      return -1;
    if (m == MV_EARLIER) {
      if (w->in_after < 0)
        return -1;                      /* already as early as possible */
      w->in_after -= d;
      if (w->in_after <= w->out_after)
        w->in_after = -1;
    } else {
      int32_t from = w->in_after < 0 ? w->out_after : w->in_after;
      if (from + d >= w->in_before)
        return -1;
      w->in_after = from + d;
    }
    return m;
  }
  if (m == MV_BUDGET) {
    /* 1/64 to 4/64 of the budget lower or higher, within [1/2, 1] of it:
     * tighter leaves the allocator room that fragmentation takes, looser
     * brings data in sooner. */
    uint64_t cur = pl->sched_budget ? pl->sched_budget : ctx->budget;
    uint64_t d = ctx->budget / 64 * (1 + rnd_below(st, 4)), b;
    if (rnd(st) & 1)
      b = cur > d && cur - d >= ctx->budget / 2 ? cur - d : ctx->budget / 2;
    else
      b = cur + d <= ctx->budget ? cur + d : ctx->budget;
    if (b == cur)
      return -1;
    i = retime(st, ctx, pl, b, NULL);
    if (i == OOC_ENOMEM)
      return ooc_err_set(err, OOC_ENOMEM, "out of memory"), -1;
    return i < 0 ? -1 : m;
  }
  if (m == MV_OUTPOINT) {
    /* When an activation's swap-out is issued: after its last forward
     * use (the default, freeing it soonest) or up to the step before its
     * swap-in is issued, so that it leaves the link to copies that matter
     * sooner (the tensor stays on the device meanwhile). */
    ooc_swap *w;
    int32_t lo, hi, to;
    if (pl->n_swaps == 0)
      return -1;
    w = &pl->swaps[rnd_below(st, (uint32_t)pl->n_swaps)];
    if (w->grad || w->in_before < 0)
      return -1;
    lo = lv->act_last_fwd[w->act];
    hi = (w->in_after >= 0 ? w->in_after : w->in_before - 1);
    if (lo < 0 || hi <= lo)
      return -1;
    to = lo + (int32_t)rnd_below(st, (uint32_t)(hi - lo + 1));
    if (to == w->out_after)
      return -1;
    w->out_after = to;
    if (w->out_wait >= 0 && w->out_wait <= to)
      w->out_wait = -1;
    return m;
  }
  if (m == MV_SEGMENT) {
    /* A neighbourhood: the forward between two chain cuts (a block or a
     * few) dropped and recomputed from the first cut's checkpoint, as
     * checkpointing does, whatever its activations did before. */
    int32_t i0, i1, lo, hi;
    if (st->n_cuts < 2)
      return -1;
    i0 = (int32_t)rnd_below(st, (uint32_t)st->n_cuts - 1);
    i1 = i0 + 1 + (int32_t)rnd_below(st, 3);
    if (i1 >= st->n_cuts)
      i1 = st->n_cuts - 1;
    lo = st->cuts[i0] + 1;
    hi = st->cuts[i1];
    for (s = lo; s <= hi; s++)
      if (lv->steps[s].layer >= 0) {
        a = lv->layer_act[lv->steps[s].layer];
        if (a > 0 && pl->action[a] != OOC_KEEP)
          drop_records(pl, a);
      }
    if (ooc_kit_recompute_segment(ctx, pl, lo, hi, st->cut_act[i1],
                                  st->mark, err) <= 0)
      return -1;
    return m;
  }
  a = pick_act(st, steer);
  if (a < 0)
    return -1;
  if (m == MV_KEEP) {
    if (pl->action[a] == OOC_KEEP)
      return -1;
    if (steer) {
      int x = exchange(st, ctx, pl, a, err);
      if (x < 0)
        return -1;
      if (x > 0)
        return MV_EXCHANGE;
    }
    drop_records(pl, a);
    return m;
  }
  if (m == MV_SWAP) {
    ooc_swap w = {
      .act = a, .out_after = lv->act_last_fwd[a], .out_wait = -1,
      .in_after = -1, .in_before = lv->act_first_bwd[a], .grad = 0,
    };
    if (pl->action[a] == OOC_SWAP)
      return -1;
    drop_records(pl, a);
    return ooc_plan_add_swap(pl, &w) < 0 ? -1 : m;
  }
  /* MV_RECOMP: a one-step segment at the act's producer. */
  s = ooc_kit_producer(lv, a);
  if (s < 0 || pl->action[a] == OOC_RECOMPUTE)
    return -1;
  drop_records(pl, a);
  if (ooc_kit_recompute_segment(ctx, pl, s, s, -1, st->mark, err) <= 0)
    return -1;
  return m;
}

/* The hot list of plan pl from its detail: activations whose swap-in
 * (else swap-out) the compute stream waited for. */
static void
refresh_hot(struct jt_state *st, const ooc_planner_ctx *ctx)
{
  const ooc_liveness *lv = ctx->live;
  int32_t a;
  int dir;

  st->n_hot = 0;
  for (dir = 1; dir >= 0 && st->n_hot == 0; dir--) {
    int64_t sum = 0;
    for (a = 1; a < lv->n_acts; a++) {
      int32_t t = lv->act_tensor[a];
      int64_t x;
      if (t < 0 || t >= st->det.n_tensors)
        continue;
      x = dir ? st->det.exposed_in_ns[t] : st->det.exposed_out_ns[t];
      if (x > 0) {
        sum += x;
        st->hot[st->n_hot] = a;
        st->hot_w[st->n_hot++] = sum;
      }
    }
    st->hot_in = dir;
  }
}

/* step_free from the detail of the plan just simulated (its program in
 * ctx->scratch): per step, the free device memory as its forward or
 * backward kernel started. O(instructions + steps). */
static void
refresh_free(struct jt_state *st, const ooc_planner_ctx *ctx)
{
  const ooc_liveness *lv = ctx->live;
  const ooc_program *p = ctx->scratch;
  int32_t i, s;

  for (s = 0; s < lv->n_steps; s++)
    st->step_free[s] = UINT64_MAX;
  for (i = p->prologue_end; i < p->n_instr && i < st->det.n_instr; i++) {
    const ooc_instr *in = &p->instr[i];
    if (in->kind != OOC_I_COMPUTE || in->layer < 0 ||
        in->layer >= lv->n_layers || st->det.start_ns[i] < 0)
      continue;
    if (in->phase == OOC_PH_FWD)
      s = lv->fwd_step[in->layer];
    else if (in->phase == OOC_PH_BWD)
      s = lv->bwd_step[in->layer];
    else
      continue;
    if (s >= 0 && st->det.free_bytes[i] < st->step_free[s])
      st->step_free[s] = st->det.free_bytes[i];
  }
  st->free_ok = 1;
}

/* eval()'s counters for an answer (rc, r, its error e) of the oracle:
 * the evaluations its bound answered, the events simulated and the runs
 * a cutoff stopped; a fatal error (out of memory) into *fatal and err.
 * Its time, INT64_MAX when infeasible or not valid. */
static int64_t
eval_taken(struct jt_state *st, int rc, const ooc_sim_result *r,
           const ooc_err *e, int *fatal, ooc_err *err)
{
  if (rc == OOC_OK && r->cut && r->iterations == 0) {
    st->last_bound = 1;         /* answered by its bound, not run */
    st->bound_skips++;
  } else if (rc == OOC_OK) {
    st->events += ooc_planner_events(r);
    st->cut += r->cut;
  }
  if (rc == OOC_ENOMEM) {
    *fatal = 1;
    if (err != NULL)
      *err = *e;
  }
  return rc == OOC_OK && r->feasible ? r->iteration_ns : INT64_MAX;
}

/* Evaluate pl: its iteration time, or INT64_MAX when it is infeasible or
 * rejected (a bad record, a rule the simulator enforces). A caller that
 * only asks whether pl takes at most cutoff ns passes it (0: none; not
 * with d): a plan whose bound is above it is not simulated (st->last_bound
 * says so), a run certain to take longer stops early
 * (ooc_sim_run_cutoff), and its time is then a lower bound above cutoff,
 * which the caller rejects as it would the whole run's. */
static int64_t
eval(struct jt_state *st, const ooc_planner_ctx *ctx, const ooc_plan *pl,
     ooc_sim_detail *d, int64_t cutoff, int *fatal, ooc_err *err)
{
  ooc_sim_result r;
  ooc_err e;
  double t0;
  int rc;

  ooc_err_clear(&e);
  st->last_bound = 0;
  t0 = st->deadline > 0 ? ooc_wall_s() : 0;
  rc = d != NULL ? ooc_planner_evaluate_detail(ctx, pl, &r, d, &e)
                 : ooc_planner_evaluate_cutoff(ctx, pl, cutoff, &r, &e);
  if (st->deadline > 0)
    ooc_reserve_timed(&st->rsv, t0);
  return eval_taken(st, rc, &r, &e, fatal, err);
}

/* What is left of budget_s (at least a microsecond: 0 would be none), as
 * a planner's budget_s option into buf. */
static void
budget_left(double dl, char *buf, size_t n)
{
  double left = dl - ooc_wall_s();

  snprintf(buf, n, "%.6f", left > 1e-6 ? left : 1e-6);
}

/* Did start_events cut the search of the planner that made p (PoocH's
 * metric cut_by_max_events)? */
static int
events_cut(const ooc_plan *p)
{
  for (int m = 0; m < p->n_metrics; m++)
    if (strcmp(p->metrics[m].name, "cut_by_max_events") == 0)
      return p->metrics[m].value > 0;
  return 0;
}

/* Every other planner's plan (but skip's); the fastest feasible one
 * into st->start (ties: the registry's order), but st->apart's (NULL:
 * none), which goes to st->other, timed whole, its time in st->t_apart
 * (INT64_MAX: no plan, or not feasible) and its index in st->idx_apart.
 * With a deadline dl (ooc_wall_s(); 0: none) planners that take
 * budget_s get what is left of it, and none starts after it once one
 * plan fits. Returns its time (INT64_MAX: none feasible; st->start then
 * holds the first plan any planner made), its planner's name and its
 * index in ctx->peers (-1: no planner made one). */
static int64_t
start_plans(struct jt_state *st, const ooc_planner_ctx *ctx, int64_t sims,
            int64_t events, int one_thread, double dl,
            const ooc_planner_type *skip, const char **from, int *idx,
            int *fatal, ooc_err *err)
{
  char sims_s[24], events_s[24], budget_s[32];
  ooc_kv kv[4];
  int64_t best = INT64_MAX;
  int i, have = 0;

  snprintf(sims_s, sizeof sims_s, "%lld", (long long)sims);
  snprintf(events_s, sizeof events_s, "%lld", (long long)events);
  *from = "none";
  *idx = -1;
  st->t_apart = INT64_MAX;
  st->idx_apart = -1;
  for (i = 0; ctx->peers != NULL && ctx->peers[i] != NULL && !*fatal;
       i++) {
    const ooc_planner_type *t = ctx->peers[i];
    ooc_planner_ctx sub = *ctx;
    ooc_err e;
    int64_t x;
    int rc, timed;
    if (strcmp(t->name, "joint") == 0 || t == skip)
      continue;
    /* budget_s spent: no more planners once one plan fits. */
    if (dl > 0 && ((have && best < INT64_MAX) || st->t_apart < INT64_MAX) &&
        ooc_wall_s() >= dl) {
      st->timed_out = 1;
      break;
    }
    sub.n_opts = 0;
    if (sims > 0 && ooc_planner_accepts(t, "max_sims"))
      kv[sub.n_opts++] = (ooc_kv){ .key = "max_sims", .value = sims_s };
    if (events > 0 && ooc_planner_accepts(t, "max_events"))
      kv[sub.n_opts++] = (ooc_kv){ .key = "max_events", .value = events_s };
    if (one_thread && ooc_planner_accepts(t, "threads"))
      kv[sub.n_opts++] = (ooc_kv){ .key = "threads", .value = "1" };
    timed = dl > 0 && ooc_planner_accepts(t, "budget_s");
    if (timed) {
      budget_left(dl, budget_s, sizeof budget_s);
      kv[sub.n_opts++] = (ooc_kv){ .key = "budget_s", .value = budget_s };
    }
    sub.opts = sub.n_opts > 0 ? kv : NULL;
    ooc_err_clear(&e);
    rc = ooc_planner_run(t, &sub, &st->cand, ctx->scratch, &e);
    if (timed && ooc_wall_s() >= dl)
      st->start_cut = 1;
    if (rc == OOC_OK && events > 0 && events_cut(&st->cand))
      st->events_cut = 1;
    if (rc == OOC_ENOMEM) {
      *fatal = 1;
      *err = e;
      break;
    }
    if (rc != OOC_OK)
      continue;               /* that planner has no plan here */
    if (t == st->apart) {
      st->t_apart = eval(st, ctx, &st->cand, NULL, 0, fatal, err);
      st->idx_apart = i;
      if (ooc_plan_copy(&st->other, &st->cand) < 0) {
        *fatal = 1;
        return ooc_err_set(err, OOC_ENOMEM, "out of memory");
      }
      continue;
    }
    x = eval(st, ctx, &st->cand, NULL, have ? best - 1 : 0, fatal, err);
    if (!have || x < best) {
      if (ooc_plan_copy(&st->start, &st->cand) < 0) {
        *fatal = 1;
        return ooc_err_set(err, OOC_ENOMEM, "out of memory");
      }
      *from = t->name;
      *idx = i;
      have = 1;
      best = x;
    }
  }
  return best;
}

static _Thread_local const int64_t *sort_gain;
static int
by_gain(const void *x, const void *y)
{
  int32_t i = *(const int32_t *)x, j = *(const int32_t *)y;

  if (sort_gain[i] != sort_gain[j])
    return sort_gain[i] > sort_gain[j] ? -1 : 1;
  return (i > j) - (i < j);
}

/* What a sweep applies to a copy of st->best for item i (of st->sw_s),
 * and what it then does to the whole copy (NULL: nothing): 0, or
 * OOC_ENOMEM. */
typedef int (*sweep_fn)(struct jt_state *st, const ooc_planner_ctx *ctx,
                        ooc_plan *pl, int32_t i, ooc_err *err);
typedef int (*sweep_fin)(struct jt_state *st, const ooc_planner_ctx *ctx,
                         ooc_plan *pl, ooc_err *err);

/* A candidate of sweep() simulated by the helper thread (base/worker.h)
 * on a simulator of its own: the oracle's answer, for the caller to take
 * (eval_taken) when it is the next candidate after all. */
struct sweep_job {
  const ooc_planner_ctx *ctx;
  const ooc_plan *pl;
  int64_t cutoff;
  ooc_sim_result r;
  int rc;
  ooc_err e;
};

static void
sweep_job_run(void *arg)
{
  struct sweep_job *j = arg;

  ooc_err_clear(&j->e);
  j->rc = ooc_planner_evaluate_cutoff(j->ctx, j->pl, j->cutoff, &j->r,
                                      &j->e);
}

/* pl := st->best with the items st->sw_s[lo, hi) applied, then fin. */
static int
sweep_build(struct jt_state *st, const ooc_planner_ctx *ctx, sweep_fn apply,
            sweep_fin fin, int32_t lo, int32_t hi, ooc_plan *pl,
            ooc_err *err)
{
  int32_t i;
  int rc;

  if (ooc_plan_copy(pl, &st->best) < 0)
    return ooc_err_set(err, OOC_ENOMEM, "out of memory");
  for (i = lo; i < hi; i++)
    if ((rc = apply(st, ctx, pl, st->sw_s[i], err)) < 0)
      return rc;
  return fin != NULL ? fin(st, ctx, pl, err) : OOC_OK;
}

/* The items st->sw_s[lo, hi) applied on top of st->best: all at once,
 * taken when the simulated plan is faster; when it is not (a workspace
 * does not fit at its step, the memory it takes delays a transfer, a
 * recompute lands on the critical path), each half again, down to single
 * items. Group testing: O(k log n) simulations when k of the n do not
 * pay, at most 2n - 1. The ranges left to try wait on a stack, the first
 * half on top (depth-first, as a recursion would take them).
 * With threads=2, outside the search beside PoocH and budget_s, while a
 * candidate is simulated a helper thread simulates the one that comes
 * next should it fail (its first half, else the range on top of the
 * stack), on the same base with the same cutoff, on its own simulator:
 * taken when it is indeed next, as this thread would have made it (its
 * counters in order, the caps checked before it), dropped (and not
 * counted among the runs) when the first is kept. The same sweep and
 * plan, sooner. */
enum { SWEEP_STACK = 2 * 66 };

static int
sweep(struct jt_state *st, const ooc_planner_ctx *ctx, sweep_fn apply,
      sweep_fin fin, int32_t lo0, int32_t hi0, int64_t cap, int64_t *t_best,
      int64_t *sims, int32_t *changed, int *fatal, ooc_err *err)
{
  int32_t stk[SWEEP_STACK], n_stk = 0, slo = -1, shi = -1;
  struct sweep_job job;
  ooc_worker wk;
  ooc_sim *hsim = NULL;
  ooc_program hscratch;
  ooc_planner_ctx hctx;
  ooc_plan spec_pl;
  uint64_t runs0 = 0, held = 0, dropped = 0;
  int spec = 0, have = 0, pl_inited = 0, rc = OOC_OK;

  if (lo0 >= hi0)
    return OOC_OK;
  ooc_program_init(&hscratch);
  if (st->threads == 2 && !st->beside && st->deadline == 0 &&
      ctx->sim != NULL && hi0 - lo0 > 1) {
    ooc_err e;
    ooc_err_clear(&e);
    if (ooc_plan_init(&spec_pl, ctx->live, &e) == OOC_OK) {
      pl_inited = 1;
      if (ooc_sim_clone(ctx->sim, &hsim, &e) == OOC_OK &&
          ooc_worker_start(&wk)) {
        spec = 1;
        hctx = *ctx;
        hctx.sim = hsim;
        hctx.scratch = &hscratch;
        runs0 = ooc_sim_runs(hsim);
      }
    }
    /* (Else the sweep runs alone: the same result.) */
  }
  stk[n_stk++] = lo0;
  stk[n_stk++] = hi0;
  while (n_stk > 0) {
    int32_t hi = stk[--n_stk], lo = stk[--n_stk], mid;
    const ooc_plan *cand;
    int64_t x;

    if (*sims >= cap ||
        (st->max_events > 0 && st->events >= st->max_events) || stopped(st))
      continue;
    if (have && slo == lo && shi == hi) {
      /* The helper's run of this very candidate. */
      have = 0;
      ooc_worker_used();
      st->last_bound = 0;
      x = eval_taken(st, job.rc, &job.r, &job.e, fatal, err);
      cand = &spec_pl;
    } else {
      int32_t nlo = -1, nhi = -1;
      int posted = 0;
      if (have) {
        dropped += held;
        have = 0;
      }
      if ((rc = sweep_build(st, ctx, apply, fin, lo, hi, &st->cand,
                            err)) < 0)
        break;
      /* Next should this one fail: its first half, else the top. */
      if (hi - lo > 1) {
        nlo = lo;
        nhi = lo + (hi - lo) / 2;
      } else if (n_stk > 0) {
        nlo = stk[n_stk - 2];
        nhi = stk[n_stk - 1];
      }
      if (spec && nlo >= 0) {
        if ((rc = sweep_build(st, ctx, apply, fin, nlo, nhi, &spec_pl,
                              err)) < 0)
          break;
        job = (struct sweep_job){ .ctx = &hctx, .pl = &spec_pl,
                                  .cutoff = *t_best - 1 };
        held = ooc_sim_runs(hsim);
        ooc_worker_post(&wk, sweep_job_run, &job);
        posted = 1;
      }
      x = eval(st, ctx, &st->cand, NULL, *t_best - 1, fatal, err);
      if (posted && ooc_worker_collect(&wk)) {
        have = 1;
        slo = nlo;
        shi = nhi;
        held = ooc_sim_runs(hsim) - held;
      }
      cand = &st->cand;
    }
    (*sims)++;
    if (*fatal) {
      rc = err->code < 0 ? err->code : OOC_ENOMEM;
      break;
    }
    if (x < *t_best) {
      if (ooc_plan_copy(&st->best, cand) < 0) {
        rc = ooc_err_set(err, OOC_ENOMEM, "out of memory");
        break;
      }
      *t_best = x;
      *changed += hi - lo;
      if (have) {
        dropped += held;
        have = 0;
      }
      continue;
    }
    if (hi - lo == 1)
      continue;
    mid = lo + (hi - lo) / 2;
    stk[n_stk++] = mid;
    stk[n_stk++] = hi;
    stk[n_stk++] = lo;
    stk[n_stk++] = mid;
  }
  if (have)
    dropped += held;
  if (spec) {
    ooc_worker_stop(&wk);
    ooc_sim_add_runs(ctx->sim, ooc_sim_runs(hsim) - runs0 - dropped);
  }
  ooc_sim_free(hsim);
  ooc_program_fini(&hscratch);
  if (pl_inited)
    ooc_plan_fini(&spec_pl);
  return rc;
}

/* Step s at its fastest algorithm (st->sw_k). */
static int
apply_algo(struct jt_state *st, const ooc_planner_ctx *ctx, ooc_plan *pl,
           int32_t s, ooc_err *err)
{
  (void)ctx;
  (void)err;
  pl->algo[s] = st->sw_k[s];
  return OOC_OK;
}

/* Each convolution step of st->best whose fastest offered algorithm (its
 * recompute too, for a forward) is faster than its current one, by
 * decreasing saving, through sweep(). */
static int
algo_sweep(struct jt_state *st, const ooc_planner_ctx *ctx, int64_t cap,
           int64_t *t_best, int64_t *sims, int32_t *changed, int *fatal,
           ooc_err *err)
{
  const ooc_liveness *lv = ctx->live;
  int32_t i, n = 0;

  for (i = 0; i < st->n_conv; i++) {
    int32_t s = st->conv_steps[i], l = lv->steps[s].layer;
    int64_t tc = ooc_costs_algo_ns(ctx->costs, l, lv->steps[s].phase,
                                   st->best.algo[s]), tb = -1;
    int kb = ooc_kit_fastest_algo(ctx, s, UINT64_MAX, 1, &tb);
    if (tc >= 0 && kb >= 0 && tb < tc) {
      st->sw_gain[s] = tc - tb;
      st->sw_k[s] = (uint8_t)kb;
      st->sw_s[n++] = s;
    }
  }
  sort_gain = st->sw_gain;
  qsort(st->sw_s, (size_t)n, sizeof *st->sw_s, by_gain);
  return sweep(st, ctx, apply_algo, NULL, 0, n, cap, t_best, sims, changed,
               fatal, err);
}

/* A recompute reads its inputs at its step: an input swapped out comes
 * back by then (its swap-in as far ahead of that step as it was of its
 * own; not when its swap-out comes later), one recomputed is rebuilt by
 * then too (its record moved before the reader's when it came after:
 * the lowering runs a step's recomputes in record order), and so on down
 * the chain. Run over every record of pl once a sweep has changed it.
 * O(records x their inputs + acts + swaps) per pass. */
static int
fix_inputs(struct jt_state *st, const ooc_planner_ctx *ctx, ooc_plan *pl)
{
  const ooc_liveness *lv = ctx->live;
  int32_t i, j, k, n, a;
  int changed = 1, reorder = 0;

  if (grow_i32(&st->swap_nx, &st->cap_nx, pl->n_swaps) < 0 ||
      grow_i32(&st->rc_nx, &st->cap_rnx, pl->n_recomps) < 0)
    return OOC_ENOMEM;
  for (a = 0; a < lv->n_acts; a++)
    st->swap_of[a] = -1;
  for (k = pl->n_swaps - 1; k >= 0; k--)      /* per act, its records */
    if (!pl->swaps[k].grad) {
      st->swap_nx[k] = st->swap_of[pl->swaps[k].act];
      st->swap_of[pl->swaps[k].act] = k;
    }
  while (changed) {
    changed = 0;
    for (a = 0; a < lv->n_acts; a++)
      st->rc_of[a] = -1;
    for (k = pl->n_recomps - 1; k >= 0; k--) {  /* per act, its records */
      st->rc_nx[k] = st->rc_of[pl->recomps[k].act];
      st->rc_of[pl->recomps[k].act] = k;
    }
    for (i = 0; i < pl->n_recomps; i++) {
      const ooc_recompute *r = &pl->recomps[i];
      n = ooc_plan_recompute_inputs(lv, r->act, r->free_after, st->rin,
                                    st->cap_rin);
      for (j = 0; j < n && j < st->cap_rin; j++) {
        a = st->rin[j];
        if (pl->action[a] == OOC_SWAP && st->swap_of[a] >= 0) {
          /* The record (an act may have several) it is out by then. */
          for (k = st->swap_of[a]; k >= 0; k = st->swap_nx[k]) {
            ooc_swap *w = &pl->swaps[k];
            int32_t d;
            if (w->in_before < 0 || w->in_before <= r->before ||
                r->before <= w->out_after)
              continue;
            d = w->in_before - r->before;
            w->in_before = r->before;
            if (w->in_after >= 0)
              w->in_after = w->in_after - d > w->out_after ? w->in_after - d
                                                           : -1;
          }
        } else if (pl->action[a] == OOC_RECOMPUTE) {
          for (k = st->rc_of[a]; k >= 0; k = st->rc_nx[k]) {
            ooc_recompute *q = &pl->recomps[k];
            if (k != i && q->before > r->before &&
                q->free_after < r->before) {
              q->before = r->before;
              changed = 1;
              reorder |= k > i;
            }
          }
        }
      }
    }
    if (reorder) {
      /* A record moved to an earlier step than a later one's: by step,
       * then in forward order (an input's producer comes first), stably
       * (insertion; records of one act keep their order). */
      for (i = 1; i < pl->n_recomps; i++) {
        ooc_recompute x = pl->recomps[i];
        int32_t px = ooc_kit_producer(lv, x.act);
        for (k = i - 1; k >= 0; k--) {
          const ooc_recompute *q = &pl->recomps[k];
          if (q->before < x.before ||
              (q->before == x.before && ooc_kit_producer(lv, q->act) <= px))
            break;
          pl->recomps[k + 1] = *q;
        }
        pl->recomps[k + 1] = x;
      }
      reorder = 0;
    }
  }
  return OOC_OK;
}

/* After a class sweep's changes, the recomputes' inputs back in time
 * (fin_recomp); and, after swaps added, their swap-ins timed as early as
 * the plan's scheduling budget allows on the memory timeline of the rest
 * (each comes back right after its swap-out otherwise, holding its memory
 * all along). The plan's other swap-ins keep their timing: a start
 * plan's, window's say, was tuned to where its allocator fragments, and
 * re-timing them all by bytes alone undid that (resnet50 b1504 on
 * v100-pcie3: every candidate 20% slower). Timing moves no swap-in past
 * its step, so the inputs stay in time. */
static int
fin_recomp(struct jt_state *st, const ooc_planner_ctx *ctx, ooc_plan *pl,
           ooc_err *err)
{
  return fix_inputs(st, ctx, pl) < 0
             ? ooc_err_set(err, OOC_ENOMEM, "out of memory")
             : OOC_OK;
}

static int
fin_swap(struct jt_state *st, const ooc_planner_ctx *ctx, ooc_plan *pl,
         ooc_err *err)
{
  int32_t i;
  int rc;

  if (fix_inputs(st, ctx, pl) < 0)
    return ooc_err_set(err, OOC_ENOMEM, "out of memory");
  rc = retime(st, ctx, pl, pl->sched_budget ? pl->sched_budget
                                            : ctx->budget, st->fresh);
  for (i = 0; i < pl->n_swaps; i++)
    st->fresh[pl->swaps[i].act] = 0;
  return rc == OOC_ENOMEM ? ooc_err_set(err, OOC_ENOMEM, "out of memory")
                          : OOC_OK;
}

/* The exchange, a keep steered by the oracle's peak step: the hot act a
 * (its swap-in or swap-out exposed) is to stay resident from its last
 * forward use to its first backward one, but at the step of that span
 * with the least free memory in the current plan (step_free) its bytes do
 * not fit by `need`: so, in the same move, the kept activation resident
 * across that step whose bytes cover `need` and whose recompute takes
 * least time, and less than its bytes on the link, is recomputed (the
 * toolkit's one-step segment). A plain keep there would most likely not
 * fit, and the annealing would have to find both halves one at a time
 * through a slower or infeasible plan. (Swapping that activation instead
 * made more plans slower than faster: where a transfer is exposed the
 * link is busy.) Returns 1 (pl changed: a kept, the other recomputed), 0
 * when a's keep fits at its peak step or no activation qualifies (pl
 * unchanged or a kept alone: the caller makes it a plain keep), or
 * OOC_ENOMEM. O(acts + steps + the candidates' layers). */
static int
exchange(struct jt_state *st, const ooc_planner_ctx *ctx, ooc_plan *pl,
         int32_t a, ooc_err *err)
{
  const ooc_liveness *lv = ctx->live;
  int32_t lo = lv->act_last_fwd[a] + 1, hi = lv->act_first_bwd[a] - 1;
  int32_t s, p = -1, k, b = -1, ps, r;
  int64_t best = 0;
  uint64_t fa, need;

  if (!st->free_ok || lv->act_last_fwd[a] < 0 || hi < lo)
    return 0;
  for (s = lo; s <= hi; s++)
    if (st->step_free[s] != UINT64_MAX &&
        (p < 0 || st->step_free[s] < st->step_free[p]))
      p = s;
  fa = ooc_kit_footprint(ctx, lv->act_bytes[a]);
  if (p < 0 || fa <= st->step_free[p])
    return 0;
  need = fa - st->step_free[p];
  for (k = 0; k < st->n_acts; k++) {
    int32_t c = st->acts[k];
    int64_t t;
    if (c == a || pl->action[c] != OOC_KEEP || lv->act_forced[c] ||
        lv->act_last_fwd[c] >= p || lv->act_first_bwd[c] <= p ||
        ooc_kit_footprint(ctx, lv->act_bytes[c]) < need ||
        ooc_kit_producer(lv, c) < 0)
      continue;
    t = act_rc_ns(ctx, pl, c);
    if (t < act_link_ns(ctx, c) && (b < 0 || t < best)) {
      best = t;
      b = c;
    }
  }
  if (b < 0)
    return 0;
  drop_records(pl, a);
  ps = ooc_kit_producer(lv, b);
  r = ooc_kit_recompute_segment(ctx, pl, ps, ps, -1, st->mark, err);
  return r < 0 ? r : r > 0;
}

/* Every swap-in re-timed as early as the plan's scheduling budget allows
 * (fin_retime; with the inputs' fix first, fin_classes: the class sweeps'
 * second pass). */
static int
fin_retime(struct jt_state *st, const ooc_planner_ctx *ctx, ooc_plan *pl,
           ooc_err *err)
{
  if (retime(st, ctx, pl, pl->sched_budget ? pl->sched_budget : ctx->budget,
             NULL) == OOC_ENOMEM)
    return ooc_err_set(err, OOC_ENOMEM, "out of memory");
  return OOC_OK;
}

static int
fin_classes(struct jt_state *st, const ooc_planner_ctx *ctx, ooc_plan *pl,
            ooc_err *err)
{
  int32_t i;

  for (i = 0; i < pl->n_swaps; i++)
    st->fresh[pl->swaps[i].act] = 0;
  if (fix_inputs(st, ctx, pl) < 0)
    return ooc_err_set(err, OOC_ENOMEM, "out of memory");
  return fin_retime(st, ctx, pl, err);
}

/* The re-timing candidate's item: nothing (its finish does it all). */
static int
apply_none(struct jt_state *st, const ooc_planner_ctx *ctx, ooc_plan *pl,
           int32_t a, ooc_err *err)
{
  (void)st;
  (void)ctx;
  (void)pl;
  (void)a;
  (void)err;
  return OOC_OK;
}

/* Activation a, swapped, recomputed instead: a one-step segment at its
 * producer (as the recompute move does), rebuilt by the step its swap-in
 * was for. */
static int
apply_recomp(struct jt_state *st, const ooc_planner_ctx *ctx, ooc_plan *pl,
             int32_t a, ooc_err *err)
{
  int32_t s = ooc_kit_producer(ctx->live, a);
  int32_t r0 = pl->n_recomps, i, need = -1;

  if (s < 0 || pl->action[a] != OOC_SWAP)
    return OOC_OK;
  for (i = 0; i < pl->n_swaps; i++)
    if (pl->swaps[i].act == a && !pl->swaps[i].grad)
      need = pl->swaps[i].in_before;
  drop_records(pl, a);
  if (ooc_kit_recompute_segment(ctx, pl, s, s, -1, st->mark, err) < 0)
    return ooc_err_set(err, OOC_ENOMEM, "out of memory");
  for (i = r0; i < pl->n_recomps; i++)
    if (need >= 0 && need < pl->recomps[i].before)
      pl->recomps[i].before = need;
  return OOC_OK;
}

/* Activation a, recomputed, swapped instead: out after its last forward
 * use, back (as early as the D2H allows) for its first backward use. */
static int
apply_swap(struct jt_state *st, const ooc_planner_ctx *ctx, ooc_plan *pl,
           int32_t a, ooc_err *err)
{
  const ooc_liveness *lv = ctx->live;
  ooc_swap w = {
    .act = a, .out_after = lv->act_last_fwd[a], .out_wait = -1,
    .in_after = -1, .in_before = lv->act_first_bwd[a], .grad = 0,
  };

  if (pl->action[a] != OOC_RECOMPUTE)
    return OOC_OK;
  drop_records(pl, a);
  st->fresh[a] = 1;
  return ooc_plan_add_swap(pl, &w) < 0
             ? ooc_err_set(err, OOC_ENOMEM, "out of memory")
             : OOC_OK;
}

/* The forward time of act a's layers at their steps' algorithms (what
 * recomputing it re-runs), and its bytes' time on the link (ns), at the
 * slower direction's rate while both run. */
static int64_t
act_rc_ns(const ooc_planner_ctx *ctx, const ooc_plan *pl, int32_t a)
{
  const ooc_liveness *lv = ctx->live;
  int64_t rc = 0;
  int32_t k;

  for (k = 0; k < lv->act_nlayers[a]; k++) {
    int32_t l = lv->act_layers[lv->act_lfirst[a] + k];
    int32_t f = lv->fwd_step[l];
    int64_t t = f >= 0 ? ooc_costs_algo_ns(ctx->costs, l, OOC_PH_RECOMP,
                                           pl->algo[f])
                       : -1;
    rc += t > 0 ? t : 0;
  }
  return rc;
}

static int64_t
act_link_ns(const ooc_planner_ctx *ctx, int32_t a)
{
  const ooc_hw *hw = ctx->hw;
  double h2d = hw->duplex_h2d_Bps > 0 ? hw->duplex_h2d_Bps : hw->h2d_Bps;
  double d2h = hw->duplex_d2h_Bps > 0 ? hw->duplex_d2h_Bps : hw->d2h_Bps;
  double rate = h2d < d2h ? h2d : d2h;

  return rate > 0 ? (int64_t)((double)ctx->live->act_bytes[a] / rate * 1e9)
                  : INT64_MAX / 4;
}

/* The class sweeps, through sweep(): what st->best swaps, recomputed
 * instead where its forward kernels take less time than its bytes on the
 * link (cheap memory-bound layers, batch-norm, activations, adds, rebuild
 * at the device memory's rate, far above the link's), by decreasing
 * difference (to = OOC_RECOMPUTE); what it recomputes, swapped instead,
 * by decreasing recompute time less link time, the costliest first (to =
 * OOC_SWAP): checkpointing's plans leave the link idle. One move at a
 * time the annealing finds few of these. full: every swap-in re-timed
 * after the changes (fin_classes), else only the swaps added (fin_recomp,
 * fin_swap). */
static int
class_sweep(struct jt_state *st, const ooc_planner_ctx *ctx, int to,
            int full, int64_t cap, int64_t *t_best, int64_t *sims,
            int32_t *changed, int *fatal, ooc_err *err)
{
  const ooc_liveness *lv = ctx->live;
  int32_t a, n = 0;

  for (a = 1; a < lv->n_acts; a++) {
    int64_t rc, link;
    if (lv->act_first_bwd[a] < 0 || lv->act_last_fwd[a] < 0 ||
        ooc_kit_producer(lv, a) < 0 ||
        st->best.action[a] != (to == OOC_RECOMPUTE ? OOC_SWAP
                                                   : OOC_RECOMPUTE))
      continue;
    rc = act_rc_ns(ctx, &st->best, a);
    link = act_link_ns(ctx, a);
    if (to == OOC_RECOMPUTE ? rc < link : rc > 0) {
      st->sw_gain[a] = to == OOC_RECOMPUTE ? link - rc : rc - link;
      st->sw_s[n++] = a;
    }
  }
  sort_gain = st->sw_gain;
  qsort(st->sw_s, (size_t)n, sizeof *st->sw_s, by_gain);
  return sweep(st, ctx, to == OOC_RECOMPUTE ? apply_recomp : apply_swap,
               full ? fin_classes
               : to == OOC_RECOMPUTE ? fin_recomp : fin_swap,
               0, n, cap, t_best, sims, changed, fatal, err);
}

/* Both class sweeps, twice: the swaps they add timed alone, then every
 * swap-in re-timed (fin_classes), which the plan's own timing sometimes
 * beats and sometimes not; each pass capped at max_evals / 2 and / 4
 * simulations. Before the annealing and again after it (the annealed
 * plan's memory leaves room for changes the swept one did not). */
static int
class_sweeps(struct jt_state *st, const ooc_planner_ctx *ctx,
             int64_t max_evals, int64_t *t_best, int64_t *rc_sims,
             int64_t *sw_sims, int32_t *rc_changed, int32_t *sw_changed,
             int *fatal, ooc_err *err)
{
  int pass, rc;

  for (pass = 0; pass < 2; pass++)
    if ((rc = class_sweep(st, ctx, OOC_RECOMPUTE, pass,
                          *rc_sims + max_evals / 2, t_best, rc_sims,
                          rc_changed, fatal, err)) < 0 ||
        (rc = class_sweep(st, ctx, OOC_SWAP, pass, *sw_sims + max_evals / 4,
                          t_best, sw_sims, sw_changed, fatal, err)) < 0)
      return rc;
  return OOC_OK;
}

/* The placement sweep: when st->best offloads parameters (it started
 * from zero-offload's plan), keep the layers with the longest CPU steps
 * on the device instead, as many as still fit: the binary search for the
 * largest k whose zero-offload plan with device_layers=k (the
 * activations planned again in the room the other layers' state leaves)
 * is feasible and at least as fast, O(log n) plans and simulations. The
 * CPU step is what such a plan waits for; a layer on the device takes
 * its gradients and state back into memory and its step onto the GPU at
 * the HBM's rate, and the activations give up the room; skipped (after
 * one simulation) when the incumbent's compute stream waits for nothing
 * (busy for all but 0.1% of its iteration). */
static int
place_sweep(struct jt_state *st, const ooc_planner_ctx *ctx, int64_t cap,
            int64_t *t_best, int64_t *sims, int32_t *changed, int *fatal,
            ooc_err *err)
{
  const ooc_model *m = ctx->model;
  const ooc_planner_type *zo = NULL;
  int32_t l, n = 0, lo = 0, hi, mid;
  char v[24];
  ooc_kv kv = { .key = "device_layers", .value = v };
  int64_t x;
  int i;

  for (i = 0; ctx->peers != NULL && ctx->peers[i] != NULL; i++)
    if (strcmp(ctx->peers[i]->name, "zero-offload") == 0)
      zo = ctx->peers[i];
  for (l = 0; l < m->n_layers; l++)
    n += st->best.param_where[l] != OOC_PARAM_DEVICE;
  if (zo == NULL || n == 0)
    return OOC_OK;
  {
    /* A layer brought back adds its update to the compute stream and
     * takes room from the activations; it pays only by shortening CPU
     * steps the iteration waits for. When the compute stream is busy for
     * all but 0.1% of the incumbent's iteration, none is in its way. */
    ooc_sim_result r;
    ooc_err e;
    ooc_err_clear(&e);
    if (ooc_planner_evaluate(ctx, &st->best, &r, &e) == OOC_OK) {
      st->events += ooc_planner_events(&r);
      (*sims)++;
      if (r.feasible &&
          r.iteration_ns - r.compute_busy_ns <= r.iteration_ns / 1000)
        return OOC_OK;
    }
  }
  hi = n;
  while (lo < hi && *sims < cap && !stopped(st) &&
         (st->max_events == 0 || st->events < st->max_events)) {
    ooc_planner_ctx sub = *ctx;
    ooc_err e;
    int rc;
    mid = lo + (hi - lo + 1) / 2;
    snprintf(v, sizeof v, "%d", (int)mid);
    sub.opts = &kv;
    sub.n_opts = 1;
    ooc_err_clear(&e);
    rc = ooc_planner_run(zo, &sub, &st->cand, ctx->scratch, &e);
    if (rc == OOC_ENOMEM) {
      *fatal = 1;
      *err = e;
      return rc;
    }
    x = rc == OOC_OK ? eval(st, ctx, &st->cand, NULL, *t_best, fatal, err)
                     : INT64_MAX;
    (*sims)++;
    if (*fatal)
      return err->code < 0 ? err->code : OOC_ENOMEM;
    if (x <= *t_best) {
      if (ooc_plan_copy(&st->best, &st->cand) < 0)
        return ooc_err_set(err, OOC_ENOMEM, "out of memory");
      *t_best = x;
      *changed = mid;
      lo = mid;
    } else {
      hi = mid - 1;
    }
  }
  return OOC_OK;
}

struct jt_opts {
  int64_t max_evals, seed, start_sims, start_events, max_events, sweep;
  int64_t threads;
  double budget_s;
};

/* joint's options into o (their defaults where absent). */
static int
parse_opts(const ooc_planner_ctx *ctx, struct jt_opts *o, ooc_err *err)
{
  int rc;

  *o = (struct jt_opts){ .max_evals = 400, .seed = 1, .start_sims = 0,
                         .start_events = 35000000, .max_events = 12500000,
                         .sweep = 1, .threads = 2, .budget_s = 0 };
  if ((rc = ooc_planner_opt_int(ctx, "max_evals", &o->max_evals, err)) < 0 ||
      (rc = ooc_planner_opt_int(ctx, "seed", &o->seed, err)) < 0 ||
      (rc = ooc_planner_opt_int(ctx, "start_sims", &o->start_sims,
                                err)) < 0 ||
      (rc = ooc_planner_opt_int(ctx, "sweep", &o->sweep, err)) < 0 ||
      (rc = ooc_planner_opt_int(ctx, "max_events", &o->max_events,
                                err)) < 0 ||
      (rc = ooc_planner_opt_int(ctx, "start_events", &o->start_events,
                                err)) < 0)
    return rc;
  if (o->start_events < 0)
    return ooc_err_set(err, OOC_EINVAL, "planner 'joint': option "
                       "start_events=%lld: must be >= 0 (0: no cap)",
                       (long long)o->start_events);
  if (o->max_events < 0)
    return ooc_err_set(err, OOC_EINVAL, "planner 'joint': option "
                       "max_events=%lld: must be >= 0 (0: no cap)",
                       (long long)o->max_events);
  if ((rc = ooc_planner_opt_int(ctx, "threads", &o->threads, err)) < 0)
    return rc;
  if (o->threads != 1 && o->threads != 2)
    return ooc_err_set(err, OOC_EINVAL, "planner 'joint': option "
                       "threads=%lld: must be 1 or 2",
                       (long long)o->threads);
  if (o->sweep != 0 && o->sweep != 1)
    return ooc_err_set(err, OOC_EINVAL, "planner 'joint': option "
                       "sweep=%lld: must be 0 or 1", (long long)o->sweep);
  if ((rc = ooc_planner_opt_seconds(ctx, "joint", "budget_s",
                                    &o->budget_s, err)) < 0)
    return rc;
  if (o->max_evals < 0 || o->max_evals > 10000000)
    return ooc_err_set(err, OOC_EINVAL, "planner 'joint': option "
                       "max_evals=%lld: must be in [0, 10000000]",
                       (long long)o->max_evals);
  if (o->start_sims < 0 || o->start_sims > 100000)
    return ooc_err_set(err, OOC_EINVAL, "planner 'joint': option "
                       "start_sims=%lld: must be in [0, 100000]",
                       (long long)o->start_sims);
  return OOC_OK;
}

/* One annealing chain (step 3 above) from st->cur, which is
 * st->best, of time c->t_best, until c->evals reaches max_evals (or the
 * event or wall-time budget runs out): the best plan it finds into
 * st->best, its time into c->t_best, its counts into c. */
struct chain {
  struct jt_state *st;
  const ooc_planner_ctx *ctx;
  const struct jt_opts *o;
  int64_t t_start, t_best, evals, pruned;
  int64_t improved[MV_COUNT];
  int rc;
  ooc_err err;
};

static int
anneal(struct chain *c)
{
  struct jt_state *st = c->st;
  const ooc_planner_ctx *ctx = c->ctx;
  ooc_err *err = &c->err;
  int64_t max_evals = c->o->max_evals, t_start = c->t_start;
  int64_t t_cur = c->t_best, k;
  double temp0 = t_start < INT64_MAX ? 0.002 * (double)t_start : 0;
  int fatal = 0, det_stale = 1, m;

  /* Moves that change nothing, and candidates the bound prunes, are not
   * simulations; the cap on moves keeps a search whose every candidate is
   * pruned finite. */
  for (k = 0; t_start < INT64_MAX && c->evals < max_evals &&
              k < 64 * (max_evals + 16) && !stopped(st) &&
              (st->max_events == 0 || st->events < st->max_events);
       k++) {
    int64_t x, thr;
    double temp;
    if (det_stale && k % 16 == 0) {
      /* Steer by the current plan's exposed transfers (one simulation). */
      if (eval(st, ctx, &st->cur, &st->det, 0, &fatal, err) < INT64_MAX) {
        refresh_hot(st, ctx);
        refresh_free(st, ctx);
      } else {
        st->n_hot = 0;
        st->free_ok = 0;
      }
      if (!st->prev_ok && !fatal) {
        if (prog_copy(&st->prev, ctx->scratch) < 0)
          return ooc_err_set(err, OOC_ENOMEM, "out of memory");
        st->prev_ok = 1;
      }
      c->evals++;
      det_stale = 0;
      if (fatal)
        break;
      continue;
    }
    if (ooc_plan_copy(&st->cand, &st->cur) < 0)
      return ooc_err_set(err, OOC_ENOMEM, "out of memory");
    if ((m = move(st, ctx, &st->cand, err)) < 0)
      continue;
    /* The acceptance test, decided before simulating: a candidate of time
     * x is taken when x < thr (x < t_cur, or the annealing's draw u with
     * exp(-(x - t_cur) / T) > u, i.e. x < t_cur - T ln u). One whose
     * lower bound is already >= thr cannot be taken, nor beat the best:
     * it is pruned without a simulation (a per-decision bound: the plan
     * differs from the current one by this move only). */
    temp = temp0 * (1.0 - (double)c->evals / (double)(max_evals + 1));
    thr = t_cur;
    if (temp > 0) {
      double u = rnd_unit(st), d = u > 0 ? -temp * log(u) : 1e18;
      thr = d < (double)(INT64_MAX - t_cur) ? t_cur + (int64_t)d
                                            : INT64_MAX;
    }
    x = eval(st, ctx, &st->cand, NULL, thr - 1, &fatal, err);
    if (st->last_bound) {
      c->pruned++;              /* its bound >= thr: not an evaluation */
      st->bound_skips--;
      continue;
    }
    c->evals++;
    if (fatal)
      break;
    if (st->prev_ok) {
      st->skip_sum += shared_prefix(&st->prev, ctx->scratch);
      st->skip_n++;
    }
    if (x == INT64_MAX)
      continue;
    if (x < thr) {
      if (ooc_plan_copy(&st->cur, &st->cand) < 0 ||
          (st->prev_ok && prog_copy(&st->prev, ctx->scratch) < 0))
        return ooc_err_set(err, OOC_ENOMEM, "out of memory");
      t_cur = x;
      det_stale = 1;
      if (x < c->t_best) {
        c->improved[m]++;
        c->t_best = x;
        if (ooc_plan_copy(&st->best, &st->cur) < 0)
          return ooc_err_set(err, OOC_ENOMEM, "out of memory");
      }
    }
  }
  if (fatal)
    return err->code < 0 ? err->code : OOC_ENOMEM;
  return OOC_OK;
}

static void *
chain_main(void *arg)
{
  struct chain *c = arg;

  c->rc = anneal(c);
  return NULL;
}

/* Everything after the start: the sweeps and the annealing from
 * st->start (of time t_start, INT64_MAX when no planner found a feasible
 * plan; made by planner `from`), the result, its note and metrics into
 * pl. Deterministic: it seeds its generator and clears its state. */
static int
search(struct jt_state *st, const ooc_planner_ctx *ctx,
       const struct jt_opts *o, int64_t t_start, const char *from,
       ooc_plan *pl, ooc_err *err)
{
  int64_t max_evals = o->max_evals, max_events = o->max_events;
  int64_t algo_sweep_on = o->sweep, evals = 0;
  int64_t pruned = 0, sweep_sims = 0;
  int32_t sweep_changed = 0, place_changed = 0;
  int64_t t_swept, t_placed, place_sims = 0, rc_sims = 0, sw_sims = 0;
  int64_t t_pre = 0;            /* before the class sweeps (0: not run) */
  int64_t t_swept_cls = 0;      /* after them */
  int64_t post_sims = 0, post_gain = 0;  /* the class sweeps after the */
  int32_t post_changed = 0;              /* annealing */
  int64_t rc_gain = 0;
  int32_t rc_changed = 0, sw_changed = 0;
  int64_t t_best;
  int64_t improved[MV_COUNT] = { 0 };
  int fatal = 0, m, rc, chain2 = 0;
  char changes[160], swept[384], post_txt[96];
  size_t n;

  st->threads = (int)o->threads;
  st->rng = (uint64_t)o->seed * 0x9E3779B97F4A7C15ull +
            0x632BE59BD9B4E019ull;
  if (st->rng == 0)
    st->rng = 1;
  st->prev_ok = 0;
  st->skip_sum = 0;
  st->skip_n = 0;
  st->n_hot = 0;
  st->free_ok = 0;
  st->events = 0;
  st->cut = 0;
  st->bound_skips = 0;
  st->max_events = (uint64_t)max_events;
  if (ooc_plan_copy(&st->cur, &st->start) < 0 ||
      ooc_plan_copy(&st->best, &st->start) < 0)
    return ooc_err_set(err, OOC_ENOMEM, "out of memory");
  t_best = t_start;
  if (t_start < INT64_MAX && algo_sweep_on) {
    if ((rc = algo_sweep(st, ctx, max_evals, &t_best, &sweep_sims,
                         &sweep_changed, &fatal, err)) < 0)
      return rc;
  }
  t_swept = t_best;
  if (t_start < INT64_MAX && st->best.n_offloaded > 0) {
    if ((rc = place_sweep(st, ctx, max_evals, &t_best, &place_sims,
                          &place_changed, &fatal, err)) < 0)
      return rc;
  }
  t_placed = t_best;
  if (t_start < INT64_MAX && algo_sweep_on) {
    /* The class sweeps: every swap-in re-timed at the plan's scheduling
     * budget (one candidate), then class_sweeps(). */
    int64_t t0r = t_best;
    st->sw_s[0] = 0;
    if ((rc = sweep(st, ctx, apply_none, fin_retime, 0, 1,
                    max_evals / 2 > 0 ? 1 : 0, &t_best, &rc_sims,
                    &rc_changed, &fatal, err)) < 0)
      return rc;
    rc_changed = 0;
    t_pre = t_best;
    if (ooc_plan_copy(&st->placed, &st->best) < 0)
      return ooc_err_set(err, OOC_ENOMEM, "out of memory");
    if ((rc = class_sweeps(st, ctx, max_evals, &t_best, &rc_sims, &sw_sims,
                           &rc_changed, &sw_changed, &fatal, err)) < 0)
      return rc;
    rc_gain = t0r - t_best;
    t_swept_cls = t_best;
  }
  {
    /* Two annealing chains: this one from the swept plan with the seed's
     * generator (the plan a single chain finds), the other from the plan
     * before the class sweeps when they changed it (else the swept plan),
     * with a generator of its own, on its own state and simulator; the
     * faster result is taken (a tie: this chain's), so the plan is never
     * slower than one chain's. With threads=2 the second runs in a second
     * thread, else after the first: the same plan either way. */
    struct chain ca, cb;
    struct jt_state *s2 = NULL;
    ooc_planner_ctx ctx2;
    ooc_program scratch2;
    ooc_sim *sim2 = NULL;
    pthread_t th;
    int two = 0, threaded = 0;

    if (ooc_plan_copy(&st->cur, &st->best) < 0)       /* the swept plan */
      return ooc_err_set(err, OOC_ENOMEM, "out of memory");
    ca = (struct chain){ .st = st, .ctx = ctx, .o = o, .t_start = t_start,
                         .t_best = t_best,
                         .evals = sweep_sims + place_sims };
    ooc_err_clear(&ca.err);
    ooc_program_init(&scratch2);
    if (t_start < INT64_MAX && ca.evals < max_evals && ctx->sim != NULL) {
      rc = OOC_ENOMEM;
      s2 = calloc(1, sizeof *s2);
      if (s2 == NULL ||
          (rc = ooc_sim_clone(ctx->sim, &sim2, err)) < 0)
        goto chains_done;
      ctx2 = *ctx;
      ctx2.sim = sim2;
      ctx2.scratch = &scratch2;
      if ((rc = jt_alloc(s2, &ctx2, err)) < 0)
        goto chains_done;
      /* The second chain from the plan before the class sweeps when they
       * changed it: their greedy steps can lead the annealing into a
       * worse basin than the one it finds without them. */
      const ooc_plan *from2 = t_pre > t_best ? &st->placed : &st->best;
      if (ooc_plan_copy(&s2->cur, from2) < 0 ||
          ooc_plan_copy(&s2->best, from2) < 0) {
        rc = OOC_ENOMEM;
        goto chains_done;
      }
      s2->rng = st->rng * 0xD1B54A32D192ED03ull + 0x8CB92BA72F3D8DD7ull;
      if (s2->rng == 0)
        s2->rng = 1;
      s2->events = st->events;
      s2->max_events = st->max_events;
      s2->beside = st->beside;
      s2->deadline = st->deadline;
      s2->rsv = st->rsv;
      cb = ca;
      if (t_pre > t_best)
        cb.t_best = t_pre;
      cb.st = s2;
      cb.ctx = &ctx2;
      ooc_err_clear(&cb.err);
      two = 1;
      threaded = o->threads == 2 &&
                 pthread_create(&th, NULL, chain_main, &cb) == 0;
    }
    ooc_err_clear(err);
    rc = anneal(&ca);
    if (two) {
      if (threaded)
        pthread_join(th, NULL);
      else if (rc == OOC_OK)
        cb.rc = anneal(&cb);
      ooc_sim_add_runs(ctx->sim, ooc_sim_runs(sim2));
      if (rc == OOC_OK && cb.rc < 0) {
        rc = cb.rc;
        ca.err = cb.err;
      }
      if (rc == OOC_OK && cb.t_best < ca.t_best) {
        if (ooc_plan_copy(&st->best, &s2->best) < 0)
          rc = ooc_err_set(&ca.err, OOC_ENOMEM, "out of memory");
        ca.t_best = cb.t_best;
        ca.evals = cb.evals;
        ca.pruned = cb.pruned;
        memcpy(ca.improved, cb.improved, sizeof ca.improved);
        chain2 = 1;
      }
    }
    if (rc < 0)
      *err = ca.err;
chains_done:
    if (s2 != NULL) {
      st->cut += s2->cut;
      st->bound_skips += s2->bound_skips;
      st->timed_out |= s2->timed_out;
      jt_free(s2);
      free(s2);
    }
    ooc_sim_free(sim2);
    ooc_program_fini(&scratch2);
    if (rc < 0)
      return rc == OOC_ENOMEM && err->msg[0] == '\0'
                 ? ooc_err_set(err, OOC_ENOMEM, "out of memory")
                 : rc;
    t_best = ca.t_best;
    evals = ca.evals;
    pruned = ca.pruned;
    memcpy(improved, ca.improved, sizeof improved);
  }
  if (t_start < INT64_MAX && algo_sweep_on) {
    int64_t t0p = t_best, ps_sw = 0;
    int32_t pc_sw = 0;
    if ((rc = class_sweeps(st, ctx, max_evals, &t_best, &post_sims, &ps_sw,
                           &post_changed, &pc_sw, &fatal, err)) < 0)
      return rc;
    post_sims += ps_sw;
    post_changed += pc_sw;
    post_gain = t0p - t_best;
  }

  if (ooc_plan_copy(pl, &st->best) < 0)
    return ooc_err_set(err, OOC_ENOMEM, "out of memory");
  st->t_result = t_best;
  pl->n_metrics = 0;
  changes[0] = '\0';
  n = 0;
  for (m = 0; m < MV_COUNT; m++)
    if (improved[m] > 0 && n < sizeof changes)
      n += (size_t)snprintf(changes + n, sizeof changes - n, "%s%s %lld",
                            n > 0 ? ", " : "", mv_names[m],
                            (long long)improved[m]);
  swept[0] = '\0';
  if (sweep_changed > 0)
    snprintf(swept, sizeof swept, "; its %d convolutions with faster "
             "algorithms %.2f%% faster (%lld simulation%s)", sweep_changed,
             100.0 * (double)(t_start - t_swept) / (double)t_start,
             (long long)sweep_sims, sweep_sims == 1 ? "" : "s");
  if (place_changed > 0) {
    size_t at = strlen(swept);
    snprintf(swept + at, sizeof swept - at, "; %d of its %d offloaded layers "
             "back on the device, %.2f%% faster (%lld plan%s)",
             (int)place_changed, (int)st->start.n_offloaded,
             100.0 * (double)(t_swept - t_placed) / (double)t_swept,
             (long long)place_sims, place_sims == 1 ? "" : "s");
  }
  if (rc_changed + sw_changed > 0) {
    size_t at = strlen(swept);
    snprintf(swept + at, sizeof swept - at, "; %d swaps to recompute, %d "
             "recomputes to swap, %.2f%% faster (%lld simulations)",
             (int)rc_changed, (int)sw_changed,
             100.0 * (double)rc_gain / (double)t_start,
             (long long)(rc_sims + sw_sims));
  }
  post_txt[0] = '\0';
  if (post_changed > 0)
    snprintf(post_txt, sizeof post_txt, "; the class sweeps again after "
             "it: %d changes, %.2f%% faster", (int)post_changed,
             100.0 * (double)post_gain / (double)t_start);
  if (t_start == INT64_MAX)
    snprintf(pl->note, sizeof pl->note, "joint: no planner found a "
             "feasible plan to start from (the %s plan kept)", from);
  else if (snprintf(pl->note, sizeof pl->note, "joint: from the %s plan "
                    "(%.6f s)%s, %.2f%% faster after %lld simulations "
                    "(%lld more pruned by their bound%s%s)%s%s%s%s", from,
                    (double)t_start * 1e-9, swept,
                    100.0 * (double)(t_start - t_best) / (double)t_start,
                    (long long)(evals + rc_sims + sw_sims + post_sims),
                    (long long)pruned,
                    !chain2 ? ""
                    : t_pre > t_swept_cls ? "; the second chain's plan, "
                                            "from before the class sweeps"
                                          : "; the second chain's plan",
                    post_txt,
                    n > 0 ? " (improving moves: " : "", changes,
                    n > 0 ? ")" : "",
                    st->timed_out ? "; cut by budget_s" : "")
           >= (int)sizeof pl->note)
    memcpy(pl->note + sizeof pl->note - 5, "...)", 5);   /* cut: say so */
  ooc_plan_add_metric(pl, "simulations",
                      (double)(evals + rc_sims + sw_sims + post_sims));
  ooc_plan_add_metric(pl, "sweep_simulations", (double)sweep_sims);
  ooc_plan_add_metric(pl, "pruned", (double)pruned);
  ooc_plan_add_metric(pl, "start_s",
                      t_start < INT64_MAX ? (double)t_start * 1e-9 : 0);
  /* Incremental re-simulation, measured: the mean share of a candidate's
   * timed program before its first change. */
  ooc_plan_add_metric(pl, "resim_shared_prefix",
                      st->skip_n > 0 ? st->skip_sum / (double)st->skip_n : 0);
  ooc_plan_add_metric(pl, "post_sweep_simulations", (double)post_sims);
  /* Of the search's simulations (the sweeps' and both chains'), those
   * stopped early once certain to lose (eval's cutoff). */
  ooc_plan_add_metric(pl, "cut_simulations", (double)st->cut);
  /* ... and those its bound answered, not run (eval). */
  ooc_plan_add_metric(pl, "bound_simulations", (double)st->bound_skips);
  /* The annealing's improving exchanges (a steered keep that makes room
   * at the peak step by a cheaper recompute, exchange()). */
  ooc_plan_add_metric(pl, "exchanges", (double)improved[MV_EXCHANGE]);
  ooc_plan_add_metric(pl, "improvement",
                      t_start < INT64_MAX
                          ? (double)(t_start - t_best) / (double)t_start
                          : 0);
  return OOC_OK;
}

/* Append text to pl's note; where it does not fit, over the note's
 * tail. */
static void
note_add(ooc_plan *pl, const char *text)
{
  size_t n = strlen(pl->note), k = strlen(text);

  if (k + 1 > sizeof pl->note)
    k = sizeof pl->note - 1;
  if (n + k + 1 > sizeof pl->note)
    n = sizeof pl->note - k - 1;
  memcpy(pl->note + n, text, k);
  pl->note[n + k] = '\0';
}

/* Both searches ran: from the best of the other plans (from_o's, of
 * time t_o_start), which found *other (t_other), and from PoocH's
 * (from_p's, t_p_start), which found pl (st->t_result). The faster is
 * joint's plan (a tie: PoocH's start's), into pl, its time into
 * st->t_result; the note says what the other search reached. */
static int
two_starts(struct jt_state *st, ooc_plan *pl, const ooc_plan *other,
           int64_t t_other, const char *from_o, int64_t t_o_start,
           const char *from_p, int64_t t_p_start, ooc_err *err)
{
  static const char cut[] = "; cut by budget_s";
  char tail[192];
  size_t n;
  int was_cut;

  if (t_other < st->t_result) {
    snprintf(tail, sizeof tail, "; from the %s plan (%.6f s) the search "
             "reached %.6f s", from_p, (double)t_p_start * 1e-9,
             (double)st->t_result * 1e-9);
    if (ooc_plan_copy(pl, other) < 0)
      return ooc_err_set(err, OOC_ENOMEM, "out of memory");
    st->t_result = t_other;
  } else {
    snprintf(tail, sizeof tail, "; from the %s plan (%.6f s) the search "
             "reached %.6f s", from_o, (double)t_o_start * 1e-9,
             (double)t_other * 1e-9);
  }
  /* The budget's word stays last. */
  n = strlen(pl->note);
  was_cut = n >= sizeof cut - 1 &&
            strcmp(pl->note + n - (sizeof cut - 1), cut) == 0;
  if (was_cut)
    pl->note[n - (sizeof cut - 1)] = '\0';
  note_add(pl, tail);
  if (was_cut)
    note_add(pl, cut);
  return OOC_OK;
}

/* The start's costliest planner, PoocH (its hundreds to thousands of
 * simulations are most of joint's solve time), plans in a second thread
 * on its own simulator (ooc_sim_clone) while this one runs the others
 * and, from the best of theirs, the whole search. The start is then
 * chosen as start_plans would have chosen it, the fastest feasible plan
 * with ties to the registry's order: when that is PoocH's, PoocH's thread
 * searches from it too, as soon as this one has published the others'
 * best (struct jt_stop), and two_starts takes the faster of the two
 * searches' plans. Either way the plan is the one the sequential start
 * gives, byte for byte; the wall time is the longer of the two threads:
 * the other planners and their search, or PoocH (at least as long as
 * the other planners) and, when its plan is the start, its search.
 * *ran = 0 when no thread could be started (the caller plans
 * sequentially), 2 when no plan fits and budget_s cut PoocH (the caller
 * plans the start again without it). */
struct peer_job {
  const ooc_planner_type *t;
  ooc_planner_ctx sub;
  ooc_program scratch;
  ooc_plan plan;
  ooc_kv kv[2];
  char events_s[24], budget_s[32];
  struct jt_stop *x;        /* its return and its plan's time */
  ooc_err err;
  /* The search from PoocH's plan, when it is the start: */
  double deadline;          /* budget_s's end (0: none) */
  ooc_reserve rsv;          /* ... and what it keeps back */
  const struct jt_opts *o;
  ooc_plan res;             /* its plan */
  int64_t t_res;            /* and time */
  int rc_search;            /* its return */
  ooc_err serr;
};

/* The search from PoocH's plan in its thread, on a state and simulator
 * of its own, when that plan is the start: the same plan as the first
 * thread's state would find after its own search (search() starts
 * afresh), while that search may still run. */
static void
peer_search(struct peer_job *j)
{
  struct jt_state *s3 = calloc(1, sizeof *s3);
  int rc;

  ooc_err_clear(&j->serr);
  if (s3 == NULL) {
    j->rc_search = ooc_err_set(&j->serr, OOC_ENOMEM, "out of memory");
    return;
  }
  if ((rc = jt_alloc(s3, &j->sub, &j->serr)) == OOC_OK &&
      ooc_plan_copy(&s3->start, &j->plan) < 0)
    rc = ooc_err_set(&j->serr, OOC_ENOMEM, "out of memory");
  if (rc == OOC_OK) {
    s3->deadline = j->deadline;
    s3->rsv = j->rsv;
    rc = search(s3, &j->sub, j->o, j->x->t, j->t->name, &j->res,
                &j->serr);
    j->t_res = s3->t_result;
  }
  j->rc_search = rc;
  jt_free(s3);
  free(s3);
}

/* PoocH's plan and its simulated time (on the cloned simulator, which
 * times it as the oracle does); then, once the other plans' best is
 * known and PoocH's is the start, the search from it (peer_search). */
static void *
peer_main(void *arg)
{
  struct peer_job *j = arg;
  ooc_sim_result r;
  double eval_s = 0;        /* how long timing PoocH's plan took */
  int rc, go;

  ooc_err_clear(&j->err);
  j->x->t = INT64_MAX;
  rc = ooc_planner_run(j->t, &j->sub, &j->plan, &j->scratch, &j->err);
  j->x->t_end = ooc_wall_s();
  if (rc == OOC_OK) {
    ooc_err e;
    double t0 = ooc_wall_s();
    int re;
    ooc_err_clear(&e);
    re = ooc_planner_evaluate(&j->sub, &j->plan, &r, &e);
    eval_s = ooc_wall_s() - t0;
    if (re == OOC_ENOMEM) {
      rc = re;
      j->err = e;
    } else if (re == OOC_OK && r.feasible) {
      j->x->t = r.iteration_ns;
    }
  }
  j->x->rc = rc;
  pthread_mutex_lock(&j->x->mu);
  while (!j->x->np_ready)
    pthread_cond_wait(&j->x->cv, &j->x->mu);
  go = !j->x->np_fatal && pooch_wins(j->x);
  if (eval_s > j->rsv.eval_s)   /* the start's reserve, set with np_ready */
    j->rsv.eval_s = eval_s;
  pthread_mutex_unlock(&j->x->mu);
  if (go)
    peer_search(j);
  return NULL;
}

/* The first search of start_parallel runs in a thread of its own
 * at a lower priority, nice 5 (Linux's nice is per thread, and a thread
 * it starts, the second chain, inherits it): PoocH's threads, whose plan
 * usually decides the start, take the cores first, and the first
 * search takes what they leave (a core whenever PoocH runs one thread,
 * between its measuring passes), instead of halving PoocH's share. Not
 * lower: an unprivileged thread cannot raise its priority again, so when
 * PoocH's plan loses, the search (then the whole solve) keeps it, and
 * other programs' threads at nice 0 take all but a seventieth of a core
 * from a thread at nice 19, a quarter at nice 5. Measured on this 2-core
 * machine (2026-11-29, the same plans): idle, nice 19 is faster
 * (resnet152's 11 scenarios 14.0-14.1 s in all against 14.9-15.4 s, the
 * 136 of bench-planners 97.2 s against 101.4 s); beside two CPU-bound
 * programs at nice 0, resnet152 b688 v100-pcie3 (whose start is not
 * PoocH's) took 12.3 and 37.2 s at nice 19 against 3.4 and 7.3 s at
 * nice 5. Which thread runs it changes no result: the plan is the same,
 * byte for byte, only sooner. */
enum { SPEC_NICE = 5 };

struct spec_job {
  struct jt_state *st;
  const ooc_planner_ctx *ctx;
  const struct jt_opts *o;
  int64_t t_start;
  const char *from;
  ooc_plan *pl;
  int rc;
  ooc_err err;
};

static void *
spec_main(void *arg)
{
  struct spec_job *j = arg;

  /* Where it fails (or elsewhere than Linux) the search runs at the
   * caller's priority: slower, the same plan. */
#if defined(__linux__)
  (void)setpriority(PRIO_PROCESS, (id_t)syscall(SYS_gettid), SPEC_NICE);
#endif
  ooc_err_clear(&j->err);
  j->rc = search(j->st, j->ctx, j->o, j->t_start, j->from, j->pl, &j->err);
  return NULL;
}

/* search() in a thread at SPEC_NICE (inline when none can be
 * started). */
static int
search_low(struct jt_state *st, const ooc_planner_ctx *ctx,
           const struct jt_opts *o, int64_t t_start, const char *from,
           ooc_plan *pl, ooc_err *err)
{
  struct spec_job j = { .st = st, .ctx = ctx, .o = o, .t_start = t_start,
                        .from = from, .pl = pl, .rc = OOC_OK };
  pthread_t th;

  if (pthread_create(&th, NULL, spec_main, &j) != 0)
    return search(st, ctx, o, t_start, from, pl, err);
  pthread_join(th, NULL);
  if (j.rc < 0)
    *err = j.err;
  return j.rc;
}

static int
start_parallel(struct jt_state *st, const ooc_planner_ctx *ctx,
               const struct jt_opts *o, int ip, ooc_plan *pl,
               int *ran, ooc_err *err)
{
  struct peer_job j;
  struct jt_stop x;
  ooc_sim *sim = NULL;
  pthread_t th;
  const char *from = "none";
  int64_t t_np;
  int rc = OOC_OK, fatal = 0, idx = -1;

  *ran = 0;
  memset(&j, 0, sizeof j);
  memset(&x, 0, sizeof x);
  x.rc = OOC_EINVAL;
  x.t = INT64_MAX;
  x.ip = ip;
  x.idx_np = -1;
  x.t_np = INT64_MAX;
  j.x = &x;
  j.o = o;
  j.deadline = st->deadline;
  ooc_program_init(&j.scratch);
  if (ooc_plan_init(&j.plan, ctx->live, err) < 0)
    return OOC_ENOMEM;
  if (ooc_plan_init(&j.res, ctx->live, err) < 0) {
    ooc_plan_fini(&j.plan);
    return OOC_ENOMEM;
  }
  if (pthread_mutex_init(&x.mu, NULL) != 0) {
    ooc_plan_fini(&j.plan);
    ooc_plan_fini(&j.res);
    return 0;                   /* *ran = 0: plan sequentially */
  }
  if (pthread_cond_init(&x.cv, NULL) != 0) {
    pthread_mutex_destroy(&x.mu);
    ooc_plan_fini(&j.plan);
    ooc_plan_fini(&j.res);
    return 0;
  }
  if ((rc = ooc_sim_clone(ctx->sim, &sim, err)) < 0)
    goto done;
  j.t = ctx->peers[ip];
  j.sub = *ctx;
  j.sub.sim = sim;
  j.sub.scratch = &j.scratch;
  j.sub.opts = NULL;
  j.sub.n_opts = 0;
  if (o->start_events > 0 && ooc_planner_accepts(j.t, "max_events")) {
    snprintf(j.events_s, sizeof j.events_s, "%lld",
             (long long)o->start_events);
    j.kv[j.sub.n_opts++] = (ooc_kv){ .key = "max_events",
                                     .value = j.events_s };
  }
  if (st->deadline > 0 && ooc_planner_accepts(j.t, "budget_s")) {
    budget_left(st->deadline, j.budget_s, sizeof j.budget_s);
    j.kv[j.sub.n_opts++] = (ooc_kv){ .key = "budget_s",
                                     .value = j.budget_s };
  }
  j.sub.opts = j.sub.n_opts > 0 ? j.kv : NULL;
  if (pthread_create(&th, NULL, peer_main, &j) != 0)
    goto done;                  /* *ran = 0: plan sequentially */
  *ran = 1;
  t_np = start_plans(st, ctx, 0, o->start_events, 0, st->deadline, j.t,
                     &from, &idx, &fatal, err);
  pthread_mutex_lock(&x.mu);
  j.rsv = st->rsv;              /* what the start's evaluations taught */
  x.t_np = t_np;
  x.idx_np = idx;
  x.np_fatal = fatal || t_np < 0;
  x.np_ready = 1;
  pthread_cond_signal(&x.cv);
  pthread_mutex_unlock(&x.mu);
  if (t_np < 0)                 /* start_plans ran out of memory */
    fatal = 1;
  if (!fatal && t_np < INT64_MAX) {
    /* The search from the best of the other plans, while PoocH plans: at
     * a lower priority (search_low), so that PoocH's threads, whose plan
     * is the start more often than not, take the cores first. Under
     * budget_s it runs to the end of the budget, which PoocH's planning
     * also takes, so there the two share the cores evenly (at the lower
     * priority joint came out more than 0.5% slower than the best other
     * planner on 12 of the benchmark's scenarios rather than 11,
     * geometric mean 1.150 x bound rather than 1.144-1.146). */
    st->beside = 1;
    rc = st->deadline > 0 ? search(st, ctx, o, t_np, from, pl, err)
                          : search_low(st, ctx, o, t_np, from, pl, err);
    st->beside = 0;
  }
  pthread_join(th, NULL);
  ooc_sim_add_runs(ctx->sim, ooc_sim_runs(sim));
  if (x.rc == OOC_OK && events_cut(&j.plan))
    st->events_cut = 1;
  if (fatal) {
    rc = err->code < 0 ? err->code : OOC_ENOMEM;
    goto done;
  }
  if (rc < 0)
    goto done;
  if (x.rc == OOC_ENOMEM) {
    *err = j.err;
    rc = OOC_ENOMEM;
    goto done;
  }
  if (pooch_wins(&x)) {
    /* PoocH's thread searched from its plan (peer_search); the faster
     * of the two searches' plans is joint's (two_starts). */
    int64_t t_other = t_np < INT64_MAX ? st->t_result : INT64_MAX;
    if (j.rc_search < 0) {
      *err = j.serr;
      rc = j.rc_search;
      goto done;
    }
    if ((t_other < INT64_MAX && ooc_plan_copy(&j.plan, pl) < 0) ||
        ooc_plan_copy(pl, &j.res) < 0) {
      rc = ooc_err_set(err, OOC_ENOMEM, "out of memory");
      goto done;
    }
    st->t_result = j.t_res;
    if (t_other < INT64_MAX)
      rc = two_starts(st, pl, &j.plan, t_other, from, t_np, j.t->name, x.t,
                      err);
  } else if (t_np == INT64_MAX && st->deadline > 0 &&
             x.t_end >= st->deadline) {
    *ran = 2;                   /* PoocH was cut: the caller plans again */
  } else if (t_np == INT64_MAX) {
    rc = search(st, ctx, o, t_np, from, pl, err);   /* none feasible */
  }
done:
  ooc_sim_free(sim);
  ooc_program_fini(&j.scratch);
  ooc_plan_fini(&j.plan);
  ooc_plan_fini(&j.res);
  pthread_cond_destroy(&x.cv);
  pthread_mutex_destroy(&x.mu);
  return rc;
}

/* When start_events cut PoocH's search in the start, joint's plan is not
 * sure to be as fast as PoocH's own, uncapped: the note says so. */
static void
note_events_cut(const struct jt_state *st, ooc_plan *pl)
{
  if (st->events_cut)
    note_add(pl, "; start_events cut PoocH's search, so pooch alone may "
             "find a faster plan");
}

static int
jt_plan(void *state, const ooc_planner_ctx *ctx, ooc_plan *pl, ooc_err *err)
{
  struct jt_state *st = state;
  struct jt_opts o;
  const ooc_planner_type *pooch = NULL;
  const char *from = "none";
  double t0 = ooc_wall_s();
  int64_t t_np, t_p;
  int fatal = 0, rc, idx, i, ip = -1, ran = 0;
  double dl;

  if ((rc = parse_opts(ctx, &o, err)) < 0)
    return rc;
  /* budget_s bounds the whole solve, the start included (start_plans),
   * unless no plan fits within it and it cut PoocH: then the start runs
   * again without it, as a capped one does, since a plan that fits comes
   * first. */
  st->deadline = dl = o.budget_s > 0 ? t0 + o.budget_s : 0;
  st->timed_out = st->start_cut = st->events_cut = 0;
  st->apart = NULL;
  ooc_reserve_init(&st->rsv, o.budget_s);
  for (i = 0; ctx->peers != NULL && ctx->peers[i] != NULL; i++)
    if (strcmp(ctx->peers[i]->name, "pooch") == 0) {
      pooch = ctx->peers[i];
      ip = i;
      break;
    }
  if (pooch != NULL && o.start_sims == 0 && o.threads == 2 &&
      ctx->sim != NULL) {
    rc = start_parallel(st, ctx, &o, ip, pl, &ran, err);
    if (rc == OOC_OK && ran == 1)
      note_events_cut(st, pl);
    if (rc < 0 || ran == 1)
      return rc;
    if (ran == 2)
      dl = 0;
  }
  /* The start in sequence, to the same plan as start_parallel's: PoocH's
   * plan apart from the others'. */
  st->apart = pooch;
  t_np = start_plans(st, ctx, o.start_sims, o.start_events, o.threads == 1,
                     dl, NULL, &from, &idx, &fatal, err);
  if (t_np == INT64_MAX && st->t_apart == INT64_MAX &&
      (o.start_sims > 0 || st->start_cut) && !fatal)
    t_np = start_plans(st, ctx, 0, o.start_events, o.threads == 1, 0,
                       NULL, &from, &idx, &fatal,
                       err);                  /* uncapped, unbounded */
  st->apart = NULL;
  if (fatal)
    return err->code < 0 ? err->code : OOC_ENOMEM;
  t_p = st->t_apart;
  if (!beats(t_p, st->idx_apart, t_np, idx)) {
    rc = search(st, ctx, &o, t_np, from, pl, err);
  } else if (t_np == INT64_MAX || st->deadline > 0) {
    /* (Under budget_s the first search would leave the second
     * nothing.) */
    if (ooc_plan_copy(&st->start, &st->other) < 0)
      return ooc_err_set(err, OOC_ENOMEM, "out of memory");
    rc = search(st, ctx, &o, t_p, pooch->name, pl, err);
  } else {
    /* Both searches, in start_parallel's order. */
    int64_t t_other;
    if ((rc = search(st, ctx, &o, t_np, from, pl, err)) < 0)
      return rc;
    t_other = st->t_result;
    if (ooc_plan_copy(&st->start, &st->other) < 0 ||
        ooc_plan_copy(&st->other, pl) < 0)
      return ooc_err_set(err, OOC_ENOMEM, "out of memory");
    rc = search(st, ctx, &o, t_p, pooch->name, pl, err);
    if (rc == OOC_OK)
      rc = two_starts(st, pl, &st->other, t_other, from, t_np, pooch->name,
                      t_p, err);
  }
  if (rc == OOC_OK)
    note_events_cut(st, pl);
  return rc;
}

static const char *const jt_options[] = { "max_evals", "budget_s", "seed",
                                          "start_sims", "start_events",
                                          "sweep", "max_events", "threads",
                                          NULL };

const ooc_planner_type ooc_planner_joint = {
  .name = "joint",
  .summary = "oocsim's own: the best other plan improved by simulated "
             "annealing over keep / swap / recompute, swap-in timing and "
             "convolution algorithms",
  .cite = "docs/planners.md, \"joint\" (simulated annealing: Kirkpatrick, "
          "Gelatt and Vecchi 1983)",
  .state_size = sizeof(struct jt_state),
  .options = jt_options,
  /* It may start from zero-offload's plan. */
  .flags = OOC_PLANNER_OFFLOAD | OOC_PLANNER_COSTLY,
  .alloc = jt_alloc,
  .free = jt_free,
  .plan = jt_plan,
};
