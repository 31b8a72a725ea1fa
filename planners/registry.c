/* planners/registry.c — the NULL-terminated list of planners, in display
 * order (`oocsim list planners`, `compare -p all`). Adding a planner: one
 * file in planners/ exporting one descriptor, one extern line and one entry
 * here, one source on the PLANNERS line of Makefile.am.
 */
#include "config.h"

#include "sim/planner.h"

extern const ooc_planner_type ooc_planner_incore;
extern const ooc_planner_type ooc_planner_naive;
extern const ooc_planner_type ooc_planner_vdnn;
extern const ooc_planner_type ooc_planner_lms;
extern const ooc_planner_type ooc_planner_capacity;
extern const ooc_planner_type ooc_planner_window;

const ooc_planner_type *const ooc_planner_types[] = {
  &ooc_planner_incore,
  &ooc_planner_naive,
  &ooc_planner_vdnn,
  &ooc_planner_lms,
  &ooc_planner_capacity,
  &ooc_planner_window,
  NULL,
};
