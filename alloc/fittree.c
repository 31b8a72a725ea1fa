/* alloc/fittree.c — the segment blocks and the free blocks by (size,
 * address), binned by size, a treap per bin, shared by the best-fit
 * allocators (schedule-window seed §4). See fittree.h: nodes live in a
 * caller-owned array, priorities hash the node id, every operation is
 * O(log n) expected and allocation-free.
 */
#include "config.h"

#include <stddef.h>
#include <string.h>

#include "alloc/fittree.h"

/* Order of nodes: size, then address. */
static int
before(const ooc_fit_node *a, uint64_t size, uint64_t addr)
{
  return a->size < size || (a->size == size && a->addr < addr);
}

/* Split treap t into the nodes before (size, addr) (*l) and the rest (*r):
 * one walk down, O(log n) expected, each node hung on the open link of
 * its side. */
static void
split(ooc_fit_node *nodes, int32_t t, uint64_t size, uint64_t addr,
      int32_t *l, int32_t *r)
{
  while (t >= 0) {
    if (before(&nodes[t], size, addr)) {
      *l = t;
      l = &nodes[t].right;
      t = *l;
    } else {
      *r = t;
      r = &nodes[t].left;
      t = *r;
    }
  }
  *l = *r = -1;
}

/* Join treaps a and b, every key of a before every key of b: one walk
 * down their facing spines. */
static int32_t
join(ooc_fit_node *nodes, int32_t a, int32_t b)
{
  int32_t root, *link = &root;

  while (a >= 0 && b >= 0) {
    if (nodes[a].prio > nodes[b].prio) {
      *link = a;
      link = &nodes[a].right;
      a = *link;
    } else {
      *link = b;
      link = &nodes[b].left;
      b = *link;
    }
  }
  *link = a >= 0 ? a : b;
  return root;
}

void
ooc_fittree_clear(ooc_fittree *t)
{
  int b;

  for (b = 0; b < OOC_FIT_BINS; b++)
    t->root[b] = -1;
  memset(t->used, 0, sizeof t->used);
  t->n = 0;
}

/* The first bin >= b that holds a node, or -1. */
static int
next_bin(const ooc_fittree *t, int b)
{
  int w = b >> 6;
  uint64_t m;

  if (b >= OOC_FIT_BINS)
    return -1;
  m = t->used[w] & (~0ull << (b & 63));
  while (m == 0) {
    if (++w == OOC_FIT_BINS / 64)
      return -1;
    m = t->used[w];
  }
  return w * 64 + __builtin_ctzll(m);
}

/* Bin b's bit after its root changed. */
static void
mark(ooc_fittree *t, int b)
{
  if (t->root[b] >= 0)
    t->used[b >> 6] |= 1ull << (b & 63);
  else
    t->used[b >> 6] &= ~(1ull << (b & 63));
}

void
ooc_fittree_insert(ooc_fittree *t, ooc_fit_node *nodes, int32_t id)
{
  ooc_fit_node *b = &nodes[id];
  int bin = ooc_fittree_bin(b->size);
  int32_t *link = &t->root[bin];

  b->prio = (uint32_t)id * 2654435761u ^ 0x9e3779b9u;
  while (*link >= 0 && nodes[*link].prio >= b->prio)
    link = before(&nodes[*link], b->size, b->addr) ? &nodes[*link].right
                                                   : &nodes[*link].left;
  split(nodes, *link, b->size, b->addr, &b->left, &b->right);
  *link = id;
  t->used[bin >> 6] |= 1ull << (bin & 63);
  t->n++;
}

void
ooc_fittree_remove(ooc_fittree *t, ooc_fit_node *nodes, int32_t id)
{
  const ooc_fit_node *b = &nodes[id];
  int bin = ooc_fittree_bin(b->size);
  int32_t *link = &t->root[bin];

  while (*link != id)
    link = before(&nodes[*link], b->size, b->addr) ? &nodes[*link].right
                                                   : &nodes[*link].left;
  *link = join(nodes, b->left, b->right);
  mark(t, bin);
  t->n--;
}

int32_t
ooc_fittree_lower_bound(const ooc_fittree *t, const ooc_fit_node *nodes,
                        uint64_t size, uint64_t addr)
{
  int b;

  /* The key's bin first: when every node there is before the key, the
   * next bin that holds any, whose first node is the answer (its sizes
   * are all above the key's bin). */
  for (b = next_bin(t, ooc_fittree_bin(size)); b >= 0;
       b = next_bin(t, b + 1)) {
    int32_t i = t->root[b], best = -1;
    while (i >= 0) {
      if (before(&nodes[i], size, addr)) {
        i = nodes[i].right;
      } else {
        best = i;
        i = nodes[i].left;
      }
    }
    if (best >= 0)
      return best;
  }
  return -1;
}

int32_t
ooc_fittree_take_best_fit(ooc_fittree *t, ooc_fit_node *nodes, uint64_t size)
{
  int32_t id = ooc_fittree_lower_bound(t, nodes, size, 0);

  if (id >= 0)
    ooc_fittree_remove(t, nodes, id);
  return id;
}

int32_t
ooc_fittree_last(const ooc_fittree *t, const ooc_fit_node *nodes)
{
  int w, b;
  int32_t i;

  for (w = OOC_FIT_BINS / 64 - 1; w >= 0 && t->used[w] == 0; w--)
    ;
  if (w < 0)
    return -1;
  b = w * 64 + 63 - __builtin_clzll(t->used[w]);
  for (i = t->root[b]; nodes[i].right >= 0;)
    i = nodes[i].right;
  return i;
}

uint64_t
ooc_fittree_largest(const ooc_fittree *t, const ooc_fit_node *nodes)
{
  int32_t i = ooc_fittree_last(t, nodes);

  return i >= 0 ? nodes[i].size : 0;
}

void
ooc_fittree_carve(ooc_fit_node *nodes, int32_t id, uint64_t size, int32_t r)
{
  ooc_fit_node *b = &nodes[id];

  nodes[r] = (ooc_fit_node){
    .addr = b->addr + size, .size = b->size - size, .prev = id,
    .next = b->next, .is_free = 1,
  };
  if (b->next >= 0)
    nodes[b->next].prev = r;
  b->next = r;
  b->size = size;
}

/* Absorb block n, which directly follows block a in its segment, into a.
 * Neither may be in the tree while their sizes change. */
static void
absorb(ooc_fit_node *nodes, int32_t a, int32_t n)
{
  ooc_fit_node *b = &nodes[a], *nb = &nodes[n];

  b->size += nb->size;
  b->next = nb->next;
  if (nb->next >= 0)
    nodes[nb->next].prev = a;
}

int32_t
ooc_fittree_coalesce(ooc_fittree *t, ooc_fit_node *nodes, int32_t id,
                     int32_t gone[2], int *n_gone)
{
  int32_t p, n;

  *n_gone = 0;
  nodes[id].is_free = 1;
  n = nodes[id].next;
  if (n >= 0 && nodes[n].is_free) {
    ooc_fittree_remove(t, nodes, n);
    absorb(nodes, id, n);
    gone[(*n_gone)++] = n;
  }
  p = nodes[id].prev;
  if (p >= 0 && nodes[p].is_free) {
    ooc_fittree_remove(t, nodes, p);
    absorb(nodes, p, id);
    gone[(*n_gone)++] = id;
    id = p;
  }
  return id;
}
