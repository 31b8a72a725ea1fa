/* tests/check_program.c — the program IR: builder, validation, equality
 * (program.h, ir/program.c).
 */
#include "config.h"

#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "ir/program.h"
#include "ir/semantics.h"

static ooc_program p;
static ooc_err err;

static void
setup(void)
{
  ooc_program_init(&p);
  ooc_err_clear(&err);
}

static void
teardown(void)
{
  ooc_program_fini(&p);
}

/* A small valid program: prologue ALLOC w and a pinned host buffer for a;
 * timed 2 ALLOC a, 3 FWD 1 (w -> a), 4 D2H a waiting for the FWD, 5 FREE a
 * on the D2H stream. */
static void
build(ooc_program *q)
{
  int32_t w, a, f;

  w = ooc_program_tensor(q, OOC_T_PARAM, 1, 4096);
  a = ooc_program_tensor(q, OOC_T_ACT, 1, 8192);
  ck_assert_int_eq(w, 0);
  ck_assert_int_eq(a, 1);
  ck_assert_int_eq(ooc_program_emit(q, OOC_I_ALLOC, OOC_STREAM_COMPUTE,
                                    OOC_PH_NONE, 1, w, OOC_WHERE_DEVICE), 0);
  ck_assert_int_eq(ooc_program_emit(q, OOC_I_ALLOC, OOC_STREAM_COMPUTE,
                                    OOC_PH_NONE, 1, a, OOC_WHERE_HOST), 1);
  q->prologue_end = 2;
  ooc_program_emit(q, OOC_I_ALLOC, OOC_STREAM_COMPUTE, OOC_PH_NONE, 1, a,
                   OOC_WHERE_DEVICE);
  f = ooc_program_emit(q, OOC_I_COMPUTE, OOC_STREAM_COMPUTE, OOC_PH_FWD, 1,
                       -1, OOC_WHERE_DEVICE);
  ck_assert_int_eq(f, 3);
  ck_assert_int_eq(ooc_program_arg(q, w, 0), OOC_OK);
  ck_assert_int_eq(ooc_program_arg(q, a, 1), OOC_OK);
  ck_assert_int_eq(ooc_program_emit(q, OOC_I_D2H, OOC_STREAM_D2H,
                                    OOC_PH_NONE, 1, a, OOC_WHERE_DEVICE), 4);
  ck_assert_int_eq(ooc_program_wait(q, -1), OOC_OK);  /* ignored */
  ck_assert_int_eq(ooc_program_wait(q, f), OOC_OK);
  ooc_program_emit(q, OOC_I_FREE, OOC_STREAM_D2H, OOC_PH_NONE, 1, a,
                   OOC_WHERE_DEVICE);
  q->n_layers = 2;
  q->model_fingerprint = 0x1234;
}

START_TEST(test_builder)
{
  build(&p);
  ck_assert_int_eq(p.n_instr, 6);
  ck_assert_int_eq(p.n_tensors, 2);
  ck_assert_int_eq(p.n_args, 2);
  ck_assert_int_eq(p.n_waits, 1);
  ck_assert_int_eq(p.instr[3].arg_first, 0);
  ck_assert_int_eq(p.instr[3].n_args, 2);
  ck_assert_int_eq(p.args[1], 1 | OOC_ARG_WRITE);
  ck_assert_int_eq(OOC_ARG_TENSOR(p.args[1]), 1);
  ck_assert_int_eq(p.instr[4].wait_first, 0);
  ck_assert_int_eq(p.instr[4].n_waits, 1);
  ck_assert_int_eq(p.waits[0], 3);
  ck_assert_int_eq(p.instr[5].n_waits, 0);
  ck_assert_int_eq(p.instr[5].wait_first, 1);
  ck_assert_int_eq(ooc_program_validate(&p, &err), OOC_OK);
  ooc_program_reset(&p);
  ck_assert_int_eq(p.n_instr, 0);
  ck_assert_int_ge(p.cap_instr, 6);
  build(&p);
  ck_assert_int_eq(ooc_program_validate(&p, &err), OOC_OK);
}
END_TEST

START_TEST(test_bad_stream)
{
  build(&p);
  p.instr[4].stream = OOC_STREAM_H2D;   /* a D2H on the H2D stream */
  ck_assert_int_eq(ooc_program_validate(&p, &err), OOC_EINVAL);
  ck_assert_str_eq(err.msg, "program: instruction 4 (D2H on h2d stream, "
                   "layer 1, tensor 1): kind not allowed on this stream");
}
END_TEST

START_TEST(test_forward_wait)
{
  build(&p);
  p.waits[0] = 4;                       /* instruction 4 waits on itself */
  ck_assert_int_eq(ooc_program_validate(&p, &err), OOC_EINVAL);
  ck_assert_str_eq(err.msg, "program: instruction 4 (D2H on d2h stream, "
                   "layer 1, tensor 1): waits on an instruction that does "
                   "not come before it");
}
END_TEST

START_TEST(test_free_without_alloc)
{
  build(&p);
  p.instr[2].kind = OOC_I_FREE;         /* FREE a before any ALLOC of a */
  ck_assert_int_eq(ooc_program_validate(&p, &err), OOC_EINVAL);
  ck_assert_str_eq(err.msg, "program: instruction 2 (FREE, layer 1, tensor "
                   "1): frees tensor 1 (layer 1) which is not allocated");
}
END_TEST

START_TEST(test_unbalanced)
{
  build(&p);
  p.n_instr = 5;                         /* drop the FREE of a */
  ck_assert_int_eq(ooc_program_validate(&p, &err), OOC_EINVAL);
  ck_assert_str_eq(err.msg, "program: tensor 1 (layer 1) is allocated in "
                   "device memory at the end of the iteration but absent at "
                   "its start; the timed part must leave allocations as it "
                   "found them");
}
END_TEST

/* The rules of ir/semantics.h, in index order: a kernel may not read what
 * nothing wrote, a copy out needs a host buffer. */
START_TEST(test_semantic_rules)
{
  build(&p);
  p.args[1] = 1;                         /* the FWD reads a, never written */
  ck_assert_int_eq(ooc_program_validate(&p, &err), OOC_EINVAL);
  ck_assert_str_eq(err.msg, "program: instruction 3 (COMPUTE fwd, layer 1): "
                   "reads tensor 1 (layer 1) before any data was written to "
                   "it");
  ooc_program_reset(&p);
  build(&p);
  p.instr[1].where = OOC_WHERE_DEVICE;   /* no host buffer: a device ALLOC */
  p.instr[1].tensor = 0;
  ck_assert_int_eq(ooc_program_validate(&p, &err), OOC_EINVAL);
  ck_assert_str_eq(err.msg, "program: instruction 1 (ALLOC, layer 1, tensor "
                   "0): allocates tensor 0 (layer 1) which is already live");
}
END_TEST

/* The happens-before check: the copy out must wait for the kernel that
 * writes its tensor, and a FREE on the compute stream must wait for a
 * copy of its tensor on another stream. */
/* The simulator's fast per-kind rules (ooc_sem_begin and the
 * ooc_sem_begin_* it dispatches to) decide exactly as the naming checker
 * plus the start (ooc_sem_check, ooc_sem_start), with the same message and
 * the same resulting state: every kind, place and stream, from 20000
 * random tensor states. */
START_TEST(test_sem_fast_equals_check)
{
  int32_t t[3], c1, c2, i, k;
  ooc_sem a, b;
  ooc_err ea, eb;
  unsigned seed = 12345;

  for (k = 0; k < 3; k++)
    t[k] = ooc_program_tensor(&p, OOC_T_ACT, 1, 1024);
  c1 = ooc_program_emit(&p, OOC_I_COMPUTE, OOC_STREAM_COMPUTE, OOC_PH_FWD, 1,
                        -1, OOC_WHERE_DEVICE);
  ooc_program_arg(&p, t[0], 0);
  ooc_program_arg(&p, t[1], 0);
  ooc_program_arg(&p, t[2], 1);
  c2 = ooc_program_emit(&p, OOC_I_COMPUTE, OOC_STREAM_COMPUTE, OOC_PH_BWD, 1,
                        -1, OOC_WHERE_DEVICE);
  ooc_program_arg(&p, t[2], 0);
  ooc_program_arg(&p, t[0], 1);
  for (k = 0; k < 3; k += 2) {
    ooc_program_emit(&p, OOC_I_H2D, OOC_STREAM_H2D, OOC_PH_NONE, 1, t[k],
                     OOC_WHERE_DEVICE);
    ooc_program_emit(&p, OOC_I_D2H, OOC_STREAM_D2H, OOC_PH_NONE, 1, t[k],
                     OOC_WHERE_DEVICE);
    for (int w = OOC_WHERE_DEVICE; w <= OOC_WHERE_HOST; w++) {
      ooc_program_emit(&p, OOC_I_ALLOC, OOC_STREAM_COMPUTE, OOC_PH_NONE, 1,
                       t[k], w);
      ooc_program_emit(&p, OOC_I_FREE, OOC_STREAM_COMPUTE, OOC_PH_NONE, 1,
                       t[k], w);
    }
    ooc_program_emit(&p, OOC_I_FREE, OOC_STREAM_D2H, OOC_PH_NONE, 1, t[k],
                     OOC_WHERE_DEVICE);
    ooc_program_emit(&p, OOC_I_FREE, OOC_STREAM_H2D, OOC_PH_NONE, 1, t[k],
                     OOC_WHERE_DEVICE);
  }
  ck_assert_int_eq(ooc_program_check_structure(&p, &err), OOC_OK);
  ooc_sem_init(&a);
  ooc_sem_init(&b);
  ck_assert_int_eq(ooc_sem_reset(&a, &p), OOC_OK);
  ck_assert_int_eq(ooc_sem_reset(&b, &p), OOC_OK);
  for (int trial = 0; trial < 3000; trial++) {
    for (k = 0; k < 3; k++) {
      seed = seed * 1103515245u + 12345u;
      a.flags[k] = (uint8_t)((seed >> 16) & 15);
      a.inflight[k] = (uint8_t)((seed >> 20) % 3);
    }
    seed = seed * 1103515245u + 12345u;
    a.running = (seed >> 16) % 3 == 0 ? -1 : (seed >> 16) % 3 == 1 ? c1 : c2;
    for (i = 0; i < p.n_instr; i++) {
      int ra, rb;
      /* reset both to the trial's state */
      memcpy(b.flags, a.flags, 3);
      memcpy(b.inflight, a.inflight, 3);
      b.running = a.running;
      ooc_sem c = a;  /* the trial's state, to restore a */
      uint8_t fl[3], in[3];
      memcpy(fl, a.flags, 3);
      memcpy(in, a.inflight, 3);
      ooc_err_clear(&ea);
      ooc_err_clear(&eb);
      ra = ooc_sem_begin(&a, i, &ea);
      rb = ooc_sem_check(&b, i, &eb);
      if (rb == OOC_OK)
        ooc_sem_start(&b, i);
      ck_assert_msg(ra == rb, "instruction %d, trial %d: begin %d, check %d "
                    "(%s)", i, trial, ra, rb, ra ? ea.msg : eb.msg);
      ck_assert_str_eq(ea.msg, eb.msg);
      ck_assert_msg(memcmp(a.flags, b.flags, 3) == 0 &&
                    memcmp(a.inflight, b.inflight, 3) == 0 &&
                    a.running == b.running,
                    "instruction %d, trial %d: states differ", i, trial);
      memcpy(a.flags, fl, 3);
      memcpy(a.inflight, in, 3);
      a.running = c.running;
    }
  }
  ooc_sem_fini(&a);
  ooc_sem_fini(&b);
}
END_TEST

START_TEST(test_races)
{
  build(&p);
  p.instr[4].n_waits = 0;                /* D2H no longer waits for FWD */
  ck_assert_int_eq(ooc_program_validate(&p, &err), OOC_EINVAL);
  ck_assert_str_eq(err.msg, "program: instruction 4 (D2H, layer 1, tensor "
                   "1) copies out tensor 1 (layer 1), which instruction 3 "
                   "(COMPUTE fwd, layer 1) writes on another stream, and no "
                   "wait orders the two");
  ooc_program_reset(&p);
  build(&p);
  p.instr[5].stream = OOC_STREAM_COMPUTE; /* FREE a on compute, unordered */
  ck_assert_int_eq(ooc_program_validate(&p, &err), OOC_EINVAL);
  ck_assert_str_eq(err.msg, "program: instruction 5 (FREE, layer 1, tensor "
                   "1) frees tensor 1 (layer 1), which instruction 4 (D2H, "
                   "layer 1, tensor 1) reads on another stream, and no wait "
                   "orders the two");
  /* Waiting for the copy orders them. */
  ck_assert_int_eq(ooc_program_wait(&p, 4), OOC_OK);
  ck_assert_int_eq(ooc_program_validate(&p, &err), OOC_OK);
}
END_TEST

START_TEST(test_bad_indices)
{
  build(&p);
  p.args[0] = 7;
  ck_assert_int_eq(ooc_program_validate(&p, &err), OOC_EINVAL);
  ck_assert_ptr_nonnull(strstr(err.msg, "argument tensor id out of range"));
  ooc_program_reset(&p);
  build(&p);
  p.instr[3].layer = 2;                  /* n_layers is 2 */
  ck_assert_int_eq(ooc_program_validate(&p, &err), OOC_EINVAL);
  ck_assert_ptr_nonnull(strstr(err.msg, "layer out of range"));
  ooc_program_reset(&p);
  build(&p);
  p.prologue_end = 7;
  ck_assert_int_eq(ooc_program_validate(&p, &err), OOC_EINVAL);
  ck_assert_str_eq(err.msg, "program: prologue_end 7 outside [0, 6]");
}
END_TEST

START_TEST(test_equal)
{
  ooc_program q;

  ooc_program_init(&q);
  build(&p);
  build(&q);
  ck_assert(ooc_program_equal(&p, &q));
  q.waits[0] = 2;
  ck_assert(!ooc_program_equal(&p, &q));
  q.waits[0] = 3;
  ck_assert(ooc_program_equal(&p, &q));
  q.instr[3].algo = 1;
  ck_assert(!ooc_program_equal(&p, &q));
  q.instr[3].algo = 0;
  q.tensors[1].bytes++;
  ck_assert(!ooc_program_equal(&p, &q));
  q.tensors[1].bytes--;
  q.model_fingerprint++;
  ck_assert(!ooc_program_equal(&p, &q));
  ooc_program_fini(&q);
}
END_TEST

START_TEST(test_names)
{
  ck_assert_str_eq(ooc_instr_kind_name(OOC_I_H2D), "H2D");
  ck_assert_str_eq(ooc_phase_name(OOC_PH_RECOMP), "recomp");
  ck_assert_str_eq(ooc_tensor_kind_name(OOC_T_WORKSPACE), "workspace");
  ck_assert_str_eq(ooc_instr_kind_name(OOC_I_COUNT), "?");
}
END_TEST

static Suite *
program_suite(void)
{
  Suite *s = suite_create("program");
  TCase *tc = tcase_create("ir");

  tcase_add_checked_fixture(tc, setup, teardown);
  tcase_add_test(tc, test_builder);
  tcase_add_test(tc, test_bad_stream);
  tcase_add_test(tc, test_forward_wait);
  tcase_add_test(tc, test_free_without_alloc);
  tcase_add_test(tc, test_unbalanced);
  tcase_add_test(tc, test_semantic_rules);
  tcase_add_test(tc, test_races);
  tcase_add_test(tc, test_sem_fast_equals_check);
  tcase_add_test(tc, test_bad_indices);
  tcase_add_test(tc, test_equal);
  tcase_add_test(tc, test_names);
  suite_add_tcase(s, tc);
  return s;
}

int
main(void)
{
  SRunner *sr = srunner_create(program_suite());
  int failed;

  srunner_run_all(sr, CK_NORMAL);
  failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
