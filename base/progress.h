/* base/progress.h — one progress line with ETA on a terminal, for every
 * long command (sweep, report, maxbatch, minbudget).
 *
 *   [##########....................]  12/64 points  0:12 elapsed, ETA 0:48  note
 *
 * The caller decides whether to draw: the command line passes stderr when
 * it is a terminal (isatty) and NULL otherwise, and NULL draws nothing, so
 * library code reports progress unconditionally and pipes and logs stay
 * clean. A NULL ooc_progress pointer is accepted everywhere too. Redraws
 * are limited to five a second; the ETA is the elapsed time scaled by the
 * work left (none while the total is unknown).
 *
 * Ownership: ooc_progress is caller-embedded (begin/end); the FILE is
 * borrowed. Not thread-safe: report from one thread. O(1) per call.
 */
#ifndef OOC_PROGRESS_H
#define OOC_PROGRESS_H

#include <stdint.h>
#include <stdio.h>

typedef struct ooc_progress {
  FILE *f;                    /* NULL: draw nothing */
  char what[32];              /* "sweep", "report", ... */
  double t0, last_draw;
  int last_len;               /* length of the line on screen */
  int drawn;
  int64_t base, total;        /* offset and total of a multi-part run */
} ooc_progress;

/* Start the clock; draw on f (NULL: never). what names the command. */
void ooc_progress_begin(ooc_progress *p, FILE *f, const char *what);

/* Show done of total units (total 0: unknown, no bar and no ETA) with an
 * optional note ("trying batch 512"). When p->total is set (a run made of
 * parts, ooc_progress_part), done and total are those of the current part,
 * counted from p->base in p->total. Redraws at most five times a second,
 * and always when done == total. */
void ooc_progress_show(ooc_progress *p, int64_t done, int64_t total,
                       const char *unit, const char *note);

/* For a run made of parts: the parts' units so far (base) out of all of
 * them (total); later calls to show count from base. */
void ooc_progress_part(ooc_progress *p, int64_t base, int64_t total);

/* Finish the line (a newline when anything was drawn). */
void ooc_progress_end(ooc_progress *p);

#endif
