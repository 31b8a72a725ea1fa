/* ir/plan_io.h — plan.json: a lowered program with the scenario that made
 * it, so `oocsim simulate plan.json` (and the executor) can replay it.
 * docs/plan-format.md documents the format ("format": "oocsim-plan",
 * "version": 1).
 *
 * Writing then reading a plan yields an ooc_program_equal() program.
 * Reading validates everything (format and version, every field's type and
 * range, then ooc_program_validate) and fails with one message naming the
 * file and the field or instruction index ("plan.json: program[12]: ...").
 *
 * Ownership: for writing, the caller fills an ooc_plan_file with borrowed
 * pointers (strings, arrays) and a shallow copy of its program
 * (`pf.program = *prog`), and must not call ooc_plan_file_fini() on it.
 * ooc_plan_file_read() fills a struct that owns everything (strings,
 * arrays and the program); release it with ooc_plan_file_fini().
 */
#ifndef OOC_PLAN_IO_H
#define OOC_PLAN_IO_H

#include <stdint.h>
#include <stdio.h>
#include "base/error.h"
#include "ir/model.h"
#include "ir/hw.h"
#include "ir/program.h"

#define OOC_PLAN_FILE_FORMAT "oocsim-plan"

/* The largest plan file and nesting the reader takes: the program of a
 * 10^4-layer model (58,000 instructions) is about 4 MiB. */
#define OOC_PLAN_MAX_BYTES ((size_t)256 << 20)
#define OOC_PLAN_MAX_DEPTH 16
/* Version 2: an instruction may name its kernel algorithm (a ninth
 * element), every convolution has a forward and a backward workspace
 * tensor, and an ALLOC that cannot be met is out of memory (it no longer
 * waits); version 1 files are refused with that reason. */
#define OOC_PLAN_FILE_VERSION 2

struct ooc_plan_file_store;

typedef struct ooc_plan_file {
  /* The scenario (strings may be NULL when writing: written as ""). */
  const char *model;          /* model name or the -m argument */
  const char *model_path;     /* file the model came from */
  int64_t batch;
  ooc_dtype dtype;
  ooc_precision precision;    /* --precision (written only when given) */
  ooc_optimizer optimizer;
  const ooc_kv *sets; int n_sets;                 /* --set */
  const char *hw;             /* profile name or path */
  const ooc_hw_override *hw_sets; int n_hw_sets;  /* --hw-set */
  const char *planner;
  const ooc_kv *opts; int n_opts;                 /* --opt */
  const char *allocator;
  uint64_t budget_bytes;
  int iterations;             /* --iterations it was planned and simulated
                                 with (written only when given; 0: the
                                 default) */
  int steady;                 /* --steady (written only when set) */
  const char *note;           /* the planner's note */
  /* The lowered program (its model_fingerprint and n_layers included). */
  ooc_program program;
  /* Set by read: the file it came from, and what it owns. */
  const char *path;
  struct ooc_plan_file_store *store;
} ooc_plan_file;

/* Write pf as plan.json to f. OOC_EIO on a write error, OOC_ERANGE for
 * sizes JSON cannot hold exactly; err names no file (the caller adds it). */
int ooc_plan_file_write(FILE *f, const ooc_plan_file *pf, ooc_err *err);

/* Read and validate path into pf (overwritten). OOC_EIO (unreadable),
 * OOC_EPARSE (not JSON, truncated, wrong format/version or field types) or
 * OOC_EINVAL (values out of range, an invalid program), err naming the
 * file and the field or instruction. On failure pf owns nothing. */
int ooc_plan_file_read(const char *path, ooc_plan_file *pf, ooc_err *err);

/* Same from an in-memory text; `origin` names it in messages. */
int ooc_plan_file_read_string(const char *text, size_t len,
                              const char *origin, ooc_plan_file *pf,
                              ooc_err *err);

/* Release what read allocated (accepts a zeroed struct). */
void ooc_plan_file_fini(ooc_plan_file *pf);

/* OOC_EINVAL "PATH: plan was made for a different model (fingerprint X,
 * 'name' at batch B has Y)" unless the program was built for model m. */
int ooc_plan_file_check_model(const ooc_plan_file *pf, const ooc_model *m,
                              ooc_err *err);

#endif
