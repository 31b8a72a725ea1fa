/* sim/engine.c — the discrete-event simulator (sim.h).
 *
 * One idea: three streams (compute, H2D, D2H) each run their instructions in
 * index order; an instruction starts when its stream is free and every
 * instruction it waits on has completed. Time advances from event to event
 * on a binary min-heap keyed by (ns, sequence) (heap.h). The dispatch loop
 * pops every event of the current instant, applies it, then lets the
 * streams start what they can, in order of their head instruction's index
 * (so the lower index wins a shared copy engine), and finally attributes
 * any idle time of the compute stream to a stall reason.
 *
 * Semantics: the tensor-state rules are ir/semantics.c's, the same the
 * executor and the validator use (ooc_sem_begin as an instruction
 * starts, _start and _finish around it). An ALLOC the allocator cannot
 * satisfy is out of memory at once: the run ends infeasible with an OOM
 * report. A schedule that needs room first waits for it explicitly (a wait
 * on the FREE of a swap-out, emitted by lowering), as a real framework
 * synchronises before it allocates.
 *
 * Copies: a latency phase (hw->copy_latency_ns, no bandwidth used), then a
 * fluid transfer at h2d_Bps / d2h_Bps alone, or duplex_h2d_Bps /
 * duplex_d2h_Bps each while an H2D and a D2H transfer overlap. When the set
 * of active transfers changes, the remaining bytes are brought up to date
 * and the completion rescheduled; a generation counter marks the old
 * completion event stale. Rounding: a transfer's completion is
 * ceil(remaining x 1e9 / rate) ns after the rate was last set, except that a
 * value within 0.001 ns of an integer is taken as that integer, so float
 * noise never adds a nanosecond. A copy alone thus takes exactly
 * latency + ceil(bytes x 1e9 / rate) ns.
 *
 * ALLOC/FREE call the allocator policy (alloc.h) when they start, and last
 * as long as the driver actions it sends cost (ooc_cost_drv_ns on the
 * profile; nothing for an .unpriced policy, which gets no sink). Host
 * ALLOC/FREE are counted against hw->host_mem (and, pinned, against
 * host.pinned_GiB when given) and cost
 * hw->host_alloc_ns.
 *
 * Iterations: the prologue runs once at t = 0 at no cost; then the timed
 * part runs `iterations` times back to back, each starting when the
 * previous one has fully drained (a device synchronise), with allocator and
 * tensor state carried over, and with max_iterations above that again, up
 * to it, until an iteration sends the policy's sink no action that takes
 * or gives back device memory (the steady state, sim.h; an .unpriced
 * policy has no sink and no hidden state). The last iteration's time,
 * busy and stall figures are reported; peaks cover the whole run. With a
 * detail recorder the last iteration's per-kernel and per-tensor figures
 * are kept too.
 *
 * Ownership: ooc_sim owns its arrays, the heap and the allocator state; it
 * borrows model, hw and costs. Cost: O((instructions + waits) log events)
 * per iteration; arrays are sized once per program size and reused.
 */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/util.h"
#include "ir/semantics.h"
#include "sim/heap.h"
#include "sim/sim.h"

/* The largest time the clock may reach (sim/cost.h). */
#define TIME_MAX OOC_TIME_MAX_NS

enum { EV_DONE = 0, EV_LAT, EV_WAKE, EV_XFER, EV_COMP }; /* event kinds */
enum { ST_IDLE = 0, ST_BUSY };                         /* stream states */
#define STALL_NONE (-1)

struct stream {
  int32_t first, n;     /* its instructions: order[first .. first + n) */
  int32_t pos;          /* next to start */
  int32_t wcur;         /* waits of the head already seen complete */
  int32_t wait_on;      /* the wait the head is stuck on, -1 none */
  int host_wait;        /* its waits are done but the host has not issued
                           it yet */
  int state;
  int32_t cur;          /* running instruction */
  int64_t start;
};

struct chan {           /* one direction of the link: 0 H2D, 1 D2H */
  int active;           /* in its transfer phase */
  double remaining;     /* bytes */
  double rate;          /* bytes/s */
  int64_t last;         /* when remaining was last brought up to date */
  uint32_t gen;
};

/* The running kernel when copies slow it (hw->interference > 0 for its
 * class): its completion moves whenever the number of copies in flight
 * changes, as a transfer's does when the link's sharing changes. */
struct comp {
  int active;           /* a kernel with interference is running */
  double remaining;     /* its work left, ns at full speed */
  double slow;          /* hw->interference of its class */
  double factor;        /* 1 + slow * copies in flight, now */
  int64_t nominal;      /* its duration without copies, ns */
  int64_t last;         /* when remaining was last brought up to date */
  uint32_t gen;
};

struct ooc_sim {
  uint64_t runs;              /* ooc_sim_run* calls (ooc_sim_runs) */
  const ooc_model *model;
  const ooc_hw *hw;
  const ooc_costs *costs;
  const ooc_allocator_type *at;
  uint64_t budget, chunk;
  int iterations, max_iterations;
  int shared_engine;            /* one copy engine for both directions */
  double alone[2], duplex[2];

  void *astate;
  int alloc_ready;
  int32_t alloc_handles;
  const char *alloc_options;    /* borrowed from the config */
  ooc_drv_sink drv;             /* prices the policy's driver actions */
  const ooc_drv_sink *drv_use;  /* &drv, or NULL when .unpriced */
  int64_t drv_ns;               /* what the current request's actions cost */
  int64_t iter_actions;         /* driver actions in this iteration that
                                   take or give back device memory */
  int final_iter;               /* no iteration can follow this one */
  int drv_sync;                 /* one of them synchronises the device */

  ooc_heap heap;
  int32_t cap_instr;
  int32_t *order;               /* timed instructions grouped by stream */
  uint32_t *done;               /* completion stamp per instruction */
  int64_t *issue_at;            /* host model: when each was issued */
  int64_t *end_at;              /* host model: when each completed */
  ooc_sem sem;                  /* tensor states (ir/semantics.h) */
  uint32_t stamp;

  /* One run. */
  const ooc_program *p;
  ooc_sim_result *r;
  ooc_trace *trace;
  ooc_sim_detail *detail;
  ooc_err *err;
  int last_iter;
  int oom;                      /* an ALLOC failed: the run ends */
  struct stream st[OOC_NSTREAMS];
  struct chan ch[2];
  struct comp comp;
  int any_interference;         /* some class has hw->interference > 0 */
  int engine_busy;
  int64_t now, t0;
  int stall;                    /* why the compute stream is idle */
  int32_t stall_on;             /* the instruction it waits for, -1 */
  int64_t stall_since;
  int64_t pend_stall[OOC_STALL_COUNT]; /* idle before the next kernel */
  int64_t host_pend;            /* host stall since the last compute span */
  uint64_t host_pinned;          /* pinned host bytes in use */
  uint64_t host_used;            /* all host bytes in use */
  uint64_t peak_res_alloc;      /* allocated when reserved peaked */

  /* The host (see the header comment): on when the profile has a host
   * cost; host_t is when the host is free to issue host_next. */
  int host_on;
  int64_t host_t;
  int32_t host_next;
  int32_t host_wj;              /* waits of host_next already seen done */
  int64_t host_ready;           /* the latest of their FREEs' ends, -1 */
  int32_t wake_for[OOC_NSTREAMS]; /* the head a wake-up is pending for */
  /* A device-synchronising ALLOC/FREE (cudaFree, an unmap): nothing else
   * starts while it runs, and it runs once the other streams drain. */
  int32_t barrier;              /* its instruction, -1 none */
  int barrier_stream, barrier_pending;
  int64_t barrier_cost;
  int host_unlimited;           /* ooc_sim_set_host_unlimited (last: keeps
                                   the hot fields where they were) */
  /* ooc_sim_run_cutoff: the last iteration stops once its time is certain
   * to exceed cutoff (0: none): when the compute stream cannot end before
   * max(now, comp_end) + rem_comp. */
  int64_t cutoff;
  int64_t rem_comp;             /* kernel time not started yet (last
                                   iteration) */
  int64_t comp_end;             /* the running kernel's end, at the
                                   earliest */
};

/* The driver sink: add what each action of the policy costs. */
static int
price_action(void *ctx, const ooc_drv_action *a)
{
  ooc_sim *s = ctx;
  int64_t t = ooc_cost_drv_ns(s->hw, a);

  s->iter_actions += a->kind == OOC_DRV_SEG_MALLOC ||
                     a->kind == OOC_DRV_SEG_FREE ||
                     a->kind == OOC_DRV_CHUNK_CREATE ||
                     a->kind == OOC_DRV_CHUNK_RELEASE;

  if ((a->kind == OOC_DRV_SEG_FREE && s->hw->free_syncs) ||
      (a->kind == OOC_DRV_CHUNK_UNMAP && s->hw->va_unmap_syncs))
    s->drv_sync = 1;

  /* Saturate: push() reports a request that would end past TIME_MAX. */
  s->drv_ns = t > TIME_MAX - s->drv_ns ? TIME_MAX + 1 : s->drv_ns + t;
  return OOC_OK;
}

const char *
ooc_stall_name(ooc_stall st)
{
  static const char *const names[OOC_STALL_COUNT] = {
    "swapin", "swapout", "other", "host",
  };
  return (unsigned)st < OOC_STALL_COUNT ? names[st] : "?";
}

int
ooc_sim_alloc(const ooc_sim_config *cfg, ooc_sim **out, ooc_err *err)
{
  ooc_sim *s;
  int d;

  *out = NULL;
  if (cfg == NULL || cfg->hw == NULL || cfg->costs == NULL ||
      cfg->allocator == NULL)
    return ooc_err_set(err, OOC_EINVAL,
                       "simulator: a profile, costs and an allocator are "
                       "required");
  if (cfg->hw->h2d_Bps <= 0 || cfg->hw->d2h_Bps <= 0)
    return ooc_err_set(err, OOC_EINVAL,
                       "simulator: profile '%s' has no positive link "
                       "bandwidth", ooc_hw_origin(cfg->hw));
  if (cfg->iterations < 0)
    return ooc_err_set(err, OOC_EINVAL, "simulator: iterations must be >= 1");
  if (cfg->max_iterations < 0 ||
      (cfg->max_iterations > 0 && cfg->max_iterations < cfg->iterations))
    return ooc_err_set(err, OOC_EINVAL, "simulator: max_iterations must be "
                       ">= iterations (0: the default)");
  s = calloc(1, sizeof *s);
  if (s == NULL)
    return ooc_err_set(err, OOC_ENOMEM, "simulator: out of memory");
  s->model = cfg->model;
  s->hw = cfg->hw;
  s->costs = cfg->costs;
  s->at = cfg->allocator;
  s->alloc_options = cfg->allocator_options;
  s->drv = (ooc_drv_sink){ .act = price_action, .ctx = s };
  s->drv_use = s->at->unpriced ? NULL : &s->drv;
  s->budget = cfg->budget ? cfg->budget : cfg->hw->mem_usable;
  s->chunk = cfg->chunk_bytes;
  s->iterations = cfg->iterations > 0 ? cfg->iterations : 2;
  s->max_iterations = cfg->max_iterations > s->iterations
                          ? cfg->max_iterations : s->iterations;
  s->shared_engine = cfg->hw->copy_engines < 2;
  s->alone[0] = cfg->hw->h2d_Bps;
  s->alone[1] = cfg->hw->d2h_Bps;
  s->duplex[0] = cfg->hw->duplex_h2d_Bps;
  s->duplex[1] = cfg->hw->duplex_d2h_Bps;
  for (d = 0; d < 2; d++)
    if (s->duplex[d] <= 0)
      s->duplex[d] = s->alone[d];
  s->stamp = 1;
  ooc_heap_init(&s->heap);
  ooc_sem_init(&s->sem);
  s->astate = calloc(1, s->at->state_size ? s->at->state_size : 1);
  if (s->astate == NULL || ooc_heap_reserve(&s->heap, 64) != OOC_OK) {
    ooc_sim_free(s);
    return ooc_err_set(err, OOC_ENOMEM, "simulator: out of memory");
  }
  *out = s;
  return OOC_OK;
}

int
ooc_sim_clone(const ooc_sim *s, ooc_sim **out, ooc_err *err)
{
  ooc_sim_config cfg = {
    .model = s->model, .hw = s->hw, .costs = s->costs, .allocator = s->at,
    .allocator_options = s->alloc_options, .budget = s->budget,
    .chunk_bytes = s->chunk, .iterations = s->iterations,
    .max_iterations = s->max_iterations,
  };

  return ooc_sim_alloc(&cfg, out, err);
}

void
ooc_sim_free(ooc_sim *s)
{
  if (s == NULL)
    return;
  if (s->alloc_ready)
    s->at->fini(s->astate);
  free(s->astate);
  ooc_heap_fini(&s->heap);
  free(s->order);
  free(s->done);
  free(s->issue_at);
  free(s->end_at);
  ooc_sem_fini(&s->sem);
  free(s);
}

/* Size the per-program arrays and the allocator for p (grow only). */
static int
prepare(ooc_sim *s, const ooc_program *p)
{
  if (p->n_instr > s->cap_instr) {
    int32_t cap = p->n_instr;
    int32_t *order = realloc(s->order, (size_t)cap * sizeof *order);
    uint32_t *done;

    if (order == NULL)
      return OOC_ENOMEM;
    s->order = order;
    done = realloc(s->done, (size_t)cap * sizeof *done);
    if (done == NULL)
      return OOC_ENOMEM;
    s->done = done;
    memset(s->done, 0, (size_t)cap * sizeof *done);
    for (int a = 0; a < 2; a++) {
      int64_t **arr = a ? &s->end_at : &s->issue_at;
      int64_t *q = realloc(*arr, (size_t)cap * sizeof *q);
      if (q == NULL)
        return OOC_ENOMEM;
      *arr = q;
    }
    s->cap_instr = cap;
  }
  if (ooc_sem_reset(&s->sem, p) != OOC_OK)
    return OOC_ENOMEM;
  if (s->alloc_ready && p->n_tensors > s->alloc_handles) {
    s->at->fini(s->astate);
    s->alloc_ready = 0;
  }
  if (!s->alloc_ready) {
    ooc_alloc_config ac = {
      .budget = s->budget, .n_handles = s->sem.cap,
      .chunk_bytes = s->chunk, .hw = s->hw, .options = s->alloc_options,
    };
    int rc = s->at->init(s->astate, &ac, s->err);
    if (rc != OOC_OK)
      return rc;
    s->alloc_ready = 1;
    s->alloc_handles = s->sem.cap;
  } else {
    s->at->reset(s->astate);
  }
  return OOC_OK;
}

/* Nanoseconds to move `bytes` at `rate` bytes/s (see the header comment). */
static int64_t
xfer_ns(double bytes, double rate)
{
  double x = bytes * 1e9 / rate;
  double rx = nearbyint(x);

  if (x <= 0)
    return 0;
  if (!(x < (double)TIME_MAX))
    return INT64_MAX;           /* push() reports the overflow */
  return (int64_t)(fabs(x - rx) < 1e-3 ? rx : ceil(x));
}

int64_t
ooc_sim_instr_ns(const ooc_sim *s, const ooc_program *p, int32_t i)
{
  const ooc_instr *in = &p->instr[i];

  switch (in->kind) {
  case OOC_I_HOST:
    return in->layer >= 0 && in->layer < s->costs->n_layers &&
                   s->costs->host_opt_ns[in->layer] > 0
               ? s->costs->host_opt_ns[in->layer] : 0;
  case OOC_I_COMPUTE:
    if (in->phase == OOC_PH_UPDATE)
      return ooc_costs_update_ns(s->costs, s->hw, p, in);
    if (in->layer < 0 || in->layer >= s->costs->n_layers)
      return 0;
    {
      int64_t t = ooc_costs_algo_ns(s->costs, in->layer, in->phase,
                                    in->algo);
      return t > 0 ? t : 0;
    }
  case OOC_I_H2D:
  case OOC_I_D2H: {
    int64_t x = xfer_ns((double)p->tensors[in->tensor].bytes,
                        s->alone[in->kind == OOC_I_D2H]);
    return x > TIME_MAX - s->hw->copy_latency_ns
               ? INT64_MAX : s->hw->copy_latency_ns + x;
  }
  default:
    return 0;
  }
}

static void
sample_memory(ooc_sim *s)
{
  ooc_alloc_stats as;

  s->at->usage(s->astate, &as.allocated, &as.reserved);
  if (as.allocated > s->r->peak_allocated)
    s->r->peak_allocated = as.allocated;
  if (as.reserved > s->r->peak_reserved) {
    s->r->peak_reserved = as.reserved;
    s->peak_res_alloc = as.allocated;
  } else if (as.reserved == s->r->peak_reserved &&
             as.allocated > s->peak_res_alloc) {
    s->peak_res_alloc = as.allocated;
  }
  if (s->last_iter && s->trace != NULL &&
      s->trace->n_mem < s->trace->cap_mem)
    s->trace->mem[s->trace->n_mem++] = (ooc_mem_sample){
      .t_ns = s->now - s->t0, .allocated = as.allocated,
      .reserved = as.reserved,
    };
}

/* An ALLOC (instruction i) could not be met: the run ends infeasible with
 * the report the summary's oom object carries (alloc/oom.c, shared with
 * the executor). */
static void
fill_oom(ooc_sim *s, int32_t i)
{
  ooc_alloc_oom(s->at, s->astate, s->p, i,
                i < s->p->prologue_end ? 0 : s->now - s->t0, &s->r->oom);
  s->r->feasible = 0;
  s->oom = 1;
}

/* Host allocation of tensor t: against host memory, and a pinned one also
 * against host.pinned_GiB. Returns 0 (and reports it) when exhausted. */
static int
host_alloc(ooc_sim *s, int32_t i, int32_t t)
{
  uint64_t bytes = s->p->tensors[t].bytes;
  int pinned = ooc_program_host_pinned(s->p, t);
  int64_t when = i < s->p->prologue_end ? 0 : s->now - s->t0;

  if (!s->host_unlimited && s->hw->host_mem > 0 &&
      bytes > s->hw->host_mem - s->host_used) {
    ooc_alloc_oom_host_kind(s->at, s->astate, s->p, i, when,
                            pinned ? "pinned host memory" : "host memory",
                            s->host_used, s->hw->host_mem, &s->r->oom);
    goto oom;
  }
  if (!s->host_unlimited && pinned && s->hw->host_pinned_max > 0 &&
      bytes > s->hw->host_pinned_max - s->host_pinned) {
    ooc_alloc_oom_host_kind(s->at, s->astate, s->p, i, when,
                            "pinned host memory", s->host_pinned,
                            s->hw->host_pinned_max, &s->r->oom);
    goto oom;
  }
  s->host_used += bytes;
  if (pinned) {
    s->host_pinned += bytes;
    if (s->host_pinned > s->r->peak_host_pinned)
      s->r->peak_host_pinned = s->host_pinned;
  }
  return 1;
oom:
  s->r->feasible = 0;
  s->oom = 1;
  return 0;
}

/* The allocator side of ALLOC i (checked): device through the allocator,
 * host against hw->host_mem. Returns OOC_OK with *cost its modelled time,
 * OOC_EOOM (fill_oom has run) or an error. */
static inline int
do_alloc(ooc_sim *s, int32_t i, int64_t *cost)
{
  const ooc_instr *in = &s->p->instr[i];
  int32_t t = in->tensor;
  ooc_placement where;
  int rc;

  if (in->where == OOC_WHERE_HOST) {
    if (!host_alloc(s, i, t))
      return OOC_EOOM;
    *cost += s->hw->host_alloc_ns;
    return OOC_OK;
  }
  s->drv_ns = 0;
  rc = s->at->alloc(s->astate, t, s->p->tensors[t].bytes, &where,
                    s->drv_use);
  *cost += s->drv_ns;
  if (rc == OOC_EOOM) {
    fill_oom(s, i);
    return OOC_EOOM;
  }
  if (rc != OOC_OK)
    return ooc_err_set(s->err, rc, "simulator: allocator out of host memory");
  return OOC_OK;
}

/* The allocator side of FREE i (checked), adding its cost. OOC_OK, or an
 * error when the policy's bookkeeping could not grow. */
static inline int
do_free(ooc_sim *s, int32_t i, int64_t *cost)
{
  const ooc_instr *in = &s->p->instr[i];
  int rc;

  if (in->where == OOC_WHERE_HOST) {
    s->host_used -= s->p->tensors[in->tensor].bytes;
    if (ooc_program_host_pinned(s->p, in->tensor))
      s->host_pinned -= s->p->tensors[in->tensor].bytes;
    return OOC_OK;
  }
  s->drv_ns = 0;
  rc = s->at->free(s->astate, in->tensor, s->drv_use);
  *cost += s->drv_ns;
  if (rc != OOC_OK)
    return ooc_err_set(s->err, rc, "simulator: allocator out of host memory");
  return OOC_OK;
}

/* The prologue: every instruction once, at t = 0, at no cost. */
static int
run_prologue(ooc_sim *s)
{
  const ooc_program *p = s->p;
  int32_t i;
  int rc;

  for (i = 0; i < p->prologue_end; i++) {
    const ooc_instr *in = &p->instr[i];
    int64_t cost = 0;

    rc = ooc_sem_check(&s->sem, i, s->err);
    if (rc != OOC_OK)
      return rc;
    if (in->kind == OOC_I_ALLOC) {
      rc = do_alloc(s, i, &cost);
      if (rc != OOC_OK)
        return rc;
    } else if (in->kind == OOC_I_FREE) {
      rc = do_free(s, i, &cost);
      if (rc != OOC_OK)
        return rc;
    }
    rc = ooc_sem_prologue(&s->sem, i, s->err);
    if (rc != OOC_OK)
      return rc;
    if ((in->kind == OOC_I_ALLOC || in->kind == OOC_I_FREE) &&
        in->where == OOC_WHERE_DEVICE)
      sample_memory(s);
  }
  return OOC_OK;
}

/* The profile fields that set the duration of instruction i, for the
 * message of a time overflow. */
static const char *
fields_of(const ooc_instr *in)
{
  switch (in->kind) {
  case OOC_I_COMPUTE:
    return "compute rates, efficiencies and launch_us, or a calibrated time";
  case OOC_I_H2D:
    return "link.h2d_GBps, link.duplex_h2d_GBps and link.latency_us";
  case OOC_I_D2H:
    return "link.d2h_GBps, link.duplex_d2h_GBps and link.latency_us";
  default:
    return "allocator.* costs and host_alloc_us";
  }
}

/* push()'s failures, out of its inlined fast path. */
static int __attribute__((noinline, cold))
push_fail(ooc_sim *s, int32_t i, int64_t delta)
{
  const ooc_instr *in = &s->p->instr[i];

  if (delta >= 0 && delta <= TIME_MAX - s->now)
    return ooc_err_set(s->err, OOC_ENOMEM, "simulator: out of memory");
  return ooc_err_set(s->err, OOC_ERANGE,
                     "simulator: time overflow: instruction %d (%s, layer "
                     "%d) would end more than 146 years into the run; "
                     "profile '%s' has a value out of range (check %s)", i,
                     in->kind == OOC_I_COMPUTE
                         ? ooc_phase_name((ooc_phase)in->phase)
                         : ooc_instr_kind_name((ooc_instr_kind)in->kind),
                     in->layer, ooc_hw_origin(s->hw), fields_of(in));
}

/* Schedule an event `delta` ns from now for instruction i (on behalf of
 * which a time overflow is reported: a profile value out of any sane
 * range, never a silently wrong time). */
static inline int
push(ooc_sim *s, int32_t i, int64_t delta, int kind, int32_t a, uint32_t gen)
{
  if (__builtin_expect(delta < 0 || delta > TIME_MAX - s->now, 0) ||
      __builtin_expect(ooc_heap_push(&s->heap, s->now + delta, kind, a,
                                     gen) != OOC_OK, 0))
    return push_fail(s, i, delta);
  return OOC_OK;
}

/* Bring channel d's remaining bytes up to now. */
static void
chan_progress(ooc_sim *s, int d)
{
  struct chan *c = &s->ch[d];

  if (!c->active)
    return;
  c->remaining -= c->rate * (double)(s->now - c->last) / 1e9;
  if (c->remaining < 0)
    c->remaining = 0;
  c->last = s->now;
}

/* The set of active transfers changed: set rates, reschedule both. */
static int
chan_reschedule(ooc_sim *s)
{
  int both = s->ch[0].active && s->ch[1].active;
  int d, rc;

  if (s->comp.active) {
    /* The running kernel's work so far at the old factor, the rest at
     * the new one. */
    struct comp *k = &s->comp;
    k->remaining -= (double)(s->now - k->last) / k->factor;
    if (k->remaining < 0)
      k->remaining = 0;
    k->last = s->now;
    k->factor = 1.0 + k->slow * (s->ch[0].active + s->ch[1].active);
    k->gen++;
    rc = push(s, s->st[OOC_STREAM_COMPUTE].cur,
              xfer_ns(k->remaining * k->factor, 1e9), EV_COMP,
              OOC_STREAM_COMPUTE, k->gen);
    if (rc != OOC_OK)
      return rc;
  }

  for (d = 0; d < 2; d++) {
    struct chan *c = &s->ch[d];
    if (!c->active)
      continue;
    c->rate = both ? s->duplex[d] : s->alone[d];
    c->gen++;
    rc = push(s, s->st[d ? OOC_STREAM_D2H : OOC_STREAM_H2D].cur,
              xfer_ns(c->remaining, c->rate), EV_XFER, d, c->gen);
    if (rc != OOC_OK)
      return rc;
  }
  return OOC_OK;
}

/* Is instruction w complete (in this iteration, or in the prologue)? */
static inline int
is_done(const ooc_sim *s, int32_t w)
{
  return w < s->p->prologue_end || s->done[w] == s->stamp;
}

/* Attribute the compute stream's idle time since the last change, [since,
 * now): to its stall reason, and with a detail recorder to the tensor whose
 * copy (or FREE after a swap-out) it waited for and to the next kernel. */
static void
stall_account(ooc_sim *s)
{
  if (s->stall != STALL_NONE && s->now > s->stall_since) {
    int64_t dt = s->now - s->stall_since;
    s->r->stall_ns[s->stall] += dt;
    if (s->stall == OOC_STALL_HOST)
      s->host_pend += dt;
    if (s->detail != NULL) {
      s->pend_stall[s->stall] += dt;
      if (s->stall_on >= 0 && s->stall != OOC_STALL_OTHER) {
        int32_t t = s->p->instr[s->stall_on].tensor;
        if (t >= 0) {
          if (s->stall == OOC_STALL_SWAPIN)
            s->detail->exposed_in_ns[t] += dt;
          else
            s->detail->exposed_out_ns[t] += dt;
        }
      }
    }
  }
  s->stall_since = s->now;
}

/* The allocator policy is about to see device ALLOC/FREE i: keep the
 * order (the detail recorder). OOC_ENOMEM when the record cannot grow. */
static int
record_mem(ooc_sim *s, int32_t i)
{
  ooc_sim_detail *d = s->detail;

  if (d->n_mem_order == d->cap_mem_order) {
    int32_t cap = d->cap_mem_order ? 2 * d->cap_mem_order : 1024;
    int32_t *q = realloc(d->mem_order, (size_t)cap * sizeof *q);
    if (q == NULL)
      return ooc_err_set(s->err, OOC_ENOMEM, "simulator: out of memory");
    d->mem_order = q;
    d->cap_mem_order = cap;
  }
  d->mem_order[d->n_mem_order++] = i;
  return OOC_OK;
}

/* A timed iteration starts: where its part of mem_order begins. */
static int
record_iteration(ooc_sim *s)
{
  ooc_sim_detail *d = s->detail;

  if (d->n_iter + 2 > d->cap_iter) {
    int32_t cap = d->cap_iter ? 2 * d->cap_iter : 8;
    int32_t *q = realloc(d->iter_first, (size_t)cap * sizeof *q);
    if (q == NULL)
      return ooc_err_set(s->err, OOC_ENOMEM, "simulator: out of memory");
    d->iter_first = q;
    d->cap_iter = cap;
  }
  d->iter_first[d->n_iter++] = d->n_mem_order;
  d->iter_first[d->n_iter] = d->n_mem_order;
  return OOC_OK;
}

/* A kernel starts: hand it the compute stream's idle time since the last
 * one (the detail recorder). */
static void
kernel_starts(ooc_sim *s, int32_t i)
{
  ooc_sim_detail *d = s->detail;
  int64_t total = 0, most = -1;
  int k, cause = OOC_STALL_OTHER;
  uint64_t allocated, reserved;

  stall_account(s);
  for (k = 0; k < OOC_STALL_COUNT; k++) {
    total += s->pend_stall[k];
    if (s->pend_stall[k] > most) {
      most = s->pend_stall[k];
      cause = k;
    }
    s->pend_stall[k] = 0;
  }
  s->at->usage(s->astate, &allocated, &reserved);
  d->start_ns[i] = s->now - s->t0;
  d->stall_ns[i] = total;
  d->stall_cause[i] = (uint8_t)(total > 0 ? cause : OOC_STALL_OTHER);
  d->free_bytes[i] = s->budget > allocated ? s->budget - allocated : 0;
}

/* The op class whose interference applies to COMPUTE in (the update:
 * other). */
static inline int
kernel_class(const ooc_sim *s, const ooc_instr *in)
{
  if (in->phase == OOC_PH_UPDATE || s->model == NULL ||
      in->layer < 0 || in->layer >= s->model->n_layers)
    return OOC_CLASS_OTHER;
  return s->model->layers[in->layer].cls;
}

/* --- the host --------------------------------------------------------------
 *
 * With a host cost in the profile, one host thread issues the timed
 * instructions in index order, from host.iteration_us after the iteration
 * starts: a COMPUTE costs host.op_us (the optimizer step
 * host.optimizer_param_us per layer with parameters, costs->update_host_ns;
 * a model's framework block may replace both and host.iteration_us, so
 * the engine takes them from the costs),
 * a copy link.issue_us, an ALLOC or FREE nothing (its allocator and driver
 * time is stream time). An instruction starts no earlier than it was
 * issued. The host runs ahead of the streams except where it must wait: a
 * device ALLOC that waits for a FREE on another stream (the room a swap-out
 * makes) is issued only once that FREE has completed, plus
 * host.event_sync_us (an event synchronise); and a device-synchronising
 * driver call (the barrier) returns only when the device has drained. */

/* The host time to issue instruction i. */
static inline int64_t
host_cost(const ooc_sim *s, const ooc_instr *in)
{
  switch (in->kind) {
  case OOC_I_COMPUTE:
    if (in->phase != OOC_PH_UPDATE)
      return s->costs->host_op_ns;
    return in->n_args >= s->costs->n_param_layers
               ? s->costs->update_host_ns
               : (int64_t)llround((double)in->n_args *
                                  s->costs->update_host_tensor_ns);
  case OOC_I_H2D:
  case OOC_I_D2H:
    return s->hw->copy_issue_ns;
  default:
    return 0;
  }
}

/* Issue what the host can: stop at an ALLOC whose FREE on another stream
 * has not completed. The waits already seen done are not looked at again
 * (host_wj, host_ready), so this is O(1) amortised per instruction and
 * wait however often schedule() calls it. */
static void
host_advance(ooc_sim *s)
{
  const ooc_program *p = s->p;

  while (s->host_next < p->n_instr) {
    int32_t i = s->host_next;
    const ooc_instr *in = &p->instr[i];
    int64_t c;

    if (in->kind == OOC_I_ALLOC && in->where == OOC_WHERE_DEVICE &&
        in->n_waits > 0) {
      int64_t ready;
      for (; s->host_wj < in->n_waits; s->host_wj++) {
        int32_t w = p->waits[in->wait_first + s->host_wj];
        const ooc_instr *wi = &p->instr[w];
        if (wi->kind != OOC_I_FREE || wi->stream == in->stream ||
            w < p->prologue_end)
          continue;
        if (!is_done(s, w))
          return;
        if (s->end_at[w] > s->host_ready)
          s->host_ready = s->end_at[w];
      }
      ready = s->host_ready;
      if (ready >= 0) {
        ready = ready > TIME_MAX - s->hw->event_sync_ns
                    ? TIME_MAX : ready + s->hw->event_sync_ns;
        if (ready > s->host_t)
          s->host_t = ready;
      }
    }
    c = host_cost(s, in);
    s->host_t = c > TIME_MAX - s->host_t ? TIME_MAX : s->host_t + c;
    s->issue_at[i] = s->host_t;
    s->host_next++;
    s->host_wj = 0;
    s->host_ready = -1;
  }
}

/* May the head i of stream k start as far as the host is concerned? When
 * it is issued later, a wake-up event is set for then. */
static inline int
host_ready(ooc_sim *s, int k, int32_t i, int *rc)
{
  *rc = OOC_OK;
  if (i >= s->host_next)
    return 0;                   /* the host waits before it */
  if (s->issue_at[i] <= s->now)
    return 1;
  if (s->wake_for[k] != i) {
    s->wake_for[k] = i;
    *rc = push(s, i, s->issue_at[i] - s->now, EV_WAKE, k, 0);
  }
  return 0;
}

/* Is every stream but k idle? */
static inline int
others_idle(const ooc_sim *s, int k)
{
  for (int a = 0; a < OOC_NSTREAMS; a++)
    if (a != k && s->st[a].state == ST_BUSY)
      return 0;
  return 1;
}

/* A device-synchronising ALLOC/FREE i on stream k starts: it holds every
 * other stream back and runs its cost once they have drained (at once when
 * they are idle; else schedule() releases it). */
static int
barrier_start(ooc_sim *s, int k, int32_t i, int64_t cost)
{
  s->barrier = i;
  s->barrier_stream = k;
  s->barrier_cost = cost;
  s->barrier_pending = !others_idle(s, k);
  return s->barrier_pending ? OOC_OK : push(s, i, cost, EV_DONE, k, 0);
}

/* Try to start the head of stream k. Returns OOC_OK (started or not; an
 * OOM sets s->oom) or an error. */
static int
try_start(ooc_sim *s, int k)
{
  struct stream *st = &s->st[k];
  const ooc_program *p = s->p;
  const ooc_instr *in;
  int32_t i, t;
  int64_t cost = 0, dur = 0;
  int rc;

  /* schedule() calls this only for an idle stream with work left. */
  i = s->order[st->first + st->pos];
  in = &p->instr[i];
  while (st->wcur < in->n_waits) {
    int32_t w = p->waits[in->wait_first + st->wcur];
    if (!is_done(s, w)) {
      st->wait_on = w;
      return OOC_OK;
    }
    st->wcur++;
  }
  st->wait_on = -1;
  t = in->tensor;
  st->host_wait = 0;
  if (s->barrier >= 0)
    return OOC_OK;              /* a synchronising driver call runs */
  if (s->host_on && !host_ready(s, k, i, &rc)) {
    st->host_wait = 1;
    return rc;
  }
  if ((in->kind == OOC_I_H2D || in->kind == OOC_I_D2H) && s->shared_engine &&
      s->engine_busy)
    return OOC_OK;
  /* The semantics' start (ir/semantics.h) in this switch, per kind. */
  switch (in->kind) {
  case OOC_I_COMPUTE:
    if ((rc = ooc_sem_begin_compute(&s->sem, i, in, s->err)) != OOC_OK)
      return rc;
    dur = ooc_sim_instr_ns(s, p, i);
    s->r->compute_busy_ns += dur;
    if (in->phase == OOC_PH_RECOMP) {
      s->r->recompute_ns += dur;
      if (s->model != NULL && in->layer < s->model->n_layers)
        s->r->recompute_flops += s->model->layers[in->layer].fwd_flops;
    }
    if (s->last_iter && s->cutoff > 0 && k == OOC_STREAM_COMPUTE) {
      s->rem_comp -= dur;
      s->comp_end = s->now + dur;
    }
    if (s->detail != NULL)
      kernel_starts(s, i);
    if (s->any_interference) {
      double x = s->hw->interference[kernel_class(s, in)];
      if (x > 0) {
        struct comp *c = &s->comp;
        c->active = 1;
        c->remaining = (double)dur;
        c->slow = x;
        c->factor = 1.0 + x * (s->ch[0].active + s->ch[1].active);
        c->nominal = dur;
        c->last = s->now;
        c->gen++;
        rc = push(s, i, xfer_ns(c->remaining * c->factor, 1e9), EV_COMP, k,
                  c->gen);
        break;
      }
    }
    rc = push(s, i, dur, EV_DONE, k, 0);
    break;
  case OOC_I_HOST:
    if ((rc = ooc_sem_begin_host(&s->sem, i, in, s->err)) != OOC_OK)
      return rc;
    dur = ooc_sim_instr_ns(s, p, i);
    s->r->host_busy_ns += dur;
    rc = push(s, i, dur, EV_DONE, k, 0);
    break;
  case OOC_I_H2D:
  case OOC_I_D2H: {
    int d = in->kind == OOC_I_D2H;
    if ((rc = d ? ooc_sem_begin_d2h(&s->sem, i, t, s->err)
                : ooc_sem_begin_h2d(&s->sem, i, t, s->err)) != OOC_OK)
      return rc;
    s->engine_busy = 1;
    s->ch[d].remaining = (double)p->tensors[t].bytes;
    if (s->detail != NULL)
      s->detail->start_ns[i] = s->now - s->t0;
    if (d)
      s->r->d2h_bytes += p->tensors[t].bytes;
    else
      s->r->h2d_bytes += p->tensors[t].bytes;
    rc = push(s, i, s->hw->copy_latency_ns, EV_LAT, d, 0);
    break;
  }
  case OOC_I_ALLOC:
    if ((rc = ooc_sem_begin_alloc(&s->sem, i, in, s->err)) != OOC_OK)
      return rc;
    if (s->detail != NULL && in->where == OOC_WHERE_DEVICE &&
        (rc = record_mem(s, i)) != OOC_OK)
      return rc;
    s->drv_sync = 0;
    rc = do_alloc(s, i, &cost);
    if (rc == OOC_EOOM)
      return OOC_OK;
    if (rc != OOC_OK)
      return rc;
    s->r->alloc_ns += cost;
    rc = s->drv_sync ? barrier_start(s, k, i, cost)
                     : push(s, i, cost, EV_DONE, k, 0);
    break;
  case OOC_I_FREE:
    if ((rc = ooc_sem_begin_free(&s->sem, i, in, s->err)) != OOC_OK)
      return rc;
    if (s->detail != NULL && in->where == OOC_WHERE_DEVICE &&
        (rc = record_mem(s, i)) != OOC_OK)
      return rc;
    s->drv_sync = 0;
    rc = do_free(s, i, &cost);
    if (rc != OOC_OK)
      return rc;
    s->r->alloc_ns += cost;
    rc = s->drv_sync ? barrier_start(s, k, i, cost)
                     : push(s, i, cost, EV_DONE, k, 0);
    break;
  default:
    rc = OOC_OK;
    break;
  }
  if (rc != OOC_OK)
    return rc;
  /* A FREE lowers what is allocated and reserved, so only an ALLOC can
   * raise a peak: a FREE is sampled for the trace alone. */
  if (in->where == OOC_WHERE_DEVICE &&
      (in->kind == OOC_I_ALLOC ||
       (in->kind == OOC_I_FREE && s->last_iter && s->trace != NULL)))
    sample_memory(s);
  st->state = ST_BUSY;
  st->cur = i;
  st->start = s->now;
  return OOC_OK;
}

/* The instruction running on stream k completed now. */
static void
finish(ooc_sim *s, int k)
{
  struct stream *st = &s->st[k];
  int32_t i = st->cur;
  const ooc_instr *in = &s->p->instr[i];

  /* The semantics' completion (ir/semantics.h) in this switch. */
  switch (in->kind) {
  case OOC_I_COMPUTE:
    ooc_sem_finish_compute(&s->sem, i, in);
    if (s->detail != NULL)
      s->detail->end_ns[i] = s->now - s->t0;
    break;
  case OOC_I_HOST:
    ooc_sem_finish_host(&s->sem, in);
    break;
  case OOC_I_H2D:
  case OOC_I_D2H:
    ooc_sem_finish_copy(&s->sem, in->tensor, in->kind == OOC_I_D2H);
    if (s->detail != NULL)
      s->detail->end_ns[i] = s->now - s->t0;
    s->engine_busy = 0;
    if (in->kind == OOC_I_H2D)
      s->r->h2d_busy_ns += s->now - st->start;
    else
      s->r->d2h_busy_ns += s->now - st->start;
    break;
  default:
    break;
  }
  if (s->last_iter && s->trace != NULL &&
      s->trace->n_spans < s->trace->cap_spans)
    s->trace->spans[s->trace->n_spans++] = (ooc_span){
      .instr = i, .start_ns = st->start - s->t0, .end_ns = s->now - s->t0,
      .host_wait_ns = k == OOC_STREAM_COMPUTE ? s->host_pend : 0,
    };
  if (k == OOC_STREAM_COMPUTE)
    s->host_pend = 0;
  s->done[i] = s->stamp;
  s->end_at[i] = s->now;
  if (i == s->barrier) {
    /* The host was blocked in the call too. */
    s->barrier = -1;
    if (s->host_t < s->now)
      s->host_t = s->now;
  }
  st->state = ST_IDLE;
  st->pos++;
  st->wcur = 0;
  st->wait_on = -1;
}

/* A transfer's or a slowed kernel's completion superseded by a later rate
 * change. */
static inline int
is_stale(const ooc_sim *s, const ooc_event *ev)
{
  if (__builtin_expect(ev->kind <= EV_WAKE, 1))
    return 0;
  if (ev->kind == EV_XFER)
    return !s->ch[ev->a].active || ev->gen != s->ch[ev->a].gen;
  return !s->comp.active || ev->gen != s->comp.gen;
}

static int
dispatch(ooc_sim *s, const ooc_event *ev)
{
  struct chan *c;

  if (__builtin_expect(ev->kind == EV_DONE, 1)) {
    s->r->events++;
    finish(s, ev->a);
    return OOC_OK;
  }
  switch (ev->kind) {
  case EV_WAKE:
    s->wake_for[ev->a] = -1;    /* schedule() starts the head now */
    return OOC_OK;
  case EV_COMP:
    if (is_stale(s, ev))
      return OOC_OK;
    s->r->events++;
    s->comp.active = 0;
    {
      /* Busy time is the kernel's real span: what the copies added. */
      const ooc_instr *in = &s->p->instr[s->st[OOC_STREAM_COMPUTE].cur];
      int64_t extra = s->now - s->st[OOC_STREAM_COMPUTE].start -
                      s->comp.nominal;
      s->r->compute_busy_ns += extra;
      if (in->phase == OOC_PH_RECOMP)
        s->r->recompute_ns += extra;
    }
    finish(s, OOC_STREAM_COMPUTE);
    return OOC_OK;
  case EV_LAT:
    s->r->events++;
    c = &s->ch[ev->a];
    chan_progress(s, !ev->a);
    c->active = 1;
    c->last = s->now;
    return chan_reschedule(s);
  default:
    if (is_stale(s, ev))
      return OOC_OK;
    c = &s->ch[ev->a];
    s->r->events++;
    c->active = 0;
    chan_progress(s, !ev->a);
    finish(s, ev->a == 0 ? OOC_STREAM_H2D : OOC_STREAM_D2H);
    return chan_reschedule(s);
  }
}

/* Start what can start, streams in order of their head instruction. Only
 * idle streams with work left are candidates, and starting one neither
 * frees another nor moves a head, so the candidates and their order are
 * fixed before the first start: mostly one or none (the compute stream is
 * busy most of the time), so this is cheap per event. */
static int
schedule(ooc_sim *s)
{
  int cand[OOC_NSTREAMS], n = 0, a, rc;
  int32_t head[OOC_NSTREAMS];

  if (s->barrier >= 0) {
    if (s->barrier_pending && others_idle(s, s->barrier_stream)) {
      s->barrier_pending = 0;
      /* The call waited for the device to drain: time in it, as the
       * executor measures a synchronising cudaFree's span. */
      s->r->alloc_ns += s->now - s->st[s->barrier_stream].start;
      return push(s, s->barrier, s->barrier_cost, EV_DONE, s->barrier_stream,
                  0);
    }
    return OOC_OK;              /* nothing else starts meanwhile */
  }
  if (s->host_on)
    host_advance(s);
  for (a = 0; a < OOC_NSTREAMS; a++) {
    const struct stream *st = &s->st[a];
    /* A head still stuck on the wait it stopped at would stop there
     * again: try_start would change nothing, so it is not a candidate. */
    if (st->state != ST_BUSY && st->pos < st->n &&
        (st->wait_on < 0 || is_done(s, st->wait_on))) {
      head[n] = s->order[st->first + st->pos];
      cand[n++] = a;
    }
  }
  /* Insertion sort of at most four. */
  for (a = 1; a < n; a++)
    for (int b = a; b > 0 && head[b] < head[b - 1]; b--) {
      int32_t th = head[b];
      int tc = cand[b];
      head[b] = head[b - 1];
      cand[b] = cand[b - 1];
      head[b - 1] = th;
      cand[b - 1] = tc;
    }
  for (a = 0; a < n && !s->oom; a++) {
    rc = try_start(s, cand[a]);
    if (rc != OOC_OK)
      return rc;
  }
  return OOC_OK;
}

/* The compute stream's state may have changed: close the interval of the
 * old reason and start one for the new. */
static void
track_stall(ooc_sim *s)
{
  const struct stream *st = &s->st[OOC_STREAM_COMPUTE];
  int why = STALL_NONE;
  int32_t on = -1;

  if (st->state == ST_IDLE && st->pos < st->n) {
    why = st->wait_on < 0 && st->host_wait ? OOC_STALL_HOST
                                           : OOC_STALL_OTHER;
    on = st->wait_on;
    if (on >= 0) {
      const ooc_instr *w = &s->p->instr[on];
      if (w->stream == OOC_STREAM_H2D)
        why = OOC_STALL_SWAPIN;
      else if (w->stream == OOC_STREAM_D2H)
        why = OOC_STALL_SWAPOUT;
    }
  }
  if (why == s->stall && on == s->stall_on)
    return;
  stall_account(s);
  s->stall = why;
  s->stall_on = on;
}

/* One timed iteration from s->now. Returns OOC_OK (r->feasible says
 * whether it finished), or an error. */
static int
run_iteration(ooc_sim *s)
{
  ooc_event ev;
  int k, rc;

  s->stamp++;
  if (s->stamp == 0) {
    memset(s->done, 0, (size_t)s->cap_instr * sizeof *s->done);
    s->stamp = 1;
  }
  for (k = 0; k < OOC_NSTREAMS; k++) {
    struct stream *st = &s->st[k];
    st->pos = 0;
    st->wcur = 0;
    st->wait_on = -1;
    st->host_wait = 0;
    st->state = ST_IDLE;
  }
  s->engine_busy = 0;
  s->ch[0].active = s->ch[1].active = 0;
  s->comp.active = 0;
  s->t0 = s->now;
  s->barrier = -1;
  s->barrier_pending = 0;
  s->host_next = s->p->prologue_end;
  s->host_wj = 0;
  s->host_ready = -1;
  s->host_t = s->now + s->costs->host_iter_ns;
  for (k = 0; k < OOC_NSTREAMS; k++)
    s->wake_for[k] = -1;
  s->stall = STALL_NONE;
  s->stall_on = -1;
  memset(s->pend_stall, 0, sizeof s->pend_stall);
  s->host_pend = 0;
  ooc_heap_clear(&s->heap);
  if (s->last_iter && s->trace != NULL)
    sample_memory(s);
  rc = schedule(s);
  if (rc != OOC_OK)
    return rc;
  track_stall(s);
  while (!s->oom) {
    /* Drop stale transfer completions first: they must not move time. */
    while (ooc_heap_peek(&s->heap) != NULL &&
           is_stale(s, ooc_heap_peek(&s->heap)))
      ooc_heap_pop(&s->heap, &ev);
    if (ooc_heap_peek(&s->heap) == NULL)
      break;
    s->now = ooc_heap_peek(&s->heap)->t;
    while (ooc_heap_peek(&s->heap) != NULL &&
           ooc_heap_peek(&s->heap)->t == s->now) {
      ooc_heap_pop(&s->heap, &ev);
      rc = dispatch(s, &ev);
      if (rc != OOC_OK)
        return rc;
    }
    rc = schedule(s);
    if (rc != OOC_OK)
      return rc;
    track_stall(s);
    /* Only in the iteration that is reported whatever happens: one that
     * may be followed is not known to be the steady one until it ends. */
    if (s->cutoff > 0 && s->final_iter) {
      int64_t end = s->comp_end > s->now ? s->comp_end : s->now;
      if (end - s->t0 > s->cutoff - s->rem_comp) {
        s->r->cut = 1;
        s->r->iteration_ns = end - s->t0 + s->rem_comp;
        return OOC_OK;
      }
    }
  }
  if (s->oom) {
    stall_account(s);           /* the wait the failed ALLOC ends */
    return OOC_OK;
  }
  for (k = 0; k < OOC_NSTREAMS; k++) {
    const struct stream *st = &s->st[k];
    if (st->pos < st->n)
      return ooc_err_set(s->err, OOC_EINVAL,
                         "simulator: instruction %d waits for something that "
                         "never completes", s->order[st->first + st->pos]);
  }
  return OOC_OK;
}

void
ooc_sim_set_host_unlimited(ooc_sim *s, int on)
{
  s->host_unlimited = on != 0;
}

uint64_t
ooc_sim_runs(const ooc_sim *s)
{
  return s != NULL ? s->runs : 0;
}

void
ooc_sim_add_runs(ooc_sim *s, uint64_t n)
{
  if (s != NULL)
    s->runs += n;
}

int
ooc_sim_run(ooc_sim *s, const ooc_program *p, ooc_sim_result *r,
            ooc_trace *trace, ooc_err *err)
{
  return ooc_sim_run_detail(s, p, r, trace, NULL, err);
}

int
ooc_sim_run_cutoff(ooc_sim *s, const ooc_program *p, int64_t cutoff_ns,
                   ooc_sim_result *r, ooc_err *err)
{
  int rc;

  s->cutoff = cutoff_ns > 0 && cutoff_ns < TIME_MAX ? cutoff_ns : 0;
  rc = ooc_sim_run_detail(s, p, r, NULL, NULL, err);
  s->cutoff = 0;
  return rc;
}

static int run_detail(ooc_sim *s, const ooc_program *p, ooc_sim_result *r,
                      ooc_trace *trace, ooc_sim_detail *detail, ooc_err *err);

int
ooc_sim_run_detail(ooc_sim *s, const ooc_program *p, ooc_sim_result *r,
                   ooc_trace *trace, ooc_sim_detail *detail, ooc_err *err)
{
  int rc = run_detail(s, p, r, trace, detail, err);

  /* The trace records the reported iteration only. One that ran out of
   * memory before it is what the trace must show: run again, the same
   * events up to it, with that iteration the reported one (the result
   * stays the first run's; its figures are that iteration's either
   * way). */
  if (rc == OOC_OK && trace != NULL && !r->feasible && r->iterations >= 1 &&
      r->iterations < s->iterations) {
    ooc_sim_result again;
    int iters = s->iterations, max = s->max_iterations;
    s->iterations = s->max_iterations = r->iterations;
    rc = run_detail(s, p, &again, trace, NULL, err);
    s->iterations = iters;
    s->max_iterations = max;
    s->runs--;                  /* one run asked for */
  }
  return rc;
}

static int
run_detail(ooc_sim *s, const ooc_program *p, ooc_sim_result *r,
           ooc_trace *trace, ooc_sim_detail *detail, ooc_err *err)
{
  int32_t i, n_timed, n_mem;
  int k, it, rc;

  memset(r, 0, sizeof *r);
  s->err = err;
  s->runs++;
  rc = ooc_program_check_structure(p, err);
  if (rc != OOC_OK)
    return rc;
  if (s->model != NULL && p->model_fingerprint != 0 &&
      s->model->fingerprint != 0 &&
      p->model_fingerprint != s->model->fingerprint)
    return ooc_err_set(err, OOC_EINVAL,
                       "simulator: the program was built for a different "
                       "model than '%s' (fingerprint mismatch)",
                       s->model->name ? s->model->name : "?");
  /* One pass: check what the costs must cover, and count the timed
   * instructions per stream (grouped below). */
  n_mem = 1;
  for (k = 0; k < OOC_NSTREAMS; k++)
    s->st[k].n = 0;
  for (i = 0; i < p->n_instr; i++) {
    const ooc_instr *in = &p->instr[i];
    if (i >= p->prologue_end) {
      s->st[in->stream].n++;
      n_mem += in->kind == OOC_I_ALLOC || in->kind == OOC_I_FREE;
    }
    if (in->kind == OOC_I_HOST && s->model != NULL &&
        i >= p->prologue_end &&   /* as the executor checks them */
        (rc = ooc_program_check_host_step(s->model, p, i, err)) != OOC_OK)
      return rc;
    if (in->kind == OOC_I_HOST &&
        (in->layer >= s->costs->n_layers ||
         s->costs->host_opt_ns[in->layer] < 0))
      return ooc_err_set(err, OOC_EINVAL,
                         "simulator: instruction %d (HOST, layer %d) runs "
                         "the optimizer step on the CPU, but %s%s%s",
                         i, in->layer,
                         in->layer >= s->costs->n_layers
                             ? "the costs do not cover that layer"
                             : "profile '",
                         in->layer >= s->costs->n_layers
                             ? "" : ooc_hw_origin(s->hw),
                         in->layer >= s->costs->n_layers
                             ? "" : "' gives no host.optimizer_GBps");
    if (in->kind != OOC_I_COMPUTE || in->phase == OOC_PH_UPDATE)
      continue;
    if (in->layer >= s->costs->n_layers)
      return ooc_err_set(err, OOC_EINVAL,
                         "simulator: instruction %d (COMPUTE %s) names layer "
                         "%d but the costs cover %d layers", i,
                         ooc_phase_name((ooc_phase)in->phase), in->layer,
                         s->costs->n_layers);
    if (in->algo != OOC_ALGO_DEFAULT &&
        ooc_costs_algo_ns(s->costs, in->layer, in->phase, in->algo) < 0)
      return ooc_err_set(err, OOC_EINVAL,
                         "simulator: instruction %d (COMPUTE %s, layer %d) "
                         "runs kernel algorithm '%s', which profile '%s' "
                         "does not offer for that layer", i,
                         ooc_phase_name((ooc_phase)in->phase), in->layer,
                         ooc_algo_name((ooc_algo)in->algo),
                         ooc_hw_origin(s->hw));
  }
  rc = prepare(s, p);
  if (rc != OOC_OK)
    return rc == OOC_ENOMEM ? ooc_err_set(err, rc, "simulator: out of memory")
                            : rc;
  s->p = p;
  s->r = r;
  s->trace = trace;
  s->detail = detail;
  s->now = 0;
  s->oom = 0;
  s->host_pinned = s->host_used = 0;
  s->peak_res_alloc = 0;
  memset(s->ch, 0, sizeof s->ch);
  memset(&s->comp, 0, sizeof s->comp);
  s->any_interference = 0;
  for (k = 0; k < OOC_CLASS_COUNT; k++)
    s->any_interference |= s->hw->interference[k] > 0;
  s->host_on = s->costs->host_iter_ns > 0 || s->costs->host_op_ns > 0 ||
               s->costs->update_host_ns > 0 || s->hw->event_sync_ns > 0 ||
               s->hw->copy_issue_ns > 0;
  r->feasible = 1;
  if (detail != NULL && ooc_sim_detail_reserve(detail, p) != OOC_OK)
    return ooc_err_set(err, OOC_ENOMEM, "simulator: out of memory");

  /* Group the timed instructions by stream, keeping index order (counted
   * above). */
  n_timed = 0;
  for (k = 0; k < OOC_NSTREAMS; k++) {
    s->st[k].first = n_timed;
    n_timed += s->st[k].n;
    s->st[k].pos = s->st[k].first;
  }
  for (i = p->prologue_end; i < p->n_instr; i++)
    s->order[s->st[p->instr[i].stream].pos++] = i;
  if (trace != NULL) {
    if (ooc_trace_reserve(trace, n_timed, n_mem) != 0)
      return ooc_err_set(err, OOC_ENOMEM, "simulator: out of memory");
  }

  s->last_iter = 0;
  rc = run_prologue(s);
  if (rc == OOC_EOOM)
    goto out;
  if (rc != OOC_OK)
    return rc;
  for (it = 0; it < s->max_iterations; it++) {
    /* Every iteration's figures replace the previous one's, so that they
     * are the reported iteration's, or the one that ran out of memory's
     * up to its failed ALLOC (its kernels and copies that had started
     * counted whole), and so does the detail's record (but mem_order,
     * which covers every timed iteration). From the iterations-th on,
     * each may be the one reported: the trace records it. */
    s->last_iter = it >= s->iterations - 1;
    s->final_iter = it == s->max_iterations - 1;
    r->compute_busy_ns = r->h2d_busy_ns = r->d2h_busy_ns = 0;
    r->alloc_ns = 0;
    r->recompute_ns = 0;
    r->recompute_flops = 0;
    r->h2d_bytes = r->d2h_bytes = 0;
    r->host_busy_ns = 0;
    memset(r->stall_ns, 0, sizeof r->stall_ns);
    if (detail != NULL)
      ooc_sim_detail_clear(detail);
    if (s->last_iter && trace != NULL)
      trace->n_spans = trace->n_mem = 0;
    s->iter_actions = 0;
    if (detail != NULL && (rc = record_iteration(s)) != OOC_OK)
      return rc;
    if (s->last_iter && s->cutoff > 0) {
      const struct stream *cs = &s->st[OOC_STREAM_COMPUTE];
      s->rem_comp = 0;
      s->comp_end = 0;
      for (i = cs->first; i < cs->first + cs->n; i++)
        if (p->instr[s->order[i]].kind == OOC_I_COMPUTE)
          s->rem_comp += ooc_sim_instr_ns(s, p, s->order[i]);
    }
    rc = run_iteration(s);
    if (detail != NULL)
      detail->iter_first[detail->n_iter] = detail->n_mem_order;
    if (rc != OOC_OK)
      return rc;
    if (!r->feasible) {
      r->iterations = it + 1;   /* the one that ran out */
      goto out;
    }
    if (r->cut) {
      r->iterations = it + 1;
      goto out;
    }
    r->iterations = it + 1;
    r->iteration_ns = s->now - s->t0;
    r->steady = s->iter_actions == 0;
    if (s->last_iter && r->steady)
      break;
  }
out:
  if (!r->feasible)
    r->iteration_ns = 0;
  r->fragmentation = r->peak_reserved > 0
    ? 1.0 - (double)s->peak_res_alloc / (double)r->peak_reserved : 0.0;
  return OOC_OK;
}

/* --- the detail recorder -------------------------------------------------- */

void
ooc_sim_detail_init(ooc_sim_detail *d)
{
  memset(d, 0, sizeof *d);
}

void
ooc_sim_detail_fini(ooc_sim_detail *d)
{
  if (d == NULL)
    return;
  free(d->start_ns);
  free(d->end_ns);
  free(d->stall_ns);
  free(d->stall_cause);
  free(d->free_bytes);
  free(d->exposed_in_ns);
  free(d->exposed_out_ns);
  free(d->mem_order);
  free(d->iter_first);
  memset(d, 0, sizeof *d);
}

#define GROW_TO(ptr, n)                                                      \
  do {                                                                       \
    void *q_ = realloc((ptr), (size_t)(n) * sizeof *(ptr));                  \
    if (q_ == NULL)                                                          \
      return OOC_ENOMEM;                                                     \
    (ptr) = q_;                                                              \
  } while (0)

int
ooc_sim_detail_reserve(ooc_sim_detail *d, const ooc_program *p)
{
  int32_t ni = p->n_instr > 0 ? p->n_instr : 1;
  int32_t nt = p->n_tensors > 0 ? p->n_tensors : 1;

  if (ni > d->cap_instr) {
    GROW_TO(d->start_ns, ni);
    GROW_TO(d->end_ns, ni);
    GROW_TO(d->stall_ns, ni);
    GROW_TO(d->stall_cause, ni);
    GROW_TO(d->free_bytes, ni);
    d->cap_instr = ni;
  }
  if (nt > d->cap_tensors) {
    GROW_TO(d->exposed_in_ns, nt);
    GROW_TO(d->exposed_out_ns, nt);
    d->cap_tensors = nt;
  }
  d->n_instr = p->n_instr;
  d->n_tensors = p->n_tensors;
  d->n_mem_order = d->n_iter = 0;
  ooc_sim_detail_clear(d);
  return OOC_OK;
}

void
ooc_sim_detail_clear(ooc_sim_detail *d)
{
  int32_t i;

  for (i = 0; i < d->n_instr; i++) {
    d->start_ns[i] = d->end_ns[i] = -1;
    d->stall_ns[i] = 0;
    d->stall_cause[i] = OOC_STALL_OTHER;
    d->free_bytes[i] = 0;
  }
  memset(d->exposed_in_ns, 0, (size_t)d->n_tensors * sizeof *d->exposed_in_ns);
  memset(d->exposed_out_ns, 0,
         (size_t)d->n_tensors * sizeof *d->exposed_out_ns);
}
