/* alloc/blocktab.h — the block table of the segment-based policies
 * (alloc/caching.c, alloc/bestfit.c, the small segments of alloc/va.c),
 * and dense id pools for segments, ranges and chunks.
 *
 * One idea: a policy that carves segments into blocks needs the same
 * bookkeeping whatever its rules: fittree nodes (alloc/fittree.h) for the
 * blocks, the class (free tree) and segment of each block, a stack of
 * unused block ids, and one free tree per class ordered by (size,
 * address). The rules (rounding, which class, when to split, when to
 * release) stay in the policy's file; this table only does what they ask.
 * An ooc_idpool hands out the dense, reused ids of alloc.h's actions.
 *
 * Ownership: both structs are caller-embedded; _init allocates their
 * arrays, _fini frees them (and accepts a zeroed struct). Tables grow by
 * doubling when a pattern needs more than any before (OOC_ENOMEM, or -1,
 * when the host heap refuses), so node pointers are invalidated by
 * ooc_blocktab_new() and ooc_blocktab_split(): hold ids, not pointers.
 * Cost: new, id take/put and open O(1) amortised; best fit, insert,
 * remove, split and free O(log f) expected in the free blocks f of the
 * class; collecting whole segments O(f).
 */
#ifndef OOC_BLOCKTAB_H
#define OOC_BLOCKTAB_H

#include <assert.h>
#include <stdint.h>

#include "alloc/fittree.h"
#include "base/error.h"

#define OOC_BLOCKTAB_CLASSES 2

/* Flags a policy may keep per block (ooc_blocktab.flag). */
#define OOC_BLK_UNMAPPED 1u   /* caching's expandable segments: address
                                 space with no page behind it */

typedef struct ooc_blocktab {
  ooc_fit_node *node;     /* cap blocks: key, tree and segment links */
  uint8_t *cls;           /* free tree of each block */
  uint8_t *flag;          /* OOC_BLK_* of each block */
  int32_t *seg;           /* segment (or range) id of each block */
  int32_t *slots;         /* unused block ids (a stack) */
  int32_t *scratch;       /* cap entries for ooc_blocktab_collect_whole */
  int32_t cap, n_slots;
  ooc_fittree tree[OOC_BLOCKTAB_CLASSES];
} ooc_blocktab;

typedef struct ooc_idpool {
  int32_t *free;          /* released ids (a stack: the last one first) */
  int32_t n_free, hi, cap;/* hi: ids handed out so far are [0, hi) */
} ooc_idpool;

/* Block table of cap blocks (>= 1), all unused. OOC_OK or OOC_ENOMEM. */
int ooc_blocktab_init(ooc_blocktab *bt, int32_t cap);
void ooc_blocktab_fini(ooc_blocktab *bt);
/* Every block unused, every tree empty; the arrays are kept. */
void ooc_blocktab_clear(ooc_blocktab *bt);

/* Grow every per-block array to cap entries (the table's own use; the
 * inline functions below call it). OOC_OK or OOC_ENOMEM. */
int ooc_blocktab_grow(ooc_blocktab *bt, int32_t cap);

/* An unused block id, or -1 when the table cannot grow. The functions of
 * the allocation path are inline: every ALLOC and FREE of the best-fit
 * policies goes through them. */
static inline int32_t
ooc_blocktab_new(ooc_blocktab *bt)
{
  if (bt->n_slots == 0 &&
      (bt->cap > INT32_MAX / 2 || ooc_blocktab_grow(bt, bt->cap * 2) != OOC_OK))
    return -1;
  return bt->slots[--bt->n_slots];
}

/* A free block spanning a new segment [addr, addr + size) of class cls and
 * segment id seg, in no tree; -1 when the table cannot grow. */
int32_t ooc_blocktab_open(ooc_blocktab *bt, int cls, int32_t seg,
                          uint64_t addr, uint64_t size);

/* Give back block id (in no tree, its segment's only block). */
void ooc_blocktab_close(ooc_blocktab *bt, int32_t id);

/* Put free block id into, or take it out of, its class's tree. */
static inline void
ooc_blocktab_insert(ooc_blocktab *bt, int32_t id)
{
  ooc_fittree_insert(&bt->tree[bt->cls[id]], bt->node, id);
}

static inline void
ooc_blocktab_remove(ooc_blocktab *bt, int32_t id)
{
  ooc_fittree_remove(&bt->tree[bt->cls[id]], bt->node, id);
}

/* Best fit in class cls: the first free block by (size, address) of at
 * least size bytes, taken out of the tree; -1 when none. */
static inline int32_t
ooc_blocktab_best_fit(ooc_blocktab *bt, int cls, uint64_t size)
{
  return ooc_fittree_take_best_fit(&bt->tree[cls], bt->node, size);
}

/* Cut block id (in no tree) after size bytes without inserting the rest;
 * returns the rest's id (a free block of the same class and segment), or
 * -1 (nothing changed). */
static inline int32_t
ooc_blocktab_cut(ooc_blocktab *bt, int32_t id, uint64_t size)
{
  int32_t r = ooc_blocktab_new(bt);

  if (r < 0)
    return -1;
  ooc_fittree_carve(bt->node, id, size, r);
  bt->cls[r] = bt->cls[id];
  bt->flag[r] = bt->flag[id];
  bt->seg[r] = bt->seg[id];
  return r;
}

/* Cut block id (in no tree) after size bytes; the rest becomes a free
 * block of the same class and segment, inserted into the tree. OOC_OK, or
 * OOC_ENOMEM (nothing changed). Requires size < the block's size. */
static inline int
ooc_blocktab_split(ooc_blocktab *bt, int32_t id, uint64_t size)
{
  int32_t r = ooc_blocktab_cut(bt, id, size);

  if (r < 0)
    return OOC_ENOMEM;
  ooc_blocktab_insert(bt, r);
  return OOC_OK;
}

/* Free live block id and merge it with the free neighbours of its
 * segment (which are in its class's tree); the merged block is returned,
 * in no tree, and the absorbed ids are given back. */
static inline int32_t
ooc_blocktab_free(ooc_blocktab *bt, int32_t id)
{
  int32_t gone[2];
  int i, n_gone;

  id = ooc_fittree_coalesce(&bt->tree[bt->cls[id]], bt->node, id, gone,
                            &n_gone);
  for (i = 0; i < n_gone; i++)
    bt->slots[bt->n_slots++] = gone[i];
  return id;
}

/* Merge block b, which directly follows block a in their segment, into a
 * and give b back. Neither may be in a tree. */
void ooc_blocktab_join(ooc_blocktab *bt, int32_t a, int32_t b);

/* Is block id its segment's only block? */
static inline int
ooc_blocktab_whole(const ooc_blocktab *bt, int32_t id)
{
  return bt->node[id].prev < 0 && bt->node[id].next < 0;
}

/* The free blocks of class cls that are whole segments, in (size,
 * address) order, into bt->scratch; returns how many. The tree is left as
 * it is. */
int32_t ooc_blocktab_collect_whole(ooc_blocktab *bt, int cls);

/* The free blocks of class cls, in (size, address) order, into
 * bt->scratch; returns how many. */
int32_t ooc_blocktab_collect(ooc_blocktab *bt, int cls);

/* The size of the largest free block of class cls, 0 when none. */
uint64_t ooc_blocktab_largest(const ooc_blocktab *bt, int cls);

/* Id pool with room for cap ids before it grows. OOC_OK or OOC_ENOMEM. */
int ooc_idpool_init(ooc_idpool *p, int32_t cap);
void ooc_idpool_fini(ooc_idpool *p);
/* No id handed out; the next ooc_idpool_take() returns 0. */
void ooc_idpool_clear(ooc_idpool *p);
/* A new id (the stack of given-back ids grows with them); -1 when the
 * host heap refuses. Use ooc_idpool_take(). */
int32_t ooc_idpool_fresh(ooc_idpool *p);

/* The last id given back, else the next new one; -1 when a new id needs
 * the stack to grow and the host heap refuses (the stack always has room
 * for every id handed out, so giving one back cannot fail). Inline: the
 * ideal policy takes one per request. */
static inline int32_t
ooc_idpool_take(ooc_idpool *p)
{
  return p->n_free > 0 ? p->free[--p->n_free] : ooc_idpool_fresh(p);
}

/* Give back id, handed out and not given back since. */
static inline void
ooc_idpool_put(ooc_idpool *p, int32_t id)
{
  assert(id >= 0 && id < p->hi && p->n_free < p->cap);
  p->free[p->n_free++] = id;
}

#endif /* OOC_BLOCKTAB_H */
