/* executor/cpu_util.c — small helpers the cpu backend's files share
 * (cpu.h): side buffers, an activation's bytes, and putting or adding a
 * gradient. A leaf: it calls none of the other cpu files.
 *
 * Cost: cpu_put is one pass over its elements.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "executor/cpu.h"

uint64_t
cpu_out_bytes(const ooc_model *m, int l)
{
  return (uint64_t)ooc_shape_elems(&m->layers[l].out) *
         (uint64_t)m->batch * sizeof(float);
}

int
cpu_grow(void **buf, size_t *have, size_t want, ooc_err *err)
{
  void *q;

  if (want <= *have)
    return OOC_OK;
  if (posix_memalign(&q, 64, want) != 0)
    return ooc_err_set(err, OOC_ENOMEM, "cpu: out of memory (%zu bytes of "
                       "scratch)", want);
  free(*buf);
  *buf = q;
  *have = want;
  return OOC_OK;
}

void
cpu_put(float *dst, const float *src, uint64_t n, int acc)
{
  uint64_t i;

  if (acc) {
    for (i = 0; i < n; i++)
      dst[i] += src[i];
  } else if (dst != src) {
    memmove(dst, src, n * sizeof *dst);
  }
}
