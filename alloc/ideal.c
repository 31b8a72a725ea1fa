/* alloc/ideal.c — the ideal allocator: no fragmentation, no cost.
 *
 * One idea: a request succeeds when the sum of live bytes, the request
 * included, stays within the budget; reserved equals allocated. It is the
 * lower bound every real allocator is compared with (alloc.h).
 *
 * State: the live size of each handle (n_handles x 8 bytes, allocated by
 * init). Cost: O(1) per operation, zero modelled time.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloc/alloc.h"
#include "base/util.h"

struct ideal_state {
  uint64_t budget;
  int32_t n_handles;
  uint64_t *size;      /* live bytes per handle */
  uint64_t allocated;
};

static int
ideal_init(void *vs, const ooc_alloc_config *cfg, ooc_err *err)
{
  struct ideal_state *s = vs;

  *s = (struct ideal_state){ .budget = cfg->budget,
                             .n_handles = cfg->n_handles };
  s->size = calloc((size_t)cfg->n_handles + 1, sizeof *s->size);
  if (s->size == NULL)
    return ooc_err_set(err, OOC_ENOMEM, "ideal allocator: out of memory");
  return OOC_OK;
}

static void
ideal_fini(void *vs)
{
  struct ideal_state *s = vs;

  free(s->size);
  s->size = NULL;
}

static void
ideal_reset(void *vs)
{
  struct ideal_state *s = vs;

  memset(s->size, 0, (size_t)s->n_handles * sizeof *s->size);
  s->allocated = 0;
}

static int
ideal_alloc(void *vs, int32_t h, uint64_t bytes, int64_t *cost_ns)
{
  struct ideal_state *s = vs;

  if (bytes > s->budget - s->allocated)
    return OOC_EOOM;
  s->size[h] = bytes;
  s->allocated += bytes;
  return OOC_OK;
}

static void
ideal_free(void *vs, int32_t h, int64_t *cost_ns)
{
  struct ideal_state *s = vs;

  s->allocated -= s->size[h];
  s->size[h] = 0;
}

static void
ideal_stats(const void *vs, ooc_alloc_stats *st)
{
  const struct ideal_state *s = vs;

  *st = (ooc_alloc_stats){
    .allocated = s->allocated, .reserved = s->allocated,
    .largest_free = s->budget - s->allocated,
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
  .summary = "sum of live bytes against the budget (no fragmentation, "
             "no cost)",
  .state_size = sizeof(struct ideal_state),
  .init = ideal_init,
  .fini = ideal_fini,
  .reset = ideal_reset,
  .alloc = ideal_alloc,
  .free = ideal_free,
  .stats = ideal_stats,
  .usage = ideal_usage,
  .explain = ideal_explain,
};
