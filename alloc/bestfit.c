/* alloc/bestfit.c — nnabla's best-fit caching allocator as a placement
 * policy: the allocator of the schedule-window seed's framework, whose §4
 * shows why it fragments under swapping.
 *
 * Follows sony/nnabla src/nbla/memory/caching_allocator_with_buckets.cpp
 * (CachingAllocatorWithBucketsBase::round_size, alloc_impl, free_impl,
 * free_unused_device_caches_impl), its header
 * include/nbla/memory/caching_allocator_with_buckets.hpp (the constants),
 * src/nbla/memory/allocator.cpp (Allocator::alloc_retry,
 * free_unused_device_caches) and src/nbla/memory/memory.cpp
 * (Memory::divide, try_merge, bytes_active), read at 2814df0. The rules:
 *   - sizes round up: under round_small_ = 512 B to 512 B; under
 *     small_alloc_ = 1 MiB to a multiple of 512 B; from 1 MiB on to a
 *     multiple of round_large_ = 128 KiB;
 *   - a rounded size <= 1 MiB is small, the rest large; each class caches
 *     free blocks in its own map keyed by (size, Memory pointer), and a
 *     request takes the first block of at least its size (lower_bound:
 *     best fit);
 *   - no cached block: a new segment (Memory::alloc, a cudaMalloc) of
 *     1 MiB for a small request, of the rounded size for a large one; when
 *     that fails (here: reserved + size > budget), alloc_retry frees every
 *     unused cache (every cached block that is a whole segment, small map
 *     then large, each in key order: SEG_FREE) and tries once more; then
 *     OOM;
 *   - the block found is split when what is left is >= 512 B (small) or
 *     >= 1 MiB + 1 (large); the rest goes back to the request's class;
 *   - a freed block merges with its next, then its previous, neighbour in
 *     its segment when they are free (try_merge), and is cached in the
 *     class of its size. nnabla takes that class from the freed block's
 *     size before the merge; a small segment is 1 MiB and a large one's
 *     blocks all stay above 1 MiB (a large split leaves > 1 MiB), so a
 *     segment's blocks are all of one class and the class of the merged
 *     block is the same: here it is kept per segment.
 * Departures: equal sizes are ordered by device address, where nnabla
 * orders them by the host address of the Memory object (a malloc result,
 * not reproducible); a request of 0 bytes takes nothing, where nnabla's
 * Allocator::alloc raises it to 1 byte (a 512 B block). One device.
 *
 * Layout: segments are laid out one after the other from address 0 in the
 * order they are created (next address += size), never reused within a
 * run; segment ids are dense, the last one released reused first.
 *
 * State: the block table (alloc/blocktab.h), class = small/large, per
 * handle its block and request. Cost: alloc and free O(log f) expected in
 * the cached blocks f of the class; freeing the unused caches walks them.
 */
#include "config.h"

#include <assert.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloc/alloc.h"
#include "alloc/blocktab.h"
#include "base/util.h"

#define ROUND_SMALL 512ull            /* round_small_ */
#define ROUND_LARGE (128ull << 10)    /* round_large_ */
#define SMALL_ALLOC (1ull << 20)      /* small_alloc_ */

enum { SMALL = 0, LARGE = 1 };

struct bestfit_state {
  uint64_t budget;
  int32_t n_handles;
  int32_t *hblk;          /* block per handle, -1 when none */
  uint64_t *req;          /* bytes requested per handle */
  ooc_blocktab bt;
  ooc_idpool segs;
  uint64_t allocated, in_use, reserved, next_addr;
  uint64_t n_mallocs, n_releases;
};

static uint64_t
round_size(uint64_t b)
{
  if (b < ROUND_SMALL)
    return ROUND_SMALL;
  if (b < SMALL_ALLOC)
    return (b + ROUND_SMALL - 1) / ROUND_SMALL * ROUND_SMALL;
  return (b + ROUND_LARGE - 1) / ROUND_LARGE * ROUND_LARGE;
}

static void
clear(struct bestfit_state *s)
{
  int32_t i;

  for (i = 0; i < s->n_handles; i++)
    s->hblk[i] = -1;
  memset(s->req, 0, (size_t)s->n_handles * sizeof *s->req);
  ooc_blocktab_clear(&s->bt);
  ooc_idpool_clear(&s->segs);
  s->allocated = s->in_use = s->reserved = s->next_addr = 0;
  s->n_mallocs = s->n_releases = 0;
}

static void
bestfit_fini(void *vs)
{
  struct bestfit_state *s = vs;

  free(s->hblk);
  free(s->req);
  ooc_blocktab_fini(&s->bt);
  ooc_idpool_fini(&s->segs);
  memset(s, 0, sizeof *s);
}

static int
bestfit_init(void *vs, const ooc_alloc_config *cfg, ooc_err *err)
{
  struct bestfit_state *s = vs;
  int32_t cap;
  int rc;

  memset(s, 0, sizeof *s);
  if ((rc = ooc_alloc_options_check(&ooc_alloc_bestfit, cfg->options,
                                    err)) < 0)
    return rc;
  s->budget = cfg->budget;
  s->n_handles = cfg->n_handles;
  s->hblk = malloc(((size_t)cfg->n_handles + 1) * sizeof *s->hblk);
  s->req = malloc(((size_t)cfg->n_handles + 1) * sizeof *s->req);
  cap = cfg->n_handles < (INT32_MAX - 64) / 2 ? 2 * cfg->n_handles + 64
                                              : INT32_MAX;
  if (s->hblk == NULL || s->req == NULL ||
      ooc_blocktab_init(&s->bt, cap) != OOC_OK ||
      ooc_idpool_init(&s->segs, 64) != OOC_OK) {
    bestfit_fini(s);
    return ooc_err_set(err, OOC_ENOMEM, "bestfit allocator: out of memory");
  }
  clear(s);
  return OOC_OK;
}

static void
bestfit_reset(void *vs)
{
  clear(vs);
}

/* free_unused_device_caches: every cached block that is a whole segment,
 * small map then large. */
static int
free_unused_caches(struct bestfit_state *s, const ooc_drv_sink *drv)
{
  ooc_blocktab *bt = &s->bt;
  int c, rc;

  for (c = SMALL; c <= LARGE; c++) {
    int32_t i, n = ooc_blocktab_collect_whole(bt, c);
    for (i = 0; i < n; i++) {
      int32_t id = bt->scratch[i], seg = bt->seg[id];
      uint64_t addr = bt->node[id].addr, size = bt->node[id].size;

      ooc_blocktab_remove(bt, id);
      ooc_blocktab_close(bt, id);
      ooc_idpool_put(&s->segs, seg);
      s->reserved -= size;
      s->n_releases++;
      if ((rc = ooc_drv_emit(drv, OOC_DRV_SEG_FREE, seg, addr, size)) < 0)
        return rc;
    }
  }
  return OOC_OK;
}

static int
bestfit_alloc(void *vs, int32_t h, uint64_t bytes, ooc_placement *where,
              const ooc_drv_sink *drv)
{
  struct bestfit_state *s = vs;
  ooc_blocktab *bt = &s->bt;
  uint64_t size, seg_bytes;
  int32_t id;
  int cls, rc;

  *where = (ooc_placement){ .seg = -1 };
  s->hblk[h] = -1;
  s->req[h] = 0;
  if (bytes == 0)
    return OOC_OK;
  if (bytes > s->budget) {
    /* No segment can hold it: alloc_retry frees the caches and fails. */
    rc = free_unused_caches(s, drv);
    return rc < 0 ? rc : OOC_EOOM;
  }
  size = round_size(bytes);
  cls = size <= SMALL_ALLOC ? SMALL : LARGE;
  id = ooc_blocktab_best_fit(bt, cls, size);
  if (id < 0) {
    int32_t seg;

    seg_bytes = cls == SMALL ? SMALL_ALLOC : size;
    if (seg_bytes > s->budget - s->reserved) {
      if ((rc = free_unused_caches(s, drv)) < 0)
        return rc;
      if (seg_bytes > s->budget - s->reserved)
        return OOC_EOOM;
    }
    if ((seg = ooc_idpool_take(&s->segs)) < 0)
      return OOC_ENOMEM;
    if ((id = ooc_blocktab_open(bt, cls, seg, s->next_addr, seg_bytes)) < 0) {
      ooc_idpool_put(&s->segs, seg);
      return OOC_ENOMEM;
    }
    s->next_addr += seg_bytes;
    s->reserved += seg_bytes;
    s->n_mallocs++;
    if ((rc = ooc_drv_emit(drv, OOC_DRV_SEG_MALLOC, seg, bt->node[id].addr,
                           seg_bytes)) < 0)
      return rc;
  }
  if (bt->node[id].size - size >= (cls == SMALL ? ROUND_SMALL
                                                : SMALL_ALLOC + 1) &&
      ooc_blocktab_split(bt, id, size) != OOC_OK) {
    ooc_blocktab_insert(bt, id);
    return OOC_ENOMEM;
  }
  bt->node[id].is_free = 0;
  s->hblk[h] = id;
  s->req[h] = bytes;
  s->allocated += bytes;
  s->in_use += bt->node[id].size;
  *where = (ooc_placement){ .seg = bt->seg[id], .addr = bt->node[id].addr,
                            .size = bt->node[id].size };
  return OOC_OK;
}

static int
bestfit_free(void *vs, int32_t h, const ooc_drv_sink *drv)
{
  struct bestfit_state *s = vs;
  int32_t id = s->hblk[h];

  (void)drv;
  s->allocated -= s->req[h];
  s->req[h] = 0;
  s->hblk[h] = -1;
  if (id < 0)
    return OOC_OK;
  s->in_use -= s->bt.node[id].size;
  id = ooc_blocktab_free(&s->bt, id);
  ooc_blocktab_insert(&s->bt, id);
  return OOC_OK;
}

static uint64_t
largest_cached(const struct bestfit_state *s)
{
  uint64_t a = ooc_blocktab_largest(&s->bt, SMALL);
  uint64_t b = ooc_blocktab_largest(&s->bt, LARGE);

  return a > b ? a : b;
}

static void
bestfit_stats(const void *vs, ooc_alloc_stats *st)
{
  const struct bestfit_state *s = vs;
  uint64_t lc = largest_cached(s), fresh = s->budget - s->reserved;

  *st = (ooc_alloc_stats){
    .allocated = s->allocated, .reserved = s->reserved,
    .largest_free = lc > fresh ? lc : fresh,
    .n_mallocs = s->n_mallocs, .n_releases = s->n_releases,
  };
}

static void
bestfit_usage(const void *vs, uint64_t *allocated, uint64_t *reserved)
{
  const struct bestfit_state *s = vs;

  *allocated = s->allocated;
  *reserved = s->reserved;
}

static void
bestfit_explain(const void *vs, uint64_t bytes, char *buf, size_t n)
{
  const struct bestfit_state *s = vs;
  uint64_t free_bytes = s->budget - s->in_use;
  uint64_t lc = largest_cached(s), fresh = s->budget - s->reserved;
  char b1[32], b2[32], b3[32];

  if (bytes > free_bytes || round_size(bytes) > free_bytes)
    snprintf(buf, n, "bestfit: %s requested but only %s of the %s budget "
             "is free", ooc_fmt_bytes(bytes, b1, sizeof b1),
             ooc_fmt_bytes(free_bytes, b2, sizeof b2),
             ooc_fmt_bytes(s->budget, b3, sizeof b3));
  else
    snprintf(buf, n, "bestfit: no cached block of %s; %s free but "
             "fragmented (largest %s)", ooc_fmt_bytes(bytes, b1, sizeof b1),
             ooc_fmt_bytes(free_bytes, b2, sizeof b2),
             ooc_fmt_bytes(lc > fresh ? lc : fresh, b3, sizeof b3));
}

/* A request's footprint: its block, the rounded size (0 takes none). */
static uint64_t
bestfit_footprint(const ooc_alloc_config *cfg, uint64_t bytes)
{
  (void)cfg;
  if (bytes > UINT64_MAX - ROUND_LARGE)
    return UINT64_MAX;
  return bytes == 0 ? 0 : round_size(bytes);
}

const ooc_allocator_type ooc_alloc_bestfit = {
  .name = "bestfit",
  .summary = "nnabla's best-fit caching allocator: 512 B / 128 KiB "
             "rounding, small and large caches, free caches and retry",
  .cite = "sony/nnabla src/nbla/memory/caching_allocator_with_buckets.cpp, "
          "allocator.cpp, memory.cpp",
  .state_size = sizeof(struct bestfit_state),
  .init = bestfit_init,
  .fini = bestfit_fini,
  .reset = bestfit_reset,
  .alloc = bestfit_alloc,
  .free = bestfit_free,
  .stats = bestfit_stats,
  .usage = bestfit_usage,
  .explain = bestfit_explain,
  .footprint = bestfit_footprint,
};
