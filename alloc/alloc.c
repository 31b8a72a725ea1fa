/* alloc/alloc.c — the allocator registry and lookup by name (alloc.h).
 *
 * One idea: the four models are GSL-style descriptors, each in its own file
 * (alloc_ideal.c, alloc_caching.c, alloc_pool.c, alloc_va.c); this file only
 * lists them, and answers footprint queries through each descriptor's
 * optional footprint slot. Lookup is O(number of allocators).
 */
#include "config.h"

#include <string.h>

#include "alloc/alloc.h"
#include "base/util.h"

const ooc_allocator_type *const ooc_allocator_types[] = {
  &ooc_alloc_ideal,
  &ooc_alloc_caching,
  &ooc_alloc_pool,
  &ooc_alloc_va,
  NULL,
};

const ooc_allocator_type *
ooc_allocator_find(const char *name, ooc_err *err)
{
  const char *list[16];
  char names[128];
  int i;

  for (i = 0; ooc_allocator_types[i] != NULL; i++)
    if (name != NULL && strcmp(ooc_allocator_types[i]->name, name) == 0)
      return ooc_allocator_types[i];
  for (i = 0; ooc_allocator_types[i] != NULL && i < 15; i++)
    list[i] = ooc_allocator_types[i]->name;
  list[i] = NULL;
  ooc_join_names(list, names, sizeof names);
  ooc_err_set(err, OOC_ENOTFOUND,
              "unknown allocator '%s' (valid: %s)", name ? name : "", names);
  return NULL;
}

uint64_t
ooc_alloc_footprint(const ooc_allocator_type *t, const ooc_alloc_config *cfg,
                    uint64_t bytes)
{
  if (t == NULL || t->footprint == NULL)
    return bytes;
  return t->footprint(cfg, bytes);
}
