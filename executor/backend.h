/* executor/backend.h — what an executor backend implements, and what the
 * shared replay core hands it (for backend authors; users go through
 * executor/executor.h).
 *
 * A backend is one `const ooc_exec_backend` (GSL's type-descriptor style):
 * a name, a state size and typed functions for the only things that differ
 * between devices: the kernels, the copies, the driver calls behind the
 * allocator policy's actions, pinned host memory, and synchronisation.
 * Everything else (threads, waits, tensor-state rules, the allocator and
 * its order, the arena's id tables and pointer arithmetic, timing, data,
 * verification, results) is the shared core's (exec.c, arena.c, data.c)
 * and the kernels' roles are ir/kernel.h's, which the simulator's plan
 * check shares.
 *
 * Contract: every function is synchronous, it returns once the work is
 * complete on the device (a GPU backend synchronises its stream before it
 * returns), so that the core's completion flags and timestamps are true.
 * compute() runs only on the compute stream's thread, copy() only on the
 * copy streams' threads; mem(), host_alloc() and host_free() are called
 * under the core's lock from any stream thread, or from the caller's
 * thread in the prologue; prepare() runs on the compute thread before the
 * first iteration. The host stream's thread calls no backend function
 * but thread_start(): its optimizer steps (HOST) are the core's, in C on
 * the host buffers host_alloc() gave. A failing call returns a negative
 * status with err naming the call and the instruction's layer.
 *
 * Ownership: the core owns the state buffer (state_size bytes, zeroed) and
 * calls destroy() once if create() succeeded. Kernel descriptions
 * (ooc_kernel) belong to the core and live as long as the run.
 */
#ifndef OOC_EXEC_BACKEND_H
#define OOC_EXEC_BACKEND_H

#include <stddef.h>
#include <stdint.h>
#include "base/error.h"
#include "ir/model.h"
#include "ir/program.h"
#include "alloc/alloc.h"
#include "ir/kernel.h"
#include "executor/executor.h"

/* A segment, virtual range or physical chunk of the arena, indexed by the
 * policy's id (alloc/alloc.h). The core fills addr and bytes (the policy's
 * numbers) before it calls mem(); the backend fills base (segment, range)
 * or handle (chunk). */
typedef struct ooc_exec_region {
  void *base;          /* where it is mapped in this process or device */
  uint64_t addr;       /* its address in the policy's space */
  uint64_t bytes;
  uint64_t handle;     /* chunk: a memfd, a CUmemGenericAllocationHandle */
  uint64_t map_addr;   /* chunk: the policy address it is mapped at */
  int live, mapped;
} ooc_exec_region;

/* What create() is told about the run. */
typedef struct ooc_exec_env {
  const ooc_model *model;
  const ooc_program *program;
  int threads;          /* 0: the backend's default */
  double link_GBps;     /* copy pacing (0: none) */
  uint64_t seed;
} ooc_exec_env;


/* What a backend reports after a run. */
typedef struct ooc_exec_backend_info {
  uint64_t side_bytes;  /* memory it used outside the arena */
  double loss;          /* mean loss of the last forward of the loss */
  char note[256];
} ooc_exec_backend_info;

struct ooc_exec_backend {
  const char *name;
  const char *summary;
  size_t state_size;
  int host_visible;     /* device pointers are host memory (the core may
                           read them directly, e.g. to verify) */
  /* Can it run here? OOC_OK or OOC_EUNSUP with why. */
  int (*probe)(ooc_err *err);
  /* OOC_OK, OOC_EINVAL (an option it cannot honour), OOC_EUNSUP. */
  int (*create)(void *state, const ooc_exec_env *env, ooc_err *err);
  void (*destroy)(void *state);
  /* Called once on each stream thread before its first instruction
   * (bind the device, fix the kernel thread count; on the host stream,
   * the thread count of its optimizer steps). */
  int (*thread_start)(void *state, int stream, ooc_err *err);
  /* Perform one driver action (alloc/alloc.h): r is the region the
   * action's id names (segment, range or chunk table); for CHUNK_MAP and
   * CHUNK_UNMAP, range is the virtual range the mapping lies in. */
  int (*mem)(void *state, const ooc_drv_action *a, ooc_exec_region *r,
             const ooc_exec_region *range, ooc_err *err);
  /* Pinned host memory: *pinned 0 when it could only be pageable. */
  int (*host_alloc)(void *state, uint64_t bytes, void **p, int *pinned,
                    ooc_err *err);
  void (*host_free)(void *state, void *p, uint64_t bytes, int pinned);
  /* Setup and read-back copies (untimed). */
  int (*upload)(void *state, void *dev, const void *host, uint64_t bytes,
                ooc_err *err);
  int (*download)(void *state, void *host, const void *dev, uint64_t bytes,
                  ooc_err *err);
  /* Build what k needs (primitives, descriptors, workspaces outside the
   * arena) before timing. OOC_EINVAL when the backend cannot run it, with
   * err naming the layer, the op and what is missing. */
  int (*prepare)(void *state, const ooc_kernel *k, ooc_err *err);
  /* Run k; `iteration` counts from 0 over warm-up and timed ones. */
  int (*compute)(void *state, const ooc_kernel *k, void *const *ptr,
                 int iteration, ooc_err *err);
  /* An H2D (stream 1) or D2H (stream 2) copy. */
  int (*copy)(void *state, int stream, void *dst, const void *src,
              uint64_t bytes, ooc_err *err);
  /* Device-wide synchronise (between iterations). */
  int (*sync)(void *state, ooc_err *err);
  void (*info)(const void *state, ooc_exec_backend_info *out);
  /* Optional (NULL): measure the host side of the device API. */
  int (*host_api)(void *state, ooc_exec_host_api *out, ooc_err *err);
};

extern const ooc_exec_backend ooc_exec_cpu;
extern const ooc_exec_backend ooc_exec_cuda;

/* --- seeded data, shared so that every backend computes the same thing ---- */

/* A counter-based generator: a 64-bit mix (splitmix64's finaliser) of a
 * seed, a stream and a counter, so that any element of any tensor can be
 * drawn alone, in any order, and a recompute draws what the first forward
 * drew. */
static inline uint64_t
ooc_exec_mix(uint64_t seed, uint64_t stream, uint64_t counter)
{
  uint64_t z = seed ^ (stream * 0x9e3779b97f4a7c15ULL) ^
               (counter * 0xd1b54a32d192ed03ULL);

  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

/* Uniform in [-1, 1), 24 random bits. */
static inline float
ooc_exec_uniform(uint64_t seed, uint64_t stream, uint64_t counter)
{
  return (float)(ooc_exec_mix(seed, stream, counter) >> 40) *
             (1.0f / 8388608.0f) - 1.0f;
}

/* Streams of the generator. */
enum {
  OOC_RNG_WEIGHTS = 1,    /* + layer << 8 */
  OOC_RNG_INPUT = 2,
  OOC_RNG_LABELS = 3,
  OOC_RNG_DROPOUT = 4     /* + layer << 8, counter: iteration << 40 | i */
};

/* The class label of row `row` of the loss input (rows of `classes`
 * logits, in batch order). */
static inline int64_t
ooc_exec_label(uint64_t seed, int64_t row, int64_t classes)
{
  return (int64_t)(ooc_exec_mix(seed, OOC_RNG_LABELS, (uint64_t)row) %
                   (uint64_t)classes);
}

/* Whether dropout layer `layer` keeps element i in `iteration`, with drop
 * probability p. */
static inline int
ooc_exec_dropout_keep(uint64_t seed, int layer, int iteration, uint64_t i,
                      double p)
{
  uint64_t r = ooc_exec_mix(seed, OOC_RNG_DROPOUT | ((uint64_t)layer << 8),
                            ((uint64_t)iteration << 40) ^ i);
  return (double)(r >> 11) * (1.0 / 9007199254740992.0) >= p;
}

/* Shared helpers of the core that backends may call (data.c). */

/* One optimizer step over n fp32 parameters: weights w, gradients g and
 * the optimizer's state o (momentum: n values; Adam: m then v, 2n), at
 * the step's 0-based iteration (Adam's bias correction). The device
 * update of the cpu backend and the host stream's step of an offloaded
 * layer (docs/offload.md) both run it, so their results agree bit for
 * bit. OpenMP over the elements. */
void ooc_exec_optimizer_step(ooc_optimizer opt, float *w, const float *g,
                             float *o, int64_t n, int iteration);

/* Per-sample rows and classes of a softmax_ce layer's input (softmax over
 * the last dim). */
void ooc_exec_ce_shape(const ooc_model *m, int layer, int64_t *rows,
                       int64_t *classes);

#endif
