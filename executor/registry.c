/* executor/registry.c — the executor backends this build has, by name.
 *
 * One idea: as alloc/alloc.c lists the placement policies, this file lists
 * the backend descriptors configure found the libraries for (cpu: oneDNN;
 * cuda: the CUDA runtime, cuDNN and cuBLAS), and nothing else knows them
 * all. Lookup by name lists the valid names when nothing matches.
 */
#include "config.h"

#include <string.h>

#include "base/util.h"
#include "executor/backend.h"

const ooc_exec_backend *const ooc_exec_backends[] = {
#ifdef HAVE_DNNL
  &ooc_exec_cpu,
#endif
#ifdef OOC_EXEC_CUDA
  &ooc_exec_cuda,
#endif
  NULL,
};

const ooc_exec_backend *
ooc_exec_backend_find(const char *name, ooc_err *err)
{
  const char *list[8];
  char names[128];
  int i;

  for (i = 0; name != NULL && ooc_exec_backends[i] != NULL; i++)
    if (strcmp(ooc_exec_backends[i]->name, name) == 0)
      return ooc_exec_backends[i];
  for (i = 0; ooc_exec_backends[i] != NULL && i < 7; i++)
    list[i] = ooc_exec_backends[i]->name;
  list[i] = NULL;
  if (i == 0)
    ooc_err_set(err, OOC_ENOTFOUND, "unknown executor backend '%s': this "
                "build has none (configure found neither oneDNN nor CUDA)",
                name != NULL ? name : "");
  else
    ooc_err_set(err, OOC_ENOTFOUND,
                "unknown executor backend '%s' (valid: %s)",
                name != NULL ? name : "",
                ooc_join_names(list, names, sizeof names));
  return NULL;
}

const char *
ooc_exec_backend_name(const ooc_exec_backend *b)
{
  return b != NULL ? b->name : "?";
}

const char *
ooc_exec_backend_summary(const ooc_exec_backend *b)
{
  return b != NULL ? b->summary : "";
}

int
ooc_exec_backend_probe(const ooc_exec_backend *b, ooc_err *err)
{
  if (b == NULL)
    return ooc_err_set(err, OOC_EINVAL, "executor: no backend");
  return b->probe != NULL ? b->probe(err) : OOC_OK;
}
