/* tests/fuzz/fuzz_profile.c — libFuzzer target: the hardware profile
 * loader (ir/hw_load.c) on any text, then the costs of a small model on
 * what loads, where an out-of-range value must fail, not overflow. */
#include "config.h"

#include "ir/hw.h"
#include "sim/cost.h"
#include "tests/fuzz/fuzz_common.h"

static const char *net =
  "{ \"name\": \"f\", \"input\": [3, 16, 16], \"layers\": ["
  "  { \"name\": \"c\", \"op\": \"conv2d\", \"out\": 8, \"kernel\": 3,"
  "    \"pad\": 1 }, { \"name\": \"r\", \"op\": \"relu\" },"
  "  { \"name\": \"p\", \"op\": \"globalpool\" },"
  "  { \"name\": \"f\", \"op\": \"flatten\" },"
  "  { \"name\": \"l\", \"op\": \"linear\", \"out\": 10 } ] }";

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  static ooc_model *m;
  ooc_model_opts mo = { .batch = 8 };
  ooc_hw *hw = NULL;
  ooc_costs *c = NULL;
  ooc_err err = { 0 };
  char *text = fuzz_text(data, size);
  int rc;

  if (text == NULL)
    return 0;
  if (m == NULL && ooc_model_load_string(net, "net", &mo, &m, &err) != 0)
    abort();
  rc = ooc_hw_load_string(text, "fuzz.json", NULL, 0, &hw, &err);
  fuzz_check_message(rc, &err);
  if (rc == OOC_OK) {
    rc = ooc_costs_alloc(m, hw, &c, &err);
    fuzz_check_message(rc, &err);
  }
  ooc_costs_free(c);
  ooc_hw_free(hw);
  free(text);
  return 0;
}
