/* executor/executor.h — replay a program on real hardware and measure it:
 * the other half of the contract the simulator predicts
 * (docs/executor.md, docs/program-ir.md "For executor authors").
 *
 * The executor takes the very program the simulator ran (ir/program.h),
 * the model it was lowered from, the allocator policy with its options and
 * budget, and the order in which the simulator's allocator saw the device
 * ALLOC and FREE instructions (ooc_sim_detail.mem_order / iter_first: the
 * caller runs the simulator first; the executor never calls sim/). It
 * then:
 *   - runs the prologue once, in index order, giving every parameter and
 *     the input batch real, seeded data;
 *   - builds every kernel (primitives, plans) before timing starts;
 *   - runs W warm-up and N timed iterations, each on one thread per
 *     program stream (compute, H2D, D2H) that runs its instructions in
 *     index order and honours every wait, with the tensor-state rules of
 *     ir/semantics.h checked as each instruction starts and completes, and
 *     with device memory placed by the same allocator policy (alloc/) in
 *     the simulator's recorded order, its driver actions performed for
 *     real (segments, virtual ranges, physical chunks);
 *   - measures every instruction's start and end into an ooc_trace (the
 *     simulator's format) and reports the median iteration time, per-stream
 *     busy time and the arena's real high-water marks.
 * An ALLOC the policy cannot satisfy ends the run infeasible with the
 * simulator's report (ooc_oom, alloc/alloc.h); a rule broken is the
 * simulator's OOC_EINVAL message.
 *
 * Backends (cpu: oneDNN kernels on host memory; cuda: cuDNN/cuBLAS on a
 * GPU) sit behind one GSL-style descriptor (executor/backend.h, for
 * backend authors); everything but their kernels and driver calls is
 * shared, so the logic a GPU run exercises is tested on the CPU.
 *
 * Ownership: ooc_exec_alloc() returns an object that owns its backend
 * state, arena, allocator state and threads, and borrows the config's
 * model, program, hw, allocator order and option strings, which must
 * outlive it; ooc_exec_free() releases everything (accepts NULL). A trace
 * passed to ooc_exec_run() is caller-owned (ooc_trace_init/_fini).
 */
#ifndef OOC_EXECUTOR_H
#define OOC_EXECUTOR_H

#include <stddef.h>
#include <stdint.h>
#include "base/error.h"
#include "ir/model.h"
#include "ir/hw.h"
#include "ir/program.h"
#include "ir/trace.h"
#include "alloc/alloc.h"

/* --- backends ------------------------------------------------------------- */

/* The host side of a device API, measured by its backend for calibrate
 * (ns, medians). */
typedef struct ooc_exec_host_api {
  int64_t copy_issue_ns;  /* an asynchronous 64 KiB H2D copy's issue call */
  int64_t event_sync_ns;  /* record and synchronise an event, idle stream */
  int64_t busy_ns;        /* the work queued for the next two */
  int64_t free_idle_ns;   /* freeing a 2 MiB segment, device idle */
  int64_t free_busy_ns;   /* the same with busy_ns of work just queued */
  /* One granularity-sized chunk in a reserved range (0 when the device
   * has no virtual memory management): cuMemMap and cuMemSetAccess apart,
   * and cuMemUnmap idle and with busy_ns of work just queued (whether the
   * driver itself waits; the executor synchronises first anyway). */
  int64_t map_ns, access_ns, unmap_idle_ns, unmap_busy_ns;
} ooc_exec_host_api;

/* A backend descriptor; executor/backend.h defines it. */
typedef struct ooc_exec_backend ooc_exec_backend;

/* The backends this build has, NULL-terminated ("cpu" when oneDNN was
 * found, "cuda" when CUDA and cuDNN were). */
extern const ooc_exec_backend *const ooc_exec_backends[];

/* Lookup by name; on failure (OOC_ENOTFOUND) err lists the ones built. */
const ooc_exec_backend *ooc_exec_backend_find(const char *name, ooc_err *err);
const char *ooc_exec_backend_name(const ooc_exec_backend *b);
const char *ooc_exec_backend_summary(const ooc_exec_backend *b);
/* Can the backend run here now? OOC_OK, or OOC_EUNSUP with err saying why
 * (e.g. "cuda: no CUDA device (cudaGetDeviceCount: no CUDA-capable device
 * is detected)"). Cheap; starts nothing that stays. */
int ooc_exec_backend_probe(const ooc_exec_backend *b, ooc_err *err);

/* --- a run ---------------------------------------------------------------- */

typedef struct ooc_exec_config {
  const ooc_exec_backend *backend;
  const ooc_model *model;       /* the model the program was lowered from
                                   (its fingerprint must match) */
  const ooc_program *program;
  const ooc_hw *hw;             /* as given to the simulator: va chunk and
                                   granularity defaults, host_mem; may be
                                   NULL */
  const ooc_allocator_type *allocator;
  const char *allocator_options;  /* "key=value:key" or NULL */
  uint64_t budget;              /* device bytes (0: hw->mem_usable) */
  uint64_t chunk_bytes;         /* va chunk (0: the profile's) */
  /* The allocator order, as ooc_sim_detail records it: iteration k's
   * device ALLOC/FREE instruction indices are mem_order[iter_first[k] ..
   * iter_first[k + 1]), k < n_iter. Iteration j of the executor (warm-up
   * ones included) follows the simulator's iteration min(j, n_iter - 1).
   * mem_order NULL: requests are placed in the order they come (the
   * placements then follow the real timing and may differ from the
   * simulator's). */
  const int32_t *mem_order;
  const int32_t *iter_first;
  int32_t n_iter;
  int warmup;                   /* untimed iterations first (>= 0) */
  int iterations;               /* timed iterations (>= 1; 0: 3) */
  int threads;                  /* kernel threads (0: the backend's
                                   default; the cpu backend's is 1) */
  uint64_t seed;                /* data, labels and dropout masks */
  double link_GBps;             /* cpu: pace copies to this rate (0: as
                                   fast as memcpy goes) */
  int verify;                   /* checksum every swapped tensor at
                                   swap-out and after swap-in */
  /* Calibration only (executor/calibrate.c): when not NULL, a kernel the
   * backend refuses to build (prepare() fails: no kernel of its algorithm
   * for the layer) is not an error: refused[instruction] is set to 1 and
   * the instruction completes without running, its outputs unwritten.
   * The caller zeroes program->n_instr bytes. */
  uint8_t *refused;
} ooc_exec_config;

typedef struct ooc_exec_result {
  int feasible;                 /* 0: an ALLOC could not be satisfied */
  ooc_oom oom;                  /* valid when !feasible; time_ns measured */
  int warmup, iterations;       /* iterations that ran (timed ones
                                   completed) */
  int64_t iteration_ns;         /* median of the timed iterations */
  int64_t min_iteration_ns, max_iteration_ns;
  /* The last timed iteration: time each stream spent in kernels, copies
   * or the host's optimizer steps (not counting its ALLOC/FREE), and in
   * ALLOC/FREE, as the simulator's compute/h2d/d2h/host_busy_ns and
   * alloc_ns. */
  int64_t compute_busy_ns, h2d_busy_ns, d2h_busy_ns, alloc_ns;
  int64_t host_busy_ns;
  uint64_t h2d_bytes, d2h_bytes;  /* per iteration */
  /* The arena's real high-water marks over the whole run: bytes of live
   * tensors, and bytes held from the device (segments mapped, chunks
   * created), counted from the driver actions performed. */
  uint64_t peak_allocated, peak_reserved;
  uint64_t drv_actions[OOC_DRV_COUNT];  /* actions performed, whole run */
  uint64_t peak_host_pinned;    /* pinned host bytes at peak */
  uint64_t host_unpinned_bytes; /* host buffers that could not be pinned
                                   (mlock refused): they were used
                                   pageable */
  uint64_t side_bytes;          /* backend memory outside the arena (see
                                   docs/executor.md: scratch that does not
                                   fit the program's workspace, norm
                                   statistics, pooling indices) */
  double link_GBps;             /* the pacing in effect (0: none) */
  double loss;                  /* mean loss of the last iteration */
  uint64_t verify_checked, verify_mismatches;
  char verify_first[160];       /* the first mismatch, "" when none */
  char note[256];               /* the backend's line: library, threads,
                                   what was not as asked (mlock) */
} ooc_exec_result;

typedef struct ooc_exec ooc_exec;

/* Check cfg, validate the program (ir/semantics.h), resolve every
 * COMPUTE's buffers, open the backend and the allocator policy. Nothing
 * runs yet. OOC_EINVAL naming what is wrong (a program the backend cannot
 * run: an op, algorithm or dtype it lacks, or an allocator order that is
 * not a valid one for this program), OOC_EUNSUP (no device), OOC_ENOMEM. */
int ooc_exec_alloc(const ooc_exec_config *cfg, ooc_exec **out, ooc_err *err);
void ooc_exec_free(ooc_exec *ex);

/* Run the prologue, build the kernels, then the warm-up and timed
 * iterations. OOC_OK with r filled (r->feasible 0 on out of memory, as
 * the simulator), OOC_EINVAL for a broken rule (the simulator's message),
 * or the backend's error. trace may be NULL; when given it receives the
 * last iteration that ran (spans in completion order, memory samples after
 * each device ALLOC/FREE and one at the start). Once per ooc_exec. */
int ooc_exec_run(ooc_exec *ex, ooc_exec_result *r, ooc_trace *trace,
                 ooc_err *err);

/* Copy bytes [offset, offset + bytes) of tensor `tensor`'s device copy to
 * buf, after a run (parameters are live then: weights at offset 0, their
 * gradients at param_bytes, optimizer state after). OOC_EINVAL when the
 * tensor is not allocated or the range exceeds it. */
int ooc_exec_read(const ooc_exec *ex, int32_t tensor, uint64_t offset,
                  void *buf, uint64_t bytes, ooc_err *err);
/* The same from the tensor's host buffer (an offloaded layer's weights and
 * gradients live there, docs/offload.md). */
int ooc_exec_read_host(const ooc_exec *ex, int32_t tensor, uint64_t offset,
                       void *buf, uint64_t bytes, ooc_err *err);

/* Where device ALLOC `instr` was placed: by the prologue, or in the last
 * iteration that ran. OOC_EINVAL when it is not a device ALLOC or did not
 * run. */
int ooc_exec_placement(const ooc_exec *ex, int32_t instr,
                       ooc_placement *where, ooc_err *err);

#endif
