/* tests/fuzz/fuzz_model.c — libFuzzer target: the model loader (ir/) on
 * any text, then the liveness and lowering of the in-core plan of what
 * loads, so shapes, aliases and repeats reach every consumer. */
#include "config.h"

#include "ir/model.h"
#include "plan/plan.h"
#include "tests/fuzz/fuzz_common.h"

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  ooc_model_opts mo = { .batch = 4 };
  ooc_model *m = NULL;
  ooc_liveness *lv = NULL;
  ooc_plan pl;
  ooc_program prog;
  ooc_err err = { 0 };
  char *text = fuzz_text(data, size);
  int rc;

  if (text == NULL)
    return 0;
  rc = ooc_model_load_string(text, "fuzz.json", &mo, &m, &err);
  fuzz_check_message(rc, &err);
  if (rc == OOC_OK && ooc_liveness_alloc(m, &lv, &err) == OOC_OK &&
      ooc_plan_init(&pl, lv, &err) == OOC_OK) {
    ooc_program_init(&prog);
    rc = ooc_plan_lower(&pl, lv, &prog, &err);
    fuzz_check_message(rc, &err);
    ooc_program_fini(&prog);
    ooc_plan_fini(&pl);
  }
  ooc_liveness_free(lv);
  ooc_model_free(m);
  free(text);
  return 0;
}
