/* executor/calibrate.c — measure this machine through a backend
 * (calibrate.h): kernels and interference by replaying the in-core
 * program, copies and driver actions through the backend's own calls.
 *
 * Ownership: everything measured lands in the result; backend states,
 * buffers and threads live for one call. Cost: see calibrate.h.
 */
#define _GNU_SOURCE 1
#include "config.h"

#include <gsl/gsl_fit.h>
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/util.h"
#include "executor/calibrate.h"
#include "executor/backend.h"

#define MiB (1024ULL * 1024ULL)
#define MAX_REP 64

static int
cmp_d(const void *a, const void *b)
{
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

static double
median_d(double *v, int n)
{
  if (n == 0)
    return 0;
  qsort(v, (size_t)n, sizeof *v, cmp_d);
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

void
ooc_calib_result_init(ooc_calib_result *r)
{
  memset(r, 0, sizeof *r);
  r->update_ns = -1;
}

void
ooc_calib_result_fini(ooc_calib_result *r)
{
  int a;

  if (r == NULL)
    return;
  free(r->fwd_ns);
  free(r->bwd_ns);
  for (a = 0; a < OOC_ALGO_COUNT; a++) {
    free(r->algo_fwd_ns[a]);
    free(r->algo_bwd_ns[a]);
  }
  ooc_calib_result_init(r);
}

int
ooc_calib_fit_line(const double *x, const double *t, int n,
                   ooc_calib_fit *out, ooc_err *err)
{
  double w[64] = { 0 }, c0, c1, c00, c01, c11, chisq;
  int i;

  if (n < 2 || n > 64)
    return ooc_err_set(err, OOC_EINVAL, "calibrate: %d points to fit (2 to "
                       "64 needed)", n);
  for (i = 0; i < n; i++) {
    if (!(x[i] > 0) || !(t[i] > 0))
      return ooc_err_set(err, OOC_EINVAL, "calibrate: point %d (%g, %g) is "
                         "not positive", i, x[i], t[i]);
    w[i] = 1.0 / (t[i] * t[i]);
  }
  gsl_fit_wlinear(x, 1, w, 1, t, 1, (size_t)n, &c0, &c1, &c00, &c01, &c11,
                  &chisq);
  if (!(c1 > 0))
    return ooc_err_set(err, OOC_EINVAL, "calibrate: the fitted time per "
                       "byte is %g, not positive (the measurements do not "
                       "grow with size)", c1);
  *out = (ooc_calib_fit){ .intercept = c0, .slope = c1, .n = n };
  for (i = 0; i < n; i++) {
    double r = fabs(c0 + c1 * x[i] - t[i]) / t[i];
    if (r > out->max_rel_residual)
      out->max_rel_residual = r;
  }
  return OOC_OK;
}

double
ooc_calib_fit_interference(const double *t, int n)
{
  double num = 0, den = 0, x;
  int k;

  if (n <= 0 || !(t[0] > 0))
    return 0;
  for (k = 1; k <= n; k++) {
    num += k * (t[k] / t[0] - 1);
    den += (double)k * k;
  }
  x = num / den;
  return x > 0 ? x : 0;
}

static void
step(const ooc_calib_config *cfg, int64_t done, int64_t total,
     const char *note)
{
  if (cfg->progress != NULL)
    ooc_progress_show(cfg->progress, done, total, "steps", note);
}

/* --- a backend state of our own (copies, driver actions, load) ------------ */

typedef struct bstate {
  const ooc_exec_backend *b;
  void *st;
  int created;
} bstate;

static int
bs_open(bstate *s, const ooc_calib_config *cfg, ooc_err *err)
{
  ooc_exec_env env = { .model = cfg->model, .program = cfg->program,
                       .threads = cfg->threads, .link_GBps = cfg->link_GBps,
                       .seed = cfg->seed };
  int rc;

  s->b = cfg->backend;
  if ((s->st = calloc(1, s->b->state_size + 1)) == NULL)
    return ooc_err_set(err, OOC_ENOMEM, "calibrate: out of memory");
  if ((rc = s->b->create(s->st, &env, err)) < 0)
    return rc;
  s->created = 1;
  return OOC_OK;
}

static void
bs_close(bstate *s)
{
  if (s->created)
    s->b->destroy(s->st);
  free(s->st);
  memset(s, 0, sizeof *s);
}

/* A device segment of bytes (region id `id`). */
static int
seg_alloc(bstate *s, int32_t id, uint64_t bytes, ooc_exec_region *r,
          ooc_err *err)
{
  ooc_drv_action a = { .kind = OOC_DRV_SEG_MALLOC, .id = id,
                       .addr = (uint64_t)id << 40, .bytes = bytes };

  memset(r, 0, sizeof *r);
  r->addr = a.addr;
  r->bytes = bytes;
  return s->b->mem(s->st, &a, r, NULL, err);
}

static void
seg_free(bstate *s, int32_t id, ooc_exec_region *r)
{
  ooc_drv_action a = { .kind = OOC_DRV_SEG_FREE, .id = id, .addr = r->addr,
                       .bytes = r->bytes };
  ooc_err e = { 0 };

  if (r->base != NULL)
    s->b->mem(s->st, &a, r, NULL, &e);
}

/* --- copies ----------------------------------------------------------------- */

typedef struct cbuf {
  bstate *s;
  void *host;
  int pinned;
  ooc_exec_region dev;
  uint64_t bytes;
} cbuf;

typedef struct copier {
  bstate *s;
  int stream;                   /* 1: H2D, 2: D2H */
  cbuf *buf;
  uint64_t bytes;
  int reps;
  double *t;                    /* per rep, seconds */
  atomic_int *go, *stop;        /* start together; load: until stop */
  int64_t count;                /* load: copies done */
  int rc;
  ooc_err err;
} copier;

static int
one_copy(copier *c)
{
  void *dst = c->stream == 1 ? c->buf->dev.base : c->buf->host;
  const void *src = c->stream == 1 ? c->buf->host : c->buf->dev.base;

  return c->s->b->copy(c->s->st, c->stream, dst, src, c->bytes, &c->err);
}

static void *
copier_main(void *arg)
{
  copier *c = arg;
  int k;

  if (c->s->b->thread_start != NULL &&
      (c->rc = c->s->b->thread_start(c->s->st, c->stream, &c->err)) < 0)
    return NULL;
  while (!atomic_load(c->go))
    ;
  if (c->stop != NULL) {
    while (!atomic_load(c->stop) && c->rc == OOC_OK) {
      c->rc = one_copy(c);
      c->count++;
    }
    return NULL;
  }
  for (k = 0; k < c->reps && c->rc == OOC_OK; k++) {
    int64_t t0 = ooc_mono_ns();
    c->rc = one_copy(c);
    c->t[k] = (double)(ooc_mono_ns() - t0) * 1e-9;
  }
  return NULL;
}

/* Run one or two copiers on threads (dir 1, 2, or 3 = both at once). */
static int
run_copies(copier *c, int dir, ooc_err *err)
{
  pthread_t th[2];
  atomic_int go;
  int i, n = 0, idx[2], rc = OOC_OK;

  atomic_init(&go, 0);
  if (dir & 1)
    idx[n++] = 0;
  if (dir & 2)
    idx[n++] = 1;
  for (i = 0; i < n; i++) {
    c[idx[i]].go = &go;
    c[idx[i]].rc = OOC_OK;
    if (pthread_create(&th[i], NULL, copier_main, &c[idx[i]]) != 0) {
      atomic_store(&go, 1);
      while (--i >= 0)
        pthread_join(th[i], NULL);
      return ooc_err_set(err, OOC_ENOMEM, "calibrate: cannot start a "
                         "copy thread");
    }
  }
  atomic_store(&go, 1);
  for (i = 0; i < n; i++)
    pthread_join(th[i], NULL);
  for (i = 0; i < n; i++)
    if (c[idx[i]].rc < 0 && rc == OOC_OK) {
      *err = c[idx[i]].err;
      rc = c[idx[i]].rc;
    }
  return rc;
}

static int
cbuf_open(cbuf *b, bstate *s, int32_t id, uint64_t bytes, ooc_err *err)
{
  int rc;

  memset(b, 0, sizeof *b);
  b->s = s;
  b->bytes = bytes;
  if ((rc = s->b->host_alloc(s->st, bytes, &b->host, &b->pinned, err)) < 0)
    return rc;
  memset(b->host, 1, bytes);
  if ((rc = seg_alloc(s, id, bytes, &b->dev, err)) < 0)
    return rc;
  return s->b->upload(s->st, b->dev.base, b->host, bytes, err);
}

static void
cbuf_close(cbuf *b)
{
  if (b->s == NULL)
    return;
  seg_free(b->s, 0, &b->dev);
  if (b->host != NULL)
    b->s->b->host_free(b->s->st, b->host, b->bytes, b->pinned);
  memset(b, 0, sizeof *b);
}

static int
measure_copies(const ooc_calib_config *cfg, bstate *s, ooc_calib_result *r,
               ooc_err *err)
{
  uint64_t max = cfg->copy_max ? cfg->copy_max : 64 * MiB, sz;
  cbuf bh, bd;
  copier c[2];
  double t[2][MAX_REP * 4];
  int rc, n = 0, dir, reps;

  memset(&bh, 0, sizeof bh);
  memset(&bd, 0, sizeof bd);
  if ((rc = cbuf_open(&bh, s, 1, max, err)) < 0 ||
      (rc = cbuf_open(&bd, s, 2, max, err)) < 0)
    goto done;
  r->pinned = bh.pinned && bd.pinned;
  for (sz = 64 * 1024; sz <= max && n < 16; sz *= 4) {
    reps = cfg->repeat * (sz < MiB ? 4 : 1);
    if (reps > MAX_REP * 4)
      reps = MAX_REP * 4;
    r->sizes[n] = (double)sz;
    for (dir = 1; dir <= 3; dir++) {
      c[0] = (copier){ .s = s, .stream = 1, .buf = &bh, .bytes = sz,
                       .reps = reps, .t = t[0] };
      c[1] = (copier){ .s = s, .stream = 2, .buf = &bd, .bytes = sz,
                       .reps = reps, .t = t[1] };
      if ((rc = run_copies(c, dir, err)) < 0)
        goto done;
      if (dir == 1)
        r->t_h2d[n] = median_d(t[0], reps);
      else if (dir == 2)
        r->t_d2h[n] = median_d(t[1], reps);
      else {
        r->t_dup_h2d[n] = median_d(t[0], reps);
        r->t_dup_d2h[n] = median_d(t[1], reps);
      }
    }
    n++;
  }
  r->n_sizes = n;
  if ((rc = ooc_calib_fit_line(r->sizes, r->t_h2d, n, &r->h2d, err)) < 0 ||
      (rc = ooc_calib_fit_line(r->sizes, r->t_d2h, n, &r->d2h, err)) < 0 ||
      (rc = ooc_calib_fit_line(r->sizes, r->t_dup_h2d, n, &r->dup_h2d,
                               err)) < 0 ||
      (rc = ooc_calib_fit_line(r->sizes, r->t_dup_d2h, n, &r->dup_d2h,
                               err)) < 0)
    goto done;
done:
  cbuf_close(&bh);
  cbuf_close(&bd);
  return rc;
}

/* --- driver actions ----------------------------------------------------------- */

static int
measure_driver(const ooc_calib_config *cfg, bstate *s, ooc_calib_result *r,
               ooc_err *err)
{
  double xs[8], ts[8], tk[MAX_REP];
  int64_t fr[8 * MAX_REP], cr[MAX_REP], mp[MAX_REP], um[MAX_REP],
      rl[MAX_REP], ha[MAX_REP];
  int n = 0, nf = 0, k, rc, reps = cfg->repeat < MAX_REP ? cfg->repeat
                                                         : MAX_REP;
  uint64_t sz, chunk = cfg->hw != NULL && cfg->hw->va_chunk_bytes > 0
                           ? cfg->hw->va_chunk_bytes : 2 * MiB;
  ooc_exec_region seg, range, ch;
  void *zero = NULL;

  /* Segments of 1 MiB .. 256 MiB: malloc timed, then touched (upload),
   * then free timed, as a caching allocator frees a used segment. */
  if ((zero = calloc(1, 256 * MiB)) == NULL)
    return ooc_err_set(err, OOC_ENOMEM, "calibrate: out of memory");
  for (sz = MiB; sz <= 256 * MiB; sz *= 4) {
    for (k = 0; k < reps; k++) {
      int64_t t0 = ooc_mono_ns();
      if ((rc = seg_alloc(s, 3, sz, &seg, err)) < 0)
        goto done;
      tk[k] = (double)(ooc_mono_ns() - t0) * 1e-9;
      if ((rc = s->b->upload(s->st, seg.base, zero, sz, err)) < 0) {
        seg_free(s, 3, &seg);
        goto done;
      }
      t0 = ooc_mono_ns();
      seg_free(s, 3, &seg);
      fr[nf++] = ooc_mono_ns() - t0;
    }
    xs[n] = (double)sz;
    ts[n] = median_d(tk, reps);
    n++;
  }
  if ((rc = ooc_calib_fit_line(xs, ts, n, &r->seg_malloc, err)) < 0) {
    /* A malloc that does not grow with size (lazy mappings): its median
     * alone, no per-byte part. */
    ooc_err_clear(err);
    r->seg_malloc = (ooc_calib_fit){ .intercept = median_d(ts, n),
                                     .slope = 0, .n = n };
  }
  r->free_ns = ooc_median_i64(fr, nf);

  /* Chunks inside a reserved range of two chunks. */
  r->chunk_bytes = chunk;
  {
    ooc_drv_action res = { .kind = OOC_DRV_VA_RESERVE, .id = 4,
                           .addr = (uint64_t)4 << 40, .bytes = 2 * chunk };
    ooc_drv_action vfree = res;
    memset(&range, 0, sizeof range);
    range.addr = res.addr;
    range.bytes = res.bytes;
    if ((rc = s->b->mem(s->st, &res, &range, NULL, err)) < 0)
      goto done;
    for (k = 0; k < reps; k++) {
      ooc_drv_action a = { .kind = OOC_DRV_CHUNK_CREATE, .id = 5,
                           .bytes = chunk };
      int64_t t0 = ooc_mono_ns();
      memset(&ch, 0, sizeof ch);
      ch.bytes = chunk;
      if ((rc = s->b->mem(s->st, &a, &ch, NULL, err)) < 0)
        break;
      cr[k] = ooc_mono_ns() - t0;
      a = (ooc_drv_action){ .kind = OOC_DRV_CHUNK_MAP, .id = 5,
                            .addr = range.addr, .bytes = chunk };
      t0 = ooc_mono_ns();
      if ((rc = s->b->mem(s->st, &a, &ch, &range, err)) < 0)
        break;
      mp[k] = ooc_mono_ns() - t0;
      a.kind = OOC_DRV_CHUNK_UNMAP;
      t0 = ooc_mono_ns();
      if ((rc = s->b->mem(s->st, &a, &ch, &range, err)) < 0)
        break;
      um[k] = ooc_mono_ns() - t0;
      a = (ooc_drv_action){ .kind = OOC_DRV_CHUNK_RELEASE, .id = 5,
                            .bytes = chunk };
      t0 = ooc_mono_ns();
      if ((rc = s->b->mem(s->st, &a, &ch, NULL, err)) < 0)
        break;
      rl[k] = ooc_mono_ns() - t0;
    }
    vfree.kind = OOC_DRV_VA_FREE;
    {
      ooc_err e = { 0 };
      s->b->mem(s->st, &vfree, &range, NULL, &e);
    }
    if (rc < 0)
      goto done;
    r->chunk_create_ns = ooc_median_i64(cr, reps);
    r->chunk_map_ns = ooc_median_i64(mp, reps);
    r->chunk_unmap_ns = ooc_median_i64(um, reps);
    r->chunk_release_ns = ooc_median_i64(rl, reps);
  }

  /* A pinned host buffer of 16 MiB. */
  for (k = 0; k < reps; k++) {
    void *p;
    int pinned;
    int64_t t0 = ooc_mono_ns();
    if ((rc = s->b->host_alloc(s->st, 16 * MiB, &p, &pinned, err)) < 0)
      goto done;
    ha[k] = ooc_mono_ns() - t0;
    s->b->host_free(s->st, p, 16 * MiB, pinned);
  }
  r->host_alloc_ns = ooc_median_i64(ha, reps);
  rc = OOC_OK;
done:
  free(zero);
  return rc;
}

/* --- host: a stream thread waking another ---------------------------------- */

/* The replay's stream threads wait on one condition variable: an
 * instruction that waits for another stream's starts when that thread
 * has published the completion and woken it. Measured as half a
 * ping-pong between two threads (median of 200): what an event
 * synchronisation costs the executor (host.event_sync_us). */
typedef struct pingpong {
  pthread_mutex_t mu;
  pthread_cond_t cv;
  int turn, stop;
} pingpong;

static void *
pong_main(void *arg)
{
  pingpong *pp = arg;

  pthread_mutex_lock(&pp->mu);
  for (;;) {
    while (pp->turn != 1 && !pp->stop)
      pthread_cond_wait(&pp->cv, &pp->mu);
    if (pp->stop)
      break;
    pp->turn = 0;
    pthread_cond_broadcast(&pp->cv);
  }
  pthread_mutex_unlock(&pp->mu);
  return NULL;
}

static int
measure_wake(ooc_calib_result *r, ooc_err *err)
{
  enum { N = 200 };
  pingpong pp = { .turn = 0 };
  int64_t t[N];
  pthread_t th;
  int k;

  pthread_mutex_init(&pp.mu, NULL);
  pthread_cond_init(&pp.cv, NULL);
  if (pthread_create(&th, NULL, pong_main, &pp) != 0) {
    pthread_cond_destroy(&pp.cv);
    pthread_mutex_destroy(&pp.mu);
    return ooc_err_set(err, OOC_ENOMEM, "calibrate: cannot start a thread");
  }
  for (k = 0; k < N; k++) {
    int64_t t0 = ooc_mono_ns();
    pthread_mutex_lock(&pp.mu);
    pp.turn = 1;
    pthread_cond_broadcast(&pp.cv);
    while (pp.turn != 0)
      pthread_cond_wait(&pp.cv, &pp.mu);
    pthread_mutex_unlock(&pp.mu);
    t[k] = (ooc_mono_ns() - t0) / 2;
  }
  pthread_mutex_lock(&pp.mu);
  pp.stop = 1;
  pthread_cond_broadcast(&pp.cv);
  pthread_mutex_unlock(&pp.mu);
  pthread_join(th, NULL);
  pthread_cond_destroy(&pp.cv);
  pthread_mutex_destroy(&pp.mu);
  r->wake_ns = ooc_median_i64(t, N);
  return OOC_OK;
}

/* The host's optimizer step, the HOST instruction's kernel (data.c): the
 * model's optimizer over N fp32 parameters, as a stream thread runs it,
 * median of 7 after one warm-up. It moves 2 x 4 (weights) + 4 (gradients)
 * + 2 x 4 per state value (none for SGD, one for momentum, two for Adam)
 * = 12, 20 or 28 bytes per parameter, the bytes sim/cost.c charges. Each
 * optimizer is timed on its own: on one thread Adam's square root and
 * division make it compute-bound, several times slower per byte than
 * momentum's step (an H100 host: 0.71 GB/s for Adam, 2026-11-27), so one
 * rate cannot stand for both. The calling thread takes the host stream's
 * thread settings first. */
static int
measure_host_optimizer(const ooc_calib_config *cfg, bstate *s,
                       ooc_calib_result *r, ooc_err *err)
{
  enum { N = 4 << 20, REP = 7 };
  ooc_optimizer opt = cfg->model->optimizer;
  int state = opt == OOC_OPT_ADAM ? 2 : opt == OOC_OPT_SGD ? 0 : 1;
  float *w = malloc((size_t)N * 4 * sizeof *w);
  int64_t t[REP];
  int64_t i;
  int k;

  if (w == NULL)
    return ooc_err_set(err, OOC_ENOMEM, "calibrate: out of memory");
  /* On the threads the host stream runs it with (the backend's). */
  if (s->b->thread_start != NULL &&
      (k = s->b->thread_start(s->st, OOC_STREAM_HOST, err)) < 0) {
    free(w);
    return k;
  }
  for (i = 0; i < (int64_t)N * 4; i++)
    w[i] = i < N ? 0.5f : i < 2 * (int64_t)N ? 1e-3f : 0.0f;
  ooc_exec_optimizer_step(opt, w, w + N, w + 2 * (int64_t)N, N, 0);
  for (k = 0; k < REP; k++) {
    int64_t t0 = ooc_mono_ns();
    ooc_exec_optimizer_step(opt, w, w + N, w + 2 * (int64_t)N, N, k + 1);
    t[k] = ooc_mono_ns() - t0;
  }
  i = ooc_median_i64(t, REP);
  r->host_opt = opt;
  r->host_opt_Bps = i > 0 ? (12.0 + 8.0 * state) * N / ((double)i * 1e-9)
                          : 0;
  {
    /* The fixed cost of one step: a small layer's (OpenMP's fork and
     * join, the call). */
    enum { M = 201, SMALL = 256 };
    int64_t c[M];
    for (k = 0; k < M; k++) {
      int64_t t0 = ooc_mono_ns();
      ooc_exec_optimizer_step(opt, w, w + SMALL, w + 2 * SMALL, SMALL,
                              k + 1);
      c[k] = ooc_mono_ns() - t0;
    }
    r->host_opt_call_ns = ooc_median_i64(c, M);
  }
  free(w);
  return OOC_OK;
}

/* --- kernels and interference ---------------------------------------------- */

/* Background copies while a replay runs: n threads (1: H2D; 2: both). */
typedef struct load {
  bstate s;
  cbuf buf;
  copier c[2];
  pthread_t th[2];
  atomic_int go, stop;
  int n;
} load;

static int
load_start(load *ld, const ooc_calib_config *cfg, int n, ooc_err *err)
{
  int rc, i;

  memset(ld, 0, sizeof *ld);
  atomic_init(&ld->go, 1);
  atomic_init(&ld->stop, 0);
  if ((rc = bs_open(&ld->s, cfg, err)) < 0)
    return rc;
  if ((rc = cbuf_open(&ld->buf, &ld->s, 6, 16 * MiB, err)) < 0)
    return rc;
  for (i = 0; i < n; i++) {
    ld->c[i] = (copier){ .s = &ld->s, .stream = i + 1, .buf = &ld->buf,
                         .bytes = 16 * MiB, .go = &ld->go, .stop = &ld->stop };
    if (pthread_create(&ld->th[i], NULL, copier_main, &ld->c[i]) != 0)
      return ooc_err_set(err, OOC_ENOMEM, "calibrate: cannot start a copy "
                         "thread");
    ld->n = i + 1;
  }
  return OOC_OK;
}

static int
load_stop(load *ld, ooc_err *err)
{
  int i, rc = OOC_OK;

  atomic_store(&ld->stop, 1);
  for (i = 0; i < ld->n; i++) {
    pthread_join(ld->th[i], NULL);
    if (ld->c[i].rc < 0 && rc == OOC_OK) {
      *err = ld->c[i].err;
      rc = ld->c[i].rc;
    }
  }
  cbuf_close(&ld->buf);
  bs_close(&ld->s);
  return rc;
}

/* One replay (one warm-up, one timed iteration); its trace into tr. */
static int
replay_prog(const ooc_calib_config *cfg, const ooc_program *p,
            uint8_t *refused, ooc_trace *tr, ooc_exec_result *res,
            ooc_err *err)
{
  ooc_exec_config ec = {
    .backend = cfg->backend, .model = cfg->model, .program = p,
    .hw = cfg->hw, .allocator = cfg->allocator, .budget = cfg->budget,
    .warmup = 1, .iterations = 1, .threads = cfg->threads,
    .seed = cfg->seed, .refused = refused,
  };
  ooc_exec *ex = NULL;
  int rc;

  if ((rc = ooc_exec_alloc(&ec, &ex, err)) == OOC_OK)
    rc = ooc_exec_run(ex, res, tr, err);
  ooc_exec_free(ex);
  if (rc == OOC_OK && !res->feasible)
    rc = ooc_err_set(err, OOC_ENOMEM, "calibrate: the in-core replay ran "
                     "out of memory (%s)", res->oom.reason);
  return rc;
}

static int
replay(const ooc_calib_config *cfg, ooc_trace *tr, ooc_exec_result *res,
       ooc_err *err)
{
  return replay_prog(cfg, cfg->program, NULL, tr, res, err);
}

/* Per-instruction duration of the trace into d (-1 when absent). */
static void
durations(const ooc_program *p, const ooc_trace *tr, int64_t *d)
{
  int32_t i;

  for (i = 0; i < p->n_instr; i++)
    d[i] = -1;
  for (i = 0; i < tr->n_spans; i++)
    if (tr->spans[i].instr >= 0 && tr->spans[i].instr < p->n_instr)
      d[tr->spans[i].instr] = tr->spans[i].end_ns - tr->spans[i].start_ns;
}

static int
measure_kernels(const ooc_calib_config *cfg, ooc_calib_result *r,
                int64_t *done, int64_t total, ooc_err *err)
{
  const ooc_program *p = cfg->program;
  const ooc_model *m = cfg->model;
  int reps = cfg->repeat < MAX_REP ? cfg->repeat : MAX_REP;
  int64_t *d = NULL, *samples = NULL, oh[MAX_REP], it[MAX_REP],
      io[MAX_REP];
  int64_t up[MAX_REP];
  int64_t cls[3][OOC_CLASS_COUNT];
  ooc_exec_result res;
  ooc_trace tr;
  int32_t i;
  int k, rc = OOC_OK, nload;

  ooc_trace_init(&tr);
  r->n_layers = m->n_layers;
  r->fwd_ns = malloc(sizeof(int64_t) * (size_t)(m->n_layers + 1));
  r->bwd_ns = malloc(sizeof(int64_t) * (size_t)(m->n_layers + 1));
  d = malloc(sizeof(int64_t) * (size_t)(p->n_instr + 1));
  samples = malloc(sizeof(int64_t) * (size_t)(p->n_instr + 1) * (size_t)reps);
  if (r->fwd_ns == NULL || r->bwd_ns == NULL || d == NULL ||
      samples == NULL) {
    rc = ooc_err_set(err, OOC_ENOMEM, "calibrate: out of memory");
    goto done;
  }
  memset(cls, 0, sizeof cls);
  for (k = 0; k < reps; k++) {
    int64_t busy = 0, first = INT64_MAX, last = 0;
    int32_t nk = 0;
    step(cfg, (*done)++, total, "replaying the in-core program");
    if ((rc = replay(cfg, &tr, &res, err)) < 0)
      goto done;
    snprintf(r->note, sizeof r->note, "%s", res.note);
    durations(p, &tr, d);
    for (i = 0; i < p->n_instr; i++)
      samples[(size_t)i * (size_t)reps + (size_t)k] = d[i];
    for (i = 0; i < tr.n_spans; i++) {
      if (tr.spans[i].start_ns < first)
        first = tr.spans[i].start_ns;
      if (tr.spans[i].end_ns > last)
        last = tr.spans[i].end_ns;
    }
    if (first > last)
      first = last = 0;
    for (i = p->prologue_end; i < p->n_instr; i++)
      if (p->instr[i].kind == OOC_I_COMPUTE && d[i] >= 0) {
        busy += d[i];
        nk++;
        if (p->instr[i].phase == OOC_PH_UPDATE)
          up[k] = d[i];
        else if (p->instr[i].layer >= 0)
          cls[0][m->layers[p->instr[i].layer].cls] += d[i];
      }
    it[k] = res.iteration_ns;
    /* The replay's own cost per iteration (releasing the stream threads,
     * joining them) lies outside its first and last instruction; the rest
     * of the compute stream's idle time is spread over its kernels. */
    io[k] = res.iteration_ns - (last - first);
    oh[k] = nk > 0 ? (last - first - busy) / nk : 0;
  }
  /* Per layer, the median of its kernel's samples. */
  for (i = 0; i < m->n_layers; i++)
    r->fwd_ns[i] = r->bwd_ns[i] = -1;
  for (i = p->prologue_end; i < p->n_instr; i++) {
    const ooc_instr *in = &p->instr[i];
    int64_t med;
    if (in->kind != OOC_I_COMPUTE || in->layer < 0 ||
        in->phase == OOC_PH_UPDATE)
      continue;
    med = ooc_median_i64(samples + (size_t)i * (size_t)reps, reps);
    if (in->phase == OOC_PH_FWD)
      r->fwd_ns[in->layer] = med;
    else if (in->phase == OOC_PH_BWD)
      r->bwd_ns[in->layer] = med;
  }
  r->update_ns = ooc_median_i64(up, reps);
  r->overhead_ns = ooc_median_i64(oh, reps);
  if (r->overhead_ns < 0)
    r->overhead_ns = 0;
  r->iteration_ns = ooc_median_i64(it, reps);
  r->iter_overhead_ns = ooc_median_i64(io, reps);
  if (r->iter_overhead_ns < 0)
    r->iter_overhead_ns = 0;
  for (i = 0; i < m->n_layers; i++)
    r->update_launches += m->layers[i].params > 0;

  /* Interference: the same replay beside 1 and 2 copy threads. */
  for (nload = 1; nload <= 2; nload++) {
    load ld;
    int rc2;
    step(cfg, (*done)++, total, nload == 1 ? "replaying beside one copy"
                                           : "replaying beside two copies");
    if ((rc = load_start(&ld, cfg, nload, err)) == OOC_OK)
      rc = replay(cfg, &tr, &res, err);
    rc2 = load_stop(&ld, rc == OOC_OK ? err : &(ooc_err){ 0 });
    if (rc == OOC_OK)
      rc = rc2;
    if (rc < 0)
      goto done;
    durations(p, &tr, d);
    for (i = p->prologue_end; i < p->n_instr; i++)
      if (p->instr[i].kind == OOC_I_COMPUTE && d[i] >= 0 &&
          p->instr[i].phase != OOC_PH_UPDATE && p->instr[i].layer >= 0)
        cls[nload][m->layers[p->instr[i].layer].cls] += d[i];
  }
  for (k = 0; k < OOC_CLASS_COUNT; k++) {
    double t[3];
    int j;
    for (j = 0; j < 3; j++) {
      /* The alone time: the median run's share, as a sum over the reps. */
      r->class_ns[k][j] = j == 0 ? cls[0][k] / reps : cls[j][k];
      t[j] = (double)r->class_ns[k][j];
    }
    r->interference[k] = ooc_calib_fit_interference(t, 2);
  }
done:
  ooc_trace_fini(&tr);
  free(d);
  free(samples);
  return rc;
}

/* Whether family a is measured for layer `layer` of m: a convolution the
 * family applies to (ir/algo.h). */
static int
algo_applies(const ooc_model *m, int layer, int a)
{
  uint64_t ws;

  return ooc_algo_has_choice(m, layer) &&
         ooc_algo_workspace(m, layer, (ooc_algo)a, &ws) == OOC_OK;
}

/* Whether family a >= 1 is measured at all: asked for, offered by the base
 * profile and applicable to one of the program's kernels. */
static int
family_measured(const ooc_calib_config *cfg, int a)
{
  const ooc_program *p = cfg->program;
  int32_t i;

  if (!cfg->algorithms || cfg->hw == NULL || !(cfg->hw->algo_factor[a] > 0))
    return 0;
  for (i = p->prologue_end; i < p->n_instr; i++)
    if (p->instr[i].kind == OOC_I_COMPUTE && p->instr[i].layer >= 0 &&
        algo_applies(cfg->model, p->instr[i].layer, a))
      return 1;
  return 0;
}

/* The in-core program with every applicable convolution naming family a,
 * replayed `repeat` times; per layer the median kernels, or REFUSED. */
static int
measure_algorithms(const ooc_calib_config *cfg, ooc_calib_result *r,
                   int64_t *done, int64_t total, ooc_err *err)
{
  const ooc_program *p = cfg->program;
  const ooc_model *m = cfg->model;
  int reps = cfg->repeat < MAX_REP ? cfg->repeat : MAX_REP;
  size_t ni = (size_t)p->n_instr + 1;
  ooc_program q = *p;
  ooc_instr *ins = malloc(sizeof *ins * ni);
  uint8_t *refused = malloc(ni);
  int64_t *d = malloc(sizeof(int64_t) * ni);
  int64_t *samples = malloc(sizeof(int64_t) * ni * (size_t)reps);
  ooc_exec_result res;
  ooc_trace tr;
  char what[64];
  int32_t i;
  int a, k, rc = OOC_OK;

  ooc_trace_init(&tr);
  if (ins == NULL || refused == NULL || d == NULL || samples == NULL) {
    rc = ooc_err_set(err, OOC_ENOMEM, "calibrate: out of memory");
    goto done;
  }
  q.instr = ins;
  for (a = 1; a < OOC_ALGO_COUNT; a++) {
    ooc_err e;
    int failed = 0;
    if (!family_measured(cfg, a))
      continue;
    memcpy(ins, p->instr, sizeof *ins * (size_t)p->n_instr);
    for (i = p->prologue_end; i < p->n_instr; i++)
      if (ins[i].kind == OOC_I_COMPUTE && ins[i].layer >= 0 &&
          ins[i].phase != OOC_PH_UPDATE &&
          algo_applies(m, ins[i].layer, a))
        ins[i].algo = (uint8_t)a;
    memset(refused, 0, ni);
    r->algo_fwd_ns[a] = malloc(sizeof(int64_t) * (size_t)(m->n_layers + 1));
    r->algo_bwd_ns[a] = malloc(sizeof(int64_t) * (size_t)(m->n_layers + 1));
    if (r->algo_fwd_ns[a] == NULL || r->algo_bwd_ns[a] == NULL) {
      rc = ooc_err_set(err, OOC_ENOMEM, "calibrate: out of memory");
      goto done;
    }
    for (i = 0; i < m->n_layers; i++)
      r->algo_fwd_ns[a][i] = r->algo_bwd_ns[a][i] = -1;
    snprintf(what, sizeof what, "replaying with %s",
             ooc_algo_name((ooc_algo)a));
    for (k = 0; k < reps && !failed; k++) {
      step(cfg, (*done)++, total, what);
      ooc_err_clear(&e);
      if ((rc = replay_prog(cfg, &q, refused, &tr, &res, &e)) < 0) {
        /* Past preparation (a kernel that failed when it ran, out of
         * memory with its workspaces): the family is not usable here. */
        snprintf(r->algo_failed[a], sizeof r->algo_failed[a], "%.180s",
                 e.msg);
        failed = 1;
        rc = OOC_OK;
        break;
      }
      durations(&q, &tr, d);
      for (i = 0; i < p->n_instr; i++)
        samples[(size_t)i * (size_t)reps + (size_t)k] = d[i];
    }
    for (i = p->prologue_end; i < p->n_instr; i++) {
      const ooc_instr *in = &ins[i];
      int64_t v;
      if (in->algo != a)
        continue;
      v = failed || refused[i]
              ? OOC_CALIB_REFUSED
              : ooc_median_i64(samples + (size_t)i * (size_t)reps, reps);
      if (in->phase == OOC_PH_FWD)
        r->algo_fwd_ns[a][in->layer] = v;
      else if (in->phase == OOC_PH_BWD)
        r->algo_bwd_ns[a][in->layer] = v;
    }
  }
done:
  ooc_trace_fini(&tr);
  free(ins);
  free(refused);
  free(d);
  free(samples);
  return rc;
}

int
ooc_calib_run(const ooc_calib_config *cfg, ooc_calib_result *r,
              ooc_err *err)
{
  bstate s;
  int64_t done = 0, total;
  int rc, a;

  ooc_calib_result_init(r);
  memset(&s, 0, sizeof s);
  if (cfg->repeat < 1)
    return ooc_err_set(err, OOC_EINVAL, "calibrate: repeat %d must be >= 1",
                       cfg->repeat);
  if ((rc = ooc_exec_backend_probe(cfg->backend, err)) < 0)
    return rc;
  total = (cfg->repeat < MAX_REP ? cfg->repeat : MAX_REP) + 4;
  for (a = 1; a < OOC_ALGO_COUNT; a++)
    if (family_measured(cfg, a))
      total += cfg->repeat < MAX_REP ? cfg->repeat : MAX_REP;
  if ((rc = measure_kernels(cfg, r, &done, total, err)) < 0 ||
      (rc = measure_algorithms(cfg, r, &done, total, err)) < 0)
    return rc;
  step(cfg, done++, total, "copies");
  if ((rc = bs_open(&s, cfg, err)) < 0)
    goto done;
  if (s.b->thread_start != NULL &&
      (rc = s.b->thread_start(s.st, 1, err)) < 0)
    goto done;
  if ((rc = measure_copies(cfg, &s, r, err)) < 0)
    goto done;
  step(cfg, done++, total, "driver actions");
  if ((rc = measure_driver(cfg, &s, r, err)) < 0 ||
      (rc = measure_wake(r, err)) < 0 ||
      (rc = measure_host_optimizer(cfg, &s, r, err)) < 0)
    goto done;
  if (s.b->host_api != NULL) {
    if ((rc = s.b->host_api(s.st, &r->api, err)) < 0)
      goto done;
    r->has_api = 1;
  }
  step(cfg, total, total, NULL);
done:
  bs_close(&s);
  return rc;
}
