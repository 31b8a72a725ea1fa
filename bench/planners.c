/* bench/planners.c — the planner benchmark (`make bench-planners`, issue
 * 12): every zoo model on v100-pcie3, v100-nvlink2, h100-pcie5 and
 * gh200-c2c at 2x, 4x and 8x its in-core maximum batch (the largest batch
 * the incore planner fits on that profile), keeping the scenarios whose
 * largest step's working set fits the budget (elsewhere no plan can
 * exist). Every registered planner but incore and naive plans each
 * scenario; per planner: feasible, iteration time, x lower bound, solve
 * time (its planning wall time) and simulations (plan_simulations).
 *
 * Then, per planner: the scenarios it wins or ties (within 0.5% of the
 * fastest feasible plan), where it is feasible, its geometric-mean x lower
 * bound over the scenarios where it is feasible and its worst, and how
 * many of its feasible plans are not steady (sim/sim.h: the second
 * iteration still took or gave back device memory); and joint's
 * targets: feasible wherever any planner is, never more than 0.5% slower
 * than the best other planner, geometric mean x bound, solve time on
 * resnet152 and on a 10^4-layer resnet (depth 3002, 2x its in-core batch
 * on h100-pcie5: it does not fit a 16 GB profile in core even at batch
 * 1); and the plans, of any planner, faster than the lower bound (there
 * must be none). Then joint once more on every scenario with `--opt
 * budget_s=1` (its whole solve bounded by a second of wall time;
 * BENCH_NO_BUDGET=1 skips it): where it is infeasible while another
 * planner fits, how many scenarios it is more than 0.5% slower than the
 * best other planner and its worst, its geometric-mean x bound and its
 * longest solves (apart: where no planner fits, and a start the budget
 * cut runs again without it). Measured figures, printed; nothing is enforced.
 *
 * Output: bench/out/planners.json and bench/out/planners.md (or the
 * folder given as the first argument). BENCH_MODELS (space-separated)
 * restricts the models; BENCH_NO_DEEP=1 skips the 10^4-layer case;
 * BENCH_STEADY=1 plans and simulates every scenario as --steady does
 * (until the allocator is steady, sim/sim.h).
 */
#include "config.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "analysis/benchset.h"
#include "analysis/maxbatch.h"
#include "analysis/scenario.h"
#include "analysis/summary.h"
#include "base/util.h"
#include "planners/registry.h"

#define MAXP 32

/* The scenario set, shared with tests/check_bench_bound.c. */
static const char *const *const profiles = ooc_benchset_profiles;
static const int *const mults = ooc_benchset_mults;

typedef struct {
  int feasible, steady;
  double it, xb, solve;
  double sims;
} cell;

typedef struct {
  int wins, feasible, unsteady;
  double log_xb, worst_xb;
  int n_xb;
} agg;

static const char *planners[MAXP];
static int n_planners;

/* One planner on one scenario (with the options opts, NULL: none). */
static int
run_one(const char *model, const char *hw, int64_t batch,
        const ooc_kv *sets, int n_sets, const char *planner,
        const ooc_kv *opts, cell *c, int *no_fit, ooc_err *err)
{
  ooc_scenario_spec sp = { .model = model, .batch = batch, .hw = hw,
                           .planner = planner, .sets = sets,
                           .n_sets = n_sets, .opts = opts,
                           .n_opts = opts != NULL,
                           .steady = getenv("BENCH_STEADY") != NULL &&
                                     strcmp(getenv("BENCH_STEADY"), "1") == 0 };
  ooc_summary s = { 0 };
  int rc = ooc_scenario_run(&sp, &s, NULL, err);

  if (rc < 0)
    return rc;
  *c = (cell){ .feasible = s.feasible, .steady = s.steady,
               .it = s.iteration_s,
               .xb = s.feasible && s.lower_bound_s > 0
                         ? s.iteration_s / s.lower_bound_s : 0,
               .solve = s.plan_wall_s, .sims = (double)s.plan_simulations };
  *no_fit = !s.feasible && strstr(s.oom.reason, "no plan can fit") != NULL;
  ooc_summary_fini(&s);
  return OOC_OK;
}

int
main(int argc, char **argv)
{
  const char *dir = argc > 1 ? argv[1] : "bench/out";
  const char *only = getenv("BENCH_MODELS");
  char **models = NULL, path[512];
  int n_models = 0, m, h, k, p, rc, n_sc = 0;
  agg ag[MAXP];
  double joint_worst_gap = 0, joint_r152_solve = 0, deep_solve = -1;
  int joint_missing = 0, ji = -1, beats = 0;
  /* joint at budget_s=1 (BENCH_NO_BUDGET=1 skips it) */
  int jb_on = getenv("BENCH_NO_BUDGET") == NULL ||
              strcmp(getenv("BENCH_NO_BUDGET"), "1") != 0;
  int jb_missing = 0, jb_over = 0, jb_scored = 0, jb_n = 0;
  double jb_worst_gap = -1, jb_log = 0, jb_max_solve = 0, jb_r152_solve = 0;
  double jb_nofit_solve = 0;
  int jb_r152_over = 0, jb_r152_scored = 0;
  ooc_err err = { 0 };
  cJSON *root = cJSON_CreateObject(), *scs, *sum;
  FILE *md;
  char *txt;

  for (k = 0; ooc_planner_types[k] != NULL && n_planners < MAXP; k++)
    if (strcmp(ooc_planner_types[k]->name, "incore") != 0 &&
        strcmp(ooc_planner_types[k]->name, "naive") != 0) {
      if (strcmp(ooc_planner_types[k]->name, "joint") == 0)
        ji = n_planners;
      planners[n_planners++] = ooc_planner_types[k]->name;
    }
  memset(ag, 0, sizeof ag);
  if (ooc_data_list("models", &models, &n_models, &err) < 0) {
    fprintf(stderr, "bench-planners: %s\n", err.msg);
    return 1;
  }
  mkdir(dir, 0777);
  snprintf(path, sizeof path, "%s/planners.md", dir);
  if ((md = fopen(path, "w")) == NULL) {
    fprintf(stderr, "bench-planners: cannot write %s\n", path);
    return 1;
  }
  scs = cJSON_AddArrayToObject(root, "scenarios");
  fprintf(md, "# Planner benchmark\n\nx lower bound per scenario (- : "
          "infeasible; **bold**: the fastest, ties within 0.5%%).\n\n"
          "| model | hw | x | batch |");
  for (p = 0; p < n_planners; p++)
    fprintf(md, " %s |", planners[p]);
  fprintf(md, "\n|---|---|---|---:|");
  for (p = 0; p < n_planners; p++)
    fprintf(md, "---:|");
  fprintf(md, "\n");
  printf("%-14s %-13s %2s %7s  best          x bound  joint x bound  "
         "joint solve s\n", "model", "hw", "x", "batch");

  for (m = 0; m < n_models; m++) {
    if (only != NULL) {
      char pad[512];
      snprintf(pad, sizeof pad, " %s ", only);
      char key[256];
      snprintf(key, sizeof key, " %s ", models[m]);
      if (strstr(pad, key) == NULL)
        continue;
    }
    for (h = 0; profiles[h] != NULL; h++) {
      int64_t b0 = 0;
      if ((rc = ooc_benchset_incore_max(models[m], profiles[h], NULL, 0,
                                        &b0, &err)) < 0) {
        fprintf(stderr, "bench-planners: %s on %s: %s\n", models[m],
                profiles[h], err.msg);
        continue;
      }
      for (k = 0; k < OOC_BENCHSET_NMULTS && b0 > 0; k++) {
        int64_t B = b0 * mults[k];
        cell c[MAXP];
        int no_fit = 0, any = 0, best = -1, bo = -1;
        cJSON *o, *res;
        for (p = 0; p < n_planners; p++) {
          int nf = 0;
          if (run_one(models[m], profiles[h], B, NULL, 0, planners[p], NULL,
                      &c[p], &nf, &err) < 0) {
            fprintf(stderr, "bench-planners: %s b%lld %s %s: %s\n",
                    models[m], (long long)B, profiles[h], planners[p],
                    err.msg);
            c[p] = (cell){ 0 };
          }
          no_fit |= nf;
          if (nf)
            break;             /* no plan can fit: skip the scenario */
        }
        if (no_fit)
          continue;
        for (p = 0; p < n_planners; p++)
          if (c[p].feasible) {
            any = 1;
            if (best < 0 || c[p].it < c[best].it)
              best = p;
            if (p != ji && (bo < 0 || c[p].it < c[bo].it))
              bo = p;
          }
        n_sc++;
        o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, "model", models[m]);
        cJSON_AddStringToObject(o, "hw", profiles[h]);
        cJSON_AddNumberToObject(o, "multiple", mults[k]);
        cJSON_AddNumberToObject(o, "incore_max_batch", (double)b0);
        cJSON_AddNumberToObject(o, "batch", (double)B);
        res = cJSON_AddArrayToObject(o, "results");
        fprintf(md, "| %s | %s | %d | %lld |", models[m], profiles[h],
                mults[k], (long long)B);
        for (p = 0; p < n_planners; p++) {
          cJSON *r = cJSON_CreateObject();
          int tie = any && c[p].feasible && c[p].it <= c[best].it * 1.005;
          cJSON_AddStringToObject(r, "planner", planners[p]);
          cJSON_AddBoolToObject(r, "feasible", c[p].feasible);
          if (c[p].feasible) {
            cJSON_AddNumberToObject(r, "iteration_s", c[p].it);
            cJSON_AddNumberToObject(r, "x_lower_bound", c[p].xb);
            cJSON_AddBoolToObject(r, "steady", c[p].steady);
          } else {
            cJSON_AddNullToObject(r, "iteration_s");
            cJSON_AddNullToObject(r, "x_lower_bound");
          }
          cJSON_AddNumberToObject(r, "solve_s", c[p].solve);
          cJSON_AddNumberToObject(r, "simulations", c[p].sims);
          cJSON_AddBoolToObject(r, "wins_or_ties", tie);
          cJSON_AddItemToArray(res, r);
          if (c[p].feasible) {
            if (c[p].xb < 1 - 1e-9) {
              beats++;
              fprintf(stderr, "bench-planners: %s beats the lower bound on "
                      "%s b%lld %s (x %.6f)\n", planners[p], models[m],
                      (long long)B, profiles[h], c[p].xb);
            }
            ag[p].feasible++;
            ag[p].unsteady += !c[p].steady;
            ag[p].wins += tie;
            ag[p].log_xb += log(c[p].xb);
            ag[p].n_xb++;
            if (c[p].xb > ag[p].worst_xb)
              ag[p].worst_xb = c[p].xb;
            fprintf(md, tie ? " **%.3f** |" : " %.3f |", c[p].xb);
          } else {
            fprintf(md, " - |");
          }
        }
        fprintf(md, "\n");
        cJSON_AddItemToArray(scs, o);
        if (ji >= 0) {
          if (bo >= 0 && !c[ji].feasible)
            joint_missing++;
          if (bo >= 0 && c[ji].feasible) {
            double gap = (c[ji].it - c[bo].it) / c[bo].it;
            if (gap > joint_worst_gap)
              joint_worst_gap = gap;
          }
          if (strcmp(models[m], "resnet152") == 0 &&
              c[ji].solve > joint_r152_solve)
            joint_r152_solve = c[ji].solve;
        }
        if (ji >= 0 && jb_on) {
          /* joint again, with a time budget of 1 s for its whole solve. */
          ooc_kv bkv = { .key = "budget_s", .value = "1" };
          cJSON *jb = cJSON_AddObjectToObject(o, "joint_budget_1s");
          cell cb;
          int nf = 0;
          if (run_one(models[m], profiles[h], B, NULL, 0, "joint", &bkv, &cb,
                      &nf, &err) < 0) {
            fprintf(stderr, "bench-planners: %s b%lld %s joint budget_s=1: "
                    "%s\n", models[m], (long long)B, profiles[h], err.msg);
            cb = (cell){ 0 };
          }
          cJSON_AddBoolToObject(jb, "feasible", cb.feasible);
          if (cb.feasible) {
            cJSON_AddNumberToObject(jb, "iteration_s", cb.it);
            cJSON_AddNumberToObject(jb, "x_lower_bound", cb.xb);
            jb_log += log(cb.xb);
            jb_n++;
            if (cb.xb < 1 - 1e-9) {
              beats++;
              fprintf(stderr, "bench-planners: joint budget_s=1 beats the "
                      "lower bound on %s b%lld %s (x %.6f)\n", models[m],
                      (long long)B, profiles[h], cb.xb);
            }
          } else {
            cJSON_AddNullToObject(jb, "iteration_s");
            cJSON_AddNullToObject(jb, "x_lower_bound");
          }
          cJSON_AddNumberToObject(jb, "solve_s", cb.solve);
          cJSON_AddNumberToObject(jb, "simulations", cb.sims);
          if (bo >= 0 && !cb.feasible)
            jb_missing++;
          if (bo >= 0 && cb.feasible) {
            double gap = (cb.it - c[bo].it) / c[bo].it;
            jb_scored++;
            jb_over += gap > 0.005;
            if (strcmp(models[m], "resnet152") == 0) {
              jb_r152_scored++;
              jb_r152_over += gap > 0.005;
            }
            if (gap > jb_worst_gap)
              jb_worst_gap = gap;
          }
          /* Where nothing fits, a start that budget_s cut runs again
           * without it (planners/joint.c): counted apart. */
          if (bo < 0 && cb.solve > jb_nofit_solve)
            jb_nofit_solve = cb.solve;
          if (bo >= 0 && cb.solve > jb_max_solve)
            jb_max_solve = cb.solve;
          if (bo >= 0 && strcmp(models[m], "resnet152") == 0 &&
              cb.solve > jb_r152_solve)
            jb_r152_solve = cb.solve;
        }
        printf("%-14s %-13s %2d %7lld  %-13s %7.3f  %13.3f  %13.3f\n",
               models[m], profiles[h], mults[k], (long long)B,
               best >= 0 ? planners[best] : "-",
               best >= 0 ? c[best].xb : 0.0,
               ji >= 0 && c[ji].feasible ? c[ji].xb : 0.0,
               ji >= 0 ? c[ji].solve : 0.0);
        fflush(stdout);
      }
    }
  }
  ooc_data_list_free(models, n_models);

  /* The 10^4-layer resnet: joint's solve time at 2x its in-core batch. */
  if (ji >= 0 && getenv("BENCH_NO_DEEP") == NULL) {
    ooc_kv set = { .key = "depth", .value = "3002" };
    int64_t b0 = 0;
    cell c;
    int nf = 0;
    if (ooc_benchset_incore_max("resnet", "h100-pcie5", &set, 1, &b0,
                                &err) == OOC_OK &&
        b0 > 0 &&
        run_one("resnet", "h100-pcie5", 2 * b0, &set, 1, "joint", NULL, &c,
                &nf, &err) == OOC_OK) {
      deep_solve = c.solve;
      printf("resnet depth=3002 (10^4 layers) b%lld h100-pcie5: joint %s, "
             "%.3f s to plan, %.0f simulations\n", (long long)(2 * b0),
             c.feasible ? "feasible" : "infeasible", c.solve, c.sims);
    } else {
      fprintf(stderr, "bench-planners: resnet depth=3002: %s\n", err.msg);
    }
  }

  cJSON_AddNumberToObject(root, "plans_beating_the_lower_bound", beats);
  printf("plans faster than the lower bound: %d\n", beats);
  sum = cJSON_AddObjectToObject(root, "summary");
  fprintf(md, "\nPlans faster than the lower bound: %d.\n", beats);
  fprintf(md, "\n## Per planner (%d scenarios)\n\nNot steady: feasible "
          "plans whose second iteration still took or gave back device "
          "memory (a longer run may differ or run out of memory; "
          "`--steady`).\n\n| planner | wins or ties | "
          "feasible | not steady | geomean x bound | worst x bound |\n"
          "|---|---:|---:|---:|---:|---:|\n", n_sc);
  printf("\n%-14s %5s %8s %10s %8s %8s   (%d scenarios)\n", "planner",
         "wins", "feasible", "not steady", "geomean", "worst", n_sc);
  for (p = 0; p < n_planners; p++) {
    cJSON *o = cJSON_AddObjectToObject(sum, planners[p]);
    double g = ag[p].n_xb > 0 ? exp(ag[p].log_xb / ag[p].n_xb) : 0;
    cJSON_AddNumberToObject(o, "wins_or_ties", ag[p].wins);
    cJSON_AddNumberToObject(o, "feasible", ag[p].feasible);
    cJSON_AddNumberToObject(o, "not_steady", ag[p].unsteady);
    cJSON_AddNumberToObject(o, "geomean_x_lower_bound", g);
    cJSON_AddNumberToObject(o, "worst_x_lower_bound", ag[p].worst_xb);
    fprintf(md, "| %s | %d | %d | %d | %.3f | %.3f |\n", planners[p],
            ag[p].wins, ag[p].feasible, ag[p].unsteady, g, ag[p].worst_xb);
    printf("%-14s %5d %8d %10d %8.3f %8.3f\n", planners[p], ag[p].wins,
           ag[p].feasible, ag[p].unsteady, g, ag[p].worst_xb);
  }
  if (ji >= 0) {
    cJSON *t = cJSON_AddObjectToObject(root, "joint_targets");
    double g = ag[ji].n_xb > 0 ? exp(ag[ji].log_xb / ag[ji].n_xb) : 0;
    cJSON_AddNumberToObject(t, "scenarios_infeasible_where_another_fits",
                            joint_missing);
    cJSON_AddNumberToObject(t, "worst_slowdown_vs_best_other",
                            joint_worst_gap);
    cJSON_AddNumberToObject(t, "geomean_x_lower_bound", g);
    cJSON_AddNumberToObject(t, "resnet152_max_solve_s", joint_r152_solve);
    cJSON_AddNumberToObject(t, "resnet_10k_layers_solve_s", deep_solve);
    fprintf(md, "\n## joint's targets\n\n| target | measured | met |\n"
            "|---|---:|---|\n"
            "| feasible wherever any planner is | %d scenarios missed | %s |\n"
            "| never > 0.5%% slower than the best other | worst %+.2f%% | %s |\n"
            "| geomean x lower bound <= 1.15 | %.3f | %s |\n"
            "| solve <= 1 s on resnet152 | %.3f s | %s |\n"
            "| solve <= 10 s on a 10^4-layer resnet | %.3f s | %s |\n",
            joint_missing, joint_missing == 0 ? "yes" : "no",
            100 * joint_worst_gap, joint_worst_gap <= 0.005 ? "yes" : "no",
            g, g <= 1.15 ? "yes" : "no", joint_r152_solve,
            joint_r152_solve <= 1 ? "yes" : "no", deep_solve,
            deep_solve >= 0 && deep_solve <= 10 ? "yes" : "no");
    printf("\njoint: missed %d, worst vs best other %+.2f%%, geomean x "
           "bound %.3f, resnet152 solve %.3f s, 10^4 layers %.3f s\n",
           joint_missing, 100 * joint_worst_gap, g, joint_r152_solve,
           deep_solve);
  }
  if (ji >= 0 && jb_on) {
    cJSON *t = cJSON_AddObjectToObject(root, "joint_budget_1s");
    double g = jb_n > 0 ? exp(jb_log / jb_n) : 0;
    cJSON_AddNumberToObject(t, "scenarios_infeasible_where_another_fits",
                            jb_missing);
    cJSON_AddNumberToObject(t, "scenarios_over_0_5_percent_slower",
                            jb_over);
    cJSON_AddNumberToObject(t, "worst_slowdown_vs_best_other",
                            jb_scored > 0 ? jb_worst_gap : 0);
    cJSON_AddNumberToObject(t, "geomean_x_lower_bound", g);
    cJSON_AddNumberToObject(t, "resnet152_max_solve_s", jb_r152_solve);
    cJSON_AddNumberToObject(t, "resnet152_over_half_percent_slower",
                            jb_r152_over);
    cJSON_AddNumberToObject(t, "resnet152_scored", jb_r152_scored);
    cJSON_AddNumberToObject(t, "max_solve_s", jb_max_solve);
    cJSON_AddNumberToObject(t, "max_solve_s_where_none_fits",
                            jb_nofit_solve);
    fprintf(md, "\n## joint with `--opt budget_s=1`\n\nThe same "
            "scenarios, joint's whole solve bounded by 1 s of wall time "
            "(its plan then depends on the machine's speed).\n\n"
            "| measure | value |\n|---|---:|\n"
            "| infeasible where another planner fits | %d |\n"
            "| more than 0.5%% slower than the best other planner | %d of "
            "%d |\n"
            "| worst vs the best other planner | %+.2f%% |\n"
            "| geomean x lower bound | %.3f |\n"
            "| solve on resnet152, at most | %.3f s |\n"
            "| resnet152: more than 0.5%% slower than the best other | "
            "%d of %d |\n"
            "| solve on any scenario, at most | %.3f s |\n"
            "| solve where no planner fits, at most (the start run again "
            "without the budget) | %.3f s |\n",
            jb_missing, jb_over, jb_scored,
            jb_scored > 0 ? 100 * jb_worst_gap : 0.0, g, jb_r152_solve,
            jb_r152_over, jb_r152_scored, jb_max_solve, jb_nofit_solve);
    printf("joint budget_s=1: missed %d, over 0.5%% slower on %d of %d "
           "(worst %+.2f%%), geomean x bound %.3f, resnet152 solve %.3f s "
           "(over 0.5%% slower on %d of %d there), any %.3f s (where none "
           "fits %.3f s)\n", jb_missing, jb_over,
           jb_scored, jb_scored > 0 ? 100 * jb_worst_gap : 0.0, g,
           jb_r152_solve, jb_r152_over, jb_r152_scored, jb_max_solve,
           jb_nofit_solve);
  }
  fclose(md);
  snprintf(path, sizeof path, "%s/planners.json", dir);
  txt = cJSON_Print(root);
  {
    FILE *f = fopen(path, "w");
    if (f == NULL || txt == NULL || fputs(txt, f) < 0 || fclose(f) != 0) {
      fprintf(stderr, "bench-planners: cannot write %s\n", path);
      return 1;
    }
  }
  free(txt);
  cJSON_Delete(root);
  printf("wrote %s and %s/planners.md\n", path, dir);
  return 0;
}
