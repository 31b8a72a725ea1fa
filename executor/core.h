/* executor/core.h — the pieces of the shared replay core that its files
 * share (not a public header: executor/executor.h is the module's).
 *
 *   arena.c   the device arena: the allocator policy's driver actions
 *             performed through the backend, id-indexed tables of
 *             segments, virtual ranges and chunks, tensor pointers, the
 *             real reserved bytes and their high-water mark;
 *   data.c    seeded parameters and input batch, the tied embedding.
 *
 * Ownership: the caller embeds these structs (_init/_fini); they borrow
 * the backend, the model and the program.
 */
#ifndef OOC_EXEC_CORE_H
#define OOC_EXEC_CORE_H

#include <stdint.h>
#include "base/error.h"
#include "ir/model.h"
#include "ir/program.h"
#include "alloc/alloc.h"
#include "executor/backend.h"
#include "ir/kernel.h"

/* --- arena.c -------------------------------------------------------------- */

typedef struct ooc_exec_arena {
  const ooc_exec_backend *b;
  void *bstate;
  ooc_exec_region *tab[3];        /* segments, virtual ranges, chunks */
  int32_t cap[3];
  uint64_t reserved, peak_reserved; /* segment and chunk bytes held */
  uint64_t actions[OOC_DRV_COUNT];
  ooc_err *err;                   /* where a failed action's message goes
                                     (set by the caller per request) */
} ooc_exec_arena;

void ooc_exec_arena_init(ooc_exec_arena *a, const ooc_exec_backend *b,
                         void *bstate);
/* Give back everything still held (unmap chunks, release them, free
 * ranges and segments) and the tables. */
void ooc_exec_arena_fini(ooc_exec_arena *a);
/* The sink to hand the allocator policy: performs each action. */
ooc_drv_sink ooc_exec_arena_sink(ooc_exec_arena *a);
/* The pointer of a placement: its segment's or range's base plus its
 * offset in it, NULL (with err) when no live segment or range holds it. */
void *ooc_exec_arena_ptr(const ooc_exec_arena *a, const ooc_placement *pl,
                         ooc_err *err);

/* --- data.c --------------------------------------------------------------- */

/* Fill host buffer buf (tensor t's bytes) with t's initial contents:
 * parameters seeded per layer (weights scaled by 1/sqrt(fan-in), norms'
 * scale 1 and shift 0, zero gradients and optimizer state), the input
 * batch uniform in [-1, 1) or, when an embedding reads it, token ids;
 * anything else zero. */
void ooc_exec_data_fill(const ooc_model *m, const ooc_program *p, int32_t t,
                        uint64_t seed, void *buf);

#endif
