/* tests/check_alloc.c — the placement policies (alloc.h): patterns worked
 * by hand with their exact placements, driver actions and fragmentation,
 * a conformance run of every registered policy against a model of the
 * driver, and the option parser's messages.
 *
 * Placements are written (segment or range, address, size); actions as
 * kind(id, addr, bytes). Sizes are in KiB and MiB so that each policy's
 * rounding is visible where a test wants it and absent elsewhere.
 */
#include "config.h"

#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "alloc/alloc.h"
#include "alloc/blocktab.h"
#include "alloc/fittree.h"

#define KIB 1024ull
#define MIB (1024ull * 1024ull)
#define MAX_LOG 4096
#define MAX_H 64

typedef struct act {
  int kind;
  int32_t id;
  uint64_t addr, bytes;
} act;

static ooc_hw hw;
static void *state;
static const ooc_allocator_type *cur;
static ooc_placement pl[MAX_H];
static act log_[MAX_LOG];
static int n_log;

static int
record(void *ctx, const ooc_drv_action *a)
{
  (void)ctx;
  ck_assert_int_lt(n_log, MAX_LOG);
  log_[n_log++] = (act){ a->kind, a->id, a->addr, a->bytes };
  return OOC_OK;
}

static const ooc_drv_sink sink = { .act = record };

static void
setup(void)
{
  hw = (ooc_hw){
    .malloc_ns = 1000, .malloc_ns_per_GiB = 1024, .free_ns = 500,
    .va_chunk_bytes = 2 * MIB, .va_map_ns = 10,
  };
  state = NULL;
  cur = NULL;
  n_log = 0;
  memset(pl, 0, sizeof pl);
}

static void
teardown(void)
{
  if (state != NULL)
    cur->fini(state);
  free(state);
  state = NULL;
}

/* Open allocator spec ("name[:options]") with budget and n handles. */
static void
open_alloc(const char *spec, uint64_t budget, int n_handles)
{
  ooc_alloc_config cfg = { .budget = budget, .n_handles = n_handles,
                           .hw = &hw };
  ooc_err err;

  ooc_err_clear(&err);
  cur = ooc_allocator_find(spec, &cfg.options, &err);
  ck_assert_msg(cur != NULL, "%s", err.msg);
  state = calloc(1, cur->state_size);
  ck_assert_ptr_nonnull(state);
  ck_assert_msg(cur->init(state, &cfg, &err) == OOC_OK, "%s", err.msg);
}

static int
A(int32_t h, uint64_t bytes)
{
  return cur->alloc(state, h, bytes, &pl[h], &sink);
}

static void
F(int32_t h)
{
  ck_assert_int_eq(cur->free(state, h, &sink), OOC_OK);
}

static ooc_alloc_stats
S(void)
{
  ooc_alloc_stats st;

  cur->stats(state, &st);
  return st;
}

/* Handle h was placed at (seg, addr, size). */
static void
P(int32_t h, int32_t seg, uint64_t addr, uint64_t size)
{
  ck_assert_msg(pl[h].seg == seg && pl[h].addr == addr && pl[h].size == size,
                "handle %d: placed (%d, %llu, %llu), want (%d, %llu, %llu)",
                h, pl[h].seg, (unsigned long long)pl[h].addr,
                (unsigned long long)pl[h].size, seg,
                (unsigned long long)addr, (unsigned long long)size);
}

/* The actions sent since the last call are exactly want[0..n). */
static void
expect(const act *want, int n)
{
  int i;

  for (i = 0; i < n && i < n_log; i++)
    ck_assert_msg(log_[i].kind == want[i].kind && log_[i].id == want[i].id &&
                  log_[i].addr == want[i].addr &&
                  log_[i].bytes == want[i].bytes,
                  "action %d: %s(%d, %llu, %llu), want %s(%d, %llu, %llu)", i,
                  ooc_drv_kind_name((ooc_drv_kind)log_[i].kind), log_[i].id,
                  (unsigned long long)log_[i].addr,
                  (unsigned long long)log_[i].bytes,
                  ooc_drv_kind_name((ooc_drv_kind)want[i].kind), want[i].id,
                  (unsigned long long)want[i].addr,
                  (unsigned long long)want[i].bytes);
  ck_assert_msg(n_log == n, "%d actions, want %d", n_log, n);
  n_log = 0;
}

static void
expect_none(void)
{
  expect(NULL, 0);
}

#define SEG_MALLOC(i, a, b) { OOC_DRV_SEG_MALLOC, i, a, b }
#define SEG_FREE(i, a, b) { OOC_DRV_SEG_FREE, i, a, b }
#define CREATE(i, b) { OOC_DRV_CHUNK_CREATE, i, 0, b }
#define MAP(i, a, b) { OOC_DRV_CHUNK_MAP, i, a, b }
#define UNMAP(i, a, b) { OOC_DRV_CHUNK_UNMAP, i, a, b }
#define RELEASE(i, b) { OOC_DRV_CHUNK_RELEASE, i, 0, b }
#define RESERVE(i, a, b) { OOC_DRV_VA_RESERVE, i, a, b }
#define VA_FREE(i, a, b) { OOC_DRV_VA_FREE, i, a, b }
#define EXPECT(...)                                                        \
  do {                                                                     \
    static const act want_[] = { __VA_ARGS__ };                            \
    expect(want_, (int)(sizeof want_ / sizeof want_[0]));                  \
  } while (0)

/* --- the fragmenting pattern (schedule-window seed §4) ------------------- */

/* Budget 100 MiB:
 *   0: 80 MiB, freed         (best fit: one cached 80 MiB segment)
 *   1..4: 20 MiB each        (split from it at 0, 20, 40, 60 MiB)
 *   free 1, free 3           (holes at 0 and 40 MiB, not adjacent)
 *   5: 30 MiB                (best fit: no hole of 30 MiB; a new segment
 *                             needs 80 + 30 > 100 MiB and no segment is
 *                             wholly free to release: OOM)
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

/* caching: the 80 MiB segment (a 2 MiB multiple: its own size) is split
 * each time (the rest, 60, 40, 20 MiB, is > 1 MiB) except the last
 * (nothing left). OOM with live 40 MiB, reserved 80 MiB (fragmentation
 * 0.5), 60 MiB free in all but 20 MiB at most in one piece. */
START_TEST(test_caching_fragments)
{
  ooc_alloc_stats st;
  char why[160];

  open_alloc("caching", 100 * MIB, 8);
  ck_assert_int_eq(fragment(), OOC_EOOM);
  P(1, 0, 0, 20 * MIB);
  P(2, 0, 20 * MIB, 20 * MIB);
  P(3, 0, 40 * MIB, 20 * MIB);
  P(4, 0, 60 * MIB, 20 * MIB);
  EXPECT(SEG_MALLOC(0, 0, 80 * MIB));
  st = S();
  ck_assert_uint_eq(st.allocated, 40 * MIB);
  ck_assert_uint_eq(st.reserved, 80 * MIB);
  ck_assert_uint_eq(st.largest_free, 20 * MIB);
  ck_assert_uint_eq(st.n_mallocs, 1);
  ck_assert_uint_eq(st.n_releases, 0);
  cur->explain(state, 30 * MIB, why, sizeof why);
  ck_assert_str_eq(why, "caching: no free block of 30.00 MiB; 60.00 MiB "
                   "free but fragmented (largest 20.00 MiB)");
}
END_TEST

/* bestfit (nnabla): the same: 80 MiB is a 128 KiB multiple, the large
 * segment is the rounded size, and the rest (60, 40, 20 MiB) is >= 1 MiB
 * + 1: the same placements, the same OOM. */
START_TEST(test_bestfit_fragments)
{
  ooc_alloc_stats st;

  open_alloc("bestfit", 100 * MIB, 8);
  ck_assert_int_eq(fragment(), OOC_EOOM);
  P(1, 0, 0, 20 * MIB);
  P(4, 0, 60 * MIB, 20 * MIB);
  EXPECT(SEG_MALLOC(0, 0, 80 * MIB));
  st = S();
  ck_assert_uint_eq(st.allocated, 40 * MIB);
  ck_assert_uint_eq(st.reserved, 80 * MIB);
}
END_TEST

/* pool: first fit in [0, 100 MiB): 0 at 0, then 1..4 at 0, 20, 40, 60;
 * free 1 and 3 leaves [0, 20), [40, 60) and [80, 100): no 30 MiB range,
 * OOM. One SEG_MALLOC of the whole pool; reserved is the high-water mark,
 * 80 MiB. */
START_TEST(test_pool_fragments)
{
  open_alloc("pool", 100 * MIB, 8);
  ck_assert_int_eq(fragment(), OOC_EOOM);
  P(0, 0, 0, 80 * MIB);
  P(3, 0, 40 * MIB, 20 * MIB);
  EXPECT(SEG_MALLOC(0, 0, 100 * MIB));
  ck_assert_uint_eq(S().reserved, 80 * MIB);
  ck_assert_uint_eq(S().largest_free, 20 * MIB);
}
END_TEST

/* va, 2 MiB chunks, 50 at most: no OOM.
 *   0: 80 MiB = 40 chunks, all new, behind new range 0 at [0, 80 MiB);
 *      freed: unmapped, cached in that order (0..39), range 0 kept
 *   1..4: 10 chunks each from the cache (0-9, 10-19, 20-29, 30-39)
 *      behind new ranges 1..4 at 80, 100, 120, 140 MiB (no free range of
 *      20 MiB: range 0 is 80 MiB)
 *   free 1, 3: chunks 0-9 then 20-29 back to the cache
 *   5: 30 MiB = 15 chunks: 0-9, 20-24 (oldest first), no new chunk,
 *      behind new range 5 at 160 MiB
 * reserved 80 MiB (40 chunks), allocated 70 MiB; largest free: 5 cached +
 * 10 never created = 30 MiB. Freed and taken again, 5 reuses range 5 (no
 * VA_RESERVE) and maps the cache's oldest: 25-29, then 0-9. */
START_TEST(test_va_no_fragments)
{
  ooc_alloc_stats st;
  int i;

  open_alloc("va", 100 * MIB, 8);
  ck_assert_int_eq(fragment(), OOC_OK);
  P(0, 0, 0, 80 * MIB);
  P(1, 1, 80 * MIB, 20 * MIB);
  P(4, 4, 140 * MIB, 20 * MIB);
  P(5, 5, 160 * MIB, 30 * MIB);
  ck_assert_int_eq(log_[0].kind, OOC_DRV_VA_RESERVE);
  for (i = 0; i < 40; i++) {
    ck_assert_int_eq(log_[1 + 2 * i].kind, OOC_DRV_CHUNK_CREATE);
    ck_assert_int_eq(log_[1 + 2 * i].id, i);
    ck_assert_int_eq(log_[2 + 2 * i].kind, OOC_DRV_CHUNK_MAP);
    ck_assert_uint_eq(log_[2 + 2 * i].addr, (uint64_t)i * 2 * MIB);
  }
  /* The last request: its range, then 15 maps. */
  ck_assert_int_eq(log_[n_log - 16].kind, OOC_DRV_VA_RESERVE);
  ck_assert_int_eq(log_[n_log - 16].id, 5);
  for (i = 0; i < 15; i++) {
    const act *a = &log_[n_log - 15 + i];
    ck_assert_int_eq(a->kind, OOC_DRV_CHUNK_MAP);
    ck_assert_int_eq(a->id, i < 10 ? i : 10 + i);
    ck_assert_uint_eq(a->addr, 160 * MIB + (uint64_t)i * 2 * MIB);
  }
  n_log = 0;
  st = S();
  ck_assert_uint_eq(st.allocated, 70 * MIB);
  ck_assert_uint_eq(st.reserved, 80 * MIB);
  ck_assert_uint_eq(st.largest_free, 30 * MIB);
  ck_assert_uint_eq(st.n_mallocs, 40);
  F(5);
  ck_assert_int_eq(n_log, 15);
  ck_assert_int_eq(log_[0].kind, OOC_DRV_CHUNK_UNMAP);
  ck_assert_int_eq(log_[0].id, 0);
  n_log = 0;
  ck_assert_int_eq(A(5, 30 * MIB), OOC_OK);
  P(5, 5, 160 * MIB, 30 * MIB);
  ck_assert_int_eq(n_log, 15);
  ck_assert_int_eq(log_[0].kind, OOC_DRV_CHUNK_MAP);
  ck_assert_int_eq(log_[0].id, 25);
  ck_assert_int_eq(log_[5].id, 0);
}
END_TEST

/* ideal: every tensor its own segment; live 40 + 30 = 70 MiB <= 100.
 * Segment ids: 0 for the 80 MiB, given back, then 0..3 for 1..4 (the last
 * freed first, then new ones); 1 and 3 free ids 0 and 2, so 5 gets 2.
 * Addresses are never reused: 80 + 4 x 20 = 160 MiB for 5. */
START_TEST(test_ideal_no_fragments)
{
  ooc_alloc_stats st;

  open_alloc("ideal", 100 * MIB, 8);
  ck_assert(cur->unpriced);
  ck_assert_int_eq(fragment(), OOC_OK);
  P(1, 0, 80 * MIB, 20 * MIB);
  P(2, 1, 100 * MIB, 20 * MIB);
  P(5, 2, 160 * MIB, 30 * MIB);
  EXPECT(SEG_MALLOC(0, 0, 80 * MIB), SEG_FREE(0, 0, 80 * MIB),
         SEG_MALLOC(0, 80 * MIB, 20 * MIB),
         SEG_MALLOC(1, 100 * MIB, 20 * MIB),
         SEG_MALLOC(2, 120 * MIB, 20 * MIB),
         SEG_MALLOC(3, 140 * MIB, 20 * MIB),
         SEG_FREE(0, 80 * MIB, 20 * MIB), SEG_FREE(2, 120 * MIB, 20 * MIB),
         SEG_MALLOC(2, 160 * MIB, 30 * MIB));
  st = S();
  ck_assert_uint_eq(st.allocated, 70 * MIB);
  ck_assert_uint_eq(st.reserved, 70 * MIB);
  ck_assert_uint_eq(st.largest_free, 30 * MIB);
  ck_assert_int_eq(A(6, 31 * MIB), OOC_EOOM);
  ck_assert_int_eq(A(6, 0), OOC_OK);
  P(6, -1, 0, 0);
  expect_none();
}
END_TEST

/* --- caching (PyTorch) --------------------------------------------------- */

/* release_cached_blocks and one retry, budget 64 MiB:
 *   0: 40 MiB -> SEG_MALLOC(0, 0, 40 MiB); freed: cached whole
 *   1: 50 MiB: no cached block that large; a segment of 50 MiB needs
 *      90 > 64: release every whole cached segment (SEG_FREE of segment 0)
 *      and retry: segment id 0 again, at 40 MiB (addresses only grow)
 *   2: 1000 B -> 1024 B, small pool: a 2 MiB segment at 90 MiB, split
 *   3: 1 MiB (still small): the rest of that segment, split again
 *   4: 1 MiB + 1 B -> 1 MiB + 512, large pool: a 20 MiB segment needs
 *      72 > 64 MiB; no whole segment to release: OOM, no action */
START_TEST(test_caching_release_retry)
{
  ooc_alloc_stats st;

  open_alloc("caching", 64 * MIB, 8);
  ck_assert_int_eq(A(0, 40 * MIB), OOC_OK);
  F(0);
  ck_assert_int_eq(A(1, 50 * MIB), OOC_OK);
  P(1, 0, 40 * MIB, 50 * MIB);
  EXPECT(SEG_MALLOC(0, 0, 40 * MIB), SEG_FREE(0, 0, 40 * MIB),
         SEG_MALLOC(0, 40 * MIB, 50 * MIB));
  ck_assert_int_eq(A(2, 1000), OOC_OK);
  P(2, 1, 90 * MIB, 1024);
  ck_assert_int_eq(A(3, MIB), OOC_OK);
  P(3, 1, 90 * MIB + 1024, MIB);
  EXPECT(SEG_MALLOC(1, 90 * MIB, 2 * MIB));
  ck_assert_int_eq(A(4, MIB + 1), OOC_EOOM);
  expect_none();
  st = S();
  ck_assert_uint_eq(st.allocated, 50 * MIB + 1000 + MIB);
  ck_assert_uint_eq(st.reserved, 52 * MIB);
  ck_assert_uint_eq(st.n_mallocs, 3);
  ck_assert_uint_eq(st.n_releases, 1);
}
END_TEST

/* release_cached_blocks goes through the large pool, then the small one
 * (and nnabla's free_unused_caches the other way round), budget 64 MiB:
 * 0 = 40 MiB (segment 0), 1 = 1000 B (small segment 1 at 40 MiB), both
 * freed; 2 = 50 MiB needs 92 > 64: SEG_FREE 0, then 1; the retry takes
 * id 1 (the last given back) at 42 MiB. */
START_TEST(test_caching_release_order)
{
  open_alloc("caching", 64 * MIB, 8);
  ck_assert_int_eq(A(0, 40 * MIB), OOC_OK);
  ck_assert_int_eq(A(1, 1000), OOC_OK);
  F(0);
  F(1);
  ck_assert_int_eq(A(2, 50 * MIB), OOC_OK);
  EXPECT(SEG_MALLOC(0, 0, 40 * MIB), SEG_MALLOC(1, 40 * MIB, 2 * MIB),
         SEG_FREE(0, 0, 40 * MIB), SEG_FREE(1, 40 * MIB, 2 * MIB),
         SEG_MALLOC(1, 42 * MIB, 50 * MIB));
  teardown();

  open_alloc("bestfit", 4 * MIB, 8);
  ck_assert_int_eq(A(0, 2 * MIB), OOC_OK);
  ck_assert_int_eq(A(1, 1000), OOC_OK);
  F(0);
  F(1);
  ck_assert_int_eq(A(2, 3 * MIB), OOC_OK);
  EXPECT(SEG_MALLOC(0, 0, 2 * MIB), SEG_MALLOC(1, 2 * MIB, MIB),
         SEG_FREE(1, 2 * MIB, MIB), SEG_FREE(0, 0, 2 * MIB),
         SEG_MALLOC(0, 3 * MIB, 3 * MIB));
}
END_TEST

/* Segment sizes (get_allocation_size) and splitting, budget 1 GiB:
 *   0: 100 B      -> 512 B block of a 2 MiB small segment
 *   1: 10 MiB     -> a segment of its size (not under 10 MiB)
 *   2: 11 MiB + 1 -> 11 MiB + 512 B, segment rounded up to 12 MiB; the
 *                    rest, 1 MiB - 512 B, is not > 1 MiB: not split, the
 *                    block is the whole 12 MiB
 *   3: 1 MiB + 1  -> 1 MiB + 512 B of a 20 MiB segment (under 10 MiB);
 *                    the rest, 19 MiB - 512 B, is > 1 MiB: split
 *   4: 18 MiB     -> best fit: that rest, whole (1 MiB - 512 B left)
 *   5: 11 MiB     -> a 12 MiB segment: exactly 1 MiB left, which is not
 *                    > 1 MiB: the whole segment */
START_TEST(test_caching_sizes)
{
  open_alloc("caching", 1024 * MIB, 8);
  ck_assert_int_eq(A(0, 100), OOC_OK);
  ck_assert_int_eq(A(1, 10 * MIB), OOC_OK);
  ck_assert_int_eq(A(2, 11 * MIB + 1), OOC_OK);
  ck_assert_int_eq(A(3, MIB + 1), OOC_OK);
  ck_assert_int_eq(A(4, 18 * MIB), OOC_OK);
  P(0, 0, 0, 512);
  P(1, 1, 2 * MIB, 10 * MIB);
  P(2, 2, 12 * MIB, 12 * MIB);
  P(3, 3, 24 * MIB, MIB + 512);
  P(4, 3, 25 * MIB + 512, 19 * MIB - 512);
  ck_assert_int_eq(A(5, 11 * MIB), OOC_OK);
  P(5, 4, 44 * MIB, 12 * MIB);
  EXPECT(SEG_MALLOC(0, 0, 2 * MIB), SEG_MALLOC(1, 2 * MIB, 10 * MIB),
         SEG_MALLOC(2, 12 * MIB, 12 * MIB),
         SEG_MALLOC(3, 24 * MIB, 20 * MIB),
         SEG_MALLOC(4, 44 * MIB, 12 * MIB));
  ck_assert_uint_eq(ooc_alloc_footprint(cur, &(ooc_alloc_config){ 0 },
                                        MIB + 1), MIB + 512);
}
END_TEST

/* Merging stays inside a segment: two 20 MiB segments side by side
 * (0 at [0, 20), 1 at [20, 40) MiB), both freed, are two cached blocks of
 * 20 MiB, not one of 40: a 30 MiB request gets a new segment. */
START_TEST(test_caching_no_cross_segment_merge)
{
  open_alloc("caching", 100 * MIB, 8);
  ck_assert_int_eq(A(0, 20 * MIB), OOC_OK);
  ck_assert_int_eq(A(1, 20 * MIB), OOC_OK);
  F(0);
  F(1);
  ck_assert_int_eq(A(2, 30 * MIB), OOC_OK);
  P(2, 2, 40 * MIB, 30 * MIB);
  ck_assert_uint_eq(S().reserved, 70 * MIB);
}
END_TEST

/* max_split_size_mb=20, budget 64 MiB:
 *   0: 40 MiB, freed: a cached 40 MiB block, oversize (>= 20 MiB)
 *   1: 8 MiB is under 20 MiB: it may not take the oversize block; a new
 *      20 MiB segment at 40 MiB, split (8 < 20 and 12 MiB left > 1 MiB)
 *   2: 16 MiB: the 12 MiB rest is too small and the 40 MiB block is
 *      oversize; a 16 MiB segment needs 60 + 16 > 64:
 *      release_available_cached_blocks frees the smallest cached block
 *      >= max(16, 20) MiB, segment 0, and the retry succeeds (id 0 again,
 *      at 60 MiB)
 * Then, budget 200 MiB, a request of >= 20 MiB takes a cached block only
 * if it is less than 20 MiB larger, and is never split:
 *   0: 60 MiB, freed; 1: 30 MiB gets a new segment (60 - 30 >= 20);
 *   2: 45 MiB takes the 60 MiB block whole (60 - 45 < 20). */
START_TEST(test_caching_max_split)
{
  open_alloc("caching:max_split_size_mb=20", 64 * MIB, 8);
  ck_assert_int_eq(A(0, 40 * MIB), OOC_OK);
  F(0);
  ck_assert_int_eq(A(1, 8 * MIB), OOC_OK);
  P(1, 1, 40 * MIB, 8 * MIB);
  ck_assert_int_eq(A(2, 16 * MIB), OOC_OK);
  P(2, 0, 60 * MIB, 16 * MIB);
  EXPECT(SEG_MALLOC(0, 0, 40 * MIB), SEG_MALLOC(1, 40 * MIB, 20 * MIB),
         SEG_FREE(0, 0, 40 * MIB), SEG_MALLOC(0, 60 * MIB, 16 * MIB));
  teardown();

  open_alloc("caching:max_split_size_mb=20", 200 * MIB, 8);
  ck_assert_int_eq(A(0, 60 * MIB), OOC_OK);
  F(0);
  ck_assert_int_eq(A(1, 30 * MIB), OOC_OK);
  P(1, 1, 60 * MIB, 30 * MIB);
  ck_assert_int_eq(A(2, 45 * MIB), OOC_OK);
  P(2, 0, 0, 60 * MIB);
  ck_assert_uint_eq(S().allocated, 75 * MIB);
}
END_TEST

/* release_available_cached_blocks when no single cached block is large
 * enough: budget 64 MiB, max split 20 MiB. Two oversize blocks of 22 and
 * 24 MiB cached (46 MiB reserved); 30 MiB needs 76 > 64: key 30 MiB, no
 * block that large, so the largest oversize blocks are freed until 30 MiB
 * are: 24 (segment 1), then 22 (segment 0); retry: new segment, id 0. */
START_TEST(test_caching_release_available_many)
{
  open_alloc("caching:max_split_size_mb=20", 64 * MIB, 8);
  ck_assert_int_eq(A(0, 22 * MIB), OOC_OK);
  ck_assert_int_eq(A(1, 24 * MIB), OOC_OK);
  F(0);
  F(1);
  ck_assert_int_eq(A(2, 30 * MIB), OOC_OK);
  EXPECT(SEG_MALLOC(0, 0, 22 * MIB), SEG_MALLOC(1, 22 * MIB, 24 * MIB),
         SEG_FREE(1, 22 * MIB, 24 * MIB), SEG_FREE(0, 0, 22 * MIB),
         SEG_MALLOC(0, 46 * MIB, 30 * MIB));
  P(2, 0, 46 * MIB, 30 * MIB);
}
END_TEST

/* roundup_power2_divisions=4: a size over 4 x 512 B rounds up to the next
 * quarter between two powers of two (roundup_power2_next_division):
 * 3000 -> 3072 (quarters of 2048: 512), 5 MiB + 1 -> 6 MiB, 1 GiB + 1 ->
 * 1.25 GiB; a power of two stays; 1200 <= 2048 keeps 512 B rounding
 * (1536). With 1 division nothing changes. */
START_TEST(test_caching_roundup_power2)
{
  ooc_alloc_config c = { .options = "roundup_power2_divisions=4" };
  ooc_alloc_config one = { .options = "roundup_power2_divisions=1" };

  ck_assert_uint_eq(ooc_alloc_footprint(&ooc_alloc_caching, &c, 3000), 3072);
  ck_assert_uint_eq(ooc_alloc_footprint(&ooc_alloc_caching, &c, 5 * MIB + 1),
                    6 * MIB);
  ck_assert_uint_eq(ooc_alloc_footprint(&ooc_alloc_caching, &c,
                                        1024 * MIB + 1), 1280 * MIB);
  ck_assert_uint_eq(ooc_alloc_footprint(&ooc_alloc_caching, &c, 4 * MIB),
                    4 * MIB);
  ck_assert_uint_eq(ooc_alloc_footprint(&ooc_alloc_caching, &c, 1200), 1536);
  ck_assert_uint_eq(ooc_alloc_footprint(&ooc_alloc_caching, &one,
                                        5 * MIB + 1), 5 * MIB + 512);
  open_alloc("caching:roundup_power2_divisions=4", 64 * MIB, 4);
  ck_assert_int_eq(A(0, 5 * MIB + 1), OOC_OK);
  P(0, 0, 0, 6 * MIB);
}
END_TEST

/* expandable_segments, budget 100 MiB: the large pool's range is 9/8 of
 * the budget in 20 MiB pages, 6 pages = 120 MiB.
 *   0: 30 MiB: a new range (VA_RESERVE 0, [0, 120 MiB)); pages 0 and 1
 *      created and mapped ([0, 40 MiB)); split: [0, 30) live, [30, 40)
 *      cached
 *   1: 30 MiB: no cached block; the lowest free space that holds it
 *      starts at the cached [30, 40) before the unmapped [40, 120): page 2
 *      mapped, merged: [30, 60)
 *   free 0: [0, 30) cached
 *   2: 50 MiB: 60 + 50 > 100 MiB: release_cached_blocks unmaps the whole
 *      pages of every cached block: page 0 ([0, 20)), leaving [20, 30)
 *      cached; the retry finds [0, 20) + [20, 30) too small (30 < 50) and
 *      takes [60, 120): pages 3-5 with chunk ids 0 (the one given back),
 *      3 and 4; [60, 110) live, [110, 120) cached
 *   free 1, free 2: [20, 120) is one cached block
 *   3: 200 MiB never fits: everything is unmapped and released, the range
 *      becomes wholly unmapped and is given back (VA_FREE); OOM */
START_TEST(test_caching_expandable)
{
  ooc_alloc_stats st;
  const uint64_t pg = 20 * MIB;

  open_alloc("caching:expandable_segments", 100 * MIB, 8);
  ck_assert_int_eq(A(0, 30 * MIB), OOC_OK);
  P(0, 0, 0, 30 * MIB);
  EXPECT(RESERVE(0, 0, 120 * MIB), CREATE(0, pg), CREATE(1, pg),
         MAP(0, 0, pg), MAP(1, pg, pg));
  ck_assert_int_eq(A(1, 30 * MIB), OOC_OK);
  P(1, 0, 30 * MIB, 30 * MIB);
  EXPECT(CREATE(2, pg), MAP(2, 2 * pg, pg));
  F(0);
  ck_assert_int_eq(A(2, 50 * MIB), OOC_OK);
  P(2, 0, 60 * MIB, 50 * MIB);
  EXPECT(UNMAP(0, 0, pg), RELEASE(0, pg), CREATE(0, pg), CREATE(3, pg),
         CREATE(4, pg), MAP(0, 3 * pg, pg), MAP(3, 4 * pg, pg),
         MAP(4, 5 * pg, pg));
  st = S();
  ck_assert_uint_eq(st.reserved, 100 * MIB);
  ck_assert_uint_eq(st.allocated, 80 * MIB);
  ck_assert_uint_eq(st.n_mallocs, 6);
  ck_assert_uint_eq(st.n_releases, 1);
  F(1);
  F(2);
  expect_none();
  ck_assert_int_eq(A(3, 200 * MIB), OOC_EOOM);
  EXPECT(UNMAP(1, pg, pg), RELEASE(1, pg), UNMAP(2, 2 * pg, pg),
         RELEASE(2, pg), UNMAP(0, 3 * pg, pg), RELEASE(0, pg),
         UNMAP(3, 4 * pg, pg), RELEASE(3, pg), UNMAP(4, 5 * pg, pg),
         RELEASE(4, pg), VA_FREE(0, 0, 120 * MIB));
  st = S();
  ck_assert_uint_eq(st.reserved, 0);
  ck_assert_uint_eq(st.allocated, 0);
}
END_TEST

/* Best fit counts the unmapped space after a block (get_free_block's
 * expandable_size), budget 100 MiB:
 *   0: 12 MiB: page 0 mapped, [0, 12) live, [12, 20) cached
 *   1: 8 MiB takes [12, 20)
 *   2: 30 MiB maps pages 1-2: [20, 50) live, [50, 60) cached, next to the
 *      unmapped [60, 120)
 *   free 0: [0, 12) cached
 *   3: 10 MiB: by size the first fit is [50, 60) (10 MiB), but it can grow
 *      to 70 MiB; the next block, [0, 12), can grow to only 12: 3 takes
 *      [0, 10) and [10, 12) stays cached. No action. */
START_TEST(test_caching_expandable_best_fit)
{
  open_alloc("caching:expandable_segments", 100 * MIB, 8);
  ck_assert_int_eq(A(0, 12 * MIB), OOC_OK);
  ck_assert_int_eq(A(1, 8 * MIB), OOC_OK);
  P(1, 0, 12 * MIB, 8 * MIB);
  ck_assert_int_eq(A(2, 30 * MIB), OOC_OK);
  P(2, 0, 20 * MIB, 30 * MIB);
  F(0);
  n_log = 0;
  ck_assert_int_eq(A(3, 10 * MIB), OOC_OK);
  P(3, 0, 0, 10 * MIB);
  expect_none();
  ck_assert_uint_eq(S().reserved, 60 * MIB);
}
END_TEST

/* Small requests under expandable segments use 2 MiB pages in the small
 * pool's own range (after the large pool's, if any): 0 = 1000 B maps one
 * page of a 114 MiB range (57 pages: 9/8 of 100 MiB in 2 MiB pages). */
START_TEST(test_caching_expandable_small)
{
  open_alloc("caching:expandable_segments", 100 * MIB, 8);
  ck_assert_int_eq(A(0, 1000), OOC_OK);
  P(0, 0, 0, 1024);
  EXPECT(RESERVE(0, 0, 114 * MIB), CREATE(0, 2 * MIB), MAP(0, 0, 2 * MIB));
}
END_TEST

/* --- bestfit (nnabla) ---------------------------------------------------- */

/* Size classes and segments, budget 8 MiB:
 *   0: 1000 B -> 1024 (512 B steps under 1 MiB), small: a new 1 MiB
 *      segment (small_alloc_), split
 *   1: 1 MiB -> 1 MiB (128 KiB steps from 1 MiB), still small (<= 1 MiB):
 *      the small cache's 1 MiB - 1 KiB block is too small: a new 1 MiB
 *      segment, whole
 *   2: 1 MiB + 1 -> 1.125 MiB, large: a segment of exactly that (PyTorch
 *      would take 20 MiB)
 *   free 2: cached in the large class
 *   3: 600 KiB (small) takes from the small cache, not the large block
 *   4: 2 MiB: a new 2 MiB segment (the 1.125 MiB block is too small)
 *   5: 3 MiB: 5.125 + 3 > 8 MiB: alloc_retry frees the unused caches
 *      (the whole 1.125 MiB segment) and retries: id 2 again
 *   free 4; 6: 1.5 MiB takes the 2 MiB block whole: 0.5 MiB left is under
 *      1 MiB + 1
 *   free 5; 7: 2 MiB takes the 3 MiB block whole: 1 MiB left is under
 *      1 MiB + 1 too */
START_TEST(test_bestfit_classes)
{
  const uint64_t s2 = MIB + 128 * KIB;

  open_alloc("bestfit", 8 * MIB, 8);
  ck_assert_int_eq(A(0, 1000), OOC_OK);
  P(0, 0, 0, 1024);
  ck_assert_int_eq(A(1, MIB), OOC_OK);
  P(1, 1, MIB, MIB);
  ck_assert_int_eq(A(2, MIB + 1), OOC_OK);
  P(2, 2, 2 * MIB, s2);
  F(2);
  ck_assert_int_eq(A(3, 600 * KIB), OOC_OK);
  P(3, 0, 1024, 600 * KIB);
  ck_assert_int_eq(A(4, 2 * MIB), OOC_OK);
  P(4, 3, 2 * MIB + s2, 2 * MIB);
  ck_assert_int_eq(A(5, 3 * MIB), OOC_OK);
  P(5, 2, 4 * MIB + s2, 3 * MIB);
  EXPECT(SEG_MALLOC(0, 0, MIB), SEG_MALLOC(1, MIB, MIB),
         SEG_MALLOC(2, 2 * MIB, s2), SEG_MALLOC(3, 2 * MIB + s2, 2 * MIB),
         SEG_FREE(2, 2 * MIB, s2), SEG_MALLOC(2, 4 * MIB + s2, 3 * MIB));
  F(4);
  ck_assert_int_eq(A(6, 3 * MIB / 2), OOC_OK);
  P(6, 3, 2 * MIB + s2, 2 * MIB);
  F(5);
  ck_assert_int_eq(A(7, 2 * MIB), OOC_OK);
  P(7, 2, 4 * MIB + s2, 3 * MIB);
  ck_assert_uint_eq(S().reserved, 7 * MIB);
  ck_assert_uint_eq(ooc_alloc_footprint(cur, &(ooc_alloc_config){ 0 },
                                        MIB + 1), s2);
  ck_assert_uint_eq(ooc_alloc_footprint(cur, &(ooc_alloc_config){ 0 }, 1),
                    512);
}
END_TEST

/* A freed block merges with its free neighbours in its segment and goes
 * back to its class: in one 1 MiB small segment, 0, 1, 2 of 256 KiB; free
 * 0 and 2, then 1: one free 1 MiB block again (a 1 MiB request takes it,
 * no new segment). */
START_TEST(test_bestfit_merge)
{
  open_alloc("bestfit", 8 * MIB, 8);
  ck_assert_int_eq(A(0, 256 * KIB), OOC_OK);
  ck_assert_int_eq(A(1, 256 * KIB), OOC_OK);
  ck_assert_int_eq(A(2, 256 * KIB), OOC_OK);
  P(2, 0, 512 * KIB, 256 * KIB);
  F(0);
  F(2);
  F(1);
  ck_assert_int_eq(A(3, MIB), OOC_OK);
  P(3, 0, 0, MIB);
  EXPECT(SEG_MALLOC(0, 0, MIB));
}
END_TEST

/* --- pool (SuperNeurons) ------------------------------------------------- */

/* 1 KiB blocks, first fit, coalescing, a 9 KiB pool (budget 9 KiB + 100 B
 * rounds down):
 *   0: 3 KiB at 0; 1: 1 KiB at 3; 2: 1 B -> 1 KiB at 4; 3: 1 KiB at 5
 *   free 0, free 2: free [0, 3), [4, 5), [6, 9) KiB
 *   4: 1000 B -> 1 KiB: first fit at 0 (best fit would take [4, 5))
 *   free 1: [1, 3) + [3, 4) + [4, 5) coalesce into [1, 5)
 *   5: 4 KiB at 1 KiB (only the coalesced range holds it)
 *   6: 3073 B -> 4 KiB: only [6, 9) is left: OOM
 * One SEG_MALLOC of 9 KiB; reserved is the high-water mark, 6 KiB. */
START_TEST(test_pool_first_fit)
{
  ooc_alloc_stats st;

  open_alloc("pool", 9 * KIB + 100, 8);
  ck_assert_int_eq(A(0, 3 * KIB), OOC_OK);
  ck_assert_int_eq(A(1, KIB), OOC_OK);
  ck_assert_int_eq(A(2, 1), OOC_OK);
  ck_assert_int_eq(A(3, KIB), OOC_OK);
  P(2, 0, 4 * KIB, KIB);
  F(0);
  F(2);
  ck_assert_int_eq(A(4, 1000), OOC_OK);
  P(4, 0, 0, KIB);
  F(1);
  ck_assert_int_eq(A(5, 4 * KIB), OOC_OK);
  P(5, 0, KIB, 4 * KIB);
  ck_assert_int_eq(A(6, 3 * KIB + 1), OOC_EOOM);
  EXPECT(SEG_MALLOC(0, 0, 9 * KIB));
  st = S();
  ck_assert_uint_eq(st.allocated, 1000 + KIB + 4 * KIB);
  ck_assert_uint_eq(st.reserved, 6 * KIB);
  ck_assert_uint_eq(st.largest_free, 3 * KIB);
  ck_assert_uint_eq(st.n_mallocs, 1);
}
END_TEST

/* --- va ------------------------------------------------------------------ */

/* Internal fragmentation: 3 MiB takes 2 chunks (1 MiB lost), 1 B (under
 * half a chunk: small) opens a small segment of 1 chunk, 4 MiB takes
 * exactly 2: reserved 10 MiB for 7 MiB + 1 B, under one chunk lost per
 * live tensor. 100 MiB = 50 chunks, 45 left: 90 MiB + 1 B does not fit,
 * 90 MiB does. */
START_TEST(test_va_internal)
{
  ooc_alloc_stats st;

  open_alloc("va", 100 * MIB, 4);
  ck_assert_int_eq(A(0, 3 * MIB), OOC_OK);
  ck_assert_int_eq(A(1, 1), OOC_OK);
  ck_assert_int_eq(A(2, 4 * MIB), OOC_OK);
  P(0, 0, 0, 4 * MIB);
  P(1, 1, 4 * MIB, 512);
  P(2, 2, 6 * MIB, 4 * MIB);
  st = S();
  ck_assert_uint_eq(st.allocated, 7 * MIB + 1);
  ck_assert_uint_eq(st.reserved, 10 * MIB);
  ck_assert_uint_lt(st.reserved - st.allocated, 3 * 2 * MIB);
  ck_assert_int_eq(A(3, 90 * MIB + 1), OOC_EOOM);
  ck_assert_int_eq(A(3, 90 * MIB), OOC_OK);
}
END_TEST

/* The small path, 2 MiB chunks, budget 8 MiB = 4 chunks:
 *   0: 100 B: a small segment: new range 0, chunk 0; [0, 512) live
 *   1: 1 MiB is not under half a chunk: large, 1 chunk behind range 1
 *   2: 1 MiB - 512: small, best fit in segment 0 at 512
 *   free 0, free 2: segment 0 wholly free: chunk 0 unmapped and cached,
 *      range 0 kept
 *   3: 3 MiB = 2 chunks: cached chunk 0 and new chunk 2, new range 2
 *   4: 10 B: a small segment again: range 0 reused (no VA_RESERVE), the
 *      last chunk (3) created
 *   5: 2 MiB: no chunk left: OOM */
START_TEST(test_va_small)
{
  const uint64_t c = 2 * MIB;

  open_alloc("va", 8 * MIB, 8);
  ck_assert_int_eq(A(0, 100), OOC_OK);
  P(0, 0, 0, 512);
  ck_assert_int_eq(A(1, MIB), OOC_OK);
  P(1, 1, c, c);
  ck_assert_int_eq(A(2, MIB - 512), OOC_OK);
  P(2, 0, 512, MIB - 512);
  F(0);
  F(2);
  ck_assert_int_eq(A(3, 3 * MIB), OOC_OK);
  P(3, 2, 2 * c, 2 * c);
  ck_assert_int_eq(A(4, 10), OOC_OK);
  P(4, 0, 0, 512);
  EXPECT(RESERVE(0, 0, c), CREATE(0, c), MAP(0, 0, c),
         RESERVE(1, c, c), CREATE(1, c), MAP(1, c, c),
         UNMAP(0, 0, c),
         RESERVE(2, 2 * c, 2 * c), MAP(0, 2 * c, c), CREATE(2, c),
         MAP(2, 3 * c, c),
         CREATE(3, c), MAP(3, 0, c));
  ck_assert_int_eq(A(5, c), OOC_EOOM);
  expect_none();
  ck_assert_uint_eq(S().reserved, 4 * c);
}
END_TEST

/* Many small tensors share segments: 64 requests of 100,000 B (100,352
 * rounded) fill 3 segments of 2 MiB (20 per segment: 20 x 100,352 =
 * 2,007,040 <= 2 MiB < 21 x), the 4th holds the last 4: reserved 8 MiB
 * where whole chunks would take 128 MiB. */
START_TEST(test_va_many_small)
{
  int i;

  open_alloc("va", 64 * MIB, 64);
  for (i = 0; i < 64; i++)
    ck_assert_int_eq(A(i, 100000), OOC_OK);
  ck_assert_uint_eq(S().reserved, 8 * MIB);
  P(20, 1, 2 * MIB, 100352);
  P(63, 3, 6 * MIB + 3 * 100352, 100352);
}
END_TEST

/* Virtual ranges are recycled: a pattern of large requests repeated five
 * times, everything freed at the end of each, reserves ranges only the
 * first time; ranges of each size never outnumber the live ones at the
 * worst moment. */
START_TEST(test_va_ranges_recycled)
{
  static const uint64_t sz[6] = { 6 * MIB, 2 * MIB, 6 * MIB, 10 * MIB,
                                  2 * MIB, 3 * MIB };
  int it, i, reserves_first = 0;

  open_alloc("va", 64 * MIB, 8);
  for (it = 0; it < 5; it++) {
    int reserves = 0;
    for (i = 0; i < 6; i++) {
      ck_assert_int_eq(A(i, sz[i]), OOC_OK);
      if (i == 3)
        F(0);
    }
    for (i = 1; i < 6; i++)
      F(i);
    for (i = 0; i < n_log; i++)
      reserves += log_[i].kind == OOC_DRV_VA_RESERVE;
    n_log = 0;
    if (it == 0)
      reserves_first = reserves;
    else
      ck_assert_int_eq(reserves, 0);
  }
  /* Ranges of 6, 2, 6, 10, 2 and 4 MiB (3 MiB takes 2 chunks): 0 is
   * freed before 4 and 5 are taken, but its 6 MiB range fits neither
   * exactly, so the first time reserves six ranges, and none after. */
  ck_assert_int_eq(reserves_first, 6);
}
END_TEST

/* --- conformance --------------------------------------------------------- */

#define MAX_ID 4096

/* A model of the driver: what exists, checked action by action. */
static struct {
  struct { uint64_t addr, bytes; int live; } seg[MAX_ID], rng[MAX_ID];
  struct { uint64_t addr, bytes; int created, mapped; } chunk[MAX_ID];
  int32_t seg_hi, rng_hi, chunk_hi;
  uint64_t held;          /* live segment bytes + created chunk bytes */
  uint64_t hash;          /* FNV-1a of every action and placement */
  long n_actions;
} drv;
static const char *spec_now;   /* the policy under test, for messages */

static void
mix(uint64_t v)
{
  int i;

  for (i = 0; i < 8; i++) {
    drv.hash ^= (v >> (8 * i)) & 0xff;
    drv.hash *= 1099511628211ull;
  }
}

/* Does [a, a + n) overlap a live segment or range other than itself? */
static int
overlaps_space(uint64_t a, uint64_t n)
{
  int32_t i;

  for (i = 0; i < drv.seg_hi; i++)
    if (drv.seg[i].live && a < drv.seg[i].addr + drv.seg[i].bytes &&
        drv.seg[i].addr < a + n)
      return 1;
  for (i = 0; i < drv.rng_hi; i++)
    if (drv.rng[i].live && a < drv.rng[i].addr + drv.rng[i].bytes &&
        drv.rng[i].addr < a + n)
      return 1;
  return 0;
}

/* Bytes of [a, a + n) that mapped chunks cover. */
static uint64_t
mapped_over(uint64_t a, uint64_t n)
{
  uint64_t sum = 0;
  int32_t i;

  for (i = 0; i < drv.chunk_hi; i++)
    if (drv.chunk[i].mapped) {
      uint64_t lo = drv.chunk[i].addr > a ? drv.chunk[i].addr : a;
      uint64_t hi = drv.chunk[i].addr + drv.chunk[i].bytes < a + n
                        ? drv.chunk[i].addr + drv.chunk[i].bytes : a + n;
      if (hi > lo)
        sum += hi - lo;
    }
  return sum;
}

/* An action the driver would refuse fails the test, naming the policy. */
#define DRV_ASSERT(cond, a, why)                                           \
  ck_assert_msg(cond, "%s: %s %d: %s", spec_now,                           \
                ooc_drv_kind_name((ooc_drv_kind)(a)->kind), (a)->id, why)

static int
check_act(void *ctx, const ooc_drv_action *a)
{
  int32_t id = a->id;

  (void)ctx;
  drv.n_actions++;
  mix(a->kind);
  mix((uint64_t)id);
  mix(a->addr);
  mix(a->bytes);
  DRV_ASSERT(id >= 0 && id < MAX_ID, a, "id out of range");
  switch (a->kind) {
  case OOC_DRV_SEG_MALLOC:
    DRV_ASSERT(id <= drv.seg_hi && !drv.seg[id].live, a,
               "not a free dense id");
    DRV_ASSERT(a->bytes > 0 && !overlaps_space(a->addr, a->bytes), a,
               "overlaps a segment or range");
    drv.seg[id].addr = a->addr;
    drv.seg[id].bytes = a->bytes;
    drv.seg[id].live = 1;
    drv.held += a->bytes;
    if (id == drv.seg_hi)
      drv.seg_hi++;
    break;
  case OOC_DRV_SEG_FREE:
    DRV_ASSERT(id < drv.seg_hi && drv.seg[id].live &&
               drv.seg[id].addr == a->addr && drv.seg[id].bytes == a->bytes,
               a, "no such segment");
    drv.seg[id].live = 0;
    drv.held -= a->bytes;
    break;
  case OOC_DRV_VA_RESERVE:
    DRV_ASSERT(id <= drv.rng_hi && !drv.rng[id].live, a,
               "not a free dense id");
    DRV_ASSERT(a->bytes > 0 && !overlaps_space(a->addr, a->bytes), a,
               "overlaps a segment or range");
    drv.rng[id].addr = a->addr;
    drv.rng[id].bytes = a->bytes;
    drv.rng[id].live = 1;
    if (id == drv.rng_hi)
      drv.rng_hi++;
    break;
  case OOC_DRV_VA_FREE:
    DRV_ASSERT(id < drv.rng_hi && drv.rng[id].live &&
               drv.rng[id].addr == a->addr && drv.rng[id].bytes == a->bytes,
               a, "no such range");
    DRV_ASSERT(mapped_over(a->addr, a->bytes) == 0, a, "still mapped");
    drv.rng[id].live = 0;
    break;
  case OOC_DRV_CHUNK_CREATE:
    DRV_ASSERT(id <= drv.chunk_hi && !drv.chunk[id].created, a,
               "not a free dense id");
    drv.chunk[id].created = 1;
    drv.chunk[id].bytes = a->bytes;
    drv.held += a->bytes;
    if (id == drv.chunk_hi)
      drv.chunk_hi++;
    break;
  case OOC_DRV_CHUNK_MAP: {
    int32_t r, inside = 0;
    DRV_ASSERT(id < drv.chunk_hi && drv.chunk[id].created &&
               !drv.chunk[id].mapped && drv.chunk[id].bytes == a->bytes, a,
               "not created, or mapped");
    for (r = 0; r < drv.rng_hi; r++)
      if (drv.rng[r].live && a->addr >= drv.rng[r].addr &&
          a->addr + a->bytes <= drv.rng[r].addr + drv.rng[r].bytes)
        inside = 1;
    DRV_ASSERT(inside, a, "outside every range");
    DRV_ASSERT(mapped_over(a->addr, a->bytes) == 0, a,
               "over another mapping");
    drv.chunk[id].mapped = 1;
    drv.chunk[id].addr = a->addr;
    break;
  }
  case OOC_DRV_CHUNK_UNMAP:
    DRV_ASSERT(id < drv.chunk_hi && drv.chunk[id].mapped &&
               drv.chunk[id].addr == a->addr, a, "not mapped there");
    drv.chunk[id].mapped = 0;
    break;
  case OOC_DRV_CHUNK_RELEASE:
    DRV_ASSERT(id < drv.chunk_hi && drv.chunk[id].created &&
               !drv.chunk[id].mapped, a, "not created, or mapped");
    drv.chunk[id].created = 0;
    drv.held -= drv.chunk[id].bytes;
    break;
  default:
    ck_abort_msg("%s: unknown action kind %d", spec_now, a->kind);
  }
  return OOC_OK;
}

static const ooc_drv_sink check_sink = { .act = check_act };

/* A fixed-seed generator (64-bit LCG, high bits). */
static uint32_t
rnd(uint64_t *s)
{
  *s = *s * 6364136223846793005ull + 1442695040888963407ull;
  return (uint32_t)(*s >> 33);
}

/* One pass of the pattern over state st of allocator t under budget;
 * returns the hash of its actions and placements. */
static uint64_t
conform_pass(const char *spec, const ooc_allocator_type *t, void *st,
             uint64_t budget, int expandable)
{
  enum { NH = 32, STEPS = 3000 };
  ooc_placement where[NH];
  uint64_t live[NH] = { 0 }, sum = 0, seed = 20240607;
  int step, h, k;

  spec_now = spec;
  memset(&drv, 0, sizeof drv);
  drv.hash = 1469598103934665603ull;
  for (step = 0; step < STEPS; step++) {
    ooc_alloc_stats s0, s1;
    uint32_t r = rnd(&seed);

    h = (int)(r % NH);
    t->stats(st, &s0);
    if (live[h]) {
      ck_assert_int_eq(t->free(st, h, &check_sink), OOC_OK);
      sum -= live[h];
      live[h] = 0;
    } else {
      uint32_t kind = rnd(&seed) % 16, v = rnd(&seed);
      uint64_t b = kind < 6   ? 1 + v % (512 * KIB)
                   : kind < 12 ? 1 + v % (12 * MIB)
                   : kind < 15 ? 1 + v % (40 * MIB)
                               : (v & 1 ? 0 : budget + 1 + v % MIB);
      int rc = t->alloc(st, h, b, &where[h], &check_sink);

      mix(where[h].seg < 0 ? 0 : (uint64_t)where[h].seg + 1);
      mix(where[h].addr);
      mix(where[h].size);
      if (rc == OOC_EOOM) {
        char why[160] = "";
        t->stats(st, &s1);
        ck_assert_msg(s1.allocated == s0.allocated,
                      "%s: OOM changed allocated", spec);
        ck_assert_msg(expandable || s1.reserved <= s0.reserved,
                      "%s: OOM reserved more", spec);
        t->explain(st, b, why, sizeof why);
        ck_assert_msg(why[0] != '\0', "%s: no explanation", spec);
      } else {
        ck_assert_msg(rc == OOC_OK, "%s: alloc %d", spec, rc);
        ck_assert_msg(b > 0 || where[h].seg == -1, "%s: 0 B placed", spec);
        if (b > 0) {
          const ooc_placement *p = &where[h];
          int in_seg = p->seg < drv.seg_hi && drv.seg[p->seg].live &&
                       p->addr >= drv.seg[p->seg].addr &&
                       p->addr + p->size <=
                           drv.seg[p->seg].addr + drv.seg[p->seg].bytes;
          int in_rng = p->seg < drv.rng_hi && drv.rng[p->seg].live &&
                       p->addr >= drv.rng[p->seg].addr &&
                       p->addr + p->size <=
                           drv.rng[p->seg].addr + drv.rng[p->seg].bytes &&
                       mapped_over(p->addr, p->size) == p->size;
          ck_assert_msg(p->size >= b, "%s: block under the request", spec);
          ck_assert_msg(in_seg || in_rng, "%s: block %d at %llu+%llu in no "
                        "live segment or mapped range", spec, p->seg,
                        (unsigned long long)p->addr,
                        (unsigned long long)p->size);
          for (k = 0; k < NH; k++)
            ck_assert_msg(k == h || !live[k] || where[k].seg != p->seg ||
                          where[k].addr + where[k].size <= p->addr ||
                          p->addr + p->size <= where[k].addr,
                          "%s: blocks of %d and %d overlap", spec, h, k);
        }
        live[h] = b;
        sum += b;
        if (b == 0)
          live[h] = 0;
      }
    }
    t->stats(st, &s1);
    {
      uint64_t ua, ur;
      t->usage(st, &ua, &ur);
      ck_assert_uint_eq(ua, s1.allocated);
      ck_assert_uint_eq(ur, s1.reserved);
    }
    ck_assert_msg(s1.allocated == sum, "%s: allocated %llu, live %llu",
                  spec, (unsigned long long)s1.allocated,
                  (unsigned long long)sum);
    ck_assert_msg(s1.allocated <= s1.reserved && s1.reserved <= budget,
                  "%s: allocated %llu reserved %llu budget %llu", spec,
                  (unsigned long long)s1.allocated,
                  (unsigned long long)s1.reserved,
                  (unsigned long long)budget);
    ck_assert_msg(strcmp(t->name, "pool") == 0 ? s1.reserved <= drv.held
                                               : s1.reserved == drv.held,
                  "%s: reserved %llu, the driver holds %llu", spec,
                  (unsigned long long)s1.reserved,
                  (unsigned long long)drv.held);
  }
  for (h = 0; h < NH; h++)
    if (live[h]) {
      ck_assert_int_eq(t->free(st, h, &check_sink), OOC_OK);
      live[h] = 0;
    }
  {
    ooc_alloc_stats s1;
    t->stats(st, &s1);
    ck_assert_uint_eq(s1.allocated, 0);
  }
  ck_assert_msg(drv.n_actions > 0, "%s: no action at all", spec);
  return drv.hash;
}

/* Every registered policy, and caching with each option: the same seeded
 * pattern, checked against the driver model; the same pattern after a
 * reset, and on a fresh state, gives the same actions and placements. */
START_TEST(test_conformance)
{
  static const char *const extra[] = {
    "caching:expandable_segments", "caching:max_split_size_mb=20",
    "caching:roundup_power2_divisions=4", NULL,
  };
  const uint64_t budget = 128 * MIB;
  int k, n_types = 0;

  while (ooc_allocator_types[n_types] != NULL)
    n_types++;
  for (k = 0; ; k++) {
    const char *spec;
    const ooc_allocator_type *t;
    ooc_alloc_config cfg = { .budget = budget, .n_handles = 32, .hw = &hw };
    uint64_t h1, h2, h3;
    void *st;
    ooc_alloc_stats s;

    if (k < n_types)
      spec = ooc_allocator_types[k]->name;
    else if (extra[k - n_types] != NULL)
      spec = extra[k - n_types];
    else
      break;
    t = ooc_allocator_find(spec, &cfg.options, NULL);
    ck_assert_ptr_nonnull(t);
    ck_assert_ptr_nonnull(t->explain);
    ck_assert_ptr_nonnull(t->summary);
    ck_assert_ptr_nonnull(t->cite);
    st = calloc(1, t->state_size);
    ck_assert_int_eq(t->init(st, &cfg, NULL), OOC_OK);
    h1 = conform_pass(spec, t, st, budget, strstr(spec, "expandable") != 0);
    t->reset(st);
    t->stats(st, &s);
    ck_assert_uint_eq(s.allocated, 0);
    ck_assert_uint_eq(s.reserved, 0);
    h2 = conform_pass(spec, t, st, budget, strstr(spec, "expandable") != 0);
    ck_assert_msg(h1 == h2, "%s: not the same after reset", spec);
    t->fini(st);
    memset(st, 0, t->state_size);
    ck_assert_int_eq(t->init(st, &cfg, NULL), OOC_OK);
    h3 = conform_pass(spec, t, st, budget, strstr(spec, "expandable") != 0);
    ck_assert_msg(h1 == h3, "%s: not the same on a fresh state", spec);
    t->fini(st);
    free(st);
  }
  ck_assert_int_eq(n_types, 5);
  ck_assert_int_eq(k, 8);
}
END_TEST

/* A request of 0 bytes takes nothing under every policy: placement
 * (-1, 0, 0), no action, and freeing it sends none either. */
START_TEST(test_zero_bytes)
{
  int k;

  for (k = 0; ooc_allocator_types[k] != NULL; k++) {
    open_alloc(ooc_allocator_types[k]->name, 8 * MIB, 4);
    pl[0] = (ooc_placement){ .seg = 7, .addr = 7, .size = 7 };
    ck_assert_int_eq(A(0, 0), OOC_OK);
    P(0, -1, 0, 0);
    F(0);
    expect_none();
    ck_assert_uint_eq(S().allocated, 0);
    teardown();
  }
}
END_TEST

/* --- lookup and options -------------------------------------------------- */

static const char *
find_msg(const char *spec, int code)
{
  static ooc_err err;
  const char *opts = "x";

  ooc_err_clear(&err);
  ck_assert_ptr_null(ooc_allocator_find(spec, &opts, &err));
  ck_assert_ptr_null(opts);
  ck_assert_int_eq(err.code, code);
  return err.msg;
}

static const char *
init_msg(const char *spec)
{
  static ooc_err err;
  ooc_alloc_config cfg = { .budget = MIB, .n_handles = 4, .hw = &hw };
  const ooc_allocator_type *t;
  void *st;

  ooc_err_clear(&err);
  t = ooc_allocator_find(spec, &cfg.options, &err);
  ck_assert_msg(t != NULL, "%s", err.msg);
  st = calloc(1, t->state_size);
  ck_assert_int_eq(t->init(st, &cfg, &err), OOC_EINVAL);
  free(st);
  return err.msg;
}

START_TEST(test_find)
{
  const char *opts = NULL;

  ck_assert_ptr_eq(ooc_allocator_find("va", &opts, NULL), &ooc_alloc_va);
  ck_assert_ptr_null(opts);
  ck_assert_ptr_eq(ooc_allocator_find("caching:expandable_segments", &opts,
                                      NULL), &ooc_alloc_caching);
  ck_assert_str_eq(opts, "expandable_segments");
  ck_assert_ptr_eq(ooc_allocator_find("bestfit", NULL, NULL),
                   &ooc_alloc_bestfit);
  ck_assert_str_eq(find_msg("buddy", OOC_ENOTFOUND),
                   "unknown allocator 'buddy' (valid: ideal, caching, "
                   "bestfit, pool, va)");
  ck_assert_str_eq(find_msg("cach:expandable_segments", OOC_ENOTFOUND),
                   "unknown allocator 'cach' (valid: ideal, caching, "
                   "bestfit, pool, va)");
  ck_assert_str_eq(find_msg("caching:foo", OOC_EINVAL),
                   "allocator 'caching': unknown option 'foo' (valid: "
                   "expandable_segments, max_split_size_mb, "
                   "roundup_power2_divisions)");
  ck_assert_str_eq(find_msg("caching:expandable_segments:bar=1",
                            OOC_EINVAL),
                   "allocator 'caching': unknown option 'bar' (valid: "
                   "expandable_segments, max_split_size_mb, "
                   "roundup_power2_divisions)");
  ck_assert_str_eq(find_msg("pool:expandable_segments", OOC_EINVAL),
                   "allocator 'pool': unknown option 'expandable_segments' "
                   "(it takes no options)");
  ck_assert_str_eq(find_msg("caching:expandable_segments:"
                            "expandable_segments", OOC_EINVAL),
                   "allocator 'caching': option 'expandable_segments' "
                   "given twice");
  ck_assert_str_eq(find_msg("caching::expandable_segments", OOC_EINVAL),
                   "allocator 'caching': empty option in "
                   "':expandable_segments'");
  ck_assert_str_eq(find_msg("caching:expandable_segments:", OOC_EINVAL),
                   "allocator 'caching': empty option in "
                   "'expandable_segments:'");
}
END_TEST

START_TEST(test_option_values)
{
  const char *v;
  size_t n;

  ck_assert_str_eq(init_msg("caching:max_split_size_mb=19"),
                   "allocator 'caching': max_split_size_mb must be an "
                   "integer >= 20 (MiB), got '19'");
  ck_assert_str_eq(init_msg("caching:max_split_size_mb"),
                   "allocator 'caching': max_split_size_mb must be an "
                   "integer >= 20 (MiB), got ''");
  ck_assert_str_eq(init_msg("caching:max_split_size_mb=2x"),
                   "allocator 'caching': max_split_size_mb must be an "
                   "integer >= 20 (MiB), got '2x'");
  ck_assert_str_eq(init_msg("caching:roundup_power2_divisions=3"),
                   "allocator 'caching': roundup_power2_divisions must be a "
                   "power of 2 from 1 to 1073741824, got '3'");
  ck_assert_str_eq(init_msg("caching:roundup_power2_divisions=0"),
                   "allocator 'caching': roundup_power2_divisions must be a "
                   "power of 2 from 1 to 1073741824, got '0'");
  ck_assert_str_eq(init_msg("caching:expandable_segments=True"),
                   "allocator 'caching': option 'expandable_segments' "
                   "takes no value");
  ck_assert_str_eq(init_msg("caching:expandable_segments:"
                            "max_split_size_mb=20"),
                   "allocator 'caching': max_split_size_mb cannot be "
                   "combined with expandable_segments");
  ck_assert_int_eq(ooc_alloc_option("a=1:bb:c=xyz", "c", &v, &n), 1);
  ck_assert_int_eq((int)n, 3);
  ck_assert_int_eq(strncmp(v, "xyz", n), 0);
  ck_assert_int_eq(ooc_alloc_option("a=1:bb:c=xyz", "bb", &v, &n), 1);
  ck_assert_ptr_null(v);
  ck_assert_int_eq(ooc_alloc_option("a=1:bb:c=xyz", "b", &v, &n), 0);
  ck_assert_int_eq(ooc_alloc_option(NULL, "a", &v, &n), 0);
  ck_assert_str_eq(ooc_drv_kind_name(OOC_DRV_CHUNK_MAP), "chunk_map");
  ck_assert_str_eq(ooc_drv_kind_name(OOC_DRV_VA_FREE), "va_free");
  ck_assert_str_eq(ooc_drv_kind_name(OOC_DRV_COUNT), "?");
}
END_TEST

/* ooc_alloc_footprint: what one request occupies under each policy, 2 MiB
 * chunks from the profile, 40 MiB from the configuration. */
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
  ck_assert_uint_eq(ooc_alloc_footprint(&ooc_alloc_bestfit, &cfg, 2 * MIB + 1),
                    2 * MIB + 128 * KIB);
  ck_assert_uint_eq(ooc_alloc_footprint(&ooc_alloc_pool, &cfg, 1000), 1024);
  ck_assert_uint_eq(ooc_alloc_footprint(&ooc_alloc_pool, &cfg, 1025), 2048);
  ck_assert_uint_eq(ooc_alloc_footprint(&ooc_alloc_pool, &cfg, 0), 0);
  ck_assert_uint_eq(ooc_alloc_footprint(&ooc_alloc_va, &cfg, 0), 0);
  ck_assert_uint_eq(ooc_alloc_footprint(&ooc_alloc_va, &cfg, 1), 512);
  ck_assert_uint_eq(ooc_alloc_footprint(&ooc_alloc_va, &cfg, MIB - 1), MIB);
  ck_assert_uint_eq(ooc_alloc_footprint(&ooc_alloc_va, &cfg, MIB), 2 * MIB);
  ck_assert_uint_eq(ooc_alloc_footprint(&ooc_alloc_va, &cfg, 3 * MIB),
                    4 * MIB);
  ck_assert_uint_eq(ooc_alloc_footprint(&ooc_alloc_va, &own, 4096), 4096);
  ck_assert_uint_eq(ooc_alloc_footprint(&ooc_alloc_va, &own, 20 * MIB - 1),
                    20 * MIB);
  ck_assert_uint_eq(ooc_alloc_footprint(&ooc_alloc_va, &own, 20 * MIB),
                    40 * MIB);
  ck_assert_uint_eq(ooc_alloc_footprint(&ooc_alloc_va, &own, 41 * MIB),
                    80 * MIB);
  ck_assert_uint_eq(ooc_alloc_footprint(&ooc_alloc_va, &none, 3 * MIB),
                    4 * MIB);
}
END_TEST

/* The free-block index of the best-fit policies (alloc/fittree.h): its
 * bins by hand, then 20,000 random inserts, removes, best fits and lower
 * bounds against a plain list searched by brute force, with sizes on and
 * around the bins' edges and repeated sizes at other addresses. */
static uint64_t fit_rng = 88172645463325252ull;

static uint64_t
fit_next(void)
{
  fit_rng ^= fit_rng << 13;
  fit_rng ^= fit_rng >> 7;
  fit_rng ^= fit_rng << 17;
  return fit_rng;
}

/* The first of ref[0..n) by (size, addr) at or after (size, addr). */
static int32_t
fit_ref(const ooc_fit_node *nodes, const int32_t *ref, int n, uint64_t size,
        uint64_t addr)
{
  int32_t best = -1;

  for (int k = 0; k < n; k++) {
    const ooc_fit_node *x = &nodes[ref[k]];
    if (x->size < size || (x->size == size && x->addr < addr))
      continue;
    if (best < 0 || x->size < nodes[best].size ||
        (x->size == nodes[best].size && x->addr < nodes[best].addr))
      best = ref[k];
  }
  return best;
}

/* The last of ref[0..n) by (size, addr), -1 when n = 0. */
static int32_t
fit_last(const ooc_fit_node *nodes, const int32_t *ref, int n)
{
  int32_t l = n > 0 ? ref[0] : -1;

  for (int k = 1; k < n; k++)
    if (nodes[ref[k]].size > nodes[l].size ||
        (nodes[ref[k]].size == nodes[l].size &&
         nodes[ref[k]].addr > nodes[l].addr))
      l = ref[k];
  return l;
}

static uint64_t
fit_size(const ooc_fit_node *nodes, const int32_t *ref, int n)
{
  int e = (int)(fit_next() % 64);
  uint64_t p = 1ull << e;

  switch (fit_next() % 7) {
  case 6: return UINT64_MAX;                   /* the last bin in use */
  case 0: return p;                            /* a bin's first size */
  case 1: return p - 1;                        /* the last of the one before */
  case 2: return p + (p >> 2);                 /* the second bin of 2^e */
  case 3: return n > 0 ? nodes[ref[fit_next() % (uint64_t)n]].size : p;
  case 4: /* just above a block: its bin may hold nothing large enough */
    if (n > 0 && nodes[ref[fit_next() % (uint64_t)n]].size < UINT64_MAX)
      return nodes[ref[fit_next() % (uint64_t)n]].size + 1;
    return p;
  default: return p + fit_next() % p;
  }
}

START_TEST(test_fittree_order)
{
  enum { N = 512 };
  static ooc_fit_node nodes[N];
  static ooc_fittree t;
  int32_t ref[N], unused[N];
  int n = 0, n_unused = N;
  uint64_t addr = 0;

  /* Sizes 0-3 a bin each, then four per power of two: 8, 9 | 10, 11 |
   * 12, 13 | 14, 15 for 2^3, and the largest size in bin 251. */
  ck_assert_int_eq(ooc_fittree_bin(3), 3);
  ck_assert_int_eq(ooc_fittree_bin(4), 4);
  ck_assert_int_eq(ooc_fittree_bin(7), 7);
  ck_assert_int_eq(ooc_fittree_bin(9), 8);
  ck_assert_int_eq(ooc_fittree_bin(10), 9);
  ck_assert_int_eq(ooc_fittree_bin(13), 10);
  ck_assert_int_eq(ooc_fittree_bin(15), 11);
  ck_assert_int_eq(ooc_fittree_bin(16), 12);
  ck_assert_int_eq(ooc_fittree_bin(UINT64_MAX), 251);
  for (uint64_t x = 1; x < 100000; x++)
    ck_assert_int_le(ooc_fittree_bin(x - 1), ooc_fittree_bin(x));

  for (int i = 0; i < N; i++)
    unused[i] = N - 1 - i;
  ooc_fittree_clear(&t);
  ck_assert_int_eq(ooc_fittree_last(&t, nodes), -1);
  ck_assert_uint_eq(ooc_fittree_largest(&t, nodes), 0);
  for (int step = 0; step < 20000; step++) {
    uint64_t op = fit_next() % 8, size = fit_size(nodes, ref, n);
    if (op < 3 && n_unused > 0) {              /* insert */
      int32_t id = unused[--n_unused];
      nodes[id] = (ooc_fit_node){ .size = size, .addr = addr++ };
      ooc_fittree_insert(&t, nodes, id);
      ref[n++] = id;
    } else if (op < 5 && n > 0) {              /* remove */
      int k = (int)(fit_next() % (uint64_t)n);
      ooc_fittree_remove(&t, nodes, ref[k]);
      unused[n_unused++] = ref[k];
      ref[k] = ref[--n];
    } else if (op < 7) {                       /* best fit */
      int32_t want = fit_ref(nodes, ref, n, size, 0);
      ck_assert_int_eq(ooc_fittree_take_best_fit(&t, nodes, size), want);
      for (int k = 0; want >= 0 && k < n; k++)
        if (ref[k] == want) {
          unused[n_unused++] = want;
          ref[k] = ref[--n];
          break;
        }
    } else {                                   /* lower bound */
      uint64_t a = addr > 0 ? fit_next() % addr : 0;
      if (n > 0 && fit_next() % 2) {           /* the block after one */
        const ooc_fit_node *x = &nodes[ref[fit_next() % (uint64_t)n]];
        size = x->size;
        a = x->addr + 1;
      }
      ck_assert_int_eq(ooc_fittree_lower_bound(&t, nodes, size, a),
                       fit_ref(nodes, ref, n, size, a));
    }
    ck_assert_int_eq(t.n, n);
    ck_assert_int_eq(ooc_fittree_last(&t, nodes), fit_last(nodes, ref, n));
    /* A bin's bit is set exactly when it holds a block. */
    for (int b = 0; b < OOC_FIT_BINS; b++)
      ck_assert_int_eq((int)(t.used[b / 64] >> (b % 64) & 1),
                       t.root[b] >= 0);
    if (step % 500 == 0) {
      /* The whole order, one block after another (what the allocators'
       * "next block" lookups walk). */
      int32_t at = ooc_fittree_lower_bound(&t, nodes, 0, 0);
      int k = 0;
      for (; at >= 0; k++) {
        ck_assert_int_eq(at, fit_ref(nodes, ref, n, nodes[at].size,
                                     nodes[at].addr));
        at = ooc_fittree_lower_bound(&t, nodes, nodes[at].size,
                                     nodes[at].addr + 1);
      }
      ck_assert_int_eq(k, n);
    }
  }
}
END_TEST

/* The block table lists a class's free blocks in (size, address) order,
 * the bins in turn (what the caching allocator's releases walk). */
START_TEST(test_blocktab_collect_order)
{
  ooc_blocktab bt;
  int32_t n, k;

  ck_assert_int_eq(ooc_blocktab_init(&bt, 4), OOC_OK);
  for (k = 0; k < 300; k++) {
    uint64_t size = fit_size(bt.node, NULL, 0);
    int32_t id = ooc_blocktab_open(&bt, 0, k, (uint64_t)(300 - k) << 20,
                                   size);
    ck_assert_int_ge(id, 0);
    ooc_blocktab_insert(&bt, id);
  }
  n = ooc_blocktab_collect(&bt, 0);
  ck_assert_int_eq(n, 300);
  for (k = 1; k < n; k++) {
    const ooc_fit_node *a = &bt.node[bt.scratch[k - 1]];
    const ooc_fit_node *b = &bt.node[bt.scratch[k]];
    ck_assert(a->size < b->size ||
              (a->size == b->size && a->addr < b->addr));
  }
  ooc_blocktab_fini(&bt);
}
END_TEST

static Suite *
alloc_suite(void)
{
  Suite *s = suite_create("alloc");
  TCase *tc = tcase_create("fragmentation");

  tcase_add_checked_fixture(tc, setup, teardown);
  tcase_add_test(tc, test_caching_fragments);
  tcase_add_test(tc, test_bestfit_fragments);
  tcase_add_test(tc, test_pool_fragments);
  tcase_add_test(tc, test_va_no_fragments);
  tcase_add_test(tc, test_ideal_no_fragments);
  suite_add_tcase(s, tc);

  tc = tcase_create("caching");
  tcase_add_checked_fixture(tc, setup, teardown);
  tcase_add_test(tc, test_caching_release_retry);
  tcase_add_test(tc, test_caching_release_order);
  tcase_add_test(tc, test_caching_sizes);
  tcase_add_test(tc, test_caching_no_cross_segment_merge);
  tcase_add_test(tc, test_caching_max_split);
  tcase_add_test(tc, test_caching_release_available_many);
  tcase_add_test(tc, test_caching_roundup_power2);
  tcase_add_test(tc, test_caching_expandable);
  tcase_add_test(tc, test_caching_expandable_best_fit);
  tcase_add_test(tc, test_caching_expandable_small);
  suite_add_tcase(s, tc);

  tc = tcase_create("bestfit_pool_va");
  tcase_add_checked_fixture(tc, setup, teardown);
  tcase_add_test(tc, test_bestfit_classes);
  tcase_add_test(tc, test_bestfit_merge);
  tcase_add_test(tc, test_pool_first_fit);
  tcase_add_test(tc, test_va_internal);
  tcase_add_test(tc, test_va_small);
  tcase_add_test(tc, test_va_many_small);
  tcase_add_test(tc, test_va_ranges_recycled);
  suite_add_tcase(s, tc);

  tc = tcase_create("conformance");
  tcase_add_checked_fixture(tc, setup, teardown);
  tcase_set_timeout(tc, 60);
  tcase_add_test(tc, test_conformance);
  tcase_add_test(tc, test_zero_bytes);
  tcase_add_test(tc, test_find);
  tcase_add_test(tc, test_option_values);
  tcase_add_test(tc, test_footprint);
  tcase_add_test(tc, test_fittree_order);
  tcase_add_test(tc, test_blocktab_collect_order);
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
