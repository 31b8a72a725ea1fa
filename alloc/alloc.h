/* alloc/alloc.h — device memory placement policies, GSL-style descriptors,
 * shared by the simulator and the executor.
 *
 * A policy answers each request with *where* the tensor goes and with the
 * *driver actions* that takes. The simulator prices the actions from the
 * profile (sim/cost.h, ooc_cost_drv_ns); the executor performs them
 * (cudaMalloc/cudaFree, cuMemAddressReserve/cuMemAddressFree,
 * cuMemCreate/cuMemMap/cuMemUnmap/cuMemRelease, or their mmap equivalents
 * on the CPU backend). Both run the same policy code on the same sequence
 * of requests, so the fragmentation the simulator predicts is the
 * fragmentation a real run shows.
 *
 *   ideal    every tensor its own segment, taken and given back at no
 *            cost: the sum of live bytes against the budget
 *   caching  PyTorch's CUDACachingAllocator (c10/cuda): 512 B rounding,
 *            small (<= 1 MiB, 2 MiB segments) and large pools, block
 *            splitting, best fit, release of cached segments and one retry
 *            before failing; options expandable_segments,
 *            max_split_size_mb=N, roundup_power2_divisions=N
 *   bestfit  nnabla's CachingAllocatorWithBuckets, the best-fit caching
 *            allocator of the schedule-window seed's framework (§4)
 *   pool     SuperNeurons §3.2.1: one pre-allocated heap of 1 KiB blocks,
 *            first fit
 *   va       virtual addressing (schedule-window seed §4): physical chunks
 *            mapped behind contiguous virtual ranges
 *
 * Each policy's file says which source it follows and where it departs.
 *
 * Addresses: a policy lays its segments and virtual ranges out in one
 * address space of its own (offsets from 0, deterministic, segments and
 * ranges never overlapping while they exist), and a placement is a segment
 * (or virtual range) id plus an address in that space. The executor maps
 * segment ids to real pointers; on the CPU backend it can reproduce the
 * addresses themselves.
 *
 * Ids: segment, virtual range and chunk ids are dense (from 0) and an id
 * is reused once its SEG_FREE, VA_FREE or CHUNK_RELEASE has been sent, so
 * the executor keeps flat tables indexed by id. A virtual range exists
 * from its VA_RESERVE to its VA_FREE; every CHUNK_MAP lies inside one.
 *
 * Options: an allocator spec is "name" or "name:key[=value]:key...";
 * ooc_allocator_find() splits it and checks the keys against the
 * descriptor's list, init() checks the values.
 *
 * Handles are program tensor ids, so a policy's state is flat arrays sized
 * once by init() for n_handles: alloc and free do not touch the host heap
 * except to grow a table on a bigger pattern than any before (then
 * OOC_ENOMEM on failure). Search planners run thousands of simulations.
 *
 * Changes to this interface since it was introduced (d484184):
 *   - two actions, VA_RESERVE and VA_FREE (cuMemAddressReserve/Free): the
 *     va policy and expandable segments place tensors in virtual ranges
 *     that the executor must reserve, and the range's extent is needed to
 *     do it; the simulator charges nothing for them;
 *   - the bestfit descriptor (ooc_alloc_bestfit);
 *   - ooc_alloc_options_check() and ooc_alloc_option(), the shared option
 *     parser, and ooc_allocator_find() now checks the option keys;
 *   - SEG_FREE, CHUNK_UNMAP, CHUNK_RELEASE and VA_FREE repeat the size
 *     (and, but for RELEASE, the address) of what they give back, so a
 *     sink can check an action against the one it undoes;
 *   - the placement of a request of 0 bytes is written too (seg -1);
 *   - alloc's OOC_EOOM leaves allocated unchanged (what else it may change
 *     is documented there); after a sink error the state is undefined
 *     until reset();
 *   - the out-of-memory report (ooc_oom, ooc_alloc_oom, ooc_alloc_oom_host)
 *     moved here from sim/sim.h, so that the simulator and the executor
 *     fill it with the same code and report an unsatisfiable ALLOC alike.
 *
 * Ownership: the caller (simulator, executor) owns the state buffer
 * (state_size bytes), calls init() once per configuration, reset() between
 * runs and fini() at the end. The sink passed to alloc/free is borrowed for
 * the call; cfg->options is borrowed by init() and not kept.
 */
#ifndef OOC_ALLOC_H
#define OOC_ALLOC_H

#include <stddef.h>
#include <stdint.h>
#include "base/error.h"
#include "ir/hw.h"
#include "ir/program.h"

/* A driver action: what a real allocator asks of the CUDA driver. */
typedef enum ooc_drv_kind {
  OOC_DRV_SEG_MALLOC = 0, /* cudaMalloc: segment `id` of `bytes` at `addr` */
  OOC_DRV_SEG_FREE,       /* cudaFree of segment `id` */
  OOC_DRV_CHUNK_CREATE,   /* cuMemCreate: physical chunk `id` of `bytes` */
  OOC_DRV_CHUNK_MAP,      /* cuMemMap + cuMemSetAccess: chunk `id` at
                             virtual `addr` */
  OOC_DRV_CHUNK_UNMAP,    /* cuMemUnmap: chunk `id` from virtual `addr` */
  OOC_DRV_CHUNK_RELEASE,  /* cuMemRelease of chunk `id` */
  OOC_DRV_VA_RESERVE,     /* cuMemAddressReserve: virtual range `id` of
                             `bytes` at `addr` */
  OOC_DRV_VA_FREE,        /* cuMemAddressFree of virtual range `id` */
  OOC_DRV_COUNT
} ooc_drv_kind;

typedef struct ooc_drv_action {
  uint8_t kind;           /* ooc_drv_kind */
  int32_t id;             /* segment, range or chunk id: dense, reused
                             once freed */
  uint64_t addr;          /* segment or range base, or the virtual address
                             of a mapping (0 for CREATE and RELEASE) */
  uint64_t bytes;         /* segment, range or chunk size (the FREE, UNMAP
                             and RELEASE actions repeat it) */
} ooc_drv_action;

/* Where the actions go. act() is called once per action, in order; a
 * non-zero return (the executor's driver call failed) aborts the request,
 * and alloc/free return it. A NULL sink, or a NULL act, drops them. */
typedef struct ooc_drv_sink {
  int (*act)(void *ctx, const ooc_drv_action *a);
  void *ctx;
} ooc_drv_sink;

/* Where a tensor lives: its block [addr, addr + size) inside segment (or
 * virtual range) seg. A request of 0 bytes has seg -1, addr 0, size 0. */
typedef struct ooc_placement {
  int32_t seg;
  uint64_t addr;
  uint64_t size;          /* the block: the request rounded by the policy */
} ooc_placement;

typedef struct ooc_alloc_config {
  uint64_t budget;        /* bytes the policy may hold from the device */
  int32_t n_handles;      /* tensor ids are in [0, n_handles) */
  uint64_t chunk_bytes;   /* va: physical chunk size (0: the profile's) */
  const ooc_hw *hw;       /* va granularity and chunk defaults; may be NULL */
  const char *options;    /* "key=value:key" as after "caching:" in an
                             allocator spec; NULL or "" for the defaults */
} ooc_alloc_config;

typedef struct ooc_alloc_stats {
  uint64_t allocated;     /* bytes requested and live */
  uint64_t reserved;      /* bytes held from the device (segments, chunks) */
  uint64_t largest_free;  /* largest block a request could get now */
  uint64_t n_mallocs;     /* segments or chunks created so far */
  uint64_t n_releases;    /* segments or chunks given back so far */
} ooc_alloc_stats;

typedef struct ooc_allocator_type {
  const char *name;
  const char *summary;      /* one line for `oocsim list allocators` */
  const char *cite;         /* the source it follows */
  size_t state_size;
  const char *const *options; /* NULL-terminated accepted option keys */
  int unpriced;             /* 1: the simulator charges nothing for its
                               actions (ideal) */
  /* OOC_OK, OOC_EINVAL for a bad option (err names the allocator and the
   * option), OOC_ENOMEM. On failure nothing is left to fini(). */
  int (*init)(void *state, const ooc_alloc_config *cfg, ooc_err *err);
  void (*fini)(void *state);
  /* Back to empty without freeing buffers or emitting actions (a new
   * simulation; the executor tears its arena down itself). */
  void (*reset)(void *state);
  /* Place `bytes` for handle h (not live). OOC_OK: *where is filled and
   * the actions it took went to drv. OOC_EOOM: it cannot be satisfied now;
   * the state is unchanged except for cached memory the policy released
   * first (those actions went to drv; allocated is unchanged; reserved
   * does not grow, except under caching:expandable_segments, whose failed
   * last attempt may leave pages it mapped cached, as PyTorch's does).
   * OOC_ENOMEM, or the sink's error (the state is then undefined until
   * reset()). */
  int (*alloc)(void *state, int32_t h, uint64_t bytes, ooc_placement *where,
               const ooc_drv_sink *drv);
  /* Free handle h (live). Returns OOC_OK or the sink's error. */
  int (*free)(void *state, int32_t h, const ooc_drv_sink *drv);
  void (*stats)(const void *state, ooc_alloc_stats *st);
  /* allocated and reserved only, O(1): what the simulator samples after
   * every ALLOC and FREE (stats() may walk the free blocks). */
  void (*usage)(const void *state, uint64_t *allocated, uint64_t *reserved);
  /* One line saying why a request of `bytes` cannot be met now, for the OOM
   * report, e.g. "caching: no free block of 1.50 GiB; 2.10 GiB free but
   * fragmented (largest 800 MiB)". Writes at most n bytes. */
  void (*explain)(const void *state, uint64_t bytes, char *buf, size_t n);
  /* Optional: the device bytes a request of `bytes` occupies under cfg
   * (budget, chunk_bytes, hw and options are read), before any
   * fragmentation between requests. NULL: the bytes themselves. Use
   * ooc_alloc_footprint(). */
  uint64_t (*footprint)(const ooc_alloc_config *cfg, uint64_t bytes);
} ooc_allocator_type;

extern const ooc_allocator_type ooc_alloc_ideal;
extern const ooc_allocator_type ooc_alloc_caching;
extern const ooc_allocator_type ooc_alloc_bestfit;
extern const ooc_allocator_type ooc_alloc_pool;
extern const ooc_allocator_type ooc_alloc_va;

/* NULL-terminated registry in display order. */
extern const ooc_allocator_type *const ooc_allocator_types[];

/* Lookup by name; on failure (OOC_ENOTFOUND) err lists the valid names.
 * `spec` may carry options after the name, "caching:expandable_segments":
 * the name is the part before the first ':' and *options (when options is
 * not NULL) points into spec after it, or is NULL. The option keys are
 * checked here (ooc_alloc_options_check: OOC_EINVAL), their values by
 * init(). */
const ooc_allocator_type *ooc_allocator_find(const char *spec,
                                             const char **options,
                                             ooc_err *err);

/* Check an options string ("key[=value]:key...", NULL or "" for none)
 * against t->options: an empty key, a key t does not list, or a key given
 * twice is OOC_EINVAL, e.g. "allocator 'caching': unknown option 'foo'
 * (valid: expandable_segments, max_split_size_mb,
 * roundup_power2_divisions)". Values are not looked at. */
int ooc_alloc_options_check(const ooc_allocator_type *t, const char *options,
                            ooc_err *err);

/* Find key in an options string. Returns 1 when present, with *value
 * pointing at its value (NULL when the key has no '=') and *len its
 * length up to the next ':'; 0 when absent. value may be NULL. */
int ooc_alloc_option(const char *options, const char *key,
                     const char **value, size_t *len);

/* The device bytes one request of `bytes` occupies under allocator t with
 * configuration cfg (n_handles is not read): what planners count for a
 * tensor so their bookkeeping matches the policy. A request of 0 bytes
 * occupies 0. Pure, O(1). */
uint64_t ooc_alloc_footprint(const ooc_allocator_type *t,
                             const ooc_alloc_config *cfg, uint64_t bytes);

/* An ALLOC that could not be satisfied: what the simulator's and the
 * executor's results carry (docs/program-ir.md, "Semantics"). */
typedef struct ooc_oom {
  int32_t instr;          /* the ALLOC that could not be satisfied */
  int32_t tensor, layer;
  int64_t time_ns;
  uint64_t requested_bytes, live_bytes, reserved_bytes, largest_free_bytes;
  char reason[160];
} ooc_oom;

/* Fill o for device ALLOC instruction i of p that policy t (its state)
 * could not satisfy at time_ns (from the iteration's start; 0 in the
 * prologue): the request, the policy's stats and its explain() line. */
void ooc_alloc_oom(const ooc_allocator_type *t, const void *state,
                   const ooc_program *p, int32_t i, int64_t time_ns,
                   ooc_oom *o);
/* The same for a pinned host ALLOC i refused because `pinned` bytes of
 * host_mem are in use: the device policy's figures, and a reason that
 * says the host ran out. */
void ooc_alloc_oom_host(const ooc_allocator_type *t, const void *state,
                        const ooc_program *p, int32_t i, int64_t time_ns,
                        uint64_t pinned, uint64_t host_mem, ooc_oom *o);
/* The same for a limit named `what` ("pinned host memory", "host
 * memory"): "<what> exhausted: R requested, U of L in use". */
void ooc_alloc_oom_host_kind(const ooc_allocator_type *t, const void *state,
                             const ooc_program *p, int32_t i,
                             int64_t time_ns, const char *what,
                             uint64_t used, uint64_t limit, ooc_oom *o);

/* Send one action to a sink (nothing when sink or its act is NULL). */
static inline int
ooc_drv_emit(const ooc_drv_sink *sink, ooc_drv_kind kind, int32_t id,
             uint64_t addr, uint64_t bytes)
{
  ooc_drv_action a;

  if (sink == NULL || sink->act == NULL)
    return OOC_OK;
  a.kind = (uint8_t)kind;
  a.id = id;
  a.addr = addr;
  a.bytes = bytes;
  return sink->act(sink->ctx, &a);
}

/* "seg_malloc", "seg_free", "chunk_create", "chunk_map", "chunk_unmap",
 * "chunk_release", "va_reserve", "va_free"; "?" out of range. */
const char *ooc_drv_kind_name(ooc_drv_kind k);

#endif
