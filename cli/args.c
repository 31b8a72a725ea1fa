/* cli/args.c — shared option parsing for the oocsim commands (args.h).
 *
 * One getopt_long table holds every shared option; a command's mask picks
 * the ones it accepts, so an option a command does not take is reported as
 * unknown for that command. getopt's own messages are silenced (opterr = 0)
 * and replaced by one ooc_err line naming the option. O(argc).
 */
#include "config.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "cli/args.h"
#include "cli/commands.h"
#include "base/util.h"

enum {
  O_SET = 256, O_DTYPE, O_HW, O_HW_SET, O_BUDGET, O_ALLOCATOR, O_OPT, O_JSON,
  O_TRACE, O_MEMCSV, O_FORMAT, O_NOTIMING, O_OPTIMIZER, O_ITERS, O_HELP
};

struct shared_opt {
  struct option opt;
  unsigned bit;
  char shortc;
};

static const struct shared_opt shared[] = {
  { { "model", required_argument, NULL, 'm' }, OOC_CLI_MODEL, 'm' },
  { { "batch", required_argument, NULL, 'b' }, OOC_CLI_BATCH, 'b' },
  { { "set", required_argument, NULL, O_SET }, OOC_CLI_SET, 0 },
  { { "dtype", required_argument, NULL, O_DTYPE }, OOC_CLI_DTYPE, 0 },
  { { "hw", required_argument, NULL, O_HW }, OOC_CLI_HW, 0 },
  { { "hw-set", required_argument, NULL, O_HW_SET }, OOC_CLI_HW_SET, 0 },
  { { "planner", required_argument, NULL, 'p' }, OOC_CLI_PLANNER, 'p' },
  { { "budget", required_argument, NULL, O_BUDGET }, OOC_CLI_BUDGET, 0 },
  { { "allocator", required_argument, NULL, O_ALLOCATOR }, OOC_CLI_ALLOCATOR, 0 },
  { { "opt", required_argument, NULL, O_OPT }, OOC_CLI_OPT, 0 },
  { { "json", no_argument, NULL, O_JSON }, OOC_CLI_JSON, 0 },
  { { "output", required_argument, NULL, 'o' }, OOC_CLI_OUTPUT, 'o' },
  { { "trace", required_argument, NULL, O_TRACE }, OOC_CLI_TRACE, 0 },
  { { "mem-csv", required_argument, NULL, O_MEMCSV }, OOC_CLI_MEMCSV, 0 },
  { { "format", required_argument, NULL, O_FORMAT }, OOC_CLI_FORMAT, 0 },
  { { "no-timing", no_argument, NULL, O_NOTIMING }, OOC_CLI_NOTIMING, 0 },
  { { "optimizer", required_argument, NULL, O_OPTIMIZER }, OOC_CLI_OPTIMIZER, 0 },
  { { "iterations", required_argument, NULL, O_ITERS }, OOC_CLI_ITERS, 0 },
};
#define N_SHARED ((int)(sizeof shared / sizeof shared[0]))
#define MAX_EXTRA 32

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
  *a = (ooc_cli_args){ .optimizer = OOC_OPT_SGD_MOMENTUM };
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
  if (strcmp(s, "momentum") == 0 || strcmp(s, "sgd-momentum") == 0)
    *out = OOC_OPT_SGD_MOMENTUM;
  else if (strcmp(s, "sgd") == 0)
    *out = OOC_OPT_SGD;
  else if (strcmp(s, "adam") == 0)
    *out = OOC_OPT_ADAM;
  else
    return ooc_err_set(err, OOC_EINVAL,
                       "--optimizer: unknown optimizer '%s' (sgd, momentum, "
                       "adam)", s);
  return OOC_OK;
}

int
ooc_cli_getopt_error(int c, char *const *argv, const char *cmd,
                     ooc_err *err)
{
  if (c == ':')
    return ooc_err_set(err, OOC_EINVAL, "option '%s' needs a value",
                       argv[optind - 1]);
  return ooc_err_set(err, OOC_EINVAL, "%s: unknown option '%s' (see 'oocsim "
                     "%s --help')", cmd, argv[optind - 1], cmd);
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

static int
push_kv(ooc_kv **arr, int *n, const char *key, const char *value)
{
  ooc_kv *p = realloc(*arr, (size_t)(*n + 1) * sizeof *p);
  if (p == NULL)
    return OOC_ENOMEM;
  *arr = p;
  p[(*n)++] = (ooc_kv){ .key = key, .value = value };
  return OOC_OK;
}

static int
push_hw(ooc_hw_override **arr, int *n, const char *key, const char *value)
{
  ooc_hw_override *p = realloc(*arr, (size_t)(*n + 1) * sizeof *p);
  if (p == NULL)
    return OOC_ENOMEM;
  *arr = p;
  p[(*n)++] = (ooc_hw_override){ .key = key, .value = value };
  return OOC_OK;
}

static int
handle_shared(ooc_cli_args *a, int c, const char *arg, ooc_err *err)
{
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
  case O_SET:
    if ((rc = add_kv(a, arg, "--set", &k, &v, err)) < 0)
      return rc;
    if (push_kv(&a->sets, &a->n_sets, k, v) < 0)
      return ooc_err_set(err, OOC_ENOMEM, "--set: out of memory");
    return OOC_OK;
  case O_DTYPE:
    if (ooc_dtype_parse(arg, &a->dtype) < 0)
      return ooc_err_set(err, OOC_EINVAL, "--dtype: unknown dtype '%s' "
                         "(fp32, fp16, bf16)", arg);
    a->dtype_set = 1;
    return OOC_OK;
  case O_HW:
    a->hw = arg;
    return OOC_OK;
  case O_HW_SET:
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
  case O_BUDGET:
    if ((rc = ooc_parse_size(arg, "--budget", &a->budget, err)) < 0)
      return rc;
    if (a->budget == 0)
      return ooc_err_set(err, OOC_EINVAL, "--budget: '%s' must be > 0", arg);
    return OOC_OK;
  case O_ALLOCATOR:
    a->allocator = arg;
    return OOC_OK;
  case O_OPT:
    if ((rc = add_kv(a, arg, "--opt", &k, &v, err)) < 0)
      return rc;
    if (push_kv(&a->opts, &a->n_opts, k, v) < 0)
      return ooc_err_set(err, OOC_ENOMEM, "--opt: out of memory");
    return OOC_OK;
  case O_JSON:
    a->json = 1;
    return OOC_OK;
  case 'o':
    if (*arg == '\0')
      return ooc_err_set(err, OOC_EINVAL, "-o: empty output name");
    a->output = arg;
    return OOC_OK;
  case O_TRACE:
    a->trace = arg;
    return OOC_OK;
  case O_MEMCSV:
    a->mem_csv = arg;
    return OOC_OK;
  case O_FORMAT:
    if (strcmp(arg, "table") != 0 && strcmp(arg, "md") != 0 &&
        strcmp(arg, "csv") != 0 && strcmp(arg, "json") != 0)
      return ooc_err_set(err, OOC_EINVAL, "--format: unknown format '%s' "
                         "(table, md, csv, json)", arg);
    a->format = arg;
    return OOC_OK;
  case O_NOTIMING:
    a->no_timing = 1;
    return OOC_OK;
  case O_OPTIMIZER:
    return ooc_cli_parse_optimizer(arg, &a->optimizer, err);
  case O_ITERS:
    if (ooc_parse_int(arg, "--iterations", &n, err) < 0 || n < 1 || n > 1000)
      return ooc_err_set(err, OOC_EINVAL, "--iterations: '%s' must be an "
                         "integer in [1, 1000]", arg);
    a->iterations = (int)n;
    return OOC_OK;
  default:
    return ooc_err_set(err, OOC_EINVAL, "internal: unhandled option %d", c);
  }
}

int
ooc_cli_args_parse(ooc_cli_args *a, int argc, char **argv, unsigned accept,
                   const ooc_cli_extra *extra, ooc_err *err)
{
  struct option longopts[N_SHARED + MAX_EXTRA + 2];
  char shortopts[64];
  int nl = 0, ns = 0, i, c, rc;

  shortopts[ns++] = ':';   /* report a missing argument as ':' */
  shortopts[ns++] = 'h';
  for (i = 0; i < N_SHARED; i++) {
    if ((accept & shared[i].bit) == 0)
      continue;
    longopts[nl++] = shared[i].opt;
    if (shared[i].shortc) {
      shortopts[ns++] = shared[i].shortc;
      shortopts[ns++] = ':';
    }
  }
  if (extra != NULL && extra->options != NULL)
    for (i = 0; extra->options[i].name != NULL && i < MAX_EXTRA; i++)
      longopts[nl++] = extra->options[i];
  longopts[nl++] = (struct option){ "help", no_argument, NULL, O_HELP };
  longopts[nl] = (struct option){ 0 };
  if (extra != NULL && extra->shortopts != NULL) {
    size_t len = strlen(extra->shortopts);
    if (len > sizeof shortopts - (size_t)ns - 1)
      return ooc_err_set(err, OOC_EINVAL, "internal: too many short options");
    memcpy(shortopts + ns, extra->shortopts, len);
    ns += (int)len;
  }
  shortopts[ns] = '\0';

  opterr = 0;
  optind = 0;   /* glibc: full reset, so commands may parse more than once */
  while ((c = getopt_long(argc, argv, shortopts, longopts, NULL)) != -1) {
    if (c == 'h' || c == O_HELP) {
      a->help = 1;
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
    if (c >= 1000) {
      if (extra == NULL || extra->handle == NULL)
        return ooc_err_set(err, OOC_EINVAL, "internal: no handler for %d", c);
      if ((rc = extra->handle(extra->ctx, c, optarg, err)) < 0)
        return rc;
      continue;
    }
    if (extra != NULL && extra->shortopts != NULL && c < 256 &&
        strchr(extra->shortopts, c) != NULL) {
      if ((rc = extra->handle(extra->ctx, c, optarg, err)) < 0)
        return rc;
      continue;
    }
    if ((rc = handle_shared(a, c, optarg, err)) < 0)
      return rc;
  }
  for (i = optind; i < argc; i++) {
    if ((accept & OOC_CLI_POSITIONAL) == 0 || a->n_pos == OOC_CLI_MAX_POS)
      return ooc_err_set(err, OOC_EINVAL, "%s: unexpected argument '%s'",
                         argv[0], argv[i]);
    a->pos[a->n_pos++] = argv[i];
  }
  return OOC_OK;
}

int
ooc_cli_args_start(ooc_cli_args *a, int argc, char **argv, unsigned accept,
                   unsigned require, void (*usage)(FILE *), int *status)
{
  ooc_err err = { 0 };

  ooc_cli_args_init(a);
  if (ooc_cli_args_parse(a, argc, argv, accept, NULL, &err) < 0 ||
      (!a->help && ooc_cli_args_require(a, require, &err) < 0)) {
    *status = ooc_cli_fail("%s", err.msg);
    return 1;
  }
  if (a->help) {
    usage(stdout);
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
    .optimizer = a->optimizer,
    .sets = a->sets, .n_sets = a->n_sets,
    .hw = a->hw,
    .hw_sets = a->hw_sets, .n_hw_sets = a->n_hw_sets,
    .planner = a->planner,
    .opts = a->opts, .n_opts = a->n_opts,
    .allocator = a->allocator,
    .budget = a->budget,
    .iterations = a->iterations,
  };
}
