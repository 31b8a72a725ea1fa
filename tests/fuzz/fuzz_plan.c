/* tests/fuzz/fuzz_plan.c — libFuzzer target: the plan.json reader
 * (ir/plan_io.c), whose validation (ir/semantics.c) runs on every program
 * it accepts. */
#include "config.h"

#include "ir/plan_io.h"
#include "tests/fuzz/fuzz_common.h"

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  ooc_plan_file pf;
  ooc_err err = { 0 };
  int rc;

  rc = ooc_plan_file_read_string((const char *)data, size, "fuzz.json", &pf,
                                 &err);
  fuzz_check_message(rc, &err);
  if (rc == OOC_OK)
    ooc_plan_file_fini(&pf);
  return 0;
}
