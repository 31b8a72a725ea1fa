/* planners/registry.c — the NULL-terminated list of planners, in display
 * order (`oocsim list planners`, `compare -p all`). Adding a planner: one
 * file in planners/ exporting one descriptor, one extern line and one entry
 * here, one source on the PLANNERS line of Makefile.am.
 */
#include "config.h"

#include <string.h>

#include "base/util.h"
#include "planners/registry.h"

extern const ooc_planner_type ooc_planner_incore;
extern const ooc_planner_type ooc_planner_naive;
extern const ooc_planner_type ooc_planner_vdnn;
extern const ooc_planner_type ooc_planner_lms;
extern const ooc_planner_type ooc_planner_capacity;
extern const ooc_planner_type ooc_planner_window;
extern const ooc_planner_type ooc_planner_checkpoint;
extern const ooc_planner_type ooc_planner_checkpoint_dp;
extern const ooc_planner_type ooc_planner_pooch;
extern const ooc_planner_type ooc_planner_superneurons;
extern const ooc_planner_type ooc_planner_zero_offload;
extern const ooc_planner_type ooc_planner_joint;

const ooc_planner_type *const ooc_planner_types[] = {
  &ooc_planner_incore,
  &ooc_planner_naive,
  &ooc_planner_vdnn,
  &ooc_planner_lms,
  &ooc_planner_capacity,
  &ooc_planner_window,
  &ooc_planner_checkpoint,
  &ooc_planner_checkpoint_dp,
  &ooc_planner_pooch,
  &ooc_planner_superneurons,
  &ooc_planner_zero_offload,
  &ooc_planner_joint,
  NULL,
};

const ooc_planner_type *
ooc_planner_find(const char *name, ooc_err *err)
{
  const char *names[64];
  char list[512];
  int i;

  for (i = 0; ooc_planner_types[i] != NULL; i++)
    if (name != NULL && strcmp(ooc_planner_types[i]->name, name) == 0)
      return ooc_planner_types[i];
  for (i = 0; ooc_planner_types[i] != NULL && i < 63; i++)
    names[i] = ooc_planner_types[i]->name;
  names[i] = NULL;
  ooc_err_set(err, OOC_ENOTFOUND, "unknown planner '%s' (valid: %s)",
              name ? name : "", ooc_join_names(names, list, sizeof list));
  return NULL;
}
