/* alloc/caching.c — a best-fit caching allocator in the manner of
 * PyTorch's CUDACachingAllocator and Chainer's memory pool: the "best-fit
 * with caching" baseline of the schedule-window seed §4.
 *
 * One idea: device memory is taken from the driver in segments and never
 * given back while something could reuse it. The rules follow PyTorch:
 *   - sizes round up to 512 B (a request of 0 bytes takes no block);
 *   - requests <= 1 MiB use the small pool, the rest the large pool;
 *   - a new segment is 2 MiB for a small request, 20 MiB for a request
 *     under 10 MiB, else the request rounded up to 2 MiB;
 *   - a free block is split when the remainder is >= 512 B (small pool) or
 *     > 1 MiB (large pool);
 *   - free blocks are cached and reused best-fit by (size, address), and
 *     merge only with free neighbours inside their own segment;
 *   - a new segment must fit reserved + size <= budget; if it does not, every
 *     fully free cached segment is released (hw->free_ns each) and the
 *     segment is tried once more; failing that, the request is OOM.
 * A new segment costs hw->malloc_ns + size x hw->malloc_ns_per_GiB / GiB
 * (rounded to the nearest ns); reusing a cached block costs nothing.
 *
 * State: a block table of fittree nodes (address, size, in-segment
 * neighbours) and pools, a free-slot stack, and per pool an ooc_fittree of
 * its free blocks ordered by (size, address) over those nodes
 * (alloc/fittree.h: deterministic shape, no allocation). The table starts
 * at 2 x n_handles + 64 blocks and doubles when a pattern needs more (live
 * blocks <= n_handles; free blocks <= live blocks + segments). Cost: alloc
 * and free O(log f) expected in the free blocks f; a release walks them.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloc/alloc.h"
#include "alloc/fittree.h"
#include "base/util.h"

#define MIB (1024ull * 1024ull)
#define GIB (1024ull * 1024ull * 1024ull)
#define MIN_BLOCK 512ull
#define SMALL_SIZE MIB           /* largest request of the small pool */
#define SMALL_BUFFER (2 * MIB)   /* small-pool segment */
#define MIN_LARGE_ALLOC (10 * MIB)
#define LARGE_BUFFER (20 * MIB)  /* segment for requests under 10 MiB */
#define ROUND_LARGE (2 * MIB)

struct caching_state {
  uint64_t budget;
  int64_t malloc_ns, free_ns;
  double malloc_ns_per_GiB;
  int32_t n_handles;
  int32_t *hblk;        /* block per handle, -1 when none */
  uint64_t *req;        /* bytes requested per handle */
  int32_t cap;          /* block table capacity */
  ooc_fit_node *node;   /* the blocks: address, size, links */
  uint8_t *bpool;       /* pool of each block: 0 small, 1 large */
  int32_t n_slots;      /* free slots on the stack */
  int32_t *slots;
  int32_t *scratch;     /* cap entries, for release_cached */
  ooc_fittree pool[2];  /* free blocks by (size, addr): 0 small, 1 large */
  uint64_t allocated, in_use, reserved, next_addr;
  uint64_t n_mallocs, n_releases;
};

static void
clear(struct caching_state *s)
{
  int32_t i;

  for (i = 0; i < s->n_handles; i++)
    s->hblk[i] = -1;
  memset(s->req, 0, (size_t)s->n_handles * sizeof *s->req);
  s->n_slots = s->cap;
  for (i = 0; i < s->cap; i++)
    s->slots[i] = s->cap - 1 - i;
  ooc_fittree_clear(&s->pool[0]);
  ooc_fittree_clear(&s->pool[1]);
  s->allocated = s->in_use = s->reserved = 0;
  s->next_addr = 0;
  s->n_mallocs = s->n_releases = 0;
}

static void
caching_fini(void *vs)
{
  struct caching_state *s = vs;

  free(s->hblk);
  free(s->req);
  free(s->node);
  free(s->bpool);
  free(s->slots);
  free(s->scratch);
  memset(s, 0, sizeof *s);
}

/* Resize the block table and its companions to cap entries (cap grows
 * only). New slots go on the free-slot stack. */
static int
resize(struct caching_state *s, int32_t cap)
{
  ooc_fit_node *node;
  uint8_t *bpool;
  int32_t *slots, *scratch, i;

  node = realloc(s->node, (size_t)cap * sizeof *node);
  if (node == NULL)
    return OOC_ENOMEM;
  s->node = node;
  bpool = realloc(s->bpool, (size_t)cap * sizeof *bpool);
  if (bpool == NULL)
    return OOC_ENOMEM;
  s->bpool = bpool;
  slots = realloc(s->slots, (size_t)cap * sizeof *slots);
  if (slots == NULL)
    return OOC_ENOMEM;
  s->slots = slots;
  scratch = realloc(s->scratch, (size_t)cap * sizeof *scratch);
  if (scratch == NULL)
    return OOC_ENOMEM;
  s->scratch = scratch;
  for (i = cap - 1; i >= s->cap; i--)
    s->slots[s->n_slots++] = i;
  s->cap = cap;
  return OOC_OK;
}

static int
caching_init(void *vs, const ooc_alloc_config *cfg, ooc_err *err)
{
  struct caching_state *s = vs;
  int32_t cap;

  memset(s, 0, sizeof *s);
  s->budget = cfg->budget;
  s->n_handles = cfg->n_handles;
  if (cfg->hw != NULL) {
    s->malloc_ns = cfg->hw->malloc_ns;
    s->free_ns = cfg->hw->free_ns;
    s->malloc_ns_per_GiB = cfg->hw->malloc_ns_per_GiB;
  }
  s->hblk = malloc(((size_t)cfg->n_handles + 1) * sizeof *s->hblk);
  s->req = malloc(((size_t)cfg->n_handles + 1) * sizeof *s->req);
  cap = cfg->n_handles < (INT32_MAX - 64) / 2 ? 2 * cfg->n_handles + 64
                                              : INT32_MAX;
  if (s->hblk == NULL || s->req == NULL || resize(s, cap) != OOC_OK) {
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

static void
set_insert(struct caching_state *s, int32_t id)
{
  ooc_fittree_insert(&s->pool[s->bpool[id]], s->node, id);
}

static void
set_remove(struct caching_state *s, int32_t id)
{
  ooc_fittree_remove(&s->pool[s->bpool[id]], s->node, id);
}

static int32_t
new_block(struct caching_state *s)
{
  if (s->n_slots == 0) {
    if (s->cap > INT32_MAX / 2 || resize(s, s->cap * 2) != OOC_OK)
      return -1;
  }
  return s->slots[--s->n_slots];
}

static void
drop_block(struct caching_state *s, int32_t id)
{
  s->slots[s->n_slots++] = id;
}

static uint64_t
round_size(uint64_t b)
{
  return b < MIN_BLOCK ? MIN_BLOCK
                       : (b + MIN_BLOCK - 1) / MIN_BLOCK * MIN_BLOCK;
}

static uint64_t
segment_size(uint64_t size)
{
  if (size <= SMALL_SIZE)
    return SMALL_BUFFER;
  if (size < MIN_LARGE_ALLOC)
    return LARGE_BUFFER;
  return (size + ROUND_LARGE - 1) / ROUND_LARGE * ROUND_LARGE;
}

/* In-order walk of treap t appending the fully free segments to
 * s->scratch. */
static void
collect_whole(struct caching_state *s, int32_t t, int32_t *n)
{
  while (t >= 0) {
    collect_whole(s, s->node[t].left, n);
    if (s->node[t].prev == -1 && s->node[t].next == -1)
      s->scratch[(*n)++] = t;
    t = s->node[t].right;
  }
}

/* Release every cached segment that is entirely free. */
static void
release_cached(struct caching_state *s, int64_t *cost_ns)
{
  int32_t i, n = 0;
  int p;

  for (p = 0; p < 2; p++)
    collect_whole(s, s->pool[p].root, &n);
  for (i = 0; i < n; i++) {
    int32_t id = s->scratch[i];
    set_remove(s, id);
    s->reserved -= s->node[id].size;
    s->n_releases++;
    *cost_ns += s->free_ns;
    drop_block(s, id);
  }
}

static int
caching_alloc(void *vs, int32_t h, uint64_t bytes, int64_t *cost_ns)
{
  struct caching_state *s = vs;
  uint64_t size, remaining;
  int32_t id;
  int pool;

  if (bytes == 0) {
    s->hblk[h] = -1;
    s->req[h] = 0;
    return OOC_OK;
  }
  if (bytes > s->budget)
    return OOC_EOOM;
  size = round_size(bytes);
  pool = size > SMALL_SIZE;
  id = ooc_fittree_take_best_fit(&s->pool[pool], s->node, size);
  if (id < 0) {
    uint64_t seg = segment_size(size);

    if (seg > s->budget - s->reserved) {
      release_cached(s, cost_ns);
      if (seg > s->budget - s->reserved)
        return OOC_EOOM;
    }
    id = new_block(s);
    if (id < 0)
      return OOC_ENOMEM;
    s->node[id] = (ooc_fit_node){
      .addr = s->next_addr, .size = seg, .prev = -1, .next = -1,
      .is_free = 1,
    };
    s->bpool[id] = (uint8_t)pool;
    s->next_addr += seg;
    s->reserved += seg;
    s->n_mallocs++;
    *cost_ns += s->malloc_ns +
                (int64_t)((double)seg * s->malloc_ns_per_GiB / (double)GIB +
                          0.5);
  }
  remaining = s->node[id].size - size;
  if (pool == 0 ? remaining >= MIN_BLOCK : remaining > SMALL_SIZE) {
    int32_t r = new_block(s);

    if (r < 0) {
      set_insert(s, id);
      return OOC_ENOMEM;
    }
    ooc_fittree_carve(s->node, id, size, r);
    s->bpool[r] = s->bpool[id];
    set_insert(s, r);
  }
  s->node[id].is_free = 0;
  s->hblk[h] = id;
  s->req[h] = bytes;
  s->allocated += bytes;
  s->in_use += s->node[id].size;
  return OOC_OK;
}

static void
caching_free(void *vs, int32_t h, int64_t *cost_ns)
{
  struct caching_state *s = vs;
  int32_t id = s->hblk[h], gone[2];
  int i, n_gone;

  s->allocated -= s->req[h];
  s->req[h] = 0;
  s->hblk[h] = -1;
  if (id < 0)
    return;
  s->in_use -= s->node[id].size;
  id = ooc_fittree_coalesce(&s->pool[s->bpool[id]], s->node, id, gone,
                            &n_gone);
  for (i = 0; i < n_gone; i++)
    drop_block(s, gone[i]);
  set_insert(s, id);
}

static uint64_t
largest_cached(const struct caching_state *s)
{
  uint64_t m = 0;
  int p;

  for (p = 0; p < 2; p++) {
    uint64_t l = ooc_fittree_largest(&s->pool[p], s->node);
    if (l > m)
      m = l;
  }
  return m;
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

  if (round_size(bytes) > free_bytes)
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

/* A request's footprint: its block, rounded up to 512 B (0 takes none). */
static uint64_t
caching_footprint(const ooc_alloc_config *cfg, uint64_t bytes)
{
  (void)cfg;
  if (bytes > UINT64_MAX - MIN_BLOCK)
    return UINT64_MAX;
  return bytes == 0 ? 0 : round_size(bytes);
}

const ooc_allocator_type ooc_alloc_caching = {
  .name = "caching",
  .summary = "best-fit caching allocator like PyTorch's (segments, "
             "splitting, no cross-segment coalescing)",
  .state_size = sizeof(struct caching_state),
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
