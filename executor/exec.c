/* executor/exec.c — the replay core: one thread per program stream, the
 * tensor-state rules, device memory in the simulator's order, timing and
 * results (executor.h; docs/executor.md).
 *
 * One idea: run the program exactly as docs/program-ir.md defines it, with
 * real threads instead of simulated streams. Each stream thread takes its
 * instructions in index order; before one starts it waits, on one mutex
 * and condition variable, until every instruction it waits on has
 * completed in this iteration and, for a device ALLOC or FREE, until the
 * allocator order gives it its turn. Then, under the lock, the rules of
 * ir/semantics.h are checked and applied (the simulator's code, so a
 * broken rule is the simulator's message), an ALLOC or FREE is placed by
 * the allocator policy with its driver actions performed on the arena
 * (arena.c), and the instruction is timed; a kernel or copy runs outside
 * the lock through the backend, and its completion is published under it.
 * The host stream's HOST instructions (an offloaded layer's optimizer
 * step, docs/offload.md) run the same way, outside the lock, in C on the
 * host buffers, whatever the backend (ooc_program_check_host_step(),
 * ir/semantics.h, vets their args before anything runs).
 *
 * The allocator order. The simulator records, per iteration, the order in
 * which its allocator saw the device ALLOC and FREE instructions
 * (ooc_sim_detail.mem_order); applying the same requests in the same
 * order to the same policy gives the same placements and driver actions,
 * so the fragmentation the simulator predicted is the one measured. An
 * ALLOC or FREE therefore also waits until the previous request in the
 * order has been applied. Why this cannot deadlock: before anything runs,
 * check_order() replays each order dry: it repeatedly starts the head of
 * any stream whose waits are done and which, if it is an ALLOC or FREE, is
 * the next request in the order. Starting an instruction never makes
 * another unable to start (waits and turns only become satisfied), so a
 * dry run that gets stuck means no schedule can follow the order, which is
 * refused (OOC_EINVAL). If it finishes, let d1, d2, ... be the order in
 * which it started instructions, and S the set complete at some moment of
 * the real run: a prefix of each stream, whose ALLOC/FREEs are the first
 * requests of the order (they are applied in order). Take the first dj
 * not in S. Its stream's earlier instructions precede it among the d's,
 * so they are in S and dj is its stream's next instruction; its waits
 * completed before the dry run started it, so they are in S; and if it is
 * an ALLOC or FREE, the requests before it in the order are d's before
 * it, in S, while no later one can be (dj's own is not applied), so it is
 * the next request. So dj can start: the threads, each blocked only on a
 * wait or a turn, are never all blocked while work remains. The
 * simulator's order passes by construction: the simulator started every
 * instruction only after its waits and its stream's previous instruction
 * had completed, and applied each request as its instruction started. An
 * order that ends early (the simulator's run went out of memory at its
 * last ALLOC) is followed as far as it goes.
 *
 * Timing: CLOCK_MONOTONIC, each instruction's start and end relative to
 * the iteration's start; an iteration starts when the main thread releases
 * the four streams and ends when all have finished, after which the
 * device is synchronised (as the simulator runs iterations back to back
 * from a drained device). Kernels are built on the compute thread before
 * the first iteration (its kernel thread count set), and the prologue runs
 * once, untimed.
 *
 * Ownership: ooc_exec owns everything it allocates (executor.h). Cost per
 * instruction: one lock round trip, O(waits + args) under it; per
 * iteration O(instructions); the dry runs O(instructions + waits) per
 * distinct order.
 */
#include "config.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/util.h"
#include "ir/semantics.h"
#include "executor/core.h"

enum { JOB_NONE = 0, JOB_PREPARE, JOB_ITERATE };

/* ooc_exec.pinned: 0 pageable and 1 pinned (the backend's buffer), or a
 * buffer of the core's own (an offloaded layer's optimizer state). */
enum { PIN_PLAIN = 2 };

struct worker {
  struct ooc_exec *ex;
  int stream;
};

struct ooc_exec {
  ooc_exec_config cfg;
  const ooc_model *m;
  const ooc_program *p;
  const ooc_exec_backend *b;
  void *bstate;
  int bopen;
  const ooc_allocator_type *at;
  void *astate;
  int aopen;
  ooc_exec_arena arena;
  ooc_kernels ks;
  ooc_sem sem;
  int ran;

  /* Per tensor. */
  void **ptr;                 /* device copy, NULL while absent */
  void **host;                /* pinned host buffer */
  uint8_t *pinned;
  uint64_t *swap_hash;        /* verify: the device data at its D2H */
  uint8_t *swap_hashed;

  /* Per instruction. */
  int64_t *start, *end;       /* ns from the iteration's start */
  uint32_t *done;             /* == stamp: completed this iteration */
  int32_t *turn;              /* position in this iteration's order, -1 */
  ooc_placement *place;
  uint8_t *placed;
  int32_t *order;             /* timed instructions grouped by stream */
  int32_t first[OOC_NSTREAMS], count[OOC_NSTREAMS];
  int32_t n_mem_instr;        /* timed device ALLOC/FREE */

  /* Memory figures. */
  uint64_t allocated, peak_allocated;
  uint64_t host_bytes, peak_host, host_unpinned;
  uint64_t host_pinned_bytes;   /* of host_bytes, the backend's pinned
                                   buffers (peak_host is their peak) */
  int32_t mem_next, mem_n;
  int ordered;

  /* Threads. */
  pthread_mutex_t mu;
  pthread_cond_t cv;
  int sync_init;
  pthread_t th[OOC_NSTREAMS];
  struct worker w[OOC_NSTREAMS];
  int n_threads;
  unsigned gen;
  int job, finished, quit;
  uint32_t stamp;
  int iteration;
  int64_t t0;                 /* the iteration's start, absolute ns */
  int abort, rc, oom;
  ooc_err err;
  ooc_oom oom_rep;

  /* The current iteration's trace. */
  int32_t *spans;             /* instructions in completion order */
  int32_t n_spans;
  ooc_mem_sample *mem;
  int32_t n_mem, cap_mem;

  uint64_t verify_checked, verify_mismatches;
  char verify_first[160];
};

static int64_t
now_ns(void)
{
  struct timespec ts;

  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static int
is_mem(const ooc_instr *in)
{
  return (in->kind == OOC_I_ALLOC || in->kind == OOC_I_FREE) &&
         in->where == OOC_WHERE_DEVICE;
}

/* The run fails (first error wins); called with the lock held. */
static void
fail_locked(ooc_exec *ex, int rc, const ooc_err *e)
{
  if (!ex->abort) {
    ex->abort = 1;
    ex->rc = rc;
    if (e != NULL)
      ex->err = *e;
  }
  pthread_cond_broadcast(&ex->cv);
}

static void
fail(ooc_exec *ex, int rc, const ooc_err *e)
{
  pthread_mutex_lock(&ex->mu);
  fail_locked(ex, rc, e);
  pthread_mutex_unlock(&ex->mu);
}

/* --- the allocator order -------------------------------------------------- */

/* Dry-run iteration k's order (see the file's header): OOC_OK when the
 * program can follow it (to its end, for an order cut short by an OOM). */
static int
check_order(ooc_exec *ex, int32_t k, uint8_t *fin, int32_t *pos,
            ooc_err *err)
{
  const ooc_program *p = ex->p;
  const int32_t *ord = ex->cfg.mem_order + ex->cfg.iter_first[k];
  int32_t n = ex->cfg.iter_first[k + 1] - ex->cfg.iter_first[k];
  int32_t next = 0, i, j, left = 0;
  int s, moved;

  for (i = 0; i < p->n_instr; i++) {
    fin[i] = i < p->prologue_end;
    ex->turn[i] = -1;
  }
  for (j = 0; j < n; j++) {
    i = ord[j];
    if (i < p->prologue_end || i >= p->n_instr || !is_mem(&p->instr[i]) ||
        ex->turn[i] >= 0)
      return ooc_err_set(err, OOC_EINVAL,
                         "executor: allocator order of iteration %d, entry "
                         "%d: instruction %d is %s", k, j, i,
                         i < p->prologue_end || i >= p->n_instr
                             ? "not in the timed part"
                         : !is_mem(&p->instr[i])
                             ? "not a device ALLOC or FREE"
                             : "listed twice");
    ex->turn[i] = j;
  }
  if (n < ex->n_mem_instr &&
      (k + 1 < ex->cfg.n_iter || n == 0 ||
       p->instr[ord[n - 1]].kind != OOC_I_ALLOC))
    return ooc_err_set(err, OOC_EINVAL,
                       "executor: allocator order of iteration %d lists %d "
                       "of the %d device ALLOC/FREE instructions (only the "
                       "last iteration's may stop early, at the ALLOC that "
                       "ran out of memory)", k, n, ex->n_mem_instr);
  for (s = 0; s < OOC_NSTREAMS; s++) {
    pos[s] = 0;
    left += ex->count[s];
  }
  do {
    moved = 0;
    for (s = 0; s < OOC_NSTREAMS; s++) {
      while (pos[s] < ex->count[s]) {
        const ooc_instr *in;
        int32_t w, ok = 1;
        i = ex->order[ex->first[s] + pos[s]];
        in = &p->instr[i];
        for (w = 0; w < in->n_waits && ok; w++)
          ok = fin[p->waits[in->wait_first + w]];
        if (ok && is_mem(in))
          ok = ex->turn[i] == next;
        if (!ok)
          break;
        if (is_mem(in))
          next++;
        fin[i] = 1;
        pos[s]++;
        left--;
        moved = 1;
      }
    }
  } while (moved && left > 0);
  for (i = 0; i < p->n_instr; i++)
    ex->turn[i] = -1;
  if (left == 0 || (n < ex->n_mem_instr && next == n))
    return OOC_OK;
  for (s = 0; s < OOC_NSTREAMS && pos[s] >= ex->count[s]; s++)
    ;
  i = ex->order[ex->first[s] + pos[s]];
  return ooc_err_set(err, OOC_EINVAL,
                     "executor: the allocator order of iteration %d is not "
                     "one this program can follow: after %d of its "
                     "requests, no stream can go on (instruction %d, %s on "
                     "stream %d, waits for an instruction or a turn that "
                     "never comes)", k, next, i,
                     ooc_instr_kind_name((ooc_instr_kind)p->instr[i].kind),
                     s);
}

/* Give iteration `it` its turns (executor iteration j follows the
 * simulator's min(j, n_iter - 1)). */
static void
set_turns(ooc_exec *ex, int it)
{
  int32_t k, j, n;
  const int32_t *ord;

  if (!ex->ordered)
    return;
  for (j = 0; j < ex->p->n_instr; j++)
    ex->turn[j] = -1;
  k = it < ex->cfg.n_iter ? it : ex->cfg.n_iter - 1;
  ord = ex->cfg.mem_order + ex->cfg.iter_first[k];
  n = ex->cfg.iter_first[k + 1] - ex->cfg.iter_first[k];
  for (j = 0; j < n; j++)
    ex->turn[ord[j]] = j;
  ex->mem_n = n;
  ex->mem_next = 0;
}

/* --- ALLOC and FREE ------------------------------------------------------- */

static int64_t
rel_now(const ooc_exec *ex)
{
  return now_ns() - ex->t0;
}

static void
sample_memory(ooc_exec *ex)
{
  if (ex->n_mem < ex->cap_mem)
    ex->mem[ex->n_mem++] = (ooc_mem_sample){
      .t_ns = rel_now(ex), .allocated = ex->allocated,
      .reserved = ex->arena.reserved,
    };
}

/* ALLOC or FREE i (checked). With the lock held, or alone (prologue).
 * Sets ex->oom on out of memory. */
static int
mem_instr(ooc_exec *ex, int32_t i, int prologue, ooc_err *err)
{
  const ooc_program *p = ex->p;
  const ooc_instr *in = &p->instr[i];
  int32_t t = in->tensor;
  uint64_t bytes = p->tensors[t].bytes;
  ooc_drv_sink sink = ooc_exec_arena_sink(&ex->arena);
  int64_t when = prologue ? 0 : rel_now(ex);
  int rc;

  ex->arena.err = err;
  if (in->where == OOC_WHERE_HOST) {
    const ooc_hw *hw = ex->cfg.hw;
    int pin = 0;
    /* An offloaded layer's optimizer state is ordinary memory: only the
     * CPU touches it (ooc_program_host_pinned, the simulator's rule too).
     * Every other host buffer is the backend's pinned one. */
    int plain = !ooc_program_host_pinned(p, t);
    if (in->kind == OOC_I_FREE) {
      if (ex->pinned[t] == PIN_PLAIN)
        free(ex->host[t]);
      else
        ex->b->host_free(ex->bstate, ex->host[t], bytes, ex->pinned[t]);
      ex->host[t] = NULL;
      ex->host_bytes -= bytes;
      if (!plain)
        ex->host_pinned_bytes -= bytes;
      return OOC_OK;
    }
    if (hw != NULL && hw->host_mem > 0 &&
        bytes > hw->host_mem - ex->host_bytes) {
      ooc_alloc_oom_host_kind(ex->at, ex->astate, p, i, when,
                              plain ? "host memory" : "pinned host memory",
                              ex->host_bytes, hw->host_mem, &ex->oom_rep);
      ex->oom = 1;
      return OOC_OK;
    }
    if (!plain && hw != NULL && hw->host_pinned_max > 0 &&
        bytes > hw->host_pinned_max - ex->host_pinned_bytes) {
      ooc_alloc_oom_host_kind(ex->at, ex->astate, p, i, when,
                              "pinned host memory", ex->host_pinned_bytes,
                              hw->host_pinned_max, &ex->oom_rep);
      ex->oom = 1;
      return OOC_OK;
    }
    if (plain) {
      if (posix_memalign(&ex->host[t], 64, bytes > 0 ? bytes : 1) != 0) {
        ex->host[t] = NULL;
        return ooc_err_set(err, OOC_ENOMEM, "executor: out of host memory "
                           "for tensor %d (%llu bytes)", t,
                           (unsigned long long)bytes);
      }
      ex->pinned[t] = PIN_PLAIN;
    } else {
      rc = ex->b->host_alloc(ex->bstate, bytes, &ex->host[t], &pin, err);
      if (rc != OOC_OK)
        return rc;
      ex->pinned[t] = (uint8_t)pin;
      if (!pin)
        ex->host_unpinned += bytes;
      ex->host_pinned_bytes += bytes;
      if (ex->host_pinned_bytes > ex->peak_host)
        ex->peak_host = ex->host_pinned_bytes;
    }
    ex->host_bytes += bytes;
    return OOC_OK;
  }
  if (in->kind == OOC_I_ALLOC) {
    ooc_placement pl;
    rc = ex->at->alloc(ex->astate, t, bytes, &pl, &sink);
    if (rc == OOC_EOOM) {
      ooc_alloc_oom(ex->at, ex->astate, p, i, when, &ex->oom_rep);
      ex->oom = 1;
      return OOC_OK;
    }
    if (rc != OOC_OK)
      return err->code == rc ? rc
                             : ooc_err_set(err, rc, "executor: allocator "
                                           "'%s' failed (%s)", ex->at->name,
                                           ooc_strerror(rc));
    ex->ptr[t] = NULL;
    if (pl.seg >= 0 && (ex->ptr[t] = ooc_exec_arena_ptr(&ex->arena, &pl,
                                                        err)) == NULL)
      return OOC_EINVAL;
    ex->place[i] = pl;
    ex->placed[i] = 1;
    ex->allocated += bytes;
    if (ex->allocated > ex->peak_allocated)
      ex->peak_allocated = ex->allocated;
  } else {
    rc = ex->at->free(ex->astate, t, &sink);
    if (rc != OOC_OK)
      return err->code == rc ? rc
                             : ooc_err_set(err, rc, "executor: allocator "
                                           "'%s' failed (%s)", ex->at->name,
                                           ooc_strerror(rc));
    ex->ptr[t] = NULL;
    ex->allocated -= bytes;
  }
  if (!prologue)
    sample_memory(ex);
  return OOC_OK;
}

/* --- verification --------------------------------------------------------- */

static int
hash_dev(ooc_exec *ex, const void *dev, uint64_t bytes, uint64_t *h,
         ooc_err *err)
{
  void *tmp;
  int rc;

  if (ex->b->host_visible) {
    *h = ooc_hash64(dev, bytes, OOC_HASH_SEED);
    return OOC_OK;
  }
  if ((tmp = malloc(bytes ? bytes : 1)) == NULL)
    return ooc_err_set(err, OOC_ENOMEM, "executor: out of memory");
  rc = ex->b->download(ex->bstate, tmp, dev, bytes, err);
  if (rc == OOC_OK)
    *h = ooc_hash64(tmp, bytes, OOC_HASH_SEED);
  free(tmp);
  return rc;
}

/* Checksum tensor t after copy i: at a swap-out the device data (and the
 * host copy against it), after a swap-in the device data against what
 * was swapped out (or, never swapped out, the host buffer). */
static int
verify(ooc_exec *ex, int32_t i, ooc_err *err)
{
  const ooc_instr *in = &ex->p->instr[i];
  int32_t t = in->tensor;
  uint64_t bytes = ex->p->tensors[t].bytes, hd = 0, hh, want;
  int rc, bad;
  char what[160];

  if ((rc = hash_dev(ex, ex->ptr[t], bytes, &hd, err)) != OOC_OK)
    return rc;
  hh = ooc_hash64(ex->host[t], bytes, OOC_HASH_SEED);
  pthread_mutex_lock(&ex->mu);
  if (in->kind == OOC_I_D2H) {
    ex->swap_hash[t] = hd;
    ex->swap_hashed[t] = 1;
    bad = hh != hd;
    snprintf(what, sizeof what, "swap-out (instruction %d) of tensor %d "
             "(layer %d): host copy %016llx, device %016llx", i, t,
             in->layer, (unsigned long long)hh, (unsigned long long)hd);
  } else {
    want = ex->swap_hashed[t] ? ex->swap_hash[t] : hh;
    bad = hd != want;
    snprintf(what, sizeof what, "swap-in (instruction %d) of tensor %d "
             "(layer %d): device %016llx, swapped out %016llx", i, t,
             in->layer, (unsigned long long)hd, (unsigned long long)want);
  }
  ex->verify_checked++;
  if (bad && ex->verify_mismatches++ == 0)
    snprintf(ex->verify_first, sizeof ex->verify_first, "%s", what);
  pthread_mutex_unlock(&ex->mu);
  return OOC_OK;
}

/* --- the stream threads --------------------------------------------------- */

static int
done_locked(const ooc_exec *ex, int32_t w)
{
  return w < ex->p->prologue_end || ex->done[w] == ex->stamp;
}

/* Instruction i completed at [s, e): publish it (lock held). */
static void
complete_locked(ooc_exec *ex, int32_t i, int64_t s, int64_t e)
{
  ooc_sem_finish(&ex->sem, i);
  ex->start[i] = s;
  ex->end[i] = e;
  ex->done[i] = ex->stamp;
  ex->spans[ex->n_spans++] = i;
  pthread_cond_broadcast(&ex->cv);
}

/* Wait until i may start: its waits done and, for a device ALLOC/FREE, its
 * turn. Returns 0 to go on, 1 when the run is aborted. Lock held. */
static int
wait_start_locked(ooc_exec *ex, int32_t i)
{
  const ooc_program *p = ex->p;
  const ooc_instr *in = &p->instr[i];
  int32_t w;
  ooc_err e;

  for (w = 0; w < in->n_waits; w++)
    while (!ex->abort && !done_locked(ex, p->waits[in->wait_first + w]))
      pthread_cond_wait(&ex->cv, &ex->mu);
  if (ex->ordered && is_mem(in))
    for (;;) {
      if (ex->abort)
        break;
      if (ex->turn[i] >= 0 && ex->turn[i] == ex->mem_next)
        break;
      if (ex->turn[i] < 0 && ex->mem_next >= ex->mem_n) {
        ooc_err_set(&e, OOC_EINVAL,
                    "executor: the allocator order of iteration %d ends "
                    "before instruction %d (%s of tensor %d)", ex->iteration,
                    i, ooc_instr_kind_name((ooc_instr_kind)in->kind),
                    in->tensor);
        fail_locked(ex, OOC_EINVAL, &e);
        break;
      }
      pthread_cond_wait(&ex->cv, &ex->mu);
    }
  return ex->abort;
}

/* The host copies HOST instruction i steps: the layer's weights (w), their
 * gradients (g) and its optimizer state (o, NULL when it has none). */
static void
host_args(const ooc_exec *ex, int32_t i, float **w, float **g, float **o)
{
  const ooc_program *p = ex->p;
  const ooc_instr *in = &p->instr[i];
  int32_t k;

  *w = *g = *o = NULL;
  for (k = 0; k < in->n_args; k++) {
    int32_t t = OOC_ARG_TENSOR(p->args[in->arg_first + k]);
    switch (p->tensors[t].kind) {
    case OOC_T_PARAM: *w = ex->host[t]; break;
    case OOC_T_WGRAD: *g = ex->host[t]; break;
    case OOC_T_OPTSTATE: *o = ex->host[t]; break;
    default: break;
    }
  }
}

/* A HOST instruction: the optimizer step of an offloaded layer on the
 * host copies of its weights, gradients and state (docs/offload.md), on
 * this (the host stream's) thread, whatever the backend: its host
 * buffers are host memory. ooc_program_check_host_step() vouched for
 * the args, and the semantics for the buffers being there. */
static void
host_step(ooc_exec *ex, int32_t i)
{
  float *w, *g, *o;
  int64_t n = (int64_t)(ex->m->layers[ex->p->instr[i].layer].param_bytes /
                        sizeof(float));

  host_args(ex, i, &w, &g, &o);
  ooc_exec_optimizer_step(ex->m->optimizer, w, g, o, n, ex->iteration);
}

static void
run_stream(ooc_exec *ex, int s)
{
  const ooc_program *p = ex->p;
  int32_t pos, i;
  ooc_err e;
  int rc;

  ooc_err_clear(&e);
  for (pos = ex->first[s]; pos < ex->first[s] + ex->count[s]; pos++) {
    const ooc_instr *in;
    int64_t t_start, t_end;
    i = ex->order[pos];
    in = &p->instr[i];
    pthread_mutex_lock(&ex->mu);
    if (wait_start_locked(ex, i)) {
      pthread_mutex_unlock(&ex->mu);
      return;
    }
    if ((rc = ooc_sem_check(&ex->sem, i, &e)) != OOC_OK) {
      fail_locked(ex, rc, &e);
      pthread_mutex_unlock(&ex->mu);
      return;
    }
    ooc_sem_start(&ex->sem, i);
    if (in->kind == OOC_I_ALLOC || in->kind == OOC_I_FREE) {
      t_start = rel_now(ex);
      rc = mem_instr(ex, i, 0, &e);
      t_end = rel_now(ex);
      if (rc != OOC_OK || ex->oom) {
        fail_locked(ex, rc, &e);
        pthread_mutex_unlock(&ex->mu);
        return;
      }
      if (ex->ordered && is_mem(in))
        ex->mem_next++;
      complete_locked(ex, i, t_start, t_end);
      pthread_mutex_unlock(&ex->mu);
      continue;
    }
    pthread_mutex_unlock(&ex->mu);
    t_start = rel_now(ex);
    if (in->kind == OOC_I_COMPUTE) {
      const ooc_kernel *k = &ex->ks.k[ex->ks.of_instr[i]];
      rc = k->skip ? OOC_OK
                   : ex->b->compute(ex->bstate, k, ex->ptr, ex->iteration,
                                    &e);
    } else if (in->kind == OOC_I_HOST) {
      host_step(ex, i);
      rc = OOC_OK;
    } else {
      int32_t t = in->tensor;
      int h2d = in->kind == OOC_I_H2D;
      rc = ex->b->copy(ex->bstate, s, h2d ? ex->ptr[t] : ex->host[t],
                       h2d ? ex->host[t] : ex->ptr[t], p->tensors[t].bytes,
                       &e);
    }
    t_end = rel_now(ex);
    if (rc == OOC_OK && ex->cfg.verify &&
        (in->kind == OOC_I_H2D || in->kind == OOC_I_D2H))
      rc = verify(ex, i, &e);
    pthread_mutex_lock(&ex->mu);
    if (rc != OOC_OK) {
      fail_locked(ex, rc, &e);
      pthread_mutex_unlock(&ex->mu);
      return;
    }
    complete_locked(ex, i, t_start, t_end);
    pthread_mutex_unlock(&ex->mu);
  }
}

/* Build every kernel (compute thread, before timing). */
static void
prepare_all(ooc_exec *ex)
{
  int32_t n;
  ooc_err e;
  int rc;

  ooc_err_clear(&e);
  for (n = 0; n < ex->ks.n; n++) {
    const ooc_kernel *k = &ex->ks.k[n];
    if (k->skip)
      continue;
    if ((rc = ex->b->prepare(ex->bstate, k, &e)) != OOC_OK) {
      if (ex->cfg.refused != NULL && rc == OOC_EINVAL) {
        ex->cfg.refused[k->instr] = 1;
        ex->ks.k[n].skip = 1;
        ooc_err_clear(&e);
        continue;
      }
      fail(ex, rc, &e);
      return;
    }
  }
}

static void *
worker_main(void *arg)
{
  struct worker *w = arg;
  ooc_exec *ex = w->ex;
  unsigned seen = 0;
  int started = 0, job, aborted, rc;
  ooc_err e;

  ooc_err_clear(&e);
  pthread_mutex_lock(&ex->mu);
  for (;;) {
    while (ex->gen == seen && !ex->quit)
      pthread_cond_wait(&ex->cv, &ex->mu);
    if (ex->quit)
      break;
    seen = ex->gen;
    job = ex->job;
    aborted = ex->abort;
    pthread_mutex_unlock(&ex->mu);
    rc = OOC_OK;
    if (!started) {
      started = 1;
      if (ex->b->thread_start != NULL &&
          (rc = ex->b->thread_start(ex->bstate, w->stream, &e)) != OOC_OK)
        fail(ex, rc, &e);
    }
    if (rc == OOC_OK && job == JOB_PREPARE && w->stream == OOC_STREAM_COMPUTE)
      prepare_all(ex);
    else if (rc == OOC_OK && job == JOB_ITERATE && !aborted)
      run_stream(ex, w->stream);
    pthread_mutex_lock(&ex->mu);
    ex->finished++;
    pthread_cond_broadcast(&ex->cv);
  }
  pthread_mutex_unlock(&ex->mu);
  return NULL;
}

/* Give the threads a job and wait for all of them. */
static void
run_job(ooc_exec *ex, int job)
{
  pthread_mutex_lock(&ex->mu);
  ex->job = job;
  ex->finished = 0;
  if (job == JOB_ITERATE) {
    ex->stamp++;
    ex->n_spans = 0;
    ex->n_mem = 0;
    ex->t0 = now_ns();
    sample_memory(ex);
  }
  ex->gen++;
  pthread_cond_broadcast(&ex->cv);
  while (ex->finished < ex->n_threads)
    pthread_cond_wait(&ex->cv, &ex->mu);
  pthread_mutex_unlock(&ex->mu);
}

/* --- setup and teardown --------------------------------------------------- */

void
ooc_exec_free(ooc_exec *ex)
{
  int32_t t, s;

  if (ex == NULL)
    return;
  if (ex->n_threads > 0) {
    pthread_mutex_lock(&ex->mu);
    ex->quit = 1;
    pthread_cond_broadcast(&ex->cv);
    pthread_mutex_unlock(&ex->mu);
    for (s = 0; s < ex->n_threads; s++)
      pthread_join(ex->th[s], NULL);
  }
  if (ex->host != NULL && ex->bopen)
    for (t = 0; t < ex->p->n_tensors; t++) {
      if (ex->host[t] == NULL)
        continue;
      if (ex->pinned[t] == PIN_PLAIN)
        free(ex->host[t]);
      else
        ex->b->host_free(ex->bstate, ex->host[t], ex->p->tensors[t].bytes,
                         ex->pinned[t]);
    }
  ooc_exec_arena_fini(&ex->arena);
  if (ex->aopen)
    ex->at->fini(ex->astate);
  free(ex->astate);
  if (ex->bopen)
    ex->b->destroy(ex->bstate);
  free(ex->bstate);
  ooc_kernels_free(&ex->ks);
  ooc_sem_fini(&ex->sem);
  if (ex->sync_init) {
    pthread_mutex_destroy(&ex->mu);
    pthread_cond_destroy(&ex->cv);
  }
  free(ex->ptr);
  free(ex->host);
  free(ex->pinned);
  free(ex->swap_hash);
  free(ex->swap_hashed);
  free(ex->start);
  free(ex->end);
  free(ex->done);
  free(ex->turn);
  free(ex->place);
  free(ex->placed);
  free(ex->order);
  free(ex->spans);
  free(ex->mem);
  free(ex);
}

static int
check_config(const ooc_exec_config *c, ooc_err *err)
{
  if (c->backend == NULL || c->model == NULL || c->program == NULL ||
      c->allocator == NULL)
    return ooc_err_set(err, OOC_EINVAL, "executor: the configuration needs "
                       "a backend, a model, a program and an allocator");
  if (c->program->model_fingerprint != c->model->fingerprint)
    return ooc_err_set(err, OOC_EINVAL,
                       "executor: the program was built for another model "
                       "than '%s' (fingerprint %016llx, model %016llx)",
                       c->model->name ? c->model->name : "?",
                       (unsigned long long)c->program->model_fingerprint,
                       (unsigned long long)c->model->fingerprint);
  if (c->model->dtype != OOC_FP32)
    return ooc_err_set(err, OOC_EINVAL,
                       "executor: model '%s' is %s; the executor runs fp32 "
                       "models only", c->model->name ? c->model->name : "?",
                       ooc_dtype_name(c->model->dtype));
  if (c->warmup < 0 || c->iterations < 0)
    return ooc_err_set(err, OOC_EINVAL, "executor: warm-up %d and "
                       "iterations %d must not be negative", c->warmup,
                       c->iterations);
  if (c->threads < 0 || !(c->link_GBps >= 0))
    return ooc_err_set(err, OOC_EINVAL, "executor: threads %d and link "
                       "rate %g must not be negative", c->threads,
                       c->link_GBps);
  if (c->mem_order != NULL && (c->iter_first == NULL || c->n_iter < 1))
    return ooc_err_set(err, OOC_EINVAL, "executor: an allocator order needs "
                       "its iterations (iter_first, n_iter >= 1)");
  if (c->budget == 0 && (c->hw == NULL || c->hw->mem_usable == 0))
    return ooc_err_set(err, OOC_EINVAL, "executor: no budget (give one, or "
                       "a profile with device memory)");
  return OOC_OK;
}

#define NEW(ptr, n)                                                          \
  do {                                                                       \
    if (((ptr) = calloc((size_t)(n) + 1, sizeof *(ptr))) == NULL)            \
      goto nomem;                                                            \
  } while (0)

int
ooc_exec_alloc(const ooc_exec_config *cfg, ooc_exec **out, ooc_err *err)
{
  ooc_exec *ex;
  const ooc_program *p;
  ooc_alloc_config ac;
  ooc_exec_env env;
  int32_t i, k, s, *pos = NULL;
  uint8_t *fin = NULL;
  int rc;

  *out = NULL;
  if ((rc = check_config(cfg, err)) != OOC_OK)
    return rc;
  if ((rc = ooc_exec_backend_probe(cfg->backend, err)) != OOC_OK)
    return rc;
  if ((rc = ooc_program_validate(cfg->program, err)) != OOC_OK)
    return rc;
  if ((ex = calloc(1, sizeof *ex)) == NULL)
    return ooc_err_set(err, OOC_ENOMEM, "executor: out of memory");
  ex->cfg = *cfg;
  if (ex->cfg.iterations == 0)
    ex->cfg.iterations = 3;
  if (ex->cfg.budget == 0)
    ex->cfg.budget = cfg->hw->mem_usable;
  ex->m = cfg->model;
  ex->p = p = cfg->program;
  ex->b = cfg->backend;
  ex->at = cfg->allocator;
  ex->ordered = cfg->mem_order != NULL;
  ooc_sem_init(&ex->sem);

  for (i = 0; i < p->prologue_end; i++)
    if (p->instr[i].kind != OOC_I_ALLOC && p->instr[i].kind != OOC_I_FREE) {
      rc = ooc_err_set(err, OOC_EINVAL,
                       "executor: prologue instruction %d is a %s; the "
                       "executor runs only ALLOC and FREE there", i,
                       ooc_instr_kind_name((ooc_instr_kind)p->instr[i].kind));
      goto fail;
    }
  for (i = p->prologue_end; i < p->n_instr; i++)
    if (p->instr[i].kind == OOC_I_HOST &&
        (rc = ooc_program_check_host_step(ex->m, p, i, err)) != OOC_OK)
      goto fail;
  if ((rc = ooc_kernels_build(&ex->ks, ex->m, p, err)) != OOC_OK)
    goto fail;
  if (ooc_sem_reset(&ex->sem, p) != OOC_OK)
    goto nomem;
  NEW(ex->ptr, p->n_tensors);
  NEW(ex->host, p->n_tensors);
  NEW(ex->pinned, p->n_tensors);
  NEW(ex->swap_hash, p->n_tensors);
  NEW(ex->swap_hashed, p->n_tensors);
  NEW(ex->start, p->n_instr);
  NEW(ex->end, p->n_instr);
  NEW(ex->done, p->n_instr);
  NEW(ex->turn, p->n_instr);
  NEW(ex->place, p->n_instr);
  NEW(ex->placed, p->n_instr);
  NEW(ex->order, p->n_instr);
  NEW(ex->spans, p->n_instr);
  NEW(fin, p->n_instr);
  NEW(pos, OOC_NSTREAMS);

  /* Timed instructions grouped by stream, in index order. */
  for (i = p->prologue_end; i < p->n_instr; i++) {
    ex->count[p->instr[i].stream]++;
    if (is_mem(&p->instr[i]))
      ex->n_mem_instr++;
  }
  for (s = 1; s < OOC_NSTREAMS; s++)
    ex->first[s] = ex->first[s - 1] + ex->count[s - 1];
  for (s = 0; s < OOC_NSTREAMS; s++)
    pos[s] = ex->first[s];
  for (i = p->prologue_end; i < p->n_instr; i++)
    ex->order[pos[p->instr[i].stream]++] = i;
  ex->cap_mem = ex->n_mem_instr + 2;
  NEW(ex->mem, ex->cap_mem);
  for (i = 0; i < p->n_instr; i++)
    ex->turn[i] = -1;
  if (ex->ordered)
    for (k = 0; k < cfg->n_iter; k++)
      if ((rc = check_order(ex, k, fin, pos, err)) != OOC_OK)
        goto fail;
  free(fin);
  free(pos);
  fin = NULL;
  pos = NULL;

  /* The allocator policy, as the simulator configures it. */
  ac = (ooc_alloc_config){ .budget = ex->cfg.budget,
                           .n_handles = p->n_tensors,
                           .chunk_bytes = cfg->chunk_bytes, .hw = cfg->hw,
                           .options = cfg->allocator_options };
  if ((ex->astate = calloc(1, ex->at->state_size + 1)) == NULL)
    goto nomem;
  if ((rc = ex->at->init(ex->astate, &ac, err)) != OOC_OK)
    goto fail;
  ex->aopen = 1;

  /* The backend and the threads; kernels are built on the compute thread. */
  if ((ex->bstate = calloc(1, ex->b->state_size + 1)) == NULL)
    goto nomem;
  env = (ooc_exec_env){ .model = ex->m, .program = p,
                        .threads = cfg->threads,
                        .link_GBps = cfg->link_GBps, .seed = cfg->seed };
  if ((rc = ex->b->create(ex->bstate, &env, err)) != OOC_OK)
    goto fail;
  ex->bopen = 1;
  ooc_exec_arena_init(&ex->arena, ex->b, ex->bstate);
  if (pthread_mutex_init(&ex->mu, NULL) != 0)
    goto nomem;
  if (pthread_cond_init(&ex->cv, NULL) != 0) {
    pthread_mutex_destroy(&ex->mu);
    goto nomem;
  }
  ex->sync_init = 1;
  for (s = 0; s < OOC_NSTREAMS; s++) {
    ex->w[s] = (struct worker){ .ex = ex, .stream = s };
    if (pthread_create(&ex->th[s], NULL, worker_main, &ex->w[s]) != 0) {
      rc = ooc_err_set(err, OOC_ENOMEM, "executor: cannot start the %d "
                       "stream threads (%s)", OOC_NSTREAMS, strerror(errno));
      goto fail;
    }
    ex->n_threads++;
  }
  run_job(ex, JOB_PREPARE);
  if (ex->abort) {
    rc = ex->rc;
    if (err != NULL)
      *err = ex->err;
    goto fail;
  }
  *out = ex;
  return OOC_OK;
nomem:
  rc = ooc_err_set(err, OOC_ENOMEM, "executor: out of memory");
fail:
  free(fin);
  free(pos);
  ooc_exec_free(ex);
  return rc;
}

/* --- a run ---------------------------------------------------------------- */

/* The prologue, once, in index order, untimed: parameters and the input
 * batch get their data; host buffers start zeroed (their copy counts as
 * valid). */
static int
run_prologue(ooc_exec *ex, ooc_err *err)
{
  const ooc_program *p = ex->p;
  int32_t i;
  int rc;

  for (i = 0; i < p->prologue_end; i++) {
    const ooc_instr *in = &p->instr[i];
    int32_t t = in->tensor;
    uint64_t bytes = p->tensors[t].bytes;
    if ((rc = ooc_sem_check(&ex->sem, i, err)) != OOC_OK)
      return rc;
    if ((rc = mem_instr(ex, i, 1, err)) != OOC_OK || ex->oom)
      return rc;
    if (in->kind == OOC_I_ALLOC && bytes > 0) {
      if (in->where == OOC_WHERE_HOST) {
        /* The host copy of an offloaded layer's weights holds them (the
         * master the CPU step updates); every other starts zeroed. */
        if (p->tensors[t].kind == OOC_T_PARAM)
          ooc_exec_data_fill(ex->m, p, t, ex->cfg.seed, ex->host[t]);
        else
          memset(ex->host[t], 0, bytes);
      } else {
        void *buf = malloc(bytes);
        if (buf == NULL)
          return ooc_err_set(err, OOC_ENOMEM, "executor: out of memory");
        ooc_exec_data_fill(ex->m, p, t, ex->cfg.seed, buf);
        rc = ex->b->upload(ex->bstate, ex->ptr[t], buf, bytes, err);
        free(buf);
        if (rc != OOC_OK)
          return rc;
      }
    }
    if ((rc = ooc_sem_prologue(&ex->sem, i, err)) != OOC_OK)
      return rc;
  }
  return OOC_OK;
}

static int
cmp_i64(const void *a, const void *b)
{
  int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
  return (x > y) - (x < y);
}

/* The iteration just run: its makespan and per-stream figures. */
static int64_t
iteration_figures(ooc_exec *ex, ooc_exec_result *r)
{
  const ooc_program *p = ex->p;
  int32_t n, i;
  int64_t span = 0;

  r->compute_busy_ns = r->h2d_busy_ns = r->d2h_busy_ns = r->alloc_ns = 0;
  r->host_busy_ns = 0;
  r->h2d_bytes = r->d2h_bytes = 0;
  for (n = 0; n < ex->n_spans; n++) {
    const ooc_instr *in;
    int64_t d;
    i = ex->spans[n];
    in = &p->instr[i];
    d = ex->end[i] - ex->start[i];
    if (ex->end[i] > span)
      span = ex->end[i];
    switch (in->kind) {
    case OOC_I_COMPUTE: r->compute_busy_ns += d; break;
    case OOC_I_HOST: r->host_busy_ns += d; break;
    case OOC_I_H2D:
      r->h2d_busy_ns += d;
      r->h2d_bytes += p->tensors[in->tensor].bytes;
      break;
    case OOC_I_D2H:
      r->d2h_busy_ns += d;
      r->d2h_bytes += p->tensors[in->tensor].bytes;
      break;
    default: r->alloc_ns += d; break;
    }
  }
  return span;
}

static int
fill_trace(const ooc_exec *ex, ooc_trace *trace, ooc_err *err)
{
  int32_t n;

  if (ooc_trace_reserve(trace, ex->n_spans, ex->n_mem) != 0)
    return ooc_err_set(err, OOC_ENOMEM, "executor: out of memory");
  for (n = 0; n < ex->n_spans; n++) {
    int32_t i = ex->spans[n];
    trace->spans[n] = (ooc_span){ .instr = i, .start_ns = ex->start[i],
                                  .end_ns = ex->end[i] };
  }
  trace->n_spans = ex->n_spans;
  memcpy(trace->mem, ex->mem, (size_t)ex->n_mem * sizeof *ex->mem);
  trace->n_mem = ex->n_mem;
  return OOC_OK;
}

int
ooc_exec_run(ooc_exec *ex, ooc_exec_result *r, ooc_trace *trace,
             ooc_err *err)
{
  int total = ex->cfg.warmup + ex->cfg.iterations, it, n_timed = 0, rc;
  int64_t *times = NULL;
  ooc_exec_backend_info info;

  memset(r, 0, sizeof *r);
  r->feasible = 1;
  if (ex->ran)
    return ooc_err_set(err, OOC_EINVAL, "executor: a run was already made "
                       "with this executor");
  ex->ran = 1;
  if ((times = calloc((size_t)total + 1, sizeof *times)) == NULL)
    return ooc_err_set(err, OOC_ENOMEM, "executor: out of memory");
  rc = run_prologue(ex, err);
  if (rc != OOC_OK)
    goto out;
  for (it = 0; it < total && !ex->oom; it++) {
    int64_t span;
    set_turns(ex, it);
    ex->iteration = it;
    run_job(ex, JOB_ITERATE);
    if (ex->abort && !ex->oom) {
      rc = ex->rc;
      if (err != NULL)
        *err = ex->err;
      goto out;
    }
    if (!ex->oom && (rc = ex->b->sync(ex->bstate, err)) != OOC_OK)
      goto out;
    span = iteration_figures(ex, r);
    if (ex->oom)
      break;
    if (it >= ex->cfg.warmup)
      times[n_timed++] = span;
    else
      r->warmup++;
  }
  if (trace != NULL && total > 0 &&
      (rc = fill_trace(ex, trace, err)) != OOC_OK)
    goto out;
  r->iterations = n_timed;
  if (n_timed > 0) {
    qsort(times, (size_t)n_timed, sizeof *times, cmp_i64);
    r->iteration_ns = n_timed % 2 ? times[n_timed / 2]
                                  : (times[n_timed / 2 - 1] +
                                     times[n_timed / 2]) / 2;
    r->min_iteration_ns = times[0];
    r->max_iteration_ns = times[n_timed - 1];
  }
  rc = OOC_OK;
out:
  if (ex->oom) {
    r->feasible = 0;
    r->oom = ex->oom_rep;
    r->iteration_ns = r->min_iteration_ns = r->max_iteration_ns = 0;
  }
  r->peak_allocated = ex->peak_allocated;
  r->peak_reserved = ex->arena.peak_reserved;
  memcpy(r->drv_actions, ex->arena.actions, sizeof r->drv_actions);
  r->peak_host_pinned = ex->peak_host;
  r->host_unpinned_bytes = ex->host_unpinned;
  r->link_GBps = ex->cfg.link_GBps;
  r->verify_checked = ex->verify_checked;
  r->verify_mismatches = ex->verify_mismatches;
  snprintf(r->verify_first, sizeof r->verify_first, "%s", ex->verify_first);
  memset(&info, 0, sizeof info);
  ex->b->info(ex->bstate, &info);
  r->side_bytes = info.side_bytes;
  r->loss = info.loss;
  snprintf(r->note, sizeof r->note, "%s", info.note);
  free(times);
  return rc;
}

int
ooc_exec_read(const ooc_exec *ex, int32_t tensor, uint64_t offset,
              void *buf, uint64_t bytes, ooc_err *err)
{
  if (tensor < 0 || tensor >= ex->p->n_tensors || ex->ptr[tensor] == NULL ||
      offset > ex->p->tensors[tensor].bytes ||
      bytes > ex->p->tensors[tensor].bytes - offset)
    return ooc_err_set(err, OOC_EINVAL,
                       "executor: tensor %d is not allocated on the device, "
                       "or [%llu, +%llu) exceeds it", tensor,
                       (unsigned long long)offset, (unsigned long long)bytes);
  return ex->b->download(ex->bstate, buf, (char *)ex->ptr[tensor] + offset,
                         bytes, err);
}

int
ooc_exec_read_host(const ooc_exec *ex, int32_t tensor, uint64_t offset,
                   void *buf, uint64_t bytes, ooc_err *err)
{
  if (tensor < 0 || tensor >= ex->p->n_tensors || ex->host[tensor] == NULL ||
      offset > ex->p->tensors[tensor].bytes ||
      bytes > ex->p->tensors[tensor].bytes - offset)
    return ooc_err_set(err, OOC_EINVAL,
                       "executor: tensor %d has no host buffer, or [%llu, "
                       "+%llu) exceeds it", tensor,
                       (unsigned long long)offset, (unsigned long long)bytes);
  memcpy(buf, (char *)ex->host[tensor] + offset, bytes);
  return OOC_OK;
}

int
ooc_exec_placement(const ooc_exec *ex, int32_t instr, ooc_placement *where,
                   ooc_err *err)
{
  if (instr < 0 || instr >= ex->p->n_instr || !is_mem(&ex->p->instr[instr]) ||
      ex->p->instr[instr].kind != OOC_I_ALLOC || !ex->placed[instr])
    return ooc_err_set(err, OOC_EINVAL,
                       "executor: instruction %d is not a device ALLOC that "
                       "ran", instr);
  *where = ex->place[instr];
  return OOC_OK;
}
