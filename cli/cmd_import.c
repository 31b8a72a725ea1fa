/* cli/cmd_import.c — `oocsim import MODEL.onnx [-o MODEL.json]`: an ONNX
 * model as an oocsim model file (ir/onnx_import.h), and what was made of
 * each op.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/args.h"
#include "cli/commands.h"
#include "base/atomic.h"
#include "ir/onnx_import.h"

static const ooc_cli_doc doc = {
  .name = "import", .cmd = OOC_CMD_IMPORT,
  .usage = "Usage: oocsim import MODEL.onnx [-o MODEL.json] [--set K=V ...]\n"
           "                     [--name NAME] [--no-loss]\n",
  .about =
    "Turn an ONNX model (opsets 7 to 23 of the default domain, as\n"
    "torch.onnx.export writes it) into an oocsim model file\n"
    "(models/README.md), for every other command's -m. Each op that computes\n"
    "becomes a layer; ops that only rename (Identity, Constant, a scalar\n"
    "Mul or Div, Dropout exported for inference) are folded, and those that\n"
    "only reshape (Flatten, Reshape, a Transpose that keeps the batch first)\n"
    "become views (flatten and reshape layers that own no bytes).\n"
    "The initialisers give the parameters' shapes, checked against the ops\n"
    "that read them; their data is never read, so a model exported without\n"
    "trained weights imports the same. The first input dim is the batch; a\n"
    "named (dynamic) other dim needs its size with --set NAME=N (a --set\n"
    "naming no such dim is an error). An op with no oocsim counterpart\n"
    "is an error that names every such node; so is a node of another\n"
    "domain, a value that two nodes write, or a weight whose shape does\n"
    "not fit its input. A softmax_ce loss goes on the graph's output (a\n"
    "final Softmax becomes it) unless --no-loss.\n"
    "\n"
    "The model is written to -o MODEL.json (atomically) or to standard\n"
    "output (no -o, or -o -); a summary goes to standard error: the ONNX\n"
    "ops and how many of each, the layers made, and the nodes folded.\n",
  .examples =
    "  oocsim import resnet50.onnx -o resnet50_onnx.json\n"
    "  oocsim import encoder.onnx --set seq=512 -o encoder.json\n",
};

int
ooc_cmd_import(int argc, char **argv)
{
  ooc_cli_args a;
  ooc_err err = { 0 };
  ooc_onnx_report rep;
  ooc_onnx_opts o;
  cJSON *model = NULL;
  char *text = NULL;
  int rc, k;

  if (ooc_cli_args_start(&a, argc, argv, &doc, 1, 0, &rc))
    goto done;
  if (a.n_pos != 1) {
    rc = ooc_cli_fail(a.n_pos == 0 ? "import: missing MODEL.onnx"
                                   : "import: give one MODEL.onnx");
    goto done;
  }
  if (a.output != NULL && strcmp(a.output, "-") == 0)
    a.output = NULL;            /* standard output, the default */
  {
    const char *opt[2] = { "MODEL.onnx", "-o" };
    const char *path[2] = { a.pos[0], a.output };
    if (ooc_cli_check_distinct(opt, path, 2, 1, &err) < 0) {
      rc = ooc_cli_fail("import: %s", err.msg);
      goto done;
    }
  }
  o = (ooc_onnx_opts){ .name = a.name, .loss = !a.no_loss, .sets = a.sets,
                       .n_sets = a.n_sets };
  if (ooc_onnx_import(a.pos[0], &o, &model, &rep, &err) != OOC_OK) {
    rc = ooc_cli_fail("%s", err.msg);
    for (k = 4; k < rep.n_unsupported && k < OOC_ONNX_MAX_UNSUPPORTED; k++)
      fprintf(stderr, "  also: %s\n", rep.unsupported[k]);
    goto done;
  }
  if ((text = cJSON_Print(model)) == NULL) {
    rc = ooc_cli_fail("import: out of memory");
    goto done;
  }
  if (a.output != NULL) {
    size_t n = strlen(text);
    char *t2 = malloc(n + 2);
    if (t2 == NULL) {
      rc = ooc_cli_fail("import: out of memory");
      goto done;
    }
    memcpy(t2, text, n);
    t2[n] = '\n';
    t2[n + 1] = '\0';
    rc = ooc_atomic_write(a.output, t2, &err) != OOC_OK
             ? ooc_cli_fail("%s", err.msg) : 0;
    free(t2);
    if (rc)
      goto done;
  } else {
    puts(text);
    if ((rc = ooc_cli_stdout_flush()) != 0)
      goto done;
  }
  fprintf(stderr, "%s: %d nodes (producer %s, opset %d) -> %d layers, %d "
          "nodes folded\n", a.pos[0], rep.n_nodes,
          rep.producer[0] ? rep.producer : "unknown", rep.opset,
          rep.n_layers, rep.n_folded);
  fprintf(stderr, "  ops:");
  for (k = 0; k < rep.n_ops; k++)
    fprintf(stderr, " %s %d%s", rep.ops[k].op, rep.ops[k].n,
            k + 1 < rep.n_ops ? "," : "\n");
  if (rep.n_ops == 0)
    fprintf(stderr, " none\n");
  rc = 0;
done:
  free(text);
  cJSON_Delete(model);
  ooc_cli_args_fini(&a);
  return rc;
}
