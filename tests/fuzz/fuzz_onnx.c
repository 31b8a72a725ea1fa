/* tests/fuzz/fuzz_onnx.c — libFuzzer target: the ONNX importer (ir/) on any
 * bytes, its shape folding included, then the model loader on what it
 * writes, so a file that imports always loads. */
#include "config.h"

#include <cjson/cJSON.h>

#include "ir/model.h"
#include "ir/onnx_import.h"
#include "tests/fuzz/fuzz_common.h"

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  static const ooc_kv sets[] = { { "N", "2" }, { "S", "8" }, { "H", "16" },
                                 { "W", "16" } };
  ooc_onnx_opts o = { .name = "fuzz", .loss = 1, .sets = sets,
                      .n_sets = 4 };
  ooc_onnx_report rep;
  ooc_err err = { 0 };
  cJSON *m = NULL;
  int rc = ooc_onnx_import_mem(data, size, "fuzz.onnx", &o, &m, &rep, &err);

  fuzz_check_message(rc, &err);
  if (rc == OOC_OK) {
    ooc_model_opts mo = { .batch = 2 };
    ooc_model *model = NULL;
    char *text = cJSON_PrintUnformatted(m);
    if (text != NULL) {
      /* What import writes loads (it checked so before returning). */
      if (ooc_model_load_string(text, "fuzz.json", &mo, &model, &err) !=
          OOC_OK)
        abort();
      ooc_model_free(model);
      free(text);
    }
  }
  cJSON_Delete(m);
  return 0;
}
