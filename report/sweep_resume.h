/* report/sweep_resume.h — resuming a sweep: the rows already in a results
 * table, found by their coordinates, and the final table that puts old and
 * new rows back in grid order.
 *
 * A point whose coordinates (the first ooc_sweep_ncoords columns) match a
 * row of dir/results.csv is not run again. The final table has the grid's
 * rows in grid order, each the new row or the old one, then the old rows
 * outside the grid in their old order (a duplicate of a row already placed
 * is dropped); --merge composes shard rows the same way.
 *
 * Ownership: ooc_sweep_resume is caller-embedded (zero it, build, free);
 * it keeps row numbers into the table it was built on, which must outlive
 * it unchanged. Cost: O(rows) to build, O(coordinates) expected per
 * lookup.
 */
#ifndef OOC_SWEEP_RESUME_H
#define OOC_SWEEP_RESUME_H

#include <stdint.h>
#include "report/sweep_grid.h"
#include "report/table.h"

/* Open-addressing index from coordinates to row number. */
typedef struct ooc_sweep_resume {
  int64_t cap;
  int64_t *slot;              /* row index, -1 empty */
  uint64_t *hash;
} ooc_sweep_resume;

/* Index the rows of t by their first nc cells; of rows with the same
 * coordinates the first is kept. OOC_ENOMEM when out of memory (free it
 * anyway). */
int ooc_sweep_resume_build(ooc_sweep_resume *km, const ooc_table *t, int nc);

/* The row of t whose first nc cells equal coords, or -1. */
int64_t ooc_sweep_resume_find(const ooc_sweep_resume *km, const ooc_table *t,
                              char *const *coords, int nc);

void ooc_sweep_resume_free(ooc_sweep_resume *km);

/* Compose out (initialised here, with hdr's columns): point i's new row
 * new_rows[i] when there is one (new_rows may be NULL), else its row in
 * old (indexed by km), for every point of g in grid order; then the rows
 * of old outside the grid. OOC_ENOMEM when out of memory (out is then
 * empty). */
int ooc_sweep_resume_compose(const ooc_sweep_grid *g, const ooc_table *hdr,
                             const ooc_table *old,
                             const ooc_sweep_resume *km, char ***new_rows,
                             ooc_table *out);

/* The result cells (columns nc on) of every row of t, read back from
 * path (a resumed sweep's or a shard's results.csv), against what oocsim
 * writes there (docs/output-schema.md): feasible 0 or 1; counts, bytes,
 * batches and FLOPs non-negative integers; other numbers finite and
 * non-negative; fail_limit one of its names; text anything; any cell
 * but feasible may be empty. OOC_EPARSE naming the line, column and
 * cell of the first that is not, so that a hand-edited or corrupted file
 * is not copied into the merged results. O(cells). */
int ooc_sweep_check_results(const ooc_table *t, int nc, const char *path,
                            ooc_err *err);

#endif
