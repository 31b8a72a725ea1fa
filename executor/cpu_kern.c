/* executor/cpu_kern.c — the cpu backend's C kernels, for what oneDNN does
 * not have: embedding, softmax + cross-entropy loss, dropout, attention
 * (eager, flash, grouped-query), rmsnorm, rope, swiglu, learned tokens,
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
layer_of(const cpu_state *st, const ooc_kernel *k)
{
  return &st->m->layers[k->layer];
}

static const ooc_shape *
in_shape(const cpu_state *st, const ooc_kernel *k, int j)
{
  const ooc_layer *l = layer_of(st, k);
  return &st->m->layers[ooc_layer_input(st->m, l, j)].out;
}

/* --- softmax + cross-entropy ------------------------------------------------- */

/* p = softmax(x) over C values; *mx and *sum (the row's maximum and the
 * sum of exp(x - mx)) give its log-sum-exp to a caller that needs it. */
static void
softmax_row(const float *x, float *p, int64_t C, float *mx, double *sum)
{
  int64_t c;
  *mx = x[0];
  *sum = 0;
  for (c = 1; c < C; c++)
    if (x[c] > *mx)
      *mx = x[c];
  for (c = 0; c < C; c++) {
    p[c] = expf(x[c] - *mx);
    *sum += p[c];
  }
  for (c = 0; c < C; c++)
    p[c] = (float)(p[c] / *sum);
}

static void
softmax_ce(cpu_state *st, const ooc_kernel *k, void *const *ptr,
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
    float mx;
    double sum;
    int64_t y = ooc_exec_label(st->seed, r, C);
    softmax_row(xr, prob + r * C, C, &mx, &sum);
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
dropout(cpu_state *st, const ooc_kernel *k, void *const *ptr, int bwd,
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
embedding(cpu_state *st, const ooc_kernel *k, void *const *ptr, int bwd)
{
  const ooc_layer *l = layer_of(st, k);
  int64_t S = in_shape(st, k, 0)->d[0], H = l->a.out, V = l->a.vocab,
          P = l->a.positions, n = st->m->batch * S, i, c,
          ty = l->a.types > 0 ? (V + P) * H : -1;  /* type 0's row */
  const int32_t *ids = ptr[k->in[0]];
  float *table = ptr[k->param];

  if (bwd) {
    float *dt = (float *)((char *)ptr[k->dparam] + k->dparam_off);
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
      if (ty >= 0)
        for (c = 0; c < H; c++)
          dt[ty + c] += dy[i * H + c];
    }
    return;
  }
  for (i = 0; i < n; i++) {
    int64_t id = ((int64_t)ids[i] % V + V) % V;
    float *y = (float *)ptr[k->out] + i * H;
    for (c = 0; c < H; c++)
      y[c] = table[id * H + c] + (P > 0 ? table[(V + i % S) * H + c] : 0.0f) +
             (ty >= 0 ? table[ty + c] : 0.0f);
  }
}

/* --- attention ------------------------------------------------------------ */

typedef struct att {
  int64_t N, S, H, heads, dh;
  int64_t kv, kvw, group;     /* key/value heads, their width, q heads per */
  int64_t ldq, ldkv;          /* row strides of q and of k, v */
  int causal;
  float scale;
  const float *q, *k, *v;
} att;

static void
att_setup(const cpu_state *st, const ooc_kernel *k, void *const *ptr,
          att *a)
{
  const ooc_layer *l = layer_of(st, k);
  const ooc_shape *x = in_shape(st, k, 0);

  a->N = st->m->batch;
  a->S = x->d[0];
  a->heads = l->a.heads;
  a->kv = l->a.kv_heads > 0 ? l->a.kv_heads : l->a.heads;
  a->group = a->heads / a->kv;
  a->causal = l->a.causal;
  if (k->n_in == 1) {
    a->H = x->d[1] * a->heads / (a->heads + 2 * a->kv);
    a->dh = a->H / a->heads;
    a->kvw = a->kv * a->dh;
    a->ldq = a->ldkv = x->d[1];
    a->q = ptr[k->in[0]];
    a->k = a->q + a->H;
    a->v = a->q + a->H + a->kvw;
  } else {
    a->H = x->d[1];
    a->dh = a->H / a->heads;
    a->kvw = a->kv * a->dh;
    a->ldq = a->H;
    a->ldkv = a->kvw;
    a->q = ptr[k->in[0]];
    a->k = ptr[k->in[1]];
    a->v = ptr[k->in[2]];
  }
  a->scale = 1.0f / sqrtf((float)a->dh);
}

/* Row i of head h of sample n's softmax into p (S values; 0 past the
 * causal limit); returns the row's log-sum-exp of the scaled scores. */
static float
att_row(const att *a, int64_t n, int64_t h, int64_t i, float *p)
{
  const float *qi = a->q + (n * a->S + i) * a->ldq + h * a->dh;
  int64_t j, c, last = a->causal ? i : a->S - 1, hk = h / a->group;
  float mx = -INFINITY;
  double sum = 0;

  for (j = 0; j < a->S; j++) {
    const float *kj = a->k + (n * a->S + j) * a->ldkv + hk * a->dh;
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
attention(cpu_state *st, const ooc_kernel *k, void *const *ptr, int bwd,
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
          const float *vj = a.v + (n * a.S + j) * a.ldkv +
                            (h / a.group) * a.dh;
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
    /* Gradients into the side buffer: packed [N, S, H + 2 kvw] as the
     * input, or the three blocks [N, S, H], [N, S, kvw], [N, S, kvw];
     * then put where they go. One thread per sample and key/value head
     * runs the q heads of its group in order, so that every gradient
     * element has one writer and one summation order. */
    float *g = st->tmp;
    int64_t qblk = a.N * a.S * a.H, kvblk = a.N * a.S * a.kvw;
    int64_t gldq = k->n_in == 1 ? a.ldq : a.H,
            gldkv = k->n_in == 1 ? a.ldkv : a.kvw;
    float *dq = g, *dk = k->n_in == 1 ? g + a.H : g + qblk,
          *dv = k->n_in == 1 ? g + a.H + a.kvw : g + qblk + kvblk;
    const float *dO = ptr[k->dout];
    int64_t kvtotal = a.N * a.kv;
    int j;
    memset(g, 0, (size_t)(qblk + 2 * kvblk) * sizeof *g);
#pragma omp parallel for schedule(static)
    for (nh = 0; nh < kvtotal; nh++) {
      int64_t n = nh / a.kv, hk = nh % a.kv, h, i, jj, c;
      float *p = malloc(2 * (size_t)a.S * sizeof *p), *dp;
      if (p == NULL) {
#pragma omp atomic write
        fail = 1;
        continue;
      }
      dp = p + a.S;
      for (h = hk * a.group; h < (hk + 1) * a.group; h++)
        for (i = 0; i < a.S; i++) {
          const float *doi = dO + (n * a.S + i) * a.H + h * a.dh;
          const float *qi = a.q + (n * a.S + i) * a.ldq + h * a.dh;
          float *dqi = dq + (n * a.S + i) * gldq + h * a.dh;
          double dot = 0;
          att_row(&a, n, h, i, p);
          for (jj = 0; jj < a.S; jj++) {
            const float *vj = a.v + (n * a.S + jj) * a.ldkv + hk * a.dh;
            float *dvj = dv + (n * a.S + jj) * gldkv + hk * a.dh;
            float d = 0;
            for (c = 0; c < a.dh; c++) {
              dvj[c] += p[jj] * doi[c];
              d += doi[c] * vj[c];
            }
            dp[jj] = d;
            dot += (double)p[jj] * d;
          }
          for (jj = 0; jj < a.S; jj++) {
            const float *kj = a.k + (n * a.S + jj) * a.ldkv + hk * a.dh;
            float *dkj = dk + (n * a.S + jj) * gldkv + hk * a.dh;
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
        cpu_put(ptr[k->din[0]], g, (uint64_t)(qblk + 2 * kvblk),
                k->din_acc[0]);
    } else {
      const int64_t off[3] = { 0, qblk, qblk + kvblk },
                    len[3] = { qblk, kvblk, kvblk };
      for (j = 0; j < 3; j++)
        if (k->din[j] >= 0)
          cpu_put(ptr[k->din[j]], g + off[j], (uint64_t)len[j],
                  k->din_acc[j]);
    }
  }
  return OOC_OK;
}

/* --- transformer pieces: rmsnorm, rope, swiglu, tokens ------------------- */

#define RMS_EPS 1e-6f

/* 1/rms of row r of x (width H). */
static float
rms_inv(const float *x, int64_t H)
{
  double ss = 0;
  int64_t c;
  for (c = 0; c < H; c++)
    ss += (double)x[c] * x[c];
  return 1.0f / sqrtf((float)(ss / (double)H) + RMS_EPS);
}

/* Rows of the last dim. The program keeps 1/rms per row with the output
 * (saved_bytes, as PyTorch saves it), but so small a state does not keep
 * the output's storage to the backward (plan/plan.h): the backward
 * computes it again from the input, which it reads anyway; the forward
 * stores it for the record. */
static void
rmsnorm(cpu_state *st, const ooc_kernel *k, void *const *ptr, int bwd)
{
  const ooc_layer *l = layer_of(st, k);
  const ooc_shape *xs = in_shape(st, k, 0);
  int64_t H = xs->d[xs->ndim - 1],
          rows = ooc_shape_elems(xs) / H * st->m->batch, r, c;
  const float *x = ptr[k->in[0]], *g = ptr[k->param];

  if (!bwd) {
    float *y = ptr[k->out];
    float *rstd = (float *)((char *)ptr[k->out] + k->saved_off);
    for (r = 0; r < rows; r++) {
      rstd[r] = rms_inv(x + r * H, H);
      for (c = 0; c < H; c++)
        y[r * H + c] = x[r * H + c] * rstd[r] * g[c];
    }
    return;
  }
  {
    const float *dy = ptr[k->dout];
    float *dg = (float *)((char *)ptr[k->dparam] + k->dparam_off);
    float *dx = k->din[0] >= 0 ? ptr[k->din[0]] : NULL;
    if (!k->dparam_acc)
      memset(dg, 0, l->grad_bytes);
    for (r = 0; r < rows; r++) {
      double dot = 0;
      float rs = rms_inv(x + r * H, H), coef;
      for (c = 0; c < H; c++) {
        dot += (double)dy[r * H + c] * g[c] * x[r * H + c];
        dg[c] += dy[r * H + c] * x[r * H + c] * rs;
      }
      coef = (float)(dot / (double)H) * rs * rs * rs;
      if (dx == NULL)
        continue;
      for (c = 0; c < H; c++) {
        float v = rs * g[c] * dy[r * H + c] - coef * x[r * H + c];
        if (k->din_acc[0])
          dx[r * H + c] += v;
        else
          dx[r * H + c] = v;
      }
    }
  }
}

/* Rotate pairs (i, i + head_dim/2) of every head_dim slice of the leading
 * `rotate` columns by position x 10000^(-2i/head_dim); the backward
 * rotates back. Other columns pass through. */
static void
rope(cpu_state *st, const ooc_kernel *k, void *const *ptr, int bwd)
{
  const ooc_layer *l = layer_of(st, k);
  const ooc_shape *xs = in_shape(st, k, 0);
  int64_t S = xs->d[0], W = xs->d[1], R = l->a.rotate > 0 ? l->a.rotate : W,
          dh = l->a.head_dim, half = dh / 2, n, s, b, i;
  const float *src = bwd ? ptr[k->dout] : ptr[k->in[0]];
  float *dst;
  int acc = bwd ? k->din_acc[0] : 0;
  float sign = bwd ? -1.0f : 1.0f;
  double freq[512];

  if (bwd && k->din[0] < 0)
    return;
  dst = bwd ? ptr[k->din[0]] : ptr[k->out];
  for (i = 0; i < half && i < 512; i++)
    freq[i] = pow(10000.0, -2.0 * (double)i / (double)dh);
  for (n = 0; n < st->m->batch; n++)
    for (s = 0; s < S; s++) {
      const float *xr = src + (n * S + s) * W;
      float *yr = dst + (n * S + s) * W;
      for (b = 0; b < R; b += dh)
        for (i = 0; i < half; i++) {
          double th = (double)s * (i < 512 ? freq[i]
                                           : pow(10000.0, -2.0 * (double)i /
                                                              (double)dh));
          float cs = (float)cos(th), sn = sign * (float)sin(th);
          float x0 = xr[b + i], x1 = xr[b + i + half];
          float y0 = x0 * cs - x1 * sn, y1 = x0 * sn + x1 * cs;
          yr[b + i] = acc ? yr[b + i] + y0 : y0;
          yr[b + i + half] = acc ? yr[b + i + half] + y1 : y1;
        }
      for (i = R; i < W; i++)
        yr[i] = acc ? yr[i] + xr[i] : xr[i];
    }
}

/* y = silu(a) * b over [.., 2F] = [a | b] rows. */
static void
swiglu(cpu_state *st, const ooc_kernel *k, void *const *ptr, int bwd)
{
  const ooc_layer *l = layer_of(st, k);
  int64_t F = l->out.d[l->out.ndim - 1],
          rows = ooc_shape_elems(&l->out) / F * st->m->batch, r, c;
  const float *x = ptr[k->in[0]];

  if (!bwd) {
    float *y = ptr[k->out];
    for (r = 0; r < rows; r++)
      for (c = 0; c < F; c++) {
        float a = x[r * 2 * F + c], sg = 1.0f / (1.0f + expf(-a));
        y[r * F + c] = a * sg * x[r * 2 * F + F + c];
      }
    return;
  }
  if (k->din[0] >= 0) {
    const float *dy = ptr[k->dout];
    float *dx = ptr[k->din[0]];
    int acc = k->din_acc[0];
    for (r = 0; r < rows; r++)
      for (c = 0; c < F; c++) {
        float a = x[r * 2 * F + c], b = x[r * 2 * F + F + c];
        float sg = 1.0f / (1.0f + expf(-a)), d = dy[r * F + c];
        float da = d * b * sg * (1.0f + a * (1.0f - sg)), db = d * a * sg;
        float *pa = &dx[r * 2 * F + c], *pb = &dx[r * 2 * F + F + c];
        *pa = acc ? *pa + da : da;
        *pb = acc ? *pb + db : db;
      }
  }
}

/* [S, H] -> [prepend + S, H]: the learned tokens, then the input; plus
 * the learned position rows. Parameters: tokens, then positions. */
static void
tokens(cpu_state *st, const ooc_kernel *k, void *const *ptr, int bwd)
{
  const ooc_layer *l = layer_of(st, k);
  int64_t S = in_shape(st, k, 0)->d[0], H = l->out.d[1],
          P = l->a.prepend, T = S + P, n, r, c;
  const float *w = ptr[k->param];
  const float *pos = l->a.positions > 0 ? w + P * H : NULL;

  if (!bwd) {
    const float *x = ptr[k->in[0]];
    float *y = ptr[k->out];
    for (n = 0; n < st->m->batch; n++)
      for (r = 0; r < T; r++)
        for (c = 0; c < H; c++) {
          float v = r < P ? w[r * H + c] : x[(n * S + r - P) * H + c];
          y[(n * T + r) * H + c] = v + (pos ? pos[r * H + c] : 0.0f);
        }
    return;
  }
  {
    const float *dy = ptr[k->dout];
    float *dw = (float *)((char *)ptr[k->dparam] + k->dparam_off);
    float *dpos = pos ? dw + P * H : NULL;
    if (!k->dparam_acc)
      memset(dw, 0, l->grad_bytes);
    for (n = 0; n < st->m->batch; n++)
      for (r = 0; r < T; r++)
        for (c = 0; c < H; c++) {
          float d = dy[(n * T + r) * H + c];
          if (r < P)
            dw[r * H + c] += d;
          if (dpos)
            dpos[r * H + c] += d;
        }
    if (k->din[0] >= 0) {
      float *dx = ptr[k->din[0]];
      for (n = 0; n < st->m->batch; n++)
        cpu_put(dx + n * S * H, dy + (n * T + P) * H, (uint64_t)(S * H),
                k->din_acc[0]);
    }
  }
}

/* Rows [start, start + length) of the first dim; the backward zeroes the
 * rest of the input's gradient (or adds nothing there). */
static void
slice(cpu_state *st, const ooc_kernel *k, void *const *ptr, int bwd)
{
  const ooc_layer *l = layer_of(st, k);
  const ooc_shape *xs = in_shape(st, k, 0);
  int64_t row = ooc_shape_elems(xs) / xs->d[0], S = xs->d[0],
          L = l->a.length, s0 = l->a.start, n;

  if (!bwd) {
    for (n = 0; n < st->m->batch; n++)
      memcpy((float *)ptr[k->out] + n * L * row,
             (const float *)ptr[k->in[0]] + (n * S + s0) * row,
             (size_t)(L * row) * sizeof(float));
    return;
  }
  if (k->din[0] >= 0) {
    float *dx = ptr[k->din[0]];
    const float *dy = ptr[k->dout];
    for (n = 0; n < st->m->batch; n++) {
      if (!k->din_acc[0]) {
        memset(dx + n * S * row, 0, (size_t)(S * row) * sizeof *dx);
      }
      cpu_put(dx + (n * S + s0) * row, dy + n * L * row, (uint64_t)(L * row),
              k->din_acc[0]);
    }
  }
}

/* Softmax over the last dim; the backward reads the output. */
static void
softmax(cpu_state *st, const ooc_kernel *k, void *const *ptr, int bwd)
{
  const ooc_layer *l = layer_of(st, k);
  int64_t C = l->out.d[l->out.ndim - 1],
          rows = ooc_shape_elems(&l->out) / C * st->m->batch, r, c;
  const float *y = ptr[k->out];

  if (!bwd) {
    const float *x = ptr[k->in[0]];
    float *o = ptr[k->out], mx;
    double sum;
    for (r = 0; r < rows; r++)
      softmax_row(x + r * C, o + r * C, C, &mx, &sum);
    return;
  }
  if (k->din[0] >= 0) {
    const float *dy = ptr[k->dout];
    float *dx = ptr[k->din[0]];
    for (r = 0; r < rows; r++) {
      double dot = 0;
      for (c = 0; c < C; c++)
        dot += (double)dy[r * C + c] * y[r * C + c];
      for (c = 0; c < C; c++) {
        float v = y[r * C + c] * (dy[r * C + c] - (float)dot);
        dx[r * C + c] = k->din_acc[0] ? dx[r * C + c] + v : v;
      }
    }
  }
}

/* --- the optimizer step --------------------------------------------------- */

/* Every parameter tensor of the update: weights, gradients and state in
 * one buffer (data.c's layout), stepped by the core's one optimizer (the
 * host stream's step of an offloaded layer runs the same code). */
static void
update(cpu_state *st, const ooc_kernel *k, void *const *ptr,
       int iteration)
{
  int j;

  for (j = 0; j < k->n_params; j++) {
    const ooc_layer *l = &st->m->layers[st->p->tensors[k->params[j]].layer];
    int64_t n = (int64_t)(l->param_bytes / sizeof(float));
    float *w = ptr[k->params[j]];
    ooc_exec_optimizer_step(st->m->optimizer, w, w + n, w + 2 * n, n,
                            iteration);
  }
}

/* --- front ---------------------------------------------------------------- */

int
cpu_kern_prepare(cpu_state *st, const ooc_kernel *k, ooc_err *err)
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
      uint64_t e = 0;
      int j;
      for (j = 0; j < k->n_in; j++)
        e += (uint64_t)ooc_shape_elems(in_shape(st, k, j));
      return cpu_grow(&st->tmp, &st->tmp_bytes,
                      (uint64_t)st->m->batch * e * sizeof(float), err);
    }
    return OOC_OK;
  case OOC_OPK_RMSNORM: case OOC_OPK_ROPE: case OOC_OPK_SWIGLU:
  case OOC_OPK_TOKENS: case OOC_OPK_SLICE: case OOC_OPK_SOFTMAX:
    return OOC_OK;
  default:
    return ooc_err_set(err, OOC_EINVAL, "cpu: layer %d '%s': op %s has no "
                       "kernel on the cpu backend", k->layer,
                       l->name ? l->name : "?", ooc_op_name(l->op));
  }
}

int
cpu_kern_run(cpu_state *st, const ooc_kernel *k, void *const *ptr,
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
  case OOC_OPK_RMSNORM:
    rmsnorm(st, k, ptr, bwd);
    return OOC_OK;
  case OOC_OPK_ROPE:
    rope(st, k, ptr, bwd);
    return OOC_OK;
  case OOC_OPK_SWIGLU:
    swiglu(st, k, ptr, bwd);
    return OOC_OK;
  case OOC_OPK_TOKENS:
    tokens(st, k, ptr, bwd);
    return OOC_OK;
  case OOC_OPK_SLICE:
    slice(st, k, ptr, bwd);
    return OOC_OK;
  case OOC_OPK_SOFTMAX:
    softmax(st, k, ptr, bwd);
    return OOC_OK;
  default:
    return ooc_err_set(err, OOC_EINVAL, "cpu: op %s has no kernel",
                       ooc_op_name(layer_of(st, k)->op));
  }
}
