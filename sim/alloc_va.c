/* sim/alloc_va.c — virtual addressing: physical chunks behind contiguous
 * virtual ranges (schedule-window seed §4).
 *
 * One idea: a request of m_r bytes takes k = ceil(m_r / m_c) physical chunks
 * of m_c = chunk_bytes, mapped into one fresh virtual range; chunks can be
 * combined in any order, so there is no external fragmentation, only the
 * internal m_a - m_r < m_c per live tensor (seed eq. 1). Physical chunks
 * are created lazily, up to budget / m_c of them, and cached on free
 * (never given back), so reserved = chunks created x m_c.
 *
 * Cost: every chunk mapped costs hw->va_map_ns (new or cached alike); a
 * free (unmap, return to the cache) is free. O(1) per operation.
 * State: chunks per handle (n_handles x 4 bytes) and bytes per handle.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "util.h"

#define VA_DEFAULT_CHUNK (2ull << 20)

struct va_state {
  uint64_t chunk;
  uint64_t max_chunks;   /* budget / chunk */
  uint64_t created;      /* physical chunks created so far */
  uint64_t cached;       /* of those, not mapped */
  int64_t map_ns;
  int32_t n_handles;
  uint32_t *chunks;      /* chunks mapped per handle */
  uint64_t *bytes;       /* bytes requested per handle */
  uint64_t allocated;
};

static int
va_init(void *vs, const ooc_alloc_config *cfg, ooc_err *err)
{
  struct va_state *s = vs;
  uint64_t chunk = cfg->chunk_bytes;

  if (chunk == 0 && cfg->hw != NULL)
    chunk = cfg->hw->va_chunk_bytes;
  if (chunk == 0)
    chunk = VA_DEFAULT_CHUNK;
  *s = (struct va_state){
    .chunk = chunk, .max_chunks = cfg->budget / chunk,
    .map_ns = cfg->hw != NULL ? cfg->hw->va_map_ns : 0,
    .n_handles = cfg->n_handles,
  };
  s->chunks = calloc((size_t)cfg->n_handles + 1, sizeof *s->chunks);
  s->bytes = calloc((size_t)cfg->n_handles + 1, sizeof *s->bytes);
  if (s->chunks == NULL || s->bytes == NULL) {
    free(s->chunks);
    free(s->bytes);
    s->chunks = NULL;
    s->bytes = NULL;
    return ooc_err_set(err, OOC_ENOMEM, "va allocator: out of memory");
  }
  return OOC_OK;
}

static void
va_fini(void *vs)
{
  struct va_state *s = vs;

  free(s->chunks);
  free(s->bytes);
  s->chunks = NULL;
  s->bytes = NULL;
}

static void
va_reset(void *vs)
{
  struct va_state *s = vs;

  memset(s->chunks, 0, (size_t)s->n_handles * sizeof *s->chunks);
  memset(s->bytes, 0, (size_t)s->n_handles * sizeof *s->bytes);
  s->created = 0;
  s->cached = 0;
  s->allocated = 0;
}

static int
va_alloc(void *vs, int32_t h, uint64_t bytes, int64_t *cost_ns)
{
  struct va_state *s = vs;
  uint64_t k = bytes / s->chunk + (bytes % s->chunk != 0);
  uint64_t fresh = k > s->cached ? k - s->cached : 0;

  if (fresh > s->max_chunks - s->created || k > UINT32_MAX)
    return OOC_EOOM;
  s->created += fresh;
  s->cached -= k - fresh;
  s->chunks[h] = (uint32_t)k;
  s->bytes[h] = bytes;
  s->allocated += bytes;
  *cost_ns += (int64_t)k * s->map_ns;
  return OOC_OK;
}

static void
va_free(void *vs, int32_t h, int64_t *cost_ns)
{
  struct va_state *s = vs;

  s->cached += s->chunks[h];
  s->allocated -= s->bytes[h];
  s->chunks[h] = 0;
  s->bytes[h] = 0;
}

static void
va_stats(const void *vs, ooc_alloc_stats *st)
{
  const struct va_state *s = vs;

  *st = (ooc_alloc_stats){
    .allocated = s->allocated,
    .reserved = s->created * s->chunk,
    .largest_free = (s->cached + s->max_chunks - s->created) * s->chunk,
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
  uint64_t k = bytes / s->chunk + (bytes % s->chunk != 0);
  char b1[32], b2[32];

  snprintf(buf, n, "va: %s needs %llu chunks of %s; only %llu of %llu "
           "are free",
           ooc_fmt_bytes(bytes, b1, sizeof b1), (unsigned long long)k,
           ooc_fmt_bytes(s->chunk, b2, sizeof b2),
           (unsigned long long)(s->cached + s->max_chunks - s->created),
           (unsigned long long)s->max_chunks);
}

const ooc_allocator_type ooc_alloc_va = {
  .name = "va",
  .summary = "virtual addressing: physical chunks mapped to contiguous "
             "ranges (schedule-window seed §4)",
  .state_size = sizeof(struct va_state),
  .init = va_init,
  .fini = va_fini,
  .reset = va_reset,
  .alloc = va_alloc,
  .free = va_free,
  .stats = va_stats,
  .usage = va_usage,
  .explain = va_explain,
};
