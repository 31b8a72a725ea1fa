/* planners/window.c — schedule-window swapping: a window in bytes slides
 * over the variable-sequence; swap-ins, swap-outs and their waits follow
 * from the memory budget alone.
 *
 * Follows the schedule-window seed, §3 (Fig. 2). The variable-sequence v
 * is the activations each step of the schedule touches, flattened in step
 * order (a variable appears once per function that uses it). At function
 * f_i the window is v[l : r], l the first variable of f_i and r the last
 * index whose variables, counted once each, fit in `window` bytes. Then:
 *  (a) swap in the variables newly entering the window (v[r- + 1 : r])
 *      that are on the host: issued as f_i starts (in_after = i - 1),
 *      needed by the function of that occurrence (in_before); a variable
 *      created inside the window only reserves its bytes;
 *  (b) when a swap-in (or f_i's own outputs) would exceed the budget,
 *      complete the oldest reserved swap-outs first: f_i waits for them
 *      (out_wait = i) and their memory is released;
 *  (c) after f_i runs, reserve the swap-out of f_i's variables
 *      (out_after = i);
 *  (d) skipping the swap-out of a variable with no future use (liveness
 *      frees it) and of one already in the window again (already scheduled
 *      for swap-in); a reserved swap-out whose variable re-enters the
 *      window before anyone waited for it is cancelled.
 * Bookkeeping follows the authors' implementation (nnabla's
 * SwapInOutScheduler): bytes resident, bytes in reserved swap-outs (still
 * on the device until waited for), and the window's bytes. The variables
 * are every tensor the iteration creates and frees, as §3 defines the
 * variable-sequence: the activations, and the activation gradients of the
 * backward steps (a backward step's occurrences are its activations, then
 * the gradient it reads and those it writes or accumulates; a gradient is
 * created at its first write and swapped like any variable: ooc_swap.grad).
 * Whether gradients are variables is tuned like the window: both
 * schedules are tried and the faster kept (swapping gradients frees
 * memory but adds link traffic; it is what lets the batch grow past the
 * backward working-set ceiling); `--opt grads=0|1` fixes it (0: gradients
 * stay resident, the schedule before they were variables). The rest of the device memory
 * (persistent state, each step's workspace, and with grads=0 the live
 * gradients) is subtracted from the scheduling budget step by step, and a
 * swap-in must fit under the smallest such limit until its use. Departure: the paper sums b_v
 * over the sequence entries v[l : r]; a variable that appears twice there
 * is counted once here, since it takes device memory once.
 *
 * Tuning: `--opt window=SIZE` fixes the window; otherwise 25 window sizes
 * (1/32 and k/16 for k = 1..24 of the activation budget, i.e. up to the
 * 1.5x that nnabla uses by default) are scheduled and the fastest feasible
 * one is kept; a schedule whose records equal the previous candidate's is
 * not simulated again. As in the paper (§4), the scheduling budget may be
 * tuned below the physical one to absorb allocator fragmentation: the budgets
 * 16/16, 15/16, 14/16, 13/16, 12/16, 10/16, 8/16 of the physical one are
 * tried in turn, down to the first level where some window fits and one
 * level more (`--opt sched_budget=SIZE` fixes it). Nothing found: the
 * largest window at the full budget is returned and its simulation reports
 * the OOM. Memory the planner accounts for besides activations: at the
 * start of each f_i the resident and reserved bytes must fit under f_i's
 * limit (its gradients and workspace take the rest), waiting for the
 * oldest swap-outs as in (b).
 *
 * Allocators: the bookkeeping counts what the allocator takes for each
 * tensor, its footprint (ooc_alloc_footprint, alloc.h): the size rounded
 * to 512 B, except under `va` for a request of at least half a chunk,
 * whose fragmentation is known in advance (seed §4, eq. 1: m_r takes
 * ceil(m_r / m_c) chunks of m_c; smaller requests share chunk segments,
 * alloc_va.c). Every activation, gradient, workspace and persistent
 * tensor is counted at its footprint, and `window` is then in footprint
 * bytes. With the profile's 40 MiB chunk the rounding of activations of
 * 20-40 MiB can double them, which no fraction of the scheduling budget
 * absorbs; counting it makes the schedule fit from the first level.
 *
 * Cost: O(occurrences + steps) per schedule (monotone deque for the window
 * minimum of the limits); autotune schedules 50 candidates when the full
 * budget fits, at most 25 x 7, and simulates the distinct ones (one when
 * nothing needs swapping). Ownership: scratch arrays in the state, sized
 * by win_alloc() and released by win_free() (the front end calls both).
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "plan/planner.h"
#include "plan/toolkit.h"

enum { V_CLEARED = 0, V_UNPREF, V_IN, V_OUT, V_WAITED };

struct win_state {
  /* Variable-sequence. */
  int32_t n_occ;
  int32_t n_acts;           /* variables: act a is a, its gradient n_acts
                               + a */
  int grads_opt;             /* --opt grads: -1 tune, 0, 1 */
  int grads;                /* this schedule: gradients are variables */
  int64_t *lim_fixed;       /* per step: lim with gradients resident */
  int64_t *lim_var;         /* per step: lim with gradients as variables */
  int32_t *occ_act, *occ_step;
  uint8_t *occ_last;        /* the act's last use */
  int32_t *step_end;        /* per step: first occurrence after it */
  int64_t *lim;             /* per step: bytes left for activations */
  uint64_t persistent;      /* footprint of the persistent tensors */
  int64_t *ab;              /* per variable: its footprint */
  /* Per variable. */
  uint8_t *vst;
  int32_t *cnt;
  int32_t *out_after, *out_wait, *pend;
  /* FIFO of reserved swap-outs. */
  int32_t *fifo;
  int32_t *dq;              /* deque of steps for the window minimum */
  /* Running bookkeeping of one schedule (bytes). */
  int64_t in, out, win;
  int32_t f_head, f_tail;
  /* Result of the last schedule. */
  int32_t n_cancel;
  /* The records of the last simulated schedule (at most one per
   * occurrence), so that an identical one is not simulated again. */
  ooc_swap *prev;
  int32_t n_prev;
};


/* Build the variable-sequence and the per-step limits; size the scratch
 * arrays. Every tensor counts at its footprint under the planner's
 * allocator (ooc_kit_footprint: va whole chunks for large requests, seed
 * §4 eq. 1). The limits are the toolkit's memory timeline without the
 * activations: persistent state, each step's workspace, live gradients.
 * OOC_ENOMEM (win_free tears down what was allocated). */
static int win_alloc(void *state, const ooc_planner_ctx *ctx, ooc_err *err)
{
  struct win_state *w = state;
  const ooc_liveness *lv = ctx->live;
  const ooc_model *m = ctx->model;
  ooc_timeline tl;
  int32_t n = 0, nv = 2 * lv->n_acts, total = lv->step_first[lv->n_steps - 1] +
                          lv->step_nacts[lv->n_steps - 1];
  int rc;
  int64_t g;

  /* Gradients are variables unless --opt grads=0. */
  if ((rc = ooc_planner_opt_int(ctx, "grads", &g, err)) < 0)
    return rc;
  if (rc > 0 && g != 0 && g != 1)
    return ooc_err_set(err, OOC_EINVAL, "planner 'window': option grads=%lld: "
                       "must be 0 or 1", (long long)g);
  w->grads_opt = rc > 0 ? (int)g : -1;
  w->n_acts = lv->n_acts;
  /* A backward step's gradient occurrences: its output's and its inputs'. */
  for (int32_t s = 0; s < lv->n_steps; s++)
    if (lv->steps[s].phase == OOC_PH_BWD)
      total += 1 + m->layers[lv->steps[s].layer].n_in;

#define NEW(p, k)                                                            \
  do {                                                                       \
    (p) = calloc((size_t)(k) + 1, sizeof *(p));                              \
    if ((p) == NULL)                                                         \
      return ooc_err_set(err, OOC_ENOMEM, "planner 'window': out of memory"); \
  } while (0)
  NEW(w->occ_act, total);
  NEW(w->occ_step, total);
  NEW(w->occ_last, total);
  NEW(w->step_end, lv->n_steps);
  NEW(w->lim_fixed, lv->n_steps);
  NEW(w->lim_var, lv->n_steps);
  NEW(w->vst, nv);
  NEW(w->cnt, nv);
  NEW(w->out_after, nv);
  NEW(w->out_wait, nv);
  NEW(w->pend, nv);
  NEW(w->fifo, total);
  NEW(w->dq, lv->n_steps);
  NEW(w->ab, nv);
  NEW(w->prev, total);
#undef NEW
  for (int32_t a = 0; a < lv->n_acts; a++) {
    w->ab[a] = (int64_t)ooc_kit_footprint(ctx, lv->act_bytes[a]);
    w->ab[lv->n_acts + a] = (int64_t)ooc_kit_footprint(ctx, lv->grad_bytes[a]);
  }
  w->persistent = ooc_kit_persistent(ctx, lv);
  for (int32_t s = 0; s < lv->n_steps; s++) {
    for (int32_t k = 0; k < lv->step_nacts[s]; k++) {
      int32_t a = lv->step_acts[lv->step_first[s] + k];
      if (a == 0 || lv->act_bytes[a] == 0)
        continue;
      w->occ_act[n] = a;
      w->occ_step[n] = s;
      w->occ_last[n] = lv->act_last[a] == s;
      n++;
    }
    if (lv->steps[s].phase == OOC_PH_BWD) {
      const ooc_layer *ly = &m->layers[lv->steps[s].layer];
      int32_t first = n;
      for (int32_t k = -1; k < ly->n_in; k++) {
        int32_t a = lv->layer_act[k < 0 ? lv->steps[s].layer
                                         : ooc_layer_input(m, ly, k)], j;
        if (lv->grad_tensor[a] < 0 || lv->grad_bytes[a] == 0 ||
            !ooc_layer_bwd_grad(ly, k))
          continue;
        for (j = first; j < n && w->occ_act[j] != lv->n_acts + a; j++)
          ;
        if (j < n)
          continue;           /* once per step */
        w->occ_act[n] = lv->n_acts + a;
        w->occ_step[n] = s;
        w->occ_last[n] = lv->grad_last[a] == s;
        n++;
      }
    }
    w->step_end[s] = n;
  }
  w->n_occ = n;
  if (ooc_timeline_init(&tl, lv->n_steps, err) != OOC_OK)
    return OOC_ENOMEM;
  ooc_timeline_memory(&tl, lv, ctx,
                      OOC_TL_PERSISTENT | OOC_TL_WORKSPACE | OOC_TL_GRADS);
  ooc_timeline_values(&tl, w->lim_fixed);
  ooc_timeline_clear(&tl);
  ooc_timeline_memory(&tl, lv, ctx, OOC_TL_PERSISTENT | OOC_TL_WORKSPACE);
  ooc_timeline_values(&tl, w->lim_var);
  ooc_timeline_fini(&tl);
  return OOC_OK;
}

/* Free the scratch arrays (any of them may be NULL). */
static void win_free(void *state)
{
  struct win_state *w = state;

  free(w->occ_act);
  free(w->occ_step);
  free(w->occ_last);
  free(w->step_end);
  free(w->lim_fixed);
  free(w->lim_var);
  free(w->vst);
  free(w->cnt);
  free(w->out_after);
  free(w->out_wait);
  free(w->pend);
  free(w->fifo);
  free(w->dq);
  free(w->ab);
  free(w->prev);
}

/* (b) Complete the oldest reserved swap-out that is still pending: f_fid
 * waits for it and its bytes are released. Returns 0 when there is none. */
static int wait_one(struct win_state *w, int32_t fid)
{
  while (w->f_tail < w->f_head) {
    int32_t pos = w->f_tail++, a = w->fifo[pos];
    if (w->vst[a] == V_OUT && w->pend[a] == pos) {
      w->vst[a] = V_WAITED;
      w->out_wait[a] = fid;
      w->out -= w->ab[a];
      return 1;
    }
  }
  return 0;
}

/* One schedule (a)-(d) for window bytes win_max under scheduling budget
 * sched, into pl. OOC_ENOMEM only. */
static int win_schedule(struct win_state *w, const ooc_liveness *lv,
                        uint64_t sched, uint64_t win_max, ooc_plan *pl)
{
  int32_t head = 0, dq_h = 0, dq_t = 0, upto = -1;
  const int64_t W = win_max > INT64_MAX ? INT64_MAX : (int64_t)win_max;

  ooc_plan_reset(pl);
  pl->sched_budget = sched;
  w->n_cancel = 0;
  w->in = w->out = w->win = 0;
  w->f_head = w->f_tail = 0;
  for (int32_t a = 0; a < 2 * lv->n_acts; a++) {
    w->vst[a] = V_CLEARED;
    w->cnt[a] = 0;
    w->out_after[a] = w->out_wait[a] = w->pend[a] = -1;
  }

  const int64_t *lim = w->grads ? w->lim_var : w->lim_fixed;
#define LIM(s) ((int64_t)sched - lim[s])
  for (int32_t fid = 0; fid < lv->n_steps; fid++) {
    int32_t beg = fid == 0 ? 0 : w->step_end[fid - 1];
    int32_t end = w->step_end[fid];
    int64_t need = 0;

    while (dq_h < dq_t && w->dq[dq_h] < fid)
      dq_h++;
    if (upto < fid - 1)
      upto = fid - 1;
    /* (b) for f_i's gradients and workspace: what stays must fit. */
    while (w->in + w->out > LIM(fid) && wait_one(w, fid))
      ;

    /* (a) swap in what enters the window. */
    while (head < w->n_occ) {
      int32_t a = w->occ_act[head], g = w->occ_step[head];
      if (!w->grads && a >= w->n_acts) {
        head++;               /* gradients stay resident */
        continue;
      }
      if (w->cnt[a] == 0) {
        int64_t b = w->ab[a], L;
        while (upto < g) {
          upto++;
          while (dq_h < dq_t && LIM(w->dq[dq_t - 1]) >= LIM(upto))
            dq_t--;
          w->dq[dq_t++] = upto;
        }
        L = LIM(w->dq[dq_h]);
        /* The function's own variables always enter. */
        if (head >= end && (w->win + b > W || w->in + b > L))
          break;
        if (w->vst[a] == V_OUT) {
          /* (d) its reserved swap-out is cancelled. */
          w->vst[a] = V_IN;
          w->pend[a] = -1;
          w->out -= b;
          w->in += b;
          w->win += b;
          w->n_cancel++;
        } else if (w->vst[a] == V_WAITED) {
          while (w->in + w->out + b > L && wait_one(w, fid))
            ;
          ooc_swap sw = {
            .act = a < w->n_acts ? a : a - w->n_acts,
            .out_after = w->out_after[a],
            .out_wait = w->out_wait[a],
            .in_after = fid - 1,
            .in_before = g,
            .grad = a >= w->n_acts,
          };
          if (ooc_plan_add_swap(pl, &sw) != OOC_OK)
            return OOC_ENOMEM;
          w->vst[a] = V_IN;
          w->in += b;
          w->win += b;
        } else {
          /* Created in the window: reserve its bytes only. */
          w->vst[a] = V_UNPREF;
          w->win += b;
        }
      }
      w->cnt[a]++;
      head++;
    }

    /* (b) room for f_i's own new outputs. */
    for (int32_t i = beg; i < end; i++) {
      int32_t a = w->occ_act[i];
      if (!w->grads && a >= w->n_acts)
        continue;
      if (w->vst[a] == V_UNPREF) {
        need += w->ab[a];
        w->vst[a] = V_IN;
      }
    }
    while (w->in + w->out + need > LIM(fid) && wait_one(w, fid))
      ;
    w->in += need;

    /* (c) reserve swap-outs after f_i, (d) skipping vars with no future
     * use and those still in the window. */
    for (int32_t i = beg; i < end; i++) {
      int32_t a = w->occ_act[i];
      int64_t b = w->ab[a];
      if (!w->grads && a >= w->n_acts)
        continue;
      if (w->cnt[a] == 1) {
        w->in -= b;
        w->win -= b;
        if (w->occ_last[i]) {
          w->vst[a] = V_CLEARED;
        } else {
          w->vst[a] = V_OUT;
          w->out_after[a] = fid;
          w->out_wait[a] = -1;
          w->pend[a] = w->f_head;
          w->fifo[w->f_head++] = a;
          w->out += b;
        }
      }
      w->cnt[a]--;
    }
  }
#undef LIM
  return OOC_OK;
}

/* Whether pl's records are those of the last simulated schedule: then it
 * lowers to the same program (the records alone set the actions, and the
 * simulation does not read sched_budget). Field by field: a memcmp also
 * compared the records' padding, which no initializer sets, and could
 * count a schedule as new (one more simulation, a count that varied from
 * run to run; valgrind saw it). O(records). */
static int same_as_prev(const struct win_state *w, const ooc_plan *pl)
{
  if (pl->n_swaps != w->n_prev)
    return 0;
  for (int32_t i = 0; i < pl->n_swaps; i++) {
    const ooc_swap *a = &pl->swaps[i], *b = &w->prev[i];
    if (a->act != b->act || a->out_after != b->out_after ||
        a->out_wait != b->out_wait || a->in_after != b->in_after ||
        a->in_before != b->in_before || a->grad != b->grad)
      return 0;
  }
  return 1;
}

/* Keep pl's records as the last simulated schedule's. */
static void remember(struct win_state *w, const ooc_plan *pl)
{
  w->n_prev = pl->n_swaps;
  if (pl->n_swaps > 0)
    memcpy(w->prev, pl->swaps, (size_t)pl->n_swaps * sizeof *w->prev);
}

static const uint32_t sched_frac16[] = { 16, 15, 14, 13, 12, 10, 8 };
#define N_SCHED (sizeof sched_frac16 / sizeof *sched_frac16)
#define N_WIN 25

/* Window candidate k for activation capacity cap: cap/32 for k = 0, else
 * cap * k / 16 (up to 3/2 of it, nnabla's default prefetch size). */
static uint64_t win_size(uint64_t cap, int k)
{
  return k == 0 ? cap / 32 : cap / 16 * (uint64_t)k;
}

/* Autotune the window (and the scheduling budget) with the oracle. */
static int win_plan(void *state, const ooc_planner_ctx *ctx, ooc_plan *pl,
                    ooc_err *err)
{
  struct win_state *w = state;
  const ooc_liveness *lv = ctx->live;
  uint64_t fixed_win = 0, fixed_sched = 0, best_win = 0, best_sched = 0;
  int have_win, have_sched, rc, found = 0, n_sims = 0, best_grads = 0;
  char gnote[48] = "";
  int64_t best_ns = INT64_MAX;
  ooc_sim_result r;

  have_win = ooc_planner_opt_size(ctx, "window", &fixed_win, err);
  if (have_win < 0)
    return have_win;
  if (have_win && fixed_win == 0)
    return ooc_err_set(err, OOC_EINVAL,
                       "planner 'window': option window=0: must be > 0");
  have_sched = ooc_planner_opt_sched(ctx, "window", &fixed_sched, err);
  if (have_sched < 0)
    return have_sched;

  /* Gradients resident, then as variables (unless fixed); per mode,
   * scheduling budgets from the physical one down, the level after the
   * first that fits tried too (less fragmentation can be faster). */
  for (int gm = w->grads_opt < 0 ? 0 : w->grads_opt;
       gm <= (w->grads_opt < 0 ? 1 : w->grads_opt); gm++) {
  int found_mode = 0;
  w->grads = gm;
  for (size_t si = 0, extra = 0; si < (have_sched ? 1 : N_SCHED); si++) {
    if (found_mode && extra++ > 0)
      break;
    uint64_t sched = have_sched ? fixed_sched
                                : ctx->budget / 16 * sched_frac16[si];
    uint64_t cap = sched > w->persistent ? sched - w->persistent : 0;
    for (int k = 0; k < (have_win ? 1 : N_WIN); k++) {
      uint64_t ws = have_win ? fixed_win : win_size(cap, k);
      if (win_schedule(w, lv, sched, ws, pl) != OOC_OK)
        return ooc_err_set(err, OOC_ENOMEM, "planner 'window': out of memory");
      /* Neighbouring windows often give the same records (all of them
       * when everything fits): r still holds that schedule's result. */
      if (n_sims == 0 || !same_as_prev(w, pl)) {
        if ((rc = ooc_planner_evaluate(ctx, pl, &r, err)) != OOC_OK)
          return rc;
        n_sims++;
        remember(w, pl);
      }
      found_mode |= r.feasible;
      if (r.feasible && r.iteration_ns < best_ns) {
        best_ns = r.iteration_ns;
        best_win = ws;
        best_sched = sched;
        best_grads = gm;
        found = 1;
      }
    }
  }
  }
  if (!found) {
    best_grads = w->grads_opt < 0 ? 1 : w->grads_opt;
    best_sched = have_sched ? fixed_sched : ctx->budget;
    best_win = have_win ? fixed_win
                        : win_size(best_sched > w->persistent
                                       ? best_sched - w->persistent
                                       : 0, N_WIN - 1);
  }
  w->grads = best_grads;
  if (win_schedule(w, lv, best_sched, best_win, pl) != OOC_OK)
    return ooc_err_set(err, OOC_ENOMEM, "planner 'window': out of memory");
  {
    int32_t ng = 0;
    for (int32_t i = 0; i < pl->n_swaps; i++)
      ng += pl->swaps[i].grad;
    if (ng > 0)
      snprintf(gnote, sizeof gnote, "%d of gradients, ", (int)ng);
  }
  snprintf(pl->note, sizeof pl->note,
           "window: window=%.3f GiB, sched budget %.3f GiB, %d swap-outs "
           "(%s%d cancelled)%s (%d simulations)",
           (double)best_win / 1073741824.0, (double)best_sched / 1073741824.0,
           (int)pl->n_swaps, gnote, (int)w->n_cancel,
           found ? "" : ", no feasible window", n_sims);
  return OOC_OK;
}

static const char *const win_options[] = { "window", "sched_budget", "grads",
                                           NULL };

const ooc_planner_type ooc_planner_window = {
  .name = "window",
  .summary = "schedule-window swapping: locally adaptive distance from a "
             "window in bytes over the variable-sequence",
  .cite = "schedule-window paper (Out-of-core Training for Extremely Large-"
          "Scale Neural Networks With Adaptive Window-Based Scheduling) §3 "
          "(a)-(d), Fig. 2",
  .state_size = sizeof(struct win_state),
  .options = win_options,
  .flags = OOC_PLANNER_SEARCH | OOC_PLANNER_COSTLY,
  .alloc = win_alloc,
  .free = win_free,
  .plan = win_plan,
};
