/* alloc/caching.c — PyTorch's CUDA caching allocator as a placement
 * policy.
 *
 * Follows pytorch/pytorch c10/cuda/CUDACachingAllocator.cpp
 * (DeviceCachingAllocator: malloc, get_free_block, alloc_block,
 * should_split, get_allocation_size, round_size, free_block,
 * release_available_cached_blocks, release_cached_blocks, and the
 * ExpandableSegment / find_expandable_block / map_block / unmap_block path)
 * and c10/core/AllocatorConfig.cpp (the options), read in 2025. The rules:
 *   - a request of 0 bytes takes nothing; others round up to 512 B
 *     (kMinBlockSize), or with roundup_power2_divisions=N to the next of N
 *     equal steps between two powers of two when the size is > 512 x N;
 *   - sizes <= 1 MiB (kSmallSize) use the small pool, the rest the large
 *     pool; each pool caches its free blocks ordered by (size, address)
 *     and a request takes the first one of at least its size (best fit);
 *   - with max_split_size_mb=M: a request under M never takes a cached
 *     block of M or more, and a request of M or more takes a cached block
 *     only if it is less than 20 MiB (kLargeBuffer) bigger;
 *   - no cached block: a new segment (cudaMalloc) of 2 MiB (kSmallBuffer)
 *     for the small pool, 20 MiB for a request under 10 MiB
 *     (kMinLargeAlloc), else the size rounded up to 2 MiB (kRoundLarge);
 *     it fails when reserved + that size would pass the budget (the
 *     allocator's memory fraction, set_fraction);
 *   - failing that: release_available_cached_blocks (only with M: free
 *     the smallest cached block of at least max(size, M), else the largest
 *     blocks of M or more until that many bytes are freed) and retry; then
 *     release_cached_blocks (every cached block that is a whole segment,
 *     large pool then small, each in (size, address) order: SEG_FREE) and
 *     retry once more; then OOM;
 *   - the block found is split when the rest is >= 512 B (small pool, or
 *     expandable segments) or > 1 MiB (large pool, and only for a request
 *     under M);
 *   - a freed block merges with the free blocks next to it in its segment
 *     only, and goes back to its pool's cache.
 * expandable_segments (Note [Expandable Segments]): one virtual range per
 * pool (VA_RESERVE of 9/8 of the budget rounded up to pages, as PyTorch
 * reserves 9/8 of the device memory), pages of 2 MiB (small pool) or
 * 20 MiB (large) created and mapped (CHUNK_CREATE, then CHUNK_MAP per page)
 * at the lowest address where free and unmapped space can hold the
 * request; a cached block's size for best fit counts the unmapped space
 * after it (get_free_block's expandable_size walk); release_cached_blocks
 * unmaps and releases (CHUNK_UNMAP, CHUNK_RELEASE) every whole page of
 * every cached block, and gives a range that becomes wholly unmapped back
 * (VA_FREE). A page that the budget cannot hold fails the mapping: the
 * pages created for it before are released (PyTorch's cuMemCreate loop).
 *
 * Departures: one stream, no events, no CUDA graph pools, no garbage
 * collection threshold, no free-memory callbacks. The budget is both the
 * memory fraction and the device's capacity. roundup_power2_divisions
 * takes one value for all sizes (the bracketed per-interval list does not
 * fit the "key=value" option syntax). max_split_size_mb cannot be combined
 * with expandable_segments: PyTorch's release of oversize blocks calls
 * cudaFree, which an expandable segment's block does not have.
 * max_non_split_rounding_mb is not an option: the 20 MiB it defaults to is
 * used. On OOC_EOOM with expandable segments, pages mapped by the failed
 * last attempt stay mapped and cached, as in PyTorch.
 *
 * Layout: segments (and expandable ranges) are laid out one after the
 * other from address 0 in the order they are created (next address +=
 * size); an address is never reused within a run. Segment ids are dense,
 * the last one released reused first; page chunk ids likewise.
 *
 * State: the block table (alloc/blocktab.h) with one free tree per pool,
 * per handle its block and request; for expandable segments a table of
 * ranges with the chunk id of each page and, per pool, the unmapped blocks
 * sorted by address. Cost: alloc and free O(log f) expected in the cached
 * blocks f of the pool; a release walks them; expandable segments add a
 * walk of the unmapped blocks when pages must be mapped.
 */
#include "config.h"

#include <assert.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloc/alloc.h"
#include "alloc/blocktab.h"
#include "base/util.h"

#define MIB (1024ull * 1024ull)
#define MIN_BLOCK 512ull         /* kMinBlockSize */
#define SMALL_SIZE MIB           /* kSmallSize: largest small request */
#define SMALL_BUFFER (2 * MIB)   /* kSmallBuffer: small segment and page */
#define MIN_LARGE_ALLOC (10 * MIB)
#define LARGE_BUFFER (20 * MIB)  /* kLargeBuffer: segment and page */
#define ROUND_LARGE (2 * MIB)    /* kRoundLarge */
#define MIN_SPLIT_MB 20ull       /* max_split_size_mb's lower limit */
#define MAX_DIVISIONS (1ull << 30)

enum { SMALL = 0, LARGE = 1 };

struct opts {
  int expandable;
  uint64_t max_split;     /* UINT64_MAX: not set */
  uint64_t divisions;     /* 0: not set */
};

/* An expandable segment: a virtual range of pages of one pool. */
struct xseg {
  uint64_t base, size, page;
  int32_t *chunk;         /* chunk id per page, -1 when unmapped */
  int32_t n_chunk;        /* entries of chunk */
  uint8_t pool;
};

struct caching_state {
  uint64_t budget;
  int32_t n_handles;
  struct opts o;
  int32_t *hblk;          /* block per handle, -1 when none */
  uint64_t *req;          /* bytes requested per handle */
  ooc_blocktab bt;        /* class = pool */
  ooc_idpool segs;        /* segment (or expandable range) ids */
  ooc_idpool chunks;      /* page chunk ids */
  struct xseg *xs;        /* per expandable range id */
  int32_t xs_cap;
  int32_t *um[2];         /* unmapped blocks per pool, by address */
  int32_t n_um[2], um_cap[2];
  uint64_t allocated, in_use, reserved, next_addr;
  uint64_t n_mallocs, n_releases;
};

static const char *const caching_options[] = {
  "expandable_segments", "max_split_size_mb", "roundup_power2_divisions",
  NULL,
};

/* --- options ------------------------------------------------------------- */

/* Parse the decimal integer v (length n) into *out; 0 when malformed. */
static int
parse_u64(const char *v, size_t n, uint64_t *out)
{
  uint64_t x = 0;
  size_t i;

  if (v == NULL || n == 0 || n > 19)
    return 0;
  for (i = 0; i < n; i++) {
    if (v[i] < '0' || v[i] > '9')
      return 0;
    x = x * 10 + (uint64_t)(v[i] - '0');
  }
  *out = x;
  return 1;
}

/* Read cfg options into *o. err may be NULL (footprint queries: a bad
 * value then leaves the default). */
static int
parse_opts(const char *options, struct opts *o, ooc_err *err)
{
  const char *v;
  size_t n;
  uint64_t x;
  int rc;

  *o = (struct opts){ .max_split = UINT64_MAX };
  if ((rc = ooc_alloc_options_check(&ooc_alloc_caching, options, err)) < 0)
    return rc;
  if (ooc_alloc_option(options, "expandable_segments", &v, &n)) {
    if (v != NULL)
      return ooc_err_set(err, OOC_EINVAL, "allocator 'caching': option "
                         "'expandable_segments' takes no value");
    o->expandable = 1;
  }
  if (ooc_alloc_option(options, "max_split_size_mb", &v, &n)) {
    if (!parse_u64(v, n, &x) || x < MIN_SPLIT_MB)
      return ooc_err_set(err, OOC_EINVAL, "allocator 'caching': "
                         "max_split_size_mb must be an integer >= %llu "
                         "(MiB), got '%.*s'", MIN_SPLIT_MB, (int)n,
                         v != NULL ? v : "");
    o->max_split = x > UINT64_MAX / MIB ? UINT64_MAX / MIB * MIB : x * MIB;
  }
  if (ooc_alloc_option(options, "roundup_power2_divisions", &v, &n)) {
    if (!parse_u64(v, n, &x) || x == 0 || (x & (x - 1)) != 0 ||
        x > MAX_DIVISIONS)
      return ooc_err_set(err, OOC_EINVAL, "allocator 'caching': "
                         "roundup_power2_divisions must be a power of 2 "
                         "from 1 to %llu, got '%.*s'", MAX_DIVISIONS, (int)n,
                         v != NULL ? v : "");
    o->divisions = x;
  }
  if (o->expandable && o->max_split != UINT64_MAX)
    return ooc_err_set(err, OOC_EINVAL, "allocator 'caching': "
                       "max_split_size_mb cannot be combined with "
                       "expandable_segments");
  return OOC_OK;
}

/* --- sizes --------------------------------------------------------------- */

static int
log2_floor(uint64_t x)
{
  int k = 0;

  while (x >>= 1)
    k++;
  return k;
}

/* roundup_power2_next_division: size up to the next of `divisions` equal
 * steps between the powers of two around it. */
static uint64_t
next_division(uint64_t size, uint64_t divisions)
{
  uint64_t floor2, step, r;

  if ((size & (size - 1)) == 0)
    return size;
  floor2 = 1ull << log2_floor(size);
  step = floor2 >> log2_floor(divisions);
  if (step == 0)
    return floor2 << 1;
  r = size & ~(step - 1);
  return r == size ? size : r + step;
}

static uint64_t
round_size(const struct opts *o, uint64_t size)
{
  if (size < MIN_BLOCK)
    return MIN_BLOCK;
  if (o->divisions > 1 && size > MIN_BLOCK * o->divisions)
    return next_division(size, o->divisions);
  return (size + MIN_BLOCK - 1) / MIN_BLOCK * MIN_BLOCK;
}

static uint64_t
allocation_size(uint64_t size)
{
  if (size <= SMALL_SIZE)
    return SMALL_BUFFER;
  if (size < MIN_LARGE_ALLOC)
    return LARGE_BUFFER;
  return (size + ROUND_LARGE - 1) / ROUND_LARGE * ROUND_LARGE;
}

/* --- state --------------------------------------------------------------- */

static void
clear(struct caching_state *s)
{
  int32_t i;

  for (i = 0; i < s->n_handles; i++)
    s->hblk[i] = -1;
  memset(s->req, 0, (size_t)s->n_handles * sizeof *s->req);
  ooc_blocktab_clear(&s->bt);
  ooc_idpool_clear(&s->segs);
  ooc_idpool_clear(&s->chunks);
  s->n_um[0] = s->n_um[1] = 0;
  s->allocated = s->in_use = s->reserved = s->next_addr = 0;
  s->n_mallocs = s->n_releases = 0;
}

static void
caching_fini(void *vs)
{
  struct caching_state *s = vs;
  int32_t i;

  free(s->hblk);
  free(s->req);
  ooc_blocktab_fini(&s->bt);
  ooc_idpool_fini(&s->segs);
  ooc_idpool_fini(&s->chunks);
  for (i = 0; i < s->xs_cap; i++)
    free(s->xs[i].chunk);
  free(s->xs);
  free(s->um[0]);
  free(s->um[1]);
  memset(s, 0, sizeof *s);
}

static int
caching_init(void *vs, const ooc_alloc_config *cfg, ooc_err *err)
{
  struct caching_state *s = vs;
  int32_t cap;
  int rc;

  memset(s, 0, sizeof *s);
  if ((rc = parse_opts(cfg->options, &s->o, err)) < 0)
    return rc;
  s->budget = cfg->budget;
  s->n_handles = cfg->n_handles;
  s->hblk = malloc(((size_t)cfg->n_handles + 1) * sizeof *s->hblk);
  s->req = malloc(((size_t)cfg->n_handles + 1) * sizeof *s->req);
  cap = cfg->n_handles < (INT32_MAX - 64) / 2 ? 2 * cfg->n_handles + 64
                                              : INT32_MAX;
  if (s->hblk == NULL || s->req == NULL ||
      ooc_blocktab_init(&s->bt, cap) != OOC_OK ||
      ooc_idpool_init(&s->segs, 64) != OOC_OK ||
      ooc_idpool_init(&s->chunks, 64) != OOC_OK) {
    caching_fini(s);
    return ooc_err_set(err, OOC_ENOMEM, "caching allocator: out of memory");
  }
  clear(s);
  return OOC_OK;
}

static void
caching_reset(void *vs)
{
  clear(vs);
}

/* --- cudaMalloc segments ------------------------------------------------- */

/* Give back whole free segment id (in its pool's tree): SEG_FREE. */
static int
release_block(struct caching_state *s, int32_t id, const ooc_drv_sink *drv)
{
  ooc_blocktab *bt = &s->bt;
  int32_t seg = bt->seg[id];
  uint64_t addr = bt->node[id].addr, size = bt->node[id].size;

  assert(ooc_blocktab_whole(bt, id));
  ooc_blocktab_remove(bt, id);
  ooc_blocktab_close(bt, id);
  ooc_idpool_put(&s->segs, seg);
  s->reserved -= size;
  s->n_releases++;
  return ooc_drv_emit(drv, OOC_DRV_SEG_FREE, seg, addr, size);
}

/* A new segment of `bytes` for pool: SEG_MALLOC. *id: its block. */
static int
malloc_segment(struct caching_state *s, int pool, uint64_t bytes,
               const ooc_drv_sink *drv, int32_t *id)
{
  int32_t seg = ooc_idpool_take(&s->segs);
  uint64_t addr = s->next_addr;

  if (seg < 0)
    return OOC_ENOMEM;
  *id = ooc_blocktab_open(&s->bt, pool, seg, addr, bytes);
  if (*id < 0) {
    ooc_idpool_put(&s->segs, seg);
    return OOC_ENOMEM;
  }
  s->next_addr += bytes;
  s->reserved += bytes;
  s->n_mallocs++;
  return ooc_drv_emit(drv, OOC_DRV_SEG_MALLOC, seg, addr, bytes);
}

/* --- expandable segments ------------------------------------------------- */

static uint64_t
page_of(int pool)
{
  return pool == SMALL ? SMALL_BUFFER : LARGE_BUFFER;
}

static int
allocatable(const struct caching_state *s, int32_t b)
{
  return b >= 0 && (s->bt.node[b].is_free ||
                    (s->bt.flag[b] & OOC_BLK_UNMAPPED));
}

/* Position of the first unmapped block of pool at or after addr. */
static int32_t
um_find(const struct caching_state *s, int pool, uint64_t addr)
{
  int32_t lo = 0, hi = s->n_um[pool];

  while (lo < hi) {
    int32_t mid = lo + (hi - lo) / 2;
    if (s->bt.node[s->um[pool][mid]].addr < addr)
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo;
}

static int
um_insert(struct caching_state *s, int pool, int32_t id)
{
  int32_t k;

  if (s->n_um[pool] == s->um_cap[pool]) {
    int32_t cap = s->um_cap[pool] ? 2 * s->um_cap[pool] : 16;
    int32_t *p = realloc(s->um[pool], (size_t)cap * sizeof *p);
    if (p == NULL)
      return OOC_ENOMEM;
    s->um[pool] = p;
    s->um_cap[pool] = cap;
  }
  k = um_find(s, pool, s->bt.node[id].addr);
  memmove(&s->um[pool][k + 1], &s->um[pool][k],
          (size_t)(s->n_um[pool] - k) * sizeof *s->um[pool]);
  s->um[pool][k] = id;
  s->n_um[pool]++;
  return OOC_OK;
}

static void
um_remove(struct caching_state *s, int pool, int32_t id)
{
  int32_t k = um_find(s, pool, s->bt.node[id].addr);

  assert(k < s->n_um[pool] && s->um[pool][k] == id);
  memmove(&s->um[pool][k], &s->um[pool][k + 1],
          (size_t)(s->n_um[pool] - k - 1) * sizeof *s->um[pool]);
  s->n_um[pool]--;
}

/* Make block b unmapped free space (out of every tree). */
static void
set_unmapped(struct caching_state *s, int32_t b)
{
  s->bt.node[b].is_free = 0;
  s->bt.flag[b] |= OOC_BLK_UNMAPPED;
}

/* Chunk table of range x covering pages [0, end). */
static int
ensure_pages(struct xseg *x, uint64_t end)
{
  int32_t n, i, *p;

  if (end <= (uint64_t)x->n_chunk)
    return OOC_OK;
  if (end > INT32_MAX)
    return OOC_ENOMEM;
  n = x->n_chunk * 2 > (int32_t)end ? x->n_chunk * 2 : (int32_t)end;
  if ((p = realloc(x->chunk, (size_t)n * sizeof *p)) == NULL)
    return OOC_ENOMEM;
  for (i = x->n_chunk; i < n; i++)
    p[i] = -1;
  x->chunk = p;
  x->n_chunk = n;
  return OOC_OK;
}

/* Reserve a new expandable range for pool (VA_RESERVE); *id: its one
 * unmapped block. */
static int
new_range(struct caching_state *s, int pool, const ooc_drv_sink *drv,
          int32_t *id)
{
  uint64_t page = page_of(pool);
  uint64_t want = s->budget > UINT64_MAX / 2 ? UINT64_MAX / 2
                                             : s->budget + s->budget / 8;
  uint64_t pages = want / page + (want % page != 0);
  int32_t seg, i;
  struct xseg *x;
  int rc;

  if (pages == 0)
    pages = 1;
  if ((seg = ooc_idpool_take(&s->segs)) < 0)
    return OOC_ENOMEM;
  if (seg >= s->xs_cap) {
    int32_t cap = s->xs_cap ? 2 * s->xs_cap : 4;
    struct xseg *p = realloc(s->xs, (size_t)cap * sizeof *p);
    if (p == NULL)
      return OOC_ENOMEM;
    memset(p + s->xs_cap, 0, (size_t)(cap - s->xs_cap) * sizeof *p);
    s->xs = p;
    s->xs_cap = cap;
  }
  x = &s->xs[seg];
  for (i = 0; i < x->n_chunk; i++)
    x->chunk[i] = -1;
  x->base = s->next_addr;
  x->size = pages * page;
  x->page = page;
  x->pool = (uint8_t)pool;
  s->next_addr += x->size;
  if ((*id = ooc_blocktab_open(&s->bt, pool, seg, x->base, x->size)) < 0)
    return OOC_ENOMEM;
  set_unmapped(s, *id);
  if ((rc = um_insert(s, pool, *id)) < 0)
    return rc;
  return ooc_drv_emit(drv, OOC_DRV_VA_RESERVE, seg, x->base, x->size);
}

/* The lowest-addressed block from which free and unmapped space holds
 * size bytes (find_expandable_block); a new range when none does. */
static int
find_expandable(struct caching_state *s, int pool, uint64_t size,
                const ooc_drv_sink *drv, int32_t *out)
{
  int32_t k;

  for (k = 0; k < s->n_um[pool]; k++) {
    int32_t c = s->um[pool][k], b;
    uint64_t bytes = 0;

    if (allocatable(s, s->bt.node[c].prev))
      c = s->bt.node[c].prev;
    for (b = c; bytes < size && allocatable(s, b); b = s->bt.node[b].next)
      bytes += s->bt.node[b].size;
    if (bytes >= size) {
      *out = c;
      return OOC_OK;
    }
  }
  return new_range(s, pool, drv, out);
}

/* Map the pages under the first `size` bytes of unmapped block id
 * (map_block): CHUNK_CREATE each, then CHUNK_MAP each; the mapped part
 * merges with the free blocks next to it and is cached. *out: the merged
 * block. OOC_EOOM when the budget cannot hold the pages (those that fit
 * are created and released again first, as cuMemCreate's failure does). */
static int
map_block(struct caching_state *s, int32_t id, uint64_t size,
          const ooc_drv_sink *drv, int32_t *out)
{
  ooc_blocktab *bt = &s->bt;
  struct xseg *x = &s->xs[bt->seg[id]];
  int pool = x->pool;
  uint64_t off = bt->node[id].addr - x->base, page = x->page;
  uint64_t begin = off / page, end = (off + size + page - 1) / page, i;
  uint64_t fit = (s->budget - s->reserved) / page;
  int rc;

  assert(bt->flag[id] & OOC_BLK_UNMAPPED);
  if ((rc = ensure_pages(x, end)) < 0)
    return rc;
  if (fit < end - begin) {
    for (i = begin; i < begin + fit; i++) {
      if ((x->chunk[i] = ooc_idpool_take(&s->chunks)) < 0)
        return OOC_ENOMEM;
      if ((rc = ooc_drv_emit(drv, OOC_DRV_CHUNK_CREATE, x->chunk[i], 0,
                             page)) < 0)
        return rc;
    }
    for (i = begin; i < begin + fit; i++) {
      ooc_idpool_put(&s->chunks, x->chunk[i]);
      if ((rc = ooc_drv_emit(drv, OOC_DRV_CHUNK_RELEASE, x->chunk[i], 0,
                             page)) < 0)
        return rc;
      x->chunk[i] = -1;
    }
    return OOC_EOOM;
  }
  for (i = begin; i < end; i++) {
    if ((x->chunk[i] = ooc_idpool_take(&s->chunks)) < 0)
      return OOC_ENOMEM;
    if ((rc = ooc_drv_emit(drv, OOC_DRV_CHUNK_CREATE, x->chunk[i], 0,
                           page)) < 0)
      return rc;
  }
  for (i = begin; i < end; i++)
    if ((rc = ooc_drv_emit(drv, OOC_DRV_CHUNK_MAP, x->chunk[i],
                           x->base + i * page, page)) < 0)
      return rc;
  s->reserved += (end - begin) * page;
  s->n_mallocs += end - begin;
  um_remove(s, pool, id);
  bt->flag[id] &= (uint8_t)~OOC_BLK_UNMAPPED;
  if ((end - begin) * page < bt->node[id].size) {
    int32_t r = ooc_blocktab_cut(bt, id, (end - begin) * page);
    if (r < 0)
      return OOC_ENOMEM;
    set_unmapped(s, r);
    if ((rc = um_insert(s, pool, r)) < 0)
      return rc;
  }
  id = ooc_blocktab_free(bt, id);
  ooc_blocktab_insert(bt, id);
  *out = id;
  return OOC_OK;
}

/* try_allocate_expandable_block: a free mapped block of at least size
 * bytes, out of the tree, mapping pages as needed. */
static int
alloc_expandable(struct caching_state *s, int pool, uint64_t size,
                 const ooc_drv_sink *drv, int32_t *out)
{
  ooc_blocktab *bt = &s->bt;
  int32_t c;
  int rc;

  if ((rc = find_expandable(s, pool, size, drv, &c)) < 0)
    return rc;
  if ((bt->flag[c] & OOC_BLK_UNMAPPED) &&
      (rc = map_block(s, c, bt->node[c].size < size ? bt->node[c].size : size,
                      drv, &c)) != OOC_OK)
    return rc;
  while (bt->node[c].size < size) {
    uint64_t rest = size - bt->node[c].size;
    int32_t nx = bt->node[c].next;

    assert(nx >= 0 && (bt->flag[nx] & OOC_BLK_UNMAPPED));
    if ((rc = map_block(s, nx, bt->node[nx].size < rest ? bt->node[nx].size
                                                        : rest,
                        drv, &c)) != OOC_OK)
      return rc;
  }
  ooc_blocktab_remove(bt, c);
  *out = c;
  return OOC_OK;
}

/* Give back range of unmapped whole block b (VA_FREE). */
static int
release_range(struct caching_state *s, int32_t b, const ooc_drv_sink *drv)
{
  int32_t seg = s->bt.seg[b];
  struct xseg *x = &s->xs[seg];

  um_remove(s, x->pool, b);
  ooc_blocktab_close(&s->bt, b);
  ooc_idpool_put(&s->segs, seg);
  return ooc_drv_emit(drv, OOC_DRV_VA_FREE, seg, x->base, x->size);
}

/* unmap_block: unmap and release the whole pages under free mapped block
 * id (in its tree); the parts before and after stay cached. */
static int
unmap_block(struct caching_state *s, int32_t id, const ooc_drv_sink *drv)
{
  ooc_blocktab *bt = &s->bt;
  struct xseg *x = &s->xs[bt->seg[id]];
  int pool = x->pool;
  uint64_t page = x->page, off = bt->node[id].addr - x->base;
  uint64_t begin = (off + page - 1) / page;
  uint64_t end = (off + bt->node[id].size) / page, i;
  int32_t b = id, n;
  int rc;

  if (begin >= end)
    return OOC_OK;
  ooc_blocktab_remove(bt, id);
  if (begin * page > off) {
    if ((b = ooc_blocktab_cut(bt, id, begin * page - off)) < 0)
      return OOC_ENOMEM;
    ooc_blocktab_insert(bt, id);
  }
  if (bt->node[b].size > (end - begin) * page) {
    if ((n = ooc_blocktab_cut(bt, b, (end - begin) * page)) < 0)
      return OOC_ENOMEM;
    ooc_blocktab_insert(bt, n);
  }
  for (i = begin; i < end; i++) {
    int32_t c = x->chunk[i];
    x->chunk[i] = -1;
    ooc_idpool_put(&s->chunks, c);
    if ((rc = ooc_drv_emit(drv, OOC_DRV_CHUNK_UNMAP, c, x->base + i * page,
                           page)) < 0 ||
        (rc = ooc_drv_emit(drv, OOC_DRV_CHUNK_RELEASE, c, 0, page)) < 0)
      return rc;
  }
  s->reserved -= (end - begin) * page;
  s->n_releases += end - begin;
  set_unmapped(s, b);
  n = bt->node[b].prev;
  if (n >= 0 && (bt->flag[n] & OOC_BLK_UNMAPPED)) {
    um_remove(s, pool, n);
    ooc_blocktab_join(bt, n, b);
    b = n;
  }
  n = bt->node[b].next;
  if (n >= 0 && (bt->flag[n] & OOC_BLK_UNMAPPED)) {
    um_remove(s, pool, n);
    ooc_blocktab_join(bt, b, n);
  }
  if ((rc = um_insert(s, pool, b)) < 0)
    return rc;
  return ooc_blocktab_whole(bt, b) ? release_range(s, b, drv) : OOC_OK;
}

/* --- the allocator ------------------------------------------------------- */

/* Expandable size: the block plus the unmapped space right after it. */
static uint64_t
expandable_size(const struct caching_state *s, int32_t b)
{
  int32_t n = s->bt.node[b].next;

  return s->bt.node[b].size +
         (n >= 0 && (s->bt.flag[n] & OOC_BLK_UNMAPPED) ? s->bt.node[n].size
                                                        : 0);
}

/* get_free_block: the cached block a request of size takes, out of the
 * tree, or -1. */
static int32_t
get_free_block(struct caching_state *s, int pool, uint64_t size)
{
  const ooc_fittree *t = &s->bt.tree[pool];
  const ooc_fit_node *node = s->bt.node;
  int32_t it;

  if (!s->o.expandable && s->o.max_split == UINT64_MAX)
    return ooc_blocktab_best_fit(&s->bt, pool, size);
  if ((it = ooc_fittree_lower_bound(t, node, size, 0)) < 0)
    return -1;
  if (s->o.expandable)
    for (;;) {
      int32_t nx = ooc_fittree_lower_bound(t, node, node[it].size,
                                           node[it].addr + 1);
      if (nx < 0 || expandable_size(s, nx) >= expandable_size(s, it))
        break;
      it = nx;
    }
  if (size < s->o.max_split && node[it].size >= s->o.max_split)
    return -1;
  if (size >= s->o.max_split && node[it].size - size >= LARGE_BUFFER)
    return -1;
  ooc_blocktab_remove(&s->bt, it);
  return it;
}

/* alloc_block: a new segment (or mapped pages) for the request; OOC_EOOM
 * when the budget cannot hold alloc_size more. */
static int
alloc_block(struct caching_state *s, int pool, uint64_t size,
            uint64_t alloc_size, const ooc_drv_sink *drv, int32_t *id)
{
  if (alloc_size > s->budget - s->reserved)
    return OOC_EOOM;
  if (s->o.expandable)
    return alloc_expandable(s, pool, size, drv, id);
  return malloc_segment(s, pool, alloc_size, drv, id);
}

/* release_available_cached_blocks: 1 when it freed enough for a retry, 0
 * when not (nothing to do without max_split_size_mb), or an error. */
static int
release_available(struct caching_state *s, int pool, uint64_t size,
                  const ooc_drv_sink *drv)
{
  ooc_blocktab *bt = &s->bt;
  uint64_t key = size < s->o.max_split ? s->o.max_split : size, total = 0;
  int32_t it;
  int rc;

  if (s->o.max_split == UINT64_MAX)
    return 0;
  it = ooc_fittree_lower_bound(&bt->tree[pool], bt->node, key, 0);
  if (it >= 0) {
    rc = release_block(s, it, drv);
    return rc < 0 ? rc : 1;
  }
  while (total < key &&
         (it = ooc_fittree_last(&bt->tree[pool], bt->node)) >= 0 &&
         bt->node[it].size >= s->o.max_split) {
    total += bt->node[it].size;
    if ((rc = release_block(s, it, drv)) < 0)
      return rc;
  }
  return total >= key;
}

/* release_cached_blocks: every cached whole segment (large pool, then
 * small), or with expandable segments every whole page of every cached
 * block. */
static int
release_cached(struct caching_state *s, const ooc_drv_sink *drv)
{
  static const int order[2] = { LARGE, SMALL };
  int p, rc;

  for (p = 0; p < 2; p++) {
    int32_t i, n;
    if (s->o.expandable) {
      n = ooc_blocktab_collect(&s->bt, order[p]);
      for (i = 0; i < n; i++)
        if ((rc = unmap_block(s, s->bt.scratch[i], drv)) < 0)
          return rc;
    } else {
      n = ooc_blocktab_collect_whole(&s->bt, order[p]);
      for (i = 0; i < n; i++)
        if ((rc = release_block(s, s->bt.scratch[i], drv)) < 0)
          return rc;
    }
  }
  return OOC_OK;
}

static int
caching_alloc(void *vs, int32_t h, uint64_t bytes, ooc_placement *where,
              const ooc_drv_sink *drv)
{
  struct caching_state *s = vs;
  ooc_blocktab *bt = &s->bt;
  uint64_t size, alloc_size, rest;
  int32_t id;
  int pool, rc;

  *where = (ooc_placement){ .seg = -1 };
  s->hblk[h] = -1;
  s->req[h] = 0;
  if (bytes == 0)
    return OOC_OK;
  if (bytes > s->budget) {
    size = alloc_size = bytes;    /* cannot fit: no rounding overflow */
    pool = LARGE;
  } else {
    size = round_size(&s->o, bytes);
    pool = size <= SMALL_SIZE ? SMALL : LARGE;
    alloc_size = allocation_size(size);
  }
  id = get_free_block(s, pool, size);
  if (id < 0) {
    rc = alloc_block(s, pool, size, alloc_size, drv, &id);
    if (rc == OOC_EOOM) {
      rc = release_available(s, pool, size, drv);
      if (rc < 0)
        return rc;
      rc = rc == 1 ? alloc_block(s, pool, size, alloc_size, drv, &id)
                   : OOC_EOOM;
    }
    if (rc == OOC_EOOM) {
      if ((rc = release_cached(s, drv)) < 0)
        return rc;
      rc = alloc_block(s, pool, size, alloc_size, drv, &id);
    }
    if (rc != OOC_OK)
      return rc;
  }
  rest = bt->node[id].size - size;
  if ((pool == SMALL || s->o.expandable)
          ? rest >= MIN_BLOCK
          : (size < s->o.max_split && rest > SMALL_SIZE)) {
    if (ooc_blocktab_split(bt, id, size) != OOC_OK) {
      ooc_blocktab_insert(bt, id);
      return OOC_ENOMEM;
    }
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
caching_free(void *vs, int32_t h, const ooc_drv_sink *drv)
{
  struct caching_state *s = vs;
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
largest_cached(const struct caching_state *s)
{
  uint64_t a = ooc_blocktab_largest(&s->bt, SMALL);
  uint64_t b = ooc_blocktab_largest(&s->bt, LARGE);

  return a > b ? a : b;
}

static void
caching_stats(const void *vs, ooc_alloc_stats *st)
{
  const struct caching_state *s = vs;
  uint64_t lc = largest_cached(s), fresh = s->budget - s->reserved;

  *st = (ooc_alloc_stats){
    .allocated = s->allocated, .reserved = s->reserved,
    .largest_free = lc > fresh ? lc : fresh,
    .n_mallocs = s->n_mallocs, .n_releases = s->n_releases,
  };
}

static void
caching_usage(const void *vs, uint64_t *allocated, uint64_t *reserved)
{
  const struct caching_state *s = vs;

  *allocated = s->allocated;
  *reserved = s->reserved;
}

static void
caching_explain(const void *vs, uint64_t bytes, char *buf, size_t n)
{
  const struct caching_state *s = vs;
  uint64_t free_bytes = s->budget - s->in_use;
  uint64_t lc = largest_cached(s), fresh = s->budget - s->reserved;
  char b1[32], b2[32], b3[32];

  if (bytes > free_bytes || round_size(&s->o, bytes) > free_bytes)
    snprintf(buf, n, "caching: %s requested but only %s of the %s budget "
             "is free", ooc_fmt_bytes(bytes, b1, sizeof b1),
             ooc_fmt_bytes(free_bytes, b2, sizeof b2),
             ooc_fmt_bytes(s->budget, b3, sizeof b3));
  else
    snprintf(buf, n, "caching: no free block of %s; %s free but fragmented "
             "(largest %s)", ooc_fmt_bytes(bytes, b1, sizeof b1),
             ooc_fmt_bytes(free_bytes, b2, sizeof b2),
             ooc_fmt_bytes(lc > fresh ? lc : fresh, b3, sizeof b3));
}

/* A request's footprint: its block, the rounded size (0 takes none). */
static uint64_t
caching_footprint(const ooc_alloc_config *cfg, uint64_t bytes)
{
  struct opts o;

  if (parse_opts(cfg != NULL ? cfg->options : NULL, &o, NULL) < 0)
    o = (struct opts){ .max_split = UINT64_MAX };
  if (bytes > UINT64_MAX / 2)
    return UINT64_MAX;
  return bytes == 0 ? 0 : round_size(&o, bytes);
}

const ooc_allocator_type ooc_alloc_caching = {
  .name = "caching",
  .summary = "PyTorch's CUDA caching allocator: small and large pools, "
             "best fit, splitting, release and retry",
  .cite = "pytorch/pytorch c10/cuda/CUDACachingAllocator.cpp, "
          "c10/core/AllocatorConfig.cpp",
  .state_size = sizeof(struct caching_state),
  .options = caching_options,
  .init = caching_init,
  .fini = caching_fini,
  .reset = caching_reset,
  .alloc = caching_alloc,
  .free = caching_free,
  .stats = caching_stats,
  .usage = caching_usage,
  .explain = caching_explain,
  .footprint = caching_footprint,
};
