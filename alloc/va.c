/* alloc/va.c — virtual addressing: physical chunks behind contiguous
 * virtual ranges (schedule-window seed §4), with small requests
 * sub-allocated from chunk-sized segments.
 *
 * Follows the schedule-window seed §4 (shared/seeds/schedule-window-va.md):
 * physical memory is handed out in chunks of m_c = chunk_bytes (the
 * profile's allocator.va_chunk_MiB, 40 MiB in the zoo profiles), created
 * lazily up to budget / m_c of them and cached when unmapped (never given
 * back), so reserved = chunks created x m_c. A request of m_r bytes takes
 * one of two paths:
 *  - large, m_r >= m_c / 2: k = ceil(m_r / m_c) chunks mapped behind one
 *    virtual range of k x m_c, as in the seed. Chunks combine in any
 *    order, so there is no external fragmentation, only the internal
 *    m_a - m_r < m_c per tensor (seed eq. 1); since m_r >= m_c / 2,
 *    m_a < 2 m_r. Freeing unmaps the chunks and caches them.
 *  - small, 0 < m_r < m_c / 2 (and its 512 B-rounded size <= m_c / 2,
 *    which only matters for a chunk that is not a multiple of 1 KiB): the
 *    size rounds up to 512 B and is placed best-fit, by (size, address),
 *    in a "small segment": a one-chunk virtual range mapped once and kept
 *    mapped while anything lives in it. A block is split when 512 B or
 *    more is left; a freed block merges with its free neighbours inside
 *    its segment, and a segment that becomes wholly free is unmapped and
 *    its chunk cached. A new segment is mapped only when no free block
 *    fits.
 *  - m_r = 0 takes nothing.
 * Departure (kept from earlier versions): the seed maps every request to
 * whole chunks; with its 40 MiB chunk that gives each 4 KiB bias a 40 MiB
 * chunk (ResNet-50's 107 parameter tensors would take 4.18 GiB). Small
 * requests share chunks, as real VA allocators do (PyTorch's expandable
 * segments, slab allocators). The threshold m_c / 2 keeps every large
 * request's footprint under twice its size and lets every small segment
 * hold at least two requests; the small path brings back external
 * fragmentation, but only inside the small segments.
 *
 * Cross-checked with sony/nnabla src/nbla/memory/virtual_caching_allocator
 * .cpp (VirtualCachingAllocatorBase, read at 2814df0): the same rounding
 * to whole chunks (its default chunk is 20 MB) and a FIFO cache of
 * physical chunks (a std::queue), which this file follows: cached chunks
 * are mapped oldest first, and new ones are created only when the cache
 * is empty. nnabla differs in three ways not followed here: it keeps a
 * freed range mapped in a cache keyed by size (reusing an equal-sized one
 * as is, growing a smaller one, unmapping a larger one to take its
 * chunks), where the seed unmaps at once; it has no small path; and when
 * a chunk cannot be created it frees every cached chunk and retries,
 * which under one budget counting created chunks cannot make room.
 *
 * Virtual ranges: a freed range stays reserved and is reused by the next
 * request of exactly its size (the lowest-addressed free one); a new range
 * (VA_RESERVE) is laid out after the last one only when none is free. So
 * the ranges of each size never outnumber the most that were live at once
 * (for k chunks at most budget / (k x m_c): a live range holds its
 * chunks), the virtual space is bounded whatever the run's length, and a
 * repeated pattern of large requests reserves nothing after its first
 * repetition. Range ids are dense and never released within a run; chunk
 * ids are dense in creation order.
 *
 * Driver actions: CHUNK_CREATE when a chunk is first created, CHUNK_MAP
 * per chunk mapped (new or cached: the cost the profile's va_map_us
 * prices), CHUNK_UNMAP per chunk when a range is freed or a small segment
 * empties, VA_RESERVE per new range. No chunk is ever released.
 *
 * State, sized by init for n_handles and grown by doubling on a bigger
 * pattern: per handle its bytes, range (large) or block (small); ranges
 * (fittree nodes: the free ones by (size, address), binned, and each
 * one's first chunk); per chunk the next one in its range or in the FIFO
 * cache; the small segments' block table (alloc/blocktab.h). Cost: large
 * path O(k + log r) in its chunks and the ranges r; small path O(log f)
 * expected in the free small blocks f.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloc/alloc.h"
#include "alloc/blocktab.h"
#include "base/util.h"

#define VA_DEFAULT_CHUNK (2ull << 20)
#define VA_ALIGN 512ull

struct va_state {
  uint64_t chunk;
  uint64_t max_chunks;   /* budget / chunk */
  uint64_t cached;       /* chunks created and not mapped */
  uint64_t segments;     /* small segments mapped now */
  int32_t n_handles;
  int32_t *hrange;       /* large: range per handle, -1 when none */
  int32_t *hblk;         /* small: block per handle, -1 when none */
  uint64_t *bytes;       /* bytes requested per handle */
  /* Ranges. */
  ooc_fit_node *range;   /* key (size, addr); free ones in free_ranges */
  int32_t *rfirst;       /* first chunk mapped behind each range, -1 */
  int32_t n_ranges, range_cap;
  ooc_fittree free_ranges;
  uint64_t va_next;      /* where the next new range goes */
  /* Chunks: [0, created) exist. */
  int32_t *cnext;        /* next chunk in its range or in the cache */
  int32_t created, chunk_cap;
  int32_t cache_head, cache_tail;
  ooc_blocktab bt;       /* blocks of the small segments (one class) */
  uint64_t allocated;
};

/* The chunk size a configuration gives: its own, the profile's, or the
 * default (2 MiB, the CUDA minimum granularity). */
static uint64_t
va_chunk(const ooc_alloc_config *cfg)
{
  uint64_t chunk = cfg->chunk_bytes;

  if (chunk == 0 && cfg->hw != NULL)
    chunk = cfg->hw->va_chunk_bytes;
  return chunk != 0 ? chunk : VA_DEFAULT_CHUNK;
}

static uint64_t
round_small(uint64_t b)
{
  return (b + VA_ALIGN - 1) / VA_ALIGN * VA_ALIGN;
}

/* Small path: 0 < b < chunk / 2 and the rounded size at most chunk / 2. */
static int
is_small(uint64_t chunk, uint64_t b)
{
  return b > 0 && b < chunk / 2 && round_small(b) <= chunk / 2;
}

static uint64_t
n_chunks(uint64_t chunk, uint64_t b)
{
  return b / chunk + (b % chunk != 0);
}

static void
clear(struct va_state *s)
{
  int32_t i;

  memset(s->bytes, 0, (size_t)s->n_handles * sizeof *s->bytes);
  for (i = 0; i < s->n_handles; i++)
    s->hrange[i] = s->hblk[i] = -1;
  s->n_ranges = 0;
  ooc_fittree_clear(&s->free_ranges);
  s->va_next = 0;
  s->created = 0;
  s->cache_head = s->cache_tail = -1;
  s->cached = 0;
  s->segments = 0;
  s->allocated = 0;
  ooc_blocktab_clear(&s->bt);
}

static void
va_fini(void *vs)
{
  struct va_state *s = vs;

  free(s->hrange);
  free(s->hblk);
  free(s->bytes);
  free(s->range);
  free(s->rfirst);
  free(s->cnext);
  ooc_blocktab_fini(&s->bt);
  memset(s, 0, sizeof *s);
}

static int
va_init(void *vs, const ooc_alloc_config *cfg, ooc_err *err)
{
  struct va_state *s = vs;
  size_t n = (size_t)cfg->n_handles + 1;
  uint64_t chunk = va_chunk(cfg);
  int rc;

  memset(s, 0, sizeof *s);
  if ((rc = ooc_alloc_options_check(&ooc_alloc_va, cfg->options, err)) < 0)
    return rc;
  s->chunk = chunk;
  s->max_chunks = cfg->budget / chunk;
  s->n_handles = cfg->n_handles;
  s->range_cap = 64;
  s->chunk_cap = 64;
  s->hrange = calloc(n, sizeof *s->hrange);
  s->hblk = calloc(n, sizeof *s->hblk);
  s->bytes = calloc(n, sizeof *s->bytes);
  s->range = calloc((size_t)s->range_cap, sizeof *s->range);
  s->rfirst = calloc((size_t)s->range_cap, sizeof *s->rfirst);
  s->cnext = calloc((size_t)s->chunk_cap, sizeof *s->cnext);
  if (s->hrange == NULL || s->hblk == NULL || s->bytes == NULL ||
      s->range == NULL || s->rfirst == NULL || s->cnext == NULL ||
      ooc_blocktab_init(&s->bt, cfg->n_handles < INT32_MAX / 3
                                    ? 3 * cfg->n_handles + 3
                                    : INT32_MAX) != OOC_OK) {
    va_fini(s);
    return ooc_err_set(err, OOC_ENOMEM, "va allocator: out of memory");
  }
  clear(s);
  return OOC_OK;
}

static void
va_reset(void *vs)
{
  clear(vs);
}

/* --- ranges and chunks --------------------------------------------------- */

/* A virtual range of `bytes`: a free one of exactly that size (the
 * lowest-addressed), else a new one after the last (VA_RESERVE). */
static int
take_range(struct va_state *s, uint64_t bytes, const ooc_drv_sink *drv,
           int32_t *out)
{
  int32_t r = ooc_fittree_lower_bound(&s->free_ranges, s->range, bytes, 0);

  if (r >= 0 && s->range[r].size == bytes) {
    ooc_fittree_remove(&s->free_ranges, s->range, r);
    s->rfirst[r] = -1;
    *out = r;
    return OOC_OK;
  }
  if (s->n_ranges == s->range_cap) {
    int32_t cap;
    void *p;
    if (s->range_cap > INT32_MAX / 2)
      return OOC_ENOMEM;
    cap = 2 * s->range_cap;
    if ((p = realloc(s->range, (size_t)cap * sizeof *s->range)) == NULL)
      return OOC_ENOMEM;
    s->range = p;
    if ((p = realloc(s->rfirst, (size_t)cap * sizeof *s->rfirst)) == NULL)
      return OOC_ENOMEM;
    s->rfirst = p;
    s->range_cap = cap;
  }
  r = s->n_ranges++;
  s->range[r] = (ooc_fit_node){ .addr = s->va_next, .size = bytes,
                                .prev = -1, .next = -1 };
  s->rfirst[r] = -1;
  s->va_next += bytes;
  *out = r;
  return ooc_drv_emit(drv, OOC_DRV_VA_RESERVE, r, s->range[r].addr, bytes);
}

static void
put_range(struct va_state *s, int32_t r)
{
  ooc_fittree_insert(&s->free_ranges, s->range, r);
}

/* Chunks a request could still get: cached, or not created yet. */
static uint64_t
free_chunks(const struct va_state *s)
{
  return s->cached + (s->max_chunks - (uint64_t)s->created);
}

/* Map k chunks behind range r (the oldest cached first, then new ones:
 * CHUNK_CREATE), CHUNK_MAP each at its place. The caller checked that k
 * chunks are free. */
static int
map_chunks(struct va_state *s, int32_t r, uint64_t k, const ooc_drv_sink *drv)
{
  int32_t last = -1;    /* the range's last chunk so far (indices: the
                           chunk table may move as it grows) */
  uint64_t i;
  int rc;

  for (i = 0; i < k; i++) {
    int32_t c;
    if (s->cache_head >= 0) {
      c = s->cache_head;
      s->cache_head = s->cnext[c];
      if (s->cache_head < 0)
        s->cache_tail = -1;
      s->cached--;
    } else {
      if (s->created == s->chunk_cap) {
        int32_t *p;
        if (s->chunk_cap > INT32_MAX / 2)
          return OOC_ENOMEM;
        p = realloc(s->cnext, (size_t)s->chunk_cap * 2 * sizeof *p);
        if (p == NULL)
          return OOC_ENOMEM;
        s->cnext = p;
        s->chunk_cap *= 2;
      }
      c = s->created++;
      if ((rc = ooc_drv_emit(drv, OOC_DRV_CHUNK_CREATE, c, 0, s->chunk)) < 0)
        return rc;
    }
    s->cnext[c] = -1;
    if (last < 0)
      s->rfirst[r] = c;
    else
      s->cnext[last] = c;
    last = c;
    if ((rc = ooc_drv_emit(drv, OOC_DRV_CHUNK_MAP, c,
                           s->range[r].addr + i * s->chunk, s->chunk)) < 0)
      return rc;
  }
  return OOC_OK;
}

/* Unmap the chunks of range r (CHUNK_UNMAP each, in range order), put
 * them at the end of the cache and the range back among the free ones. */
static int
unmap_range(struct va_state *s, int32_t r, const ooc_drv_sink *drv)
{
  int32_t c = s->rfirst[r];
  uint64_t addr = s->range[r].addr;
  int rc;

  s->rfirst[r] = -1;
  while (c >= 0) {
    int32_t next = s->cnext[c];
    s->cnext[c] = -1;
    if (s->cache_tail >= 0)
      s->cnext[s->cache_tail] = c;
    else
      s->cache_head = c;
    s->cache_tail = c;
    s->cached++;
    if ((rc = ooc_drv_emit(drv, OOC_DRV_CHUNK_UNMAP, c, addr, s->chunk)) < 0)
      return rc;
    addr += s->chunk;
    c = next;
  }
  put_range(s, r);
  return OOC_OK;
}

/* --- the two paths ------------------------------------------------------- */

static int
alloc_small(struct va_state *s, int32_t h, uint64_t bytes,
            ooc_placement *where, const ooc_drv_sink *drv)
{
  ooc_blocktab *bt = &s->bt;
  uint64_t size = round_small(bytes);
  int32_t id = ooc_blocktab_best_fit(bt, 0, size), r;
  int rc;

  if (id < 0) {
    /* Open a segment: one chunk mapped behind a one-chunk range. */
    if (free_chunks(s) == 0)
      return OOC_EOOM;
    if ((rc = take_range(s, s->chunk, drv, &r)) < 0 ||
        (rc = map_chunks(s, r, 1, drv)) < 0)
      return rc;
    if ((id = ooc_blocktab_open(bt, 0, r, s->range[r].addr, s->chunk)) < 0)
      return OOC_ENOMEM;
    s->segments++;
  }
  if (bt->node[id].size - size >= VA_ALIGN &&
      ooc_blocktab_split(bt, id, size) != OOC_OK) {
    ooc_blocktab_insert(bt, id);
    return OOC_ENOMEM;
  }
  bt->node[id].is_free = 0;
  s->hblk[h] = id;
  *where = (ooc_placement){ .seg = bt->seg[id], .addr = bt->node[id].addr,
                            .size = bt->node[id].size };
  return OOC_OK;
}

static int
free_small(struct va_state *s, int32_t id, const ooc_drv_sink *drv)
{
  ooc_blocktab *bt = &s->bt;

  id = ooc_blocktab_free(bt, id);
  if (!ooc_blocktab_whole(bt, id)) {
    ooc_blocktab_insert(bt, id);
    return OOC_OK;
  }
  /* Wholly free: unmap the segment, its chunk goes back to the cache. */
  s->segments--;
  {
    int32_t r = bt->seg[id];
    ooc_blocktab_close(bt, id);
    return unmap_range(s, r, drv);
  }
}

static int
va_alloc(void *vs, int32_t h, uint64_t bytes, ooc_placement *where,
         const ooc_drv_sink *drv)
{
  struct va_state *s = vs;
  int rc;

  *where = (ooc_placement){ .seg = -1 };
  s->hrange[h] = s->hblk[h] = -1;
  s->bytes[h] = 0;
  if (bytes == 0)
    return OOC_OK;
  if (is_small(s->chunk, bytes)) {
    if ((rc = alloc_small(s, h, bytes, where, drv)) != OOC_OK)
      return rc;
  } else {
    uint64_t k = n_chunks(s->chunk, bytes);
    int32_t r;

    if (k > free_chunks(s) || k > UINT64_MAX / s->chunk)
      return OOC_EOOM;
    if ((rc = take_range(s, k * s->chunk, drv, &r)) < 0 ||
        (rc = map_chunks(s, r, k, drv)) < 0)
      return rc;
    s->hrange[h] = r;
    *where = (ooc_placement){ .seg = r, .addr = s->range[r].addr,
                              .size = k * s->chunk };
  }
  s->bytes[h] = bytes;
  s->allocated += bytes;
  return OOC_OK;
}

static int
va_free(void *vs, int32_t h, const ooc_drv_sink *drv)
{
  struct va_state *s = vs;
  int32_t r = s->hrange[h], b = s->hblk[h];

  s->allocated -= s->bytes[h];
  s->bytes[h] = 0;
  s->hrange[h] = s->hblk[h] = -1;
  if (b >= 0)
    return free_small(s, b, drv);
  if (r >= 0)
    return unmap_range(s, r, drv);
  return OOC_OK;
}

static uint64_t
largest_small(const struct va_state *s)
{
  return ooc_blocktab_largest(&s->bt, 0);
}

static void
va_stats(const void *vs, ooc_alloc_stats *st)
{
  const struct va_state *s = vs;
  uint64_t small = largest_small(s), whole = free_chunks(s) * s->chunk;

  *st = (ooc_alloc_stats){
    .allocated = s->allocated,
    .reserved = (uint64_t)s->created * s->chunk,
    .largest_free = small > whole ? small : whole,
    .n_mallocs = (uint64_t)s->created,
  };
}

static void
va_usage(const void *vs, uint64_t *allocated, uint64_t *reserved)
{
  const struct va_state *s = vs;

  *allocated = s->allocated;
  *reserved = (uint64_t)s->created * s->chunk;
}

static void
va_explain(const void *vs, uint64_t bytes, char *buf, size_t n)
{
  const struct va_state *s = vs;
  char b1[32], b2[32], b3[32];

  if (is_small(s->chunk, bytes))
    snprintf(buf, n, "va: no free block of %s in the %llu small segments "
             "(largest %s); %llu of %llu chunks of %s are free",
             ooc_fmt_bytes(bytes, b1, sizeof b1),
             (unsigned long long)s->segments,
             ooc_fmt_bytes(largest_small(s), b2, sizeof b2),
             (unsigned long long)free_chunks(s),
             (unsigned long long)s->max_chunks,
             ooc_fmt_bytes(s->chunk, b3, sizeof b3));
  else
    snprintf(buf, n, "va: %s needs %llu chunks of %s; only %llu of %llu "
             "are free",
             ooc_fmt_bytes(bytes, b1, sizeof b1),
             (unsigned long long)n_chunks(s->chunk, bytes),
             ooc_fmt_bytes(s->chunk, b2, sizeof b2),
             (unsigned long long)free_chunks(s),
             (unsigned long long)s->max_chunks);
}

/* A request's footprint: the 512 B-rounded size when small, k x chunk
 * when large, 0 for 0 bytes. */
static uint64_t
va_footprint(const ooc_alloc_config *cfg, uint64_t bytes)
{
  uint64_t chunk = va_chunk(cfg), k;

  if (bytes == 0)
    return 0;
  if (is_small(chunk, bytes))
    return round_small(bytes);
  k = n_chunks(chunk, bytes);
  return k > UINT64_MAX / chunk ? UINT64_MAX : k * chunk;
}

const ooc_allocator_type ooc_alloc_va = {
  .name = "va",
  .summary = "virtual addressing: chunks mapped behind contiguous ranges, "
             "small requests share chunks",
  .cite = "schedule-window seed §4; cross-checked with sony/nnabla "
          "src/nbla/memory/virtual_caching_allocator.cpp",
  .state_size = sizeof(struct va_state),
  .init = va_init,
  .fini = va_fini,
  .reset = va_reset,
  .alloc = va_alloc,
  .free = va_free,
  .stats = va_stats,
  .usage = va_usage,
  .explain = va_explain,
  .footprint = va_footprint,
};
