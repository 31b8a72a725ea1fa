/* ir/trace.c — the timeline recorder's storage (trace.h). */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "ir/trace.h"

void
ooc_trace_init(ooc_trace *t)
{
  memset(t, 0, sizeof *t);
}

void
ooc_trace_fini(ooc_trace *t)
{
  if (t == NULL)
    return;
  free(t->spans);
  free(t->mem);
  memset(t, 0, sizeof *t);
}

int
ooc_trace_reserve(ooc_trace *t, int32_t n_spans, int32_t n_mem)
{
  t->n_spans = t->n_mem = 0;
  if (t->cap_spans < n_spans) {
    ooc_span *sp = realloc(t->spans, (size_t)n_spans * sizeof *sp);
    if (sp == NULL)
      return -1;
    t->spans = sp;
    t->cap_spans = n_spans;
  }
  if (t->cap_mem < n_mem) {
    ooc_mem_sample *m = realloc(t->mem, (size_t)n_mem * sizeof *m);
    if (m == NULL)
      return -1;
    t->mem = m;
    t->cap_mem = n_mem;
  }
  return 0;
}
