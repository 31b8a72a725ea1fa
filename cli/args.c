/* cli/args.c — shared option parsing for the oocsim commands (args.h).
 *
 * One table (ooc_cli_options) holds every option of every command; the
 * getopt_long table and the --help of a command are both made from the
 * rows that name the command, so an option a command does not take is
 * reported as unknown for that command and is not in its --help. getopt's own messages are silenced (opterr = 0)
 * and replaced by one ooc_err line naming the option. O(argc).
 */
#include "config.h"

#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli/args.h"
#include "ir/plan_io.h"
#include "base/strv.h"
#include "cli/commands.h"
#include "base/atomic.h"
#include "base/util.h"
#include "planners/registry.h"

/* Commands sharing a meaning of an option. */
#define SCEN (OOC_CMD_PLAN | OOC_CMD_SIMULATE | OOC_CMD_MAXBATCH | \
              OOC_CMD_EXPLAIN)
#define ALLSCEN (SCEN | OOC_CMD_COMPARE | OOC_CMD_MINBUDGET)
#define ONEB (OOC_CMD_INFO | OOC_CMD_PLAN | OOC_CMD_SIMULATE | \
              OOC_CMD_COMPARE | OOC_CMD_MINBUDGET | OOC_CMD_REPORT)
#define MODELCMDS (ALLSCEN | OOC_CMD_INFO | OOC_CMD_REPORT | \
                   OOC_CMD_VALIDATE | OOC_CMD_CALIBRATE)
#define EXECS (OOC_CMD_EXEC | OOC_CMD_VALIDATE)
#define MEASURES (EXECS | OOC_CMD_CALIBRATE)

const ooc_cli_option ooc_cli_options[] = {
  { "model", 'm', OOC_OPT_MODEL, "MODEL", MODELCMDS | OOC_CMD_SWEEP,
    "zoo name (oocsim list models) or JSON path" },
  { "batch", 'b', OOC_OPT_BATCH, "BATCH",
    ONEB | OOC_CMD_VALIDATE | OOC_CMD_EXPLAIN | OOC_CMD_CALIBRATE,
    "batch size, an integer >= 1" },
  { "batch", 'b', OOC_OPT_BATCH, "LIST", OOC_CMD_SWEEP,
    "batch sizes: 256 | 64,128,256 | a range A:B:STEP\n"
    "(64:1024:64: A, A+STEP, ... up to B) | A:B (STEP 1)" },
  { "set", 0, OOC_OPT_SET, "K=V", MODELCMDS | OOC_CMD_SWEEP,
    "override a model parameter, e.g. depth=1001\n(repeatable)" },
  { "set", 0, OOC_OPT_SET, "K=V", OOC_CMD_IMPORT,
    "the size of a named (dynamic) input dim, e.g.\nseq=512 (repeatable)" },
  { "name", 0, OOC_OPT_NAME, "NAME", OOC_CMD_IMPORT,
    "the model's name (default: the file's stem)" },
  { "no-loss", 0, OOC_OPT_NOLOSS, NULL, OOC_CMD_IMPORT,
    "keep the graph as it is (default: a softmax_ce loss\non its output, a final Softmax becoming it)" },
  { "dtype", 0, OOC_OPT_DTYPE, "D",
    MODELCMDS & ~(OOC_CMD_VALIDATE | OOC_CMD_CALIBRATE),
    "fp32, fp16 or bf16 (default: the model's)" },
  { "dtype", 0, OOC_OPT_DTYPE, "D", OOC_CMD_VALIDATE | OOC_CMD_CALIBRATE,
    "fp32 (the executor runs fp32 only; default: the\nmodel's)" },
  { "precision", 0, OOC_OPT_PRECISION, "P",
    ALLSCEN | OOC_CMD_INFO | OOC_CMD_REPORT,
    "fp32, tf32, amp-fp16 or amp-bf16: the dtypes of\n"
    "activations, weights, gradients, master weights and\n"
    "optimizer state as frameworks set them (not with --dtype)" },
  { "dtype", 0, OOC_OPT_DTYPE, "LIST", OOC_CMD_SWEEP,
    "an axis of dtypes: fp32,fp16,bf16 (default: the model's)" },
  { "precision", 0, OOC_OPT_PRECISION, "LIST", OOC_CMD_SWEEP,
    "an axis of precisions: fp32,tf32,amp-fp16,amp-bf16\n"
    "(in place of --dtype)" },
  { "optimizer", 0, OOC_OPT_OPTIMIZER, "O", MODELCMDS,
    "optimizer whose state counts: sgd, momentum (default)\nor adam" },
  { "optimizer", 0, OOC_OPT_OPTIMIZER, "LIST", OOC_CMD_SWEEP,
    "an axis of optimizers: sgd,momentum,adam (default\nmomentum)" },
  { "hw", 0, OOC_OPT_HW, "HW", ALLSCEN | OOC_CMD_REPORT | OOC_CMD_VALIDATE,
    "hardware profile (oocsim list hw) or JSON path" },
  { "hw", 0, OOC_OPT_HW, "HW", OOC_CMD_INFO,
    "print the effective hardware profile (after\n--hw-set) instead of, or "
    "after, a model" },
  { "hw", 0, OOC_OPT_HW, "LIST", OOC_CMD_SWEEP,
    "hardware profiles (names or paths)" },
  { "hw", 0, OOC_OPT_HW, "HW", OOC_CMD_PLOT,
    "memory: draw HW's usable memory as the budget line" },
  { "hw-set", 0, OOC_OPT_HW_SET, "K=V",
    ALLSCEN | OOC_CMD_REPORT | OOC_CMD_VALIDATE | OOC_CMD_INFO,
    "profile field override, e.g. link.h2d_GBps=32\n(repeatable)" },
  { "hw-set", 0, OOC_OPT_HW_SET, "K=V1,V2", OOC_CMD_SWEEP,
    "one more axis over a profile field, e.g.\n"
    "link.h2d_GBps=8,16,32,64,128,450; K1+K2=V,... sets\n"
    "both keys to each value (repeatable)" },
  { "planner", 'p', OOC_OPT_PLANNER, "PLANNER", SCEN,
    "planner (oocsim list planners)" },
  { "planner", 'p', OOC_OPT_PLANNER, "LIST",
    OOC_CMD_COMPARE | OOC_CMD_MINBUDGET | OOC_CMD_REPORT,
    "comma-separated planners, or all (the default)" },
  { "planner", 'p', OOC_OPT_PLANNER, "LIST", OOC_CMD_SWEEP | OOC_CMD_VALIDATE,
    "comma-separated planners, or all" },
  { "budget", 0, OOC_OPT_BUDGET, "SIZE",
    SCEN | OOC_CMD_COMPARE | OOC_CMD_REPORT | OOC_CMD_VALIDATE,
    "device bytes a plan may use: 16GiB, 8GB, 512MiB\n"
    "(default: the profile's usable memory)" },
  { "budget", 0, OOC_OPT_BUDGET, "LIST", OOC_CMD_SWEEP,
    "device budgets, or default (each profile's usable\n"
    "memory); one below a step's working set gives\n"
    "infeasible rows whose oom_reason says so" },
  { "budget", 0, OOC_OPT_BUDGET, "SIZE", OOC_CMD_PLOT,
    "memory: the budget line to draw" },
  { "allocator", 0, OOC_OPT_ALLOCATOR, "A",
    ALLSCEN | OOC_CMD_REPORT | OOC_CMD_VALIDATE,
    "allocator policy and options: caching (default),\n"
    "caching:expandable_segments, bestfit, pool, va, ideal\n"
    "(oocsim list allocators)" },
  { "allocator", 0, OOC_OPT_ALLOCATOR, "LIST", OOC_CMD_SWEEP,
    "allocator specs, e.g. caching,bestfit,\n"
    "caching:expandable_segments (default caching)" },
  { "opt", 0, OOC_OPT_OPT, "K=V", ALLSCEN | OOC_CMD_VALIDATE,
    "planner option, given to the planners that accept K\n(repeatable)" },
  { "iterations", 0, OOC_OPT_ITERS, "N", ALLSCEN | OOC_CMD_SWEEP,
    "timed iterations simulated; the last one is reported\n(default 2)" },
  { "steady", 0, OOC_OPT_STEADY, NULL,
    ALLSCEN | OOC_CMD_SWEEP | OOC_CMD_REPORT,
    "simulate (and plan) until the allocator is steady:\n"
    "more iterations, up to 8 (or the timed iterations\n"
    "asked for, when more), until one takes and gives\n"
    "back no device memory" },
  { "iterations", 0, OOC_OPT_ITERS, "N", EXECS,
    "timed iterations executed; the median is reported\n(default 3)" },
  { "warmup", 0, OOC_OPT_WARMUP, "W", EXECS,
    "untimed iterations first (default 1)" },
  { "backend", 0, OOC_OPT_BACKEND, "B", MEASURES,
    "executor backend: cpu (oneDNN on this machine's CPUs,\n"
    "host memory as the device; default) or cuda (a GPU)" },
  { "threads", 0, OOC_OPT_THREADS, "T", MEASURES,
    "threads of the kernels (cpu backend) and of the\n"
    "host's optimizer steps (default 1)" },
  { "link-GBps", 0, OOC_OPT_LINK, "X", MEASURES,
    "cpu: pace copies to X GB/s to emulate a slower host\n"
    "link (validate also sets the profile's link to X;\n"
    "calibrate measures the paced copies)" },
  { "base", 0, OOC_OPT_BASE, "PROFILE", OOC_CMD_CALIBRATE,
    "the profile whose unmeasured fields the new one keeps\n"
    "(default: cpu-host for --backend cpu; required for cuda)" },
  { "repeat", 0, OOC_OPT_REPEAT, "N", OOC_CMD_CALIBRATE,
    "timed runs per measurement; medians are kept (default 3)" },
  { "no-algorithms", 0, OOC_OPT_NOALGOS, NULL, OOC_CMD_CALIBRATE,
    "skip the replays with each convolution algorithm\n"
    "family the base profile offers (faster)" },
  { "verify", 0, OOC_OPT_VERIFY, NULL, EXECS,
    "checksum every swapped tensor at swap-out and after\nswap-in" },
  { "batches", 0, OOC_OPT_BATCHES, "LIST", OOC_CMD_REPORT,
    "batches of the throughput plot (default B/4, B/2, B,\n3B/2, 2B)" },
  { "maxbatch", 0, OOC_OPT_MAXBATCH, NULL, OOC_CMD_SWEEP,
    "each point is the largest trainable batch (no -b)" },
  { "no-maxbatch", 0, OOC_OPT_NOMAXBATCH, NULL, OOC_CMD_REPORT,
    "skip the largest-batch search (faster)" },
  { "jobs", 'j', OOC_OPT_JOBS, "N", OOC_CMD_SWEEP,
    "points run in parallel on N threads (default 1)" },
  { "jobs", 'j', OOC_OPT_JOBS, "N", OOC_CMD_REPORT,
    "threads (default: the number of CPUs)" },
  { "shard", 0, OOC_OPT_SHARD, "K/N", OOC_CMD_SWEEP,
    "run only points with index % N == K-1 (1 <= K <= N)" },
  { "merge", 0, OOC_OPT_MERGE, NULL, OOC_CMD_SWEEP,
    "join the shard directories named after the options\ninto -o DIR, in grid order" },
  { "fresh", 0, OOC_OPT_FRESH, NULL, OOC_CMD_SWEEP,
    "replace DIR/results.csv instead of resuming it" },
  { "in", 0, OOC_OPT_IN, "FILE", OOC_CMD_PLOT,
    "the input CSV (see KIND above)" },
  { "title", 0, OOC_OPT_TITLE, "TEXT", OOC_CMD_PLOT,
    "the plot's title" },
  { "format", 0, OOC_OPT_FORMAT, "F", OOC_CMD_COMPARE,
    "table (default), md, csv (docs/output-schema.md) or\n"
    "json (an array of summary objects)" },
  { "json", 0, OOC_OPT_JSON, NULL, OOC_CMD_INFO | OOC_CMD_PLAN,
    "print the result as JSON" },
  { "json", 0, OOC_OPT_JSON, NULL, OOC_CMD_SIMULATE,
    "print the result as JSON (oocsim(1), SUMMARY OBJECT)" },
  { "json", 0, OOC_OPT_JSON, NULL, OOC_CMD_MAXBATCH | OOC_CMD_MINBUDGET,
    "print the result as JSON (its fields: above)" },
  { "json", 0, OOC_OPT_JSON, NULL, OOC_CMD_COMPARE,
    "the same as --format json (the last one wins)" },
  { "json", 0, OOC_OPT_JSON, NULL, OOC_CMD_EXEC,
    "print the measured summary object (\"measured\": true)" },
  { "json", 0, OOC_OPT_JSON, NULL, OOC_CMD_VALIDATE,
    "print the results object (docs/validation.md)" },
  { "json", 0, OOC_OPT_JSON, NULL, OOC_CMD_EXPLAIN,
    "print the explain object: the summary, \"classes\" and\n\"total\"" },
  { "trace", 0, OOC_OPT_TRACE, "FILE", OOC_CMD_EXEC,
    "write the measured last iteration as a Chrome trace\n"
    "(the simulator's lanes, measured spans)" },
  { "trace", 0, OOC_OPT_TRACE, "FILE", OOC_CMD_SIMULATE,
    "write a Chrome trace (open it in\n"
    "https://ui.perfetto.dev): compute, H2D and D2H lanes\n"
    "(and host, for a plan that offloads the optimizer) and\n"
    "allocated and reserved memory counters" },
  { "mem-csv", 0, OOC_OPT_MEMCSV, "FILE", OOC_CMD_SIMULATE,
    "write time_s,allocated_bytes,reserved_bytes over the\niteration" },
  { "timeline-csv", 0, OOC_OPT_TIMELINE_CSV, "FILE", OOC_CMD_SIMULATE,
    "write the timeline that oocsim plot gantt draws (as\noocsim report does)" },
  { "no-timing", 0, OOC_OPT_NOTIMING, NULL,
    ALLSCEN | OOC_CMD_SWEEP | OOC_CMD_REPORT,
    "print wall-clock fields and plan_simulations as 0\n"
    "(byte-comparable output)" },
  { "output", 'o', OOC_OPT_OUTPUT, "PLAN.json", OOC_CMD_PLAN,
    "the plan file to write" },
  { "output", 'o', OOC_OPT_OUTPUT, "DIR", OOC_CMD_SWEEP,
    "output directory (created if missing; default\n./sweep, required with --merge)" },
  { "output", 'o', OOC_OPT_OUTPUT, "DIR", OOC_CMD_REPORT,
    "output directory (created if missing)" },
  { "output", 'o', OOC_OPT_OUTPUT, "DIR", OOC_CMD_VALIDATE,
    "write the validation report (Markdown + HTML, plots,\n"
    "results.json) to DIR (created if missing)" },
  { "output", 'o', OOC_OPT_OUTPUT, "PROFILE.json", OOC_CMD_CALIBRATE,
    "the calibrated profile to write" },
  { "output", 'o', OOC_OPT_OUTPUT, "OUT", OOC_CMD_PLOT,
    "the image to write: OUT.png or OUT.svg" },
  { "output", 'o', OOC_OPT_OUTPUT, "MODEL.json", OOC_CMD_IMPORT,
    "the model file to write (default: standard output)" },
  { NULL, 0, 0, NULL, 0, NULL }
};

/* Most options one command takes. */
#define MAX_OPTS 48

int
ooc_cli_fail(const char *fmt, ...)
{
  va_list ap;
  fputs("oocsim: ", stderr);
  va_start(ap, fmt);
  vfprintf(stderr, fmt, ap);
  va_end(ap);
  fputc('\n', stderr);
  return 1;
}

void
ooc_cli_args_init(ooc_cli_args *a)
{
  *a = (ooc_cli_args){ .optimizer = OOC_OPT_SGD_MOMENTUM, .warmup = -1 };
}

void
ooc_cli_args_fini(ooc_cli_args *a)
{
  int i;
  for (i = 0; i < a->n_owned; i++)
    free(a->owned[i]);
  free(a->owned);
  free(a->sets);
  free(a->hw_sets);
  free(a->opts);
  ooc_cli_args_init(a);
}

int
ooc_cli_split_kv(char *s, const char *opt, const char **key,
                 const char **value, ooc_err *err)
{
  char *eq = strchr(s, '=');
  if (eq == NULL)
    return ooc_err_set(err, OOC_EINVAL, "%s '%s': expected KEY=VALUE", opt, s);
  if (eq == s)
    return ooc_err_set(err, OOC_EINVAL, "%s '%s': empty key", opt, s);
  *eq = '\0';
  *key = s;
  *value = eq + 1;
  return OOC_OK;
}

int
ooc_cli_parse_optimizer(const char *s, ooc_optimizer *out, ooc_err *err)
{
  if (ooc_optimizer_parse(s, out) != OOC_OK)
    return ooc_err_set(err, OOC_EINVAL,
                       "--optimizer: unknown optimizer '%s' (sgd, momentum, "
                       "adam)", s);
  return OOC_OK;
}

int
ooc_cli_check_opts(const ooc_cli_args *a, const ooc_planner_type **ts, int n,
                   ooc_err *err)
{
  for (int j = 0; j < a->n_opts; j++) {
    int i;
    for (i = 0; i < n && !ooc_planner_accepts(ts[i], a->opts[j].key); i++)
      ;
    if (i == n)
      return ooc_err_set(err, OOC_EINVAL, "--opt %s: no chosen planner "
                         "accepts this option", a->opts[j].key);
  }
  return OOC_OK;
}

int
ooc_cli_plan_file_read(const char *path, struct ooc_plan_file *pf,
                       ooc_err *err)
{
  const ooc_planner_type *t;
  int rc = ooc_plan_file_read(path, pf, err);

  if (rc < 0)
    return rc;
  if ((t = ooc_planner_find(pf->planner, err)) == NULL) {
    ooc_err_prefix(err, OOC_EINVAL, "%s: scenario.planner: ", path);
    ooc_plan_file_fini(pf);
    return OOC_EINVAL;
  }
  if (pf->allocator != NULL &&
      ooc_scenario_check_allocator(pf->allocator, err) < 0) {
    ooc_err_prefix(err, OOC_EINVAL, "%s: scenario.allocator: ", path);
    ooc_plan_file_fini(pf);
    return OOC_EINVAL;
  }
  /* The options are the scenario's record, passed on to the planner when
   * a command plans again (the infeasible hint's search): one the named
   * planner does not take is a hand edit, refused here rather than there.
   */
  if (ooc_planner_check_opts(t, pf->opts, pf->n_opts, err) < 0) {
    ooc_err_prefix(err, OOC_EINVAL, "%s: scenario.opts: ", path);
    ooc_plan_file_fini(pf);
    return OOC_EINVAL;
  }
  return OOC_OK;
}

/* Split the -p list ("all" or "a,b,c") into planner types. */
int
ooc_cli_parse_planners(const char *spec, const ooc_planner_type ***out, int *n,
               ooc_err *err)
{
  const ooc_planner_type **ts = NULL;
  char **names = NULL;
  int cnt = 0, n_names = 0, i, k;

  *out = NULL;
  *n = 0;
  if (strcmp(spec, "all") == 0) {
    for (i = 0; ooc_planner_types[i] != NULL; i++)
      ;
    if ((ts = calloc((size_t)i + 1, sizeof *ts)) == NULL)
      return ooc_err_set(err, OOC_ENOMEM, "out of memory");
    for (i = 0; ooc_planner_types[i] != NULL; i++)
      ts[cnt++] = ooc_planner_types[i];
    goto ok;
  }
  /* "vdnn," or "vdnn,,lms" is a typo, not one planner: "empty item". */
  if (ooc_strv_split(spec, ',', "-p", &names, &n_names, err) < 0)
    return err != NULL ? err->code : OOC_EINVAL;
  if ((ts = calloc((size_t)n_names + 1, sizeof *ts)) == NULL) {
    ooc_err_set(err, OOC_ENOMEM, "out of memory");
    goto fail;
  }
  for (k = 0; k < n_names; k++) {
    const ooc_planner_type *t = ooc_planner_find(names[k], err);
    if (t == NULL) {
      ooc_err_prefix(err, OOC_ENOTFOUND, "-p: ");
      goto fail;
    }
    for (i = 0; i < cnt; i++)
      if (ts[i] == t)
        break;
    if (i == cnt)       /* listed twice: once */
      ts[cnt++] = t;
  }
  ooc_strv_free(names, n_names);
ok:
  *out = ts;
  *n = cnt;
  return OOC_OK;
fail:
  ooc_strv_free(names, n_names);
  free(ts);
  return err != NULL ? err->code : OOC_EINVAL;
}

/* The name path will have once created: the real path of its folder plus
 * its base name, in out (PATH_MAX + NAME_MAX bytes); 0 when the folder
 * does not resolve. */
static int
future_name(const char *path, char *out, size_t n)
{
  const char *slash = strrchr(path, '/');
  const char *base = slash != NULL ? slash + 1 : path;
  char dir[PATH_MAX], real[PATH_MAX];
  int len;

  if (slash == NULL)
    len = snprintf(dir, sizeof dir, ".");
  else if (slash == path)
    len = snprintf(dir, sizeof dir, "/");
  else
    len = snprintf(dir, sizeof dir, "%.*s", (int)(slash - path), path);
  if (len < 0 || (size_t)len >= sizeof dir || realpath(dir, real) == NULL)
    return 0;
  len = snprintf(out, n, "%s/%s", real, base);
  return len >= 0 && (size_t)len < n;
}

int
ooc_cli_same_file(const char *a, const char *b)
{
  struct stat sa, sb;
  char ra[PATH_MAX + NAME_MAX + 2], rb[PATH_MAX + NAME_MAX + 2];
  int ea = stat(a, &sa) == 0, eb = stat(b, &sb) == 0;

  if (ea && eb)
    return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
  if (ea != eb)
    return 0;
  if (future_name(a, ra, sizeof ra) && future_name(b, rb, sizeof rb))
    return strcmp(ra, rb) == 0;
  return strcmp(a, b) == 0;
}

const char *
ooc_cli_model_option(const ooc_cli_args *a)
{
  return a->batch_set ? "-b"
         : a->n_sets > 0 ? "--set"
         : a->dtype_set ? "--dtype"
         : a->precision != OOC_PREC_NONE ? "--precision"
         : a->optimizer_set ? "--optimizer" : NULL;
}

char *
ooc_cli_input_file(const char *subdir, const char *name)
{
  ooc_err e = { 0 };
  char *path = NULL;

  if (name == NULL || ooc_data_find(subdir, name, &path, &e) < 0)
    return NULL;
  if (access(path, F_OK) != 0) {
    free(path);
    return NULL;
  }
  return path;
}

int
ooc_cli_check_distinct(const char *const *opts, const char *const *paths,
                       int n, int n_in, ooc_err *err)
{
  for (int i = 0; i < n; i++)
    for (int j = 0; j < i; j++)
      if (i >= n_in && paths[i] != NULL && paths[j] != NULL &&
          ooc_cli_same_file(paths[j], paths[i]))
        return ooc_err_set(err, OOC_EINVAL, "%s and %s name the same file "
                           "'%s'", opts[j], opts[i], paths[i]);
  return OOC_OK;
}

int
ooc_cli_check_not_inputs(const char *model_opt, const char *model,
                         const char *hw_opt, const char *hw,
                         const char *const *opts, const char *const *paths,
                         int n, ooc_err *err)
{
  const char *o[8] = { model_opt, hw_opt }, *f[8];
  char *mf, *hf;
  int i, rc;

  if (n > 6)
    return ooc_err_set(err, OOC_EINVAL, "internal: %d outputs to check", n);
  mf = ooc_cli_input_file("models", model);
  hf = ooc_cli_input_file("hwprofiles", hw);
  f[0] = mf;
  f[1] = hf;
  for (i = 0; i < n; i++) {
    o[2 + i] = opts[i];
    f[2 + i] = paths[i];
  }
  rc = ooc_cli_check_distinct(o, f, n + 2, 2, err);
  free(mf);
  free(hf);
  return rc;
}

int
ooc_cli_check_outputs(const char *const *opts, const char *const *paths,
                      int n, int n_in, ooc_err *err)
{
  for (int i = n_in; i < n; i++)
    if (paths[i] != NULL && ooc_atomic_check(paths[i], err) < 0)
      return ooc_err_prefix(err, err->code, "%s: ", opts[i]);
  return ooc_cli_check_distinct(opts, paths, n, n_in, err);
}

int
ooc_cli_parse_jobs(const char *s, int *jobs, ooc_err *err)
{
  int64_t v;
  int rc;

  if ((rc = ooc_parse_int(s, "-j", &v, err)) < 0)
    return rc;
  if (v < 1 || v > 1024)
    return ooc_err_set(err, OOC_EINVAL, "-j %s: must be 1..1024", s);
  *jobs = (int)v;
  return OOC_OK;
}

/* Copy "K=V" into the args' pool and split it. */
static int
add_kv(ooc_cli_args *a, const char *arg, const char *opt, const char **key,
       const char **value, ooc_err *err)
{
  char **owned;
  char *copy;

  owned = realloc(a->owned, (size_t)(a->n_owned + 1) * sizeof *owned);
  if (owned == NULL)
    return ooc_err_set(err, OOC_ENOMEM, "%s: out of memory", opt);
  a->owned = owned;
  copy = strdup(arg);
  if (copy == NULL)
    return ooc_err_set(err, OOC_ENOMEM, "%s: out of memory", opt);
  a->owned[a->n_owned++] = copy;
  return ooc_cli_split_kv(copy, opt, key, value, err);
}

/* A key given twice takes its last value (oocsim(1), COMMON OPTIONS):
 * drop the entry of `key` from arr[0 .. *n), entries of `size` bytes
 * whose key pointer is at offset key_off, so that a repeatable option's
 * list, and a plan file written from it, holds each key once. */
static void
drop_key(void *arr, int *n, size_t size, size_t key_off, const char *key)
{
  char *base = arr;

  for (int i = 0; i < *n; i++) {
    const char *k;
    memcpy(&k, base + (size_t)i * size + key_off, sizeof k);
    if (strcmp(k, key) == 0) {
      memmove(base + (size_t)i * size, base + (size_t)(i + 1) * size,
              (size_t)(*n - i - 1) * size);
      (*n)--;
      return;
    }
  }
}

/* Append key = value to --set's or --opt's list, replacing the key's
 * earlier entry. */
static int
push_kv(ooc_kv **arr, int *n, const char *key, const char *value)
{
  ooc_kv *p;

  drop_key(*arr, n, sizeof **arr, offsetof(ooc_kv, key), key);
  if ((p = realloc(*arr, (size_t)(*n + 1) * sizeof *p)) == NULL)
    return OOC_ENOMEM;
  *arr = p;
  p[(*n)++] = (ooc_kv){ .key = key, .value = value };
  return OOC_OK;
}

/* The same for --hw-set. */
static int
push_hw(ooc_hw_override **arr, int *n, const char *key, const char *value)
{
  ooc_hw_override *p;

  drop_key(*arr, n, sizeof **arr, offsetof(ooc_hw_override, key), key);
  if ((p = realloc(*arr, (size_t)(*n + 1) * sizeof *p)) == NULL)
    return OOC_ENOMEM;
  *arr = p;
  p[(*n)++] = (ooc_hw_override){ .key = key, .value = value };
  return OOC_OK;
}

int
ooc_cli_args_handle(void *ctx, int c, const char *arg, ooc_err *err)
{
  ooc_cli_args *a = ctx;
  const char *k, *v;
  int64_t n;
  int rc;

  switch (c) {
  case 'm':
    a->model = arg;
    return OOC_OK;
  case 'b':
    if ((rc = ooc_parse_int(arg, "-b", &n, err)) < 0)
      return ooc_err_set(err, OOC_EINVAL, "-b: '%s' is not a batch size "
                         "(an integer >= 1)", arg);
    if (n < 1)
      return ooc_err_set(err, OOC_EINVAL, "-b: batch %s must be >= 1", arg);
    a->batch = n;
    a->batch_set = 1;
    return OOC_OK;
  case OOC_OPT_SET:
    if ((rc = add_kv(a, arg, "--set", &k, &v, err)) < 0)
      return rc;
    if (push_kv(&a->sets, &a->n_sets, k, v) < 0)
      return ooc_err_set(err, OOC_ENOMEM, "--set: out of memory");
    return OOC_OK;
  case OOC_OPT_DTYPE:
    if (ooc_dtype_parse(arg, &a->dtype) < 0)
      return ooc_err_set(err, OOC_EINVAL, "--dtype: unknown dtype '%s' "
                         "(fp32, fp16, bf16)", arg);
    a->dtype_set = 1;
    return OOC_OK;
  case OOC_OPT_HW:
    a->hw = arg;
    return OOC_OK;
  case OOC_OPT_HW_SET:
    if ((rc = add_kv(a, arg, "--hw-set", &k, &v, err)) < 0)
      return rc;
    if (push_hw(&a->hw_sets, &a->n_hw_sets, k, v) < 0)
      return ooc_err_set(err, OOC_ENOMEM, "--hw-set: out of memory");
    return OOC_OK;
  case 'p':
    if (*arg == '\0')
      return ooc_err_set(err, OOC_EINVAL, "-p: empty planner name");
    a->planner = arg;
    return OOC_OK;
  case OOC_OPT_BUDGET:
    if ((rc = ooc_parse_budget(arg, &a->budget, err)) < 0)
      return rc;
    a->budget_arg = arg;
    return OOC_OK;
  case OOC_OPT_ALLOCATOR:
    a->allocator = arg;
    return OOC_OK;
  case OOC_OPT_OPT:
    if ((rc = add_kv(a, arg, "--opt", &k, &v, err)) < 0)
      return rc;
    if (push_kv(&a->opts, &a->n_opts, k, v) < 0)
      return ooc_err_set(err, OOC_ENOMEM, "--opt: out of memory");
    return OOC_OK;
  case OOC_OPT_JSON:
    a->json = 1;
    return OOC_OK;
  case 'o':
    if (*arg == '\0')
      return ooc_err_set(err, OOC_EINVAL, "-o: empty output name");
    a->output = arg;
    return OOC_OK;
  case OOC_OPT_TRACE:
    a->trace = arg;
    return OOC_OK;
  case OOC_OPT_MEMCSV:
    a->mem_csv = arg;
    return OOC_OK;
  case OOC_OPT_TIMELINE_CSV:
    a->timeline_csv = arg;
    return OOC_OK;
  case OOC_OPT_FORMAT:
    if (strcmp(arg, "table") != 0 && strcmp(arg, "md") != 0 &&
        strcmp(arg, "csv") != 0 && strcmp(arg, "json") != 0)
      return ooc_err_set(err, OOC_EINVAL, "--format: unknown format '%s' "
                         "(table, md, csv, json)", arg);
    a->format = arg;
    a->json = 0;        /* --json is --format json: the last one wins */
    return OOC_OK;
  case OOC_OPT_NOTIMING:
    a->no_timing = 1;
    return OOC_OK;
  case OOC_OPT_OPTIMIZER:
    a->optimizer_set = 1;
    return ooc_cli_parse_optimizer(arg, &a->optimizer, err);
  case OOC_OPT_ITERS:
    if (ooc_parse_int(arg, "--iterations", &n, err) < 0 || n < 1 || n > 1000)
      return ooc_err_set(err, OOC_EINVAL, "--iterations: '%s' must be an "
                         "integer in [1, 1000]", arg);
    a->iterations = (int)n;
    return OOC_OK;
  case OOC_OPT_STEADY:
    a->steady = 1;
    return OOC_OK;
  case OOC_OPT_JOBS:
    return ooc_cli_parse_jobs(arg, &a->jobs, err);
  case OOC_OPT_BACKEND:
    if (*arg == '\0')
      return ooc_err_set(err, OOC_EINVAL, "--backend: empty backend name");
    a->backend = arg;
    return OOC_OK;
  case OOC_OPT_WARMUP:
    if (ooc_parse_int(arg, "--warmup", &n, err) < 0 || n < 0 || n > 1000)
      return ooc_err_set(err, OOC_EINVAL, "--warmup: '%s' must be an "
                         "integer in [0, 1000]", arg);
    a->warmup = (int)n;
    return OOC_OK;
  case OOC_OPT_THREADS:
    if (ooc_parse_int(arg, "--threads", &n, err) < 0 || n < 1 || n > 1024)
      return ooc_err_set(err, OOC_EINVAL, "--threads: '%s' must be an "
                         "integer in [1, 1024]", arg);
    a->threads = (int)n;
    return OOC_OK;
  case OOC_OPT_LINK: {
    double x;
    ooc_err e2 = { 0 };
    /* From 10 MB/s: slower would leave a replay running for hours, and a
     * rate near 0 makes the pacing's deadlines overflow. A plain decimal
     * (ooc_parse_double: no space, no hexadecimal). */
    if (ooc_parse_double(arg, "--link-GBps", &x, &e2) != OOC_OK ||
        !(x >= 0.01) || x > 1e6)
      return ooc_err_set(err, OOC_EINVAL, "--link-GBps: '%s' must be a "
                         "number of GB/s in [0.01, 1e6]", arg);
    a->link_GBps = x;
    return OOC_OK;
  }
  case OOC_OPT_VERIFY:
    a->verify = 1;
    return OOC_OK;
  case OOC_OPT_BASE:
    if (*arg == '\0')
      return ooc_err_set(err, OOC_EINVAL, "--base: empty profile name");
    a->base = arg;
    return OOC_OK;
  case OOC_OPT_REPEAT:
    if (ooc_parse_int(arg, "--repeat", &n, err) < 0 || n < 1 || n > 64)
      return ooc_err_set(err, OOC_EINVAL, "--repeat: '%s' must be an "
                         "integer in [1, 64]", arg);
    a->repeat = (int)n;
    return OOC_OK;
  case OOC_OPT_NOALGOS:
    a->no_algorithms = 1;
    return OOC_OK;
  case OOC_OPT_PRECISION:
    if (ooc_precision_parse(arg, &a->precision) != OOC_OK)
      return ooc_err_set(err, OOC_EINVAL, "--precision: unknown precision "
                         "'%s' (fp32, tf32, amp-fp16, amp-bf16)", arg);
    return OOC_OK;
  case OOC_OPT_NAME:
    if (*arg == '\0')
      return ooc_err_set(err, OOC_EINVAL, "--name: empty name");
    if ((n = ooc_control_char(arg)) >= 0)
      return ooc_err_set(err, OOC_EINVAL, "--name: holds control "
                         "character 0x%02x (a model's name holds none)",
                         (int)n);
    a->name = arg;
    return OOC_OK;
  case OOC_OPT_NOLOSS:
    a->no_loss = 1;
    return OOC_OK;
  default:
    return ooc_err_set(err, OOC_EINVAL, "internal: unhandled option %d", c);
  }
}

/* Add o to getopt_long's table unless a row of the same name is there. */
static void
add_getopt(struct option *lo, int *nl, char *so, int *ns,
           const ooc_cli_option *o)
{
  for (int i = 0; i < *nl; i++)
    if (strcmp(lo[i].name, o->name) == 0)
      return;
  lo[(*nl)++] = (struct option){ o->name,
                                 o->arg ? required_argument : no_argument,
                                 NULL, o->id };
  if (o->shortc) {
    so[(*ns)++] = o->shortc;
    if (o->arg)
      so[(*ns)++] = ':';
  }
}

/* getopt_long takes any unambiguous prefix of a long name ("--opt" for
 * "--optimizer" where a command has no --opt): refuse it, so that an
 * option the command does not take is never read as another one. o is the
 * option getopt_long matched; the element it came from is the last one
 * read, or the one before its separate value. */
static int
exact_name(char *const *argv, const struct option *o, const char *cmd,
           ooc_err *err)
{
  const char *e = argv[optind - 1];
  size_t n = strlen(o->name);

  if (o->has_arg == required_argument && optarg == argv[optind - 1] &&
      optind >= 2)
    e = argv[optind - 2];
  if (strncmp(e, "--", 2) == 0 && (strncmp(e + 2, o->name, n) != 0 ||
                                   (e[2 + n] != '\0' && e[2 + n] != '=')))
    return ooc_err_set(err, OOC_EINVAL, "%s: unknown option '%.*s' (see "
                       "'oocsim %s --help'; did you mean '--%s'?)", cmd,
                       (int)strcspn(e, "="), e, cmd, o->name);
  return OOC_OK;
}

int
ooc_cli_parse(unsigned cmd, int argc, char **argv, ooc_cli_handler handle,
              void *ctx, const char **pos, int max_pos, int *n_pos,
              int *help, ooc_err *err)
{
  struct option longopts[MAX_OPTS + 2];
  char shortopts[2 * MAX_OPTS + 4];
  int nl = 0, ns = 0, i, c, rc;

  *help = 0;
  if (n_pos)
    *n_pos = 0;
  shortopts[ns++] = ':';   /* report a missing argument as ':' */
  shortopts[ns++] = 'h';
  for (i = 0; ooc_cli_options[i].name != NULL && nl < MAX_OPTS; i++)
    if (ooc_cli_options[i].cmds & cmd)
      add_getopt(longopts, &nl, shortopts, &ns, &ooc_cli_options[i]);
  longopts[nl++] = (struct option){ "help", no_argument, NULL, OOC_OPT_HELP };
  longopts[nl] = (struct option){ 0 };
  shortopts[ns] = '\0';

  opterr = 0;
  optind = 0;   /* glibc: full reset, so commands may parse more than once */
  for (;;) {
    int li = -1;
    if ((c = getopt_long(argc, argv, shortopts, longopts, &li)) == -1)
      break;
    if (li >= 0 && (rc = exact_name(argv, &longopts[li], argv[0], err)) < 0)
      return rc;
    if (c == 'h' || c == OOC_OPT_HELP) {
      *help = 1;
      return OOC_OK;
    }
    if (c == '?') {
      if (optopt != 0 && optopt < 256)
        return ooc_err_set(err, OOC_EINVAL, "%s: unknown option '-%c' (see "
                           "'oocsim %s --help')", argv[0], optopt, argv[0]);
      return ooc_err_set(err, OOC_EINVAL, "%s: unknown option '%s' (see "
                         "'oocsim %s --help')", argv[0], argv[optind - 1],
                         argv[0]);
    }
    if (c == ':') {
      if (optopt != 0 && optopt < 256)
        return ooc_err_set(err, OOC_EINVAL, "%s: option '-%c' needs a value",
                           argv[0], optopt);
      return ooc_err_set(err, OOC_EINVAL, "%s: option '%s' needs a value",
                         argv[0], argv[optind - 1]);
    }
    /* Every command's -o names a file or folder: none is empty. */
    if (c == OOC_OPT_OUTPUT && optarg != NULL && *optarg == '\0')
      return ooc_err_set(err, OOC_EINVAL, "-o: empty output name");
    if ((rc = handle(ctx, c, optarg, err)) < 0)
      return rc;
  }
  for (i = optind; i < argc; i++) {
    if (n_pos == NULL || *n_pos >= max_pos)
      return ooc_err_set(err, OOC_EINVAL, "%s: unexpected argument '%s'",
                         argv[0], argv[i]);
    pos[(*n_pos)++] = argv[i];
  }
  return OOC_OK;
}

/* "  -m, --model MODEL" padded to the help column, then the help lines. */
#define HELP_COL 24

static void
print_option(FILE *f, char shortc, const char *name, const char *arg,
             const char *help)
{
  char left[96];
  const char *p;
  int n;

  if (shortc)
    n = snprintf(left, sizeof left, "  -%c, --%s%s%s", shortc, name,
                 arg ? " " : "", arg ? arg : "");
  else
    n = snprintf(left, sizeof left, "      --%s%s%s", name, arg ? " " : "",
                 arg ? arg : "");
  if (n + 2 > HELP_COL)
    fprintf(f, "%s\n%*s", left, HELP_COL, "");
  else
    fprintf(f, "%-*s", HELP_COL, left);
  for (p = help; *p; p++) {
    fputc(*p, f);
    if (*p == '\n')
      fprintf(f, "%*s", HELP_COL, "");
  }
  fputc('\n', f);
}

void
ooc_cli_usage(FILE *f, const ooc_cli_doc *doc)
{
  int i;

  fputs(doc->usage, f);
  if (doc->about != NULL && doc->about[0] != '\0') {
    fputc('\n', f);
    fputs(doc->about, f);
  }
  fputs("\nOptions:\n", f);
  for (i = 0; ooc_cli_options[i].name != NULL; i++) {
    const ooc_cli_option *o = &ooc_cli_options[i];
    if (o->cmds & doc->cmd)
      print_option(f, o->shortc, o->name, o->arg, o->help);
  }
  print_option(f, 'h', "help", NULL, "show this help");
  if (doc->examples != NULL && doc->examples[0] != '\0') {
    fputs("\nExamples:\n", f);
    fputs(doc->examples, f);
  }
}

int
ooc_cli_args_parse(ooc_cli_args *a, int argc, char **argv, unsigned cmd,
                   int positional, ooc_err *err)
{
  return ooc_cli_parse(cmd, argc, argv, ooc_cli_args_handle, a, a->pos,
                       positional ? OOC_CLI_MAX_POS : 0, &a->n_pos, &a->help,
                       err);
}

int
ooc_cli_args_start(ooc_cli_args *a, int argc, char **argv,
                   const ooc_cli_doc *doc, int positional, unsigned require,
                   int *status)
{
  ooc_err err = { 0 };

  ooc_cli_args_init(a);
  if (ooc_cli_args_parse(a, argc, argv, doc->cmd, positional, &err) < 0 ||
      (!a->help && ooc_cli_args_require(a, require, &err) < 0)) {
    *status = ooc_cli_fail("%s", err.msg);
    return 1;
  }
  if (a->help) {
    ooc_cli_usage(stdout, doc);
    *status = 0;
    return 1;
  }
  return 0;
}

int
ooc_cli_args_require(const ooc_cli_args *a, unsigned mask, ooc_err *err)
{
  if ((mask & OOC_CLI_MODEL) && a->model == NULL)
    return ooc_err_set(err, OOC_EINVAL, "missing -m MODEL");
  if ((mask & OOC_CLI_BATCH) && !a->batch_set)
    return ooc_err_set(err, OOC_EINVAL, "missing -b BATCH");
  if ((mask & OOC_CLI_HW) && a->hw == NULL)
    return ooc_err_set(err, OOC_EINVAL, "missing --hw HW");
  if ((mask & OOC_CLI_PLANNER) && a->planner == NULL)
    return ooc_err_set(err, OOC_EINVAL, "missing -p PLANNER");
  if ((mask & OOC_CLI_OUTPUT) && a->output == NULL)
    return ooc_err_set(err, OOC_EINVAL, "missing -o FILE");
  return OOC_OK;
}

void
ooc_cli_args_spec(const ooc_cli_args *a, ooc_scenario_spec *spec)
{
  *spec = (ooc_scenario_spec){
    .model = a->model,
    .batch = a->batch_set ? a->batch : 1,
    .dtype_set = a->dtype_set,
    .dtype = a->dtype,
    .precision = a->precision,
    .optimizer = a->optimizer,
    .sets = a->sets, .n_sets = a->n_sets,
    .hw = a->hw,
    .hw_sets = a->hw_sets, .n_hw_sets = a->n_hw_sets,
    .planner = a->planner,
    .opts = a->opts, .n_opts = a->n_opts,
    .allocator = a->allocator,
    .budget = a->budget,
    .iterations = a->iterations,
    .steady = a->steady,
  };
}
