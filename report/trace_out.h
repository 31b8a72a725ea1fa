/* report/trace_out.h — write a simulated (or measured) iteration as a Chrome
 * trace event file for Perfetto / chrome://tracing, and its memory curve as
 * CSV.
 *
 * Trace: one process named after the model ("oocsim" without one), one
 * thread (lane) per stream: "compute", "H2D", "D2H". Times are
 * microseconds from the trace's origin (timeline.h), with nanosecond
 * precision.
 *  - Each timed instruction with a duration is an "X" event named by phase
 *    and layer ("fwd conv1", "bwd res2a", "recomp conv1", "update",
 *    "h2d conv1", "d2h conv1", "alloc conv1") with category fwd, bwd,
 *    recomp, update, h2d, d2h or alloc. args: "instr"; a copy, ALLOC or
 *    FREE adds "tensor" and its "bytes"; a COMPUTE adds the model's
 *    "flops" and "bytes" (read + written) of its layer's forward
 *    (recompute too) or backward, the update "bytes" only.
 *  - Each compute stall (timeline.h) is an "X" event on the compute lane,
 *    category "stall", named "stall swap-in", "stall swap-out" or "stall
 *    other"; args "cause" (swapin, swapout, other), "waits_for" (the name
 *    of the instruction waited for) and its "waits_for_instr", and
 *    "next_instr". Their durations add up, per cause, to the summary's
 *    stall_s.
 *  - Each swap pair (timeline.h) is a flow, category "swap", named "swap
 *    <layer>", id 1, 2, ... in swap-in order: an "s" event inside the D2H
 *    slice and an "f" event ("bp":"e") inside the H2D slice; Perfetto
 *    draws an arrow from one to the other.
 *  - Memory: two counters, "allocated" and "reserved", args {"bytes"}, a
 *    sample each at every memory sample (two tracks in Perfetto).
 *
 * Memory CSV: header "time_s,allocated_bytes,reserved_bytes", one row per
 * memory sample, same time origin.
 *
 * Timeline CSV (what `oocsim plot gantt` draws; `oocsim report` writes it
 * to data/timeline.csv, `simulate --timeline-csv` anywhere): header
 * "lane,start_s,end_s,phase,layer,cause", then one row per span with lane
 * compute|h2d|d2h, phase fwd|bwd|recompute|update|swapin|swapout|alloc|
 * free, and one per compute stall (timeline.h) with phase stall, the layer
 * of the instruction waited for (empty when none) and cause swapin|
 * swapout|other; cause is empty on the other rows. Ordered by lane, then
 * start, then end. Times are exact: seconds with nine decimals.
 *
 * Ownership: everything is borrowed; the writers allocate nothing per event
 * (fprintf straight to f). O(spans + samples); the timeline sorts its rows,
 * O(n log n) with one array of them.
 */
#ifndef OOC_TRACE_OUT_H
#define OOC_TRACE_OUT_H

#include <stdio.h>
#include "base/error.h"
#include "ir/model.h"
#include "ir/program.h"
#include "sim/sim.h"
#include "report/timeline.h"

int ooc_trace_write_chrome(FILE *f, const ooc_model *m, const ooc_program *p,
                           const ooc_trace *t);
int ooc_trace_write_mem_csv(FILE *f, const ooc_trace *t);
int ooc_trace_write_timeline(FILE *f, const ooc_model *m,
                             const ooc_program *p, const ooc_trace *t);

/* Convenience: open path, write, close; err names the path on failure. */
int ooc_trace_save_chrome(const char *path, const ooc_model *m,
                          const ooc_program *p, const ooc_trace *t,
                          ooc_err *err);
int ooc_trace_save_mem_csv(const char *path, const ooc_trace *t,
                           ooc_err *err);
int ooc_trace_save_timeline(const char *path, const ooc_model *m,
                            const ooc_program *p, const ooc_trace *t,
                            ooc_err *err);

#endif
