/* executor/arena.c — the device arena: the allocator policy's driver
 * actions performed for real, through the backend.
 *
 * One idea: a policy (alloc/) lays segments, virtual ranges and chunks out
 * in an address space of its own and names them by dense ids that are
 * reused once freed (alloc/alloc.h). The arena keeps one flat table per
 * kind indexed by those ids, asks the backend to perform each action
 * (cudaMalloc or an anonymous mmap for a segment; cuMemAddressReserve or a
 * PROT_NONE reservation for a range; cuMemCreate or a memfd for a chunk,
 * mapped with cuMemMap or MAP_FIXED|MAP_SHARED into its range), and turns
 * a placement into a pointer: the base of the segment or range that holds
 * it plus the offset in it (docs/program-ir.md, "For executor authors").
 * Segment and range ids are separate namespaces but the policy's address
 * space is one, so a placement's id is looked up in both tables and the
 * one that contains its block is the answer.
 *
 * Every action is checked against what it undoes (an id that is live, the
 * same size and address), so a policy bug shows here rather than as
 * corrupt data. Reserved bytes are those segments and chunks hold while
 * they exist, counted from the actions performed, with their high-water
 * mark: the executor's measured peak reserved.
 *
 * Cost: O(1) per action (tables grow by doubling), but a chunk's map and
 * unmap look for their range, O(ranges); teardown O(ids).
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "executor/core.h"

enum { T_SEG = 0, T_VA = 1, T_CHUNK = 2 };

void
ooc_exec_arena_init(ooc_exec_arena *a, const ooc_exec_backend *b,
                    void *bstate)
{
  memset(a, 0, sizeof *a);
  a->b = b;
  a->bstate = bstate;
}

/* Make table k hold id. */
static int
grow(ooc_exec_arena *a, int k, int32_t id)
{
  int32_t cap = a->cap[k];
  ooc_exec_region *q;

  if (id < cap)
    return OOC_OK;
  while (cap <= id)
    cap = cap ? 2 * cap : 64;
  q = realloc(a->tab[k], (size_t)cap * sizeof *q);
  if (q == NULL)
    return ooc_err_set(a->err, OOC_ENOMEM, "executor: out of memory");
  memset(q + a->cap[k], 0, (size_t)(cap - a->cap[k]) * sizeof *q);
  a->tab[k] = q;
  a->cap[k] = cap;
  return OOC_OK;
}

static int
bad(ooc_exec_arena *a, const ooc_drv_action *x, const char *why)
{
  return ooc_err_set(a->err, OOC_EINVAL,
                     "executor: driver action %s id %d (address %llu, %llu "
                     "bytes) %s", ooc_drv_kind_name((ooc_drv_kind)x->kind),
                     x->id, (unsigned long long)x->addr,
                     (unsigned long long)x->bytes, why);
}

/* The live virtual range that holds [addr, addr + bytes), or NULL. */
static ooc_exec_region *
range_of(const ooc_exec_arena *a, uint64_t addr, uint64_t bytes)
{
  int32_t i;

  for (i = 0; i < a->cap[T_VA]; i++) {
    ooc_exec_region *r = &a->tab[T_VA][i];
    if (r->live && addr >= r->addr && addr - r->addr + bytes <= r->bytes)
      return r;
  }
  return NULL;
}

static int
act(void *ctx, const ooc_drv_action *x)
{
  ooc_exec_arena *a = ctx;
  int k, rc;
  ooc_exec_region *r, *range = NULL;

  if (x->id < 0 || x->kind >= OOC_DRV_COUNT)
    return bad(a, x, "is out of range");
  switch (x->kind) {
  case OOC_DRV_SEG_MALLOC: case OOC_DRV_SEG_FREE: k = T_SEG; break;
  case OOC_DRV_VA_RESERVE: case OOC_DRV_VA_FREE: k = T_VA; break;
  default: k = T_CHUNK; break;
  }
  if ((rc = grow(a, k, x->id)) != OOC_OK)
    return rc;
  r = &a->tab[k][x->id];
  switch (x->kind) {
  case OOC_DRV_SEG_MALLOC:
  case OOC_DRV_VA_RESERVE:
  case OOC_DRV_CHUNK_CREATE:
    if (r->live)
      return bad(a, x, "names one that exists");
    memset(r, 0, sizeof *r);
    r->addr = x->addr;
    r->bytes = x->bytes;
    break;
  case OOC_DRV_CHUNK_MAP:
  case OOC_DRV_CHUNK_UNMAP:
    if (!r->live)
      return bad(a, x, "names a chunk that does not exist");
    if (x->kind == OOC_DRV_CHUNK_MAP ? r->mapped
                                     : !r->mapped || r->map_addr != x->addr)
      return bad(a, x, x->kind == OOC_DRV_CHUNK_MAP
                           ? "maps a chunk that is mapped"
                           : "unmaps a chunk that is not mapped there");
    if ((range = range_of(a, x->addr, r->bytes)) == NULL)
      return bad(a, x, "lies in no reserved virtual range");
    break;
  default:
    if (!r->live)
      return bad(a, x, "names one that does not exist");
    if (x->bytes != r->bytes || (x->kind != OOC_DRV_CHUNK_RELEASE &&
                                 x->addr != r->addr))
      return bad(a, x, "does not match the one it gives back");
    if (x->kind == OOC_DRV_CHUNK_RELEASE && r->mapped)
      return bad(a, x, "releases a chunk that is still mapped");
    break;
  }
  if ((rc = a->b->mem(a->bstate, x, r, range, a->err)) != OOC_OK)
    return rc;
  a->actions[x->kind]++;
  switch (x->kind) {
  case OOC_DRV_SEG_MALLOC:
  case OOC_DRV_CHUNK_CREATE:
    r->live = 1;
    a->reserved += r->bytes;
    if (a->reserved > a->peak_reserved)
      a->peak_reserved = a->reserved;
    break;
  case OOC_DRV_VA_RESERVE:
    r->live = 1;
    break;
  case OOC_DRV_SEG_FREE:
  case OOC_DRV_CHUNK_RELEASE:
    r->live = 0;
    a->reserved -= r->bytes;
    break;
  case OOC_DRV_VA_FREE:
    r->live = 0;
    break;
  case OOC_DRV_CHUNK_MAP:
    r->mapped = 1;
    r->map_addr = x->addr;
    break;
  case OOC_DRV_CHUNK_UNMAP:
    r->mapped = 0;
    break;
  default:
    break;
  }
  return OOC_OK;
}

ooc_drv_sink
ooc_exec_arena_sink(ooc_exec_arena *a)
{
  return (ooc_drv_sink){ .act = act, .ctx = a };
}

void *
ooc_exec_arena_ptr(const ooc_exec_arena *a, const ooc_placement *pl,
                   ooc_err *err)
{
  int k;

  if (pl->seg < 0)
    return NULL;
  for (k = T_SEG; k <= T_VA; k++) {
    const ooc_exec_region *r;
    if (pl->seg >= a->cap[k])
      continue;
    r = &a->tab[k][pl->seg];
    if (r->live && pl->addr >= r->addr &&
        pl->addr - r->addr + pl->size <= r->bytes)
      return (char *)r->base + (pl->addr - r->addr);
  }
  ooc_err_set(err, OOC_EINVAL,
              "executor: placement in segment %d at address %llu (%llu "
              "bytes) lies in no live segment or virtual range", pl->seg,
              (unsigned long long)pl->addr, (unsigned long long)pl->size);
  return NULL;
}

/* Undo what is still held, in the order a driver needs: unmap, release,
 * then free ranges and segments. Errors are ignored (teardown). */
void
ooc_exec_arena_fini(ooc_exec_arena *a)
{
  int32_t i;
  ooc_err ignore;

  if (a->b != NULL) {
    a->err = &ignore;
    for (i = 0; i < a->cap[T_CHUNK]; i++) {
      ooc_exec_region *r = &a->tab[T_CHUNK][i];
      if (r->live && r->mapped) {
        ooc_drv_action x = { .kind = OOC_DRV_CHUNK_UNMAP, .id = i,
                             .addr = r->map_addr, .bytes = r->bytes };
        act(a, &x);
      }
    }
    for (i = 0; i < a->cap[T_CHUNK]; i++) {
      ooc_exec_region *r = &a->tab[T_CHUNK][i];
      if (r->live) {
        ooc_drv_action x = { .kind = OOC_DRV_CHUNK_RELEASE, .id = i,
                             .bytes = r->bytes };
        act(a, &x);
      }
    }
    for (i = 0; i < a->cap[T_VA]; i++) {
      ooc_exec_region *r = &a->tab[T_VA][i];
      if (r->live) {
        ooc_drv_action x = { .kind = OOC_DRV_VA_FREE, .id = i,
                             .addr = r->addr, .bytes = r->bytes };
        act(a, &x);
      }
    }
    for (i = 0; i < a->cap[T_SEG]; i++) {
      ooc_exec_region *r = &a->tab[T_SEG][i];
      if (r->live) {
        ooc_drv_action x = { .kind = OOC_DRV_SEG_FREE, .id = i,
                             .addr = r->addr, .bytes = r->bytes };
        act(a, &x);
      }
    }
  }
  for (i = 0; i < 3; i++)
    free(a->tab[i]);
  memset(a, 0, sizeof *a);
}
