/* alloc/oom.c — the out-of-memory report of an ALLOC (alloc.h), written
 * once for every interpreter of a program.
 *
 * One idea: an ALLOC that cannot be satisfied ends a run infeasible, and
 * the report names the instruction, the bytes it asked for, what the
 * policy had live and reserved, its largest free block and the policy's
 * own one-line reason (docs/program-ir.md, "Semantics"). The simulator
 * and the executor both fill it here, so the same program at the same
 * budget gives the same report from either (only the time differs: one
 * predicted, one measured).
 *
 * Cost: one stats() and one explain() call of the policy.
 */
#include "config.h"

#include <stdio.h>

#include "alloc/alloc.h"
#include "base/util.h"

void
ooc_alloc_oom(const ooc_allocator_type *t, const void *state,
              const ooc_program *p, int32_t i, int64_t time_ns, ooc_oom *o)
{
  const ooc_instr *in = &p->instr[i];
  uint64_t bytes = p->tensors[in->tensor].bytes;
  ooc_alloc_stats as;

  t->stats(state, &as);
  *o = (ooc_oom){
    .instr = i, .tensor = in->tensor, .layer = in->layer,
    .time_ns = time_ns, .requested_bytes = bytes,
    .live_bytes = as.allocated, .reserved_bytes = as.reserved,
    .largest_free_bytes = as.largest_free,
  };
  t->explain(state, bytes, o->reason, sizeof o->reason);
}

void
ooc_alloc_oom_host(const ooc_allocator_type *t, const void *state,
                   const ooc_program *p, int32_t i, int64_t time_ns,
                   uint64_t pinned, uint64_t host_mem, ooc_oom *o)
{
  ooc_alloc_oom_host_kind(t, state, p, i, time_ns, "pinned host memory",
                          pinned, host_mem, o);
}

void
ooc_alloc_oom_host_kind(const ooc_allocator_type *t, const void *state,
                        const ooc_program *p, int32_t i, int64_t time_ns,
                        const char *what, uint64_t used, uint64_t limit,
                        ooc_oom *o)
{
  uint64_t bytes = p->tensors[p->instr[i].tensor].bytes;
  char b1[32], b2[32], b3[32];

  ooc_alloc_oom(t, state, p, i, time_ns, o);
  snprintf(o->reason, sizeof o->reason, "%s exhausted: %s requested, %s "
           "of %s in use", what, ooc_fmt_bytes(bytes, b1, sizeof b1),
           ooc_fmt_bytes(used, b2, sizeof b2),
           ooc_fmt_bytes(limit, b3, sizeof b3));
}
