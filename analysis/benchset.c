/* analysis/benchset.c — the planner benchmark's scenario set
 * (benchset.h). */
#include "config.h"

#include "analysis/benchset.h"
#include "analysis/maxbatch.h"
#include "analysis/scenario.h"
#include "analysis/summary.h"

const char *const ooc_benchset_profiles[] = { "v100-pcie3", "v100-nvlink2",
                                              "h100-pcie5", "gh200-c2c",
                                              NULL };

const int ooc_benchset_mults[OOC_BENCHSET_NMULTS] = { 2, 4, 8 };

int
ooc_benchset_incore_max(const char *model, const char *hw,
                        const ooc_kv *sets, int n_sets, int64_t *b,
                        ooc_err *err)
{
  ooc_scenario_spec sp = { .model = model, .hw = hw, .planner = "incore",
                           .sets = sets, .n_sets = n_sets };
  ooc_summary s = { 0 };
  int rc = ooc_maxbatch_find(&sp, b, &s, err);

  ooc_summary_fini(&s);
  return rc;
}
