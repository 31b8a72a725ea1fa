/* ir/program.h — the program IR: what the simulator predicts and the
 * executor replays. docs/program-ir.md documents it.
 *
 * A program is a list of instructions, each on one stream:
 *   stream 0  compute      COMPUTE (forward, backward, recompute, update),
 *                          and ALLOC/FREE of what compute uses
 *   stream 1  H2D copies   H2D (swap-in) and the ALLOC of its destination
 *   stream 2  D2H copies   D2H (swap-out) and the FREE that follows it
 *   stream 3  host         HOST (the CPU optimizer step of a layer whose
 *                          parameters are offloaded), and ALLOC/FREE
 * Within a stream, instructions run in index order. An instruction may also
 * wait on the completion of any instruction with a smaller index (the
 * "event" of that instruction), so the index order is always a valid
 * topological order and a program cannot deadlock except on memory.
 *
 * Instructions with index < prologue_end set up persistent state (weights,
 * gradients, optimizer state, the input batch, pinned host buffers). The
 * simulator runs them once, at no cost, before the timed iterations.
 *
 * Each COMPUTE lists the tensors it touches in args[] (tensor id, with
 * OOC_ARG_WRITE set for outputs), so the simulator can check that nothing is
 * read while absent, in flight or freed, and the executor knows its buffers.
 *
 * Which kinds may go on which stream: COMPUTE only on the compute stream,
 * H2D only on the H2D stream, D2H only on the D2H stream, HOST only on the
 * host stream; ALLOC and FREE on
 * any stream (they run in that stream's order, taking the allocator's cost
 * as stream time).
 *
 * The timed part [prologue_end, n_instr) is run several times in a row, so
 * it must leave every tensor's allocation state (device and host) as it
 * found it: what it allocates it frees, and what it frees it allocates
 * again. ooc_program_validate() (ir/semantics.h) checks this.
 *
 * Ownership: ooc_program is caller-embedded: ooc_program_init() and
 * ooc_program_fini(); arrays grow geometrically (amortised O(1) appends) and
 * are reused by ooc_program_reset(), so a planner lowering thousands of
 * candidate plans allocates only on growth.
 */
#ifndef OOC_PROGRAM_H
#define OOC_PROGRAM_H

#include <stdint.h>
#include "base/error.h"
#include "ir/model.h"

enum { OOC_STREAM_COMPUTE = 0, OOC_STREAM_H2D = 1, OOC_STREAM_D2H = 2,
       OOC_STREAM_HOST = 3, OOC_NSTREAMS = 4 };

typedef enum {
  OOC_I_COMPUTE = 0,
  OOC_I_H2D,        /* host -> device copy of tensor (swap-in) */
  OOC_I_D2H,        /* device -> host copy of tensor (swap-out) */
  OOC_I_ALLOC,      /* allocate tensor's bytes (device or pinned host) */
  OOC_I_FREE,       /* release it */
  OOC_I_HOST,       /* the optimizer step of one layer on the CPU: its args
                       name host copies (parameter offload) */
  OOC_I_COUNT
} ooc_instr_kind;

typedef enum {
  OOC_PH_FWD = 0, OOC_PH_BWD, OOC_PH_RECOMP, OOC_PH_UPDATE, OOC_PH_NONE,
  OOC_PH_COUNT
} ooc_phase;

enum { OOC_WHERE_DEVICE = 0, OOC_WHERE_HOST = 1 };

typedef enum {
  OOC_T_PARAM = 0,  /* weights + weight gradients + optimizer state */
  OOC_T_INPUT,      /* the input batch */
  OOC_T_ACT,        /* a forward output (+ what backward saves) */
  OOC_T_GRAD,       /* gradient w.r.t. a forward output */
  OOC_T_WORKSPACE,  /* scratch of one kernel */
  OOC_T_WGRAD,      /* weight gradients of a layer whose optimizer runs on
                       the host (kept apart from its weights) */
  OOC_T_OPTSTATE,   /* that layer's master weights and optimizer state,
                       in host memory only */
  OOC_T_COUNT
} ooc_tensor_kind;

typedef struct ooc_ptensor {
  uint64_t bytes;
  int32_t layer;    /* model layer it belongs to (storage layer) */
  uint8_t kind;     /* ooc_tensor_kind */
} ooc_ptensor;

#define OOC_ARG_WRITE 0x40000000
#define OOC_ARG_TENSOR(a) ((a) & ~OOC_ARG_WRITE)

typedef struct ooc_instr {
  uint8_t kind;     /* ooc_instr_kind */
  uint8_t stream;   /* OOC_STREAM_* */
  uint8_t phase;    /* ooc_phase (COMPUTE), OOC_PH_NONE otherwise */
  uint8_t where;    /* ALLOC/FREE: OOC_WHERE_* */
  uint8_t algo;     /* COMPUTE: the kernel algorithm (ir/algo.h), 0 the
                       default; 0 for every other kind */
  int32_t layer;    /* COMPUTE: layer; others: the tensor's layer */
  int32_t tensor;   /* H2D/D2H/ALLOC/FREE: tensor id; COMPUTE: -1 */
  int32_t arg_first, n_args;   /* COMPUTE: slice of args[] */
  int32_t wait_first, n_waits; /* slice of waits[] (instruction indices) */
} ooc_instr;

typedef struct ooc_program {
  int32_t n_instr, cap_instr;
  ooc_instr *instr;
  int32_t n_args, cap_args;
  int32_t *args;
  int32_t n_waits, cap_waits;
  int32_t *waits;
  int32_t n_tensors, cap_tensors;
  ooc_ptensor *tensors;
  int32_t prologue_end;        /* first timed instruction */
  uint64_t model_fingerprint;  /* ooc_model.fingerprint it was built for */
  int32_t n_layers;
} ooc_program;

void ooc_program_init(ooc_program *p);
void ooc_program_fini(ooc_program *p);
/* Empty the program, keeping its capacity. */
void ooc_program_reset(ooc_program *p);

/* Is tensor t's host buffer pinned? Every one but an offloaded layer's
 * optimizer state, which only the CPU touches (ordinary memory, counted
 * against host.memory_GiB but not host.pinned_GiB). The simulator and
 * the executor both ask here. */
static inline int
ooc_program_host_pinned(const ooc_program *p, int32_t t)
{
  return p->tensors[t].kind != OOC_T_OPTSTATE;
}

/* Append a tensor; returns its id (>= 0) or OOC_ENOMEM. */
int32_t ooc_program_tensor(ooc_program *p, ooc_tensor_kind kind, int32_t layer,
                           uint64_t bytes);

/* Append an instruction; returns its index (>= 0) or OOC_ENOMEM. Waits and
 * args are then added to this last instruction only. */
int32_t ooc_program_emit(ooc_program *p, ooc_instr_kind kind, int stream,
                         ooc_phase phase, int32_t layer, int32_t tensor,
                         int where);
/* Make the last instruction wait for instruction `on` (< its index). A
 * negative `on` is ignored, so callers can pass "none" (-1) directly. */
int ooc_program_wait(ooc_program *p, int32_t on);
/* Name the kernel algorithm of the last (COMPUTE) instruction. */
int ooc_program_algo(ooc_program *p, int algo);
/* Add a tensor argument to the last (COMPUTE) instruction. */
int ooc_program_arg(ooc_program *p, int32_t tensor, int write);

/* The structural half of validation (stream/kind pairs, phases, indices
 * in range, waits pointing backwards, arg slices); the semantic half is
 * ooc_program_validate (ir/semantics.h). It needs no scratch memory, so
 * the simulator runs it on every program. O(instructions + waits +
 * args). */
int ooc_program_check_structure(const ooc_program *p, ooc_err *err);

/* Byte-exact equality (round-trip tests). */
int ooc_program_equal(const ooc_program *a, const ooc_program *b);

const char *ooc_instr_kind_name(ooc_instr_kind k);
const char *ooc_phase_name(ooc_phase ph);
const char *ooc_tensor_kind_name(ooc_tensor_kind k);

#endif
