/* alloc/fittree.h — the blocks of the best-fit allocators (alloc/caching.c,
 * alloc/bestfit.c, the small path of alloc/va.c, through alloc/blocktab.h;
 * schedule-window seed §4): segments cut into blocks, and the free ones
 * ordered by (size, address), so best fit is the first free block of size
 * >= the request.
 *
 * Two ideas. The nodes are an array the caller owns, indexed by the
 * caller's block ids (node i describes block i), and the tree and the
 * segments only link them, so insert, remove, best fit, carving and
 * coalescing never allocate. And the free blocks are segregated by size
 * into bins, four per power of two (as TLSF, Masmano et al. 2004, does),
 * each bin a treap by (size, address), with a bitmap of the bins that hold
 * any: every size of a bin is below every size of the next, so the order
 * is the bins' in turn, and best fit is in the request's bin or else the
 * first block of the next bin the bitmap names. One treap of all the free
 * blocks had each operation walk its whole depth, a branch mispredicted at
 * most levels; a bin holds a few blocks. Measured on the 2-core machine
 * (make bench): a simulation of the 10^4-layer resnet with the caching
 * allocator 5.1 -> 3.0 ms, of resnet50 0.044 -> 0.041 ms; joint's solve
 * of resnet152 b344 on v100-pcie3 (threads=1) 14% less CPU. A node's
 * priority is a hash of its id, so every tree's shape, and with it every
 * result, is deterministic.
 *
 * Ownership: ooc_fittree is caller-embedded and holds no memory; the node
 * array belongs to the caller, who may move it (realloc) between calls.
 * A node's size and address are its key: change them only while the node is
 * out of the tree. Cost: insert, remove and coalesce O(log n) expected in
 * the n nodes of the bin they touch (split and join walk down once,
 * without recursion); best fit, lower bound and last the same in at most
 * two bins plus a scan of the bitmap's OOC_FIT_BINS / 64 words; carve
 * O(1); clear O(OOC_FIT_BINS).
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

/* Bins: sizes 0-3 one each, then four per power of two up to 2^64 (bins
 * 0-251 in use; the bitmap's words stay whole). */
#define OOC_FIT_BINS 256

typedef struct ooc_fittree {
  int32_t n;                          /* nodes in the tree */
  uint64_t used[OOC_FIT_BINS / 64];   /* bit b: bin b holds a node */
  int32_t root[OOC_FIT_BINS];         /* each bin's treap, -1 when empty;
                                         in order of bin, then in order
                                         in each, the nodes by (size,
                                         addr) */
} ooc_fittree;

/* The bin of a size: increasing with the size, 4 per power of two (the
 * two bits below the leading one). */
static inline int
ooc_fittree_bin(uint64_t size)
{
  int e;

  if (size < 4)
    return (int)size;
  e = 63 - __builtin_clzll(size);
  return e * 4 - 4 + (int)((size >> (e - 2)) & 3);
}

/* Make t empty. */
void ooc_fittree_clear(ooc_fittree *t);

/* Insert node id (its size and addr set, not in t) into t. */
void ooc_fittree_insert(ooc_fittree *t, ooc_fit_node *nodes, int32_t id);

/* Remove node id, which must be in t. */
void ooc_fittree_remove(ooc_fittree *t, ooc_fit_node *nodes, int32_t id);

/* Best fit: remove from t and return the first node, by (size, addr), of
 * size >= size; -1 when there is none. */
int32_t ooc_fittree_take_best_fit(ooc_fittree *t, ooc_fit_node *nodes,
                                  uint64_t size);

/* The first node of t, by (size, addr), whose key is >= (size, addr),
 * left in the tree; -1 when there is none. With addr + 1 of a node's own
 * key it gives the node after it. At most two bins descended. */
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
