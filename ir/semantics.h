/* ir/semantics.h — the program's semantics, written once: the state of
 * every tensor and the rules an instruction must obey to start, used by
 * every interpreter of a program (the simulator now, the executor next) and
 * by the checker that validates a program before it runs.
 *
 * Tensor state (docs/program-ir.md, "Semantics"): allocated on the device
 * or not, holding valid data there or not, a pinned host buffer or not,
 * holding valid data there or not, and the number of copies in flight. The
 * rules:
 *   - a COMPUTE touches only allocated tensors; those it reads hold valid
 *     data; it writes none with a copy in flight; its outputs become valid
 *     when it completes;
 *   - an H2D needs the tensor allocated and no copy of it in flight; a D2H
 *     needs it allocated and valid; neither may touch a tensor the running
 *     kernel writes (D2H) or uses (H2D); the copied data become valid when
 *     the copy completes;
 *   - a HOST step (the CPU optimizer of an offloaded layer) touches host
 *     copies only: those it reads allocated and valid, those it writes
 *     allocated with no copy in flight; they become valid when it
 *     completes, and from its start the device copy of a tensor it writes
 *     is stale (the updated weights must be copied in before a kernel
 *     reads them);
 *   - a FREE needs its tensor allocated and no copy of it in flight, and
 *     from a copy stream it may not free what the running kernel uses;
 *   - an ALLOC of a live tensor is an error. Whether memory can be found is
 *     the placement policy's answer (alloc/alloc.h); when it cannot, the
 *     interpreter reports out of memory (never a wait).
 * An interpreter calls ooc_sem_check() before an instruction starts (for
 * an ALLOC: before asking the allocator), ooc_sem_start() when it starts
 * and ooc_sem_finish() when it completes; prologue instructions go through
 * ooc_sem_prologue() (they run at once, and what they allocate holds valid
 * data).
 *
 * ooc_program_validate() is the static checker built on the same rules:
 * the structure (ooc_program_check_structure), one run of the prologue and
 * two of the timed part in index order (a valid order: waits point
 * backwards) through the rules above (the second from the state the first
 * leaves, as the next iteration starts: a stale device copy shows there),
 * the iteration leaving allocations as it found them, and a happens-before
 * check: any two accesses to a tensor's device
 * or host copy from different streams, one of them a write (a kernel's
 * output, a copy's destination, an ALLOC or FREE), must be ordered by
 * stream order and waits (vector clocks), so that no timing of a real
 * device can make them race.
 *
 * Ownership: ooc_sem is caller-embedded (_init/_fini); it borrows the
 * program bound by ooc_sem_reset(). Check, start and finish are O(args of
 * the instruction and of the running kernel) and never allocate.
 */
#ifndef OOC_SEMANTICS_H
#define OOC_SEMANTICS_H

#include <stdint.h>
#include "base/error.h"
#include "ir/model.h"
#include "ir/program.h"

/* Tensor state bits. */
enum {
  OOC_TS_DEV = 1,     /* allocated on the device */
  OOC_TS_VALID = 2,   /* the device copy holds valid data */
  OOC_TS_HOST = 4,    /* a pinned host buffer is allocated */
  OOC_TS_HVALID = 8,  /* the host copy holds valid data */
  OOC_TS_STALE = 16   /* the device copy lost its validity to a HOST step
                         that rewrites the tensor (the updated weights
                         must be copied in before the device reads them) */
};

typedef struct ooc_sem {
  const ooc_program *p;
  int32_t cap;          /* tensors the arrays hold */
  uint8_t *flags;       /* OOC_TS_* per tensor */
  uint8_t *inflight;    /* copies in flight per tensor */
  int32_t running;      /* the COMPUTE running on the compute stream, -1 */
} ooc_sem;

void ooc_sem_init(ooc_sem *s);
void ooc_sem_fini(ooc_sem *s);
/* Bind s to p with every tensor absent and no kernel running. Grows the
 * arrays when p has more tensors than before (OOC_ENOMEM). */
int ooc_sem_reset(ooc_sem *s, const ooc_program *p);

/* May instruction i start now? OOC_OK, or OOC_EINVAL with err naming the
 * instruction (index, kind, phase, layer) and the tensor at fault, e.g.
 * "instruction 12 (COMPUTE bwd, layer 3): reads tensor 7 (layer 2) while
 * it is still being copied in". No state changes. */
int ooc_sem_check(const ooc_sem *s, int32_t i, ooc_err *err);
/* Instruction i (checked) starts: copies in flight, an ALLOC's tensor live
 * (no valid data yet), a FREE's tensor gone, the running kernel. */
void ooc_sem_start(ooc_sem *s, int32_t i);
/* Formats a rule violation into err; OOC_EINVAL. (The rules below call
 * it; interpreters do not need to.) */
int ooc_sem_fail(const ooc_sem *s, int32_t i, const char *verb, int32_t t,
                 const char *what, ooc_err *err);

/* The rules themselves, inline: the simulator applies them to every
 * instruction of thousands of runs, so they must cost no call. */
/* Does the running kernel touch tensor t (with write_only, write it)? */
static inline int
ooc_sem_kernel_uses(const ooc_sem *s, int32_t t, int write_only)
{
  const ooc_instr *in;
  int32_t k;

  if (s->running < 0)
    return 0;
  in = &s->p->instr[s->running];
  for (k = 0; k < in->n_args; k++) {
    int32_t a = s->p->args[in->arg_first + k];
    if (OOC_ARG_TENSOR(a) == t && (!write_only || (a & OOC_ARG_WRITE)))
      return 1;
  }
  return 0;
}

/* Does any arg of in break the rule of its copy at once? A read needs
 * the copy allocated (bit live) and valid (bit valid), a write it
 * allocated with no copy of the tensor in flight. One pass without
 * branches per argument: the device copies for a COMPUTE (OOC_TS_DEV,
 * OOC_TS_VALID), the host copies for a HOST (OOC_TS_HOST,
 * OOC_TS_HVALID). Nonzero: some arg does (ooc_sem_check names it). */
static inline unsigned
ooc_sem_args_bad(const ooc_sem *s, const ooc_instr *in, unsigned live,
                 unsigned valid)
{
  const int32_t *ar = s->p->args + in->arg_first;
  unsigned bad = 0;
  int32_t k;

  for (k = 0; k < in->n_args; k++) {
    int32_t a = ar[k];
    int32_t u = OOC_ARG_TENSOR(a);
    unsigned fu = s->flags[u];
    bad |= (a & OOC_ARG_WRITE) ? ((~fu & live) | s->inflight[u])
                               : (~fu & (live | valid));
  }
  return bad;
}

/* The host copies a HOST step writes: valid (its completion) or not (its
 * start: they hold no valid data until it completes). The step rewrites
 * the tensor, so from its start a device copy holds old data: stale until
 * a copy in (or a kernel) writes it. */
static inline void
ooc_sem_host_writes(ooc_sem *s, const ooc_instr *in, int valid)
{
  const int32_t *ar = s->p->args + in->arg_first;
  int32_t k;

  for (k = 0; k < in->n_args; k++)
    if (ar[k] & OOC_ARG_WRITE) {
      uint8_t *f = &s->flags[OOC_ARG_TENSOR(ar[k])];
      if (valid)
        *f = (uint8_t)(*f | OOC_TS_HVALID);
      else if (*f & OOC_TS_VALID)
        *f = (uint8_t)((*f & ~(OOC_TS_HVALID | OOC_TS_VALID)) |
                       OOC_TS_STALE);
      else
        *f = (uint8_t)(*f & ~OOC_TS_HVALID);
    }
}

/* A HOST step starts. */
static inline void
ooc_sem_host_start(ooc_sem *s, const ooc_instr *in)
{
  ooc_sem_host_writes(s, in, 0);
}

static inline int
ooc_sem_check_inline(const ooc_sem *s, int32_t i, ooc_err *err)
{
  const ooc_program *p = s->p;
  const ooc_instr *in = &p->instr[i];
  int32_t t = in->tensor, k;
  uint8_t f;

  switch (in->kind) {
  case OOC_I_COMPUTE: {
    /* Fast path; only a violation takes the loop that names it. */
    if (ooc_sem_args_bad(s, in, OOC_TS_DEV, OOC_TS_VALID) == 0)
      return OOC_OK;
    for (k = 0; k < in->n_args; k++) {
      int32_t a = p->args[in->arg_first + k];
      int32_t u = OOC_ARG_TENSOR(a);
      f = s->flags[u];
      if (!(f & OOC_TS_DEV))
        return ooc_sem_fail(s, i, a & OOC_ARG_WRITE ? "writes" : "reads", u,
                    "which is not allocated on the device", err);
      if (a & OOC_ARG_WRITE) {
        if (s->inflight[u])
          return ooc_sem_fail(s, i, "writes", u, "while a copy of it is in flight",
                      err);
      } else if (!(f & OOC_TS_VALID)) {
        return ooc_sem_fail(s, i, "reads", u,
                    s->inflight[u] ? "while it is still being copied in"
                    : (f & OOC_TS_STALE)
                        ? "whose device copy a host optimizer step has "
                          "updated since (no copy in brought the new data)"
                        : "before any data was written to it",
                    err);
      }
    }
    return OOC_OK;
  }
  case OOC_I_H2D:
  case OOC_I_D2H: {
    int d2h = in->kind == OOC_I_D2H;
    f = s->flags[t];
    if (!(f & OOC_TS_DEV))
      return ooc_sem_fail(s, i, d2h ? "copies out" : "copies into", t,
                  "which is not allocated on the device", err);
    if (d2h && !(f & OOC_TS_VALID))
      return ooc_sem_fail(s, i, "copies out", t,
                          (f & OOC_TS_STALE)
                              ? "whose device copy a host optimizer step has "
                                "updated since"
                              : "which holds no valid data", err);
    if (d2h && !(f & OOC_TS_HOST))
      return ooc_sem_fail(s, i, "copies out", t, "which has no pinned host buffer",
                  err);
    if (!d2h && s->inflight[t])
      return ooc_sem_fail(s, i, "copies into", t, "while a copy of it is in flight",
                  err);
    if (!d2h && !(f & OOC_TS_HVALID))
      return ooc_sem_fail(s, i, "copies into", t, "whose host copy holds no valid "
                  "data", err);
    if (ooc_sem_kernel_uses(s, t, d2h))
      return ooc_sem_fail(s, i, d2h ? "copies out" : "copies into", t,
                  d2h ? "while the running kernel writes it"
                      : "while the running kernel uses it", err);
    return OOC_OK;
  }
  case OOC_I_HOST:
    for (k = 0; k < in->n_args; k++) {
      int32_t a = p->args[in->arg_first + k];
      int32_t u = OOC_ARG_TENSOR(a);
      f = s->flags[u];
      if (!(f & OOC_TS_HOST))
        return ooc_sem_fail(s, i, a & OOC_ARG_WRITE ? "writes the host copy of"
                                                    : "reads the host copy of",
                            u, "which has no host buffer", err);
      if (a & OOC_ARG_WRITE) {
        if (s->inflight[u])
          return ooc_sem_fail(s, i, "writes the host copy of", u,
                              "while a copy of it is in flight", err);
      } else if (!(f & OOC_TS_HVALID)) {
        return ooc_sem_fail(s, i, "reads the host copy of", u,
                            s->inflight[u] ? "while it is still being copied out"
                                           : "which holds no valid data", err);
      }
    }
    return OOC_OK;
  case OOC_I_ALLOC:
    if (in->where == OOC_WHERE_HOST)
      return (s->flags[t] & OOC_TS_HOST)
                 ? ooc_sem_fail(s, i, "allocates host buffer of", t,
                        "which is already allocated", err)
                 : OOC_OK;
    return (s->flags[t] & OOC_TS_DEV)
               ? ooc_sem_fail(s, i, "allocates", t, "which is already live", err)
               : OOC_OK;
  case OOC_I_FREE:
    if (in->where == OOC_WHERE_HOST) {
      if (!(s->flags[t] & OOC_TS_HOST))
        return ooc_sem_fail(s, i, "frees host buffer of", t, "which is absent", err);
      return OOC_OK;
    }
    if (!(s->flags[t] & OOC_TS_DEV))
      return ooc_sem_fail(s, i, "frees", t, "which is not allocated", err);
    if (s->inflight[t])
      return ooc_sem_fail(s, i, "frees", t, "while a copy of it is in flight", err);
    if (in->stream != OOC_STREAM_COMPUTE && ooc_sem_kernel_uses(s, t, 0))
      return ooc_sem_fail(s, i, "frees", t, "while the running kernel uses it", err);
    return OOC_OK;
  default:
    return OOC_OK;
  }
}

static inline void
ooc_sem_start_inline(ooc_sem *s, int32_t i)
{
  const ooc_instr *in = &s->p->instr[i];
  int32_t t = in->tensor;

  switch (in->kind) {
  case OOC_I_COMPUTE:
    s->running = i;
    break;
  case OOC_I_HOST:
    ooc_sem_host_start(s, in);
    break;
  case OOC_I_H2D:
    s->flags[t] &= (uint8_t)~OOC_TS_VALID;
    s->inflight[t]++;
    break;
  case OOC_I_D2H:
    s->flags[t] &= (uint8_t)~OOC_TS_HVALID;
    s->inflight[t]++;
    break;
  case OOC_I_ALLOC:
    if (in->where == OOC_WHERE_HOST)
      s->flags[t] = (uint8_t)((s->flags[t] & ~OOC_TS_HVALID) | OOC_TS_HOST);
    else
      s->flags[t] = (uint8_t)((s->flags[t] & ~(OOC_TS_VALID | OOC_TS_STALE)) |
                              OOC_TS_DEV);
    break;
  case OOC_I_FREE:
    if (in->where == OOC_WHERE_HOST)
      s->flags[t] &= (uint8_t)~(OOC_TS_HOST | OOC_TS_HVALID);
    else
      s->flags[t] &= (uint8_t)~(OOC_TS_DEV | OOC_TS_VALID | OOC_TS_STALE);
    break;
  default:
    break;
  }
}

/* The rules per kind, for an interpreter that already dispatches on the
 * kind (the simulator: one switch per instruction, not three). Each
 * begin_* tests the rules of its kind on the state bits at once and
 * applies the start; only a violation calls ooc_sem_check, which names
 * it. ooc_sem_begin and ooc_sem_finish below dispatch to them, so they
 * are the one implementation; tests/check_program.c checks them against
 * ooc_sem_check + ooc_sem_start. */
static inline int
ooc_sem_begin_compute(ooc_sem *s, int32_t i, const ooc_instr *in,
                      ooc_err *err)
{
  if (ooc_sem_args_bad(s, in, OOC_TS_DEV, OOC_TS_VALID) != 0)
    return ooc_sem_check(s, i, err);
  s->running = i;
  return OOC_OK;
}

static inline int
ooc_sem_begin_h2d(ooc_sem *s, int32_t i, int32_t t, ooc_err *err)
{
  unsigned f = s->flags[t];

  if ((f & (OOC_TS_DEV | OOC_TS_HVALID)) != (OOC_TS_DEV | OOC_TS_HVALID) ||
      s->inflight[t] || ooc_sem_kernel_uses(s, t, 0))
    return ooc_sem_check(s, i, err);
  s->flags[t] = (uint8_t)(f & ~OOC_TS_VALID);
  s->inflight[t]++;
  return OOC_OK;
}

static inline int
ooc_sem_begin_d2h(ooc_sem *s, int32_t i, int32_t t, ooc_err *err)
{
  unsigned f = s->flags[t];

  if ((f & (OOC_TS_DEV | OOC_TS_VALID | OOC_TS_HOST)) !=
          (OOC_TS_DEV | OOC_TS_VALID | OOC_TS_HOST) ||
      ooc_sem_kernel_uses(s, t, 1))
    return ooc_sem_check(s, i, err);
  s->flags[t] = (uint8_t)(f & ~OOC_TS_HVALID);
  s->inflight[t]++;
  return OOC_OK;
}

static inline int
ooc_sem_begin_alloc(ooc_sem *s, int32_t i, const ooc_instr *in, ooc_err *err)
{
  int32_t t = in->tensor;
  unsigned f = s->flags[t];

  if (in->where == OOC_WHERE_HOST) {
    if (f & OOC_TS_HOST)
      return ooc_sem_check(s, i, err);
    s->flags[t] = (uint8_t)((f & ~OOC_TS_HVALID) | OOC_TS_HOST);
  } else {
    if (f & OOC_TS_DEV)
      return ooc_sem_check(s, i, err);
    s->flags[t] = (uint8_t)((f & ~(OOC_TS_VALID | OOC_TS_STALE)) |
                            OOC_TS_DEV);
  }
  return OOC_OK;
}

static inline int
ooc_sem_begin_free(ooc_sem *s, int32_t i, const ooc_instr *in, ooc_err *err)
{
  int32_t t = in->tensor;
  unsigned f = s->flags[t];

  if (in->where == OOC_WHERE_HOST) {
    if (!(f & OOC_TS_HOST))
      return ooc_sem_check(s, i, err);
    s->flags[t] = (uint8_t)(f & ~(OOC_TS_HOST | OOC_TS_HVALID));
  } else {
    if (!(f & OOC_TS_DEV) || s->inflight[t] ||
        (in->stream != OOC_STREAM_COMPUTE && ooc_sem_kernel_uses(s, t, 0)))
      return ooc_sem_check(s, i, err);
    s->flags[t] = (uint8_t)(f & ~(OOC_TS_DEV | OOC_TS_VALID |
                                  OOC_TS_STALE));
  }
  return OOC_OK;
}

/* A host optimizer step starts: its args are host copies, a read needs
 * one allocated and valid, a write one allocated with no copy in flight
 * (it is rewritten until the step completes). */
static inline int
ooc_sem_begin_host(ooc_sem *s, int32_t i, const ooc_instr *in, ooc_err *err)
{
  if (ooc_sem_args_bad(s, in, OOC_TS_HOST, OOC_TS_HVALID) != 0)
    return ooc_sem_check(s, i, err);
  ooc_sem_host_start(s, in);
  return OOC_OK;
}

/* A host optimizer step completes: the host copies it writes hold valid
 * data. */
static inline void
ooc_sem_finish_host(ooc_sem *s, const ooc_instr *in)
{
  ooc_sem_host_writes(s, in, 1);
}

/* A kernel completes: its outputs hold valid data. */
static inline void
ooc_sem_finish_compute(ooc_sem *s, int32_t i, const ooc_instr *in)
{
  const int32_t *ar = s->p->args + in->arg_first;
  int32_t k;

  for (k = 0; k < in->n_args; k++)
    s->flags[OOC_ARG_TENSOR(ar[k])] |=
        (uint8_t)((ar[k] & OOC_ARG_WRITE) ? OOC_TS_VALID : 0);
  if (s->running == i)
    s->running = -1;
}

/* A copy of tensor t completes (d2h: to the host): its destination holds
 * valid data and the copy is no longer in flight. */
static inline void
ooc_sem_finish_copy(ooc_sem *s, int32_t t, int d2h)
{
  s->inflight[t]--;
  s->flags[t] = d2h ? (uint8_t)(s->flags[t] | OOC_TS_HVALID)
                    : (uint8_t)((s->flags[t] | OOC_TS_VALID) & ~OOC_TS_STALE);
}

/* Instruction i completes: a kernel's outputs and a copy's destination
 * hold valid data; the copy is no longer in flight (ALLOC and FREE change
 * nothing at completion). */
static inline void
ooc_sem_finish(ooc_sem *s, int32_t i)
{
  const ooc_instr *in = &s->p->instr[i];

  switch (in->kind) {
  case OOC_I_COMPUTE:
    ooc_sem_finish_compute(s, i, in);
    break;
  case OOC_I_HOST:
    ooc_sem_finish_host(s, in);
    break;
  case OOC_I_H2D:
  case OOC_I_D2H:
    ooc_sem_finish_copy(s, in->tensor, in->kind == OOC_I_D2H);
    break;
  default:
    break;
  }
}

/* ooc_sem_check, then ooc_sem_start when it passes: what an interpreter
 * calls as i starts. For an ALLOC the placement comes after; if it fails
 * the run ends (out of memory), so the state it leaves does not matter. */
static inline int
ooc_sem_begin(ooc_sem *s, int32_t i, ooc_err *err)
{
  const ooc_instr *in = &s->p->instr[i];

  switch (in->kind) {
  case OOC_I_COMPUTE: return ooc_sem_begin_compute(s, i, in, err);
  case OOC_I_HOST: return ooc_sem_begin_host(s, i, in, err);
  case OOC_I_H2D: return ooc_sem_begin_h2d(s, i, in->tensor, err);
  case OOC_I_D2H: return ooc_sem_begin_d2h(s, i, in->tensor, err);
  case OOC_I_ALLOC: return ooc_sem_begin_alloc(s, i, in, err);
  case OOC_I_FREE: return ooc_sem_begin_free(s, i, in, err);
  default: return OOC_OK;
  }
}

/* Prologue instruction i runs at once: checked, started and finished; an
 * ALLOC's data count as valid (weights, the input batch). */
int ooc_sem_prologue(ooc_sem *s, int32_t i, ooc_err *err);

static inline uint8_t
ooc_sem_flags(const ooc_sem *s, int32_t t)
{
  return s->flags[t];
}

/* Structure, the rules above in index order, balanced iteration and the
 * happens-before check. OOC_OK, OOC_EINVAL naming the instruction (and
 * for a race, both instructions), or OOC_ENOMEM. O(instructions + waits
 * + args). */
int ooc_program_validate(const ooc_program *p, ooc_err *err);

/* HOST instruction i (docs/offload.md) against the model: it steps a
 * layer with parameters and names, for that layer, the weights and
 * optimizer state it writes and the gradients it reads, each at least as
 * large as the step touches (n fp32 weights and gradients; n state values
 * with momentum, 2n with Adam), so that the step stays inside them. The
 * simulator and the executor both refuse a program that breaks it, with
 * the same message ("program: instruction 72 (HOST) steps layer 0, which
 * has no parameters"). O(args of i). */
int ooc_program_check_host_step(const ooc_model *m, const ooc_program *p,
                                int32_t i, ooc_err *err);

#endif
