/* alloc/fittree.h — the blocks of the best-fit allocators (alloc/caching.c,
 * alloc/bestfit.c, the small path of alloc/va.c, through alloc/blocktab.h;
 * schedule-window seed §4): segments cut into blocks, and the free ones in
 * a treap ordered by (size, address), so best fit is the leftmost free
 * block of size >= the request.
 *
 * One idea: the nodes are an array the caller owns, indexed by the caller's
 * block ids (node i describes block i), and the tree and the segments only
 * link them, so insert, remove, best fit, carving and coalescing never
 * allocate. A node's priority is a hash of its id, so the tree's shape, and
 * with it every result, is deterministic.
 *
 * Ownership: ooc_fittree is caller-embedded and holds no memory; the node
 * array belongs to the caller, who may move it (realloc) between calls.
 * A node's size and address are its key: change them only while the node is
 * out of the tree. Cost: insert, remove, best fit and coalesce O(log n)
 * expected in the n nodes of the tree (split and join walk down it once,
 * without recursion); carve O(1).
 */
#ifndef OOC_FITTREE_H
#define OOC_FITTREE_H

#include <stdint.h>

/* One block: the key (size, addr), its tree children (-1 when none) and
 * priority (set by ooc_fittree_insert), its neighbours in its segment (-1
 * at the segment's ends) and whether it is free. */
typedef struct ooc_fit_node {
  uint64_t size, addr;
  int32_t left, right;
  uint32_t prio;
  int32_t prev, next;
  uint8_t is_free;
} ooc_fit_node;

typedef struct ooc_fittree {
  int32_t root;   /* -1 when empty */
  int32_t n;      /* nodes in the tree */
} ooc_fittree;

/* Make t empty. */
void ooc_fittree_clear(ooc_fittree *t);

/* Insert node id (its size and addr set, not in t) into t. */
void ooc_fittree_insert(ooc_fittree *t, ooc_fit_node *nodes, int32_t id);

/* Remove node id, which must be in t. */
void ooc_fittree_remove(ooc_fittree *t, ooc_fit_node *nodes, int32_t id);

/* Best fit: remove from t and return the first node, by (size, addr), of
 * size >= size; -1 when there is none. One descent. */
int32_t ooc_fittree_take_best_fit(ooc_fittree *t, ooc_fit_node *nodes,
                                  uint64_t size);

/* The first node of t, by (size, addr), whose key is >= (size, addr),
 * left in the tree; -1 when there is none. With addr + 1 of a node's own
 * key it gives the node after it. One descent. */
int32_t ooc_fittree_lower_bound(const ooc_fittree *t,
                                const ooc_fit_node *nodes, uint64_t size,
                                uint64_t addr);

/* The last node of t by (size, addr), left in the tree; -1 when t is
 * empty. */
int32_t ooc_fittree_last(const ooc_fittree *t, const ooc_fit_node *nodes);

/* The size of the largest node of t, 0 when t is empty. */
uint64_t ooc_fittree_largest(const ooc_fittree *t, const ooc_fit_node *nodes);

/* Cut block id (in no tree) at size bytes: the caller's unused node r
 * becomes a free block of the rest, right after id in its segment; r is
 * not inserted. Requires size < nodes[id].size. */
void ooc_fittree_carve(ooc_fit_node *nodes, int32_t id, uint64_t size,
                       int32_t r);

/* Free block id (in no tree) and merge it with its free neighbours, which
 * must be in t and are taken out of it. Returns the merged block (in no
 * tree); the ids it absorbed, now unused, go to gone[0..*n_gone) (at most
 * 2: the next block first) for the caller to recycle. */
int32_t ooc_fittree_coalesce(ooc_fittree *t, ooc_fit_node *nodes, int32_t id,
                             int32_t gone[2], int *n_gone);

#endif /* OOC_FITTREE_H */
