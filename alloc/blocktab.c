/* alloc/blocktab.c — block table and id pools of the segment-based
 * policies (blocktab.h). Blocks are fittree nodes in one array that grows
 * by doubling; the free ones sit in one ooc_fittree per class. Nothing
 * here decides a rule: the policies do.
 */
#include "config.h"

#include <assert.h>
#include <stdlib.h>
#include <string.h>

#include "alloc/blocktab.h"
#include "base/error.h"

/* Grow every per-block array to cap entries; new ids go on the stack. */
int
ooc_blocktab_grow(ooc_blocktab *bt, int32_t cap)
{
  void *p;
  int32_t i;

  if ((p = realloc(bt->node, (size_t)cap * sizeof *bt->node)) == NULL)
    return OOC_ENOMEM;
  bt->node = p;
  if ((p = realloc(bt->cls, (size_t)cap)) == NULL)
    return OOC_ENOMEM;
  bt->cls = p;
  if ((p = realloc(bt->flag, (size_t)cap)) == NULL)
    return OOC_ENOMEM;
  bt->flag = p;
  if ((p = realloc(bt->seg, (size_t)cap * sizeof *bt->seg)) == NULL)
    return OOC_ENOMEM;
  bt->seg = p;
  if ((p = realloc(bt->slots, (size_t)cap * sizeof *bt->slots)) == NULL)
    return OOC_ENOMEM;
  bt->slots = p;
  if ((p = realloc(bt->scratch, (size_t)cap * sizeof *bt->scratch)) == NULL)
    return OOC_ENOMEM;
  bt->scratch = p;
  for (i = cap - 1; i >= bt->cap; i--)
    bt->slots[bt->n_slots++] = i;
  bt->cap = cap;
  return OOC_OK;
}

int
ooc_blocktab_init(ooc_blocktab *bt, int32_t cap)
{
  memset(bt, 0, sizeof *bt);
  if (ooc_blocktab_grow(bt, cap > 0 ? cap : 1) != OOC_OK) {
    ooc_blocktab_fini(bt);
    return OOC_ENOMEM;
  }
  ooc_blocktab_clear(bt);
  return OOC_OK;
}

void
ooc_blocktab_fini(ooc_blocktab *bt)
{
  free(bt->node);
  free(bt->cls);
  free(bt->flag);
  free(bt->seg);
  free(bt->slots);
  free(bt->scratch);
  memset(bt, 0, sizeof *bt);
}

void
ooc_blocktab_clear(ooc_blocktab *bt)
{
  int32_t i;
  int c;

  bt->n_slots = bt->cap;
  for (i = 0; i < bt->cap; i++)
    bt->slots[i] = bt->cap - 1 - i;
  for (c = 0; c < OOC_BLOCKTAB_CLASSES; c++)
    ooc_fittree_clear(&bt->tree[c]);
}


int32_t
ooc_blocktab_open(ooc_blocktab *bt, int cls, int32_t seg, uint64_t addr,
                  uint64_t size)
{
  int32_t id = ooc_blocktab_new(bt);

  if (id < 0)
    return -1;
  bt->node[id] = (ooc_fit_node){
    .addr = addr, .size = size, .prev = -1, .next = -1, .is_free = 1,
  };
  bt->cls[id] = (uint8_t)cls;
  bt->flag[id] = 0;
  bt->seg[id] = seg;
  return id;
}

void
ooc_blocktab_close(ooc_blocktab *bt, int32_t id)
{
  assert(ooc_blocktab_whole(bt, id));
  bt->slots[bt->n_slots++] = id;
}







void
ooc_blocktab_join(ooc_blocktab *bt, int32_t a, int32_t b)
{
  ooc_fit_node *na = &bt->node[a], *nb = &bt->node[b];

  assert(na->next == b && nb->prev == a);
  na->size += nb->size;
  na->next = nb->next;
  if (nb->next >= 0)
    bt->node[nb->next].prev = a;
  bt->slots[bt->n_slots++] = b;
}

/* In-order walk of the treap t (a bin) appending its nodes (all, or only whole
 * segments) to bt->scratch. Recursion depth is the treap's height. */
static void
walk(ooc_blocktab *bt, int32_t t, int whole_only, int32_t *n)
{
  while (t >= 0) {
    walk(bt, bt->node[t].left, whole_only, n);
    if (!whole_only || ooc_blocktab_whole(bt, t))
      bt->scratch[(*n)++] = t;
    t = bt->node[t].right;
  }
}

/* Every free block of class cls (all, or only whole segments) into
 * bt->scratch, in (size, address) order: the bins in turn. */
static int32_t
collect(ooc_blocktab *bt, int cls, int whole_only)
{
  int32_t n = 0;
  int b;

  for (b = 0; b < OOC_FIT_BINS; b++)
    walk(bt, bt->tree[cls].root[b], whole_only, &n);
  return n;
}

int32_t
ooc_blocktab_collect_whole(ooc_blocktab *bt, int cls)
{
  return collect(bt, cls, 1);
}

int32_t
ooc_blocktab_collect(ooc_blocktab *bt, int cls)
{
  return collect(bt, cls, 0);
}

uint64_t
ooc_blocktab_largest(const ooc_blocktab *bt, int cls)
{
  return ooc_fittree_largest(&bt->tree[cls], bt->node);
}

/* --- id pools ------------------------------------------------------------ */

int
ooc_idpool_init(ooc_idpool *p, int32_t cap)
{
  memset(p, 0, sizeof *p);
  p->cap = cap > 0 ? cap : 1;
  p->free = malloc((size_t)p->cap * sizeof *p->free);
  if (p->free == NULL) {
    p->cap = 0;
    return OOC_ENOMEM;
  }
  return OOC_OK;
}

void
ooc_idpool_fini(ooc_idpool *p)
{
  free(p->free);
  memset(p, 0, sizeof *p);
}

void
ooc_idpool_clear(ooc_idpool *p)
{
  p->n_free = 0;
  p->hi = 0;
}

int32_t
ooc_idpool_fresh(ooc_idpool *p)
{
  if (p->hi == p->cap) {
    int32_t *f;
    if (p->cap > INT32_MAX / 2)
      return -1;
    f = realloc(p->free, (size_t)p->cap * 2 * sizeof *f);
    if (f == NULL)
      return -1;
    p->free = f;
    p->cap *= 2;
  }
  return p->hi++;
}
