/* executor/cpu_kern.c — the cpu backend's C kernels, for what oneDNN does
 * not have: embedding, softmax + cross-entropy loss, dropout, attention,
 * and the optimizer step (docs/executor.md, "What each op runs").
 *
 * One idea: small loops over plain fp32 arrays, written so that every run
 * gives the same bits: reductions run in index order on one thread; work
 * split across OpenMP threads (attention's heads, the optimizer's
 * elements) writes disjoint outputs. Labels and dropout masks come from
 * the counter-based generator of backend.h, so a recompute draws the
 * mask the forward drew and no mask needs storing. Attention's backward
 * recomputes its softmax from q and k (the program keeps the forward's
 * softmax with the output only when it is at least as large, plan/plan.h),
 * as FlashAttention does.
 *
 * Cost: O(elements) for embedding, loss, dropout and the update;
 * O(batch x heads x S^2 x head width) for attention.
 */
#include "config.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "executor/cpu.h"

static const ooc_layer *
layer_of(const cpu_state *st, const ooc_exec_kernel *k)
{
  return &st->m->layers[k->layer];
}

static const ooc_shape *
in_shape(const cpu_state *st, const ooc_exec_kernel *k, int j)
{
  const ooc_layer *l = layer_of(st, k);
  return &st->m->layers[ooc_layer_input(st->m, l, j)].out;
}

/* --- softmax + cross-entropy ------------------------------------------------- */

static void
softmax_ce(cpu_state *st, const ooc_exec_kernel *k, void *const *ptr,
           int bwd)
{
  int64_t rows, C, n = st->m->batch, r, c;
  const float *x = ptr[k->in[0]];
  float *loss = ptr[k->out];
  float *prob = (float *)((char *)ptr[k->out] + k->saved_off);
  double total = 0;

  ooc_exec_ce_shape(st->m, k->layer, &rows, &C);
  if (bwd) {
    float *dx;
    float inv = 1.0f / (float)(n * rows);
    if (k->din[0] < 0)
      return;
    dx = ptr[k->din[0]];
    for (r = 0; r < n * rows; r++) {
      int64_t y = ooc_exec_label(st->seed, r, C);
      for (c = 0; c < C; c++) {
        float g = (prob[r * C + c] - (c == y ? 1.0f : 0.0f)) * inv;
        if (k->din_acc[0])
          dx[r * C + c] += g;
        else
          dx[r * C + c] = g;
      }
    }
    return;
  }
  for (r = 0; r < n * rows; r++) {
    const float *xr = x + r * C;
    float *pr = prob + r * C, mx = xr[0];
    double sum = 0;
    int64_t y = ooc_exec_label(st->seed, r, C);
    for (c = 1; c < C; c++)
      if (xr[c] > mx)
        mx = xr[c];
    for (c = 0; c < C; c++) {
      pr[c] = expf(xr[c] - mx);
      sum += pr[c];
    }
    for (c = 0; c < C; c++)
      pr[c] = (float)(pr[c] / sum);
    if (r % rows == 0)
      loss[r / rows] = 0;
    loss[r / rows] += (float)(-(xr[y] - mx - log(sum)) / (double)rows);
  }
  for (r = 0; r < n; r++)
    total += loss[r];
  st->loss = total / (double)n;
}

/* --- dropout -------------------------------------------------------------- */

static void
dropout(cpu_state *st, const ooc_exec_kernel *k, void *const *ptr, int bwd,
        int iteration)
{
  const ooc_layer *l = layer_of(st, k);
  uint64_t n = (uint64_t)ooc_shape_elems(&l->out) * (uint64_t)st->m->batch,
           i;
  float scale = l->a.p < 1 ? (float)(1.0 / (1.0 - l->a.p)) : 0.0f;
  const float *src = bwd ? ptr[k->dout] : ptr[k->in[0]];
  float *dst;
  int acc = bwd ? k->din_acc[0] : 0;

  if (bwd && k->din[0] < 0)
    return;
  dst = bwd ? ptr[k->din[0]] : ptr[k->out];
  for (i = 0; i < n; i++) {
    float v = ooc_exec_dropout_keep(st->seed, k->layer, iteration, i,
                                    l->a.p) ? src[i] * scale : 0.0f;
    if (acc)
      dst[i] += v;
    else
      dst[i] = v;
  }
}

/* --- embedding ------------------------------------------------------------ */

static void
embedding(cpu_state *st, const ooc_exec_kernel *k, void *const *ptr, int bwd)
{
  const ooc_layer *l = layer_of(st, k);
  int64_t S = in_shape(st, k, 0)->d[0], H = l->a.out, V = l->a.vocab,
          P = l->a.positions, n = st->m->batch * S, i, c;
  const int32_t *ids = ptr[k->in[0]];
  float *table = ptr[k->param];

  if (bwd) {
    float *dt = (float *)((char *)table + l->param_bytes);
    const float *dy = ptr[k->dout];
    if (!k->dparam_acc)
      memset(dt, 0, l->grad_bytes);
    for (i = 0; i < n; i++) {
      int64_t id = ((int64_t)ids[i] % V + V) % V;
      for (c = 0; c < H; c++)
        dt[id * H + c] += dy[i * H + c];
      if (P > 0)
        for (c = 0; c < H; c++)
          dt[(V + i % S) * H + c] += dy[i * H + c];
    }
    return;
  }
  for (i = 0; i < n; i++) {
    int64_t id = ((int64_t)ids[i] % V + V) % V;
    float *y = (float *)ptr[k->out] + i * H;
    for (c = 0; c < H; c++)
      y[c] = table[id * H + c] + (P > 0 ? table[(V + i % S) * H + c] : 0.0f);
  }
}

/* --- attention ------------------------------------------------------------ */

typedef struct att {
  int64_t N, S, H, heads, dh, ld;  /* ld: row stride of q, k, v */
  int causal;
  float scale;
  const float *q, *k, *v;
} att;

static void
att_setup(const cpu_state *st, const ooc_exec_kernel *k, void *const *ptr,
          att *a)
{
  const ooc_layer *l = layer_of(st, k);
  const ooc_shape *x = in_shape(st, k, 0);

  a->N = st->m->batch;
  a->S = x->d[0];
  a->heads = l->a.heads;
  a->causal = l->a.causal;
  if (k->n_in == 1) {
    a->H = x->d[1] / 3;
    a->ld = 3 * a->H;
    a->q = ptr[k->in[0]];
    a->k = a->q + a->H;
    a->v = a->q + 2 * a->H;
  } else {
    a->H = x->d[1];
    a->ld = a->H;
    a->q = ptr[k->in[0]];
    a->k = ptr[k->in[1]];
    a->v = ptr[k->in[2]];
  }
  a->dh = a->H / a->heads;
  a->scale = 1.0f / sqrtf((float)a->dh);
}

/* Row i of head h of sample n's softmax into p (S values; 0 past the
 * causal limit); returns the row's log-sum-exp of the scaled scores. */
static float
att_row(const att *a, int64_t n, int64_t h, int64_t i, float *p)
{
  const float *qi = a->q + (n * a->S + i) * a->ld + h * a->dh;
  int64_t j, c, last = a->causal ? i : a->S - 1;
  float mx = -INFINITY;
  double sum = 0;

  for (j = 0; j < a->S; j++) {
    const float *kj = a->k + (n * a->S + j) * a->ld + h * a->dh;
    float d = 0;
    if (j > last) {
      p[j] = 0;
      continue;
    }
    for (c = 0; c < a->dh; c++)
      d += qi[c] * kj[c];
    p[j] = d * a->scale;
    if (p[j] > mx)
      mx = p[j];
  }
  for (j = 0; j <= last; j++) {
    p[j] = expf(p[j] - mx);
    sum += p[j];
  }
  for (j = 0; j <= last; j++)
    p[j] = (float)(p[j] / sum);
  return mx + (float)log(sum);
}

static int
attention(cpu_state *st, const ooc_exec_kernel *k, void *const *ptr, int bwd,
          ooc_err *err)
{
  att a;
  int64_t nh, total;
  int fail = 0;

  att_setup(st, k, ptr, &a);
  total = a.N * a.heads;
  if (!bwd) {
    /* Eager keeps the softmax [N, heads, S, S] after the output; flash
     * only the log-sum-exp [N, heads, S] (fp32), the row built in a
     * buffer of its own. The backward rebuilds the rows either way. */
    float *out = ptr[k->out];
    float *saved = (float *)((char *)ptr[k->out] + k->saved_off);
    int flash = layer_of(st, k)->a.flash;
#pragma omp parallel for schedule(static)
    for (nh = 0; nh < total; nh++) {
      int64_t n = nh / a.heads, h = nh % a.heads, i, j, c;
      float *row = flash ? malloc((size_t)a.S * sizeof *row) : NULL;
      if (flash && row == NULL) {
#pragma omp atomic write
        fail = 1;
        continue;
      }
      for (i = 0; i < a.S; i++) {
        float *p = flash ? row
                         : saved + ((n * a.heads + h) * a.S + i) * a.S;
        float *o = out + (n * a.S + i) * a.H + h * a.dh;
        float lse = att_row(&a, n, h, i, p);
        if (flash)
          saved[(n * a.heads + h) * a.S + i] = lse;
        for (c = 0; c < a.dh; c++)
          o[c] = 0;
        for (j = 0; j < a.S; j++) {
          const float *vj = a.v + (n * a.S + j) * a.ld + h * a.dh;
          for (c = 0; c < a.dh; c++)
            o[c] += p[j] * vj[c];
        }
      }
      free(row);
    }
    if (fail)
      return ooc_err_set(err, OOC_ENOMEM, "cpu: out of memory in attention");
    return OOC_OK;
  }
  {
    /* Gradients into the side buffer: packed [N, S, 3H], or three [N, S,
     * H] blocks; then put where they go. */
    float *g = st->tmp;
    int64_t blk = a.N * a.S * a.H, gld = k->n_in == 1 ? 3 * a.H : a.H;
    float *dq = g, *dk = k->n_in == 1 ? g + a.H : g + blk,
          *dv = k->n_in == 1 ? g + 2 * a.H : g + 2 * blk;
    const float *dO = ptr[k->dout];
    int j;
    memset(g, 0, (size_t)(3 * blk) * sizeof *g);
#pragma omp parallel for schedule(static)
    for (nh = 0; nh < total; nh++) {
      int64_t n = nh / a.heads, h = nh % a.heads, i, jj, c;
      float *p = malloc(2 * (size_t)a.S * sizeof *p), *dp;
      if (p == NULL) {
#pragma omp atomic write
        fail = 1;
        continue;
      }
      dp = p + a.S;
      for (i = 0; i < a.S; i++) {
        const float *doi = dO + (n * a.S + i) * a.H + h * a.dh;
        const float *qi = a.q + (n * a.S + i) * a.ld + h * a.dh;
        float *dqi = dq + (n * a.S + i) * gld + h * a.dh;
        double dot = 0;
        att_row(&a, n, h, i, p);
        for (jj = 0; jj < a.S; jj++) {
          const float *vj = a.v + (n * a.S + jj) * a.ld + h * a.dh;
          float *dvj = dv + (n * a.S + jj) * gld + h * a.dh;
          float d = 0;
          for (c = 0; c < a.dh; c++) {
            dvj[c] += p[jj] * doi[c];
            d += doi[c] * vj[c];
          }
          dp[jj] = d;
          dot += (double)p[jj] * d;
        }
        for (jj = 0; jj < a.S; jj++) {
          const float *kj = a.k + (n * a.S + jj) * a.ld + h * a.dh;
          float *dkj = dk + (n * a.S + jj) * gld + h * a.dh;
          float ds = p[jj] * (dp[jj] - (float)dot) * a.scale;
          if (ds == 0)
            continue;
          for (c = 0; c < a.dh; c++) {
            dqi[c] += ds * kj[c];
            dkj[c] += ds * qi[c];
          }
        }
      }
      free(p);
    }
    if (fail)
      return ooc_err_set(err, OOC_ENOMEM, "cpu: out of memory in attention");
    if (k->n_in == 1) {
      if (k->din[0] >= 0)
        cpu_put(ptr[k->din[0]], g, (uint64_t)(3 * blk), k->din_acc[0]);
    } else {
      for (j = 0; j < 3; j++)
        if (k->din[j] >= 0)
          cpu_put(ptr[k->din[j]], g + j * blk, (uint64_t)blk,
                  k->din_acc[j]);
    }
  }
  return OOC_OK;
}

/* --- the optimizer step --------------------------------------------------- */

#define LR_SGD 0.01f
#define MOMENTUM 0.9f
#define LR_ADAM 1e-3f
#define BETA1 0.9f
#define BETA2 0.999f
#define ADAM_EPS 1e-8f

static void
update(cpu_state *st, const ooc_exec_kernel *k, void *const *ptr,
       int iteration)
{
  int j;
  float c1 = 1.0f - powf(BETA1, (float)(iteration + 1));
  float c2 = 1.0f - powf(BETA2, (float)(iteration + 1));

  for (j = 0; j < k->n_params; j++) {
    const ooc_layer *l = &st->m->layers[st->p->tensors[k->params[j]].layer];
    int64_t n = (int64_t)(l->param_bytes / sizeof(float)), i;
    float *w = ptr[k->params[j]], *g = w + n, *o = g + n;
    switch (st->m->optimizer) {
    case OOC_OPT_SGD:
#pragma omp parallel for schedule(static)
      for (i = 0; i < n; i++)
        w[i] -= LR_SGD * g[i];
      break;
    case OOC_OPT_ADAM:
#pragma omp parallel for schedule(static)
      for (i = 0; i < n; i++) {
        o[i] = BETA1 * o[i] + (1 - BETA1) * g[i];
        o[n + i] = BETA2 * o[n + i] + (1 - BETA2) * g[i] * g[i];
        w[i] -= LR_ADAM * (o[i] / c1) / (sqrtf(o[n + i] / c2) + ADAM_EPS);
      }
      break;
    default:
#pragma omp parallel for schedule(static)
      for (i = 0; i < n; i++) {
        o[i] = MOMENTUM * o[i] + g[i];
        w[i] -= LR_SGD * o[i];
      }
      break;
    }
  }
}

/* --- front ---------------------------------------------------------------- */

int
cpu_kern_prepare(cpu_state *st, const ooc_exec_kernel *k, ooc_err *err)
{
  const ooc_layer *l;

  if (k->phase == OOC_PH_UPDATE)
    return OOC_OK;
  l = layer_of(st, k);
  switch (l->op) {
  case OOC_OPK_SOFTMAX_CE: case OOC_OPK_DROPOUT: case OOC_OPK_EMBEDDING:
    return OOC_OK;
  case OOC_OPK_ATTENTION:
    if (k->phase == OOC_PH_BWD) {
      const ooc_shape *x = in_shape(st, k, 0);
      uint64_t blk = (uint64_t)st->m->batch * (uint64_t)ooc_shape_elems(x) *
                     sizeof(float);
      return cpu_grow(&st->tmp, &st->tmp_bytes,
                      k->n_in == 1 ? blk : 3 * blk, err);
    }
    return OOC_OK;
  default:
    return ooc_err_set(err, OOC_EINVAL, "cpu: layer %d '%s': op %s has no "
                       "kernel on the cpu backend", k->layer,
                       l->name ? l->name : "?", ooc_op_name(l->op));
  }
}

int
cpu_kern_run(cpu_state *st, const ooc_exec_kernel *k, void *const *ptr,
             int iteration, ooc_err *err)
{
  int bwd = k->phase == OOC_PH_BWD;

  if (k->phase == OOC_PH_UPDATE) {
    update(st, k, ptr, iteration);
    return OOC_OK;
  }
  switch (layer_of(st, k)->op) {
  case OOC_OPK_SOFTMAX_CE:
    softmax_ce(st, k, ptr, bwd);
    return OOC_OK;
  case OOC_OPK_DROPOUT:
    dropout(st, k, ptr, bwd, iteration);
    return OOC_OK;
  case OOC_OPK_EMBEDDING:
    embedding(st, k, ptr, bwd);
    return OOC_OK;
  case OOC_OPK_ATTENTION:
    return attention(st, k, ptr, bwd, err);
  default:
    return ooc_err_set(err, OOC_EINVAL, "cpu: op %s has no kernel",
                       ooc_op_name(layer_of(st, k)->op));
  }
}
