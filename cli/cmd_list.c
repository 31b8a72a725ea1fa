/* cli/cmd_list.c — `oocsim list models|hw|planners|allocators`: what is
 * available, by name, with a one-line description each. Models are loaded
 * at batch 1 to show their parameter counts; profiles to show their GPU,
 * usable memory and link. O(files).
 */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "cli/commands.h"
#include "cli/args.h"
#include "planners/registry.h"
#include "alloc/alloc.h"
#include "plan/planner.h"
#include "base/util.h"

static const ooc_cli_doc doc = {
  .name = "list", .cmd = OOC_CMD_LIST,
  .usage = "Usage: oocsim list models|hw|planners|allocators\n",
  .about =
    "List the model zoo (name, parameters, layers), the hardware profiles\n"
    "(GPU, usable memory, pinned H2D/D2H bandwidth), the registered planners\n"
    "(summary and the paper section each follows) or the allocator models.\n"
    "Models and profiles are looked up in the data directory that\n"
    "'oocsim --version' prints (see --datadir in 'oocsim --help').\n",
  .examples =
    "  oocsim list models\n"
    "  oocsim list planners\n",
};

static int
list_models(void)
{
  char **names = NULL;
  int n = 0, i, rc;
  ooc_err err = { 0 };

  if ((rc = ooc_data_list("models", &names, &n, &err)) < 0)
    return ooc_cli_fail("%s", err.msg);
  printf("%-18s %14s  %s\n", "model", "parameters", "layers");
  for (i = 0; i < n; i++) {
    ooc_model *m = NULL;
    ooc_model_opts mo = { .batch = 1 };
    ooc_err e2 = { 0 };
    if (ooc_model_load(names[i], &mo, &m, &e2) < 0)
      printf("%-18s %14s  (does not load: %s)\n", names[i], "-", e2.msg);
    else
      printf("%-18s %14llu  %d\n", names[i],
             (unsigned long long)m->total_params, m->n_layers);
    ooc_model_free(m);
  }
  ooc_data_list_free(names, n);
  return 0;
}

static int
list_hw(void)
{
  char **names = NULL;
  int n = 0, i, rc;
  ooc_err err = { 0 };
  char b1[32];

  if ((rc = ooc_data_list("hwprofiles", &names, &n, &err)) < 0)
    return ooc_cli_fail("%s", err.msg);
  printf("%-16s %12s %9s %9s  %s\n", "profile", "usable", "H2D GB/s",
         "D2H GB/s", "gpu");
  for (i = 0; i < n; i++) {
    ooc_hw *hw = NULL;
    ooc_err e2 = { 0 };
    if (ooc_hw_load(names[i], NULL, 0, &hw, &e2) < 0)
      printf("%-16s (does not load: %s)\n", names[i], e2.msg);
    else
      printf("%-16s %12s %9.1f %9.1f  %s\n", names[i],
             ooc_fmt_bytes(hw->mem_usable, b1, sizeof b1), hw->h2d_Bps * 1e-9,
             hw->d2h_Bps * 1e-9, hw->gpu);
    ooc_hw_free(hw);
  }
  ooc_data_list_free(names, n);
  return 0;
}

static int
list_planners(void)
{
  int i, w = 10;

  /* The summaries in one column, after the longest name (checkpoint-dp,
   * superneurons, zero-offload). */
  for (i = 0; ooc_planner_types[i] != NULL; i++)
    if ((int)strlen(ooc_planner_types[i]->name) > w)
      w = (int)strlen(ooc_planner_types[i]->name);
  for (i = 0; ooc_planner_types[i] != NULL; i++) {
    const ooc_planner_type *t = ooc_planner_types[i];
    printf("%-*s %s\n", w, t->name, t->summary);
    if (t->cite != NULL && t->cite[0] != '\0')
      printf("%-*s   (%s)\n", w, "", t->cite);
  }
  return 0;
}

static int
list_allocators(void)
{
  char keys[256];
  int i;

  for (i = 0; ooc_allocator_types[i] != NULL; i++) {
    const ooc_allocator_type *t = ooc_allocator_types[i];
    printf("%-10s %s\n", t->name, t->summary);
    if (t->options != NULL && t->options[0] != NULL)
      printf("%-10s   options: %s\n", "",
             ooc_join_names(t->options, keys, sizeof keys));
    if (t->cite != NULL && t->cite[0] != '\0')
      printf("%-10s   (%s)\n", "", t->cite);
  }
  return 0;
}

int
ooc_cmd_list(int argc, char **argv)
{
  ooc_cli_args a;
  int rc;

  if (ooc_cli_args_start(&a, argc, argv, &doc, 1, 0, &rc))
    goto done;
  if (a.n_pos != 1) {
    rc = ooc_cli_fail("list: expected one of models, hw, planners, "
                      "allocators");
    goto done;
  }
  if (strcmp(a.pos[0], "models") == 0)
    rc = list_models();
  else if (strcmp(a.pos[0], "hw") == 0 || strcmp(a.pos[0], "hwprofiles") == 0)
    rc = list_hw();
  else if (strcmp(a.pos[0], "planners") == 0)
    rc = list_planners();
  else if (strcmp(a.pos[0], "allocators") == 0)
    rc = list_allocators();
  else
    rc = ooc_cli_fail("list: unknown list '%s' (models, hw, planners, "
                      "allocators)", a.pos[0]);
done:
  ooc_cli_args_fini(&a);
  return rc;
}
