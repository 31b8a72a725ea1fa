/* sim/alloc_caching.c — a best-fit caching allocator in the manner of
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
 * State: a block table (address, size, in-segment neighbours), with a
 * free-slot stack, and per pool a treap of its free blocks ordered by
 * (size, address) whose nodes are the table's blocks (priorities are a
 * hash of the block id, so the shape is deterministic). The table starts at
 * 2 x n_handles + 64 blocks and doubles when a pattern needs more (live
 * blocks <= n_handles; free blocks <= live blocks + segments). Cost: alloc
 * and free O(log f) expected in the free blocks f; a release walks them.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "util.h"

#define MIB (1024ull * 1024ull)
#define GIB (1024ull * 1024ull * 1024ull)
#define MIN_BLOCK 512ull
#define SMALL_SIZE MIB           /* largest request of the small pool */
#define SMALL_BUFFER (2 * MIB)   /* small-pool segment */
#define MIN_LARGE_ALLOC (10 * MIB)
#define LARGE_BUFFER (20 * MIB)  /* segment for requests under 10 MiB */
#define ROUND_LARGE (2 * MIB)

struct block {
  uint64_t addr, size;
  int32_t prev, next;   /* neighbours in the segment, -1 at its ends */
  int32_t left, right;  /* free-set treap children, -1 when none */
  uint32_t prio;        /* treap priority: a hash of the block id */
  uint8_t is_free, pool;
};

/* Free blocks of one pool: a treap ordered by (size, address), so best fit
 * is the leftmost block of size >= the request. Nodes are the blocks
 * themselves, so the set never allocates. */
struct freeset {
  int32_t n;
  int32_t root;
};

struct caching_state {
  uint64_t budget;
  int64_t malloc_ns, free_ns;
  double malloc_ns_per_GiB;
  int32_t n_handles;
  int32_t *hblk;        /* block per handle, -1 when none */
  uint64_t *req;        /* bytes requested per handle */
  int32_t cap;          /* block table capacity */
  struct block *blk;
  int32_t n_slots;      /* free slots on the stack */
  int32_t *slots;
  int32_t *scratch;     /* cap entries, for release_cached */
  struct freeset pool[2];  /* 0 small, 1 large */
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
  s->pool[0] = s->pool[1] = (struct freeset){ .n = 0, .root = -1 };
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
  free(s->blk);
  free(s->slots);
  free(s->scratch);
  memset(s, 0, sizeof *s);
}

/* Resize the block table and its companions to cap entries (cap grows
 * only). New slots go on the free-slot stack. */
static int
resize(struct caching_state *s, int32_t cap)
{
  struct block *blk;
  int32_t *slots, *scratch, i;

  blk = realloc(s->blk, (size_t)cap * sizeof *blk);
  if (blk == NULL)
    return OOC_ENOMEM;
  s->blk = blk;
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

/* Order of free blocks: size, then address. */
static int
before(const struct block *a, uint64_t size, uint64_t addr)
{
  return a->size < size || (a->size == size && a->addr < addr);
}

/* Split treap t into blocks before (size, addr) (*l) and the rest (*r).
 * Recursion depth is the treap's height, O(log n) expected. */
static void
split(struct caching_state *s, int32_t t, uint64_t size, uint64_t addr,
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
join(struct caching_state *s, int32_t a, int32_t b)
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
set_insert(struct caching_state *s, int32_t id)
{
  struct freeset *f = &s->pool[s->blk[id].pool];
  struct block *b = &s->blk[id];
  int32_t *link = &f->root;

  b->prio = (uint32_t)id * 2654435761u ^ 0x9e3779b9u;
  while (*link >= 0 && s->blk[*link].prio >= b->prio)
    link = before(&s->blk[*link], b->size, b->addr) ? &s->blk[*link].right
                                                   : &s->blk[*link].left;
  split(s, *link, b->size, b->addr, &b->left, &b->right);
  *link = id;
  f->n++;
}

static void
set_remove(struct caching_state *s, int32_t id)
{
  struct freeset *f = &s->pool[s->blk[id].pool];
  const struct block *b = &s->blk[id];
  int32_t *link = &f->root;

  while (*link != id)
    link = before(&s->blk[*link], b->size, b->addr) ? &s->blk[*link].right
                                                   : &s->blk[*link].left;
  *link = join(s, b->left, b->right);
  f->n--;
}

/* Best fit: take the first free block of size >= size out of f and return
 * it, or -1 when there is none. One descent, O(log n) expected. */
static int32_t
take_best_fit(struct caching_state *s, struct freeset *f, uint64_t size)
{
  int32_t *link = &f->root, *best = NULL;

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
  {
    int32_t id = *best;
    *best = join(s, s->blk[id].left, s->blk[id].right);
    f->n--;
    return id;
  }
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
    collect_whole(s, s->blk[t].left, n);
    if (s->blk[t].prev == -1 && s->blk[t].next == -1)
      s->scratch[(*n)++] = t;
    t = s->blk[t].right;
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
    s->reserved -= s->blk[id].size;
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
  id = take_best_fit(s, &s->pool[pool], size);
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
    s->blk[id] = (struct block){
      .addr = s->next_addr, .size = seg, .prev = -1, .next = -1,
      .is_free = 1, .pool = (uint8_t)pool,
    };
    s->next_addr += seg;
    s->reserved += seg;
    s->n_mallocs++;
    *cost_ns += s->malloc_ns +
                (int64_t)((double)seg * s->malloc_ns_per_GiB / (double)GIB +
                          0.5);
  }
  remaining = s->blk[id].size - size;
  if (pool == 0 ? remaining >= MIN_BLOCK : remaining > SMALL_SIZE) {
    int32_t r = new_block(s);
    struct block *b;

    if (r < 0) {
      set_insert(s, id);
      return OOC_ENOMEM;
    }
    b = &s->blk[id];
    s->blk[r] = (struct block){
      .addr = b->addr + size, .size = remaining, .prev = id, .next = b->next,
      .is_free = 1, .pool = b->pool,
    };
    if (b->next >= 0)
      s->blk[b->next].prev = r;
    b->next = r;
    b->size = size;
    set_insert(s, r);
  }
  s->blk[id].is_free = 0;
  s->hblk[h] = id;
  s->req[h] = bytes;
  s->allocated += bytes;
  s->in_use += s->blk[id].size;
  return OOC_OK;
}

/* Absorb block n, which directly follows block a in its segment, into a.
 * Neither may be in a free set while their sizes change. */
static void
absorb(struct caching_state *s, int32_t a, int32_t n)
{
  struct block *b = &s->blk[a], *nb = &s->blk[n];

  b->size += nb->size;
  b->next = nb->next;
  if (nb->next >= 0)
    s->blk[nb->next].prev = a;
  drop_block(s, n);
}

static void
caching_free(void *vs, int32_t h, int64_t *cost_ns)
{
  struct caching_state *s = vs;
  int32_t id = s->hblk[h], p, n;

  s->allocated -= s->req[h];
  s->req[h] = 0;
  s->hblk[h] = -1;
  if (id < 0)
    return;
  s->in_use -= s->blk[id].size;
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
  set_insert(s, id);
}

static uint64_t
largest_cached(const struct caching_state *s)
{
  uint64_t m = 0;
  int p;

  for (p = 0; p < 2; p++) {
    int32_t t = s->pool[p].root;
    while (t >= 0 && s->blk[t].right >= 0)
      t = s->blk[t].right;
    if (t >= 0 && s->blk[t].size > m)
      m = s->blk[t].size;
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
