/* tests/check_hw.c — hardware profiles (ir/hw_load.c) and the cost model
 * (sim/cost.c).
 *
 * Suite "hw": every zoo profile loads and its figures convert to SI units;
 * hand-checked figures (bandwidths in B/s, a 1 GiB copy to the ns);
 * --hw-set overrides and their error messages; every bad profile in
 * tests/data/hw/ fails with its exact message; the calibration table.
 * Suite "cost": roofline times of a compute-bound and a memory-bound layer
 * on a hand-built model and profile, backward with two kernels, rounding,
 * the optimizer step, and calibrated times replacing the roofline.
 *
 * Every expected figure below is computed by hand in the comment beside it.
 */
#include "config.h"

#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim/cost.h"
#include "ir/hw.h"
#include "base/util.h"

#define GIB 1073741824ULL

static const char *zoo[] = {
  "k40-pcie3", "p100-pcie3", "v100-pcie3", "v100-nvlink2",
  "a100-pcie4", "h100-pcie5", "h100-sxm5", "h200-pcie5", "gh200-c2c",
};
#define N_ZOO ((int)(sizeof zoo / sizeof zoo[0]))

/* --- profiles ---------------------------------------------------------- */

START_TEST(zoo_profile_loads)
{
  ooc_hw *hw = NULL;
  ooc_err err = { 0 };
  char want[64];
  int rc, c;

  rc = ooc_hw_load(zoo[_i], NULL, 0, &hw, &err);
  ck_assert_msg(rc == 0, "%s: %s", zoo[_i], err.msg);
  ck_assert_str_eq(hw->name, zoo[_i]);
  snprintf(want, sizeof want, "hwprofiles/%s.json", zoo[_i]);
  ck_assert_ptr_nonnull(strstr(hw->path, want));
  ck_assert_int_gt((int)strlen(hw->gpu), 0);
  /* Each profile cites its sources and marks its estimates. */
  ck_assert_ptr_nonnull(strstr(hw->source, "[S]"));
  ck_assert_ptr_nonnull(strstr(hw->source, "estimate"));
  ck_assert(hw->mem_usable > 0 && hw->mem_usable <= hw->mem_total);
  ck_assert(hw->host_mem > hw->mem_usable);
  for (c = 0; c < 3; c++)
    ck_assert(hw->peak_flops[c] > 0);
  for (c = 0; c < OOC_CLASS_COUNT; c++)
    ck_assert(hw->eff[c] > 0 && hw->eff[c] <= 1);
  ck_assert(hw->h2d_Bps > 1e9 && hw->d2h_Bps > 1e9);
  ck_assert(hw->duplex_h2d_Bps > 0 && hw->duplex_d2h_Bps > 0);
  ck_assert_int_ge(hw->copy_engines, 2);
  ck_assert_uint_eq(hw->va_granularity, 2u << 20);
  ck_assert_int_eq(hw->n_calib, 0);
  ooc_hw_free(hw);
}
END_TEST

START_TEST(v100_nvlink2_figures)
{
  ooc_hw *hw = NULL;
  ooc_err err = { 0 };

  ck_assert_int_eq(ooc_hw_load("v100-nvlink2", NULL, 0, &hw, &err), 0);
  /* 68 GB/s and 65 GB/s, GB = 1e9 B. */
  ck_assert(hw->h2d_Bps == 68e9);
  ck_assert(hw->d2h_Bps == 65e9);
  ck_assert(hw->duplex_h2d_Bps == 60e9);
  /* 16 GiB total, 15.5 GiB usable = 16642998272 B. */
  ck_assert_uint_eq(hw->mem_total, 17179869184ULL);
  ck_assert_uint_eq(hw->mem_usable, 16642998272ULL);
  ck_assert_uint_eq(hw->host_mem, 512 * GIB);
  /* 15.7 TFLOP/s FP32, 125 TFLOP/s FP16 tensor cores, no TF32. */
  ck_assert(hw->peak_flops[OOC_FP32] == 15.7e12);
  ck_assert(hw->tensor_flops[OOC_FP16] == 125e12);
  ck_assert(hw->tensor_flops[OOC_FP32] == 0);
  ck_assert_int_eq(hw->fp32_uses_tf32, 0);
  ck_assert(hw->hbm_Bps == 900e9);
  ck_assert_int_eq(hw->launch_ns, 4000);
  ck_assert_int_eq(hw->copy_latency_ns, 4000);
  ck_assert_int_eq(hw->copy_engines, 5);
  ck_assert_int_eq(hw->malloc_ns, 25000);
  ck_assert(hw->malloc_ns_per_GiB == 150000.0);
  ck_assert_int_eq(hw->free_ns, 14000);
  ck_assert_uint_eq(hw->va_chunk_bytes, 40u * 1048576u); /* seed §4: 40 MiB */
  /* 1 GiB H2D: 4 us + 2^30 / 68e9 s = 4000 + 15790320.94 -> 15794321 ns. */
  ck_assert_int_eq(ooc_cost_copy_ns(hw, 0, GIB), 15794321);
  ooc_hw_free(hw);
}
END_TEST

START_TEST(pcie3_copy_times)
{
  ooc_hw *hw = NULL;
  ooc_err err = { 0 };

  ck_assert_int_eq(ooc_hw_load("v100-pcie3", NULL, 0, &hw, &err), 0);
  ck_assert(hw->h2d_Bps == 12.2e9);
  /* H2D 1 GiB: 5 us + 2^30 / 12.2e9 s = 5000 + 88011624.918 ns
   * -> 88016625 ns (rounded up, as the engine charges it). */
  ck_assert_int_eq(ooc_cost_copy_ns(hw, 0, GIB), 88016625);
  /* D2H 1 GiB: 5000 + 2^30 / 12.9e9 s = 5000 + 83235800.310 -> 83240801. */
  ck_assert_int_eq(ooc_cost_copy_ns(hw, 1, GIB), 83240801);
  /* 0 bytes costs the latency alone; 61 bytes: 5000 + 5.0 ns. */
  ck_assert_int_eq(ooc_cost_copy_ns(hw, 0, 0), 5000);
  ck_assert_int_eq(ooc_cost_copy_ns(hw, 0, 61), 5005);
  ooc_hw_free(hw);
}
END_TEST

START_TEST(a100_tf32_and_h100_public_link)
{
  ooc_hw *hw = NULL;
  ooc_err err = { 0 };

  ck_assert_int_eq(ooc_hw_load("a100-pcie4", NULL, 0, &hw, &err), 0);
  ck_assert_int_eq(hw->fp32_uses_tf32, 1);
  ck_assert(hw->tensor_flops[OOC_FP32] == 156e12);
  ck_assert(hw->tensor_flops[OOC_BF16] == 312e12);
  /* Both directions at once: H2D falls to 12 GB/s, D2H holds 24.5. */
  ck_assert(hw->duplex_h2d_Bps == 12e9 && hw->duplex_d2h_Bps == 24.5e9);
  ooc_hw_free(hw);
  ck_assert_int_eq(ooc_hw_load("h100-pcie5", NULL, 0, &hw, &err), 0);
  /* Public figures, marked as not measured by oocsim calibrate. */
  ck_assert_ptr_nonnull(strstr(hw->source, "NOT measured"));
  ck_assert(hw->h2d_Bps == 55.9e9 && hw->d2h_Bps == 46.8e9);
  ooc_hw_free(hw);
}
END_TEST

START_TEST(unknown_profile_name)
{
  ooc_hw *hw = NULL;
  ooc_err err = { 0 };
  int rc = ooc_hw_load("v99-pcie9", NULL, 0, &hw, &err);

  ck_assert_int_eq(rc, OOC_ENOTFOUND);
  ck_assert_ptr_null(hw);
  ck_assert_ptr_nonnull(
      strstr(err.msg, "unknown hardware profile 'v99-pcie9'"));
  ck_assert_ptr_nonnull(strstr(err.msg, "v100-nvlink2"));
}
END_TEST

/* --- overrides --------------------------------------------------------- */

START_TEST(override_values)
{
  const ooc_hw_override ov[] = {
    { .key = "link.h2d_GBps", .value = "32" },
    { .key = "memory.usable_GiB", .value = "8" },
    { .key = "compute.efficiency.conv", .value = "0.5" },
    { .key = "compute.fp32_uses_tf32", .value = "false" },
    { .key = "gpu", .value = "test GPU" },
  };
  ooc_hw *hw = NULL;
  ooc_err err = { 0 };

  ck_assert_int_eq(ooc_hw_load("a100-pcie4", ov, 5, &hw, &err), 0);
  ck_assert(hw->h2d_Bps == 32e9);
  ck_assert_uint_eq(hw->mem_usable, 8 * GIB);
  ck_assert(hw->eff[OOC_CLASS_CONV] == 0.5);
  ck_assert_int_eq(hw->fp32_uses_tf32, 0);
  ck_assert_str_eq(hw->gpu, "test GPU");
  /* Untouched fields keep the file's values. */
  ck_assert(hw->d2h_Bps == 25.5e9);
  ck_assert(hw->eff[OOC_CLASS_GEMM] == 0.75);
  ck_assert(hw->tensor_eff[OOC_CLASS_GEMM] == 0.6);
  ck_assert(hw->tensor_eff[OOC_CLASS_CONV] == 0.28);
  /* fp16 on tensor cores: its own conv share, gemm as tensor_efficiency */
  ck_assert(hw->tensor_eff16[OOC_CLASS_CONV] == 0.43);
  ck_assert(hw->tensor_eff16[OOC_CLASS_GEMM] == 0.6);
  ooc_hw_free(hw);
}
END_TEST

/* Setting a link rate alone scales its duplex rate by the same ratio
 * (a100-pcie4: 25.5 GB/s alone, 12 / 24.5 GB/s both at once); a duplex
 * rate set too is kept; ooc_hw_derive writes the same scaled figure. */
START_TEST(override_scales_duplex)
{
  const ooc_hw_override half[] = { { .key = "link.h2d_GBps",
                                     .value = "12.75" } };
  const ooc_hw_override both[] = {
    { .key = "link.d2h_GBps", .value = "51" },
    { .key = "link.duplex_d2h_GBps", .value = "30" },
  };
  ooc_hw *hw = NULL;
  ooc_err err = { 0 };
  char *json = NULL;

  ck_assert_int_eq(ooc_hw_load("a100-pcie4", half, 1, &hw, &err), 0);
  ck_assert(hw->h2d_Bps == 12.75e9);
  ck_assert(fabs(hw->duplex_h2d_Bps - 6e9) < 1);
  ck_assert(hw->d2h_Bps == 25.5e9);
  ck_assert(hw->duplex_d2h_Bps == 24.5e9);
  ooc_hw_free(hw);
  hw = NULL;
  ck_assert_int_eq(ooc_hw_load("a100-pcie4", both, 2, &hw, &err), 0);
  ck_assert(hw->d2h_Bps == 51e9);
  ck_assert(hw->duplex_d2h_Bps == 30e9);
  ck_assert(hw->duplex_h2d_Bps == 12e9);
  ooc_hw_free(hw);
  hw = NULL;
  ck_assert_int_eq(ooc_hw_derive("a100-pcie4", half, 1, NULL, NULL, -1, NULL,
                                 &json, &err), 0);
  ck_assert_ptr_nonnull(strstr(json, "\"duplex_h2d_GBps\": 6,"));
  ck_assert_int_eq(ooc_hw_load_string(json, "derived", NULL, 0, &hw, &err),
                   0);
  ck_assert(fabs(hw->duplex_h2d_Bps - 6e9) < 1);
  ooc_hw_free(hw);
  free(json);
}
END_TEST

/* The optional chunk costs of the allocator section: 0 when a profile
 * leaves them out (every zoo profile), microseconds to ns when given,
 * checked like the other allocator costs. */
START_TEST(override_va_costs)
{
  const ooc_hw_override ov[] = {
    { .key = "allocator.va_create_us", .value = "5" },
    { .key = "allocator.va_unmap_us", .value = "2" },
    { .key = "allocator.va_release_us", .value = "1.5" },
  };
  ooc_hw *hw = NULL;
  ooc_err err = { 0 };

  ck_assert_int_eq(ooc_hw_load("v100-nvlink2", NULL, 0, &hw, &err), 0);
  ck_assert_int_eq(hw->va_create_ns, 0);
  ck_assert_int_eq(hw->va_unmap_ns, 0);
  ck_assert_int_eq(hw->va_release_ns, 0);
  ooc_hw_free(hw);
  hw = NULL;
  ck_assert_int_eq(ooc_hw_load("v100-nvlink2", ov, 3, &hw, &err), 0);
  ck_assert_int_eq(hw->va_create_ns, 5000);
  ck_assert_int_eq(hw->va_unmap_ns, 2000);
  ck_assert_int_eq(hw->va_release_ns, 1500);
  ooc_hw_free(hw);
}
END_TEST

static void
expect_override_error(const char *key, const char *value, int code,
                      const char *msg)
{
  const ooc_hw_override ov = { .key = key, .value = value };
  ooc_hw *hw = NULL;
  ooc_err err = { 0 };
  int rc = ooc_hw_load("v100-pcie3", &ov, 1, &hw, &err);

  ck_assert_int_eq(rc, code);
  ck_assert_ptr_null(hw);
  ck_assert_str_eq(err.msg, msg);
}

START_TEST(override_errors)
{
  expect_override_error("link.h2d_GBs", "32", OOC_ENOTFOUND,
      "hwprofiles/v100-pcie3.json: --hw-set link.h2d_GBs: unknown key "
      "'h2d_GBs' (valid keys of link: h2d_GBps, d2h_GBps, "
      "h2d_pageable_GBps, d2h_pageable_GBps, duplex_h2d_GBps, "
      "duplex_d2h_GBps, latency_us, copy_engines, issue_us)");
  expect_override_error("lnk.h2d_GBps", "32", OOC_ENOTFOUND,
      "hwprofiles/v100-pcie3.json: --hw-set lnk.h2d_GBps: unknown key "
      "'lnk' (valid keys at top level: name, gpu, memory, host, compute, "
      "link, allocator, calibration)");
  expect_override_error("compute.efficiency.matmul", "0.5", OOC_ENOTFOUND,
      "hwprofiles/v100-pcie3.json: --hw-set compute.efficiency.matmul: "
      "unknown key 'matmul' (valid keys of compute.efficiency: conv, gemm, "
      "norm, eltwise, pool, other)");
  expect_override_error("calibration.layers", "1", OOC_EINVAL,
      "hwprofiles/v100-pcie3.json: --hw-set calibration.layers: the "
      "calibration table cannot be overridden");
  expect_override_error("link", "5", OOC_EINVAL,
      "hwprofiles/v100-pcie3.json: --hw-set link: is an object, set one of "
      "its keys");
  expect_override_error("link.h2d_GBps", "fast", OOC_EINVAL,
      "hwprofiles/v100-pcie3.json: --hw-set link.h2d_GBps: 'fast' is not a "
      "number");
  expect_override_error("allocator.va_unmap_us", "-1", OOC_ERANGE,
      "hwprofiles/v100-pcie3.json: allocator.va_unmap_us: must be >= 0 "
      "(got -1, set by --hw-set)");
  expect_override_error("link.h2d_GBps", "0", OOC_ERANGE,
      "hwprofiles/v100-pcie3.json: link.h2d_GBps: must be > 0 (got 0, set "
      "by --hw-set)");
  expect_override_error("link.h2d_GBps", "nan", OOC_ERANGE,
      "hwprofiles/v100-pcie3.json: --hw-set link.h2d_GBps: 'nan' is out of "
      "range");
  expect_override_error("memory.usable_GiB", "20", OOC_ERANGE,
      "hwprofiles/v100-pcie3.json: memory.usable_GiB: must be <= "
      "memory.total_GiB (got 20 > 16)");
  expect_override_error("compute.fp32_uses_tf32", "yes", OOC_EINVAL,
      "hwprofiles/v100-pcie3.json: --hw-set compute.fp32_uses_tf32: 'yes' "
      "is not true or false");
  expect_override_error("link.copy_engines", "1.5", OOC_ERANGE,
      "hwprofiles/v100-pcie3.json: link.copy_engines: must be an integer "
      ">= 1 (got 1.5, set by --hw-set)");
}
END_TEST

/* --- bad profiles -------------------------------------------------------- */

static const struct {
  const char *file;
  int code;
  const char *msg;        /* after "<path>: " */
} bad[] = {
  { "malformed", OOC_EPARSE, "malformed JSON near line 42, column 24" },
  { "truncated", OOC_EPARSE,
    "malformed JSON: unexpected end of file at line 25, column 17" },
  { "not_object", OOC_EINVAL, "top level must be a JSON object" },
  { "missing_h2d", OOC_EINVAL, "link.h2d_GBps: missing (required)" },
  { "zero_h2d", OOC_ERANGE, "link.h2d_GBps: must be > 0 (got 0)" },
  { "negative_hbm", OOC_ERANGE, "compute.hbm_GBps: must be > 0 (got -900)" },
  { "string_d2h", OOC_EINVAL,
    "link.d2h_GBps: must be a number (got \"fast\")" },
  { "usable_gt_total", OOC_ERANGE,
    "memory.usable_GiB: must be <= memory.total_GiB (got 20 > 16)" },
  { "eff_zero", OOC_ERANGE,
    "compute.efficiency.conv: must be in (0, 1] (got 0)" },
  { "eff_above_one", OOC_ERANGE,
    "compute.efficiency.gemm: must be in (0, 1] (got 1.5)" },
  { "copy_engines_zero", OOC_ERANGE,
    "link.copy_engines: must be an integer >= 1 (got 0)" },
  { "copy_engines_frac", OOC_ERANGE,
    "link.copy_engines: must be an integer >= 1 (got 2.5)" },
  { "unknown_key", OOC_ENOTFOUND,
    "link.h2d_GBs: unknown key (valid keys of link: h2d_GBps, d2h_GBps, "
    "h2d_pageable_GBps, d2h_pageable_GBps, duplex_h2d_GBps, "
    "duplex_d2h_GBps, latency_us, copy_engines, issue_us)" },
  { "tf32_without_tensor", OOC_EINVAL,
    "compute.fp32_uses_tf32: true needs compute.tensor_tf32_TFLOPS > 0" },
  { "va_chunk_not_multiple", OOC_EINVAL,
    "allocator.va_chunk_MiB: must be a multiple of "
    "allocator.va_granularity_MiB (got 3 and 2)" },
  { "infinite_hbm", OOC_ERANGE,
    "compute.hbm_GBps: must be a finite number (got inf)" },
  { "calib_duplicate", OOC_EINVAL,
    "calibration.layers[2].sig: duplicate signature "
    "'relu b=1 in=8 out=8 fp32' (first at [0])" },
  { "duplicate_key", OOC_EINVAL, "link.h2d_GBps: duplicate key" },
  { "calib_no_times", OOC_EINVAL,
    "calibration.layers[0]: needs fwd_us, bwd_us or recomp_us" },
  { "calib_bad_algo", OOC_EINVAL,
    "calibration.layers[0].algo: unknown kernel algorithm \"direct\" "
    "(valid: default, implicit_gemm, precomp_gemm, fft, fft_tiling, "
    "winograd, winograd_nonfused)" },
  { "calib_offered_times", OOC_EINVAL,
    "calibration.layers[0]: an entry with offered false has no times" },
  { "calib_offered_default", OOC_EINVAL,
    "calibration.layers[0].offered: false needs an algo other than "
    "default (every layer has its default kernel)" },
  { "calib_unknown_key", OOC_EINVAL,
    "calibration.layers[0].fwd_ms: unknown key (valid keys: sig, algo, "
    "offered, fwd_us, bwd_us, recomp_us)" },
  { "name_control", OOC_EINVAL,
    "name: holds control character 0x1b (it is printed as it is)" },
  { "calib_duplicate_key", OOC_EINVAL,
    "calibration.layers[0].fwd_us: duplicate key" },
  { "calib_duplicate_algo", OOC_EINVAL,
    "calibration.layers[2].sig: duplicate signature "
    "'conv2d b=1 in=3x8x8 out=4x8x8 fp32' with algo 'winograd' (first at "
    "[1])" },
};
#define N_BAD ((int)(sizeof bad / sizeof bad[0]))

START_TEST(bad_profile)
{
  char path[1024], want[1536];
  const char *top = getenv("top_srcdir");
  ooc_hw *hw = NULL;
  ooc_err err = { 0 };
  int rc;

  /* make check sets top_srcdir; a direct run uses the configured tree. */
  snprintf(path, sizeof path, "%s/tests/data/hw/%s.json",
           top ? top : OOC_SRCDIR, bad[_i].file);
  rc = ooc_hw_load(path, NULL, 0, &hw, &err);
  ck_assert_ptr_null(hw);
  snprintf(want, sizeof want, "%s: %s", path, bad[_i].msg);
  ck_assert_str_eq(err.msg, want);
  ck_assert_int_eq(rc, bad[_i].code);
}
END_TEST

START_TEST(bad_strings)
{
  ooc_hw *hw = NULL;
  ooc_err err = { 0 };

  ck_assert_int_eq(ooc_hw_load_string("", "empty.json", NULL, 0, &hw, &err),
                   OOC_EPARSE);
  ck_assert_str_eq(err.msg, "empty.json: malformed JSON: unexpected end of "
                   "file at line 1, column 1");
  ck_assert_int_eq(ooc_hw_load_string("{}", "e.json", NULL, 0, &hw, &err),
                   OOC_EINVAL);
  ck_assert_str_eq(err.msg, "e.json: name: missing (required)");
  ck_assert_int_eq(ooc_hw_load_string("{\"name\": \"x\", \"gpu\": \"y\", "
                                      "\"memory\": 3}", "m.json", NULL, 0,
                                      &hw, &err), OOC_EINVAL);
  ck_assert_str_eq(err.msg, "m.json: memory: must be an object (got 3)");
  ck_assert_ptr_null(hw);
}
END_TEST

/* --- hashing and the calibration table ------------------------------------ */

START_TEST(fnv1a)
{
  /* FNV-1a 64 reference values: "" is the offset basis; "a" is
   * (0xcbf29ce484222325 ^ 0x61) * 0x100000001b3 = 0xaf63dc4c8601ec8c. */
  ck_assert_uint_eq(ooc_hash64("", 0, OOC_HASH_SEED), 0xcbf29ce484222325ULL);
  ck_assert_uint_eq(ooc_hash64("a", 1, OOC_HASH_SEED), 0xaf63dc4c8601ec8cULL);
  ck_assert_uint_eq(ooc_hash64("foobar", 6, OOC_HASH_SEED),
                    0x85944171f73967e8ULL);
}
END_TEST

/* A small profile with round numbers for hand computation
 * (tests/data/hw/round.json, shared with check_planners). The tests that
 * need a calibration table append one before the closing brace. */
#define ROUND_PROFILE OOC_SRCDIR "/tests/data/hw/round.json"

static ooc_hw *
round_profile(const char *calib_json, const ooc_hw_override *ov, int n_ov)
{
  char *text = NULL, *buf;
  size_t len = 0, n;
  ooc_hw *hw = NULL;
  ooc_err err = { 0 };
  int rc;

  rc = ooc_read_file(ROUND_PROFILE, &text, &len, &err);
  ck_assert_msg(rc == 0, "%s", err.msg);
  n = len + (calib_json ? strlen(calib_json) : 0) + 32;
  buf = malloc(n);
  ck_assert_ptr_nonnull(buf);
  if (calib_json) {
    char *close = strrchr(text, '}');
    ck_assert_ptr_nonnull(close);
    snprintf(buf, n, "%.*s, \"calibration\": %s }", (int)(close - text),
             text, calib_json);
  } else {
    snprintf(buf, n, "%s", text);
  }
  rc = ooc_hw_load_string(buf, "round.json", ov, n_ov, &hw, &err);
  ck_assert_msg(rc == 0, "%s", err.msg);
  free(buf);
  free(text);
  return hw;
}

START_TEST(calib_lookup)
{
  ooc_hw *hw = round_profile(
      "{ \"_source\": \"made up for the test\", \"layers\": ["
      " { \"sig\": \"relu b=1 in=8 out=8 fp32\", \"fwd_us\": 3 },"
      " { \"sig\": \"add b=1 in=8,8 out=8 fp32\", \"fwd_us\": 1.5,"
      "   \"bwd_us\": 0.25 },"
      " { \"sig\": \"conv2d b=2 in=3x8x8 out=4x8x8 fp32\", \"bwd_us\": 7 },"
      " { \"sig\": \"conv2d b=2 in=3x8x8 out=4x8x8 fp32\","
      "   \"algo\": \"winograd\", \"fwd_us\": 2.001, \"recomp_us\": 2.5 },"
      " { \"sig\": \"conv2d b=2 in=3x8x8 out=4x8x8 fp32\","
      "   \"algo\": \"fft\", \"offered\": false } ] }",
      NULL, 0);
  const ooc_calib_entry *e;
  int i;

  ck_assert_int_eq(hw->n_calib, 5);
  for (i = 1; i < hw->n_calib; i++)
    ck_assert(hw->calib[i - 1].hash <= hw->calib[i].hash);
  e = ooc_hw_calib_find(hw, "add b=1 in=8,8 out=8 fp32");
  ck_assert_ptr_nonnull(e);
  ck_assert_int_eq(e->fwd_ns, 1500);
  ck_assert_int_eq(e->bwd_ns, 250);
  e = ooc_hw_calib_find(hw, "conv2d b=2 in=3x8x8 out=4x8x8 fp32");
  ck_assert_ptr_nonnull(e);
  ck_assert_int_eq(e->fwd_ns, -1);
  ck_assert_int_eq(e->bwd_ns, 7000);
  ck_assert_int_eq(e->recomp_ns, -1);   /* absent: as the forward */
  ck_assert_int_eq(e->algo, OOC_ALGO_DEFAULT);
  ck_assert_int_eq(e->offered, 1);
  /* One signature, three kernel algorithms: each its own entry. */
  e = ooc_hw_calib_find_algo(hw, "conv2d b=2 in=3x8x8 out=4x8x8 fp32",
                             OOC_ALGO_WINOGRAD);
  ck_assert_ptr_nonnull(e);
  ck_assert_int_eq(e->fwd_ns, 2001);
  ck_assert_int_eq(e->bwd_ns, -1);
  ck_assert_int_eq(e->recomp_ns, 2500);
  e = ooc_hw_calib_find_algo(hw, "conv2d b=2 in=3x8x8 out=4x8x8 fp32",
                             OOC_ALGO_FFT);
  ck_assert_ptr_nonnull(e);
  ck_assert_int_eq(e->offered, 0);
  ck_assert_ptr_null(ooc_hw_calib_find_algo(
      hw, "conv2d b=2 in=3x8x8 out=4x8x8 fp32", OOC_ALGO_IMPLICIT_GEMM));
  ck_assert_ptr_nonnull(ooc_hw_calib_find(hw, "relu b=1 in=8 out=8 fp32"));
  ck_assert_ptr_null(ooc_hw_calib_find(hw, "relu b=2 in=8 out=8 fp32"));
  ooc_hw_free(hw);
}
END_TEST

/* A derived profile (ooc_hw_derive, what `oocsim calibrate` writes):
 * round.json with measured fields set, an optional object removed, a new
 * _source and a calibration table. It loads, carries every value exactly
 * (times to the nanosecond through their microsecond form), and the same
 * inputs give the same bytes. */
START_TEST(derive_round_trip)
{
  const ooc_hw_override set[] = {
    { .key = "name", .value = "measured" },
    { .key = "link.h2d_GBps", .value = "12.5" },
    { .key = "link.latency_us", .value = "7.125" },
    { .key = "compute.copy_interference.conv", .value = "0.25" },
    { .key = "compute.conv_algorithms", .value = NULL },
    { .key = "allocator.va_unmap_us", .value = "3.5" },
  };
  const ooc_calib_entry ent[] = {
    { .sig = "relu b=1 in=8 out=8 fp32", .algo = OOC_ALGO_DEFAULT,
      .offered = 1, .fwd_ns = 1234567, .bwd_ns = 3, .recomp_ns = -1 },
    { .sig = "conv2d b=2 in=3x8x8 out=4x8x8 fp32",
      .algo = OOC_ALGO_WINOGRAD, .offered = 0, .fwd_ns = -1, .bwd_ns = -1,
      .recomp_ns = -1 },
    { .sig = "conv2d b=2 in=3x8x8 out=4x8x8 fp32",
      .algo = OOC_ALGO_DEFAULT, .offered = 1, .fwd_ns = 999,
      .bwd_ns = 2001, .recomp_ns = 1001 },
  };
  char *a = NULL, *b = NULL;
  ooc_hw *hw = NULL;
  const ooc_calib_entry *e;
  ooc_err err = { 0 };

  ck_assert_msg(ooc_hw_derive(ROUND_PROFILE, set, 6,
                              "{ \"measured\": \"by the test\" }", ent, 3,
                              "three kernels", &a, &err) == OOC_OK,
                "%s", err.msg);
  ck_assert_int_eq(ooc_hw_derive(ROUND_PROFILE, set, 6,
                                 "{ \"measured\": \"by the test\" }", ent, 3,
                                 "three kernels", &b, &err), OOC_OK);
  ck_assert_str_eq(a, b);
  ck_assert_ptr_null(strchr(a, '\t'));
  ck_assert_ptr_nonnull(strstr(a, "\n  \"name\": \"measured\",\n"));
  ck_assert_msg(ooc_hw_load_string(a, "derived.json", NULL, 0, &hw, &err) ==
                OOC_OK, "%s", err.msg);
  ck_assert_str_eq(hw->name, "measured");
  ck_assert_str_eq(hw->source, "measured: by the test");
  ck_assert(hw->h2d_Bps == 12.5e9);
  ck_assert(hw->d2h_Bps == 10e9);          /* kept from round.json */
  ck_assert_int_eq(hw->copy_latency_ns, 7125);
  ck_assert(hw->interference[OOC_CLASS_CONV] == 0.25);
  ck_assert(hw->algo_factor[OOC_ALGO_WINOGRAD] == 0);  /* removed */
  ck_assert_int_eq(hw->va_unmap_ns, 3500);
  ck_assert_int_eq(hw->n_calib, 3);
  e = ooc_hw_calib_find(hw, "relu b=1 in=8 out=8 fp32");
  ck_assert_ptr_nonnull(e);
  ck_assert_int_eq(e->fwd_ns, 1234567);
  ck_assert_int_eq(e->bwd_ns, 3);
  ck_assert_int_eq(e->recomp_ns, -1);
  e = ooc_hw_calib_find(hw, "conv2d b=2 in=3x8x8 out=4x8x8 fp32");
  ck_assert_ptr_nonnull(e);
  ck_assert_int_eq(e->recomp_ns, 1001);
  e = ooc_hw_calib_find_algo(hw, "conv2d b=2 in=3x8x8 out=4x8x8 fp32",
                             OOC_ALGO_WINOGRAD);
  ck_assert_ptr_nonnull(e);
  ck_assert_int_eq(e->offered, 0);
  ooc_hw_free(hw);
  free(a);
  free(b);
}
END_TEST

/* What cannot be derived says so, naming the base and the key. */
START_TEST(derive_errors)
{
  const ooc_hw_override req[] = { { .key = "link.h2d_GBps", .value = NULL } };
  const ooc_hw_override zero[] = { { .key = "link.h2d_GBps", .value = "0" } };
  char *out = NULL;
  ooc_err err = { 0 };

  ck_assert_int_eq(ooc_hw_derive(ROUND_PROFILE, req, 1, NULL, NULL, 0, NULL,
                                 &out, &err), OOC_EINVAL);
  ck_assert_str_eq(err.msg, ROUND_PROFILE ": link.h2d_GBps: a required key "
                   "cannot be removed");
  ck_assert_int_eq(ooc_hw_derive(ROUND_PROFILE, zero, 1, NULL, NULL, 0,
                                 NULL, &out, &err), OOC_ERANGE);
  ck_assert_str_eq(err.msg, "profile derived from " ROUND_PROFILE ": "
                   "link.h2d_GBps: must be > 0 (got 0)");
  ck_assert_ptr_null(out);
}
END_TEST

/* --- costs on a hand-built model ------------------------------------------ */

/* input [3,8,8] -> conv (compute-bound) -> relu (memory-bound) -> flatten
 * -> tiny eltwise layers for rounding. Built directly as structs. */
typedef struct hand_model {
  ooc_model m;
  ooc_layer l[6];
  int inputs[5];
} hand_model;

static void
hand_build(hand_model *h, ooc_dtype dt)
{
  static const char *names[] = { "input", "conv", "relu", "flat", "t1", "t2" };
  int i;

  memset(h, 0, sizeof *h);
  h->m.name = (char *)"hand";
  h->m.dtype = dt;
  h->m.optimizer = OOC_OPT_SGD_MOMENTUM;
  h->m.batch = 2;
  h->m.fw_host_op_us = h->m.fw_host_iteration_us =
      h->m.fw_host_optimizer_param_us = -1;   /* no framework block */
  h->m.n_layers = 6;
  h->m.layers = h->l;
  h->m.inputs = h->inputs;
  for (i = 0; i < 6; i++) {
    h->l[i].name = names[i];
    h->l[i].alias_of = -1;
    h->l[i].out.ndim = 3;
    h->l[i].out.d[0] = i == 0 ? 3 : 4;
    h->l[i].out.d[1] = h->l[i].out.d[2] = 8;
    if (i > 0) {
      h->l[i].n_in = 1;
      h->l[i].in_first = i - 1;
      h->inputs[i - 1] = i - 1;
    }
  }
  h->l[0].op = OOC_OPK_INPUT;
  h->l[0].cls = OOC_CLASS_OTHER;
  h->l[0].fwd_bytes_rw = 1e9;        /* must be ignored: the input is free */
  h->l[1].op = OOC_OPK_CONV2D;
  h->l[1].cls = OOC_CLASS_CONV;
  h->l[1].a.kernel[0] = h->l[1].a.kernel[1] = 3;
  h->l[1].a.stride[0] = h->l[1].a.stride[1] = 1;
  h->l[1].a.pad[0] = h->l[1].a.pad[1] = 1;
  h->l[1].a.dilation[0] = h->l[1].a.dilation[1] = 1;
  h->l[1].a.groups = 1;
  h->l[1].a.out = 4;
  h->l[1].params = 1000000;
  h->l[1].fwd_flops = 1e12;
  h->l[1].bwd_data_flops = 1e12;
  h->l[1].bwd_weight_flops = 1e12;
  h->l[1].fwd_bytes_rw = 1e8;
  h->l[1].bwd_bytes_rw = 2e8;
  h->l[2].op = OOC_OPK_RELU;
  h->l[2].cls = OOC_CLASS_ELTWISE;
  h->l[2].fwd_flops = 1e6;
  h->l[2].bwd_data_flops = 1e6;
  h->l[2].fwd_bytes_rw = 2e8;
  h->l[2].bwd_bytes_rw = 3e8;
  h->l[3].op = OOC_OPK_FLATTEN;
  h->l[3].cls = OOC_CLASS_ELTWISE;
  h->l[3].alias_of = 2;
  h->l[3].fwd_bytes_rw = 1e6;        /* a view: must cost nothing */
  h->l[4].op = OOC_OPK_RELU;
  h->l[4].cls = OOC_CLASS_ELTWISE;
  h->l[4].fwd_bytes_rw = 700;
  h->l[5].op = OOC_OPK_RELU;
  h->l[5].cls = OOC_CLASS_ELTWISE;
  h->l[5].fwd_bytes_rw = 800;
  h->m.weight_bytes = 4000000;
  h->m.grad_bytes = 4000000;
  h->m.opt_bytes = 4000000;
}

/* Wave quantisation (sim/cost.c) by hand, 4 multiprocessors, 128 x 128
 * tiles: 256 x 256 outputs are 4 tiles, one full wave (1); 200 x 256 are
 * 4 tiles whose useful area is 200 x 256 / 128^2 = 3.125 of 4 slots
 * (0.78125); 640 x 128 are 5 tiles in 2 waves: 5 / 8 (0.625). Split-K
 * over a 128 x 128 output with K 1024: split 1 fills 1 of 4 SMs, 2 two, 4
 * all four (1), 8 two full waves (1), 16 would leave 64 < 128 per slice;
 * with K 256 only split 2 (0.5). No SMs in the profile: 1. */
START_TEST(gemm_waves)
{
  ooc_hw hw = { .sms = 4, .gemm_tile = 128, .max_split_k = 16 };

  ck_assert(ooc_cost_gemm_util(&hw, 256, 256, 1000, 1) == 1.0);
  ck_assert(ooc_cost_gemm_util(&hw, 200, 256, 1000, 1) == 0.78125);
  ck_assert(ooc_cost_gemm_util(&hw, 640, 128, 1000, 1) == 0.625);
  ck_assert(ooc_cost_gemm_util(&hw, 128, 128, 1024, 1) == 0.25);
  ck_assert(ooc_cost_gemm_util(&hw, 128, 128, 1024, 2) == 0.5);
  ck_assert(ooc_cost_gemm_util(&hw, 128, 128, 1024, 16) == 1.0);
  ck_assert(ooc_cost_gemm_util(&hw, 128, 128, 256, 16) == 0.5);
  hw.sms = 0;
  ck_assert(ooc_cost_gemm_util(&hw, 128, 128, 256, 16) == 1.0);
}
END_TEST

/* The layer times use it: resnet50's conv1 at batch 1 (7x7/2, 3 -> 64,
 * 112 x 112 out) is an implicit GEMM of M 12544, N 64: 98 tiles in 25
 * waves over 4 SMs, utilisation 12544 x 64 / 128^2 / 100 = 0.49. Its
 * forward is compute-bound on the round profile, so its kernel time (the
 * time less the 5 us launch) is the unquantised one over 0.49. */
START_TEST(gemm_waves_in_layer_times)
{
  const ooc_hw_override ov[] = { { .key = "compute.sms", .value = "4" } };
  ooc_hw *plain = round_profile(NULL, NULL, 0);
  ooc_hw *waves = round_profile(NULL, ov, 1);
  ooc_model *m = NULL;
  ooc_model_opts mo = { .batch = 1 };
  ooc_costs *c0 = NULL, *c1 = NULL;
  ooc_err err = { 0 };
  int i, conv1 = -1;

  ck_assert_int_eq(ooc_model_load("resnet50", &mo, &m, &err), 0);
  for (i = 0; i < m->n_layers; i++)
    if (strcmp(m->layers[i].name, "conv1") == 0)
      conv1 = i;
  ck_assert_int_ge(conv1, 0);
  ck_assert_int_eq(ooc_costs_alloc(m, plain, &c0, &err), 0);
  ck_assert_int_eq(ooc_costs_alloc(m, waves, &c1, &err), 0);
  ck_assert(fabs((double)(c1->fwd_ns[conv1] - 5000) -
                 (double)(c0->fwd_ns[conv1] - 5000) / 0.49) <= 1.0);
  ooc_costs_free(c0);
  ooc_costs_free(c1);
  ooc_model_free(m);
  ooc_hw_free(plain);
  ooc_hw_free(waves);
}
END_TEST

/* A model's framework block replaces the profile's host costs: a
 * one-convolution model on h200-pcie5 (host.op_us 28, iteration_us 340,
 * optimizer_param_us 2: one layer with parameters, 2 us) and the same with
 * framework host_op_us 5, host_iteration_us 0, host_optimizer_param_us 20;
 * bad values and keys name the field. */
START_TEST(framework_host_costs)
{
  const char *json =
    "{\"name\":\"f\",\"input\":[4,8,8],"
    "\"framework\":{\"name\":\"jax\",\"host_op_us\":5,"
    "\"host_iteration_us\":0,\"host_optimizer_param_us\":20},"
    "\"layers\":[{\"name\":\"c\",\"op\":\"conv2d\",\"out\":4,"
    "\"kernel\":1},{\"name\":\"loss\",\"op\":\"softmax_ce\"}]}";
  const char *plain =
    "{\"name\":\"p\",\"input\":[4,8,8],"
    "\"layers\":[{\"name\":\"c\",\"op\":\"conv2d\",\"out\":4,"
    "\"kernel\":1},{\"name\":\"loss\",\"op\":\"softmax_ce\"}]}";
  ooc_model_opts o = { .batch = 2 };
  ooc_model *m = NULL;
  ooc_hw *hw = NULL;
  ooc_costs *c = NULL;
  ooc_err err = { 0 };

  ck_assert_int_eq(ooc_hw_load("h200-pcie5", NULL, 0, &hw, &err), 0);
  ck_assert_int_eq(ooc_model_load_string(plain, "p.json", &o, &m, &err), 0);
  ck_assert_str_eq(m->framework, "pytorch");
  ck_assert_int_eq(ooc_costs_alloc(m, hw, &c, &err), 0);
  ck_assert_int_eq(c->host_op_ns, 28000);
  ck_assert_int_eq(c->host_iter_ns, 340000);
  ck_assert_int_eq(c->update_host_ns, 2000);     /* one layer with weights */
  ooc_costs_free(c);
  ooc_model_free(m);
  ck_assert_int_eq(ooc_model_load_string(json, "f.json", &o, &m, &err), 0);
  ck_assert_str_eq(m->framework, "jax");
  ck_assert_int_eq(ooc_costs_alloc(m, hw, &c, &err), 0);
  ck_assert_int_eq(c->host_op_ns, 5000);
  ck_assert_int_eq(c->host_iter_ns, 0);
  ck_assert_int_eq(c->update_host_ns, 20000);
  ooc_costs_free(c);
  ooc_model_free(m);
  m = NULL;
  ck_assert_int_eq(ooc_model_load_string(
      "{\"name\":\"f\",\"input\":[4],\"framework\":{\"host_op_us\":-1},"
      "\"layers\":[{\"name\":\"l\",\"op\":\"linear\",\"out\":2}]}",
      "f.json", &o, &m, &err), OOC_EINVAL);
  ck_assert_str_eq(err.msg, "f.json: framework.host_op_us: expected "
                   "microseconds, a number in [0, 1e9]");
  ck_assert_int_eq(ooc_model_load_string(
      "{\"name\":\"f\",\"input\":[4],\"framework\":{\"op_us\":1},"
      "\"layers\":[{\"name\":\"l\",\"op\":\"linear\",\"out\":2}]}",
      "f.json", &o, &m, &err), OOC_EINVAL);
  ck_assert_str_eq(err.msg, "f.json: framework.op_us: unknown field (valid: "
                   "name host_op_us host_iteration_us "
                   "host_optimizer_param_us maxpool_indices "
                   "relu_in_place add_in_place)");
  ooc_hw_free(hw);
}
END_TEST

START_TEST(roofline_fp32)
{
  ooc_hw *hw = round_profile(NULL, NULL, 0);
  ooc_costs *c = NULL;
  ooc_err err = { 0 };
  hand_model h;

  hand_build(&h, OOC_FP32);
  ck_assert_int_eq(ooc_costs_alloc(&h.m, hw, &c, &err), 0);
  ck_assert_int_eq(c->n_layers, 6);
  ck_assert_int_eq(c->fwd_ns[0], 0);
  ck_assert_int_eq(c->bwd_ns[0], 0);
  /* conv, compute-bound: 1e12 / (10e12 x 0.5) = 0.2 s beats
   * 1e8 / (1e12 x 0.5) = 0.2 ms; + 5 us launch. */
  ck_assert_int_eq(c->fwd_ns[1], 200000000 + 5000);
  /* backward: (1e12 + 1e12) / 5e12 = 0.4 s, two kernels. */
  ck_assert_int_eq(c->bwd_ns[1], 400000000 + 2 * 5000);
  /* relu, memory-bound: 2e8 / 5e11 = 0.4 ms beats 1e6 / 2.5e12 = 0.4 us. */
  ck_assert_int_eq(c->fwd_ns[2], 400000 + 5000);
  /* relu backward: 3e8 / 5e11 = 0.6 ms, one kernel. */
  ck_assert_int_eq(c->bwd_ns[2], 600000 + 5000);
  /* flatten is a view. */
  ck_assert_int_eq(c->fwd_ns[3], 0);
  ck_assert_int_eq(c->bwd_ns[3], 0);
  /* Rounding to nearest: 700 B -> 1.4 ns -> 1; 800 B -> 1.6 ns -> 2. */
  ck_assert_int_eq(c->fwd_ns[4], 5001);
  ck_assert_int_eq(c->fwd_ns[5], 5002);
  ck_assert_int_eq(c->bwd_ns[4], 0);
  ck_assert_int_eq(c->total_fwd_ns, 200005000 + 405000 + 5001 + 5002);
  ck_assert_int_eq(c->total_bwd_ns, 400010000 + 605000);
  /* Optimizer: (2 x 4e6 + 4e6 + 2 x 4e6) B / 5e11 B/s = 40 us, plus one
   * launch for the one layer with parameters. */
  ck_assert_int_eq(c->update_ns, 40000 + 5000);
  ck_assert_int_eq(c->calibrated[1], 0);
  /* The public one-kernel helper agrees. */
  ck_assert_int_eq(ooc_cost_roofline_ns(hw, OOC_FP32, OOC_CLASS_CONV, 1e12,
                                        1e8), 200005000);
  ck_assert_int_eq(ooc_cost_roofline_ns(hw, OOC_FP32, OOC_CLASS_CONV, 0, 0),
                   0);
  ooc_costs_free(c);
  ooc_hw_free(hw);
}
END_TEST

START_TEST(roofline_tensor_cores)
{
  const ooc_hw_override tf32 = { .key = "compute.fp32_uses_tf32",
                                 .value = "true" };
  const ooc_hw_override teff = { .key = "compute.tensor_efficiency.conv",
                                 .value = "0.25" };
  ooc_hw *hw = round_profile(NULL, NULL, 0);
  ooc_costs *c = NULL;
  ooc_err err = { 0 };
  hand_model h;

  /* fp16: conv on tensor cores, 1e12 / (100e12 x 0.5) = 20 ms. */
  hand_build(&h, OOC_FP16);
  ck_assert_int_eq(ooc_costs_alloc(&h.m, hw, &c, &err), 0);
  ck_assert_int_eq(c->fwd_ns[1], 20000000 + 5000);
  ck_assert_int_eq(c->bwd_ns[1], 40000000 + 10000);
  /* relu stays memory-bound: same as fp32 for the same bytes. */
  ck_assert_int_eq(c->fwd_ns[2], 405000);
  ooc_costs_free(c);
  /* bf16 has no tensor rate in this profile: CUDA cores, 10 TFLOP/s. */
  hand_build(&h, OOC_BF16);
  ck_assert_int_eq(ooc_costs_alloc(&h.m, hw, &c, &err), 0);
  ck_assert_int_eq(c->fwd_ns[1], 200005000);
  ooc_costs_free(c);
  ooc_hw_free(hw);
  /* fp32 as TF32: 1e12 / (40e12 x 0.5) = 50 ms. */
  hw = round_profile(NULL, &tf32, 1);
  hand_build(&h, OOC_FP32);
  ck_assert_int_eq(ooc_costs_alloc(&h.m, hw, &c, &err), 0);
  ck_assert_int_eq(c->fwd_ns[1], 50000000 + 5000);
  ooc_costs_free(c);
  ooc_hw_free(hw);
  /* A separate tensor-core efficiency: fp16 conv at 100e12 x 0.25 takes
   * 1e12 / 25e12 = 40 ms; fp32 on CUDA cores keeps eff 0.5 (0.2 s). */
  hw = round_profile(NULL, &teff, 1);
  ck_assert(hw->tensor_eff[OOC_CLASS_CONV] == 0.25);
  ck_assert(hw->tensor_eff[OOC_CLASS_GEMM] == 0.8);
  hand_build(&h, OOC_FP16);
  ck_assert_int_eq(ooc_costs_alloc(&h.m, hw, &c, &err), 0);
  ck_assert_int_eq(c->fwd_ns[1], 40000000 + 5000);
  ooc_costs_free(c);
  hand_build(&h, OOC_FP32);
  ck_assert_int_eq(ooc_costs_alloc(&h.m, hw, &c, &err), 0);
  ck_assert_int_eq(c->fwd_ns[1], 200005000);
  ooc_costs_free(c);
  ooc_hw_free(hw);
}
END_TEST

START_TEST(calibrated_override)
{
  char sig[512], cal[1024];
  ooc_hw *hw;
  ooc_costs *c = NULL;
  ooc_err err = { 0 };
  hand_model h;
  int n;

  hand_build(&h, OOC_FP32);
  n = ooc_layer_signature(&h.m, 1, sig, sizeof sig);
  ck_assert_int_gt(n, 0);
  ck_assert_ptr_nonnull(strstr(sig, "conv2d"));
  /* Forward measured at 123.456 us; backward absent (roofline kept). */
  snprintf(cal, sizeof cal,
           "{ \"layers\": [ { \"sig\": \"%s\", \"fwd_us\": 123.456 },"
           " { \"sig\": \"not a layer\", \"fwd_us\": 1, \"bwd_us\": 1 } ] }",
           sig);
  hw = round_profile(cal, NULL, 0);
  ck_assert_int_eq(ooc_costs_alloc(&h.m, hw, &c, &err), 0);
  ck_assert_int_eq(c->calibrated[1], 1);
  ck_assert_int_eq(c->fwd_ns[1], 123456);
  ck_assert_int_eq(c->bwd_ns[1], 400010000);
  ck_assert_int_eq(c->calibrated[2], 0);
  ck_assert_int_eq(c->fwd_ns[2], 405000);
  ck_assert_int_eq(c->total_fwd_ns, 123456 + 405000 + 5001 + 5002);
  ooc_costs_free(c);
  ooc_hw_free(hw);
  /* A different batch is a different signature: roofline again. */
  h.m.batch = 4;
  hw = round_profile(cal, NULL, 0);
  ck_assert_int_eq(ooc_costs_alloc(&h.m, hw, &c, &err), 0);
  ck_assert_int_eq(c->calibrated[1], 0);
  ck_assert_int_eq(c->fwd_ns[1], 200005000);
  ooc_costs_free(c);
  ooc_hw_free(hw);
}
END_TEST

START_TEST(costs_bad_input)
{
  ooc_hw *hw = round_profile(NULL, NULL, 0);
  ooc_costs *c = NULL;
  ooc_err err = { 0 };
  hand_model h;

  hand_build(&h, OOC_FP32);
  h.l[2].fwd_bytes_rw = -1;
  ck_assert_int_eq(ooc_costs_alloc(&h.m, hw, &c, &err), OOC_EINVAL);
  ck_assert_str_eq(err.msg, "layer relu: negative or undefined FLOPs or bytes");
  ck_assert_ptr_null(c);
  hand_build(&h, OOC_FP32);
  h.l[1].fwd_flops = 1e30;
  ck_assert_int_eq(ooc_costs_alloc(&h.m, hw, &c, &err), OOC_ERANGE);
  ck_assert_ptr_null(c);
  ooc_costs_free(NULL);
  ooc_hw_free(NULL);
  ooc_hw_free(hw);
}
END_TEST

static Suite *
hw_suite(void)
{
  Suite *s = suite_create("hw");
  TCase *tc = tcase_create("profiles");

  tcase_add_loop_test(tc, zoo_profile_loads, 0, N_ZOO);
  tcase_add_test(tc, v100_nvlink2_figures);
  tcase_add_test(tc, pcie3_copy_times);
  tcase_add_test(tc, a100_tf32_and_h100_public_link);
  tcase_add_test(tc, unknown_profile_name);
  suite_add_tcase(s, tc);
  tc = tcase_create("overrides");
  tcase_add_test(tc, override_values);
  tcase_add_test(tc, override_va_costs);
  tcase_add_test(tc, override_scales_duplex);
  tcase_add_test(tc, override_errors);
  suite_add_tcase(s, tc);
  tc = tcase_create("bad");
  tcase_add_loop_test(tc, bad_profile, 0, N_BAD);
  tcase_add_test(tc, bad_strings);
  suite_add_tcase(s, tc);
  tc = tcase_create("calibration");
  tcase_add_test(tc, fnv1a);
  tcase_add_test(tc, calib_lookup);
  tcase_add_test(tc, derive_round_trip);
  tcase_add_test(tc, derive_errors);
  suite_add_tcase(s, tc);
  return s;
}

static Suite *
cost_suite(void)
{
  Suite *s = suite_create("cost");
  TCase *tc = tcase_create("roofline");

  tcase_add_test(tc, roofline_fp32);
  tcase_add_test(tc, gemm_waves);
  tcase_add_test(tc, gemm_waves_in_layer_times);
  tcase_add_test(tc, framework_host_costs);
  tcase_add_test(tc, roofline_tensor_cores);
  tcase_add_test(tc, calibrated_override);
  tcase_add_test(tc, costs_bad_input);
  suite_add_tcase(s, tc);
  return s;
}

int
main(void)
{
  SRunner *sr = srunner_create(hw_suite());
  int failed;

  srunner_add_suite(sr, cost_suite());
  srunner_run_all(sr, CK_NORMAL);
  failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
