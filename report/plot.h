/* report/plot.h — plots drawn by the gnuplot scripts in plots/.
 *
 * Each kind turns one input file into a gnuplot data file (OUT with its
 * extension replaced by ".dat": blocks per line, plain columns) and then runs
 * plots/KIND.gp on it, writing PNG (pngcairo) or SVG by OUT's extension:
 *
 *   throughput  sweep results.csv       samples/s vs batch, a line per
 *                                       planner, in-core line, OOM marked;
 *                                       a panel per profile / --hw-set value
 *   bandwidth   sweep results.csv with  slowdown vs link bandwidth, a line
 *               a --hw-set *GBps axis   per planner; PCIe 3/4/5, NVLink 2
 *                                       and C2C marked (from their profiles)
 *   maxbatch    sweep --maxbatch        largest batch per planner per GPU,
 *               results.csv             clustered bars
 *   memory      mem CSV "time_s,allocated_bytes,reserved_bytes"
 *                                       allocated, reserved, budget; a
 *                                       note when reserved is flat
 *   gantt       timeline CSV "lane,start_s,end_s,phase,layer,cause"
 *               (trace_out.h)
 *                                       compute / H2D / D2H lanes, stalls;
 *                                       touching spans of a phase joined
 *
 * gnuplot is OOC_GNUPLOT from config.h unless $OOCSIM_GNUPLOT names
 * another program. Without a runnable gnuplot the data file is still
 * written and the draw returns OOC_EUNSUP saying gnuplot is missing.
 *
 * Owner: report helper. Cost: linear in the input; one gnuplot process per
 * plot. Nothing here keeps state between calls.
 */
#ifndef OOC_PLOT_H
#define OOC_PLOT_H

#include <stdint.h>
#include <stdio.h>
#include "base/error.h"

typedef enum {
  OOC_PLOT_THROUGHPUT = 0,
  OOC_PLOT_BANDWIDTH,
  OOC_PLOT_MAXBATCH,
  OOC_PLOT_MEMORY,
  OOC_PLOT_GANTT,
  OOC_PLOT_COUNT
} ooc_plot_kind;

/* Returns OOC_OK, or OOC_ENOTFOUND listing the kinds. */
int ooc_plot_kind_parse(const char *s, ooc_plot_kind *k, ooc_err *err);

typedef struct ooc_plot_opts {
  const char *title;          /* NULL: derived from the input */
  uint64_t budget;            /* memory: budget line in bytes (0: none) */
  const char *allocator;      /* memory: the allocator model that ran, for
                                 the note on a flat reserved curve (NULL:
                                 "the allocator") */
} ooc_plot_opts;

/* Whether out names an image a plot can draw: OOC_OK, or OOC_EINVAL
 * "-o OUT: the output must end in .png or .svg". */
int ooc_plot_check_out(const char *out, ooc_err *err);

/* Write the data file for kind from `in` and draw `out` (.png or .svg).
 * Returns OOC_OK; OOC_EUNSUP when gnuplot is missing (the data file is
 * written); OOC_EIO when gnuplot fails (err holds its last message);
 * OOC_EINVAL/OOC_EPARSE for an input that does not fit the kind. */
int ooc_plot_draw(ooc_plot_kind kind, const char *in, const char *out,
                  const ooc_plot_opts *o, ooc_err *err);

/* Draw `out` (.png or .svg) with plots/NAME.gp from a data file the
 * caller wrote (the validation report's plots): the script gets datafile,
 * outfile, fmt and plotdir, plus the caller's assignments in vars
 * ("name='value'; x=1; ", may be NULL). Errors as ooc_plot_draw. */
int ooc_plot_script(const char *name, const char *dat, const char *out,
                    const char *vars, ooc_err *err);

/* s as a gnuplot string literal in dst (n bytes, cut to fit between
 * characters), for the vars of ooc_plot_script: single-quoted pieces, in
 * which gnuplot runs no `command` and expands nothing. */
void ooc_plot_quote(char *dst, size_t n, const char *s);

/* The gnuplot program that would run; sets *path and returns 1 when it is
 * runnable, 0 when not. */
int ooc_plot_gnuplot(const char **path);

#endif
