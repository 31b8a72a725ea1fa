/* sim/alloc_va.c — virtual addressing: physical chunks behind contiguous
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
 * blocks f (a treap whose priorities hash the block id, so its shape is
 * deterministic).
 * State, sized once by init for n_handles: bytes, chunks and small block
 * per handle, and a block table of 3 x n_handles + 3 entries with a
 * free-slot stack. Bound: free blocks of a segment are never adjacent, so a
 * segment with k live blocks has at most 2k + 1 blocks, and every mapped
 * segment holds a live block; hence blocks <= 3 x live small requests, and
 * small segments <= min(live small requests, budget / m_c).
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "util.h"

#define VA_DEFAULT_CHUNK (2ull << 20)
#define VA_ALIGN 512ull

/* A block of a small segment: live (a handle's) or free (in the treap). */
struct vblock {
  uint64_t addr, size;
  int32_t prev, next;   /* neighbours in the segment, -1 at its ends */
  int32_t left, right;  /* free-set treap children, -1 when none */
  uint32_t prio;        /* treap priority: a hash of the block id */
  uint8_t is_free;
};

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
  struct vblock *blk;
  int32_t n_slots;       /* free slots on the stack */
  int32_t *slots;
  int32_t root;          /* treap of free small blocks by (size, addr) */
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
  s->root = -1;
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
  free(s->blk);
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
  s->blk = calloc((size_t)s->cap, sizeof *s->blk);
  s->slots = calloc((size_t)s->cap, sizeof *s->slots);
  if (s->chunks == NULL || s->hblk == NULL || s->bytes == NULL ||
      s->blk == NULL || s->slots == NULL)
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

/* --- free small blocks: a treap ordered by (size, address) --------------- */

static int
before(const struct vblock *a, uint64_t size, uint64_t addr)
{
  return a->size < size || (a->size == size && a->addr < addr);
}

/* Split treap t into the blocks before (size, addr) (*l) and the rest
 * (*r). Recursion depth is the treap's height, O(log n) expected. */
static void
split(struct va_state *s, int32_t t, uint64_t size, uint64_t addr,
      int32_t *l, int32_t *r)
{
  if (t < 0) {
    *l = *r = -1;
  } else if (before(&s->blk[t], size, addr)) {
    split(s, s->blk[t].right, size, addr, &s->blk[t].right, r);
    *l = t;
  } else {
    split(s, s->blk[t].left, size, addr, l, &s->blk[t].left);
    *r = t;
  }
}

/* Join treaps a and b, every key of a before every key of b. */
static int32_t
join(struct va_state *s, int32_t a, int32_t b)
{
  if (a < 0)
    return b;
  if (b < 0)
    return a;
  if (s->blk[a].prio > s->blk[b].prio) {
    s->blk[a].right = join(s, s->blk[a].right, b);
    return a;
  }
  s->blk[b].left = join(s, a, s->blk[b].left);
  return b;
}

static void
set_insert(struct va_state *s, int32_t id)
{
  struct vblock *b = &s->blk[id];
  int32_t *link = &s->root;

  b->prio = (uint32_t)id * 2654435761u ^ 0x9e3779b9u;
  while (*link >= 0 && s->blk[*link].prio >= b->prio)
    link = before(&s->blk[*link], b->size, b->addr) ? &s->blk[*link].right
                                                   : &s->blk[*link].left;
  split(s, *link, b->size, b->addr, &b->left, &b->right);
  *link = id;
}

static void
set_remove(struct va_state *s, int32_t id)
{
  const struct vblock *b = &s->blk[id];
  int32_t *link = &s->root;

  while (*link != id)
    link = before(&s->blk[*link], b->size, b->addr) ? &s->blk[*link].right
                                                   : &s->blk[*link].left;
  *link = join(s, b->left, b->right);
}

/* Best fit: take the first free block of size >= size out of the set and
 * return it, or -1 when there is none. One descent, O(log n) expected. */
static int32_t
take_best_fit(struct va_state *s, uint64_t size)
{
  int32_t *link = &s->root, *best = NULL, id;

  while (*link >= 0) {
    if (s->blk[*link].size >= size) {
      best = link;
      link = &s->blk[*link].left;
    } else {
      link = &s->blk[*link].right;
    }
  }
  if (best == NULL)
    return -1;
  id = *best;
  *best = join(s, s->blk[id].left, s->blk[id].right);
  return id;
}

/* The largest free small block, 0 when there is none. O(log n). */
static uint64_t
largest_small(const struct va_state *s)
{
  int32_t t = s->root;

  while (t >= 0 && s->blk[t].right >= 0)
    t = s->blk[t].right;
  return t >= 0 ? s->blk[t].size : 0;
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
  int32_t id = take_best_fit(s, size);

  if (id < 0) {
    /* Open a segment: one chunk mapped into a fresh virtual range. The
     * block table cannot run out (the bound in the header). */
    if (s->n_slots == 0 || !take_chunk(s))
      return OOC_EOOM;
    id = s->slots[--s->n_slots];
    s->blk[id] = (struct vblock){
      .addr = s->next_addr, .size = s->chunk, .prev = -1, .next = -1,
      .left = -1, .right = -1, .is_free = 1,
    };
    s->next_addr += s->chunk;
    s->segments++;
    *cost_ns += s->map_ns;
  }
  remaining = s->blk[id].size - size;
  if (remaining >= VA_ALIGN && s->n_slots > 0) {
    int32_t r = s->slots[--s->n_slots];
    struct vblock *b = &s->blk[id];

    s->blk[r] = (struct vblock){
      .addr = b->addr + size, .size = remaining, .prev = id,
      .next = b->next, .is_free = 1,
    };
    if (b->next >= 0)
      s->blk[b->next].prev = r;
    b->next = r;
    b->size = size;
    set_insert(s, r);
  }
  s->blk[id].is_free = 0;
  s->hblk[h] = id;
  return OOC_OK;
}

/* Absorb block n, which directly follows block a in its segment, into a.
 * Neither may be in the free set while their sizes change. */
static void
absorb(struct va_state *s, int32_t a, int32_t n)
{
  struct vblock *b = &s->blk[a], *nb = &s->blk[n];

  b->size += nb->size;
  b->next = nb->next;
  if (nb->next >= 0)
    s->blk[nb->next].prev = a;
  s->slots[s->n_slots++] = n;
}

static void
free_small(struct va_state *s, int32_t id)
{
  int32_t p, n;

  s->blk[id].is_free = 1;
  n = s->blk[id].next;
  if (n >= 0 && s->blk[n].is_free) {
    set_remove(s, n);
    absorb(s, id, n);
  }
  p = s->blk[id].prev;
  if (p >= 0 && s->blk[p].is_free) {
    set_remove(s, p);
    absorb(s, p, id);
    id = p;
  }
  if (s->blk[id].prev < 0 && s->blk[id].next < 0) {
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
