/* ir/kernel.c — every COMPUTE of a program resolved into what its kernel
 * reads and writes (ir/kernel.h), for the executor and for the check of
 * plan files before they are simulated.
 *
 * One idea: the program names tensors by id and says, per COMPUTE, which
 * ones it touches (args); the op table (ir/ops.c) says what each op's
 * forward and backward compute and read. The tensor table follows plan/'s
 * layout (plan/plan.h: one param tensor per layer with parameters, one act
 * per storage layer with the input batch as act 0, one gradient per act
 * that has one, a forward and a backward workspace per layer that has
 * one, and for a layer whose optimizer runs on the host a wgrad and an
 * optstate tensor), so a tensor's kind and layer say its role. This file
 * finds, for each COMPUTE, the tensor in each role its kernel needs, and
 * checks that the instruction lists it (written where the kernel writes),
 * so no interpreter touches a buffer the semantics (ir/semantics.h)
 * did not vouch for. The one exception is a tied linear's weights and,
 * when its embedding's optimizer runs on the device, their gradients,
 * which live in the embedding's parameter tensor (persistent, allocated
 * in the prologue) and which the program does not list.
 *
 * Where a backward writes its weight gradients (dparam): after the
 * weights in the layer's param tensor, or, for a layer whose optimizer
 * runs on the host (docs/offload.md), at 0 in its wgrad tensor, which the
 * backward lists as written.
 *
 * Gradients are written by every consumer of an activation: the first
 * writer after the gradient's ALLOC overwrites it, later ones add to it,
 * and an in-place layer (relu, act, dropout with in_place) turns its
 * output's gradient into its input's where it lies. Weight gradients are
 * overwritten by their first writer of an iteration (a tied table gets a
 * second). One pass over the program in index order decides each
 * (a valid order: waits point backwards, and the semantics make every
 * write to a tensor from one stream ordered before the next).
 *
 * The same pass checks the order the semantics cannot see, since they
 * only know whether a tensor holds data, not whose: a COMPUTE lists as
 * written only what its kernel writes; each input is read as its layer
 * left it (the version of the activation: the last layer of its storage
 * that wrote it, restored by a swap-in); a gradient is read once every
 * consumer added to it; the update comes after the backwards that write
 * its weight gradients.
 *
 * Cost: O(layers + instructions x args + writers x log writers): a
 * gradient's readers bisect its writers (grads_complete; an in-place
 * chain of n layers shares one gradient). Ownership: ooc_kernels owns
 * its arrays (ooc_kernels_free).
 */
#include "config.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ir/kernel.h"

typedef struct roles {
  int n;
  int32_t *param, *act, *grad, *ws; /* per layer; ws: 2 per layer */
  int32_t *wgrad;                   /* per layer: OOC_T_WGRAD, -1 */
  int *storage;                     /* per layer: its storage layer */
  uint64_t *saved_off;              /* per layer */
} roles;

static void
roles_free(roles *r)
{
  free(r->param);
  free(r->wgrad);
  free(r->act);
  free(r->grad);
  free(r->ws);
  free(r->storage);
  free(r->saved_off);
}

static int
roles_build(roles *r, const ooc_model *m, const ooc_program *p, ooc_err *err)
{
  int n = m->n_layers, l;
  int32_t t;
  uint64_t *cum;

  memset(r, 0, sizeof *r);
  r->n = n;
  r->param = malloc((size_t)n * sizeof *r->param);
  r->wgrad = malloc((size_t)n * sizeof *r->wgrad);
  r->act = malloc((size_t)n * sizeof *r->act);
  r->grad = malloc((size_t)n * sizeof *r->grad);
  r->ws = malloc(2 * (size_t)n * sizeof *r->ws);
  r->storage = malloc((size_t)n * sizeof *r->storage);
  r->saved_off = malloc((size_t)n * sizeof *r->saved_off);
  cum = calloc((size_t)n, sizeof *cum);
  if (!r->param || !r->wgrad || !r->act || !r->grad || !r->ws || !r->storage ||
      !r->saved_off || !cum) {
    free(cum);
    return ooc_err_set(err, OOC_ENOMEM, "out of memory");
  }
  for (l = 0; l < n; l++) {
    r->param[l] = r->wgrad[l] = r->act[l] = r->grad[l] = -1;
    r->ws[2 * l] = r->ws[2 * l + 1] = -1;
    r->storage[l] = m->layers[l].alias_of >= 0
                        ? r->storage[m->layers[l].alias_of] : l;
    cum[l] = m->layers[l].out_bytes;
  }
  for (l = 0; l < n; l++) {
    r->saved_off[l] = cum[r->storage[l]];
    cum[r->storage[l]] += m->layers[l].saved_bytes;
  }
  free(cum);
  for (t = 0; t < p->n_tensors; t++) {
    const ooc_ptensor *pt = &p->tensors[t];
    int32_t *slot = NULL;
    l = pt->layer;
    if (l < 0 || l >= n)
      return ooc_err_set(err, OOC_EINVAL,
                         "tensor %d names layer %d, which the "
                         "model does not have", t, l);
    switch (pt->kind) {
    case OOC_T_PARAM: slot = &r->param[l]; break;
    case OOC_T_WGRAD: slot = &r->wgrad[l]; break;
    case OOC_T_OPTSTATE: continue;      /* the host step's alone */
    case OOC_T_INPUT: slot = l == 0 ? &r->act[0] : NULL; break;
    case OOC_T_ACT: slot = r->storage[l] == l && l > 0 ? &r->act[l] : NULL;
      break;
    case OOC_T_GRAD: slot = r->storage[l] == l ? &r->grad[l] : NULL; break;
    case OOC_T_WORKSPACE:
      slot = r->ws[2 * l] < 0 ? &r->ws[2 * l] : &r->ws[2 * l + 1];
      break;
    default: break;
    }
    if (slot == NULL || *slot >= 0)
      return ooc_err_set(err, OOC_EINVAL,
                         "tensor %d (%s of layer %d '%s') does "
                         "not follow the tensor table of plan/ (one per "
                         "role and storage layer, plan/plan.h)", t,
                         ooc_tensor_kind_name((ooc_tensor_kind)pt->kind), l,
                         m->layers[l].name ? m->layers[l].name : "?");
    *slot = t;
  }
  return OOC_OK;
}

static const char *
lname(const ooc_model *m, int32_t l)
{
  return l >= 0 && l < m->n_layers && m->layers[l].name ? m->layers[l].name
                                                         : "?";
}

int
ooc_kernel_err(ooc_err *err, const ooc_model *m, int32_t instr, int phase,
               int32_t layer, const char *fmt, ...)
{
  char what[512];
  va_list ap;

  va_start(ap, fmt);
  vsnprintf(what, sizeof what, fmt, ap);
  va_end(ap);
  return ooc_err_set(err, OOC_EINVAL,
                     "instruction %d (COMPUTE %s, layer %d '%s'): %s", instr,
                     ooc_phase_name((ooc_phase)phase), layer, lname(m, layer),
                     what);
}

/* The arg of instruction in naming tensor t: 1 read, 2 written, 0 none. */
static int
arg_of(const ooc_program *p, const ooc_instr *in, int32_t t)
{
  int32_t k;

  for (k = 0; k < in->n_args; k++) {
    int32_t a = p->args[in->arg_first + k];
    if (OOC_ARG_TENSOR(a) == t)
      return a & OOC_ARG_WRITE ? 2 : 1;
  }
  return 0;
}

/* The kernel of instruction i needs tensor t (written when `write`). */
static int
need(const ooc_model *m, const ooc_program *p, int32_t i, int32_t t,
     int write, const char *role, ooc_err *err)
{
  const ooc_instr *in = &p->instr[i];
  int a;
  int32_t tl;

  if (t < 0)
    return OOC_OK;
  a = arg_of(p, in, t);
  if (a == 2 || (a == 1 && !write))
    return OOC_OK;
  tl = p->tensors[t].layer;
  return ooc_kernel_err(err, m, i, in->phase, in->layer,
                     "its kernel %s tensor %d (%s, %s of layer %d '%s'), "
                     "which the instruction %s", write ? "writes" : "reads",
                     t, role,
                     ooc_tensor_kind_name((ooc_tensor_kind)p->tensors[t].kind),
                     tl, lname(m, tl),
                     a == 0 ? "does not list" : "lists as read only");
}

void
ooc_kernels_free(ooc_kernels *ks)
{
  if (ks == NULL)
    return;
  free(ks->k);
  free(ks->of_instr);
  free(ks->ints);
  free(ks->flags);
  memset(ks, 0, sizeof *ks);
}

/* Whether kernel k writes tensor t: its output (forward, recompute,
 * and an alias's storage), its workspace, and in backward the gradients
 * it produces, its weight gradients (in the param tensor when they live
 * there), a tied table's, and its output's gradient when nothing wrote
 * that yet (`fresh`: the loss seeds it, another kernel takes it as 0). */
static int
writes(const ooc_kernel *k, int32_t t, const uint8_t *fresh)
{
  int j;

  if (t < 0)
    return 0;
  if (t == k->ws)
    return 1;
  if (k->phase != OOC_PH_BWD)
    return t == k->out;
  if (t == k->dparam || t == k->tied_dparam ||
      (t == k->dout && fresh[t]) ||
      (k->skip && (t == k->dout || t == k->out)))
    return 1;
  for (j = 0; j < k->n_in; j++)
    if (t == k->din[j])
      return 1;
  return 0;
}

/* A COMPUTE lists as written only what its kernel writes: a written arg
 * needs no valid data before it and leaves the tensor valid after, so one
 * that the kernel only reads (or never touches) would let a plan drop the
 * swap-in or recompute that should have brought its data. */
static int
check_writes(const ooc_model *m, const ooc_program *p, int32_t i,
             const ooc_kernel *k, const uint8_t *fresh, ooc_err *err)
{
  const ooc_instr *in = &p->instr[i];
  int32_t a;

  for (a = 0; a < in->n_args; a++) {
    int32_t g = p->args[in->arg_first + a], t = OOC_ARG_TENSOR(g), tl;
    if (!(g & OOC_ARG_WRITE) || writes(k, t, fresh))
      continue;
    tl = p->tensors[t].layer;
    return ooc_kernel_err(err, m, i, in->phase, in->layer, "lists "
                          "tensor %d (%s of layer %d '%s') as written, "
                          "which its kernel does not write", t,
                       ooc_tensor_kind_name((ooc_tensor_kind)
                                            p->tensors[t].kind),
                       tl, lname(m, tl));
  }
  return OOC_OK;
}

/* Resolve COMPUTE i into k (arrays from the cursors). */
static int
resolve(const roles *r, const ooc_model *m, const ooc_program *p,
        int32_t i, ooc_kernel *k, int32_t **ic, uint8_t **fc,
        ooc_err *err)
{
  const ooc_instr *in = &p->instr[i];
  const ooc_layer *ly;
  int32_t *din, *inv;
  int j, bwd, rc;

  memset(k, 0, sizeof *k);
  k->instr = i;
  k->layer = in->layer;
  k->phase = in->phase;
  k->algo = in->algo;
  k->out = k->dout = k->param = k->tied = k->ws = -1;
  k->dparam = k->tied_dparam = -1;
  if (in->phase == OOC_PH_UPDATE) {
    int32_t a;
    k->params = *ic;
    for (a = 0; a < in->n_args; a++) {
      int32_t t = OOC_ARG_TENSOR(p->args[in->arg_first + a]);
      if (p->tensors[t].kind == OOC_T_PARAM) {
        if (!(p->args[in->arg_first + a] & OOC_ARG_WRITE))
          return need(m, p, i, t, 1, "parameters to update", err);
        (*ic)[k->n_params++] = t;
      }
    }
    *ic += k->n_params;
    return OOC_OK;
  }
  if (in->layer <= 0 || in->layer >= m->n_layers)
    return ooc_err_set(err, OOC_EINVAL,
                       "instruction %d (COMPUTE %s) runs layer "
                       "%d, which has no kernel", i,
                       ooc_phase_name((ooc_phase)in->phase), in->layer);
  ly = &m->layers[in->layer];
  bwd = in->phase == OOC_PH_BWD;
  k->n_in = ly->n_in;
  inv = *ic;
  din = *ic + ly->n_in;
  *ic += 2 * ly->n_in;
  k->in = inv;
  k->din = din;
  k->din_acc = *fc;
  *fc += ly->n_in;
  for (j = 0; j < ly->n_in; j++) {
    int s = r->storage[ooc_layer_input(m, ly, j)];
    inv[j] = r->act[s];
    din[j] = bwd && ly->grad_in ? r->grad[s] : -1;
  }
  k->out = r->act[r->storage[in->layer]];
  k->saved_off = r->saved_off[in->layer];
  k->param = r->param[in->layer];
  if (r->wgrad[in->layer] >= 0) {
    k->dparam = r->wgrad[in->layer];
    k->dparam_off = 0;
  } else if (k->param >= 0) {
    k->dparam = k->param;
    k->dparam_off = ly->param_bytes;
  }
  k->inplace = (ly->op == OOC_OPK_RELU || ly->op == OOC_OPK_ACT ||
                ly->op == OOC_OPK_DROPOUT) && ly->alias_of >= 0;
  if (ly->op == OOC_OPK_LINEAR && ly->a.tied) {
    int e = ooc_model_tied_embedding(m, in->layer);
    if (e < 0 || r->param[e] < 0)
      return ooc_err_set(err, OOC_EINVAL,
                         "layer %d '%s' is a tied linear, but no "
                         "embedding has vocab %lld and out %lld", in->layer,
                         ly->name ? ly->name : "?", (long long)ly->a.out,
                         (long long)m->layers[ooc_layer_input(m, ly, 0)]
                             .out.d[m->layers[ooc_layer_input(m, ly, 0)]
                                        .out.ndim - 1]);
    k->tied = r->param[e];
    k->tied_dparam = r->wgrad[e] >= 0 ? r->wgrad[e] : k->tied;
    k->tied_dparam_off = r->wgrad[e] >= 0 ? 0 : m->layers[e].param_bytes;
  }
  k->ws = r->ws[2 * in->layer + bwd];
  if (k->ws >= 0 && (p->tensors[k->ws].bytes == 0 ||
                     arg_of(p, in, k->ws) == 0))
    k->ws = -1;
  k->ws_bytes = k->ws >= 0 ? p->tensors[k->ws].bytes : 0;
  if (bwd) {
    k->dout = r->grad[r->storage[in->layer]];
    k->skip = !ly->has_bwd || ly->op == OOC_OPK_FLATTEN ||
              ly->op == OOC_OPK_RESHAPE;
  } else {
    k->skip = ly->op == OOC_OPK_FLATTEN || ly->op == OOC_OPK_RESHAPE;
  }
  if (k->skip)
    return OOC_OK;
  /* What the kernel reads and writes must be listed. */
  if (!bwd) {
    for (j = 0; j < k->n_in; j++)
      if ((rc = need(m, p, i, inv[j], 0, "an input", err)) != OOC_OK)
        return rc;
    if ((rc = need(m, p, i, k->out, 1, "the output", err)) != OOC_OK ||
        (rc = need(m, p, i, k->param, 0, "the parameters", err)) != OOC_OK)
      return rc;
    return OOC_OK;
  }
  if (ly->needs & OOC_NEED_INPUT)
    for (j = 0; j < k->n_in; j++)
      if ((rc = need(m, p, i, inv[j], 0, "an input", err)) != OOC_OK)
        return rc;
  /* A max-pool that saved its indices keeps its output's storage too
   * (plan/liveness.c); the cuda backend reads y there, cuDNN having no
   * index tensor. */
  if ((ly->needs & OOC_NEED_OUTPUT) || ly->op == OOC_OPK_SOFTMAX_CE ||
      (ly->op == OOC_OPK_MAXPOOL && ly->saved_bytes > 0))
    if ((rc = need(m, p, i, k->out, 0, "the output", err)) != OOC_OK)
      return rc;
  if (k->dout < 0 && ly->op != OOC_OPK_SOFTMAX_CE)
    return ooc_kernel_err(err, m, i, in->phase, in->layer,
                          "its output has no gradient tensor");
  if ((rc = need(m, p, i, k->dout, arg_of(p, in, k->dout) == 2,
                 "the output's gradient", err)) != OOC_OK ||
      (rc = need(m, p, i, k->param, k->dparam == k->param,
                 "the parameters", err)) != OOC_OK ||
      (rc = need(m, p, i, k->dparam, 1, "the weight gradients", err))
          != OOC_OK)
    return rc;
  /* A tied table's gradient outside the table (its embedding offloaded)
   * is not persistent: the instruction lists it. */
  if (k->tied >= 0 && k->tied_dparam != k->tied &&
      (rc = need(m, p, i, k->tied_dparam, 1, "the tied table's weight "
                 "gradients", err)) != OOC_OK)
    return rc;
  for (j = 0; j < k->n_in; j++)
    if ((rc = need(m, p, i, din[j], 1, "an input's gradient", err))
        != OOC_OK)
      return rc;
  return OOC_OK;
}

/* A forward or recompute kernel that works in place (relu, act, dropout
 * on its input's storage) reads the tensor it lists as written: the
 * semantics check a write only for its allocation, so the data must be
 * there, which holds[] tracks in index order (a valid order: the
 * validator orders every write to a tensor by happens-before). */
static int
in_place_reads(const ooc_model *m, const ooc_program *p, int32_t i,
               const ooc_kernel *k, const uint8_t *holds, ooc_err *err)
{
  const ooc_instr *in = &p->instr[i];
  int32_t t = k->out, tl;

  if (!k->inplace || k->skip || k->phase == OOC_PH_BWD || t < 0 || holds[t])
    return OOC_OK;
  tl = p->tensors[t].layer;
  return ooc_kernel_err(err, m, i, in->phase, in->layer, "its kernel "
                        "works in place on tensor %d (%s of layer %d '%s'), "
                        "which holds no data then (nothing wrote it since "
                        "its ALLOC)", t,
                     ooc_tensor_kind_name((ooc_tensor_kind)p->tensors[t].kind),
                     tl, lname(m, tl));
}

/* A writer of a gradient (grads_complete), its bucket sorted by layer,
 * highest first. */
struct gw {
  int32_t layer, instr, q;
};

static int
by_layer_desc(const void *x, const void *y)
{
  const struct gw *a = x, *b = y;

  if (a->layer != b->layer)
    return a->layer > b->layer ? -1 : 1;
  return (a->q > b->q) - (a->q < b->q);
}

/* A backward reads its output's gradient once every kernel that adds to
 * it has run: each consumer's backward (a higher layer: the layers are in
 * topological order) that writes it as an input's gradient comes before
 * the reader (one stream: index order). Aliases (flatten, reshape) skip
 * and neither read nor write. Each gradient's writers are sorted by layer,
 * highest first, with the latest instruction of every prefix (mx): a
 * reader is late enough when the writers above its layer, a prefix found
 * by bisection, all come before it. Only a failing reader scans its
 * writers, in kernel order, for the first that comes after it (the one
 * the message names). O(kernels x inputs + writers x log writers +
 * readers x log writers): an in-place chain of n layers shares one
 * gradient, read and written n times. */
static int
grads_complete(const ooc_model *m, const ooc_program *p,
               const ooc_kernels *ks, ooc_err *err)
{
  int32_t *first = calloc((size_t)p->n_tensors + 2, sizeof *first);
  int32_t *mx = NULL, q, j, n = 0;
  struct gw *wr = NULL;
  int rc = OOC_OK, pass;

  if (first == NULL)
    return ooc_err_set(err, OOC_ENOMEM, "out of memory");
  /* The writers of each gradient, bucketed by tensor (wr, from first):
   * counted in the first pass, placed in the second. */
  for (pass = 0; pass < 2; pass++) {
    if (pass == 1) {
      for (q = 0; q < p->n_tensors; q++)
        first[q + 1] += first[q];
      wr = malloc(((size_t)n + 1) * sizeof *wr);
      mx = malloc(((size_t)n + 1) * sizeof *mx);
      if (wr == NULL || mx == NULL) {
        free(first);
        free(wr);
        free(mx);
        return ooc_err_set(err, OOC_ENOMEM, "out of memory");
      }
    }
    for (q = 0; q < ks->n; q++) {
      const ooc_kernel *k = &ks->k[q];
      if (k->phase != OOC_PH_BWD || k->skip)
        continue;
      for (j = 0; j < k->n_in; j++)
        if (k->din[j] >= 0 && pass == 0) {
          first[k->din[j] + 1]++;
          n++;
        } else if (k->din[j] >= 0) {
          wr[first[k->din[j]]++] =
              (struct gw){ .layer = k->layer, .instr = k->instr, .q = q };
        }
    }
  }
  for (q = p->n_tensors; q > 0; q--)     /* back to the bucket starts */
    first[q] = first[q - 1];
  first[0] = 0;
  for (q = 0; q < p->n_tensors; q++) {
    int32_t a = first[q], b = first[q + 1], w;
    if (b - a > 1)
      qsort(wr + a, (size_t)(b - a), sizeof *wr, by_layer_desc);
    for (w = a; w < b; w++)
      mx[w] = w > a && mx[w - 1] > wr[w].instr ? mx[w - 1] : wr[w].instr;
  }
  for (q = 0; q < ks->n && rc == OOC_OK; q++) {
    const ooc_kernel *k = &ks->k[q];
    int32_t g = k->dout, lo, hi, w, x;
    if (k->phase != OOC_PH_BWD || k->skip || g < 0)
      continue;
    lo = first[g];                /* the writers above k's layer: */
    hi = first[g + 1];            /* [first[g], lo) once bisected */
    while (lo < hi) {
      int32_t mid = lo + (hi - lo) / 2;
      if (wr[mid].layer > k->layer)
        lo = mid + 1;
      else
        hi = mid;
    }
    if (lo == first[g] || mx[lo - 1] < k->instr)
      continue;
    /* The first writer in kernel order that comes after it. */
    for (x = -1, w = first[g]; w < lo; w++)
      if (wr[w].instr > k->instr && (x < 0 || wr[w].q < wr[x].q))
        x = w;
    rc = ooc_kernel_err(err, m, k->instr, k->phase, k->layer, "reads its "
                        "output's gradient, tensor %d, before instruction "
                        "%d (COMPUTE bwd, layer %d '%s') adds to it", g,
                        wr[x].instr, wr[x].layer, lname(m, wr[x].layer));
  }
  free(first);
  free(wr);
  free(mx);
  return rc;
}

/* Kernel k (a forward or recompute, or a backward that needs its
 * inputs) reads each input as the forward left it for k: the tensor
 * holds the version of the last layer of its storage that wrote it
 * (cur[t], -1 none), which must be expect[j], the last layer of input
 * j's storage that computed into it before k's layer in the forward
 * (the input itself, or an in-place layer after it that k reads through,
 * as the forward ran; a backward reading it the same, since a model whose
 * backward needs memory an in-place layer overwrites is refused at load).
 * A swap-in brings back what its swap-out took. An in-place kernel moved
 * below its reader, or run twice, is caught here. A backward that needs
 * its output reads it as its own forward left it: no layer after it
 * writes its storage in place (refused at load), so the storage holds
 * k's layer's version, unless a plan rebuilt it only up to an earlier
 * layer of the storage (a recompute of a batch-norm without the in-place
 * relu after it) or brought back another version. */
static int
check_versions(const ooc_model *m, const ooc_kernel *k, const int32_t *cur,
               const int32_t *expect, ooc_err *err)
{
  const ooc_layer *ly = &m->layers[k->layer];
  char what[160], as[160];
  int j;

  if (k->skip)
    return OOC_OK;
  if (k->phase == OOC_PH_BWD && (ly->needs & OOC_NEED_OUTPUT) &&
      k->out >= 0 && cur[k->out] != k->layer) {
    int32_t v = cur[k->out];
    if (v < 0)
      snprintf(what, sizeof what, "no layer's output");
    else
      snprintf(what, sizeof what, "the output of layer %d '%s'", v,
               lname(m, v));
    return ooc_kernel_err(err, m, k->instr, k->phase, k->layer, "reads its "
                          "own output in tensor %d, which holds %s then",
                          k->out, what);
  }
  if (k->phase == OOC_PH_BWD && !(ly->needs & OOC_NEED_INPUT))
    return OOC_OK;
  for (j = 0; j < k->n_in; j++) {
    int32_t x = ooc_layer_input(m, ly, j), t = k->in[j], v = -1, e;
    if (x <= 0 || t < 0 || cur[t] == expect[j])
      continue;
    v = cur[t];
    e = expect[j];
    if (v < 0)
      snprintf(what, sizeof what, "no layer's output");
    else
      snprintf(what, sizeof what, "the output of layer %d '%s'", v,
               lname(m, v));
    if (e >= 0 && e != x)
      snprintf(as, sizeof as, " as layer %d '%s' left it in place", e,
               lname(m, e));
    else
      as[0] = '\0';
    return ooc_kernel_err(err, m, k->instr, k->phase, k->layer, "reads the "
                          "output of layer %d '%s' in tensor %d%s, which "
                          "holds %s then", x, lname(m, x), t, as, what);
  }
  return OOC_OK;
}

/* The optimizer update reads the weight gradients it steps with: every
 * backward that writes them (its own or a tied table's) comes before it
 * (one stream: index order is the order they run in). O(kernels +
 * tensors). */
static int
update_after_grads(const ooc_model *m, const ooc_program *p,
                   const ooc_kernels *ks, ooc_err *err)
{
  uint8_t *stepped = calloc((size_t)p->n_tensors + 1, 1);
  int32_t q, upd = -1;
  int j, rc = OOC_OK;

  if (stepped == NULL)
    return ooc_err_set(err, OOC_ENOMEM, "out of memory");
  for (q = 0; q < ks->n; q++) {
    const ooc_kernel *k = &ks->k[q];
    if (k->phase != OOC_PH_UPDATE)
      continue;
    upd = k->instr;                     /* the last, when several */
    for (j = 0; j < k->n_params; j++)
      stepped[k->params[j]] = 1;
  }
  for (q = 0; q < ks->n && upd >= 0 && rc == OOC_OK; q++) {
    const ooc_kernel *k = &ks->k[q];
    int32_t d = -1;
    if (k->phase != OOC_PH_BWD || k->skip || k->instr < upd)
      continue;
    if (k->dparam >= 0 && stepped[k->dparam])
      d = k->dparam;
    else if (k->tied >= 0 && k->tied_dparam >= 0 && stepped[k->tied_dparam])
      d = k->tied_dparam;
    if (d >= 0)
      rc = ooc_kernel_err(err, m, k->instr, k->phase, k->layer, "writes the "
                          "weight gradients in tensor %d after the optimizer "
                          "update (instruction %d) stepped with them", d,
                          upd);
  }
  free(stepped);
  return rc;
}

int
ooc_kernels_build(ooc_kernels *ks, const ooc_model *m,
                       const ooc_program *p, ooc_err *err)
{
  roles r;
  int32_t i, n = 0, ni = 0, nf = 0, *ic;
  uint8_t *fc, *fresh = NULL, *pwritten = NULL, *holds = NULL;
  int32_t *cur = NULL, *hver = NULL, *expect = NULL, *eoff = NULL;
  int32_t *lastw = NULL;
  int rc, j;

  memset(ks, 0, sizeof *ks);
  if ((rc = roles_build(&r, m, p, err)) != OOC_OK)
    goto out;
  for (i = 0; i < p->n_instr; i++) {
    const ooc_instr *in = &p->instr[i];
    if (in->kind != OOC_I_COMPUTE)
      continue;
    n++;
    ni += in->n_args;
    if (in->layer > 0 && in->layer < m->n_layers) {
      ni += 2 * m->layers[in->layer].n_in;
      nf += m->layers[in->layer].n_in;
    }
  }
  ks->k = calloc((size_t)n + 1, sizeof *ks->k);
  ks->of_instr = malloc(((size_t)p->n_instr + 1) * sizeof *ks->of_instr);
  ks->ints = calloc((size_t)ni + 1, sizeof *ks->ints);
  ks->flags = calloc((size_t)nf + 1, 1);
  fresh = calloc((size_t)p->n_tensors + 1, 1);
  pwritten = calloc((size_t)p->n_tensors + 1, 1);
  holds = calloc((size_t)p->n_tensors + 1, 1);
  cur = malloc(((size_t)p->n_tensors + 1) * sizeof *cur);
  hver = malloc(((size_t)p->n_tensors + 1) * sizeof *hver);
  {
    size_t tot = 0;
    for (i = 0; i < m->n_layers; i++)
      tot += (size_t)m->layers[i].n_in;
    expect = malloc((tot + 1) * sizeof *expect);
  }
  eoff = malloc(((size_t)m->n_layers + 1) * sizeof *eoff);
  lastw = malloc(((size_t)m->n_layers + 1) * sizeof *lastw);
  if (!ks->k || !ks->of_instr || !ks->ints || !ks->flags || !fresh ||
      !pwritten || !holds || !cur || !hver || !expect || !eoff || !lastw) {
    rc = ooc_err_set(err, OOC_ENOMEM, "out of memory");
    goto out;
  }
  /* Activation versions (check_versions): walking the forward, per
   * storage layer its last computing layer so far (lastw), so that layer
   * i's input j is expected as expect[eoff[i] + j]. */
  for (i = 0; i < p->n_tensors; i++)
    cur[i] = hver[i] = -1;
  for (i = 0; i < m->n_layers; i++)
    lastw[i] = -1;
  {
    int32_t o = 0;
    for (i = 0; i < m->n_layers; i++) {
      const ooc_layer *ly = &m->layers[i];
      eoff[i] = o;
      for (j = 0; j < ly->n_in; j++)
        expect[o++] = lastw[r.storage[ooc_layer_input(m, ly, j)]];
      if (i > 0 && ly->op != OOC_OPK_FLATTEN && ly->op != OOC_OPK_RESHAPE)
        lastw[r.storage[i]] = i;
    }
  }
  ic = ks->ints;
  fc = ks->flags;
  for (i = 0; i < p->n_instr; i++) {
    const ooc_instr *in = &p->instr[i];
    ooc_kernel *k;
    uint8_t *acc;
    ks->of_instr[i] = -1;
    if (in->kind == OOC_I_ALLOC && in->where == OOC_WHERE_DEVICE) {
      fresh[in->tensor] = 1;
      holds[in->tensor] = i < p->prologue_end;
      cur[in->tensor] = -1;
    } else if (in->kind == OOC_I_FREE && in->where == OOC_WHERE_DEVICE) {
      holds[in->tensor] = 0;
      cur[in->tensor] = -1;
    } else if (in->kind == OOC_I_H2D) {
      fresh[in->tensor] = 0;
      holds[in->tensor] = 1;
      cur[in->tensor] = hver[in->tensor];
    } else if (in->kind == OOC_I_D2H) {
      hver[in->tensor] = cur[in->tensor];
    }
    if (in->kind != OOC_I_COMPUTE)
      continue;
    k = &ks->k[ks->n];
    acc = fc;
    if ((rc = resolve(&r, m, p, i, k, &ic, &fc, err)) != OOC_OK)
      goto out;
    if ((rc = in_place_reads(m, p, i, k, holds, err)) != OOC_OK ||
        (k->phase != OOC_PH_UPDATE &&
         ((rc = check_writes(m, p, i, k, fresh, err)) != OOC_OK ||
          (rc = check_versions(m, k, cur, expect + eoff[k->layer],
                               err)) != OOC_OK)))
      goto out;
    if (k->phase != OOC_PH_BWD && k->phase != OOC_PH_UPDATE && !k->skip &&
        k->out >= 0)
      cur[k->out] = k->layer;
    for (j = 0; j < in->n_args; j++)
      if (p->args[in->arg_first + j] & OOC_ARG_WRITE)
        holds[OOC_ARG_TENSOR(p->args[in->arg_first + j])] = 1;
    ks->of_instr[i] = ks->n++;
    if (k->phase != OOC_PH_BWD || k->skip)
      continue;
    /* Who overwrites and who adds, in index order. */
    if (k->dout >= 0 && arg_of(p, in, k->dout) == 2) {
      k->dout_fresh = fresh[k->dout];
      fresh[k->dout] = 0;
    }
    for (j = 0; j < k->n_in; j++) {
      int32_t t = k->din[j];
      if (t < 0)
        continue;
      acc[j] = (k->inplace && j == 0) ? 0 : !fresh[t];
      fresh[t] = 0;
    }
    if (k->dparam >= 0) {
      k->dparam_acc = pwritten[k->dparam];
      pwritten[k->dparam] = 1;
    }
    if (k->tied >= 0) {
      k->tied_acc = pwritten[k->tied_dparam];
      pwritten[k->tied_dparam] = 1;
    }
  }
  if ((rc = update_after_grads(m, p, ks, err)) != OOC_OK)
    goto out;
  if ((rc = grads_complete(m, p, ks, err)) != OOC_OK)
    goto out;
  rc = OOC_OK;
out:
  free(fresh);
  free(pwritten);
  free(holds);
  free(cur);
  free(hver);
  free(expect);
  free(eoff);
  free(lastw);
  roles_free(&r);
  if (rc != OOC_OK)
    ooc_kernels_free(ks);
  return rc;
}

int
ooc_kernels_check(const ooc_model *m, const ooc_program *p, ooc_err *err)
{
  ooc_kernels ks;
  int rc = ooc_kernels_build(&ks, m, p, err);

  ooc_kernels_free(&ks);
  return rc;
}
