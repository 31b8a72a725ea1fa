/* plan/liveness.c — the schedule and liveness analysis (SuperNeurons §3.2,
 * Alg. 1).
 *
 * One idea: number the steps of one iteration (forward of layers 1..n-1,
 * backward of the same in reverse, one UPDATE), list for every step the
 * activation storage tensors it touches, and invert that into a sorted use
 * list per tensor. A tensor lives from its first use (the forward that
 * produces it) to its last; a gradient from its first writer (the backward
 * of its last consumer) to its last reader (the backward of its producer).
 * SuperNeurons builds in/out sets in O(N^2); the inverted lists give the
 * same free points in O(layers + inputs).
 *
 * Saved state (saved_bytes) is counted with the layer's output storage. A
 * backward that needs its output uses that storage; so does one whose
 * saved state is at least as large as the output (attention's softmax).
 * Small saved state (batch-norm statistics, a dropout mask) does not keep
 * a large output alive until the backward: that would hold, e.g., every
 * ResNet bn3 output across the whole iteration for a few KiB of stats.
 *
 * It also fixes the program's tensor table (plan.h) so that every plan of
 * one model lowers onto the same tensor ids.
 *
 * Ownership: ooc_liveness_alloc() returns one heap object whose arrays are
 * owned by it; ooc_liveness_free() releases all (accepts NULL). It borrows
 * the model, which must outlive it. Cost: O(layers + inputs) time and space.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ir/algo.h"
#include "plan/plan.h"
#include "base/util.h"

void
ooc_liveness_free(ooc_liveness *lv)
{
  if (lv == NULL)
    return;
  free(lv->steps);
  free(lv->fwd_step);
  free(lv->bwd_step);
  free(lv->act_layer);
  free(lv->layer_act);
  free(lv->act_bytes);
  free(lv->act_first);
  free(lv->act_nuses);
  free(lv->use_steps);
  free(lv->act_last);
  free(lv->act_last_fwd);
  free(lv->act_forced);
  free(lv->act_rebuild);
  free(lv->act_first_bwd);
  free(lv->step_first);
  free(lv->step_nacts);
  free(lv->step_acts);
  free(lv->grad_first);
  free(lv->grad_last);
  free(lv->step_bytes);
  free(lv->grad_bytes);
  free(lv->act_lfirst);
  free(lv->act_nlayers);
  free(lv->act_layers);
  free(lv->layer_param_tensor);
  free(lv->layer_ws_tensor);
  free(lv->layer_bws_tensor);
  free(lv->min_ws);
  free(lv->act_tensor);
  free(lv->grad_tensor);
  free(lv);
}

/* Bytes of a layer's persistent state (weights, gradients, optimizer). */
static uint64_t
param_state_bytes(const ooc_layer *l)
{
  return l->param_bytes + l->grad_bytes + l->opt_bytes;
}

/* Check the model's structure the analysis relies on. */
static int
check_model(const ooc_model *m, ooc_err *err)
{
  int i, k;

  if (m->n_layers < 1 || m->layers == NULL)
    return ooc_err_set(err, OOC_EINVAL, "model '%s': no layers",
                       m->name ? m->name : "?");
  if (m->layers[0].alias_of != -1 || m->layers[0].n_in != 0)
    return ooc_err_set(err, OOC_EINVAL,
                       "model '%s': layer 0 must be the input (no inputs, "
                       "no alias)", m->name ? m->name : "?");
  for (i = 1; i < m->n_layers; i++) {
    const ooc_layer *l = &m->layers[i];
    if (l->alias_of >= i || l->alias_of < -1)
      return ooc_err_set(err, OOC_EINVAL,
                         "model '%s': layer '%s' aliases layer %d, which "
                         "does not come before it", m->name ? m->name : "?",
                         l->name ? l->name : "?", l->alias_of);
    for (k = 0; k < l->n_in; k++) {
      int j = ooc_layer_input(m, l, k);
      if (j < 0 || j >= i)
        return ooc_err_set(err, OOC_EINVAL,
                           "model '%s': layer '%s' input %d is layer %d, "
                           "which does not come before it",
                           m->name ? m->name : "?", l->name ? l->name : "?",
                           k, j);
    }
  }
  return OOC_OK;
}

#define ALLOC_N(ptr, n)                                                      \
  do {                                                                       \
    (ptr) = calloc((size_t)(n) + 1, sizeof *(ptr));                          \
    if ((ptr) == NULL)                                                       \
      goto nomem;                                                            \
  } while (0)

int
ooc_liveness_alloc(const ooc_model *m, ooc_liveness **out, ooc_err *err)
{
  ooc_liveness *lv = NULL;
  int32_t *stamp = NULL, *gstamp = NULL;
  int n, i, k, rc;
  int32_t s, a, ns, na, total, bound;

  *out = NULL;
  rc = check_model(m, err);
  if (rc != OOC_OK)
    return rc;
  n = m->n_layers;
  lv = calloc(1, sizeof *lv);
  if (lv == NULL)
    goto nomem;
  lv->model = m;
  lv->n_layers = n;
  lv->tied_linear = -1;
  for (i = 0; i < n && lv->tied_linear < 0; i++)
    if (m->layers[i].op == OOC_OPK_LINEAR && m->layers[i].a.tied)
      lv->tied_linear = i;

  /* The schedule. */
  ns = 2 * (n - 1) + 1;
  lv->n_steps = ns;
  ALLOC_N(lv->steps, ns);
  ALLOC_N(lv->fwd_step, n);
  ALLOC_N(lv->bwd_step, n);
  lv->fwd_step[0] = lv->bwd_step[0] = -1;
  for (i = 1; i < n; i++) {
    s = i - 1;
    lv->steps[s] = (ooc_step){ .layer = i, .phase = OOC_PH_FWD };
    lv->fwd_step[i] = s;
    s = (n - 1) + (n - 1 - i);
    lv->steps[s] = (ooc_step){ .layer = i, .phase = OOC_PH_BWD };
    lv->bwd_step[i] = s;
  }
  lv->update_step = ns - 1;
  lv->steps[ns - 1] = (ooc_step){ .layer = -1, .phase = OOC_PH_UPDATE };

  /* Storage acts: layers are topological, so alias_of < i resolves in one
   * pass (the same answer as ooc_model_storage, without its walk). */
  ALLOC_N(lv->layer_act, n);
  ALLOC_N(lv->act_layer, n);
  na = 0;
  for (i = 0; i < n; i++) {
    if (m->layers[i].alias_of == -1) {
      lv->act_layer[na] = i;
      lv->layer_act[i] = na++;
    } else {
      lv->layer_act[i] = lv->layer_act[m->layers[i].alias_of];
    }
  }
  lv->n_acts = na;
  ALLOC_N(lv->act_bytes, na);
  ALLOC_N(lv->act_lfirst, na);
  ALLOC_N(lv->act_nlayers, na);
  ALLOC_N(lv->act_layers, n);
  for (a = 0; a < na; a++)
    lv->act_bytes[a] = m->layers[lv->act_layer[a]].out_bytes;
  for (i = 0; i < n; i++) {
    a = lv->layer_act[i];
    lv->act_bytes[a] += m->layers[i].saved_bytes;
    lv->act_nlayers[a]++;
  }
  for (a = 1; a < na; a++)
    lv->act_lfirst[a] = lv->act_lfirst[a - 1] + lv->act_nlayers[a - 1];
  {
    int32_t *fill = NULL;
    ALLOC_N(fill, na);
    for (i = 0; i < n; i++) {
      a = lv->layer_act[i];
      lv->act_layers[lv->act_lfirst[a] + fill[a]++] = i;
    }
    free(fill);
  }

  /* Acts per step, deduplicated with a stamp per act. */
  bound = 0;
  for (i = 1; i < n; i++)
    bound += 2 * m->layers[i].n_in + 2;
  ALLOC_N(lv->step_first, ns);
  ALLOC_N(lv->step_nacts, ns);
  ALLOC_N(lv->step_acts, bound);
  ALLOC_N(stamp, na);
  for (a = 0; a < na; a++)
    stamp[a] = -1;
  total = 0;
  for (s = 0; s < ns; s++) {
    const ooc_step *st = &lv->steps[s];
    const ooc_layer *l;
    lv->step_first[s] = total;
    if (st->phase == OOC_PH_UPDATE)
      continue;
    l = &m->layers[st->layer];
#define TOUCH(act)                                                           \
    do {                                                                     \
      int32_t t_ = (act);                                                    \
      if (stamp[t_] != s) {                                                  \
        stamp[t_] = s;                                                       \
        lv->step_acts[total++] = t_;                                         \
      }                                                                      \
    } while (0)
    if (st->phase == OOC_PH_FWD) {
      for (k = 0; k < l->n_in; k++)
        TOUCH(lv->layer_act[ooc_layer_input(m, l, k)]);
      TOUCH(lv->layer_act[st->layer]);
    } else {
      if (l->needs & OOC_NEED_INPUT)
        for (k = 0; k < l->n_in; k++)
          TOUCH(lv->layer_act[ooc_layer_input(m, l, k)]);
      if ((l->needs & OOC_NEED_OUTPUT) ||
          (l->has_bwd && l->saved_bytes > 0 &&
           l->saved_bytes >= m->layers[lv->act_layer[lv->layer_act[st->layer]]]
                                 .out_bytes))
        TOUCH(lv->layer_act[st->layer]);
    }
#undef TOUCH
    lv->step_nacts[s] = total - lv->step_first[s];
  }

  /* Invert into sorted use lists (steps visited in ascending order). */
  ALLOC_N(lv->act_first, na);
  ALLOC_N(lv->act_nuses, na);
  ALLOC_N(lv->act_last, na);
  ALLOC_N(lv->use_steps, total);
  for (k = 0; k < total; k++)
    lv->act_nuses[lv->step_acts[k]]++;
  for (a = 1; a < na; a++)
    lv->act_first[a] = lv->act_first[a - 1] + lv->act_nuses[a - 1];
  for (a = 0; a < na; a++)
    stamp[a] = 0;
  for (s = 0; s < ns; s++)
    for (k = 0; k < lv->step_nacts[s]; k++) {
      a = lv->step_acts[lv->step_first[s] + k];
      lv->use_steps[lv->act_first[a] + stamp[a]++] = s;
    }
  for (a = 0; a < na; a++)
    lv->act_last[a] = lv->act_nuses[a] > 0
                          ? lv->use_steps[lv->act_first[a] + lv->act_nuses[a] - 1]
                          : -1;
  /* The last forward and the first backward use: where a swap or a drop
   * can start and where the tensor is needed again. */
  ALLOC_N(lv->act_last_fwd, na);
  ALLOC_N(lv->act_first_bwd, na);
  ALLOC_N(lv->act_forced, na);
  lv->n_forced = 0;
  for (a = 0; a < na; a++)
    lv->act_forced[a] = 0;
  for (i = 1; i < n; i++)
    if (m->layers[i].recompute && lv->layer_act[i] > 0 &&
        !lv->act_forced[lv->layer_act[i]]) {
      lv->act_forced[lv->layer_act[i]] = 1;
      lv->n_forced++;
    }
  /* Rebuildable acts: stamp (scratch again) holds, per act, the last
   * forward step that rewrites its storage (a view rewrites nothing); an
   * act is not when a layer of it reads another act rewritten after that
   * layer's step. O(layers + inputs). */
  ALLOC_N(lv->act_rebuild, na);
  for (a = 0; a < na; a++)
    stamp[a] = -1;
  for (i = 1; i < n; i++)
    if (m->layers[i].op != OOC_OPK_FLATTEN &&
        m->layers[i].op != OOC_OPK_RESHAPE &&
        lv->fwd_step[i] > stamp[lv->layer_act[i]])
      stamp[lv->layer_act[i]] = lv->fwd_step[i];
  for (a = 1; a < na; a++)
    lv->act_rebuild[a] = 1;
  for (i = 1; i < n; i++) {
    const ooc_layer *ly = &m->layers[i];
    for (k = 0; k < ly->n_in; k++) {
      int32_t b = lv->layer_act[ooc_layer_input(m, ly, k)];
      if (b >= 0 && b != lv->layer_act[i] && stamp[b] > lv->fwd_step[i])
        lv->act_rebuild[lv->layer_act[i]] = 0;
    }
  }
  for (a = 0; a < na; a++) {
    const int32_t *u = lv->use_steps + lv->act_first[a];
    lv->act_last_fwd[a] = lv->act_first_bwd[a] = -1;
    for (k = 0; k < lv->act_nuses[a]; k++) {
      uint8_t ph = lv->steps[u[k]].phase;
      if (ph == OOC_PH_FWD)
        lv->act_last_fwd[a] = u[k];
      else if (ph == OOC_PH_BWD && lv->act_first_bwd[a] < 0)
        lv->act_first_bwd[a] = u[k];
    }
  }

  /* Gradients: touched by the backward of every layer sharing the act
   * (reads its output's gradient) and of every consumer (writes it). */
  ALLOC_N(lv->grad_first, na);
  ALLOC_N(lv->grad_last, na);
  ALLOC_N(lv->grad_bytes, na);
  for (a = 0; a < na; a++)
    lv->grad_first[a] = lv->grad_last[a] = -1;
  ALLOC_N(lv->step_bytes, ns);
  ALLOC_N(lv->min_ws, n);
  for (i = 0; i < n; i++)
    lv->min_ws[i] = ooc_algo_min_workspace(m, i);
  ALLOC_N(gstamp, na);
  for (a = 0; a < na; a++)
    gstamp[a] = -1;
  for (s = 0; s < ns; s++) {
    const ooc_step *st = &lv->steps[s];
    uint64_t b = 0;
    for (k = 0; k < lv->step_nacts[s]; k++) {
      a = lv->step_acts[lv->step_first[s] + k];
      if (a != 0)
        b += lv->act_bytes[a];
    }
    if (st->phase != OOC_PH_UPDATE) {
      const ooc_layer *l = &m->layers[st->layer];
      b += lv->min_ws[st->layer];
      if (st->phase == OOC_PH_BWD) {
        for (k = -1; k < l->n_in; k++) {
          if (!ooc_layer_bwd_grad(l, k))
            continue;
          a = lv->layer_act[k < 0 ? st->layer : ooc_layer_input(m, l, k)];
          if (a == 0 || gstamp[a] == s)
            continue;
          gstamp[a] = s;
          if (lv->grad_first[a] < 0)
            lv->grad_first[a] = s;
          lv->grad_last[a] = s;
          lv->grad_bytes[a] = m->layers[lv->act_layer[a]].out_bytes;
          b += lv->grad_bytes[a];
        }
      }
    }
    lv->step_bytes[s] = b;
    if (b > lv->max_step_bytes || s == 0) {
      lv->max_step_bytes = b;
      lv->max_step = s;
    }
  }

  /* Persistent state and the tensor table. */
  ALLOC_N(lv->layer_param_tensor, n);
  ALLOC_N(lv->layer_ws_tensor, n);
  ALLOC_N(lv->layer_bws_tensor, n);
  ALLOC_N(lv->act_tensor, na);
  ALLOC_N(lv->grad_tensor, na);
  lv->persistent_bytes = lv->act_bytes[0];
  lv->n_tensors = 0;
  for (i = 0; i < n; i++) {
    uint64_t pb = param_state_bytes(&m->layers[i]);
    lv->persistent_bytes += pb;
    lv->layer_param_tensor[i] = pb > 0 ? lv->n_tensors++ : -1;
  }
  lv->act_tensor[0] = lv->n_tensors++;
  for (a = 1; a < na; a++)
    lv->act_tensor[a] = lv->n_tensors++;
  for (a = 0; a < na; a++)
    lv->grad_tensor[a] = lv->grad_first[a] >= 0 ? lv->n_tensors++ : -1;
  for (i = 0; i < n; i++) {
    int ws = i > 0 && (m->layers[i].workspace_bytes > 0 ||
                       ooc_algo_has_choice(m, i));
    lv->layer_ws_tensor[i] = ws ? lv->n_tensors++ : -1;
    lv->layer_bws_tensor[i] = ws ? lv->n_tensors++ : -1;
  }
  /* The most inputs a recompute of one act can read: the inputs of the
   * layers sharing its storage (ooc_plan_recompute_inputs_max), asked
   * for per segment by the toolkit. */
  lv->recompute_inputs_max = 0;
  for (a = 1; a < na; a++) {
    int32_t c = 0;
    for (k = 0; k < lv->act_nlayers[a]; k++)
      c += m->layers[lv->act_layers[lv->act_lfirst[a] + k]].n_in;
    if (c > lv->recompute_inputs_max)
      lv->recompute_inputs_max = c;
  }

  free(stamp);
  free(gstamp);
  *out = lv;
  return OOC_OK;
nomem:
  free(stamp);
  free(gstamp);
  ooc_liveness_free(lv);
  return ooc_err_set(err, OOC_ENOMEM, "liveness: out of memory");
}

uint64_t
ooc_liveness_step_bytes(const ooc_liveness *lv, int32_t s)
{
  if (s < 0 || s >= lv->n_steps)
    return 0;
  return lv->step_bytes[s];
}

const char *
ooc_step_name(const ooc_liveness *lv, int32_t s, char *buf, size_t n)
{
  const ooc_step *st;

  if (s < 0 || s >= lv->n_steps) {
    snprintf(buf, n, "step %d", s);
    return buf;
  }
  st = &lv->steps[s];
  if (st->phase == OOC_PH_UPDATE)
    snprintf(buf, n, "update");
  else
    snprintf(buf, n, "%s %s", st->phase == OOC_PH_FWD ? "fwd" : "bwd",
             lv->model->layers[st->layer].name
                 ? lv->model->layers[st->layer].name : "?");
  return buf;
}

int32_t
ooc_liveness_next_use(const ooc_liveness *lv, int32_t a, int32_t s)
{
  const int32_t *u;
  int32_t lo = 0, hi;

  if (a < 0 || a >= lv->n_acts)
    return -1;
  u = lv->use_steps + lv->act_first[a];
  hi = lv->act_nuses[a];
  while (lo < hi) {
    int32_t mid = lo + (hi - lo) / 2;
    if (u[mid] <= s)
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo < lv->act_nuses[a] ? u[lo] : -1;
}

int
ooc_plan_check_budget(const ooc_liveness *lv, uint64_t budget, ooc_err *err)
{
  char b1[32], b2[32], b3[32], name[160];

  if (budget >= lv->persistent_bytes &&
      budget - lv->persistent_bytes >= lv->max_step_bytes)
    return OOC_OK;
  return ooc_err_set(err, OOC_EINVAL,
                     "budget %s is below the working set of step '%s' "
                     "(persistent %s + %s)",
                     ooc_fmt_bytes(budget, b1, sizeof b1),
                     ooc_step_name(lv, lv->max_step, name, sizeof name),
                     ooc_fmt_bytes(lv->persistent_bytes, b2, sizeof b2),
                     ooc_fmt_bytes(lv->max_step_bytes, b3, sizeof b3));
}

uint64_t
ooc_liveness_offloadable(const ooc_liveness *lv, int stream,
                         const uint8_t *skip, uint64_t *max_wgrad)
{
  const ooc_model *m = lv->model;
  uint64_t sum = 0, mx = 0;
  int32_t l;

  for (l = 0; l < m->n_layers; l++) {
    const ooc_layer *y = &m->layers[l];
    uint64_t tr = y->grad_bytes + (stream ? y->param_bytes : 0);
    if (!ooc_liveness_can_offload(lv, l) || (skip != NULL && skip[l]))
      continue;
    sum += tr + y->opt_bytes;
    if (tr > mx)
      mx = tr;
  }
  if (max_wgrad != NULL)
    *max_wgrad = mx;
  return sum;
}

uint64_t
ooc_liveness_offload_persistent(const ooc_liveness *lv)
{
  uint64_t mx, off = ooc_liveness_offloadable(lv, 1, NULL, &mx);

  return lv->persistent_bytes - off + 2 * mx;
}

int
ooc_plan_check_budget_offload(const ooc_liveness *lv, uint64_t budget,
                              ooc_err *err)
{
  char b1[32], b2[32], b3[32], name[160];
  uint64_t pers = ooc_liveness_offload_persistent(lv);

  if (budget >= pers && budget - pers >= lv->max_step_bytes)
    return OOC_OK;
  return ooc_err_set(err, OOC_EINVAL,
                     "budget %s is below the working set of step '%s' "
                     "(persistent with the parameters on the host %s "
                     "+ %s)",
                     ooc_fmt_bytes(budget, b1, sizeof b1),
                     ooc_step_name(lv, lv->max_step, name, sizeof name),
                     ooc_fmt_bytes(pers, b2, sizeof b2),
                     ooc_fmt_bytes(lv->max_step_bytes, b3, sizeof b3));
}
