/* tests/fuzz/fuzz_replay.c — libFuzzer target: a plan.json replayed.
 * Whatever program the reader accepts is simulated on the model it was
 * written for (tests/fuzz/corpus/replay holds plans of this model), with
 * every allocator policy: the simulator must give a result or an error
 * naming the instruction, never crash, hang or overflow. */
#include "config.h"

#include "alloc/alloc.h"
#include "ir/plan_io.h"
#include "sim/cost.h"
#include "sim/sim.h"
#include "tests/fuzz/fuzz_common.h"

static const char *net =
  "{ \"name\": \"replay\", \"input\": [4, 8, 8], \"layers\": ["
  "  { \"name\": \"c1\", \"op\": \"conv2d\", \"out\": 8, \"kernel\": 3,"
  "    \"pad\": 1 }, { \"name\": \"b1\", \"op\": \"batchnorm\" },"
  "  { \"name\": \"r1\", \"op\": \"relu\", \"in_place\": true },"
  "  { \"name\": \"c2\", \"op\": \"conv2d\", \"out\": 8, \"kernel\": 3,"
  "    \"pad\": 1 }, { \"name\": \"a\", \"op\": \"add\","
  "    \"in\": [\"@prev\", \"r1\"] },"
  "  { \"name\": \"p\", \"op\": \"globalpool\" },"
  "  { \"name\": \"f\", \"op\": \"flatten\" },"
  "  { \"name\": \"l\", \"op\": \"linear\", \"out\": 10 },"
  "  { \"name\": \"loss\", \"op\": \"softmax_ce\" } ] }";

static const char *hwjson =
  "{ \"name\": \"fz\", \"gpu\": \"x\", \"memory\": { \"total_GiB\": 1,"
  "  \"usable_GiB\": 0.01 }, \"host\": { \"memory_GiB\": 1 },"
  "  \"compute\": { \"fp32_TFLOPS\": 10, \"fp16_TFLOPS\": 20,"
  "  \"bf16_TFLOPS\": 10, \"tensor_fp16_TFLOPS\": 0,"
  "  \"tensor_bf16_TFLOPS\": 0, \"tensor_tf32_TFLOPS\": 0,"
  "  \"fp32_uses_tf32\": false, \"hbm_GBps\": 1000, \"mem_eff\": 0.5,"
  "  \"launch_us\": 5, \"efficiency\": { \"conv\": 0.5, \"gemm\": 0.5,"
  "  \"norm\": 0.5, \"eltwise\": 0.5, \"pool\": 0.5, \"other\": 0.5 },"
  "  \"conv_algorithms\": { \"implicit_gemm\": 1.5, \"winograd\": 0.5 } },"
  "  \"link\": { \"h2d_GBps\": 10, \"d2h_GBps\": 10,"
  "  \"h2d_pageable_GBps\": 5, \"d2h_pageable_GBps\": 5,"
  "  \"duplex_h2d_GBps\": 8, \"duplex_d2h_GBps\": 8, \"latency_us\": 2,"
  "  \"copy_engines\": 2 }, \"allocator\": { \"malloc_us\": 20,"
  "  \"malloc_us_per_GiB\": 100, \"free_us\": 10, \"va_chunk_MiB\": 2,"
  "  \"va_granularity_MiB\": 2, \"va_map_us\": 3, \"host_alloc_us\": 50 } }";

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  static ooc_model *m;
  static ooc_hw *hw;
  static ooc_costs *costs;
  ooc_model_opts mo = { .batch = 2 };
  ooc_plan_file pf;
  ooc_err err = { 0 };
  int rc, k;

  if (m == NULL &&
      (ooc_model_load_string(net, "net", &mo, &m, &err) != 0 ||
       ooc_hw_load_string(hwjson, "hw", NULL, 0, &hw, &err) != 0 ||
       ooc_costs_alloc(m, hw, &costs, &err) != 0))
    abort();
  rc = ooc_plan_file_read_string((const char *)data, size, "fuzz.json", &pf,
                                 &err);
  fuzz_check_message(rc, &err);
  if (rc != OOC_OK)
    return 0;
  for (k = 0; ooc_allocator_types[k] != NULL; k++) {
    ooc_sim_config cfg = { .model = m, .hw = hw, .costs = costs,
                           .allocator = ooc_allocator_types[k],
                           .iterations = 2 };
    ooc_sim *sim = NULL;
    ooc_sim_result r;
    if (ooc_sim_alloc(&cfg, &sim, &err) != OOC_OK)
      abort();
    rc = ooc_sim_run(sim, &pf.program, &r, NULL, &err);
    fuzz_check_message(rc, &err);
    ooc_sim_free(sim);
  }
  ooc_plan_file_fini(&pf);
  return 0;
}
