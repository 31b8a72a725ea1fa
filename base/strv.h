/* base/strv.h — string vectors: a heap array of n heap strings, as the
 * sweep axes and the rows of a table hold them.
 *
 * Ownership: a vector and its strings belong to whoever holds the pointer;
 * ooc_strv_free() frees both (and accepts NULL). Cost: O(total length).
 */
#ifndef OOC_STRV_H
#define OOC_STRV_H

#include "base/error.h"

/* Split s at sep into *out (n items). An empty s ("WHAT: empty list") or
 * an empty item ("WHAT 'S': empty item") is OOC_EINVAL naming `what`. */
int ooc_strv_split(const char *s, char sep, const char *what, char ***out,
                   int *n, ooc_err *err);

/* A copy of the n strings of v; NULL when out of memory. */
char **ooc_strv_dup(char *const *v, int n);

void ooc_strv_free(char **v, int n);

#endif
