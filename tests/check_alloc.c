/* tests/check_alloc.c — the four allocator models (alloc.h) on patterns
 * worked by hand, plus a conformance run of every registered model.
 *
 * Sizes are in MiB so the caching allocator's rounding rules (512 B, 2 MiB
 * large-segment rounding) leave them unchanged.
 */
#include "config.h"

#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "alloc/alloc.h"

#define MIB (1024ull * 1024ull)

static ooc_hw hw;
static void *state;
static const ooc_allocator_type *cur;
static int64_t cost;

static void
setup(void)
{
  hw = (ooc_hw){
    .malloc_ns = 1000, .malloc_ns_per_GiB = 1024, .free_ns = 500,
    .va_chunk_bytes = 2 * MIB, .va_map_ns = 10,
  };
  state = NULL;
  cur = NULL;
  cost = 0;
}

static void
teardown(void)
{
  if (state != NULL)
    cur->fini(state);
  free(state);
}

static void
open_alloc(const char *name, uint64_t budget, int n_handles)
{
  ooc_alloc_config cfg = { .budget = budget, .n_handles = n_handles,
                           .hw = &hw };
  ooc_err err;

  cur = ooc_allocator_find(name, &err);
  ck_assert_ptr_nonnull(cur);
  state = calloc(1, cur->state_size);
  ck_assert_ptr_nonnull(state);
  ck_assert_int_eq(cur->init(state, &cfg, &err), OOC_OK);
}

static int
A(int32_t h, uint64_t bytes)
{
  return cur->alloc(state, h, bytes, &cost);
}

static void
F(int32_t h)
{
  cur->free(state, h, &cost);
}

static ooc_alloc_stats
S(void)
{
  ooc_alloc_stats st;

  cur->stats(state, &st);
  return st;
}

/* The fragmenting pattern, budget 100 MiB:
 *   x = 80 MiB, free x          (caching: one cached 80 MiB segment)
 *   a, b, c, d = 20 MiB each    (caching: split from that segment at
 *                                0, 20, 40, 60 MiB)
 *   free a, free c              (caching: free holes at 0 and 40 MiB, not
 *                                adjacent; reserved 80 MiB)
 *   e = 30 MiB                  (caching: no hole >= 30 MiB; a new 30 MiB
 *                                segment needs 110 > 100 MiB; no fully free
 *                                segment to release -> OOM)
 * Returns the status of the last request. */
static int
fragment(void)
{
  ck_assert_int_eq(A(0, 80 * MIB), OOC_OK);
  F(0);
  ck_assert_int_eq(A(1, 20 * MIB), OOC_OK);
  ck_assert_int_eq(A(2, 20 * MIB), OOC_OK);
  ck_assert_int_eq(A(3, 20 * MIB), OOC_OK);
  ck_assert_int_eq(A(4, 20 * MIB), OOC_OK);
  F(1);
  F(3);
  return A(5, 30 * MIB);
}

/* caching: OOM with live 40 MiB, reserved 80 MiB (fragmentation 1 - 40/80
 * = 0.5), 60 MiB free in total but the largest block is 20 MiB (the holes,
 * and the 20 MiB never reserved). One segment malloc: 1000 + 80 ns. */
START_TEST(test_caching_fragments)
{
  ooc_alloc_stats st;
  char why[160];

  open_alloc("caching", 100 * MIB, 8);
  ck_assert_int_eq(fragment(), OOC_EOOM);
  st = S();
  ck_assert_uint_eq(st.allocated, 40 * MIB);
  ck_assert_uint_eq(st.reserved, 80 * MIB);
  ck_assert_uint_eq(st.largest_free, 20 * MIB);
  ck_assert_uint_eq(st.n_mallocs, 1);
  ck_assert_uint_eq(st.n_releases, 0);
  ck_assert_int_eq(cost, 1080);
  cur->explain(state, 30 * MIB, why, sizeof why);
  ck_assert_str_eq(why, "caching: no free block of 30.00 MiB; 60.00 MiB "
                   "free but fragmented (largest 20.00 MiB)");
}
END_TEST

/* va with 2 MiB chunks: x creates 40 chunks; a-d reuse them; free a, c
 * returns 20 to the cache; e takes 15 of those. No OOM: allocated 70 MiB,
 * reserved 80 MiB (40 chunks), largest free (5 cached + 10 never created)
 * x 2 MiB = 30 MiB. Map cost 10 ns per chunk: 40 + 4 x 10 + 15 = 95 chunks
 * -> 950 ns. */
START_TEST(test_va_no_fragments)
{
  ooc_alloc_stats st;

  open_alloc("va", 100 * MIB, 8);
  ck_assert_int_eq(fragment(), OOC_OK);
  st = S();
  ck_assert_uint_eq(st.allocated, 70 * MIB);
  ck_assert_uint_eq(st.reserved, 80 * MIB);
  ck_assert_uint_eq(st.largest_free, 30 * MIB);
  ck_assert_int_eq(cost, 950);
}
END_TEST

/* ideal: live 40 + 30 = 70 MiB <= 100 MiB. */
START_TEST(test_ideal_no_fragments)
{
  ooc_alloc_stats st;

  open_alloc("ideal", 100 * MIB, 8);
  ck_assert_int_eq(fragment(), OOC_OK);
  st = S();
  ck_assert_uint_eq(st.allocated, 70 * MIB);
  ck_assert_uint_eq(st.reserved, 70 * MIB);
  ck_assert_uint_eq(st.largest_free, 30 * MIB);
  ck_assert_int_eq(cost, 0);
  ck_assert_int_eq(A(6, 31 * MIB), OOC_EOOM);
}
END_TEST

/* va internal fragmentation: 3 MiB takes 2 chunks (1 MiB lost), 1 byte
 * (small path, < 1 MiB) opens a small segment of 1 chunk, 4 MiB takes
 * exactly 2: reserved 10 MiB for 7 MiB + 1 B; the waste 3 MiB - 1 B is
 * under one chunk per live tensor (3 x 2 MiB). 5 chunks mapped: 50 ns. */
START_TEST(test_va_internal)
{
  ooc_alloc_stats st;

  open_alloc("va", 100 * MIB, 4);
  ck_assert_int_eq(A(0, 3 * MIB), OOC_OK);
  ck_assert_int_eq(A(1, 1), OOC_OK);
  ck_assert_int_eq(A(2, 4 * MIB), OOC_OK);
  st = S();
  ck_assert_uint_eq(st.allocated, 7 * MIB + 1);
  ck_assert_uint_eq(st.reserved, 10 * MIB);
  ck_assert_uint_lt(st.reserved - st.allocated, 3 * 2 * MIB);
  ck_assert_int_eq(cost, 50);
  /* 100 MiB = 50 chunks; 45 left: 90 MiB fits, 90 MiB + 1 B does not. */
  ck_assert_int_eq(A(3, 90 * MIB + 1), OOC_EOOM);
  ck_assert_int_eq(A(3, 90 * MIB), OOC_OK);
}
END_TEST

/* va small path, 2 MiB chunks (small: under 1 MiB), budget 4 MiB = 2
 * chunks:
 *   h0..h5 = 100,000 B each: 100,352 B rounded (196 x 512), best fit one
 *            after another in one small segment at [0, 602,112); one chunk
 *            mapped (10 ns); 1,495,040 B left in the segment
 *   h6 = 3 MiB: large, 2 chunks, only 1 free -> OOM
 *   h6 = 1 MiB: not under half a chunk: large, takes the other chunk
 *   h7 = 1 MiB - 1 B: small, 1 MiB rounded, fits the segment's free block
 *            at [602,112, 1,650,688); 446,464 B (436 KiB) left
 *   h8 = 500,000 B: 500,224 rounded; no block that large and no chunk for
 *            a new segment -> OOM
 * Freeing h0..h5 coalesces them into one 602,112 B block; freeing h7 then
 * leaves the segment wholly free: it is unmapped, its chunk cached. h8 now
 * maps it again (10 ns) without creating a chunk. Reserved stays 4 MiB
 * (2 chunks created); costs 4 maps = 40 ns. */
START_TEST(test_va_small)
{
  ooc_alloc_stats st;
  char why[200];
  int h;

  open_alloc("va", 4 * MIB, 12);
  for (h = 0; h < 6; h++)
    ck_assert_int_eq(A(h, 100000), OOC_OK);
  st = S();
  ck_assert_uint_eq(st.allocated, 600000);
  ck_assert_uint_eq(st.reserved, 2 * MIB);
  ck_assert_uint_eq(st.n_mallocs, 1);
  ck_assert_uint_eq(st.largest_free, 2 * MIB);  /* the chunk never made */
  ck_assert_int_eq(cost, 10);
  ck_assert_int_eq(A(6, 3 * MIB), OOC_EOOM);
  cur->explain(state, 3 * MIB, why, sizeof why);
  ck_assert_str_eq(why, "va: 3.00 MiB needs 2 chunks of 2.00 MiB; only 1 "
                   "of 2 are free");
  ck_assert_int_eq(A(6, MIB), OOC_OK);
  ck_assert_uint_eq(S().reserved, 4 * MIB);
  ck_assert_uint_eq(S().largest_free, 1495040);
  ck_assert_int_eq(A(7, MIB - 1), OOC_OK);
  st = S();
  ck_assert_uint_eq(st.largest_free, 446464);
  ck_assert_uint_eq(st.allocated, 600000 + 2 * MIB - 1);
  ck_assert_int_eq(cost, 20);
  ck_assert_int_eq(A(8, 500000), OOC_EOOM);
  cur->explain(state, 500000, why, sizeof why);
  ck_assert_str_eq(why, "va: no free block of 488.28 KiB in the 1 small "
                   "segments (largest 436.00 KiB); 0 of 2 chunks of "
                   "2.00 MiB are free");
  for (h = 0; h < 6; h++)
    F(h);
  st = S();
  ck_assert_uint_eq(st.largest_free, 602112);
  ck_assert_uint_eq(st.allocated, 2 * MIB - 1);
  F(7);
  st = S();
  ck_assert_uint_eq(st.largest_free, 2 * MIB);   /* the cached chunk */
  ck_assert_uint_eq(st.reserved, 4 * MIB);
  ck_assert_uint_eq(st.allocated, MIB);
  ck_assert_int_eq(A(8, 500000), OOC_OK);
  st = S();
  ck_assert_uint_eq(st.reserved, 4 * MIB);
  ck_assert_uint_eq(st.n_mallocs, 2);
  ck_assert_uint_eq(st.largest_free, 2 * MIB - 500224);
  ck_assert_int_eq(cost, 30);
  F(8);
  F(6);
  st = S();
  ck_assert_uint_eq(st.allocated, 0);
  ck_assert_uint_eq(st.largest_free, 4 * MIB);
}
END_TEST

/* The ResNet-50 case of the issue in miniature, 40 MiB chunks: 107 small
 * tensors of 4 KiB share one small segment (reserved 1 chunk, not 107),
 * and a 100 MiB tensor beside them takes ceil(100 / 40) = 3 chunks. Freeing
 * the small ones returns their segment to the chunk cache, so a later
 * 160 MiB tensor (4 chunks) is built from it and the 3 freed chunks,
 * budget 4 chunks. */
START_TEST(test_va_many_small)
{
  ooc_alloc_stats st;
  int h;

  hw.va_chunk_bytes = 40 * MIB;
  open_alloc("va", 160 * MIB, 110);
  for (h = 0; h < 107; h++)
    ck_assert_int_eq(A(h, 4096), OOC_OK);
  st = S();
  ck_assert_uint_eq(st.reserved, 40 * MIB);
  ck_assert_uint_eq(st.allocated, 107 * 4096);
  ck_assert_int_eq(cost, 10);
  ck_assert_int_eq(A(107, 100 * MIB), OOC_OK);
  st = S();
  ck_assert_uint_eq(st.reserved, 160 * MIB);
  ck_assert_uint_eq(st.n_mallocs, 4);
  ck_assert_int_eq(cost, 40);
  ck_assert_int_eq(A(108, 4096), OOC_OK);       /* the segment has room */
  ck_assert_int_eq(cost, 40);
  ck_assert_int_eq(A(109, 160 * MIB), OOC_EOOM);
  F(107);
  for (h = 0; h < 107; h++)
    F(h);
  ck_assert_int_eq(A(109, 160 * MIB), OOC_EOOM);  /* h108 holds it */
  F(108);
  ck_assert_uint_eq(S().largest_free, 160 * MIB);
  ck_assert_int_eq(A(109, 160 * MIB), OOC_OK);
  st = S();
  ck_assert_uint_eq(st.reserved, 160 * MIB);
  ck_assert_uint_eq(st.n_mallocs, 4);
  ck_assert_int_eq(cost, 80);
}
END_TEST

/* ooc_alloc_footprint: what one request occupies under each model, 2 MiB
 * chunks from the profile unless the configuration sets its own. */
START_TEST(test_footprint)
{
  ooc_alloc_config cfg = { .budget = 100 * MIB, .hw = &hw };
  ooc_alloc_config own = { .budget = 100 * MIB, .chunk_bytes = 40 * MIB,
                           .hw = &hw };
  ooc_alloc_config none = { .budget = 100 * MIB };

  ck_assert_uint_eq(ooc_alloc_footprint(&ooc_alloc_ideal, &cfg, 1000), 1000);
  ck_assert_uint_eq(ooc_alloc_footprint(&ooc_alloc_caching, &cfg, 1000),
                    1024);
  ck_assert_uint_eq(ooc_alloc_footprint(&ooc_alloc_caching, &cfg, 0), 0);
  ck_assert_uint_eq(ooc_alloc_footprint(&ooc_alloc_caching, &cfg,
                                        3 * MIB + 1), 3 * MIB + 512);
  ck_assert_uint_eq(ooc_alloc_footprint(&ooc_alloc_pool, &cfg, 1000), 1024);
  ck_assert_uint_eq(ooc_alloc_footprint(&ooc_alloc_pool, &cfg, 0), 0);
  /* va: small below 1 MiB (half the chunk), chunk-rounded from there. */
  ck_assert_uint_eq(ooc_alloc_footprint(&ooc_alloc_va, &cfg, 0), 0);
  ck_assert_uint_eq(ooc_alloc_footprint(&ooc_alloc_va, &cfg, 1), 512);
  ck_assert_uint_eq(ooc_alloc_footprint(&ooc_alloc_va, &cfg, MIB - 1), MIB);
  ck_assert_uint_eq(ooc_alloc_footprint(&ooc_alloc_va, &cfg, MIB), 2 * MIB);
  ck_assert_uint_eq(ooc_alloc_footprint(&ooc_alloc_va, &cfg, 3 * MIB),
                    4 * MIB);
  ck_assert_uint_eq(ooc_alloc_footprint(&ooc_alloc_va, &cfg, 4 * MIB),
                    4 * MIB);
  ck_assert_uint_eq(ooc_alloc_footprint(&ooc_alloc_va, &own, 4096), 4096);
  ck_assert_uint_eq(ooc_alloc_footprint(&ooc_alloc_va, &own, 20 * MIB - 1),
                    20 * MIB);
  ck_assert_uint_eq(ooc_alloc_footprint(&ooc_alloc_va, &own, 20 * MIB),
                    40 * MIB);
  ck_assert_uint_eq(ooc_alloc_footprint(&ooc_alloc_va, &own, 41 * MIB),
                    80 * MIB);
  ck_assert_uint_eq(ooc_alloc_footprint(&ooc_alloc_va, &none, 3 * MIB),
                    4 * MIB);   /* the 2 MiB default */
  /* A large request's footprint is what the model reserves for it. */
  open_alloc("va", 100 * MIB, 2);
  ck_assert_int_eq(A(0, 5 * MIB + 1), OOC_OK);
  ck_assert_uint_eq(S().reserved,
                    ooc_alloc_footprint(&ooc_alloc_va, &cfg, 5 * MIB + 1));
}
END_TEST

/* pool, 10 MiB arena: a = 4 MiB at [0,4), b = 1 at [4,5), c = 2 at [5,7),
 * d = 1 at [7,8). Free a and c: holes [0,4), [5,7) and the tail [8,10).
 * First fit puts a 2 MiB request at [0,2) (best fit would take the exact
 * hole [5,7)); then 3 MiB fits nowhere: the holes are [2,4), [5,7), [8,10)
 * (2 MiB each). Freeing everything coalesces the arena back into one
 * 10 MiB range. */
START_TEST(test_pool_first_fit)
{
  ooc_alloc_stats st;
  char why[160];

  open_alloc("pool", 10 * MIB, 8);
  ck_assert_int_eq(A(0, 4 * MIB), OOC_OK);
  ck_assert_int_eq(A(1, 1 * MIB), OOC_OK);
  ck_assert_int_eq(A(2, 2 * MIB), OOC_OK);
  ck_assert_int_eq(A(3, 1 * MIB), OOC_OK);
  ck_assert_uint_eq(S().reserved, 8 * MIB);
  F(0);
  F(2);
  ck_assert_uint_eq(S().largest_free, 4 * MIB);
  ck_assert_int_eq(A(4, 2 * MIB), OOC_OK);
  st = S();
  ck_assert_uint_eq(st.largest_free, 2 * MIB);
  ck_assert_int_eq(A(5, 3 * MIB), OOC_EOOM);
  cur->explain(state, 3 * MIB, why, sizeof why);
  ck_assert_str_eq(why, "pool: no free range of 3.00 MiB; 6.00 MiB free but "
                   "fragmented (largest 2.00 MiB)");
  F(1);
  F(3);
  F(4);
  st = S();
  ck_assert_uint_eq(st.allocated, 0);
  ck_assert_uint_eq(st.largest_free, 10 * MIB);
  ck_assert_uint_eq(st.reserved, 8 * MIB);   /* high-water mark */
  ck_assert_int_eq(A(6, 10 * MIB), OOC_OK);
  ck_assert_uint_eq(S().reserved, 10 * MIB);
  ck_assert_int_eq(cost, 0);
}
END_TEST

/* caching release and retry, budget 100 MiB: three 30 MiB requests make
 * three segments (90 MiB reserved); freeing the first and last caches two
 * fully free segments. A 40 MiB request finds no cached block >= 40 MiB and
 * a new segment would need 130 MiB: both free segments are released (500 ns
 * each) and the 40 MiB segment fits (70 MiB reserved). Costs: 3 x (1000 +
 * 30) for the first segments, then 2 x 500 + 1000 + 40 = 2040. */
START_TEST(test_caching_release)
{
  ooc_alloc_stats st;

  open_alloc("caching", 100 * MIB, 8);
  ck_assert_int_eq(A(0, 30 * MIB), OOC_OK);
  ck_assert_int_eq(A(1, 30 * MIB), OOC_OK);
  ck_assert_int_eq(A(2, 30 * MIB), OOC_OK);
  ck_assert_int_eq(cost, 3090);
  F(0);
  F(2);
  ck_assert_uint_eq(S().reserved, 90 * MIB);
  cost = 0;
  ck_assert_int_eq(A(3, 40 * MIB), OOC_OK);
  ck_assert_int_eq(cost, 2040);
  st = S();
  ck_assert_uint_eq(st.reserved, 70 * MIB);
  ck_assert_uint_eq(st.allocated, 70 * MIB);
  ck_assert_uint_eq(st.n_mallocs, 4);
  ck_assert_uint_eq(st.n_releases, 2);
}
END_TEST

/* caching pools and splitting: 1000 B rounds to 1024 B in a new 2 MiB
 * small segment; a second 1000 B request splits the cached remainder (no
 * new segment). 5 MiB takes a 20 MiB segment, split (15 MiB > 1 MiB left);
 * 15 MiB then fits the cached remainder exactly. 21 MiB + 1 B rounds to a
 * 22 MiB segment. Reserved 2 + 20 + 22 = 44 MiB after three mallocs. Freeing
 * the 5 MiB and 15 MiB blocks coalesces them into one 20 MiB block, which a
 * 20 MiB request reuses without a malloc. */
START_TEST(test_caching_pools)
{
  ooc_alloc_stats st;

  open_alloc("caching", 1024 * MIB, 8);
  ck_assert_int_eq(A(0, 1000), OOC_OK);
  ck_assert_int_eq(A(1, 1000), OOC_OK);
  ck_assert_uint_eq(S().reserved, 2 * MIB);
  ck_assert_uint_eq(S().n_mallocs, 1);
  ck_assert_int_eq(A(2, 5 * MIB), OOC_OK);
  ck_assert_int_eq(A(3, 15 * MIB), OOC_OK);
  ck_assert_uint_eq(S().n_mallocs, 2);
  ck_assert_int_eq(A(4, 21 * MIB + 1), OOC_OK);
  st = S();
  ck_assert_uint_eq(st.reserved, 44 * MIB);
  ck_assert_uint_eq(st.n_mallocs, 3);
  ck_assert_uint_eq(st.allocated, 2000 + 41 * MIB + 1);
  F(2);
  F(3);
  ck_assert_int_eq(A(5, 20 * MIB), OOC_OK);
  ck_assert_uint_eq(S().n_mallocs, 3);
}
END_TEST

START_TEST(test_find)
{
  ooc_err err;

  ooc_err_clear(&err);
  ck_assert_ptr_eq(ooc_allocator_find("va", &err), &ooc_alloc_va);
  ck_assert_ptr_null(ooc_allocator_find("buddy", &err));
  ck_assert_int_eq(err.code, OOC_ENOTFOUND);
  ck_assert_str_eq(err.msg, "unknown allocator 'buddy' (valid: ideal, "
                   "caching, pool, va)");
}
END_TEST

/* Every registered model on the same pseudo-random pattern: allocated is
 * the sum of live requests, reserved stays within the budget and covers
 * what is allocated, a reset empties the model, and the same pattern after
 * a reset gives the same figures. */
START_TEST(test_conformance)
{
  int k;

  for (k = 0; ooc_allocator_types[k] != NULL; k++) {
    uint64_t live[32] = { 0 }, sum = 0, first[2] = { 0, 0 };
    int pass;

    cur = ooc_allocator_types[k];
    ck_assert_ptr_nonnull(cur->explain);
    ck_assert_ptr_nonnull(cur->usage);
    {
      ooc_alloc_config cfg = { .budget = 256 * MIB, .n_handles = 32,
                               .hw = &hw };
      state = calloc(1, cur->state_size);
      ck_assert_int_eq(cur->init(state, &cfg, NULL), OOC_OK);
    }
    for (pass = 0; pass < 2; pass++) {
      uint32_t rng = 12345;
      int step;

      cur->reset(state);
      memset(live, 0, sizeof live);
      sum = 0;
      ck_assert_uint_eq(S().allocated, 0);
      for (step = 0; step < 2000; step++) {
        int h;
        rng = rng * 1103515245u + 12345u;
        h = (int)(rng >> 16) % 32;
        if (live[h]) {
          F(h);
          sum -= live[h];
          live[h] = 0;
        } else {
          /* Half up to 24 MiB, half under 512 KiB (va's small path,
           * caching's small pool). */
          uint64_t b = (rng >> 4) & 1 ? 1 + (rng >> 8) % (24 * MIB)
                                      : 1 + (rng >> 8) % (512 * 1024);
          if (A(h, b) == OOC_OK) {
            live[h] = b;
            sum += b;
          }
        }
        {
          ooc_alloc_stats st = S();
          uint64_t ua, ur;
          cur->usage(state, &ua, &ur);
          ck_assert_uint_eq(ua, st.allocated);
          ck_assert_uint_eq(ur, st.reserved);
          ck_assert_uint_eq(st.allocated, sum);
          ck_assert_uint_le(st.reserved, 256 * MIB);
          ck_assert_uint_ge(st.reserved, st.allocated);
        }
      }
      if (pass == 0) {
        first[0] = S().reserved;
        first[1] = sum;
      } else {
        ck_assert_uint_eq(S().reserved, first[0]);
        ck_assert_uint_eq(sum, first[1]);
      }
    }
    cur->fini(state);
    free(state);
    state = NULL;
  }
}
END_TEST

static Suite *
alloc_suite(void)
{
  Suite *s = suite_create("alloc");
  TCase *tc = tcase_create("fragmentation");

  tcase_add_checked_fixture(tc, setup, teardown);
  tcase_add_test(tc, test_caching_fragments);
  tcase_add_test(tc, test_va_no_fragments);
  tcase_add_test(tc, test_ideal_no_fragments);
  tcase_add_test(tc, test_va_internal);
  tcase_add_test(tc, test_va_small);
  tcase_add_test(tc, test_va_many_small);
  tcase_add_test(tc, test_footprint);
  suite_add_tcase(s, tc);

  tc = tcase_create("models");
  tcase_add_checked_fixture(tc, setup, teardown);
  tcase_add_test(tc, test_pool_first_fit);
  tcase_add_test(tc, test_caching_release);
  tcase_add_test(tc, test_caching_pools);
  tcase_add_test(tc, test_find);
  tcase_add_test(tc, test_conformance);
  suite_add_tcase(s, tc);
  return s;
}

int
main(void)
{
  SRunner *sr = srunner_create(alloc_suite());
  int failed;

  srunner_run_all(sr, CK_NORMAL);
  failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
