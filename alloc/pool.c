/* alloc/pool.c — one pre-allocated arena, first-fit with coalescing
 * (SuperNeurons §3.3: the unified tensor pool's GPU memory pool).
 *
 * One idea: the whole budget is one arena [0, budget) taken once; requests
 * are rounded up to 512 B and placed in the free range with the lowest
 * address that fits; a free merges its range with free neighbours. The
 * arena never grows or shrinks, so requests cost nothing; what can go wrong
 * is external fragmentation.
 *
 * reserved is the arena's high-water mark (the highest end address handed
 * out so far): the arena itself is the whole budget, but the high-water mark
 * says how large a pool this program needs.
 *
 * State: free ranges sorted by address (at most live handles + 1 of them,
 * sized by init), address and size per handle. Cost: first fit O(free
 * ranges); free O(log f) search plus a memmove.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloc/alloc.h"
#include "base/util.h"

#define POOL_ALIGN 512u

struct range {
  uint64_t addr, size;
};

struct pool_state {
  uint64_t budget;
  int32_t n_handles;
  int32_t n_free;
  struct range *free;   /* sorted by addr, never adjacent */
  uint64_t *addr;       /* per handle */
  uint64_t *size;       /* per handle, rounded */
  uint64_t *req;        /* per handle, as requested */
  uint64_t allocated;   /* bytes requested and live */
  uint64_t in_use;      /* rounded bytes live */
  uint64_t high;        /* high-water mark */
};

static int
pool_init(void *vs, const ooc_alloc_config *cfg, ooc_err *err)
{
  struct pool_state *s = vs;
  size_t n = (size_t)cfg->n_handles + 2;

  *s = (struct pool_state){ .budget = cfg->budget / POOL_ALIGN * POOL_ALIGN,
                            .n_handles = cfg->n_handles };
  s->free = malloc(n * sizeof *s->free);
  s->addr = calloc(n, sizeof *s->addr);
  s->size = calloc(n, sizeof *s->size);
  s->req = calloc(n, sizeof *s->req);
  if (s->free == NULL || s->addr == NULL || s->size == NULL ||
      s->req == NULL) {
    free(s->free);
    free(s->addr);
    free(s->size);
    free(s->req);
    *s = (struct pool_state){ 0 };
    return ooc_err_set(err, OOC_ENOMEM, "pool allocator: out of memory");
  }
  s->n_free = 1;
  s->free[0] = (struct range){ .addr = 0, .size = s->budget };
  return OOC_OK;
}

static void
pool_fini(void *vs)
{
  struct pool_state *s = vs;

  free(s->free);
  free(s->addr);
  free(s->size);
  free(s->req);
  *s = (struct pool_state){ 0 };
}

static void
pool_reset(void *vs)
{
  struct pool_state *s = vs;

  memset(s->addr, 0, (size_t)s->n_handles * sizeof *s->addr);
  memset(s->size, 0, (size_t)s->n_handles * sizeof *s->size);
  memset(s->req, 0, (size_t)s->n_handles * sizeof *s->req);
  s->n_free = 1;
  s->free[0] = (struct range){ .addr = 0, .size = s->budget };
  s->allocated = 0;
  s->in_use = 0;
  s->high = 0;
}

static uint64_t
round_up(uint64_t b)
{
  return (b + POOL_ALIGN - 1) / POOL_ALIGN * POOL_ALIGN;
}

static int
pool_alloc(void *vs, int32_t h, uint64_t bytes, int64_t *cost_ns)
{
  struct pool_state *s = vs;
  uint64_t need;
  int32_t i;

  if (bytes > s->budget)
    return OOC_EOOM;
  need = round_up(bytes);
  if (need == 0) {
    s->addr[h] = 0;
    s->size[h] = 0;
    s->req[h] = 0;
    return OOC_OK;
  }
  for (i = 0; i < s->n_free; i++)
    if (s->free[i].size >= need)
      break;
  if (i == s->n_free)
    return OOC_EOOM;
  s->addr[h] = s->free[i].addr;
  s->size[h] = need;
  s->req[h] = bytes;
  if (s->free[i].size == need) {
    memmove(&s->free[i], &s->free[i + 1],
            (size_t)(s->n_free - i - 1) * sizeof *s->free);
    s->n_free--;
  } else {
    s->free[i].addr += need;
    s->free[i].size -= need;
  }
  s->allocated += bytes;
  s->in_use += need;
  if (s->addr[h] + need > s->high)
    s->high = s->addr[h] + need;
  return OOC_OK;
}

static void
pool_free(void *vs, int32_t h, int64_t *cost_ns)
{
  struct pool_state *s = vs;
  uint64_t a = s->addr[h], n = s->size[h];
  int32_t lo = 0, hi = s->n_free;
  int merge_prev, merge_next;

  s->allocated -= s->req[h];
  s->req[h] = 0;
  if (n == 0)
    return;
  /* First free range above a. */
  while (lo < hi) {
    int32_t mid = lo + (hi - lo) / 2;
    if (s->free[mid].addr < a)
      lo = mid + 1;
    else
      hi = mid;
  }
  merge_prev = lo > 0 && s->free[lo - 1].addr + s->free[lo - 1].size == a;
  merge_next = lo < s->n_free && a + n == s->free[lo].addr;
  if (merge_prev && merge_next) {
    s->free[lo - 1].size += n + s->free[lo].size;
    memmove(&s->free[lo], &s->free[lo + 1],
            (size_t)(s->n_free - lo - 1) * sizeof *s->free);
    s->n_free--;
  } else if (merge_prev) {
    s->free[lo - 1].size += n;
  } else if (merge_next) {
    s->free[lo].addr = a;
    s->free[lo].size += n;
  } else {
    memmove(&s->free[lo + 1], &s->free[lo],
            (size_t)(s->n_free - lo) * sizeof *s->free);
    s->free[lo] = (struct range){ .addr = a, .size = n };
    s->n_free++;
  }
  s->in_use -= n;
  s->size[h] = 0;
}

static uint64_t
largest(const struct pool_state *s)
{
  uint64_t m = 0;
  int32_t i;

  for (i = 0; i < s->n_free; i++)
    if (s->free[i].size > m)
      m = s->free[i].size;
  return m;
}

static void
pool_stats(const void *vs, ooc_alloc_stats *st)
{
  const struct pool_state *s = vs;

  *st = (ooc_alloc_stats){
    .allocated = s->allocated, .reserved = s->high,
    .largest_free = largest(s), .n_mallocs = s->budget > 0,
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
  uint64_t free_bytes = s->budget - s->in_use;

  if (round_up(bytes) > free_bytes)
    snprintf(buf, n, "pool: %s requested but only %s of the %s arena is "
             "free", ooc_fmt_bytes(bytes, b1, sizeof b1),
             ooc_fmt_bytes(free_bytes, b2, sizeof b2),
             ooc_fmt_bytes(s->budget, b3, sizeof b3));
  else
    snprintf(buf, n, "pool: no free range of %s; %s free but fragmented "
             "(largest %s)", ooc_fmt_bytes(bytes, b1, sizeof b1),
             ooc_fmt_bytes(free_bytes, b2, sizeof b2),
             ooc_fmt_bytes(largest(s), b3, sizeof b3));
}

/* A request's footprint: its range, rounded up to 512 B. */
static uint64_t
pool_footprint(const ooc_alloc_config *cfg, uint64_t bytes)
{
  (void)cfg;
  return bytes > UINT64_MAX - POOL_ALIGN ? UINT64_MAX : round_up(bytes);
}

const ooc_allocator_type ooc_alloc_pool = {
  .name = "pool",
  .summary = "one arena of the whole budget, first-fit with coalescing "
             "(SuperNeurons §3.3)",
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
