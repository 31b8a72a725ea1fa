/* plan/toolkit.h — the analyses planners share: memory timelines over the
 * schedule, allocator footprints, the input frontier of a forward segment
 * and the recompute cost of a segment.
 *
 * First and last uses are part of the liveness (plan.h: act_last,
 * act_last_fwd, act_first_bwd, use_steps); everything here builds on them.
 *
 * Memory timeline (ooc_timeline): a value per schedule step (bytes on the
 * device while the step runs) held in a segment tree with lazy range adds,
 * so a planner that tries a decision (add a tensor's bytes over the steps
 * it stays resident, ask the peak over a range, find the last step above a
 * limit) pays O(log steps) per question instead of O(steps).
 * ooc_timeline_memory() fills one from the liveness: persistent state,
 * each step's workspace, live gradients and live activations (free after
 * last use, SuperNeurons §3.2), each counted at its footprint under the
 * planner's allocator (ooc_alloc_footprint: what the policy takes for the
 * request, e.g. whole chunks under va, schedule-window seed §4 eq. 1).
 *
 * Segments (SuperNeurons §3.4, Chen et al.'s checkpoints, PoocH §4.4.3): a
 * forward segment is the forward steps [first, last]. Its input frontier
 * is the set of activations those steps read that were produced before
 * `first` (what must be resident, or brought back, to run the segment
 * again); its recompute cost is the sum of their forward times.
 *
 * Ownership: ooc_timeline and ooc_plankit are caller-embedded
 * (_init/_fini); they borrow the liveness and costs. Nothing here
 * allocates after init.
 */
#ifndef OOC_TOOLKIT_H
#define OOC_TOOLKIT_H

#include <stdint.h>
#include "base/error.h"
#include "alloc/alloc.h"
#include "sim/cost.h"
#include "plan/plan.h"
#include "plan/planner.h"

/* --- memory timeline ------------------------------------------------------ */

typedef struct ooc_timeline {
  int32_t n;        /* steps */
  int32_t leaves;   /* a power of two >= n */
  int64_t *mx;      /* per node: max of its range, its own pending add in */
  int64_t *lz;      /* per node: add pending for its whole range */
} ooc_timeline;

/* n steps, all 0. OOC_ENOMEM. */
int ooc_timeline_init(ooc_timeline *t, int32_t n_steps, ooc_err *err);
void ooc_timeline_fini(ooc_timeline *t);
/* Every step back to 0. O(steps). */
void ooc_timeline_clear(ooc_timeline *t);
/* dst = src (same number of steps). O(steps). */
void ooc_timeline_copy(ooc_timeline *dst, const ooc_timeline *src);
/* Add `bytes` (may be negative) to steps [from, to]; nothing when
 * to < from. Steps are clamped to [0, n). O(log steps). */
void ooc_timeline_add(ooc_timeline *t, int32_t from, int32_t to,
                      int64_t bytes);
/* The value at step s. O(log steps). */
int64_t ooc_timeline_at(const ooc_timeline *t, int32_t s);
/* The largest value over [from, to] (INT64_MIN when empty).
 * O(log steps). */
int64_t ooc_timeline_max(const ooc_timeline *t, int32_t from, int32_t to);
/* The last step s in [from, to] whose value exceeds limit, or -1.
 * O(log^2 steps) worst case. */
int32_t ooc_timeline_last_above(const ooc_timeline *t, int32_t from,
                                int32_t to, int64_t limit);
/* The first step s in [from, to] whose value exceeds limit, or -1.
 * O(log^2 steps) worst case. */
int32_t ooc_timeline_first_above(const ooc_timeline *t, int32_t from,
                                 int32_t to, int64_t limit);
/* All values into out[0 .. n). O(steps). */
void ooc_timeline_values(const ooc_timeline *t, int64_t *out);
/* The timeline whose values are v[0 .. n), built bottom-up: the same
 * values, so the same answers to every query, as the adds that gave them.
 * O(steps). */
void ooc_timeline_set_values(ooc_timeline *t, const int64_t *v);
/* Many range adds without queries between them: on a difference array
 * d[0 .. n] (zeroed by the caller), add `bytes` to steps [from, to] of a
 * timeline of n steps, clamped as ooc_timeline_add clamps. The values are
 * the prefix sums of d. O(1). */
static inline void
ooc_diff_add(int64_t *d, int32_t n, int32_t from, int32_t to, int64_t bytes)
{
  if (from < 0)
    from = 0;
  if (to >= n)
    to = n - 1;
  if (to < from)
    return;
  d[from] += bytes;
  d[to + 1] -= bytes;
}

/* What ooc_timeline_memory() counts. */
enum {
  OOC_TL_PERSISTENT = 1u << 0, /* weights, gradients, optimizer, input */
  OOC_TL_WORKSPACE = 1u << 1,  /* each step's kernel workspace */
  OOC_TL_GRADS = 1u << 2,      /* activation gradients while live */
  OOC_TL_ACTS = 1u << 3,       /* activations from production to last use
                                  (the input batch is persistent) */
  OOC_TL_ALL = 0xfu
};

/* Fill t (initialised for lv->n_steps) with the parts `what` of the
 * memory the liveness keeps resident, each tensor at ctx's footprint
 * (ooc_kit_footprint; ctx NULL: the raw bytes). O(acts log steps). */
void ooc_timeline_memory(ooc_timeline *t, const ooc_liveness *lv,
                         const ooc_planner_ctx *ctx, unsigned what);

/* --- footprints --------------------------------------------------------------- */

/* The device bytes a request of `bytes` takes under the planner's
 * allocator and budget (ooc_alloc_footprint with ctx->allocator, its
 * options (ctx->allocator_options), ctx->budget and ctx->chunk_bytes).
 * O(1). */
uint64_t ooc_kit_footprint(const ooc_planner_ctx *ctx, uint64_t bytes);

/* The footprint of the persistent state: every layer's parameters,
 * gradients and optimizer state (one tensor per layer) and the input
 * batch. O(layers). */
uint64_t ooc_kit_persistent(const ooc_planner_ctx *ctx,
                            const ooc_liveness *lv);

/* --- segments ------------------------------------------------------------------- */

typedef struct ooc_plankit {
  const ooc_liveness *lv;
  const ooc_costs *costs;
  int64_t *fwd_prefix;  /* n_steps + 1: recompute time of the forward
                           steps [0, s) (ooc_costs.recomp_ns) */
  int32_t *stamp;       /* per act: dedupe of the last frontier query */
  int32_t gen;
} ooc_plankit;

/* Prefix sums of the forward steps' recompute times over the schedule.
 * OOC_ENOMEM. */
int ooc_plankit_init(ooc_plankit *k, const ooc_liveness *lv,
                     const ooc_costs *costs, ooc_err *err);
void ooc_plankit_fini(ooc_plankit *k);

/* The input frontier of the forward segment [first, last] (forward step
 * indices, first <= last): every activation a forward step in it reads
 * whose producing step comes before `first`, in order of first
 * appearance, written to out (room for lv->n_acts). The input batch
 * counts when read. Returns the count. O(what the segment touches). */
int32_t ooc_kit_frontier(ooc_plankit *k, int32_t first, int32_t last,
                         int32_t *out);

/* Time to run the forward steps [first, last] again: the sum of their
 * recompute times (ooc_costs recomp_ns, the forward times unless the
 * profile has calibrated recompute times). O(1). */
int64_t ooc_kit_recompute_ns(const ooc_plankit *k, int32_t first,
                             int32_t last);

/* The chain cuts of the forward. The forward is the first *n_fwd steps of
 * the schedule; a cut after forward step s (s + 1 < *n_fwd) is a chain cut
 * when exactly one activation produced at or before s is used by a forward
 * step after s (the input batch, persistent, aside): that activation is
 * the cut's checkpoint, and nothing else before the cut is read after it.
 * On a chain every step is one; in a ResNet they fall between blocks; in
 * a DenseNet between dense blocks. Writes the cuts, ascending, to cuts and
 * their checkpoints to cut_act (room for lv->n_steps each); returns their
 * number, or OOC_ENOMEM. O(steps + acts x their forward span). */
int32_t ooc_kit_chain_cuts(const ooc_liveness *lv, int32_t *cuts,
                           int32_t *cut_act, int32_t *n_fwd, ooc_err *err);

/* Drop and recompute the forward steps [lo, hi] but their checkpoint keep
 * (an act, or -1): every activation produced there that backward reads
 * (the loss aside) is dropped after its last forward use and recomputed,
 * in forward order, right before the first backward step that reads any
 * of them; an activation produced there that backward never reads and
 * that a recomputed layer reads is recomputed as a transient (ooc_recompute
 * in plan.h) rather than kept resident until then. Only acts the plan
 * keeps are touched. mark: scratch of lv->n_acts bytes, all 0, left so.
 * Adds the records to pl; returns how many were added, or OOC_ENOMEM.
 * O(the segment's acts and their layers' inputs). */
int32_t ooc_kit_recompute_segment(const ooc_planner_ctx *ctx, ooc_plan *pl,
                                  int32_t lo, int32_t hi, int32_t keep,
                                  uint8_t *mark, ooc_err *err);

/* --- a plan's bound ------------------------------------------------------ */

/* A lower bound of pl's simulated iteration time (ns) from its decisions
 * alone, without lowering or simulating it: the larger of the compute
 * stream's kernels (every step at its algorithm, plus the layers its
 * recompute records re-run, at their cost-model times; the update over
 * the layers left on the device), each copy direction's swapped bytes at
 * its fastest rate (with an offloaded layer's gradients out and weights
 * in), and the CPU steps of the offloaded layers. A search can skip a
 * candidate whose bound already rules it out (joint's pruning).
 * O(steps + records + recomputed layers). */
int64_t ooc_kit_plan_bound(const ooc_planner_ctx *ctx, const ooc_plan *pl);

/* The fastest kernel algorithm the cost table offers step s (the forward
 * or backward of a layer with a choice, ir/algo.h) whose workspace takes
 * at most `avail` device bytes at ctx's footprint (UINT64_MAX: any) and,
 * for a forward with need_recomp, one that its recompute can run too;
 * its time into *ns when ns is not NULL. Ties: the lowest algorithm.
 * -1 when the step has no choice or no algorithm qualifies.
 * O(algorithms). */
int ooc_kit_fastest_algo(const ooc_planner_ctx *ctx, int32_t s,
                         uint64_t avail, int need_recomp, int64_t *ns);

/* SuperNeurons' dynamic convolution workspace (§3.5), the rule a framework
 * that asks cuDNN for the fastest algorithm under a workspace limit
 * follows: each convolution step of pl takes the fastest algorithm whose
 * workspace fits the bytes free at that step in pl's last detailed
 * simulation (det, of the program in ctx->scratch), counting its current
 * workspace as free. A forward that pl recomputes takes one its recompute
 * can run too. comp: scratch of lv->n_steps. Returns the number of steps
 * whose algorithm changed; the caller simulates pl again to see that the
 * choice fits (the free bytes were those of the old algorithms).
 * O(instructions + steps x algorithms). */
int32_t ooc_kit_fit_algos(const ooc_planner_ctx *ctx,
                          const ooc_sim_detail *det, ooc_plan *pl,
                          int32_t *comp);

/* The step that produces act a (the forward of its storage layer), -1 for
 * the input batch. O(1). */
int32_t ooc_kit_producer(const ooc_liveness *lv, int32_t a);

/* Can act a be dropped and rebuilt by its forward kernels in backward? 0
 * when a layer writing its storage reads another storage that a later
 * forward layer rewrites in place (softmax(l1), then dropout in place on
 * l1; a view, flatten or reshape, rewrites nothing): whether that storage
 * is then kept, swapped or rebuilt itself, it holds the rewritten tensor
 * by backward, and the rebuilt a would be computed from it. Every
 * planner that drops and rebuilds activations asks it. O(1): liveness
 * works it out (act_rebuild). */
int ooc_kit_recomputable(const ooc_liveness *lv, int32_t a);

#endif
