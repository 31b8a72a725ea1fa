/* alloc/pool.c — SuperNeurons' GPU memory pool as a placement policy.
 *
 * Follows SuperNeurons §3.2.1 (shared/seeds/superneurons.md): one big
 * chunk of GPU memory preallocated as a shared pool, divided into 1 KiB
 * blocks; an allocation takes the first free space large enough, a
 * deallocation finds its node through an ID-to-node table and gives the
 * space back. The released code (linnanwang/superneurons-release,
 * src/gpu_malloc.cpp, BLASX's gpu_malloc, read at d20d25c) settles what
 * the paper leaves open: its "allocated list" keeps, after each node, the
 * free bytes up to the next node (mem_free); an allocation walks the list
 * in address order and places the request at the start of the first gap
 * that holds it; a free adds the node's bytes and its gap to the previous
 * node's gap. Free space is therefore always coalesced: two free ranges
 * are never adjacent. This file does the same with the gaps kept in a
 * treap ordered by address that also knows the largest gap under each
 * node, so the first fit is one descent instead of a walk.
 *
 * Departures: sizes round up to 1 KiB blocks as the paper says (the
 * released gpu_malloc rounds to 16 B, cuDNN's alignment); the pool is the
 * whole budget (the release takes a fixed BLASX_GPU_MEM_SIZE, 3000 MB, and
 * builds with it only under BLASX_MALLOC, off by default); the release's
 * limit of 200 nodes (BLASX_GPU_MEM_MAX_SEGMENT, past which it crashes) is
 * not kept; the ID-to-node table is indexed by tensor id (the release
 * searches the list for the address).
 *
 * Driver actions: one SEG_MALLOC (segment 0) of the whole pool, the
 * budget rounded down to 1 KiB, when the first allocation succeeds; the
 * pool is never given back (the executor frees it at the end). reserved
 * is not that arena but its high-water mark, the highest end address
 * handed out so far: the pool size this program needs (the arena is the
 * most it may use). Placements are segment 0 at the block's offset.
 *
 * State: free ranges in a treap (one node per range, at most live + 1 of
 * them, nodes sized by init), per handle its offset, size and request.
 * Cost: alloc and free O(log f) expected in the free ranges f.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloc/alloc.h"
#include "base/util.h"

#define BLOCK 1024ull

/* A free range; the treap is ordered by address, max is the largest size
 * in the node's subtree. */
struct range {
  uint64_t addr, size, max;
  int32_t left, right;
  uint32_t prio;
};

struct pool_state {
  uint64_t arena;         /* budget rounded down to BLOCK */
  int32_t n_handles;
  struct range *r;        /* n_handles + 2 nodes */
  int32_t *slots;         /* unused nodes (a stack) */
  int32_t n_slots, cap, root;
  uint64_t *addr;         /* per handle */
  uint64_t *size;         /* per handle, rounded */
  uint64_t *req;          /* per handle, as requested */
  uint64_t allocated, in_use, high;
  int opened;             /* the arena's SEG_MALLOC was sent */
};

static uint64_t
sub_max(const struct pool_state *s, int32_t t)
{
  return t < 0 ? 0 : s->r[t].max;
}

static void
pull(struct pool_state *s, int32_t t)
{
  uint64_t m = s->r[t].size, l = sub_max(s, s->r[t].left);
  uint64_t g = sub_max(s, s->r[t].right);

  s->r[t].max = m > l ? (m > g ? m : g) : (l > g ? l : g);
}

/* Split treap t into ranges below addr (*l) and the rest (*r). */
static void
split(struct pool_state *s, int32_t t, uint64_t addr, int32_t *l, int32_t *r)
{
  if (t < 0) {
    *l = *r = -1;
  } else if (s->r[t].addr < addr) {
    split(s, s->r[t].right, addr, &s->r[t].right, r);
    *l = t;
    pull(s, t);
  } else {
    split(s, s->r[t].left, addr, l, &s->r[t].left);
    *r = t;
    pull(s, t);
  }
}

static int32_t
join(struct pool_state *s, int32_t a, int32_t b)
{
  if (a < 0)
    return b;
  if (b < 0)
    return a;
  if (s->r[a].prio > s->r[b].prio) {
    s->r[a].right = join(s, s->r[a].right, b);
    pull(s, a);
    return a;
  }
  s->r[b].left = join(s, a, s->r[b].left);
  pull(s, b);
  return b;
}

static void
insert(struct pool_state *s, uint64_t addr, uint64_t size)
{
  int32_t id = s->slots[--s->n_slots], l, r;

  s->r[id] = (struct range){ .addr = addr, .size = size, .max = size,
                             .left = -1, .right = -1,
                             .prio = (uint32_t)id * 2654435761u ^
                                     0x9e3779b9u };
  split(s, s->root, addr, &l, &r);
  s->root = join(s, join(s, l, id), r);
}

/* Remove the range at addr from t; returns the new subtree. */
static int32_t
erase(struct pool_state *s, int32_t t, uint64_t addr)
{
  if (s->r[t].addr == addr) {
    int32_t j = join(s, s->r[t].left, s->r[t].right);
    s->slots[s->n_slots++] = t;
    return j;
  }
  if (addr < s->r[t].addr)
    s->r[t].left = erase(s, s->r[t].left, addr);
  else
    s->r[t].right = erase(s, s->r[t].right, addr);
  pull(s, t);
  return t;
}

/* Set the range at addr to [addr + cut, addr + size) and fix the maxima
 * on the way back up (its place in the order does not change). */
static void
shrink(struct pool_state *s, int32_t t, uint64_t addr, uint64_t cut)
{
  if (s->r[t].addr == addr) {
    s->r[t].addr += cut;
    s->r[t].size -= cut;
  } else if (addr < s->r[t].addr) {
    shrink(s, s->r[t].left, addr, cut);
  } else {
    shrink(s, s->r[t].right, addr, cut);
  }
  pull(s, t);
}

/* Grow the range at addr by `more` bytes at its start or end. */
static void
grow(struct pool_state *s, int32_t t, uint64_t addr, uint64_t more,
     int at_start)
{
  if (s->r[t].addr == addr) {
    if (at_start)
      s->r[t].addr -= more;
    s->r[t].size += more;
  } else if (addr < s->r[t].addr) {
    grow(s, s->r[t].left, addr, more, at_start);
  } else {
    grow(s, s->r[t].right, addr, more, at_start);
  }
  pull(s, t);
}

/* The lowest-addressed range of at least need bytes, -1 when none. */
static int32_t
first_fit(const struct pool_state *s, uint64_t need)
{
  int32_t t = s->root;

  if (sub_max(s, t) < need)
    return -1;
  for (;;) {
    if (sub_max(s, s->r[t].left) >= need)
      t = s->r[t].left;
    else if (s->r[t].size >= need)
      return t;
    else
      t = s->r[t].right;
  }
}

/* The last range below addr (*p) and the first at or above it (*n). */
static void
neighbours(const struct pool_state *s, uint64_t addr, int32_t *p, int32_t *n)
{
  int32_t t = s->root;

  *p = *n = -1;
  while (t >= 0) {
    if (s->r[t].addr < addr) {
      *p = t;
      t = s->r[t].right;
    } else {
      *n = t;
      t = s->r[t].left;
    }
  }
}

static void
empty(struct pool_state *s)
{
  int32_t i;

  s->n_slots = s->cap;
  for (i = 0; i < s->cap; i++)
    s->slots[i] = s->cap - 1 - i;
  s->root = -1;
  if (s->arena > 0)
    insert(s, 0, s->arena);
}

static void
pool_fini(void *vs)
{
  struct pool_state *s = vs;

  free(s->r);
  free(s->slots);
  free(s->addr);
  free(s->size);
  free(s->req);
  memset(s, 0, sizeof *s);
}

static void
pool_reset(void *vs)
{
  struct pool_state *s = vs;

  memset(s->addr, 0, (size_t)s->n_handles * sizeof *s->addr);
  memset(s->size, 0, (size_t)s->n_handles * sizeof *s->size);
  memset(s->req, 0, (size_t)s->n_handles * sizeof *s->req);
  s->allocated = s->in_use = s->high = 0;
  s->opened = 0;
  empty(s);
}

static int
pool_init(void *vs, const ooc_alloc_config *cfg, ooc_err *err)
{
  struct pool_state *s = vs;
  size_t n = (size_t)cfg->n_handles + 2;
  int rc;

  memset(s, 0, sizeof *s);
  if ((rc = ooc_alloc_options_check(&ooc_alloc_pool, cfg->options, err)) < 0)
    return rc;
  s->arena = cfg->budget / BLOCK * BLOCK;
  s->n_handles = cfg->n_handles;
  s->cap = (int32_t)n;
  s->r = malloc(n * sizeof *s->r);
  s->slots = malloc(n * sizeof *s->slots);
  s->addr = calloc(n, sizeof *s->addr);
  s->size = calloc(n, sizeof *s->size);
  s->req = calloc(n, sizeof *s->req);
  if (s->r == NULL || s->slots == NULL || s->addr == NULL ||
      s->size == NULL || s->req == NULL) {
    pool_fini(s);
    return ooc_err_set(err, OOC_ENOMEM, "pool allocator: out of memory");
  }
  pool_reset(s);
  return OOC_OK;
}

static uint64_t
round_up(uint64_t b)
{
  return (b + BLOCK - 1) / BLOCK * BLOCK;
}

static int
pool_alloc(void *vs, int32_t h, uint64_t bytes, ooc_placement *where,
           const ooc_drv_sink *drv)
{
  struct pool_state *s = vs;
  uint64_t need, a;
  int32_t t;
  int rc;

  *where = (ooc_placement){ .seg = -1 };
  s->size[h] = 0;
  s->req[h] = 0;
  if (bytes == 0)
    return OOC_OK;
  if (bytes > s->arena)
    return OOC_EOOM;
  need = round_up(bytes);
  if ((t = first_fit(s, need)) < 0)
    return OOC_EOOM;
  if (!s->opened) {
    s->opened = 1;
    if ((rc = ooc_drv_emit(drv, OOC_DRV_SEG_MALLOC, 0, 0, s->arena)) < 0)
      return rc;
  }
  a = s->r[t].addr;
  if (s->r[t].size == need)
    s->root = erase(s, s->root, a);
  else
    shrink(s, s->root, a, need);
  s->addr[h] = a;
  s->size[h] = need;
  s->req[h] = bytes;
  s->allocated += bytes;
  s->in_use += need;
  if (a + need > s->high)
    s->high = a + need;
  *where = (ooc_placement){ .seg = 0, .addr = a, .size = need };
  return OOC_OK;
}

static int
pool_free(void *vs, int32_t h, const ooc_drv_sink *drv)
{
  struct pool_state *s = vs;
  uint64_t a = s->addr[h], n = s->size[h];
  int32_t p, q;
  int with_prev, with_next;

  (void)drv;
  s->allocated -= s->req[h];
  s->req[h] = 0;
  if (n == 0)
    return OOC_OK;
  s->size[h] = 0;
  s->in_use -= n;
  neighbours(s, a, &p, &q);
  with_prev = p >= 0 && s->r[p].addr + s->r[p].size == a;
  with_next = q >= 0 && a + n == s->r[q].addr;
  if (with_prev && with_next) {
    uint64_t more = n + s->r[q].size, pa = s->r[p].addr;
    s->root = erase(s, s->root, s->r[q].addr);
    grow(s, s->root, pa, more, 0);
  } else if (with_prev) {
    grow(s, s->root, s->r[p].addr, n, 0);
  } else if (with_next) {
    grow(s, s->root, s->r[q].addr, n, 1);
  } else {
    insert(s, a, n);
  }
  return OOC_OK;
}

static void
pool_stats(const void *vs, ooc_alloc_stats *st)
{
  const struct pool_state *s = vs;

  *st = (ooc_alloc_stats){
    .allocated = s->allocated, .reserved = s->high,
    .largest_free = sub_max(s, s->root), .n_mallocs = (uint64_t)s->opened,
  };
}

static void
pool_usage(const void *vs, uint64_t *allocated, uint64_t *reserved)
{
  const struct pool_state *s = vs;

  *allocated = s->allocated;
  *reserved = s->high;
}

static void
pool_explain(const void *vs, uint64_t bytes, char *buf, size_t n)
{
  const struct pool_state *s = vs;
  char b1[32], b2[32], b3[32];
  uint64_t free_bytes = s->arena - s->in_use;

  if (bytes > free_bytes || round_up(bytes) > free_bytes)
    snprintf(buf, n, "pool: %s requested but only %s of the %s pool is "
             "free", ooc_fmt_bytes(bytes, b1, sizeof b1),
             ooc_fmt_bytes(free_bytes, b2, sizeof b2),
             ooc_fmt_bytes(s->arena, b3, sizeof b3));
  else
    snprintf(buf, n, "pool: no free range of %s; %s free but fragmented "
             "(largest %s)", ooc_fmt_bytes(bytes, b1, sizeof b1),
             ooc_fmt_bytes(free_bytes, b2, sizeof b2),
             ooc_fmt_bytes(sub_max(s, s->root), b3, sizeof b3));
}

/* A request's footprint: its blocks, rounded up to 1 KiB. */
static uint64_t
pool_footprint(const ooc_alloc_config *cfg, uint64_t bytes)
{
  (void)cfg;
  return bytes > UINT64_MAX - BLOCK ? UINT64_MAX : round_up(bytes);
}

const ooc_allocator_type ooc_alloc_pool = {
  .name = "pool",
  .summary = "SuperNeurons' preallocated pool: 1 KiB blocks, first fit, "
             "free space coalesced",
  .cite = "SuperNeurons §3.2.1; linnanwang/superneurons-release "
          "src/gpu_malloc.cpp",
  .state_size = sizeof(struct pool_state),
  .init = pool_init,
  .fini = pool_fini,
  .reset = pool_reset,
  .alloc = pool_alloc,
  .free = pool_free,
  .stats = pool_stats,
  .usage = pool_usage,
  .explain = pool_explain,
  .footprint = pool_footprint,
};
