/* bench/bench.c — simulator throughput: events per second and wall time
 * per simulated training iteration (issue 3, item 6). Run by `make bench`,
 * not part of `make check`.
 *
 * One idea: plan each network once with the `incore` planner, then run the
 * simulator on that program again and again (the way a search planner uses
 * it as an oracle) until at least MIN_WALL_S has passed, and divide; of
 * REPS such repetitions the fastest is reported, since on a shared machine
 * other work only ever adds time. The
 * cases are resnet50 at batch 256 and `resnet --set depth=1001` and
 * `depth=3002` (about 10^4 layers, as in SuperNeurons) on v100-nvlink2,
 * each with every allocator policy (ideal: the engine's own speed; the
 * others add their bookkeeping and the pricing of their driver actions)
 * and caching with expandable segments, under a budget large enough that
 * nothing runs out of memory, so every iteration simulates the whole
 * program.
 *
 * Output: a table on stdout and a JSON file (default bench/out/bench.json,
 * or the path given as the only argument). Memory: the program's bytes per
 * instruction and the process's peak RSS after each case show the cost is
 * linear in the number of ops. Also reported: the wall time to load each
 * model (ooc_model_load, the ~10^4-layer one included) and to plan it.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>

#include "sim/cost.h"
#include "ir/hw.h"
#include "ir/model.h"
#include "plan/plan.h"
#include "plan/planner.h"
#include "planners/registry.h"
#include "sim/sim.h"
#include "base/util.h"

#define MIN_WALL_S 0.1   /* per repetition */
#define REPS 5           /* repetitions; the fastest is reported */
#define ITERATIONS 4
#define HW_NAME "v100-nvlink2"
#define BUDGET (1ull << 40)
#define TARGET_EVENTS_PER_S 5e6 /* issue 3 item 6 */

struct bench_case {
  const char *label;
  const char *model;
  int64_t batch;
  const char *set;       /* one --set K=V, or NULL */
  double target_ms;      /* wall per iteration target, 0: none */
};

struct bench_result {
  int n_layers;
  int32_t n_instr;
  uint64_t events_per_iter;
  double iter_ms;        /* wall per simulated iteration */
  double events_per_s;
  double sim_iteration_s;/* the simulated iteration time */
  double load_ms;        /* ooc_model_load: parse, --set, shapes */
  double plan_ms;        /* costs, liveness, incore plan, lowering */
  uint64_t program_bytes;
  long maxrss_kib;
};

static uint64_t
program_bytes(const ooc_program *p)
{
  return (uint64_t)p->n_instr * sizeof *p->instr +
         (uint64_t)p->n_args * sizeof *p->args +
         (uint64_t)p->n_waits * sizeof *p->waits +
         (uint64_t)p->n_tensors * sizeof *p->tensors;
}

static int
run_case(const struct bench_case *bc, const char *spec, const ooc_hw *hw,
         struct bench_result *out, ooc_err *err)
{
  const ooc_allocator_type *at;
  const char *aopts;
  ooc_kv kv[1];
  char key[64];
  ooc_model_opts mo = { .batch = bc->batch };
  ooc_model *m = NULL;
  ooc_costs *costs = NULL;
  ooc_liveness *lv = NULL;
  ooc_sim *sim = NULL;
  ooc_program prog, scratch;
  ooc_plan pl;
  int plan_ready = 0, rc, rep;
  const ooc_planner_type *t;
  ooc_sim_result r;
  ooc_sim_config cfg;
  ooc_planner_ctx ctx;
  double best = 0;
  double t_load, t_plan;
  struct rusage ru;

  ooc_program_init(&prog);
  ooc_program_init(&scratch);
  if ((at = ooc_allocator_find(spec, &aopts, err)) == NULL)
    return OOC_ENOTFOUND;
  if (bc->set != NULL) {
    const char *eq = strchr(bc->set, '=');
    snprintf(key, sizeof key, "%.*s", (int)(eq - bc->set), bc->set);
    kv[0] = (ooc_kv){ .key = key, .value = eq + 1 };
    mo.sets = kv;
    mo.n_sets = 1;
  }
  t_load = ooc_wall_s();
  if ((rc = ooc_model_load(bc->model, &mo, &m, err)) < 0)
    goto done;
  t_load = ooc_wall_s() - t_load;
  t_plan = ooc_wall_s();
  if ((rc = ooc_costs_alloc(m, hw, &costs, err)) < 0)
    goto done;
  if ((rc = ooc_liveness_alloc(m, &lv, err)) < 0)
    goto done;
  cfg = (ooc_sim_config){
    .model = m, .hw = hw, .costs = costs, .allocator = at,
    .allocator_options = aopts, .budget = BUDGET, .iterations = ITERATIONS,
  };
  if ((rc = ooc_sim_alloc(&cfg, &sim, err)) < 0)
    goto done;
  if ((rc = ooc_plan_init(&pl, lv, err)) < 0)
    goto done;
  plan_ready = 1;
  if ((t = ooc_planner_find("incore", err)) == NULL) {
    rc = OOC_ENOTFOUND;
    goto done;
  }
  ctx = (ooc_planner_ctx){
    .model = m, .hw = hw, .costs = costs, .live = lv,
    .allocator = at, .allocator_options = aopts, .budget = BUDGET,
    .sim = sim,
    .scratch = &scratch,
  };
  if ((rc = ooc_planner_run(t, &ctx, &pl, &prog, err)) < 0)
    goto done;
  t_plan = ooc_wall_s() - t_plan;
  /* One warm-up run sizes every array; the timed runs allocate nothing. */
  if ((rc = ooc_sim_run(sim, &prog, &r, NULL, err)) < 0)
    goto done;
  if (!r.feasible) {
    rc = ooc_err_set(err, OOC_EINVAL, "%s: out of memory: %s", bc->label,
                     r.oom.reason);
    goto done;
  }
  for (rep = 0; rep < REPS; rep++) {
    double t0 = ooc_wall_s(), wall;
    int runs = 0;

    do {
      if ((rc = ooc_sim_run(sim, &prog, &r, NULL, err)) < 0)
        goto done;
      runs++;
      wall = ooc_wall_s() - t0;
    } while (wall < MIN_WALL_S);
    wall /= runs;                       /* one run: ITERATIONS iterations */
    if (rep == 0 || wall < best)
      best = wall;
  }
  getrusage(RUSAGE_SELF, &ru);
  *out = (struct bench_result){
    .n_layers = m->n_layers,
    .n_instr = prog.n_instr,
    .events_per_iter = r.events / (uint64_t)r.iterations,
    .iter_ms = best * 1e3 / ITERATIONS,
    .events_per_s = (double)r.events / best,
    .sim_iteration_s = (double)r.iteration_ns * 1e-9,
    .load_ms = t_load * 1e3,
    .plan_ms = t_plan * 1e3,
    .program_bytes = program_bytes(&prog),
    .maxrss_kib = ru.ru_maxrss,
  };
  rc = OOC_OK;
done:
  if (plan_ready)
    ooc_plan_fini(&pl);
  ooc_program_fini(&prog);
  ooc_program_fini(&scratch);
  ooc_sim_free(sim);
  ooc_liveness_free(lv);
  ooc_costs_free(costs);
  ooc_model_free(m);
  return rc;
}

int
main(int argc, char **argv)
{
  static const struct bench_case cases[] = {
    { "resnet50 b=256", "resnet50", 256, NULL, 1.0 },
    { "resnet depth=1001 b=16", "resnet", 16, "depth=1001", 0 },
    { "resnet depth=3002 b=16", "resnet", 16, "depth=3002", 100.0 },
  };
  static const char *const allocs[] = {
    "ideal", "caching", "caching:expandable_segments", "bestfit", "pool",
    "va",
  };
  enum { N_CASES = sizeof cases / sizeof cases[0],
         N_ALLOCS = sizeof allocs / sizeof allocs[0] };
  struct bench_result res[N_CASES][N_ALLOCS];
  const char *path = argc > 1 ? argv[1] : "bench/out/bench.json";
  ooc_hw *hw = NULL;
  ooc_err err;
  FILE *f;
  int i, j;

  ooc_err_clear(&err);
  if (ooc_hw_load(HW_NAME, NULL, 0, &hw, &err) < 0) {
    fprintf(stderr, "bench: %s\n", err.msg);
    return 1;
  }
  printf("%-24s %-27s %7s %7s %9s %11s %10s %8s %8s %8s %8s\n", "case",
         "alloc", "layers", "instr", "events/it", "wall/it ms", "events/s",
         "B/instr", "rss MiB", "load ms", "plan ms");
  for (i = 0; i < N_CASES; i++)
    for (j = 0; j < N_ALLOCS; j++) {
      const struct bench_result *r = &res[i][j];
      if (run_case(&cases[i], allocs[j], hw, &res[i][j], &err) < 0) {
        fprintf(stderr, "bench: %s: %s\n", cases[i].label, err.msg);
        ooc_hw_free(hw);
        return 1;
      }
      printf("%-24s %-27s %7d %7d %9llu %11.4f %10.3e %8.1f %8.1f %8.2f "
             "%8.2f\n", cases[i].label, allocs[j], r->n_layers,
             r->n_instr, (unsigned long long)r->events_per_iter, r->iter_ms,
             r->events_per_s, (double)r->program_bytes / r->n_instr,
             r->maxrss_kib / 1024.0, r->load_ms, r->plan_ms);
    }
  /* Measured figures against the targets, as ratios. */
  {
    double min_eps = 0;
    for (i = 0; i < N_CASES; i++)
      for (j = 0; j < N_ALLOCS; j++)
        if (min_eps == 0 || res[i][j].events_per_s < min_eps)
          min_eps = res[i][j].events_per_s;
    printf("\ntarget                       measured (worst)   ratio\n");
    printf("events/s >= 5e6              %-18.3e %.2fx the target\n",
           min_eps, min_eps / TARGET_EVENTS_PER_S);
    for (i = 0; i < N_CASES; i++) {
      double worst = 0;
      if (cases[i].target_ms <= 0)
        continue;
      for (j = 0; j < N_ALLOCS; j++)
        if (res[i][j].iter_ms > worst)
          worst = res[i][j].iter_ms;
      printf("%-24s <= %-4g ms %-14.4f %.3fx the target\n", cases[i].label,
             cases[i].target_ms, worst, worst / cases[i].target_ms);
    }
  }
  ooc_hw_free(hw);

  if (strchr(path, '/') != NULL) {
    char dir[512];
    snprintf(dir, sizeof dir, "%s", path);
    *strrchr(dir, '/') = '\0';
    mkdir(dir, 0777);
  }
  f = fopen(path, "w");
  if (f == NULL) {
    fprintf(stderr, "bench: cannot write %s\n", path);
    return 1;
  }
  fprintf(f, "{\n  \"hw\": \"%s\",\n  \"planner\": \"incore\",\n"
          "  \"iterations_per_run\": %d,\n  \"repetitions\": %d,\n"
          "  \"results\": [\n", HW_NAME, ITERATIONS, REPS);
  for (i = 0; i < N_CASES; i++)
    for (j = 0; j < N_ALLOCS; j++) {
      const struct bench_result *r = &res[i][j];
      fprintf(f, "    {\"case\": \"%s\", \"allocator\": \"%s\", "
              "\"layers\": %d, \"instructions\": %d, "
              "\"events_per_iteration\": %llu, "
              "\"wall_ms_per_iteration\": %.6f, \"events_per_s\": %.0f, "
              "\"simulated_iteration_s\": %.9f, \"program_bytes\": %llu, "
              "\"maxrss_kib\": %ld, \"model_load_ms\": %.3f, "
              "\"plan_ms\": %.3f, ",
              cases[i].label, allocs[j], r->n_layers, r->n_instr,
              (unsigned long long)r->events_per_iter, r->iter_ms,
              r->events_per_s, r->sim_iteration_s,
              (unsigned long long)r->program_bytes, r->maxrss_kib,
              r->load_ms, r->plan_ms);
      if (cases[i].target_ms > 0)
        fprintf(f, "\"target_wall_ms\": %.1f}", cases[i].target_ms);
      else
        fprintf(f, "\"target_wall_ms\": null}");
      fprintf(f, "%s\n", i + 1 < N_CASES || j + 1 < N_ALLOCS ? "," : "");
    }
  fprintf(f, "  ],\n  \"target_events_per_s\": 5000000\n}\n");
  fclose(f);
  printf("wrote %s\n", path);
  return 0;
}
