/* planners/registry.h — every planner oocsim ships, by name.
 *
 * The registry is the top of the planner layer: plan/ (the front end) runs
 * any descriptor it is given and never reads this list, so dependencies
 * point downward only (docs/architecture.md). Adding a planner: one file
 * in planners/ exporting one descriptor, one extern line and one entry in
 * registry.c, one source on the PLANNERS line of Makefile.am. Every test
 * suite that checks planners loops over this list, so registering a
 * planner is what puts it under test.
 */
#ifndef OOC_REGISTRY_H
#define OOC_REGISTRY_H

#include "base/error.h"
#include "plan/planner.h"

/* NULL-terminated registry in display order (`oocsim list planners`,
 * `compare -p all`). */
extern const ooc_planner_type *const ooc_planner_types[];

/* Lookup by name; on failure err lists the valid names (OOC_ENOTFOUND). */
const ooc_planner_type *ooc_planner_find(const char *name, ooc_err *err);

#endif
