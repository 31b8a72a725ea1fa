/* report/timeline.h — what a reader of one iteration's timeline looks for
 * and the trace does not record directly: when the compute stream stalls
 * and why, and which swap-in brings back which swap-out.
 *
 * Stalls: the compute stream is idle, with work left, from the end of one
 * of its instructions (or the start of the iteration) to the start of the
 * next. While it waits, it waits for the first of the next instruction's
 * waits (in program order) that has not completed yet; the stream of that
 * instruction names the cause, exactly as the simulator counts it
 * (sim/sim.h, ooc_stall): H2D stream -> swap-in, D2H stream -> swap-out,
 * anything else -> other; the end of a gap that the simulator counted as
 * waiting for the host to issue the next kernel (the span's host_wait_ns)
 * -> host. So the stall spans of a simulated trace add up, per cause, to
 * the summary's stall_s to the nanosecond. Time the waits do not explain
 * (a measured trace) is "other".
 *
 * Swaps: each H2D of a tensor is paired with the latest D2H of the same
 * tensor that started before it in the trace; an H2D with no such D2H (the
 * copy went out in an earlier iteration or the prologue) has no pair.
 *
 * Ownership: the arrays returned are the caller's (free()). Cost: O(spans
 * log spans + waits) time, O(instructions) scratch.
 */
#ifndef OOC_TIMELINE_H
#define OOC_TIMELINE_H

#include <stdint.h>
#include "ir/program.h"
#include "ir/trace.h"
#include "sim/sim.h"

typedef struct ooc_stall_span {
  int64_t start_ns, end_ns;   /* trace times, start < end */
  ooc_stall cause;
  int32_t waits_for;          /* the instruction waited for, -1 unknown */
  int32_t next;               /* the compute-stream instruction that waits */
} ooc_stall_span;

typedef struct ooc_swap_pair {
  int32_t out_span, in_span;  /* indices into the trace's spans: D2H, H2D */
  int32_t tensor;
} ooc_swap_pair;

/* Time origin of a trace: the earliest span start or memory sample. Every
 * writer (trace_out.h) reports times from it. */
int64_t ooc_trace_origin_ns(const ooc_trace *t);

/* The compute stream's stall spans in trace t of program p, in time order,
 * from the trace's origin on; a span splits where the instruction waited
 * for changes. *out is NULL
 * when there are none. Returns OOC_OK or OOC_ENOMEM. */
int ooc_timeline_stalls(const ooc_program *p, const ooc_trace *t,
                        ooc_stall_span **out, int32_t *n);

/* Swap-out / swap-in pairs of trace t, ordered by the swap-in's start.
 * Returns OOC_OK or OOC_ENOMEM. */
int ooc_timeline_swaps(const ooc_program *p, const ooc_trace *t,
                       ooc_swap_pair **out, int32_t *n);

/* "swap-in", "swap-out", "other", "host". */
const char *ooc_timeline_cause_label(ooc_stall cause);

#endif
