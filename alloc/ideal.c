/* alloc/ideal.c — the ideal policy: no fragmentation, no cost.
 *
 * One idea: every tensor is its own segment of exactly its size, taken
 * from the driver when it is allocated and given back when it is freed
 * (SEG_MALLOC / SEG_FREE per tensor). A request succeeds while the sum of
 * live bytes, the request included, stays within the budget, so reserved
 * equals allocated. It is the lower bound every real policy is compared
 * with (alloc.h); its descriptor is .unpriced, so the simulator charges
 * nothing for its actions (an executor still performs them). It follows
 * no source: it is the bound.
 *
 * Layout: segment ids are dense, the last one freed reused first; segment
 * addresses are handed out in order and never reused within a run (next
 * address += size), so segments never overlap.
 *
 * State: per handle its size, address and segment in one slot (n_handles
 * of them, sized by init) and an id pool of n_handles entries. Cost: O(1)
 * per request, one slot and the top of the id stack touched.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloc/alloc.h"
#include "alloc/blocktab.h"
#include "base/util.h"

/* A handle's segment, in one place: alloc and free touch one line. */
struct slot {
  uint64_t size;       /* live bytes, 0 when none */
  uint64_t addr;
  int32_t seg;         /* -1 when none */
};

struct ideal_state {
  uint64_t budget;
  int32_t n_handles;
  struct slot *h;      /* per handle */
  ooc_idpool ids;
  uint64_t allocated, next_addr, n_mallocs, n_releases;
};

static void
ideal_fini(void *vs)
{
  struct ideal_state *s = vs;

  free(s->h);
  ooc_idpool_fini(&s->ids);
  memset(s, 0, sizeof *s);
}

static void
ideal_reset(void *vs)
{
  struct ideal_state *s = vs;
  int32_t i;

  for (i = 0; i < s->n_handles; i++)
    s->h[i] = (struct slot){ .seg = -1 };
  ooc_idpool_clear(&s->ids);
  s->allocated = s->next_addr = s->n_mallocs = s->n_releases = 0;
}

static int
ideal_init(void *vs, const ooc_alloc_config *cfg, ooc_err *err)
{
  struct ideal_state *s = vs;
  size_t n = (size_t)cfg->n_handles + 1;
  int rc;

  memset(s, 0, sizeof *s);
  if ((rc = ooc_alloc_options_check(&ooc_alloc_ideal, cfg->options, err)) < 0)
    return rc;
  s->budget = cfg->budget;
  s->n_handles = cfg->n_handles;
  s->h = calloc(n, sizeof *s->h);
  if (s->h == NULL || ooc_idpool_init(&s->ids, cfg->n_handles) != OOC_OK) {
    ideal_fini(s);
    return ooc_err_set(err, OOC_ENOMEM, "ideal allocator: out of memory");
  }
  ideal_reset(s);
  return OOC_OK;
}

static int
ideal_alloc(void *vs, int32_t h, uint64_t bytes, ooc_placement *where,
            const ooc_drv_sink *drv)
{
  struct ideal_state *s = vs;
  struct slot *sl = &s->h[h];
  int32_t id;

  *where = (ooc_placement){ .seg = -1 };
  if (bytes == 0)
    return OOC_OK;
  if (bytes > s->budget - s->allocated)
    return OOC_EOOM;
  if ((id = ooc_idpool_take(&s->ids)) < 0)
    return OOC_ENOMEM;
  *sl = (struct slot){ .size = bytes, .addr = s->next_addr, .seg = id };
  s->next_addr += bytes;
  s->allocated += bytes;
  s->n_mallocs++;
  *where = (ooc_placement){ .seg = id, .addr = sl->addr, .size = bytes };
  return ooc_drv_emit(drv, OOC_DRV_SEG_MALLOC, id, sl->addr, bytes);
}

static int
ideal_free(void *vs, int32_t h, const ooc_drv_sink *drv)
{
  struct ideal_state *s = vs;
  struct slot *sl = &s->h[h];
  struct slot was = *sl;

  if (was.seg < 0)
    return OOC_OK;
  s->allocated -= was.size;
  *sl = (struct slot){ .seg = -1 };
  s->n_releases++;
  ooc_idpool_put(&s->ids, was.seg);
  return ooc_drv_emit(drv, OOC_DRV_SEG_FREE, was.seg, was.addr, was.size);
}

static void
ideal_stats(const void *vs, ooc_alloc_stats *st)
{
  const struct ideal_state *s = vs;

  *st = (ooc_alloc_stats){
    .allocated = s->allocated, .reserved = s->allocated,
    .largest_free = s->budget - s->allocated,
    .n_mallocs = s->n_mallocs, .n_releases = s->n_releases,
  };
}

static void
ideal_usage(const void *vs, uint64_t *allocated, uint64_t *reserved)
{
  const struct ideal_state *s = vs;

  *allocated = s->allocated;
  *reserved = s->allocated;
}

static void
ideal_explain(const void *vs, uint64_t bytes, char *buf, size_t n)
{
  const struct ideal_state *s = vs;
  char b1[32], b2[32], b3[32];

  snprintf(buf, n, "budget exhausted: %s requested, %s free of %s",
           ooc_fmt_bytes(bytes, b1, sizeof b1),
           ooc_fmt_bytes(s->budget - s->allocated, b2, sizeof b2),
           ooc_fmt_bytes(s->budget, b3, sizeof b3));
}

const ooc_allocator_type ooc_alloc_ideal = {
  .name = "ideal",
  .summary = "every tensor its own segment, the sum of live bytes against "
             "the budget (no fragmentation, no cost)",
  .cite = "none: the lower bound every policy is compared with",
  .state_size = sizeof(struct ideal_state),
  .unpriced = 1,
  .init = ideal_init,
  .fini = ideal_fini,
  .reset = ideal_reset,
  .alloc = ideal_alloc,
  .free = ideal_free,
  .stats = ideal_stats,
  .usage = ideal_usage,
  .explain = ideal_explain,
};
