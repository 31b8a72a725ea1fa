/* alloc/va.c — virtual addressing: physical chunks behind contiguous
 * virtual ranges (schedule-window seed §4), with small requests
 * sub-allocated from chunk-sized segments.
 *
 * One idea: physical memory is handed out in chunks of m_c = chunk_bytes,
 * created lazily up to budget / m_c of them and cached when unmapped (never
 * given back), so reserved = chunks created x m_c. A request of m_r bytes
 * takes one of two paths:
 *  - large, m_r >= m_c / 2: k = ceil(m_r / m_c) chunks mapped into one
 *    fresh virtual range, as in the seed. Chunks combine in any order, so
 *    there is no external fragmentation, only the internal m_a - m_r < m_c
 *    per tensor (seed eq. 1); since m_r >= m_c / 2, m_a < 2 m_r.
 *  - small, 0 < m_r < m_c / 2 (and its 512 B-rounded size <= m_c / 2,
 *    which only matters for a chunk that is not a multiple of 1 KiB): the
 *    size rounds up to 512 B and is placed best-fit, by (size, address),
 *    in a "small segment": one chunk mapped once and kept mapped while
 *    anything lives in it. A block is split when 512 B or more is left;
 *    a freed block merges with its free neighbours inside its segment, and
 *    a segment that becomes wholly free is unmapped and its chunk returned
 *    to the cache. A new segment is mapped only when no free block fits.
 *  - m_r = 0 takes nothing.
 * The seed maps every request to whole chunks; with its 40 MiB chunk that
 * gives each 4 KiB bias a 40 MiB chunk (ResNet-50's 107 parameter tensors
 * would take 4.18 GiB). Departure, as real VA allocators do (PyTorch's
 * expandable segments, slab allocators): small requests share chunks. The
 * threshold m_c / 2 keeps every large request's footprint under twice its
 * size and lets every small segment hold at least two requests; the small
 * path brings back external fragmentation, but only inside the small
 * segments (each under m_c / 2 per request).
 * ooc_alloc_footprint() gives a request's footprint by the same rule: the
 * 512 B-rounded size when small, k x m_c when large.
 *
 * Cost: every chunk mapped costs hw->va_map_ns (new or cached alike): k of
 * them for a large request, one when a small request opens a segment,
 * nothing when it fits a mapped segment. Frees (unmap, return to the cache)
 * are free. Large path O(1); small path O(log f) expected in the free small
 * blocks f (an ooc_fittree, alloc/fittree.h: a treap whose priorities hash
 * the block id, so its shape is deterministic).
 * State, sized once by init for n_handles: bytes, chunks and small block
 * per handle, and a block table of 3 x n_handles + 3 fittree nodes
 * (address, size, in-segment neighbours) with a free-slot stack. Bound:
 * free blocks of a segment are never adjacent, so a segment with k live
 * blocks has at most 2k + 1 blocks, and every mapped segment holds a live
 * block; hence blocks <= 3 x live small requests, and small segments <=
 * min(live small requests, budget / m_c).
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloc/alloc.h"
#include "alloc/fittree.h"
#include "base/util.h"

#define VA_DEFAULT_CHUNK (2ull << 20)
#define VA_ALIGN 512ull

struct va_state {
  uint64_t chunk;
  uint64_t max_chunks;   /* budget / chunk */
  uint64_t created;      /* physical chunks created so far */
  uint64_t cached;       /* of those, not mapped */
  uint64_t segments;     /* small segments mapped now */
  int64_t map_ns;
  int32_t n_handles;
  uint32_t *chunks;      /* large: chunks mapped per handle */
  int32_t *hblk;         /* small: block per handle, -1 when none */
  uint64_t *bytes;       /* bytes requested per handle */
  int32_t cap;           /* block table entries */
  ooc_fit_node *node;    /* blocks of the small segments: live (a
                          * handle's) or free (in free_set) */
  int32_t n_slots;       /* free slots on the stack */
  int32_t *slots;
  ooc_fittree free_set;  /* free small blocks by (size, addr) */
  uint64_t next_addr;    /* next virtual address of a small segment */
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

  memset(s->chunks, 0, (size_t)s->n_handles * sizeof *s->chunks);
  memset(s->bytes, 0, (size_t)s->n_handles * sizeof *s->bytes);
  for (i = 0; i < s->n_handles; i++)
    s->hblk[i] = -1;
  s->n_slots = s->cap;
  for (i = 0; i < s->cap; i++)
    s->slots[i] = s->cap - 1 - i;
  ooc_fittree_clear(&s->free_set);
  s->next_addr = 0;
  s->created = 0;
  s->cached = 0;
  s->segments = 0;
  s->allocated = 0;
}

static void
va_fini(void *vs)
{
  struct va_state *s = vs;

  free(s->chunks);
  free(s->hblk);
  free(s->bytes);
  free(s->node);
  free(s->slots);
  memset(s, 0, sizeof *s);
}

static int
va_init(void *vs, const ooc_alloc_config *cfg, ooc_err *err)
{
  struct va_state *s = vs;
  size_t n = (size_t)cfg->n_handles + 1;
  uint64_t chunk = va_chunk(cfg);

  *s = (struct va_state){
    .chunk = chunk, .max_chunks = cfg->budget / chunk,
    .map_ns = cfg->hw != NULL ? cfg->hw->va_map_ns : 0,
    .n_handles = cfg->n_handles,
  };
  if (cfg->n_handles > (INT32_MAX - 3) / 3)
    goto fail;
  s->cap = 3 * cfg->n_handles + 3;
  s->chunks = calloc(n, sizeof *s->chunks);
  s->hblk = calloc(n, sizeof *s->hblk);
  s->bytes = calloc(n, sizeof *s->bytes);
  s->node = calloc((size_t)s->cap, sizeof *s->node);
  s->slots = calloc((size_t)s->cap, sizeof *s->slots);
  if (s->chunks == NULL || s->hblk == NULL || s->bytes == NULL ||
      s->node == NULL || s->slots == NULL)
    goto fail;
  clear(s);
  return OOC_OK;
fail:
  va_fini(s);
  return ooc_err_set(err, OOC_ENOMEM, "va allocator: out of memory");
}

static void
va_reset(void *vs)
{
  clear(vs);
}

/* --- free small blocks: an ooc_fittree by (size, address) --------------- */

static void
set_insert(struct va_state *s, int32_t id)
{
  ooc_fittree_insert(&s->free_set, s->node, id);
}

/* The largest free small block, 0 when there is none. O(log n). */
static uint64_t
largest_small(const struct va_state *s)
{
  return ooc_fittree_largest(&s->free_set, s->node);
}

/* --- the two paths ------------------------------------------------------- */

static uint64_t
free_chunks(const struct va_state *s)
{
  return s->cached + (s->max_chunks - s->created);
}

/* Take one physical chunk (a cached one first); 0 when none is left. */
static int
take_chunk(struct va_state *s)
{
  if (s->cached > 0)
    s->cached--;
  else if (s->created < s->max_chunks)
    s->created++;
  else
    return 0;
  return 1;
}

static int
alloc_small(struct va_state *s, int32_t h, uint64_t bytes, int64_t *cost_ns)
{
  uint64_t size = round_small(bytes), remaining;
  int32_t id = ooc_fittree_take_best_fit(&s->free_set, s->node, size);

  if (id < 0) {
    /* Open a segment: one chunk mapped into a fresh virtual range. The
     * block table cannot run out (the bound in the header). */
    if (s->n_slots == 0 || !take_chunk(s))
      return OOC_EOOM;
    id = s->slots[--s->n_slots];
    s->node[id] = (ooc_fit_node){
      .addr = s->next_addr, .size = s->chunk, .prev = -1, .next = -1,
      .is_free = 1,
    };
    s->next_addr += s->chunk;
    s->segments++;
    *cost_ns += s->map_ns;
  }
  remaining = s->node[id].size - size;
  if (remaining >= VA_ALIGN && s->n_slots > 0) {
    int32_t r = s->slots[--s->n_slots];

    ooc_fittree_carve(s->node, id, size, r);
    set_insert(s, r);
  }
  s->node[id].is_free = 0;
  s->hblk[h] = id;
  return OOC_OK;
}

static void
free_small(struct va_state *s, int32_t id)
{
  int32_t gone[2];
  int i, n_gone;

  id = ooc_fittree_coalesce(&s->free_set, s->node, id, gone, &n_gone);
  for (i = 0; i < n_gone; i++)
    s->slots[s->n_slots++] = gone[i];
  if (s->node[id].prev < 0 && s->node[id].next < 0) {
    /* Wholly free: unmap the segment, its chunk goes back to the cache. */
    s->slots[s->n_slots++] = id;
    s->segments--;
    s->cached++;
  } else {
    set_insert(s, id);
  }
}

static int
va_alloc(void *vs, int32_t h, uint64_t bytes, int64_t *cost_ns)
{
  struct va_state *s = vs;
  uint64_t k, fresh;

  if (is_small(s->chunk, bytes)) {
    if (alloc_small(s, h, bytes, cost_ns) != OOC_OK)
      return OOC_EOOM;
  } else {
    k = n_chunks(s->chunk, bytes);
    fresh = k > s->cached ? k - s->cached : 0;
    if (fresh > s->max_chunks - s->created || k > UINT32_MAX)
      return OOC_EOOM;
    s->created += fresh;
    s->cached -= k - fresh;
    s->chunks[h] = (uint32_t)k;
    *cost_ns += (int64_t)k * s->map_ns;
  }
  s->bytes[h] = bytes;
  s->allocated += bytes;
  return OOC_OK;
}

static void
va_free(void *vs, int32_t h, int64_t *cost_ns)
{
  struct va_state *s = vs;

  (void)cost_ns;
  if (s->hblk[h] >= 0)
    free_small(s, s->hblk[h]);
  s->cached += s->chunks[h];
  s->allocated -= s->bytes[h];
  s->hblk[h] = -1;
  s->chunks[h] = 0;
  s->bytes[h] = 0;
}

static void
va_stats(const void *vs, ooc_alloc_stats *st)
{
  const struct va_state *s = vs;
  uint64_t small = largest_small(s), whole = free_chunks(s) * s->chunk;

  *st = (ooc_alloc_stats){
    .allocated = s->allocated,
    .reserved = s->created * s->chunk,
    .largest_free = small > whole ? small : whole,
    .n_mallocs = s->created,
  };
}

static void
va_usage(const void *vs, uint64_t *allocated, uint64_t *reserved)
{
  const struct va_state *s = vs;

  *allocated = s->allocated;
  *reserved = s->created * s->chunk;
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
  .summary = "virtual addressing: chunks mapped to contiguous ranges, "
             "small requests share chunks (schedule-window seed §4)",
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
