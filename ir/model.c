/* ir/model.c — small model helpers: layer lookup,
 * aliases, signatures and the model fingerprint (model.h).
 *
 * The loader is ir/model_load.c, the op table ir/ops.c and the shared
 * value types (dtypes, shapes, class names) ir/types.c; this file holds
 * what every consumer of a loaded model needs. The fingerprint is
 * FNV-1a 64 over each layer's op, name, inputs and output shape (the
 * attribute block is mixed in 8-byte words) plus batch, dtype and
 * optimizer, so a plan built for one model is rejected on another.
 * Owned by the model module; all O(layers) at most.
 */
#include "config.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ir/model.h"
#include "base/util.h"

void
ooc_model_free(ooc_model *m)
{
  if (m == NULL)
    return;
  free(m->name);
  free(m->path);
  free(m->layers);
  free(m->inputs);
  free(m->params);
  free(m->strings);
  free(m);
}

int
ooc_model_find_layer(const ooc_model *m, const char *name)
{
  int i;
  for (i = 0; i < m->n_layers; i++)
    if (strcmp(m->layers[i].name, name) == 0)
      return i;
  return -1;
}

int
ooc_model_storage(const ooc_model *m, int i)
{
  while (i >= 0 && i < m->n_layers && m->layers[i].alias_of >= 0)
    i = m->layers[i].alias_of;
  return i;
}

/* The FNV step on 8-byte words for bulk data (the attribute block). */
static uint64_t
fnv_words(uint64_t h, const void *data, size_t n)
{
  const unsigned char *p = data;
  size_t i;
  for (i = 0; i + 8 <= n; i += 8) {
    uint64_t w;
    memcpy(&w, p + i, 8);
    h ^= w;
    h *= 0x100000001b3ULL;
    h ^= h >> 29;
  }
  return ooc_hash64(p + i, n - i, h);
}

uint64_t
ooc_model_fingerprint(const ooc_model *m)
{
  uint64_t h = OOC_HASH_SEED;
  int64_t b = m->batch;
  int32_t v[3] = { (int32_t)m->dtype, (int32_t)m->optimizer, m->n_layers };
  int i, j;

  h = ooc_hash64(&b, sizeof b, h);
  h = ooc_hash64(v, sizeof v, h);
  if (m->precision != OOC_PREC_NONE) {
    int32_t p = (int32_t)m->precision;
    h = ooc_hash64(&p, sizeof p, h);
  }
  for (i = 0; i < m->n_layers; i++) {
    const ooc_layer *l = &m->layers[i];
    int32_t w[4] = { (int32_t)l->op, l->n_in, l->out.ndim, l->recompute };
    h = ooc_hash64(l->name, strlen(l->name) + 1, h);
    h = ooc_hash64(w, sizeof w, h);
    h = ooc_hash64(l->out.d, (size_t)l->out.ndim * sizeof l->out.d[0], h);
    /* attrs are zero-initialised by the loader, padding included */
    h = fnv_words(h, &l->a, sizeof l->a);
    for (j = 0; j < l->n_in; j++) {
      int32_t in = ooc_layer_input(m, l, j);
      h = ooc_hash64(&in, sizeof in, h);
    }
  }
  return h;
}

/* Append to buf at *off without overrunning n; *off counts the full
 * length, as snprintf does. */
static void
put(char *buf, size_t n, size_t *off, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static void
put(char *buf, size_t n, size_t *off, const char *fmt, ...)
{
  va_list ap;
  int k;
  va_start(ap, fmt);
  k = vsnprintf(*off < n ? buf + *off : NULL, *off < n ? n - *off : 0, fmt,
                ap);
  va_end(ap);
  if (k > 0)
    *off += (size_t)k;
}

static void
put_shape(char *buf, size_t n, size_t *off, const ooc_shape *s)
{
  int i;
  for (i = 0; i < s->ndim; i++)
    put(buf, n, off, "%s%lld", i ? "x" : "", (long long)s->d[i]);
}

static void
put_vec(char *buf, size_t n, size_t *off, const char *key, const int v[3],
        int nsp)
{
  int i;
  put(buf, n, off, " %s=", key);
  for (i = 0; i < nsp; i++)
    put(buf, n, off, "%s%d", i ? "x" : "", v[i]);
}

int
ooc_layer_signature(const ooc_model *m, int layer, char *buf, size_t n)
{
  const ooc_layer *l;
  size_t off = 0;
  int i, nsp;

  if (n > 0)
    buf[0] = '\0';
  if (layer < 0 || layer >= m->n_layers)
    return 0;
  l = &m->layers[layer];
  put(buf, n, &off, "%s b=%lld in=", ooc_op_name(l->op), (long long)m->batch);
  for (i = 0; i < l->n_in; i++) {
    if (i)
      put(buf, n, &off, ",");
    put_shape(buf, n, &off, &m->layers[ooc_layer_input(m, l, i)].out);
  }
  put(buf, n, &off, " out=");
  put_shape(buf, n, &off, &l->out);
  nsp = l->out.ndim - 1;
  switch (l->op) {
  case OOC_OPK_CONV2D:
  case OOC_OPK_CONV3D:
  case OOC_OPK_DECONV2D:
    put_vec(buf, n, &off, "k", l->a.kernel, nsp);
    put_vec(buf, n, &off, "s", l->a.stride, nsp);
    put_vec(buf, n, &off, "p", l->a.pad, nsp);
    put_vec(buf, n, &off, "d", l->a.dilation, nsp);
    if (l->op == OOC_OPK_DECONV2D)
      put_vec(buf, n, &off, "op", l->a.out_pad, nsp);
    put(buf, n, &off, " g=%d", l->a.groups);
    if (l->a.bias)
      put(buf, n, &off, " bias=1");
    break;
  case OOC_OPK_MAXPOOL:
  case OOC_OPK_AVGPOOL:
    put_vec(buf, n, &off, "k", l->a.kernel, nsp);
    put_vec(buf, n, &off, "s", l->a.stride, nsp);
    put_vec(buf, n, &off, "p", l->a.pad, nsp);
    if (l->a.ceil_mode)
      put(buf, n, &off, " ceil=1");
    break;
  case OOC_OPK_LINEAR:
    if (l->a.bias)
      put(buf, n, &off, " bias=1");
    break;
  case OOC_OPK_ACT:
    put(buf, n, &off, " act=%s", l->a.act);
    break;
  case OOC_OPK_UPSAMPLE:
    put(buf, n, &off, " scale=%d mode=%s", l->a.scale, l->a.mode);
    break;
  case OOC_OPK_ATTENTION:
    put(buf, n, &off, " heads=%d", l->a.heads);
    if (l->a.causal)
      put(buf, n, &off, " causal=1");
    break;
  case OOC_OPK_MATMUL:
    if (l->a.transpose_b)
      put(buf, n, &off, " tb=1");
    break;
  case OOC_OPK_LRN:
    put(buf, n, &off, " size=%d", l->a.lrn_size);
    break;
  case OOC_OPK_CONCAT:
    put(buf, n, &off, " axis=%d", l->a.axis);
    break;
  default:
    break;
  }
  put(buf, n, &off, " %s", ooc_dtype_name(m->dtype));
  return (int)off;
}

int
ooc_model_tied_embedding(const ooc_model *m, int layer)
{
  const ooc_layer *ly = &m->layers[layer];
  const ooc_shape *x = &m->layers[ooc_layer_input(m, ly, 0)].out;
  int64_t fin = x->d[x->ndim - 1];
  int e;

  for (e = 1; e < m->n_layers; e++) {
    const ooc_layer *em = &m->layers[e];
    if (em->op == OOC_OPK_EMBEDDING && em->a.vocab == ly->a.out &&
        em->a.out == fin)
      return e;
  }
  return -1;
}
