/* ir/route.c — SuperNeurons' Algorithm 1 (route.h).
 *
 * The recursion of Alg. 1 (RouteConstruct(layer): counter_inc; return if
 * the counter is below the number of previous layers; push; recurse into
 * each next layer; reset the counter) becomes an explicit stack of
 * (layer, next consumer to visit) frames, so a network of 10^4 layers
 * needs no deep C stack. Consumers are listed once, in CSR form, in layer
 * order. Cost: O(layers + edges) time and memory.
 */
#include "config.h"

#include <stdlib.h>

#include "ir/route.h"

int32_t
ooc_route_construct(const ooc_model *m, int32_t *order, ooc_err *err)
{
  int32_t n = m->n_layers, l, j, k, n_out = 0, top = 0;
  int32_t *first = calloc((size_t)n + 1, sizeof *first);
  int32_t *cons = NULL, *counter = calloc((size_t)n + 1, sizeof *counter);
  int32_t *stk_l = malloc(((size_t)n + 1) * sizeof *stk_l);
  int32_t *stk_k = malloc(((size_t)n + 1) * sizeof *stk_k);
  int32_t edges = 0, start = -1;

  if (first == NULL || counter == NULL || stk_l == NULL || stk_k == NULL)
    goto oom;
  /* Consumers of each layer, in layer order (CSR). */
  for (l = 0; l < n; l++)
    for (j = 0; j < m->layers[l].n_in; j++) {
      first[ooc_layer_input(m, &m->layers[l], j) + 1]++;
      edges++;
    }
  for (l = 0; l < n; l++)
    first[l + 1] += first[l];
  if ((cons = malloc(((size_t)edges + 1) * sizeof *cons)) == NULL)
    goto oom;
  for (l = 0; l < n; l++)
    for (j = 0; j < m->layers[l].n_in; j++) {
      int32_t p = ooc_layer_input(m, &m->layers[l], j);
      cons[first[p] + counter[p]++] = l;
    }
  for (l = 0; l < n; l++)
    counter[l] = 0;
  for (l = 0; l < n && start < 0; l++)
    if (m->layers[l].n_in == 0)
      start = l;
  if (start >= 0) {
    /* RouteConstruct(input): it has no previous layer, so it runs. */
    order[n_out++] = start;
    stk_l[0] = start;
    stk_k[0] = first[start];
    top = 1;
  }
  while (top > 0) {
    int32_t cur = stk_l[top - 1];
    if (stk_k[top - 1] == first[cur + 1]) {
      counter[cur] = 0;               /* line 11: reset the counter */
      top--;
      continue;
    }
    k = cons[stk_k[top - 1]++];
    /* RouteConstruct(next): count this arrival; wait for the others. A
     * layer reading the same input twice counts it once per edge. */
    if (++counter[k] < m->layers[k].n_in)
      continue;
    order[n_out++] = k;
    stk_l[top] = k;
    stk_k[top] = first[k];
    top++;
  }
  free(first);
  free(cons);
  free(counter);
  free(stk_l);
  free(stk_k);
  return n_out;
oom:
  free(first);
  free(cons);
  free(counter);
  free(stk_l);
  free(stk_k);
  return ooc_err_set(err, OOC_ENOMEM, "route: out of memory");
}
