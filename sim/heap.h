/* sim/heap.h — the simulator's event queue: an array-based binary min-heap
 * keyed by (time, sequence number), in the manner of libuv's heap-inl.h
 * (which links nodes; this one keeps events in one flat array).
 *
 * One idea: equal times pop in push order, because every push takes the
 * next sequence number, so a simulation is reproducible event for event.
 *
 * Ownership: caller-embedded (ooc_heap_init / ooc_heap_fini). The array
 * grows geometrically on push and is kept across runs (ooc_heap_clear), so
 * steady-state simulation does no host allocation. Cost: push and pop
 * O(log n), peek O(1).
 */
#ifndef OOC_HEAP_H
#define OOC_HEAP_H

#include <stdint.h>
#include <stdlib.h>
#include "base/error.h"

typedef struct ooc_event {
  int64_t t;        /* ns */
  uint64_t seq;     /* push order, the tie-break */
  int32_t kind;     /* meaning defined by the user of the heap */
  int32_t a;
  uint32_t gen;
} ooc_event;

typedef struct ooc_heap {
  int32_t n, cap;
  ooc_event *e;
  uint64_t seq;
} ooc_heap;

static inline void
ooc_heap_init(ooc_heap *h)
{
  h->n = h->cap = 0;
  h->e = NULL;
  h->seq = 0;
}

static inline void
ooc_heap_fini(ooc_heap *h)
{
  free(h->e);
  ooc_heap_init(h);
}

/* Empty the heap and restart the sequence, keeping the array. */
static inline void
ooc_heap_clear(ooc_heap *h)
{
  h->n = 0;
  h->seq = 0;
}

static inline int
ooc_heap_less(const ooc_event *a, const ooc_event *b)
{
  return a->t < b->t || (a->t == b->t && a->seq < b->seq);
}

/* Make room for cap events. Returns OOC_OK or OOC_ENOMEM. */
static inline int
ooc_heap_reserve(ooc_heap *h, int32_t cap)
{
  ooc_event *e;

  if (cap <= h->cap)
    return OOC_OK;
  e = realloc(h->e, (size_t)cap * sizeof *e);
  if (e == NULL)
    return OOC_ENOMEM;
  h->e = e;
  h->cap = cap;
  return OOC_OK;
}

/* Push an event at time t; its sequence number is assigned here. */
static inline int
ooc_heap_push(ooc_heap *h, int64_t t, int32_t kind, int32_t a, uint32_t gen)
{
  ooc_event ev = { .t = t, .seq = h->seq++, .kind = kind, .a = a,
                   .gen = gen };
  int32_t i;

  if (h->n == h->cap &&
      ooc_heap_reserve(h, h->cap > 0 ? h->cap * 2 : 64) != OOC_OK)
    return OOC_ENOMEM;
  i = h->n++;
  while (i > 0) {
    int32_t parent = (i - 1) / 2;
    if (!ooc_heap_less(&ev, &h->e[parent]))
      break;
    h->e[i] = h->e[parent];
    i = parent;
  }
  h->e[i] = ev;
  return OOC_OK;
}

/* The earliest event, or NULL when empty. */
static inline const ooc_event *
ooc_heap_peek(const ooc_heap *h)
{
  return h->n > 0 ? &h->e[0] : NULL;
}

/* Remove the earliest event into *out (the heap must not be empty). */
static inline void
ooc_heap_pop(ooc_heap *h, ooc_event *out)
{
  ooc_event last;
  int32_t i = 0;

  *out = h->e[0];
  last = h->e[--h->n];
  for (;;) {
    int32_t c = 2 * i + 1;
    if (c >= h->n)
      break;
    if (c + 1 < h->n && ooc_heap_less(&h->e[c + 1], &h->e[c]))
      c++;
    if (!ooc_heap_less(&h->e[c], &last))
      break;
    h->e[i] = h->e[c];
    i = c;
  }
  if (h->n > 0)
    h->e[i] = last;
}

#endif
