/* planners/vdnn.c — vDNN: offload forward outputs, prefetch one layer ahead,
 * synchronise at layer boundaries.
 *
 * Follows the OOC-Paleo seed, §2.1 (vDNN [Rhu et al. 2016]: two streams,
 * cudaMemcpyAsync swap-out/-in, "synchronizes computation and swap-in/out
 * of data at the end of each layer") and §3.4 (the vDNN-like schedule:
 * "during backward propagation buffer of layer_{l-1} starts swap-in at the
 * same time as layer_l starts processing, and layer_l runs right after both
 * swap-in and layer_{l+1} processing finished").
 *
 * Mapping to plan records (plan/plan.h), per activation storage tensor that
 * backward reads again (policy=all), or only those feeding a convolution
 * (policy=conv, vDNN_conv):
 *   out_after  its last forward use: vDNN offloads a feature map once every
 *              forward consumer is done (its reference count drops);
 *   out_wait   out_after + 2: the offload overlaps the next layer's forward
 *              only, and the layer after that starts when it is done (the
 *              layer-boundary synchronisation of the original);
 *   in_after   in_before - 2: the prefetch is issued as the backward layer
 *              before the one that needs it starts (one layer ahead);
 *   in_before  its first backward use, which waits for the prefetch.
 * A tensor stays resident between its forward uses (skip connections), as
 * in vDNN; tensors no backward step reads are freed by liveness. The plan
 * does not set OOC_PLAN_SYNC_LAYERS: with it every step waits for every
 * copy issued before it, so the prefetch issued as bwd(l) starts would be
 * waited for by bwd(l) itself and nothing would overlap; the explicit
 * waits above give vDNN's one layer of overlap, then a barrier.
 *
 * The last forward and first backward uses come from the liveness (the
 * planning toolkit's first/last uses, plan/plan.h).
 *
 * Cost: O(activations). No search, no simulation.
 * Ownership: the state holds one mark array (vdnn_alloc/vdnn_free); the
 * planner writes only the caller's plan.
 */
#include "config.h"

#include <string.h>
#include <stdio.h>
#include <stdlib.h>
#include "plan/planner.h"

enum { POLICY_ALL = 0, POLICY_CONV = 1 };

/* The ops vDNN_conv treats as convolutions. */
static int is_conv(ooc_op_kind k)
{
  return k == OOC_OPK_CONV2D || k == OOC_OPK_CONV3D || k == OOC_OPK_DECONV2D;
}

struct vdnn_state {
  int policy;
  uint8_t *conv_in;   /* per act: 1 if it feeds a convolution */
};

/* Mark the activations that are inputs of a convolution (vDNN_conv
 * offloads only those). O(layers + inputs). */
static void mark_conv_inputs(const ooc_model *m, const ooc_liveness *lv,
                             uint8_t *mark)
{
  for (int l = 1; l < m->n_layers; l++) {
    const ooc_layer *ly = &m->layers[l];
    if (!is_conv(ly->op))
      continue;
    for (int i = 0; i < ly->n_in; i++) {
      int32_t a = lv->layer_act[ooc_layer_input(m, ly, i)];
      if (a >= 0)
        mark[a] = 1;
    }
  }
}

/* The convolution-input marks vDNN_conv reads. */
static int vdnn_alloc(void *state, const ooc_planner_ctx *ctx, ooc_err *err)
{
  struct vdnn_state *st = state;

  st->conv_in = calloc((size_t)ctx->live->n_acts + 1, 1);
  if (st->conv_in == NULL)
    return ooc_err_set(err, OOC_ENOMEM, "planner 'vdnn': out of memory");
  mark_conv_inputs(ctx->model, ctx->live, st->conv_in);
  return OOC_OK;
}

static void vdnn_free(void *state)
{
  struct vdnn_state *st = state;

  free(st->conv_in);
}

/* One pass over the activations; no search. */
static int vdnn_plan(void *state, const ooc_planner_ctx *ctx, ooc_plan *pl,
                     ooc_err *err)
{
  struct vdnn_state *st = state;
  const ooc_liveness *lv = ctx->live;
  const char *pol = NULL;
  int32_t n_swapped = 0;
  uint64_t swapped_bytes = 0;

  st->policy = POLICY_ALL;
  if (ooc_planner_opt_str(ctx, "policy", &pol)) {
    if (strcmp(pol, "all") == 0)
      st->policy = POLICY_ALL;
    else if (strcmp(pol, "conv") == 0)
      st->policy = POLICY_CONV;
    else
      return ooc_err_set(err, OOC_EINVAL,
                         "planner 'vdnn': option policy=%s: expected all or "
                         "conv", pol);
  }

  for (int32_t a = 1; a < lv->n_acts; a++) {
    int32_t last_fwd = lv->act_last_fwd[a], first_bwd = lv->act_first_bwd[a];

    if (lv->act_bytes[a] == 0)
      continue;
    if (st->policy == POLICY_CONV && !st->conv_in[a])
      continue;
    /* Nothing to gain without a step in between. */
    if (last_fwd < 0 || first_bwd < 0 || first_bwd - last_fwd < 2)
      continue;

    ooc_swap sw = {
      .act = a,
      .out_after = last_fwd,
      .out_wait = last_fwd + 2 < first_bwd ? last_fwd + 2 : -1,
      .in_after = first_bwd - 2,
      .in_before = first_bwd,
    };
    if (ooc_plan_add_swap(pl, &sw) != OOC_OK)
      return ooc_err_set(err, OOC_ENOMEM, "planner 'vdnn': out of memory");
    n_swapped++;
    swapped_bytes += lv->act_bytes[a];
  }
  snprintf(pl->note, sizeof pl->note,
           "vdnn: policy=%s, offloaded %d tensors (%.3f GiB)",
           st->policy == POLICY_ALL ? "all" : "conv", (int)n_swapped,
           (double)swapped_bytes / (1024.0 * 1024.0 * 1024.0));
  return OOC_OK;
}

static const char *const vdnn_options[] = { "policy", NULL };

const ooc_planner_type ooc_planner_vdnn = {
  .name = "vdnn",
  .summary = "vDNN: offload forward outputs, prefetch one layer ahead, "
             "sync at layer boundaries",
  .cite = "OOC-Paleo paper (a performance model of out-of-core training by "
          "data swapping and Unified Memory; its title is not in our copy) "
          "§2.1, §3.4 (vDNN, Rhu et al. 2016)",
  .state_size = sizeof(struct vdnn_state),
  .options = vdnn_options,
  .alloc = vdnn_alloc,
  .free = vdnn_free,
  .plan = vdnn_plan,
};
