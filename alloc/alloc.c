/* alloc/alloc.c — the policy registry, lookup of an allocator spec and
 * footprint queries (alloc.h).
 *
 * One idea: the policies are GSL-style descriptors, each in its own file
 * (ideal.c, caching.c, bestfit.c, pool.c, va.c); this file only lists
 * them. An allocator spec is "name" or "name:key[=value]:key..."; lookup
 * splits it at the first ':' and checks the keys against the descriptor's
 * list (alloc/options.c, as the planner front end does for --opt), so a
 * policy's init() only checks values. The policies call options.c, never
 * this file, so the registry is the only file that knows them all.
 *
 * Cost: lookup is O(allocators + option string); nothing here is on the
 * simulator's hot path.
 */
#include "config.h"

#include <string.h>

#include "alloc/alloc.h"
#include "base/util.h"

const ooc_allocator_type *const ooc_allocator_types[] = {
  &ooc_alloc_ideal,
  &ooc_alloc_caching,
  &ooc_alloc_bestfit,
  &ooc_alloc_pool,
  &ooc_alloc_va,
  NULL,
};

const ooc_allocator_type *
ooc_allocator_find(const char *spec, const char **options, ooc_err *err)
{
  const char *list[16];
  char names[128];
  const char *colon = spec != NULL ? strchr(spec, ':') : NULL;
  size_t len = spec == NULL ? 0 : colon != NULL ? (size_t)(colon - spec)
                                                : strlen(spec);
  int i;

  if (options != NULL)
    *options = NULL;
  for (i = 0; spec != NULL && ooc_allocator_types[i] != NULL; i++) {
    const ooc_allocator_type *t = ooc_allocator_types[i];
    if (strlen(t->name) == len && strncmp(t->name, spec, len) == 0) {
      if (colon != NULL && colon[1] == '\0') {
        ooc_err_set(err, OOC_EINVAL, "allocator '%s': no option after ':' "
                    "in '%s' (give one, or the name alone)", t->name, spec);
        return NULL;
      }
      if (colon != NULL && ooc_alloc_options_check(t, colon + 1, err) < 0)
        return NULL;
      if (options != NULL && colon != NULL)
        *options = colon + 1;
      return t;
    }
  }
  for (i = 0; ooc_allocator_types[i] != NULL && i < 15; i++)
    list[i] = ooc_allocator_types[i]->name;
  list[i] = NULL;
  ooc_join_names(list, names, sizeof names);
  ooc_err_set(err, OOC_ENOTFOUND, "unknown allocator '%.*s' (valid: %s)",
              (int)len, spec != NULL ? spec : "", names);
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
