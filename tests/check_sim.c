/* tests/check_sim.c — the discrete-event engine on hand-computed
 * micro-programs (sim.h, sim/engine.c).
 *
 * Every figure below is worked out by hand in the comment above its
 * assertion. The profile is built in C so the numbers are round:
 *   link alone 10 B/ns each way (10 GB/s), duplex 8 B/ns each way,
 *   copy latency 1000 ns, two copy engines unless a test says otherwise;
 *   layer forward times 100, 200, 300 us for layers 1..3; backward 150,
 *   250, 350 us; recompute 120, 220, 320 us (as a calibrated profile may
 *   say); update 50 us; ideal allocator with zero cost.
 */
#include "config.h"

#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "ir/semantics.h"
#include "sim/sim.h"

static ooc_hw hw;
static ooc_costs costs;
static int64_t fwd[4] = { 0, 100000, 200000, 300000 };
static int64_t bwd[4] = { 0, 150000, 250000, 350000 };
static int64_t rec[4] = { 0, 120000, 220000, 320000 };
static ooc_program prog;
static ooc_sim *sim;
static ooc_sim_result res;
static ooc_err err;

static void
setup(void)
{
  hw = (ooc_hw){
    .name = "test", .mem_total = 1ull << 30, .mem_usable = 1ull << 30,
    .host_mem = 1ull << 34,
    .h2d_Bps = 10e9, .d2h_Bps = 10e9,
    .duplex_h2d_Bps = 8e9, .duplex_d2h_Bps = 8e9,
    .copy_latency_ns = 1000, .copy_engines = 2,
  };
  costs = (ooc_costs){
    .n_layers = 4, .fwd_ns = fwd, .bwd_ns = bwd, .recomp_ns = rec,
    .update_ns = 50000,
  };
  ooc_program_init(&prog);
  sim = NULL;
  memset(&res, 0, sizeof res);
  ooc_err_clear(&err);
}

static void
teardown(void)
{
  ooc_sim_free(sim);
  ooc_program_fini(&prog);
}

/* Make the simulator with the ideal allocator and `budget` bytes. */
static void
make_sim(uint64_t budget)
{
  ooc_sim_config cfg = {
    .model = NULL, .hw = &hw, .costs = &costs,
    .allocator = &ooc_alloc_ideal, .budget = budget, .iterations = 2,
  };
  ck_assert_int_eq(ooc_sim_alloc(&cfg, &sim, &err), OOC_OK);
}

static int32_t
emit(ooc_instr_kind k, int stream, ooc_phase ph, int32_t layer, int32_t t)
{
  int32_t i = ooc_program_emit(&prog, k, stream, ph, layer, t,
                               OOC_WHERE_DEVICE);
  ck_assert_int_ge(i, 0);
  return i;
}

static int32_t
compute(ooc_phase ph, int32_t layer)
{
  return emit(OOC_I_COMPUTE, OOC_STREAM_COMPUTE, ph, layer, -1);
}

static void
arg(int32_t t, int write)
{
  ck_assert_int_eq(ooc_program_arg(&prog, t, write), OOC_OK);
}

static void
wait_on(int32_t i)
{
  ck_assert_int_eq(ooc_program_wait(&prog, i), OOC_OK);
}

/* A pinned host buffer for tensor t, in the prologue: a swap's other end
 * (a D2H needs one; an H2D reads it). */
static void
host(int32_t t)
{
  ck_assert_int_ge(ooc_program_emit(&prog, OOC_I_ALLOC, OOC_STREAM_COMPUTE,
                                    OOC_PH_NONE, 0, t, OOC_WHERE_HOST), 0);
}

static void
run_ok(void)
{
  int rc = ooc_sim_run(sim, &prog, &res, NULL, &err);
  ck_assert_msg(rc == OOC_OK, "run failed: %s", err.msg);
  ck_assert_int_eq(ooc_program_validate(&prog, &err), OOC_OK);
}

/* A recompute is priced at the layer's recompute time, not its forward's.
 *   prologue: ALLOC x (the input)
 *   1 ALLOC a  2 FWD 1 (x -> a)  [0, 100000)  3 FREE a
 *   4 ALLOC a  5 RECOMP 1 (x -> a)  [100000, 220000)  6 FREE a
 * iteration 220000 = fwd[1] + rec[1]. */
START_TEST(test_recompute_cost)
{
  int32_t x, a;

  x = ooc_program_tensor(&prog, OOC_T_INPUT, 0, 1000);
  a = ooc_program_tensor(&prog, OOC_T_ACT, 1, 1000);
  emit(OOC_I_ALLOC, OOC_STREAM_COMPUTE, OOC_PH_NONE, 0, x);
  prog.prologue_end = 1;
  emit(OOC_I_ALLOC, OOC_STREAM_COMPUTE, OOC_PH_NONE, 1, a);
  compute(OOC_PH_FWD, 1);
  arg(x, 0);
  arg(a, 1);
  emit(OOC_I_FREE, OOC_STREAM_COMPUTE, OOC_PH_NONE, 1, a);
  emit(OOC_I_ALLOC, OOC_STREAM_COMPUTE, OOC_PH_NONE, 1, a);
  compute(OOC_PH_RECOMP, 1);
  arg(x, 0);
  arg(a, 1);
  emit(OOC_I_FREE, OOC_STREAM_COMPUTE, OOC_PH_NONE, 1, a);
  make_sim(1ull << 30);
  run_ok();
  ck_assert_int_eq(ooc_sim_instr_ns(sim, &prog, 2), 100000);
  ck_assert_int_eq(ooc_sim_instr_ns(sim, &prog, 5), 120000);
  ck_assert_int_eq(res.iteration_ns, 220000);
  ck_assert_int_eq(res.compute_busy_ns, 220000);
}
END_TEST

/* Two kernels and a swap-out overlapping the second one.
 *   prologue: ALLOC x (1 MB, the input), a pinned host buffer for a
 *   2 ALLOC a (2 MB)                  t = 0, zero cost
 *   3 FWD layer 1 (x -> a)            [0, 100000)
 *   4 D2H a, waits 3                  [100000, 100000 + 1000 + 2e6/10
 *                                      = 301000)
 *   5 FWD layer 2 (reads x)           [100000, 300000): overlaps the copy
 *   6 FREE a on the D2H stream        at 301000, zero cost
 * iteration 301000 ns; compute busy 300000; d2h busy 201000; no stall.
 * Events per iteration: 4 instruction completions + latency + transfer = 6,
 * 12 over the 2 iterations. */
START_TEST(test_overlap)
{
  int32_t x, a, fw;

  x = ooc_program_tensor(&prog, OOC_T_INPUT, 0, 1000000);
  a = ooc_program_tensor(&prog, OOC_T_ACT, 1, 2000000);
  emit(OOC_I_ALLOC, OOC_STREAM_COMPUTE, OOC_PH_NONE, 0, x);
  host(a);
  prog.prologue_end = 2;
  emit(OOC_I_ALLOC, OOC_STREAM_COMPUTE, OOC_PH_NONE, 1, a);
  fw = compute(OOC_PH_FWD, 1);
  arg(x, 0);
  arg(a, 1);
  emit(OOC_I_D2H, OOC_STREAM_D2H, OOC_PH_NONE, 1, a);
  wait_on(fw);
  compute(OOC_PH_FWD, 2);
  arg(x, 0);
  emit(OOC_I_FREE, OOC_STREAM_D2H, OOC_PH_NONE, 1, a);
  make_sim(1ull << 30);
  run_ok();
  ck_assert(res.feasible);
  ck_assert_int_eq(res.iterations, 2);
  ck_assert_int_eq(res.iteration_ns, 301000);
  ck_assert_int_eq(res.compute_busy_ns, 300000);
  ck_assert_int_eq(res.d2h_busy_ns, 201000);
  ck_assert_int_eq(res.h2d_busy_ns, 0);
  ck_assert_uint_eq(res.d2h_bytes, 2000000);
  ck_assert_uint_eq(res.h2d_bytes, 0);
  ck_assert_int_eq(res.stall_ns[OOC_STALL_SWAPIN] +
                   res.stall_ns[OOC_STALL_SWAPOUT] +
                   res.stall_ns[OOC_STALL_OTHER], 0);
  ck_assert_uint_eq(res.peak_allocated, 3000000);
  ck_assert_uint_eq(res.events, 12);
  /* Alone, the copy takes 1000 + 200000 ns. */
  ck_assert_int_eq(ooc_sim_instr_ns(sim, &prog, 4), 201000);
  ck_assert_int_eq(ooc_sim_instr_ns(sim, &prog, 5), 200000);
}
END_TEST

/* Memory-bandwidth interference (hw.interference): the program of
 * test_overlap, with kernels of class other (no model) slowed by half for
 * each copy in its transfer phase.
 *   3 FWD 1  [0, 100000): no copy in flight
 *   5 FWD 2  starts at 100000, 200000 ns of work. The D2H's latency runs
 *            [100000, 101000): still full speed, 1000 ns done. Its
 *            transfer runs [101000, 301000): x1.5, so 200000 / 1.5 =
 *            133333.33 ns of work done; 65666.67 left at full speed from
 *            301000 -> ends at 301000 + 65667 (rounded up) = 366667.
 * iteration 366667; compute busy 100000 + 266667 (the kernel's real span);
 * the copy itself is unchanged (d2h busy 201000). */
START_TEST(test_interference)
{
  int32_t x, a, fw;

  hw.interference[OOC_CLASS_OTHER] = 0.5;
  x = ooc_program_tensor(&prog, OOC_T_INPUT, 0, 1000000);
  a = ooc_program_tensor(&prog, OOC_T_ACT, 1, 2000000);
  emit(OOC_I_ALLOC, OOC_STREAM_COMPUTE, OOC_PH_NONE, 0, x);
  host(a);
  prog.prologue_end = 2;
  emit(OOC_I_ALLOC, OOC_STREAM_COMPUTE, OOC_PH_NONE, 1, a);
  fw = compute(OOC_PH_FWD, 1);
  arg(x, 0);
  arg(a, 1);
  emit(OOC_I_D2H, OOC_STREAM_D2H, OOC_PH_NONE, 1, a);
  wait_on(fw);
  compute(OOC_PH_FWD, 2);
  arg(x, 0);
  emit(OOC_I_FREE, OOC_STREAM_D2H, OOC_PH_NONE, 1, a);
  make_sim(1ull << 30);
  run_ok();
  ck_assert_int_eq(res.iteration_ns, 366667);
  ck_assert_int_eq(res.compute_busy_ns, 366667);
  ck_assert_int_eq(res.d2h_busy_ns, 201000);
  ck_assert_uint_eq(res.events, 12);
  /* Without copies in flight the same kernels take their nominal time. */
  ck_assert_int_eq(ooc_sim_instr_ns(sim, &prog, 5), 200000);
}
END_TEST

/* Build: prologue ALLOC a (1 MB) and b (2 MB) and their host buffers;
 * timed H2D a (instruction 4), D2H b (5). */
static void
build_duplex(void)
{
  int32_t a, b;

  a = ooc_program_tensor(&prog, OOC_T_ACT, 1, 1000000);
  b = ooc_program_tensor(&prog, OOC_T_ACT, 2, 2000000);
  emit(OOC_I_ALLOC, OOC_STREAM_COMPUTE, OOC_PH_NONE, 1, a);
  emit(OOC_I_ALLOC, OOC_STREAM_COMPUTE, OOC_PH_NONE, 2, b);
  host(a);
  host(b);
  prog.prologue_end = 4;
  emit(OOC_I_H2D, OOC_STREAM_H2D, OOC_PH_NONE, 1, a);
  emit(OOC_I_D2H, OOC_STREAM_D2H, OOC_PH_NONE, 2, b);
}

/* H2D a (1 MB) and D2H b (2 MB) start together on two engines.
 * Both end their latency at 1000 and share the link at 8 B/ns each:
 *   a: 1e6 / 8 = 125000 ns -> done at 126000.
 *   b: by then 1e6 moved; the other 1e6 alone at 10 B/ns = 100000 ns
 *      -> done at 226000.
 * iteration 226000; h2d busy 126000; d2h busy 226000. */
START_TEST(test_duplex)
{
  build_duplex();
  make_sim(1ull << 30);
  run_ok();
  ck_assert_int_eq(res.iteration_ns, 226000);
  ck_assert_int_eq(res.h2d_busy_ns, 126000);
  ck_assert_int_eq(res.d2h_busy_ns, 226000);
  ck_assert_uint_eq(res.h2d_bytes, 1000000);
  ck_assert_uint_eq(res.d2h_bytes, 2000000);
  ck_assert_int_eq(res.compute_busy_ns, 0);
}
END_TEST

/* A D2H running alone is joined mid-transfer by an H2D.
 *   prologue: ALLOC a (1 MB), ALLOC b (2 MB), their host buffers
 *   4 FWD layer 1 (writes nothing)  [0, 100000)
 *   5 H2D a, waits 4                latency [100000, 101000)
 *   6 D2H b                         latency [0, 1000), then alone at 10 B/ns
 * At 101000 b has moved 100000 ns x 10 B/ns = 1e6 B; from then both run at
 * 8 B/ns: a needs 1e6 / 8 = 125000 ns, so does the rest of b: both end at
 * 226000 = the iteration. */
START_TEST(test_duplex_join)
{
  int32_t a, b, f;

  a = ooc_program_tensor(&prog, OOC_T_ACT, 1, 1000000);
  b = ooc_program_tensor(&prog, OOC_T_ACT, 2, 2000000);
  emit(OOC_I_ALLOC, OOC_STREAM_COMPUTE, OOC_PH_NONE, 1, a);
  emit(OOC_I_ALLOC, OOC_STREAM_COMPUTE, OOC_PH_NONE, 2, b);
  host(a);
  host(b);
  prog.prologue_end = 4;
  f = compute(OOC_PH_FWD, 1);
  emit(OOC_I_H2D, OOC_STREAM_H2D, OOC_PH_NONE, 1, a);
  wait_on(f);
  emit(OOC_I_D2H, OOC_STREAM_D2H, OOC_PH_NONE, 2, b);
  make_sim(1ull << 30);
  run_ok();
  ck_assert_int_eq(res.iteration_ns, 226000);
  ck_assert_int_eq(res.h2d_busy_ns, 126000);
  ck_assert_int_eq(res.d2h_busy_ns, 226000);
}
END_TEST

/* The caching allocator's cost is stream time, and its cache carries over
 * between iterations: ALLOC a (30 MiB) costs malloc_ns = 7000 ns the first
 * time (a new segment), nothing once the block is cached.
 *   1 iteration:  7000 + FWD 100000 = 107000 ns, alloc_ns 7000
 *   2 iterations: the last one is 100000 ns, alloc_ns 0 */
START_TEST(test_alloc_cost)
{
  int32_t a;
  int it;

  hw.malloc_ns = 7000;
  a = ooc_program_tensor(&prog, OOC_T_ACT, 1, 30ull << 20);
  emit(OOC_I_ALLOC, OOC_STREAM_COMPUTE, OOC_PH_NONE, 1, a);
  compute(OOC_PH_FWD, 1);
  arg(a, 1);
  emit(OOC_I_FREE, OOC_STREAM_COMPUTE, OOC_PH_NONE, 1, a);
  for (it = 1; it <= 2; it++) {
    ooc_sim_config cfg = {
      .hw = &hw, .costs = &costs, .allocator = &ooc_alloc_caching,
      .budget = 1ull << 30, .iterations = it,
    };
    ooc_sim_free(sim);
    sim = NULL;
    ck_assert_int_eq(ooc_sim_alloc(&cfg, &sim, &err), OOC_OK);
    run_ok();
    ck_assert_int_eq(res.iterations, it);
    ck_assert_int_eq(res.iteration_ns, it == 1 ? 107000 : 100000);
    ck_assert_int_eq(res.alloc_ns, it == 1 ? 7000 : 0);
    ck_assert_uint_eq(res.peak_reserved, 30ull << 20);
    /* The first asked for a segment (a driver call): not steady; the
     * second asked for none. */
    ck_assert_int_eq(res.steady, it == 2);
  }
  /* Until steady (max_iterations 8): one iteration asked for, two run,
   * the second reported; asking for two, two run. */
  for (it = 1; it <= 2; it++) {
    ooc_sim_config cfg = {
      .hw = &hw, .costs = &costs, .allocator = &ooc_alloc_caching,
      .budget = 1ull << 30, .iterations = it, .max_iterations = 8,
    };
    ooc_sim_free(sim);
    sim = NULL;
    ck_assert_int_eq(ooc_sim_alloc(&cfg, &sim, &err), OOC_OK);
    run_ok();
    ck_assert_int_eq(res.iterations, 2);
    ck_assert_int_eq(res.steady, 1);
    ck_assert_int_eq(res.iteration_ns, 100000);
    ck_assert_int_eq(res.alloc_ns, 0);
  }
  {
    ooc_sim_config cfg = {
      .hw = &hw, .costs = &costs, .allocator = &ooc_alloc_caching,
      .budget = 1ull << 30, .iterations = 3, .max_iterations = 2,
    };
    ooc_sim_free(sim);
    sim = NULL;
    ck_assert_int_eq(ooc_sim_alloc(&cfg, &sim, &err), OOC_EINVAL);
    ck_assert_str_eq(err.msg, "simulator: max_iterations must be >= "
                     "iterations (0: the default)");
  }
}
END_TEST

/* The price of each driver action (ooc_cost_drv_ns) on a profile with
 * malloc 7000 ns + 1000 ns/GiB, free 300, map 10, create 20, unmap 5,
 * release 7:
 *   SEG_MALLOC 1.5 GiB: 7000 + 1500 = 8500
 *   SEG_MALLOC 1,610,613 B: 7000 + 1.50000025 -> 7002 (to the nearest)
 *   SEG_FREE 300; CHUNK_CREATE 20, MAP 10, UNMAP 5, RELEASE 7;
 *   VA_RESERVE, VA_FREE 0 */
START_TEST(test_drv_prices)
{
  ooc_drv_action a = { .bytes = 3ull << 29 };

  hw.malloc_ns = 7000;
  hw.malloc_ns_per_GiB = 1000;
  hw.free_ns = 300;
  hw.va_map_ns = 10;
  hw.va_create_ns = 20;
  hw.va_unmap_ns = 5;
  hw.va_release_ns = 7;
  a.kind = OOC_DRV_SEG_MALLOC;
  ck_assert_int_eq(ooc_cost_drv_ns(&hw, &a), 8500);
  a.bytes = 1610613;
  ck_assert_int_eq(ooc_cost_drv_ns(&hw, &a), 7002);
  a.kind = OOC_DRV_SEG_FREE;
  ck_assert_int_eq(ooc_cost_drv_ns(&hw, &a), 300);
  a.kind = OOC_DRV_CHUNK_CREATE;
  ck_assert_int_eq(ooc_cost_drv_ns(&hw, &a), 20);
  a.kind = OOC_DRV_CHUNK_MAP;
  ck_assert_int_eq(ooc_cost_drv_ns(&hw, &a), 10);
  hw.va_access_ns = 4;          /* cuMemSetAccess comes with each map */
  ck_assert_int_eq(ooc_cost_drv_ns(&hw, &a), 14);
  hw.va_access_ns = 0;
  a.kind = OOC_DRV_CHUNK_UNMAP;
  ck_assert_int_eq(ooc_cost_drv_ns(&hw, &a), 5);
  a.kind = OOC_DRV_CHUNK_RELEASE;
  ck_assert_int_eq(ooc_cost_drv_ns(&hw, &a), 7);
  a.kind = OOC_DRV_VA_RESERVE;
  ck_assert_int_eq(ooc_cost_drv_ns(&hw, &a), 0);
  a.kind = OOC_DRV_VA_FREE;
  ck_assert_int_eq(ooc_cost_drv_ns(&hw, &a), 0);
}
END_TEST

/* The engine charges what the policy's actions cost: under va with 2 MiB
 * chunks, ALLOC a (3 MiB) creates and maps 2 chunks the first time
 * (2 x 20 + 2 x 10 = 60 ns), maps the 2 cached ones after (20 ns); FREE
 * unmaps them (2 x 5 = 10 ns).
 *   1 iteration:  60 + FWD 100000 + 10 = 100070 ns, alloc_ns 70
 *   2 iterations: the last is 20 + 100000 + 10 = 100030, alloc_ns 30
 * The ideal policy is unpriced: the same program costs FWD alone. */
START_TEST(test_drv_cost)
{
  int32_t a;
  int it;

  hw.va_chunk_bytes = 2ull << 20;
  hw.va_map_ns = 10;
  hw.va_create_ns = 20;
  hw.va_unmap_ns = 5;
  hw.malloc_ns = 7000;
  a = ooc_program_tensor(&prog, OOC_T_ACT, 1, 3ull << 20);
  emit(OOC_I_ALLOC, OOC_STREAM_COMPUTE, OOC_PH_NONE, 1, a);
  compute(OOC_PH_FWD, 1);
  arg(a, 1);
  emit(OOC_I_FREE, OOC_STREAM_COMPUTE, OOC_PH_NONE, 1, a);
  for (it = 1; it <= 2; it++) {
    ooc_sim_config cfg = {
      .hw = &hw, .costs = &costs, .allocator = &ooc_alloc_va,
      .budget = 1ull << 30, .iterations = it,
    };
    ooc_sim_free(sim);
    sim = NULL;
    ck_assert_int_eq(ooc_sim_alloc(&cfg, &sim, &err), OOC_OK);
    run_ok();
    ck_assert_int_eq(res.iteration_ns, it == 1 ? 100070 : 100030);
    ck_assert_int_eq(res.alloc_ns, it == 1 ? 70 : 30);
  }
  ooc_sim_free(sim);
  sim = NULL;
  make_sim(1ull << 30);
  run_ok();
  ck_assert_int_eq(res.iteration_ns, 100000);
  ck_assert_int_eq(res.alloc_ns, 0);
}
END_TEST

static void build_memwait(uint64_t c_bytes, int wait);

/* The host clock (engine.c, "the host") on build_memwait(1.5 MB, wait)
 * with host.iteration_us 5, op_us 30, link.issue_us 2, event_sync_us 7:
 *   issue: ALLOC b 5000; FWD 1 35000; D2H b 37000; FREE b 37000;
 *   ALLOC c waits for FREE b (another stream): issued after it completes
 *   at 336000, + 7000 = 343000; FWD 2 373000; FREE c 373000.
 *   run: FWD 1 [35000, 135000); D2H b [135000, 336000); ALLOC c 343000;
 *   FWD 2 [373000, 573000); iteration 573000.
 * The compute stream waits for the swap-out 135000 .. 336000 (201000
 * swapout) and for the host 0 .. 35000, 336000 .. 373000 (72000 host,
 * nothing else).
 * Without host costs the same program takes 501000
 * (test_explicit_memory_wait). */
START_TEST(test_host_clock)
{
  build_memwait(1500000, 1);
  costs.host_iter_ns = 5000;
  costs.host_op_ns = 30000;
  hw.copy_issue_ns = 2000;
  hw.event_sync_ns = 7000;
  make_sim(3000000);
  run_ok();
  ck_assert(res.feasible);
  ck_assert_int_eq(res.iteration_ns, 573000);
  ck_assert_int_eq(res.compute_busy_ns, 300000);
  ck_assert_int_eq(res.stall_ns[OOC_STALL_SWAPOUT], 201000);
  ck_assert_int_eq(res.stall_ns[OOC_STALL_HOST], 72000);
  ck_assert_int_eq(res.stall_ns[OOC_STALL_OTHER], 0);
}
END_TEST

/* The host runs ahead of the GPU: with op_us 30 and kernels of 100 and
 * 200 us, only the first kernel waits for its issue. build_memwait(1 MB,
 * 0) fits in 4 MB without waiting: FWD 1 issued 30000, runs [30000,
 * 130000); FWD 2 issued 60000, starts when FWD 1 ends: [130000, 330000);
 * the swap-out of b [130000, 331000) ends the iteration.
 * The optimizer step's host time is costs.update_host_ns. */
START_TEST(test_host_runs_ahead)
{
  build_memwait(1000000, 0);
  costs.host_op_ns = 30000;
  make_sim(4000000);
  run_ok();
  ck_assert(res.feasible);
  ck_assert_int_eq(res.iteration_ns, 331000);
  ck_assert_int_eq(res.stall_ns[OOC_STALL_HOST], 30000);
  ck_assert_int_eq(res.stall_ns[OOC_STALL_OTHER], 0);
}
END_TEST

/* A synchronising driver call waits for the device to drain and holds
 * every other stream back (va, 2 MiB chunks, map 10, unmap 5 ns; the
 * second iteration, chunks cached):
 *   2 ALLOC a (3 MiB, 2 chunks) [0, 20); 3 FWD 1 [20, 100020);
 *   4 D2H a [100020, 100020 + 1000 + ceil(3145728 / 10) = 415593);
 *   5 ALLOC y (2 MiB) [100020, 100030); 6 FWD 2 [100030, 300030);
 *   7 FREE y unmaps: without a sync [300030, 300035), and FREE a on the
 *     D2H stream [415593, 415603): iteration 415603;
 *   with va_unmap_syncs it waits for the D2H: [415593, 415598), and FREE
 *     a (a sync too) runs after it: [415598, 415608): iteration 415608. */
START_TEST(test_sync_driver_call)
{
  int32_t x, a, y, f1;
  int sync;

  hw.va_chunk_bytes = 2ull << 20;
  hw.va_map_ns = 10;
  hw.va_create_ns = 20;
  hw.va_unmap_ns = 5;
  x = ooc_program_tensor(&prog, OOC_T_INPUT, 0, 1000);
  a = ooc_program_tensor(&prog, OOC_T_ACT, 1, 3ull << 20);
  y = ooc_program_tensor(&prog, OOC_T_ACT, 2, 2ull << 20);
  emit(OOC_I_ALLOC, OOC_STREAM_COMPUTE, OOC_PH_NONE, 0, x);
  host(a);
  prog.prologue_end = 2;
  emit(OOC_I_ALLOC, OOC_STREAM_COMPUTE, OOC_PH_NONE, 1, a);
  f1 = compute(OOC_PH_FWD, 1);
  arg(x, 0);
  arg(a, 1);
  emit(OOC_I_D2H, OOC_STREAM_D2H, OOC_PH_NONE, 1, a);
  wait_on(f1);
  emit(OOC_I_ALLOC, OOC_STREAM_COMPUTE, OOC_PH_NONE, 2, y);
  compute(OOC_PH_FWD, 2);
  arg(x, 0);
  arg(y, 1);
  emit(OOC_I_FREE, OOC_STREAM_COMPUTE, OOC_PH_NONE, 2, y);
  emit(OOC_I_FREE, OOC_STREAM_D2H, OOC_PH_NONE, 1, a);
  for (sync = 0; sync <= 1; sync++) {
    ooc_sim_config cfg = {
      .hw = &hw, .costs = &costs, .allocator = &ooc_alloc_va,
      .budget = 1ull << 30, .iterations = 2,
    };
    hw.va_unmap_syncs = sync;
    ooc_sim_free(sim);
    sim = NULL;
    ck_assert_int_eq(ooc_sim_alloc(&cfg, &sim, &err), OOC_OK);
    run_ok();
    ck_assert_int_eq(res.iteration_ns, sync ? 415608 : 415603);
    /* 20 + 10 + 5 + 10 ns of driver actions; the synchronising FREE y
     * also waits in the call for the D2H: 415593 - 300030 ns. */
    ck_assert_int_eq(res.alloc_ns, sync ? 45 + 115563 : 45);
  }
}
END_TEST

/* The same copies on one copy engine: the ready copy with the lower index
 * (H2D a, instruction 4) goes first: [0, 1000 + 1e6/10 = 101000); then
 * D2H b: [101000, 101000 + 1000 + 2e6/10 = 302000). No link sharing. */
START_TEST(test_one_engine)
{
  ooc_trace tr;
  int k;

  hw.copy_engines = 1;
  build_duplex();
  make_sim(1ull << 30);
  ooc_trace_init(&tr);
  ck_assert_int_eq(ooc_sim_run(sim, &prog, &res, &tr, &err), OOC_OK);
  ck_assert_int_eq(res.iteration_ns, 302000);
  ck_assert_int_eq(tr.n_spans, 2);
  for (k = 0; k < tr.n_spans; k++) {
    if (tr.spans[k].instr == 4) {
      ck_assert_int_eq(tr.spans[k].start_ns, 0);
      ck_assert_int_eq(tr.spans[k].end_ns, 101000);
    } else {
      ck_assert_int_eq(tr.spans[k].instr, 5);
      ck_assert_int_eq(tr.spans[k].start_ns, 101000);
      ck_assert_int_eq(tr.spans[k].end_ns, 302000);
    }
  }
  ooc_trace_fini(&tr);
}
END_TEST

/* A backward kernel needs a tensor whose swap-in is late.
 *   prologue: ALLOC x (1 MB), s's host buffer (its data)
 *   2 ALLOC s (3 MB) on the H2D stream    t = 0
 *   3 H2D s                               [0, 1000 + 3e6/10 = 301000)
 *   4 FWD layer 1 (reads x)               [0, 100000)
 *   5 BWD layer 1 (reads s), waits 3      [301000, 451000)
 *   6 FREE s                              451000
 * The compute stream idles 100000 .. 301000 waiting for the H2D:
 * stall_ns[SWAPIN] = 201000; iteration 451000. */
START_TEST(test_late_swapin)
{
  int32_t x, t, h;

  x = ooc_program_tensor(&prog, OOC_T_INPUT, 0, 1000000);
  t = ooc_program_tensor(&prog, OOC_T_ACT, 1, 3000000);
  emit(OOC_I_ALLOC, OOC_STREAM_COMPUTE, OOC_PH_NONE, 0, x);
  host(t);
  prog.prologue_end = 2;
  emit(OOC_I_ALLOC, OOC_STREAM_H2D, OOC_PH_NONE, 1, t);
  h = emit(OOC_I_H2D, OOC_STREAM_H2D, OOC_PH_NONE, 1, t);
  compute(OOC_PH_FWD, 1);
  arg(x, 0);
  compute(OOC_PH_BWD, 1);
  arg(t, 0);
  wait_on(h);
  emit(OOC_I_FREE, OOC_STREAM_COMPUTE, OOC_PH_NONE, 1, t);
  make_sim(1ull << 30);
  run_ok();
  ck_assert_int_eq(res.iteration_ns, 451000);
  ck_assert_int_eq(res.stall_ns[OOC_STALL_SWAPIN], 201000);
  ck_assert_int_eq(res.stall_ns[OOC_STALL_SWAPOUT], 0);
  ck_assert_int_eq(res.stall_ns[OOC_STALL_OTHER], 0);
  ck_assert_int_eq(res.compute_busy_ns, 250000);
  ck_assert_int_eq(res.h2d_busy_ns, 301000);
  {
    ooc_sim_detail d;
    ooc_sim_detail_init(&d);
    ck_assert_int_eq(ooc_sim_run_detail(sim, &prog, &res, NULL, &d, &err),
                     OOC_OK);
    ck_assert_int_eq(d.exposed_in_ns[t], 201000);
    ck_assert_int_eq(d.stall_ns[5], 201000);
    ck_assert_int_eq(d.stall_cause[5], OOC_STALL_SWAPIN);
    ck_assert_int_eq(d.start_ns[5], 301000);
    ooc_sim_detail_fini(&d);
  }
}
END_TEST

/* compute -> D2H -> H2D -> compute:
 *   prologue: ALLOC a, ALLOC b (1 MB each), their host buffers
 *   4 FWD layer 1 writes a       [0, 100000)
 *   5 D2H a, waits 4             [100000, 201000)
 *   6 H2D b, waits 5             [201000, 302000)
 *   7 FWD layer 2 reads b, waits 6  [302000, 502000)
 * iteration 502000; the compute stream waits 100000 .. 302000 on the H2D:
 * stall_ns[SWAPIN] = 202000. */
static void
build_chain(void)
{
  int32_t a, b, i2, i3, i4;

  a = ooc_program_tensor(&prog, OOC_T_ACT, 1, 1000000);
  b = ooc_program_tensor(&prog, OOC_T_ACT, 2, 1000000);
  emit(OOC_I_ALLOC, OOC_STREAM_COMPUTE, OOC_PH_NONE, 1, a);
  emit(OOC_I_ALLOC, OOC_STREAM_COMPUTE, OOC_PH_NONE, 2, b);
  host(a);
  host(b);
  prog.prologue_end = 4;
  i2 = compute(OOC_PH_FWD, 1);
  arg(a, 1);
  i3 = emit(OOC_I_D2H, OOC_STREAM_D2H, OOC_PH_NONE, 1, a);
  wait_on(i2);
  i4 = emit(OOC_I_H2D, OOC_STREAM_H2D, OOC_PH_NONE, 2, b);
  wait_on(i3);
  compute(OOC_PH_FWD, 2);
  arg(b, 0);
  wait_on(i4);
}

START_TEST(test_chain)
{
  build_chain();
  make_sim(1ull << 30);
  run_ok();
  ck_assert_int_eq(res.iteration_ns, 502000);
  ck_assert_int_eq(res.stall_ns[OOC_STALL_SWAPIN], 202000);
  ck_assert_int_eq(res.d2h_busy_ns, 101000);
  ck_assert_int_eq(res.h2d_busy_ns, 101000);
}
END_TEST

/* A search's question "faster than X?" (ooc_sim_run_cutoff) on the chain:
 * the last iteration's bound is the time so far plus the kernels not
 * started, back to back: 300000 at 0 (FWD 1 running to 100000, FWD 2's
 * 200000 to come), 401000 once the D2H ends at 201000 (the compute stream
 * idle), 502000 once FWD 2 starts at 302000. A cutoff at or above the
 * time is the whole run, figure for figure; below it, the run stops at
 * the first bound above it, with fewer events. */
START_TEST(test_cutoff)
{
  ooc_sim_result full, r2;

  build_chain();
  make_sim(1ull << 30);
  ck_assert_int_eq(ooc_sim_run(sim, &prog, &full, NULL, &err), OOC_OK);
  ck_assert_int_eq(full.iteration_ns, 502000);
  ck_assert_int_eq(full.cut, 0);
  ck_assert_int_eq(ooc_sim_run_cutoff(sim, &prog, 502000, &r2, &err), OOC_OK);
  ck_assert_int_eq(r2.cut, 0);
  ck_assert_mem_eq(&r2, &full, sizeof r2);
  ck_assert_int_eq(ooc_sim_run_cutoff(sim, &prog, 0, &r2, &err), OOC_OK);
  ck_assert_mem_eq(&r2, &full, sizeof r2);
  ck_assert_int_eq(ooc_sim_run_cutoff(sim, &prog, 501999, &r2, &err), OOC_OK);
  ck_assert_int_eq(r2.cut, 1);
  ck_assert_int_eq(r2.feasible, 1);
  ck_assert_int_eq(r2.iteration_ns, 502000);
  ck_assert_int_eq(ooc_sim_run_cutoff(sim, &prog, 350000, &r2, &err), OOC_OK);
  ck_assert_int_eq(r2.cut, 1);
  ck_assert_int_eq(r2.iteration_ns, 401000);
  ck_assert_uint_lt(r2.events, full.events);
  ck_assert_int_eq(ooc_sim_run_cutoff(sim, &prog, 299999, &r2, &err), OOC_OK);
  ck_assert_int_eq(r2.cut, 1);
  ck_assert_int_eq(r2.iteration_ns, 300000);
  /* The cutoff is for that run only. */
  ck_assert_int_eq(ooc_sim_run(sim, &prog, &r2, NULL, &err), OOC_OK);
  ck_assert_mem_eq(&r2, &full, sizeof r2);
}
END_TEST

/* A clone (a planner's helper thread's oracle) is configured as its
 * original: the same budget (1 MB too few here: out of memory, as the
 * original), the same times on the chain program with room; its runs are
 * its own until ooc_sim_add_runs hands them over. */
START_TEST(test_clone)
{
  ooc_sim *c = NULL;
  ooc_sim_result r2;

  build_chain();
  make_sim(1000000);
  ck_assert_int_eq(ooc_sim_clone(sim, &c, &err), OOC_OK);
  ck_assert_int_eq(ooc_sim_run(c, &prog, &r2, NULL, &err), OOC_OK);
  ck_assert_int_eq(r2.feasible, 0);
  ooc_sim_free(c);
  ooc_sim_free(sim);
  sim = NULL;
  make_sim(1ull << 30);
  ck_assert_int_eq(ooc_sim_clone(sim, &c, &err), OOC_OK);
  ck_assert_int_eq(ooc_sim_run(c, &prog, &r2, NULL, &err), OOC_OK);
  ck_assert_int_eq(r2.feasible, 1);
  ck_assert_int_eq(r2.iteration_ns, 502000);
  ck_assert_int_eq(r2.stall_ns[OOC_STALL_SWAPIN], 202000);
  run_ok();
  ck_assert_int_eq(res.iteration_ns, r2.iteration_ns);
  ck_assert_uint_eq(ooc_sim_runs(c), 1);
  ck_assert_uint_eq(ooc_sim_runs(sim), 1);
  ooc_sim_add_runs(sim, ooc_sim_runs(c));
  ck_assert_uint_eq(ooc_sim_runs(sim), 2);
  ooc_sim_free(c);
}
END_TEST

/* Build the memory-wait program; c_bytes is the size of the late ALLOC,
 * which waits for the FREE of b when `wait` is set.
 *   prologue: ALLOC x (1 MB), b's host buffer
 *   2 ALLOC b (2 MB)                   live 3 MB = the budget
 *   3 FWD layer 1 (x -> b)             [0, 100000)
 *   4 D2H b, waits 3                   [100000, 301000)
 *   5 FREE b on the D2H stream         301000
 *   6 ALLOC c (c_bytes)                at 100000, or after 5 with `wait`
 *   7 FWD layer 2 (x -> c)
 *   8 FREE c */
static void
build_memwait(uint64_t c_bytes, int wait)
{
  int32_t x, b, c, i3, i5;

  x = ooc_program_tensor(&prog, OOC_T_INPUT, 0, 1000000);
  b = ooc_program_tensor(&prog, OOC_T_ACT, 1, 2000000);
  c = ooc_program_tensor(&prog, OOC_T_ACT, 2, c_bytes);
  emit(OOC_I_ALLOC, OOC_STREAM_COMPUTE, OOC_PH_NONE, 0, x);
  host(b);
  prog.prologue_end = 2;
  emit(OOC_I_ALLOC, OOC_STREAM_COMPUTE, OOC_PH_NONE, 1, b);
  i3 = compute(OOC_PH_FWD, 1);
  arg(x, 0);
  arg(b, 1);
  emit(OOC_I_D2H, OOC_STREAM_D2H, OOC_PH_NONE, 1, b);
  wait_on(i3);
  i5 = emit(OOC_I_FREE, OOC_STREAM_D2H, OOC_PH_NONE, 1, b);
  emit(OOC_I_ALLOC, OOC_STREAM_COMPUTE, OOC_PH_NONE, 2, c);
  if (wait)
    wait_on(i5);
  compute(OOC_PH_FWD, 2);
  arg(x, 0);
  arg(c, 1);
  emit(OOC_I_FREE, OOC_STREAM_COMPUTE, OOC_PH_NONE, 2, c);
}

/* c = 1.5 MB with a 3 MB budget: the swap-out of b makes room only at
 * 301000. An ALLOC that finds no room is out of memory, it does not wait:
 * without the wait the run ends infeasible at ALLOC c (instruction 6,
 * tensor 2, layer 2) at t = 100000, live 3 MB, nothing free. */
START_TEST(test_alloc_without_room)
{
  build_memwait(1500000, 0);
  make_sim(3000000);
  run_ok();
  ck_assert(!res.feasible);
  ck_assert_int_eq(res.oom.instr, 6);
  ck_assert_int_eq(res.oom.tensor, 2);
  ck_assert_int_eq(res.oom.time_ns, 100000);
  ck_assert_uint_eq(res.oom.live_bytes, 3000000);
  ck_assert_uint_eq(res.oom.largest_free_bytes, 0);
  ck_assert_str_eq(res.oom.reason, "budget exhausted: 1.43 MiB requested, "
                   "0 B free of 2.86 MiB");
}
END_TEST

/* The same with ALLOC c waiting for the FREE of b: it runs at 301000, so
 * the compute stream waits 100000 .. 301000 on the D2H stream:
 * stall_ns[SWAPOUT] = 201000; FWD 2 runs [301000, 501000); iteration
 * 501000; peak allocated 3 MB. */
START_TEST(test_explicit_memory_wait)
{
  build_memwait(1500000, 1);
  make_sim(3000000);
  run_ok();
  ck_assert(res.feasible);
  ck_assert_int_eq(res.iteration_ns, 501000);
  ck_assert_int_eq(res.stall_ns[OOC_STALL_SWAPOUT], 201000);
  ck_assert_int_eq(res.stall_ns[OOC_STALL_SWAPIN], 0);
  ck_assert_uint_eq(res.peak_allocated, 3000000);
  ck_assert_uint_eq(res.peak_reserved, 3000000);
}
END_TEST

/* With c = 2.5 MB, even after b is freed only 2 MB of the 3 MB budget are
 * free: the run ends infeasible at ALLOC c (instruction 6, tensor 2,
 * layer 2) at t = 301000, live 1 MB, largest free 2 MB. */
START_TEST(test_oom)
{
  build_memwait(2500000, 1);
  make_sim(3000000);
  ck_assert_int_eq(ooc_sim_run(sim, &prog, &res, NULL, &err), OOC_OK);
  ck_assert(!res.feasible);
  ck_assert_int_eq(res.oom.instr, 6);
  ck_assert_int_eq(res.oom.tensor, 2);
  ck_assert_int_eq(res.oom.layer, 2);
  ck_assert_int_eq(res.oom.time_ns, 301000);
  ck_assert_uint_eq(res.oom.requested_bytes, 2500000);
  ck_assert_uint_eq(res.oom.live_bytes, 1000000);
  ck_assert_uint_eq(res.oom.reserved_bytes, 1000000);
  ck_assert_uint_eq(res.oom.largest_free_bytes, 2000000);
  ck_assert_str_eq(res.oom.reason, "budget exhausted: 2.38 MiB requested, "
                   "1.91 MiB free of 2.86 MiB");
  ck_assert_int_eq(res.iteration_ns, 0);
}
END_TEST

/* The detail recorder on the explicit memory wait: FWD 1 (instruction 3)
 * runs [0, 100000) with 3 MB - 3 MB = 0 B free and no stall before it;
 * FWD 2 (7) runs [301000, 501000) after 201000 ns of compute idle on the
 * FREE of b, a swap-out stall, which is b's exposed swap-out time; as it
 * starts 1 MB (x) + 1.5 MB (c) are live of the 3 MB budget. Then the late
 * swap-in program: the backward (5) waited 201000 ns for s's H2D. */
START_TEST(test_detail)
{
  ooc_sim_detail d;

  ooc_sim_detail_init(&d);
  build_memwait(1500000, 1);
  make_sim(3000000);
  ck_assert_int_eq(ooc_sim_run_detail(sim, &prog, &res, NULL, &d, &err),
                   OOC_OK);
  ck_assert(res.feasible);
  ck_assert_int_eq(d.start_ns[3], 0);
  ck_assert_int_eq(d.end_ns[3], 100000);
  ck_assert_int_eq(d.stall_ns[3], 0);
  ck_assert_uint_eq(d.free_bytes[3], 0);
  ck_assert_int_eq(d.start_ns[7], 301000);
  ck_assert_int_eq(d.end_ns[7], 501000);
  ck_assert_int_eq(d.stall_ns[7], 201000);
  ck_assert_int_eq(d.stall_cause[7], OOC_STALL_SWAPOUT);
  ck_assert_uint_eq(d.free_bytes[7], 500000);
  ck_assert_int_eq(d.exposed_out_ns[1], 201000);
  ck_assert_int_eq(d.exposed_in_ns[1], 0);
  /* The D2H of b (4) from FWD 1's end to the FREE the FWD 2 waited for;
   * an ALLOC (2) is neither a kernel nor a copy. */
  ck_assert_int_eq(d.start_ns[4], 100000);
  ck_assert_int_eq(d.end_ns[4], 301000);
  ck_assert_int_eq(d.start_ns[2], -1);
  /* The allocator saw, in each of the two iterations: ALLOC b (2), FREE b
   * (5, on the D2H stream after the copy), ALLOC c (6, which waited for
   * it), FREE c (8). */
  ck_assert_int_eq(d.n_iter, 2);
  ck_assert_int_eq(d.n_mem_order, 8);
  ck_assert_int_eq(d.iter_first[0], 0);
  ck_assert_int_eq(d.iter_first[1], 4);
  ck_assert_int_eq(d.iter_first[2], 8);
  for (int k = 0; k < 8; k++) {
    static const int32_t order[4] = { 2, 5, 6, 8 };
    ck_assert_int_eq(d.mem_order[k], order[k % 4]);
  }
  ooc_sim_detail_fini(&d);
}
END_TEST

/* The program of the host tests: 1 ALLOC host h (4 MB) on the D2H
 * stream, 2 FREE it. */
static void
host_buffer_program(void)
{
  int32_t h = ooc_program_tensor(&prog, OOC_T_ACT, 1, 4000000);

  ck_assert_int_ge(ooc_program_emit(&prog, OOC_I_ALLOC, OOC_STREAM_D2H,
                                    OOC_PH_NONE, 1, h, OOC_WHERE_HOST), 0);
  ck_assert_int_ge(ooc_program_emit(&prog, OOC_I_FREE, OOC_STREAM_D2H,
                                    OOC_PH_NONE, 1, h, OOC_WHERE_HOST), 0);
}

/* A pinned host buffer counts against host memory and costs
 * host_alloc_ns on its stream: 1 ALLOC host h (4 MB) on the D2H stream
 * takes 5000 ns. */
START_TEST(test_host_alloc)
{
  hw.host_alloc_ns = 5000;
  host_buffer_program();
  make_sim(1ull << 30);
  run_ok();
  ck_assert_int_eq(res.iteration_ns, 5000);
  ck_assert_uint_eq(res.peak_host_pinned, 4000000);
  ck_assert_uint_eq(res.peak_allocated, 0);
  ck_assert_int_eq(res.alloc_ns, 5000);
}
END_TEST

/* Host memory is a limit: with 3 MB of host, the 4 MB pinned buffer of
 * test_host_alloc is an OOM naming it; a profiling run
 * (ooc_sim_set_host_unlimited) runs it and says it needed 4 MB; the limit
 * is back after. */
START_TEST(test_host_limit)
{
  hw.host_mem = 3000000;
  host_buffer_program();
  make_sim(1ull << 30);
  run_ok();
  ck_assert_int_eq(res.feasible, 0);
  ck_assert_msg(strstr(res.oom.reason, "pinned host memory exhausted") !=
                NULL, "reason: %s", res.oom.reason);
  ooc_sim_set_host_unlimited(sim, 1);
  run_ok();
  ck_assert_int_eq(res.feasible, 1);
  ck_assert_uint_eq(res.peak_host_pinned, 4000000);
  ooc_sim_set_host_unlimited(sim, 0);
  run_ok();
  ck_assert_int_eq(res.feasible, 0);
}
END_TEST

/* A kernel reading a tensor that was never allocated. */
START_TEST(test_read_absent)
{
  int32_t a, b;

  a = ooc_program_tensor(&prog, OOC_T_ACT, 1, 1000);
  b = ooc_program_tensor(&prog, OOC_T_ACT, 2, 1000);
  emit(OOC_I_ALLOC, OOC_STREAM_COMPUTE, OOC_PH_NONE, 1, a);
  compute(OOC_PH_FWD, 2);
  arg(a, 1);
  arg(b, 0);
  emit(OOC_I_FREE, OOC_STREAM_COMPUTE, OOC_PH_NONE, 1, a);
  make_sim(1ull << 30);
  ck_assert_int_eq(ooc_sim_run(sim, &prog, &res, NULL, &err), OOC_EINVAL);
  ck_assert_str_eq(err.msg, "instruction 1 (COMPUTE fwd, layer 2): reads "
                   "tensor 1 (layer 2) which is not allocated on the device");
}
END_TEST

/* A kernel reading a tensor allocated in the iteration but never written. */
START_TEST(test_read_unwritten)
{
  int32_t a;

  a = ooc_program_tensor(&prog, OOC_T_ACT, 1, 1000);
  emit(OOC_I_ALLOC, OOC_STREAM_COMPUTE, OOC_PH_NONE, 1, a);
  compute(OOC_PH_BWD, 1);
  arg(a, 0);
  emit(OOC_I_FREE, OOC_STREAM_COMPUTE, OOC_PH_NONE, 1, a);
  make_sim(1ull << 30);
  ck_assert_int_eq(ooc_sim_run(sim, &prog, &res, NULL, &err), OOC_EINVAL);
  ck_assert_str_eq(err.msg, "instruction 1 (COMPUTE bwd, layer 1): reads "
                   "tensor 0 (layer 1) before any data was written to it");
}
END_TEST

/* A FREE on the compute stream while the D2H of the same tensor runs. */
START_TEST(test_free_in_flight)
{
  int32_t a, f;

  a = ooc_program_tensor(&prog, OOC_T_ACT, 1, 1000000);
  host(a);
  prog.prologue_end = 1;
  emit(OOC_I_ALLOC, OOC_STREAM_COMPUTE, OOC_PH_NONE, 1, a);
  f = compute(OOC_PH_FWD, 1);
  arg(a, 1);
  emit(OOC_I_D2H, OOC_STREAM_D2H, OOC_PH_NONE, 1, a);
  wait_on(f);
  emit(OOC_I_FREE, OOC_STREAM_COMPUTE, OOC_PH_NONE, 1, a);
  make_sim(1ull << 30);
  ck_assert_int_eq(ooc_sim_run(sim, &prog, &res, NULL, &err), OOC_EINVAL);
  ck_assert_str_eq(err.msg, "instruction 4 (FREE, layer 1, tensor 0): frees "
                   "tensor 0 (layer 1) while a copy of it is in flight");
  /* The validator finds it without running: nothing orders the FREE
   * after the copy. */
  ck_assert_int_eq(ooc_program_validate(&prog, &err), OOC_EINVAL);
  ck_assert_str_eq(err.msg, "program: instruction 4 (FREE, layer 1, tensor "
                   "0) frees tensor 0 (layer 1), which instruction 3 (D2H, "
                   "layer 1, tensor 0) reads on another stream, and no wait "
                   "orders the two");
}
END_TEST

/* A swap-out that does not wait for the kernel writing its tensor: both
 * start at t = 0 and the copy would read half-written data. */
START_TEST(test_copy_during_write)
{
  int32_t a;

  a = ooc_program_tensor(&prog, OOC_T_ACT, 1, 1000000);
  emit(OOC_I_ALLOC, OOC_STREAM_COMPUTE, OOC_PH_NONE, 1, a);
  host(a);
  prog.prologue_end = 2;
  compute(OOC_PH_FWD, 1);
  arg(a, 1);
  emit(OOC_I_D2H, OOC_STREAM_D2H, OOC_PH_NONE, 1, a);
  make_sim(1ull << 30);
  ck_assert_int_eq(ooc_sim_run(sim, &prog, &res, NULL, &err), OOC_EINVAL);
  ck_assert_str_eq(err.msg, "instruction 3 (D2H, layer 1, tensor 0): copies "
                   "out tensor 0 (layer 1) while the running kernel writes "
                   "it");
  ck_assert_int_eq(ooc_program_validate(&prog, &err), OOC_EINVAL);
  ck_assert_str_eq(err.msg, "program: instruction 3 (D2H, layer 1, tensor "
                   "0) copies out tensor 0 (layer 1), which instruction 2 "
                   "(COMPUTE fwd, layer 1) writes on another stream, and no "
                   "wait orders the two");
}
END_TEST

/* Two runs of the same program on the same simulator, and on a fresh one,
 * give identical results and traces. */
START_TEST(test_determinism)
{
  ooc_sim_result r2;
  ooc_trace t1, t2;
  ooc_sim *other = NULL;
  int k;
  ooc_sim_config cfg = {
    .hw = &hw, .costs = &costs, .allocator = &ooc_alloc_caching,
    .budget = 1ull << 30, .iterations = 3,
  };

  build_memwait(1500000, 1);
  make_sim(3000000);
  ooc_trace_init(&t1);
  ooc_trace_init(&t2);
  ck_assert_int_eq(ooc_sim_run(sim, &prog, &res, &t1, &err), OOC_OK);
  ck_assert_int_eq(ooc_sim_run(sim, &prog, &r2, &t2, &err), OOC_OK);
  ck_assert(memcmp(&res, &r2, sizeof res) == 0);
  ck_assert_int_eq(t1.n_spans, t2.n_spans);
  ck_assert_int_eq(t1.n_mem, t2.n_mem);
  for (k = 0; k < t1.n_spans; k++) {
    ck_assert_int_eq(t1.spans[k].instr, t2.spans[k].instr);
    ck_assert_int_eq(t1.spans[k].start_ns, t2.spans[k].start_ns);
    ck_assert_int_eq(t1.spans[k].end_ns, t2.spans[k].end_ns);
  }
  ck_assert(memcmp(t1.mem, t2.mem, t1.n_mem * sizeof *t1.mem) == 0);
  /* 7 timed instructions; samples: the start + 2 ALLOC + 2 FREE. */
  ck_assert_int_eq(t1.n_spans, 7);
  ck_assert_int_eq(t1.n_mem, 5);
  ck_assert_int_eq(ooc_sim_alloc(&cfg, &other, &err), OOC_OK);
  ck_assert_int_eq(ooc_sim_run(other, &prog, &res, NULL, &err), OOC_OK);
  ck_assert_int_eq(ooc_sim_run(other, &prog, &r2, NULL, &err), OOC_OK);
  ck_assert(memcmp(&res, &r2, sizeof res) == 0);
  ck_assert_int_eq(res.iterations, 3);
  ooc_sim_free(other);
  ooc_trace_fini(&t1);
  ooc_trace_fini(&t2);
}
END_TEST

/* Structural errors are caught before running. */
START_TEST(test_bad_program)
{
  emit(OOC_I_COMPUTE, OOC_STREAM_H2D, OOC_PH_FWD, 1, -1);
  make_sim(1ull << 30);
  ck_assert_int_eq(ooc_sim_run(sim, &prog, &res, NULL, &err), OOC_EINVAL);
  ck_assert_ptr_nonnull(strstr(err.msg, "kind not allowed on this stream"));
}
END_TEST

static Suite *
sim_suite(void)
{
  Suite *s = suite_create("sim");
  TCase *tc = tcase_create("timing");

  tcase_add_checked_fixture(tc, setup, teardown);
  tcase_add_test(tc, test_overlap);
  tcase_add_test(tc, test_interference);
  tcase_add_test(tc, test_recompute_cost);
  tcase_add_test(tc, test_duplex);
  tcase_add_test(tc, test_duplex_join);
  tcase_add_test(tc, test_one_engine);
  tcase_add_test(tc, test_host_clock);
  tcase_add_test(tc, test_host_runs_ahead);
  tcase_add_test(tc, test_sync_driver_call);
  tcase_add_test(tc, test_late_swapin);
  tcase_add_test(tc, test_chain);
  tcase_add_test(tc, test_cutoff);
  tcase_add_test(tc, test_clone);
  suite_add_tcase(s, tc);

  tc = tcase_create("memory");
  tcase_add_checked_fixture(tc, setup, teardown);
  tcase_add_test(tc, test_alloc_without_room);
  tcase_add_test(tc, test_explicit_memory_wait);
  tcase_add_test(tc, test_oom);
  tcase_add_test(tc, test_detail);
  tcase_add_test(tc, test_host_alloc);
  tcase_add_test(tc, test_host_limit);
  tcase_add_test(tc, test_alloc_cost);
  tcase_add_test(tc, test_drv_prices);
  tcase_add_test(tc, test_drv_cost);
  suite_add_tcase(s, tc);

  tc = tcase_create("semantics");
  tcase_add_checked_fixture(tc, setup, teardown);
  tcase_add_test(tc, test_read_absent);
  tcase_add_test(tc, test_read_unwritten);
  tcase_add_test(tc, test_free_in_flight);
  tcase_add_test(tc, test_copy_during_write);
  tcase_add_test(tc, test_bad_program);
  tcase_add_test(tc, test_determinism);
  suite_add_tcase(s, tc);
  return s;
}

int
main(void)
{
  SRunner *sr = srunner_create(sim_suite());
  int failed;

  srunner_run_all(sr, CK_NORMAL);
  failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
