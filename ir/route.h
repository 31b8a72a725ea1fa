/* ir/route.h — the execution route of a non-linear network: SuperNeurons'
 * Algorithm 1 (RouteConstruct), a depth-first walk from the input that
 * enters a join only once all of its inputs have run.
 *
 * The seed (SuperNeurons paper, §3.1): each layer counts the inputs that
 * have reached it; a layer is pushed onto the route when its counter
 * reaches the number of its inputs, and its consumers are then explored in
 * order. The counters are reset afterwards, so the walk can run again.
 */
#ifndef OOC_ROUTE_H
#define OOC_ROUTE_H

#include <stdint.h>
#include "base/error.h"
#include "ir/model.h"

/* The route of m into order[0 .. m->n_layers): layer indices, the input
 * layer first; consumers are explored in layer order. Returns the number
 * of layers routed (m->n_layers for a connected network: a layer no path
 * from the input reaches is not routed), or OOC_ENOMEM. O(layers +
 * edges), iterative (no recursion depth limit). */
int32_t ooc_route_construct(const ooc_model *m, int32_t *order,
                            ooc_err *err);

#endif
