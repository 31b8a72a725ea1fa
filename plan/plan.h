/* plan/plan.h — the schedule, liveness analysis, plans and their lowering.
 *
 * The schedule is the sequence of compute steps of one training iteration:
 * the forward of every layer but the input in topological order, then the
 * backward of the same layers in reverse, then one optimizer UPDATE step.
 *
 * Liveness (SuperNeurons §3.2, Alg. 1) is shared by all planners: for every
 * activation storage tensor, the steps that use it; a tensor is freed after
 * its last use in forward or backward. Aliasing ops (flatten, reshape,
 * in-place activations) share their input's storage.
 *
 * A plan says, per activation storage tensor, keep | swap | recompute, with
 * the swap records (when to issue the swap-out, who waits for it, when to
 * issue the swap-in and which step needs it) and recompute records. The
 * lowering (ooc_plan_lower) turns a plan into a program: ALLOC/FREE from
 * liveness, workspace around each kernel, D2H + FREE for swap-outs, ALLOC +
 * H2D for swap-ins, recompute kernels, and the waits between streams.
 *
 * Conventions (plan/liveness.c, plan/plan.c, docs/plan-format.md):
 * - Act 0 is always the input batch (layer 0). It is persistent: allocated
 *   in the prologue as the OOC_T_INPUT tensor, counted in persistent_bytes,
 *   never freed by liveness, and has no gradient. It may be swapped (its
 *   records must bring it back before the iteration ends) but never
 *   recomputed. Acts 1.. are forward outputs, in layer order.
 * - Act bytes are the storage layer's out_bytes plus the saved_bytes of
 *   every layer sharing that storage (an in-place dropout's mask lives with
 *   the tensor it overwrites). A backward uses its own output's storage when
 *   it needs its output, or when its saved state is at least as large as
 *   that storage's out_bytes (attention's softmax; not batch-norm stats).
 * - A gradient has its storage act's out_bytes. The backward of a layer
 *   reads the gradient of its output and writes those of its inputs.
 * - Lowering (ooc_plan_lower): per step on the compute stream: recomputes
 *   due before it, ALLOC of the output act and of gradients first written
 *   here, ALLOC workspace, COMPUTE, FREE workspace, FREEs of what was last
 *   used here (deferred to after the UPDATE with OOC_PLAN_NO_FREE), then
 *   the swap-outs issued after it (D2H + FREE on the D2H stream) and the
 *   swap-ins issued after it (ALLOC + H2D on the H2D stream). A recompute
 *   reads its inputs at step `before`, which extends their lifetime.
 *
 * Ownership: ooc_liveness comes from ooc_liveness_alloc() and goes with
 * ooc_liveness_free(). ooc_plan is caller-embedded (ooc_plan_init,
 * ooc_plan_fini, ooc_plan_reset keeps capacity); it owns its records and a
 * lowering scratch area. None of them own the model.
 */
#ifndef OOC_PLAN_H
#define OOC_PLAN_H

#include <stddef.h>
#include <stdint.h>
#include "base/error.h"
#include "ir/model.h"
#include "ir/program.h"

typedef struct ooc_step {
  int32_t layer;
  uint8_t phase;       /* OOC_PH_FWD, OOC_PH_BWD or OOC_PH_UPDATE */
} ooc_step;

typedef struct ooc_liveness {
  const ooc_model *model;
  int32_t n_steps;
  ooc_step *steps;
  int32_t *fwd_step;    /* per layer: its forward step (-1 for the input) */
  int32_t *bwd_step;    /* per layer: its backward step (-1 if none) */
  int32_t update_step;

  /* Activation storage tensors: one per layer with alias_of == -1. */
  int32_t n_acts;
  int32_t *act_layer;   /* act id -> storage layer */
  int32_t *layer_act;   /* layer -> act id of its storage (aliases resolve) */
  uint64_t *act_bytes;  /* out_bytes + saved_bytes */
  int32_t *act_first;   /* uses of act a: use_steps[act_first[a] ..      */
  int32_t *act_nuses;   /*                     act_first[a]+act_nuses[a]) */
  int32_t *use_steps;   /* sorted ascending; includes the producing step */
  int32_t *act_last;    /* last use step (liveness free point) */
  int32_t *act_last_fwd;  /* last forward use step (-1: none) */
  int32_t *act_first_bwd; /* first backward use step (-1: none) */
  /* Acts a layer of the model marks "recompute" (the framework drops and
   * recomputes them): lowering adds their recompute wherever the plan
   * keeps them. act_forced[a] is 0 or 1; n_forced counts them. */
  uint8_t *act_forced;
  int32_t n_forced;
  /* Whether act a may be dropped and rebuilt by its forward kernels in
   * backward (0 or 1; 0 for the input batch): 0 when a layer writing its
   * storage reads another storage that a later forward layer rewrites in
   * place (softmax(l1), then dropout in place on l1; a view, flatten or
   * reshape, rewrites nothing): that storage holds the rewritten tensor
   * by backward, whether it is kept, swapped or rebuilt itself.
   * ooc_kit_recomputable reads it. */
  uint8_t *act_rebuild;

  /* Activations each step touches: step_acts[step_first[s] .. +step_nacts[s]) */
  int32_t *step_first, *step_nacts, *step_acts;

  /* Gradient storage per act: first written at grad_first[a] (a backward
   * step), freed after grad_last[a]; -1 when no gradient flows. */
  int32_t *grad_first, *grad_last;

  uint64_t persistent_bytes;   /* weights + grads + optimizer + input */
  uint64_t max_step_bytes;     /* largest working set of one step, each
                                  kernel with the smallest workspace an
                                  algorithm allows (no plan needs less) */
  int32_t max_step;            /* the step that has it */

  /* Extensions (plan.c, planners). */
  int n_layers;
  int32_t tied_linear;   /* a linear whose weights are an embedding's
                            table (that embedding's parameters cannot be
                            offloaded), -1 none */
  uint64_t *step_bytes;  /* per step: ooc_liveness_step_bytes() */
  uint64_t *min_ws;      /* per layer: ooc_algo_min_workspace() */
  uint64_t *grad_bytes;  /* per act: its gradient's bytes (0: none) */
  /* Layers sharing act a's storage, ascending (the storage layer first):
   * act_layers[act_lfirst[a] .. + act_nlayers[a]). */
  int32_t *act_lfirst, *act_nlayers, *act_layers;

  /* The program's tensor table, fixed for a model so that every plan of it
   * lowers onto the same ids: params (layers with parameters, in order),
   * the input, acts 1.., their gradients, then for every layer that has a
   * workspace or a choice of kernel algorithm (ir/algo.h) a forward and a
   * backward workspace. -1 where a layer/act has none. The workspaces'
   * bytes depend on the plan's algorithms; lowering sets them. */
  int32_t n_tensors;
  int32_t *layer_param_tensor;  /* per layer */
  int32_t *layer_ws_tensor;     /* per layer: forward and recompute
                                   workspace */
  int32_t *layer_bws_tensor;    /* per layer: backward workspace */
  int32_t *act_tensor;          /* per act (act 0: the input tensor) */
  int32_t *grad_tensor;         /* per act */
  int32_t recompute_inputs_max; /* ooc_plan_recompute_inputs_max's answer,
                                   counted once here */
} ooc_liveness;

int ooc_liveness_alloc(const ooc_model *m, ooc_liveness **out, ooc_err *err);
void ooc_liveness_free(ooc_liveness *lv);

/* May layer l's parameters leave the device? It has parameters and is
 * not an embedding whose table a tied linear shares (its gradient comes
 * from two backwards). O(1). */
static inline int
ooc_liveness_can_offload(const ooc_liveness *lv, int32_t l)
{
  const ooc_layer *y = &lv->model->layers[l];
  return y->params > 0 &&
         !(lv->tied_linear >= 0 && y->op == OOC_OPK_EMBEDDING);
}
/* The device bytes parameter offload can take off the persistent state:
 * the gradients and optimizer state of every layer that can go
 * (OOC_PARAM_OFFLOAD) but those skip marks (NULL: none), with their
 * weights when stream is 1 (OOC_PARAM_STREAM); *max_wgrad (may be NULL)
 * the most one of them allocates instead during a step (its gradients,
 * and its weights when streamed). O(layers). */
uint64_t ooc_liveness_offloadable(const ooc_liveness *lv, int stream,
                                  const uint8_t *skip, uint64_t *max_wgrad);
/* The persistent state of a plan that streams every layer it can: the
 * persistent bytes less ooc_liveness_offloadable(lv, 1) plus twice the
 * largest layer it allocates (the next one's copy arrives while one
 * runs). */
uint64_t ooc_liveness_offload_persistent(const ooc_liveness *lv);
/* ooc_plan_check_budget against ooc_liveness_offload_persistent. */
int ooc_plan_check_budget_offload(const ooc_liveness *lv, uint64_t budget,
                                  ooc_err *err);

/* Bytes step s needs resident at once: its activations, gradients and
 * the smallest workspace of its kernel (not the persistent state). */
uint64_t ooc_liveness_step_bytes(const ooc_liveness *lv, int32_t s);

/* "fwd conv1", "bwd conv1" or "update" into buf (at most n bytes). */
const char *ooc_step_name(const ooc_liveness *lv, int32_t s, char *buf,
                          size_t n);

/* First use of act a at a step > s, or -1 (binary search, O(log uses)). */
int32_t ooc_liveness_next_use(const ooc_liveness *lv, int32_t a, int32_t s);

/* OOC_EINVAL when budget < persistent_bytes + max_step_bytes, with a
 * message like "budget 1.00 GiB is below the working set of step
 * 'bwd conv1' (persistent 98.00 MiB + 1.20 GiB)". No planner can fit. */
int ooc_plan_check_budget(const ooc_liveness *lv, uint64_t budget,
                          ooc_err *err);

typedef enum { OOC_KEEP = 0, OOC_SWAP = 1, OOC_RECOMPUTE = 2 } ooc_action;

/* One swap of an activation: out to pinned host memory and back in. A
 * tensor may have several (used again later in forward, then in backward).
 * Steps are schedule indices; -1 means "none"/"as early as possible". */
typedef struct ooc_swap {
  int32_t act;         /* activation id */
  int32_t out_after;   /* D2H issued when this step's compute completes */
  int32_t out_wait;    /* this step's compute waits for the D2H (-1: none) */
  int32_t in_after;    /* H2D issued after this step completes (-1: as soon
                          as the D2H is done and memory allows) */
  int32_t in_before;   /* the step that needs it: waits for the H2D */
  uint8_t grad;        /* 0: the activation; 1: its gradient (the
                          schedule-window seed's variable-sequence covers
                          every variable, §3): swapped out after a backward
                          step that wrote it (grad_first <= out_after <
                          grad_last) and back in before the next backward
                          step that reads or accumulates it (in_before <=
                          grad_last) */
} ooc_swap;

/* Drop an activation after step free_after and recompute it (its forward
 * kernel again, phase RECOMP) right before step before. An activation
 * backward never reads may have before past its last use: a transient,
 * recomputed as the input of other recomputes and freed after `before`. */
typedef struct ooc_recompute {
  int32_t act;
  int32_t free_after;
  int32_t before;
} ooc_recompute;

enum {
  OOC_PLAN_NO_FREE = 1u << 0,     /* naive: nothing is freed in the iteration */
  OOC_PLAN_SYNC_LAYERS = 1u << 1  /* each step waits for every copy issued
                                     before it (vDNN's layer-boundary sync) */
};

/* A figure a planner reports beside its note (e.g. the peak of each of
 * its stages): the summary's planner_metrics object. */
enum { OOC_PLAN_METRICS = 12 };
typedef struct ooc_metric {
  char name[32];
  double value;
} ooc_metric;

/* The metric of a planner's work beside its simulations, in simulated
 * events (checkpoint-dp's rotor tables, and zero-offload passing on its
 * activation planner's): what a caller capping a search's work counts. */
#define OOC_METRIC_WORK_EVENTS "work_events"

/* The value of the metric named name among m[0 .. n), 0 when none. */
double ooc_metric_value(const ooc_metric *m, int n, const char *name);

/* Where a layer's parameters live (ooc_plan.param_where):
 * - OOC_PARAM_DEVICE: weights, gradients and optimizer state on the
 *   device, the step in the device UPDATE (every plan's default);
 * - OOC_PARAM_OFFLOAD: ZeRO-Offload (Ren et al. 2021, sec. 4): the
 *   weights stay on the device; the weight gradients are allocated for
 *   the layer's backward and copied to the host after it; master weights
 *   and optimizer state live in host memory only; the step runs on the
 *   CPU (a HOST instruction) as soon as the gradients arrive, and the new
 *   weights are copied back to the device by the end of the iteration.
 *   The program gives such a layer a weights-only param tensor, an
 *   OOC_T_WGRAD and an OOC_T_OPTSTATE tensor (appended to the table in
 *   layer order);
 * - OOC_PARAM_STREAM: as OFFLOAD, and the weights too live on the host
 *   (ZeRO-Infinity's parameter offload to CPU memory, Rajbhandari et al.
 *   2021, sec. 5.1): they are allocated and copied in one step ahead of
 *   each use (the layer's forward, its recomputes and its backward;
 *   consecutive steps share one copy) and freed after it; the CPU step
 *   writes the host copy the next iteration reads.
 * An embedding whose table a tied linear shares stays on the device. */
enum { OOC_PARAM_DEVICE = 0, OOC_PARAM_OFFLOAD = 1, OOC_PARAM_STREAM = 2 };

typedef struct ooc_plan {
  unsigned flags;
  uint8_t *action;         /* per act: ooc_action */
  uint8_t *algo;           /* per step: the kernel algorithm of its COMPUTE
                              (ir/algo.h; 0 the default); a recompute runs
                              its layer's forward algorithm */
  int32_t n_swaps, cap_swaps;
  ooc_swap *swaps;
  int32_t n_recomps, cap_recomps;
  ooc_recompute *recomps;
  uint64_t sched_budget;   /* budget the planner scheduled against */
  ooc_metric metrics[OOC_PLAN_METRICS];
  int n_metrics;
  char note[1024];         /* planner's one-line description of its choice
                              (e.g. tuned options), shown in reports */
  uint8_t *param_where;     /* per layer: OOC_PARAM_* (0 for layers
                              without parameters) */
  int32_t n_offloaded;       /* layers not at OOC_PARAM_DEVICE */
  /* Extensions. */
  const ooc_liveness *live;  /* the liveness it was initialised for */
  int32_t n_acts;
  struct ooc_plan_scratch *scratch; /* lowering work arrays (owned) */
} ooc_plan;

int ooc_plan_init(ooc_plan *pl, const ooc_liveness *lv, ooc_err *err);
void ooc_plan_fini(ooc_plan *pl);
void ooc_plan_reset(ooc_plan *pl);   /* all keep, default algorithms,
                                        no records, flags 0, sched_budget
                                        0, empty note, parameters on the
                                        device */
/* Append a record and set the act's action (OOC_SWAP / OOC_RECOMPUTE).
 * OOC_EINVAL for an act out of range, OOC_ENOMEM. Records are checked
 * against the schedule only when the plan is lowered. */
int ooc_plan_add_swap(ooc_plan *pl, const ooc_swap *s);
int ooc_plan_add_recompute(ooc_plan *pl, const ooc_recompute *r);
/* The activations a recompute of act reads (dropped after step
 * free_after): the inputs of the layers sharing its storage that had run
 * by then, but itself and the input batch; repeats possible. Writes at
 * most cap of them to out and returns how many there are. O(those
 * layers' inputs). */
int32_t ooc_plan_recompute_inputs(const ooc_liveness *lv, int32_t act,
                                  int32_t free_after, int32_t *out,
                                  int32_t cap);
/* The largest count ooc_plan_recompute_inputs can return for lv's model
 * (a bound for callers' buffers). O(1): liveness counts it once. */
int32_t ooc_plan_recompute_inputs_max(const ooc_liveness *lv);
/* Report metric name = value (at most OOC_PLAN_METRICS; more are
 * dropped; a name longer than 31 bytes is cut). */
void ooc_plan_add_metric(ooc_plan *pl, const char *name, double value);
/* Deep copy src into dst (dst initialised for the same liveness, or
 * zeroed); keeps dst's capacity. OOC_ENOMEM. */
int ooc_plan_copy(ooc_plan *dst, const ooc_plan *src);
/* counts[OOC_KEEP..OOC_RECOMPUTE] over acts 1.. (forward outputs); the
 * input (act 0) is counted only when it is not kept. Gradient swaps are
 * not counted here (ooc_plan_grad_swaps). */
void ooc_plan_counts(const ooc_plan *pl, int counts[3]);
/* Put layer l's parameters at where (OOC_PARAM_*). OOC_EINVAL with err
 * naming the layer when it has no parameters or is an embedding a tied
 * linear shares (its table's gradient would come from two backwards). */
int ooc_plan_set_param(ooc_plan *pl, int32_t l, int where, ooc_err *err);
/* Device bytes the plan's offload takes off the persistent state (each
 * offloaded layer's gradients and optimizer state, and a streamed
 * layer's weights), and the most one layer allocates instead during a
 * step (its weight gradients, with its weights when streamed). */
uint64_t ooc_plan_offload_saved(const ooc_plan *pl, uint64_t *max_wgrad);

/* The number of distinct gradients the plan swaps. */
int ooc_plan_grad_swaps(const ooc_plan *pl);
/* Does backward step s read, write or accumulate the gradient of act a?
 * (The backward of a's storage layers reads it; the backward of each
 * layer that takes a as input writes or accumulates it.) */
int ooc_liveness_step_uses_grad(const ooc_liveness *lv, int32_t s, int32_t a);

/* Does program p's tensor table hold what lowering gives lv's model: the
 * same kinds, layers and bytes (a parameter tensor's bytes with or
 * without its gradients and state; a workspace at least what each kernel
 * that uses it needs for its algorithm; a CPU-run layer's gradient and
 * state tensors after the table)? A plan file edited by hand could
 * otherwise make a real replay write past a tensor. OOC_EINVAL names the
 * first tensor that differs ("tensor 108 (act, layer 1): 1 bytes, the
 * model needs 16384"). O(tensors + instructions + arguments). */
int ooc_plan_check_tensors(const ooc_program *p, const ooc_liveness *lv,
                           ooc_err *err);

/* Lower a plan into p (reset first). Checks the records against the
 * schedule (OOC_EINVAL naming the record). O(steps + records + uses). */
int ooc_plan_lower(const ooc_plan *pl, const ooc_liveness *lv, ooc_program *p,
                   ooc_err *err);

#endif
