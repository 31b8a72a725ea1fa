/* alloc/alloc.h — device memory allocator models, GSL-style descriptors.
 *
 *   ideal    the sum of live bytes against the budget
 *   caching  best-fit caching allocator like PyTorch's / Chainer's: 512 B
 *            rounding, small (<= 1 MiB, 2 MiB segments) and large pools,
 *            block splitting, coalescing only inside a segment, cached free
 *            blocks; on failure it releases every fully free cached segment
 *            and retries (schedule-window seed §4, the best-fit baseline)
 *   pool     one arena of the whole budget, first-fit with coalescing
 *            (SuperNeurons §3.3 memory pool); its `reserved` is the arena's
 *            high-water mark, the pool size this program needs
 *   va       virtual addressing (schedule-window seed §4): physical chunks of
 *            chunk_bytes mapped to contiguous virtual ranges at a map cost per
 *            chunk; a request of >= chunk/2 takes ceil(bytes/chunk) chunks
 *            (only internal fragmentation, < one chunk per tensor), a smaller
 *            one is rounded to 512 B and placed best-fit in a "small
 *            segment" (one chunk, mapped once, unmapped when wholly free)
 *
 * An allocator works on handles that are program tensor ids, so its state is
 * flat arrays sized once by init() for n_handles: alloc and free do not touch
 * the host heap (search planners run thousands of simulations).
 *
 * alloc() may also return OOC_ENOMEM when a model's own bookkeeping cannot
 * grow (caching: the block table; only on a bigger pattern than any
 * before). Costs are integer nanoseconds; a request of 0 bytes is valid.
 *
 * Ownership: the simulator owns the state buffer (state_size bytes) and
 * calls init() once per configuration and fini() at the end.
 */
#ifndef OOC_ALLOC_H
#define OOC_ALLOC_H

#include <stdint.h>
#include "base/error.h"
#include "ir/hw.h"

typedef struct ooc_alloc_config {
  uint64_t budget;        /* bytes the allocator may reserve on the device */
  int32_t n_handles;      /* tensor ids are in [0, n_handles) */
  uint64_t chunk_bytes;   /* va: physical chunk size */
  const ooc_hw *hw;       /* costs: malloc_ns, free_ns, va_map_ns */
} ooc_alloc_config;

typedef struct ooc_alloc_stats {
  uint64_t allocated;     /* bytes requested and live */
  uint64_t reserved;      /* bytes held from the device (segments, chunks) */
  uint64_t largest_free;  /* largest block that a request could get now */
  uint64_t n_mallocs;     /* device mallocs (segments, chunks) so far */
  uint64_t n_releases;    /* cached segments given back */
} ooc_alloc_stats;

typedef struct ooc_allocator_type {
  const char *name;
  const char *summary;
  size_t state_size;
  int (*init)(void *state, const ooc_alloc_config *cfg, ooc_err *err);
  void (*fini)(void *state);
  /* Reset to empty without freeing buffers (a new simulation). */
  void (*reset)(void *state);
  /* Allocate `bytes` for handle h. Returns OOC_OK and adds the modelled cost
   * (ns) to *cost_ns, or OOC_EOOM when it cannot be satisfied now (the state
   * is unchanged except for a release of cached memory, whose cost is added
   * to *cost_ns as well). */
  int (*alloc)(void *state, int32_t h, uint64_t bytes, int64_t *cost_ns);
  /* Free handle h (must be live). Adds its cost to *cost_ns. */
  void (*free)(void *state, int32_t h, int64_t *cost_ns);
  void (*stats)(const void *state, ooc_alloc_stats *st);
  /* allocated and reserved only, O(1): what the simulator samples after
   * every ALLOC and FREE (stats() may walk the free blocks). */
  void (*usage)(const void *state, uint64_t *allocated, uint64_t *reserved);
  /* One line saying why a request of `bytes` cannot be met now, for the OOM
   * report, e.g. "caching: no free block of 1.50 GiB; 2.10 GiB free but
   * fragmented (largest 800 MiB)". Writes at most n bytes. */
  void (*explain)(const void *state, uint64_t bytes, char *buf, size_t n);
  /* Optional: the device bytes a request of `bytes` occupies under cfg
   * (only budget, chunk_bytes and hw are read), before any fragmentation
   * between requests. NULL: the bytes themselves. Use
   * ooc_alloc_footprint(). */
  uint64_t (*footprint)(const ooc_alloc_config *cfg, uint64_t bytes);
} ooc_allocator_type;

extern const ooc_allocator_type ooc_alloc_ideal;
extern const ooc_allocator_type ooc_alloc_caching;
extern const ooc_allocator_type ooc_alloc_pool;
extern const ooc_allocator_type ooc_alloc_va;

/* Lookup by name; on failure err lists the valid names. */
const ooc_allocator_type *ooc_allocator_find(const char *name, ooc_err *err);
/* The device bytes one request of `bytes` occupies under allocator t with
 * configuration cfg (budget, chunk_bytes, hw; n_handles is not read): what
 * planners count for a tensor so their bookkeeping matches the allocator.
 *   ideal    bytes
 *   caching  bytes rounded up to 512 B (the block; segment rounding is
 *            shared by later requests, so it is not counted)
 *   pool     bytes rounded up to 512 B
 *   va       bytes rounded up to 512 B when 0 < bytes < chunk/2 (small
 *            path), else ceil(bytes/chunk) x chunk
 * A request of 0 bytes occupies 0. Pure, O(1). */
uint64_t ooc_alloc_footprint(const ooc_allocator_type *t,
                             const ooc_alloc_config *cfg, uint64_t bytes);
/* NULL-terminated registry. */
extern const ooc_allocator_type *const ooc_allocator_types[];

#endif
