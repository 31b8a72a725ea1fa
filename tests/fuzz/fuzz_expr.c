/* tests/fuzz/fuzz_expr.c — libFuzzer target: the expression evaluator of
 * model files (ir/expr.c), over two variables. */
#include "config.h"

#include "ir/expr.h"
#include "tests/fuzz/fuzz_common.h"

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  ooc_expr_var vars[2] = {
    { .name = "depth", .v = { 0 } }, { .name = "width", .v = { 0 } },
  };
  ooc_value out;
  ooc_err err = { 0 };
  char *text = fuzz_text(data, size);
  int rc;

  if (text == NULL)
    return 0;
  vars[0].v = ooc_value_int(50);
  vars[1].v = ooc_value_double(1.5);
  rc = ooc_expr_eval(text, vars, 2, &out, &err);
  fuzz_check_message(rc, &err);
  free(text);
  return 0;
}
