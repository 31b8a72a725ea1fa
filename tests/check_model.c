/* tests/check_model.c — the model loader, the op table and the expression
 * evaluator (ir/model.h, ir/expr.h) on hand-checked small models and on
 * every kind of bad input of issue 2 item 8.
 *
 * The figures asserted below were computed by hand in the comments; the
 * models live in tests/data/models/. Run under valgrind with CK_FORK=no:
 *   CK_FORK=no valgrind --leak-check=full --error-exitcode=9 \
 *     ./tests/check_model
 */
#include "config.h"

#include <check.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ir/expr.h"
#include "ir/model.h"
#include "ir/route.h"
#include "base/util.h"

#define DATA OOC_SRCDIR "/tests/data/models/"

static ooc_model *
load_opts(const char *file, const ooc_model_opts *o)
{
  ooc_model *m = NULL;
  ooc_err e = { 0 };
  int rc = ooc_model_load(file, o, &m, &e);
  ck_assert_msg(rc == OOC_OK, "loading %s: %s", file, e.msg);
  ck_assert_ptr_nonnull(m);
  return m;
}

static ooc_model *
load(const char *file, int64_t batch)
{
  ooc_model_opts o = { .batch = batch };
  return load_opts(file, &o);
}

static ooc_model *
load_str(const char *json, int64_t batch)
{
  ooc_model *m = NULL;
  ooc_err e = { 0 };
  ooc_model_opts o = { .batch = batch };
  int rc = ooc_model_load_string(json, "t.json", &o, &m, &e);
  ck_assert_msg(rc == OOC_OK, "loading string: %s", e.msg);
  return m;
}

static const ooc_layer *
layer(const ooc_model *m, const char *name)
{
  int i = ooc_model_find_layer(m, name);
  ck_assert_msg(i >= 0, "no layer '%s'", name);
  return &m->layers[i];
}

static void
shape_is(const ooc_layer *l, int nd, int64_t a, int64_t b, int64_t c)
{
  ck_assert_int_eq(l->out.ndim, nd);
  ck_assert_int_eq(l->out.d[0], a);
  if (nd > 1)
    ck_assert_int_eq(l->out.d[1], b);
  if (nd > 2)
    ck_assert_int_eq(l->out.d[2], c);
}

/* A load that must fail with code and exactly msg (or, if exact is 0, a
 * message containing msg). */
static void
bad_file(const char *file, int64_t batch, int code, const char *msg,
         int exact)
{
  ooc_model *m = (ooc_model *)1;
  ooc_err e = { 0 };
  ooc_model_opts o = { .batch = batch };
  int rc = ooc_model_load(file, &o, &m, &e);
  ck_assert_msg(rc == code, "%s: code %d, want %d (%s)", file, rc, code,
                e.msg);
  ck_assert_ptr_null(m);
  if (exact)
    ck_assert_str_eq(e.msg, msg);
  else
    ck_assert_msg(strstr(e.msg, msg) != NULL, "'%s' lacks '%s'", e.msg, msg);
  ck_assert_ptr_null(strchr(e.msg, '\n'));
}

static void
bad_str(const char *json, int code, const char *msg)
{
  ooc_model *m = (ooc_model *)1;
  ooc_err e = { 0 };
  ooc_model_opts o = { .batch = 2 };
  int rc = ooc_model_load_string(json, "t.json", &o, &m, &e);
  ck_assert_msg(rc == code, "%s: code %d, want %d (%s)", json, rc, code,
                e.msg);
  ck_assert_ptr_null(m);
  ck_assert_msg(strstr(e.msg, msg) != NULL, "'%s' lacks '%s'", e.msg, msg);
  ck_assert_msg(strncmp(e.msg, "t.json: ", 8) == 0, "'%s' lacks the file",
                e.msg);
  ck_assert_ptr_null(strchr(e.msg, '\n'));
}

/* ---- hand-checked models ------------------------------------------------- */

/* tiny_cnn at batch 2, fp32 (4 bytes), SGD with momentum:
 *   input [3,8,8]        3*64*2*4             = 1536 B
 *   conv1 3x3 pad 1 -> [4,8,8]: params 4*3*9 = 108 (no bias)
 *         fwd 2*Cout*H'W'*Cin*k*k = 2*4*64*3*9 = 13824 /sample -> 27648
 *         first layer: no data gradient; weight grad 27648
 *         out 4*64*2*4 = 2048 B; im2col workspace 3*9*64*4 = 6912 B
 *   bn1 -> [4,8,8]: params 8; saved mean+inv-std 2*4*4 = 32 B
 *         fwd 7/elem: 7*256*2 = 3584; bwd data 9*512 = 4608, weight 3*512
 *   relu1 in place: aliases bn1, 0 B; fwd 256*2 = 512
 *   pool1 2x2 -> [4,4,4]: 512 B; fwd 4 compares * 64 * 2 = 512
 *   flat -> [64]: aliases pool1, 0 B, no cost
 *   fc 64->10 + bias: params 650; fwd (2*640 + 10)*2 = 2580, data 2560
 *         out 10*2*4 = 80 B
 *   loss -> [1]: 8 B; saved probabilities 10*2*4 = 80 B; fwd 5*10*2 = 100
 * params 108 + 8 + 650 = 766; weights = grads = momentum = 3064 B
 * activations 1536+2048+2048+512+80+8 + 32+80 = 6344 B
 * naive peak 6344 + 3*3064 + 6912 = 22448 B */
START_TEST(test_tiny_cnn)
{
  ooc_model *m = load(DATA "tiny_cnn.json", 2);
  const ooc_layer *c, *bn, *r, *p, *f, *fc, *loss;

  ck_assert_str_eq(m->name, "tiny_cnn");
  ck_assert_int_eq(m->n_layers, 8);
  ck_assert_str_eq(m->layers[0].name, "input");
  ck_assert_int_eq(m->layers[0].op, OOC_OPK_INPUT);
  ck_assert_uint_eq(m->layers[0].out_bytes, 1536);
  c = layer(m, "conv1");
  bn = layer(m, "bn1");
  r = layer(m, "relu1");
  p = layer(m, "pool1");
  f = layer(m, "flat");
  fc = layer(m, "fc");
  loss = layer(m, "loss");

  shape_is(c, 3, 4, 8, 8);
  ck_assert_uint_eq(c->params, 108);
  ck_assert_uint_eq(c->out_bytes, 2048);
  ck_assert_uint_eq(c->workspace_bytes, 6912);
  ck_assert_double_eq(c->fwd_flops, 27648);
  ck_assert_double_eq(c->bwd_data_flops, 0);
  ck_assert_double_eq(c->bwd_weight_flops, 27648);
  ck_assert_int_eq(c->cls, OOC_CLASS_CONV);
  /* fwd reads 1536 + 432 of weights, writes 2048 */
  ck_assert_double_eq(c->fwd_bytes_rw, 4016);

  shape_is(bn, 3, 4, 8, 8);
  ck_assert_uint_eq(bn->params, 8);
  ck_assert_uint_eq(bn->saved_bytes, 32);
  ck_assert_double_eq(bn->fwd_flops, 3584);
  ck_assert_double_eq(bn->bwd_data_flops, 4608);
  ck_assert_double_eq(bn->bwd_weight_flops, 1536);

  ck_assert_uint_eq(r->out_bytes, 0);
  ck_assert_int_eq(r->alias_of, 2);
  ck_assert_double_eq(r->fwd_flops, 512);
  /* in place: reads and writes 2048; bwd reads dy and y, writes dx */
  ck_assert_double_eq(r->fwd_bytes_rw, 4096);
  ck_assert_double_eq(r->bwd_bytes_rw, 6144);

  shape_is(p, 3, 4, 4, 4);
  ck_assert_uint_eq(p->out_bytes, 512);
  /* PyTorch's argmax: 64 int64 indices per sample, batch 2 */
  ck_assert_uint_eq(p->saved_bytes, 64 * 8 * 2);
  ck_assert_uint_eq(p->needs, OOC_NEED_INPUT);
  ck_assert_double_eq(p->fwd_flops, 512);
  ck_assert_int_eq(p->alias_of, -1);

  shape_is(f, 1, 64, 0, 0);
  ck_assert_uint_eq(f->out_bytes, 0);
  ck_assert_int_eq(f->alias_of, 4);
  ck_assert_double_eq(f->fwd_bytes_rw, 0);
  ck_assert_int_eq(ooc_model_storage(m, 5), 4);
  ck_assert_int_eq(ooc_model_storage(m, 3), 2);

  shape_is(fc, 1, 10, 0, 0);
  ck_assert_uint_eq(fc->params, 650);
  ck_assert_uint_eq(fc->out_bytes, 80);
  ck_assert_double_eq(fc->fwd_flops, 2580);
  ck_assert_double_eq(fc->bwd_data_flops, 2560);
  ck_assert_double_eq(fc->bwd_weight_flops, 2580);

  shape_is(loss, 1, 1, 0, 0);
  ck_assert_uint_eq(loss->out_bytes, 8);
  ck_assert_uint_eq(loss->saved_bytes, 80);
  ck_assert_double_eq(loss->fwd_flops, 100);

  ck_assert_uint_eq(m->total_params, 766);
  ck_assert_uint_eq(m->weight_bytes, 3064);
  ck_assert_uint_eq(m->grad_bytes, 3064);
  ck_assert_uint_eq(m->opt_bytes, 3064);
  /* 6344 B of outputs and small saved state, 1024 B of pool indices */
  ck_assert_uint_eq(m->activation_bytes, 6344 + 1024);
  ck_assert_uint_eq(m->naive_peak_bytes, 22448 + 1024);
  ck_assert_double_eq(m->fwd_flops, 27648 + 3584 + 512 + 512 + 2580 + 100);
  ck_assert_int_eq(m->n_params, 3);
  ck_assert_str_eq(m->params[0].name, "image");
  ck_assert_double_eq(m->params[0].value, 8);
  ck_assert_int_eq(m->params[0].set, 0);
  ck_assert_int_eq(ooc_model_find_layer(m, "nope"), -1);
  ooc_model_free(m);
}
END_TEST

/* Optimizer state: SGD keeps none, Adam two buffers per parameter. fp16
 * halves every byte count but the pool's int64 indices: conv1 out 1024 B,
 * weights 1532 B. */
START_TEST(test_optimizer_dtype)
{
  ooc_model_opts o = { .batch = 2, .optimizer = OOC_OPT_SGD };
  ooc_model *m = load_opts(DATA "tiny_cnn.json", &o);
  ck_assert_uint_eq(m->opt_bytes, 0);
  ooc_model_free(m);
  o.optimizer = OOC_OPT_ADAM;
  m = load_opts(DATA "tiny_cnn.json", &o);
  ck_assert_uint_eq(m->opt_bytes, 2 * 3064);
  ooc_model_free(m);
  o.optimizer = OOC_OPT_SGD_MOMENTUM;
  o.dtype_set = 1;
  o.dtype = OOC_FP16;
  m = load_opts(DATA "tiny_cnn.json", &o);
  ck_assert_int_eq(m->dtype, OOC_FP16);
  ck_assert_uint_eq(layer(m, "conv1")->out_bytes, 1024);
  ck_assert_uint_eq(m->weight_bytes, 1532);
  /* the pool's int64 indices keep their 1024 B */
  ck_assert_uint_eq(m->activation_bytes, 6344 / 2 + 1024);
  ck_assert_uint_eq(m->naive_peak_bytes, 22448 / 2 + 1024);
  ck_assert_double_eq(m->fwd_flops, 34936); /* FLOPs do not change */
  ooc_model_free(m);
}
END_TEST

/* --set image=16 classes=5: conv1 -> [4,16,16], pool -> [4,8,8],
 * flat 256, fc params 256*5 + 5 = 1285. */
START_TEST(test_set)
{
  ooc_kv kv[2] = { { "image", "16" }, { "classes", "5" } };
  ooc_model_opts o = { .batch = 1, .sets = kv, .n_sets = 2 };
  ooc_model *m = load_opts(DATA "tiny_cnn.json", &o);
  shape_is(layer(m, "conv1"), 3, 4, 16, 16);
  shape_is(layer(m, "flat"), 1, 256, 0, 0);
  ck_assert_uint_eq(layer(m, "fc")->params, 1285);
  ck_assert_int_eq(m->params[0].set, 1);
  ck_assert_double_eq(m->params[0].value, 16);
  ck_assert_int_eq(m->params[1].set, 0);
  ooc_model_free(m);
}
END_TEST

/* A param whose default uses an earlier param follows that param's --set
 * value: a = 3 makes b = a * 2 = 6, so the input is [6]. */
START_TEST(test_set_dependent_param)
{
  static const char *json =
      "{\"name\":\"p\",\"params\":{\"a\":2,\"b\":\"a * 2\"},"
      "\"input\":[\"b\"],\"layers\":[{\"name\":\"r\",\"op\":\"relu\"}]}";
  ooc_kv kv = { "a", "3" };
  ooc_model_opts o = { .batch = 1, .sets = &kv, .n_sets = 1 };
  ooc_model *m = NULL;
  ooc_err e = { 0 };

  ck_assert_int_eq(ooc_model_load_string(json, "t.json", &o, &m, &e), OOC_OK);
  shape_is(layer(m, "r"), 1, 6, 0, 0);
  ck_assert_int_eq(m->params[0].set, 1);
  ck_assert_double_eq(m->params[0].value, 3);
  ck_assert_int_eq(m->params[1].set, 0);
  ck_assert_double_eq(m->params[1].value, 6);
  ooc_model_free(m);
  /* Without the override the defaults hold: [4]. */
  m = load_str(json, 1);
  shape_is(layer(m, "r"), 1, 4, 0, 0);
  ooc_model_free(m);
}
END_TEST

/* Two residual blocks through a repeat with @in: b1_add adds b1_relu and
 * b0_add. conv 4->4 3x3: params 144; b0_conv is the first layer (no data
 * gradient), b1_conv has one (2*4*64*4*9 = 18432 /sample, x2). */
START_TEST(test_residual)
{
  ooc_model *m = load(DATA "residual.json", 2);
  const ooc_layer *a = layer(m, "b1_add");
  ck_assert_int_eq(m->n_layers, 9);
  ck_assert_int_eq(a->n_in, 2);
  ck_assert_str_eq(m->layers[ooc_layer_input(m, a, 0)].name, "b1_relu");
  ck_assert_str_eq(m->layers[ooc_layer_input(m, a, 1)].name, "b0_add");
  a = layer(m, "b0_add");
  ck_assert_int_eq(ooc_layer_input(m, a, 1), 0);
  ck_assert_uint_eq(a->needs, OOC_NEED_NONE);
  ck_assert_double_eq(a->bwd_bytes_rw, 0);
  ck_assert_double_eq(a->fwd_flops, 512);
  ck_assert_double_eq(layer(m, "b0_conv")->bwd_data_flops, 0);
  ck_assert_double_eq(layer(m, "b1_conv")->bwd_data_flops, 36864);
  ck_assert_uint_eq(m->total_params, 288);
  shape_is(layer(m, "gp"), 3, 4, 1, 1);
  ck_assert_int_eq(ooc_layer_input(m, layer(m, "loss"), 0), 7);
  ooc_model_free(m);
}
END_TEST

/* PyTorch's `out += identity`: an in-place add writes into its first
 * input (conv -> bn -> add in place -> relu in place), so it has no bytes
 * of its own and aliases the batch-norm's output (batch-norm's backward
 * reads its input, not its output); an in-place add over an output whose
 * backward needs it (a relu's) is refused. */
START_TEST(test_add_in_place)
{
  const char *ok =
    "{\"name\":\"a\",\"input\":[4,8,8],\"layers\":["
    "{\"name\":\"c\",\"op\":\"conv2d\",\"out\":4,\"kernel\":3,"
    "\"pad\":1},"
    "{\"name\":\"bn\",\"op\":\"batchnorm\"},"
    "{\"name\":\"add\",\"op\":\"add\",\"in\":[\"bn\",\"input\"],"
    "\"in_place\":true},"
    "{\"name\":\"r\",\"op\":\"relu\",\"in_place\":true},"
    "{\"name\":\"loss\",\"op\":\"softmax_ce\"}]}";
  ooc_model *m = NULL;
  ooc_err e = { 0 };
  ooc_model_opts o = { .batch = 2 };

  ck_assert_int_eq(ooc_model_load_string(ok, "t.json", &o, &m, &e), OOC_OK);
  ck_assert_uint_eq(layer(m, "add")->out_bytes, 0);
  ck_assert_int_eq(layer(m, "add")->alias_of, 2);
  ck_assert_uint_eq(layer(m, "bn")->out_bytes, 4 * 64 * 2 * 4);
  ooc_model_free(m);
  bad_str("{\"name\":\"a\",\"input\":[4,8,8],\"layers\":["
          "{\"name\":\"c\",\"op\":\"conv2d\",\"out\":4,\"kernel\":1},"
          "{\"name\":\"r\",\"op\":\"relu\"},"
          "{\"name\":\"add\",\"op\":\"add\",\"in\":[\"r\",\"input\"],"
          "\"in_place\":true}]}", OOC_EINVAL,
          "in_place: overwrites the output of 'r', which its backward "
          "needs");
}
END_TEST

/* concat [2,8,8] + [5,8,8] -> [7,8,8]; along the last axis [2,8,16]. */
START_TEST(test_concat)
{
  ooc_model *m = load(DATA "concat.json", 2);
  shape_is(layer(m, "cat"), 3, 7, 8, 8);
  ck_assert_uint_eq(layer(m, "cat")->out_bytes, 7 * 64 * 2 * 4);
  shape_is(layer(m, "wide"), 3, 2, 8, 16);
  ck_assert_int_eq(ooc_layer_input(m, layer(m, "b"), 0), 0);
  /* 1x1 stride-1 convolution is a plain GEMM: no im2col buffer */
  ck_assert_uint_eq(layer(m, "a")->workspace_bytes, 0);
  ck_assert_uint_eq(layer(m, "b")->params, 135);
  ooc_model_free(m);
}
END_TEST

/* stages=2: s=0 emits s0_0_first; s=1 emits s1_0_first, then s1_1_r and
 * s1_1_sum (else branch, whose @in is s1_0_first); the last if emits
 * nothing. */
START_TEST(test_nested_if)
{
  ooc_model *m = load(DATA "nested.json", 2);
  ck_assert_int_eq(m->n_layers, 5);
  ck_assert_str_eq(m->layers[1].name, "s0_0_first");
  ck_assert_str_eq(m->layers[2].name, "s1_0_first");
  ck_assert_str_eq(m->layers[3].name, "s1_1_r");
  ck_assert_str_eq(m->layers[4].name, "s1_1_sum");
  ck_assert_int_eq(ooc_layer_input(m, &m->layers[4], 1), 2);
  shape_is(&m->layers[1], 3, 4, 8, 8); /* out = w = stages * 2 */
  ooc_model_free(m);
  {
    ooc_kv kv = { "stages", "6" };
    ooc_model_opts o = { .batch = 1, .sets = &kv, .n_sets = 1 };
    /* 6 stages: firsts 6, plus 2*(0+1+2+3+4+5) = 30, plus "never" */
    m = load_opts(DATA "nested.json", &o);
    ck_assert_int_eq(m->n_layers, 1 + 6 + 30 + 1);
    ck_assert_int_ge(ooc_model_find_layer(m, "never"), 0);
    ooc_model_free(m);
  }
}
END_TEST

/* One transformer block, S=16, H=32, 4 heads, vocab 100, batch 2:
 *   emb (100+16)*32 = 3712 params -> [16,32]
 *   qkv 32*96+96 = 3168 -> [16,96]; attn -> [16,32], saved softmax
 *   4*16*16*2*4 = 8192 B; fwd 4*S*S*H + 5*h*S*S = 32768 + 5120 = 37888
 *   /sample; bwd 8*S*S*H + 4*h*S*S = 65536 + 4096 = 69632 /sample
 *   ln 2*32; saved mean+rstd 2*16*2*4 = 256 B
 *   head tied, no bias: 0 params, out [16,100]
 * params 3712 + 3168 + 1056 + 4224 + 4128 + 3*64 = 16480 */
START_TEST(test_transformer)
{
  ooc_model *m = load(DATA "transformer.json", 2);
  const ooc_layer *at = layer(m, "h0_attn");
  shape_is(layer(m, "emb"), 2, 16, 32, 0);
  ck_assert_uint_eq(layer(m, "emb")->params, 3712);
  ck_assert_double_eq(layer(m, "emb")->bwd_data_flops, 0);
  shape_is(layer(m, "h0_qkv"), 2, 16, 96, 0);
  shape_is(at, 2, 16, 32, 0);
  ck_assert_uint_eq(at->saved_bytes, 8192);
  ck_assert_double_eq(at->fwd_flops, 2 * 37888);
  ck_assert_double_eq(at->bwd_data_flops, 2 * 69632);
  ck_assert_uint_eq(at->params, 0);
  ck_assert_int_eq(at->cls, OOC_CLASS_GEMM);
  ck_assert_uint_eq(layer(m, "h0_ln1")->saved_bytes, 256);
  ck_assert_uint_eq(layer(m, "head")->params, 0);
  ck_assert_int_eq(layer(m, "head")->has_bwd, 1);
  shape_is(layer(m, "head"), 2, 16, 100, 0);
  ck_assert_uint_eq(m->total_params, 16480);
  ck_assert_str_eq(m->layers[ooc_layer_input(m, layer(m, "h0_add2"), 1)].name,
                   "h0_add1");
  ooc_model_free(m);

  /* three [S,H] inputs; matmul [16,32] x [16,32]^T -> [16,16] */
  m = load_str("{\"name\":\"t\",\"input\":[8],\"layers\":["
               "{\"name\":\"e\",\"op\":\"embedding\",\"vocab\":10,\"out\":8},"
               "{\"name\":\"q\",\"op\":\"linear\",\"out\":8,\"in\":\"e\"},"
               "{\"name\":\"k\",\"op\":\"linear\",\"out\":8,\"in\":\"e\"},"
               "{\"name\":\"v\",\"op\":\"linear\",\"out\":8,\"in\":\"e\"},"
               "{\"name\":\"a\",\"op\":\"attention\",\"heads\":2,"
               "\"in\":[\"q\",\"k\",\"v\"]},"
               "{\"name\":\"s\",\"op\":\"matmul\",\"transpose_b\":true,"
               "\"in\":[\"q\",\"k\"]}]}", 1);
  shape_is(layer(m, "a"), 2, 8, 8, 0);
  ck_assert_uint_eq(layer(m, "a")->saved_bytes, 2 * 8 * 8 * 4);
  shape_is(layer(m, "s"), 2, 8, 8, 0);
  ck_assert_double_eq(layer(m, "s")->fwd_flops, 2.0 * 8 * 8 * 8);
  ooc_model_free(m);

  /* A tied head's output depends on the table it shares even when its
   * input depends on no parameter (a reshape of the input here): the
   * loss after it computes its input gradient, which the head's
   * backward reads for the table's gradient. */
  m = load_str("{\"name\":\"t\",\"input\":[8],\"layers\":["
               "{\"name\":\"e\",\"op\":\"embedding\",\"vocab\":16,\"out\":4},"
               "{\"name\":\"rs\",\"op\":\"reshape\",\"shape\":[2,4],"
               "\"in\":\"input\"},"
               "{\"name\":\"head\",\"op\":\"linear\",\"out\":16,"
               "\"bias\":false,\"tied\":true},"
               "{\"name\":\"loss\",\"op\":\"softmax_ce\"}]}", 2);
  ck_assert_int_eq(layer(m, "head")->grad_in, 0);
  ck_assert_int_eq(layer(m, "head")->has_bwd, 1);
  ck_assert_int_eq(layer(m, "loss")->grad_in, 1);
  ck_assert_int_eq(layer(m, "loss")->has_bwd, 1);
  ck_assert_double_gt(layer(m, "loss")->bwd_data_flops, 0);
  ooc_model_free(m);
}
END_TEST

/* Output sizes of the spatial ops, by the formulas in models/README.md. */
START_TEST(test_spatial_ops)
{
  ooc_model *m = load_str(
      "{\"name\":\"s\",\"input\":[4,9,9],\"layers\":["
      /* (9 + 2 - 3) / 2 + 1 = 5 */
      "{\"name\":\"c\",\"op\":\"conv2d\",\"out\":8,\"kernel\":3,\"stride\":2,"
      "\"pad\":1,\"groups\":2,\"bias\":true},"
      /* dilation 2: (9 - 5) / 1 + 1 = 5; in:input */
      "{\"name\":\"d\",\"op\":\"conv2d\",\"out\":4,\"kernel\":3,"
      "\"dilation\":2,\"in\":\"input\"},"
      /* transposed: (5-1)*2 - 0 + 2 + 1 = 11 */
      "{\"name\":\"t\",\"op\":\"deconv2d\",\"out\":3,\"kernel\":2,"
      "\"stride\":2,\"out_pad\":1,\"in\":\"c\"},"
      "{\"name\":\"u\",\"op\":\"upsample\",\"in\":\"c\"},"
      /* ceil((9-2)/2)+1 = 5 vs floor 4 */
      "{\"name\":\"pc\",\"op\":\"maxpool\",\"kernel\":2,\"stride\":2,"
      "\"ceil_mode\":true,\"in\":\"input\"},"
      "{\"name\":\"pf\",\"op\":\"avgpool\",\"kernel\":2,\"in\":\"input\"},"
      "{\"name\":\"r\",\"op\":\"reshape\",\"shape\":[-1,81],\"in\":\"input\"},"
      "{\"name\":\"n\",\"op\":\"lrn\",\"in\":\"c\"}]}", 1);
  const ooc_layer *c = layer(m, "c");
  shape_is(c, 3, 8, 5, 5);
  /* groups 2: 8 * (4/2) * 9 + 8 bias = 152 */
  ck_assert_uint_eq(c->params, 152);
  /* 2 * 8 * 25 * 2 * 9 + bias 8*25 = 7200 + 200 */
  ck_assert_double_eq(c->fwd_flops, 7400);
  shape_is(layer(m, "d"), 3, 4, 5, 5);
  shape_is(layer(m, "t"), 3, 3, 11, 11);
  /* transposed params Cin * Cout * k*k = 8*3*4 = 96 */
  ck_assert_uint_eq(layer(m, "t")->params, 96);
  shape_is(layer(m, "u"), 3, 8, 10, 10);
  shape_is(layer(m, "pc"), 3, 4, 5, 5);
  shape_is(layer(m, "pf"), 3, 4, 4, 4);
  shape_is(layer(m, "r"), 2, 4, 81, 0);
  ck_assert_int_eq(layer(m, "r")->alias_of, 0);
  ck_assert_uint_eq(layer(m, "r")->out_bytes, 0);
  ooc_model_free(m);

  /* conv3d over [3,4,8,8], k [1,3,3], pad [0,1,1]: [8,4,8,8]; params
   * 8*3*9 = 216; 3D globalpool -> [8,1,1,1]; 3D maxpool k 2 -> [8,2,4,4] */
  m = load_str("{\"name\":\"v\",\"input\":[3,4,8,8],\"layers\":["
               "{\"name\":\"c\",\"op\":\"conv3d\",\"out\":8,"
               "\"kernel\":[1,3,3],\"pad\":[0,1,1]},"
               "{\"name\":\"p\",\"op\":\"maxpool\",\"kernel\":2},"
               "{\"name\":\"g\",\"op\":\"globalpool\",\"in\":\"c\"}]}", 1);
  c = layer(m, "c");
  ck_assert_int_eq(c->out.ndim, 4);
  ck_assert_int_eq(c->out.d[1], 4);
  ck_assert_int_eq(c->out.d[3], 8);
  ck_assert_uint_eq(c->params, 216);
  ck_assert_int_eq(layer(m, "p")->out.d[1], 2);
  ck_assert_int_eq(layer(m, "p")->out.d[3], 4);
  ck_assert_int_eq(layer(m, "g")->out.ndim, 4);
  ck_assert_int_eq(layer(m, "g")->out.d[3], 1);
  ooc_model_free(m);
}
END_TEST

/* Costs of the strided ops at batch 2, fp32, by hand:
 *   c  conv 8->16, k3 s2 p2 d2 g4 on [8,10,10]: (10+4-5)/2+1 = 5 -> [16,5,5]
 *      params 16*(8/4)*9 = 288; fwd 2*16*25*2*9 = 14400 /sample -> 28800;
 *      first layer: no data gradient; im2col 8*9*25*4 = 7200 B
 *   p  maxpool k3 s2 p1 ceil on 5x5: ceil((5+2-3)/2)+1 = 3 -> [16,3,3];
 *      fwd 9*144*2 = 2592, backward the same
 *   a  avgpool k2 s1 on 3x3 -> [16,2,2]; fwd 4*64*2 = 512
 *   d  deconv 16->4, k3 s2 p1 out_pad 1 on 2x2: (2-1)*2-2+3+1 = 4 ->
 *      [4,4,4]; params 16*4*9 = 576; fwd 2*16*4*4*9 = 4608 /sample ->
 *      9216; col2im 4*9*4*4 = 576 B
 *   fc 64->3 + bias: params 195; fwd (2*192+3)*2 = 774; data 768
 *   loss: saved probabilities 3*2*4 = 24 B; fwd 5*3*2 = 30; data 12
 * activations 6400+3200+1152+512+512+24+8+24 = 11832 B; weights = grads
 * = momentum = 1059*4 = 4236 B; naive peak 11832 + 3*4236 + 7200 =
 * 31740 B. */
START_TEST(test_strided_costs)
{
  ooc_model *m = load_str(
      "{\"name\":\"spot\",\"input\":[8,10,10],\"layers\":["
      "{\"name\":\"c\",\"op\":\"conv2d\",\"out\":16,\"kernel\":3,"
      "\"stride\":2,\"pad\":2,\"dilation\":2,\"groups\":4},"
      "{\"name\":\"p\",\"op\":\"maxpool\",\"kernel\":3,\"stride\":2,"
      "\"pad\":1,\"ceil_mode\":true},"
      "{\"name\":\"a\",\"op\":\"avgpool\",\"kernel\":2,\"stride\":1},"
      "{\"name\":\"d\",\"op\":\"deconv2d\",\"out\":4,\"kernel\":3,"
      "\"stride\":2,\"pad\":1,\"out_pad\":1},"
      "{\"name\":\"f\",\"op\":\"flatten\"},"
      "{\"name\":\"fc\",\"op\":\"linear\",\"out\":3},"
      "{\"name\":\"loss\",\"op\":\"softmax_ce\"}]}", 2);
  const ooc_layer *c = layer(m, "c"), *p = layer(m, "p"), *d = layer(m, "d");
  const ooc_layer *fc = layer(m, "fc"), *loss = layer(m, "loss");

  shape_is(c, 3, 16, 5, 5);
  ck_assert_uint_eq(c->params, 288);
  ck_assert_double_eq(c->fwd_flops, 28800);
  ck_assert_double_eq(c->bwd_data_flops, 0);
  ck_assert_double_eq(c->bwd_weight_flops, 28800);
  ck_assert_uint_eq(c->workspace_bytes, 7200);
  shape_is(p, 3, 16, 3, 3);
  ck_assert_double_eq(p->fwd_flops, 2592);
  ck_assert_double_eq(p->bwd_data_flops, 2592);
  ck_assert_uint_eq(p->needs, OOC_NEED_INPUT);
  ck_assert_uint_eq(p->saved_bytes, 16 * 3 * 3 * 8 * 2);
  shape_is(layer(m, "a"), 3, 16, 2, 2);
  ck_assert_double_eq(layer(m, "a")->fwd_flops, 512);
  shape_is(d, 3, 4, 4, 4);
  ck_assert_uint_eq(d->params, 576);
  ck_assert_double_eq(d->fwd_flops, 9216);
  ck_assert_double_eq(d->bwd_data_flops, 9216);
  ck_assert_double_eq(d->bwd_weight_flops, 9216);
  ck_assert_uint_eq(d->workspace_bytes, 576);
  ck_assert_uint_eq(fc->params, 195);
  ck_assert_double_eq(fc->fwd_flops, 774);
  ck_assert_double_eq(fc->bwd_data_flops, 768);
  ck_assert_uint_eq(loss->saved_bytes, 24);
  ck_assert_double_eq(loss->fwd_flops, 30);
  ck_assert_double_eq(loss->bwd_data_flops, 12);
  ck_assert_uint_eq(loss->needs, OOC_NEED_NONE);
  ck_assert_uint_eq(m->total_params, 1059);
  /* 11832 B, and 2304 B of the pool's int64 indices */
  ck_assert_uint_eq(m->activation_bytes, 11832 + 2304);
  ck_assert_uint_eq(m->naive_peak_bytes, 31740 + 2304);
  ooc_model_free(m);
}
END_TEST

/* The backward-needs table of models/README.md, for every op. */
START_TEST(test_needs)
{
  static const struct { const char *name; unsigned needs; } want[] = {
    { "conv", OOC_NEED_INPUT }, { "deconv", OOC_NEED_INPUT },
    { "up", OOC_NEED_NONE }, { "bn", OOC_NEED_INPUT },
    { "relu", OOC_NEED_OUTPUT }, { "sig", OOC_NEED_OUTPUT },
    { "tanh", OOC_NEED_OUTPUT }, { "silu", OOC_NEED_INPUT },
    { "maxp", OOC_NEED_INPUT }, { "avgp", OOC_NEED_NONE },
    { "gp", OOC_NEED_NONE }, { "add", OOC_NEED_NONE },
    { "cat", OOC_NEED_NONE }, { "lrn", OOC_NEED_INPUT | OOC_NEED_OUTPUT },
    { "drop", OOC_NEED_NONE }, { "flat", OOC_NEED_NONE },
    { "resh", OOC_NEED_NONE }, { "fc", OOC_NEED_INPUT },
    { "loss", OOC_NEED_NONE }, { "input", OOC_NEED_NONE },
    { "c3", OOC_NEED_INPUT }, { "emb", OOC_NEED_INPUT },
    { "ln", OOC_NEED_INPUT }, { "qkv", OOC_NEED_INPUT },
    { "att", OOC_NEED_INPUT }, { "mm", OOC_NEED_INPUT },
    { "gelu", OOC_NEED_INPUT }, { "rms", OOC_NEED_INPUT },
    { "rope", OOC_NEED_NONE }, { "swi", OOC_NEED_INPUT },
    { "tok", OOC_NEED_NONE }, { "sl", OOC_NEED_NONE },
    { "sm", OOC_NEED_OUTPUT },
  };
  ooc_model *m[3];
  size_t i;
  int k, seen[OOC_OPK_COUNT] = { 0 };

  m[0] = load_str(
      "{\"name\":\"n\",\"input\":[4,8,8],\"layers\":["
      "{\"name\":\"conv\",\"op\":\"conv2d\",\"out\":4,\"kernel\":3,\"pad\":1},"
      "{\"name\":\"deconv\",\"op\":\"deconv2d\",\"out\":4,\"kernel\":2,"
      "\"stride\":2},"
      "{\"name\":\"up\",\"op\":\"upsample\",\"in\":\"conv\","
      "\"mode\":\"bilinear\"},"
      "{\"name\":\"bn\",\"op\":\"batchnorm\",\"in\":\"conv\"},"
      "{\"name\":\"relu\",\"op\":\"relu\"},"
      "{\"name\":\"sig\",\"op\":\"act\",\"act\":\"sigmoid\"},"
      "{\"name\":\"tanh\",\"op\":\"act\",\"act\":\"tanh\"},"
      "{\"name\":\"silu\",\"op\":\"act\",\"act\":\"silu\"},"
      "{\"name\":\"maxp\",\"op\":\"maxpool\",\"kernel\":3,\"stride\":1,"
      "\"pad\":1},"
      "{\"name\":\"avgp\",\"op\":\"avgpool\",\"kernel\":3,\"stride\":1,"
      "\"pad\":1},"
      "{\"name\":\"gp\",\"op\":\"globalpool\",\"in\":\"conv\"},"
      "{\"name\":\"add\",\"op\":\"add\",\"in\":[\"avgp\",\"conv\",\"bn\"]},"
      "{\"name\":\"cat\",\"op\":\"concat\",\"in\":[\"add\",\"conv\"]},"
      "{\"name\":\"lrn\",\"op\":\"lrn\",\"size\":3},"
      "{\"name\":\"drop\",\"op\":\"dropout\",\"p\":0.1},"
      "{\"name\":\"flat\",\"op\":\"flatten\"},"
      "{\"name\":\"resh\",\"op\":\"reshape\",\"shape\":[8,64]},"
      "{\"name\":\"fc\",\"op\":\"linear\",\"out\":5},"
      "{\"name\":\"loss\",\"op\":\"softmax_ce\"}]}", 2);
  m[1] = load_str("{\"name\":\"n3\",\"input\":[2,4,4,4],\"layers\":["
                  "{\"name\":\"c3\",\"op\":\"conv3d\",\"out\":2,"
                  "\"kernel\":3}]}", 2);
  m[2] = load_str(
      "{\"name\":\"nt\",\"input\":[8],\"layers\":["
      "{\"name\":\"emb\",\"op\":\"embedding\",\"vocab\":50,\"out\":16},"
      "{\"name\":\"ln\",\"op\":\"layernorm\"},"
      "{\"name\":\"qkv\",\"op\":\"linear\",\"out\":48},"
      "{\"name\":\"att\",\"op\":\"attention\",\"heads\":2},"
      "{\"name\":\"mm\",\"op\":\"matmul\",\"in\":[\"att\",\"ln\"],"
      "\"transpose_b\":true},"
      "{\"name\":\"gelu\",\"op\":\"gelu\"},"
      "{\"name\":\"rms\",\"op\":\"rmsnorm\",\"in\":\"ln\"},"
      "{\"name\":\"rope\",\"op\":\"rope\",\"head_dim\":4,"
      "\"rotate\":32,\"in\":\"qkv\"},"
      "{\"name\":\"swi\",\"op\":\"swiglu\",\"in\":\"qkv\"},"
      "{\"name\":\"tok\",\"op\":\"tokens\",\"positions\":9,"
      "\"in\":\"ln\"},"
      "{\"name\":\"sl\",\"op\":\"slice\",\"start\":2,\"length\":3},"
      "{\"name\":\"sm\",\"op\":\"softmax\",\"in\":\"qkv\"}]}", 2);
  for (i = 0; i < sizeof want / sizeof want[0]; i++) {
    const ooc_layer *l = NULL;
    for (k = 0; k < 3 && l == NULL; k++) {
      int j = ooc_model_find_layer(m[k], want[i].name);
      if (j >= 0)
        l = &m[k]->layers[j];
    }
    ck_assert_msg(l != NULL, "no layer %s", want[i].name);
    ck_assert_msg(l->needs == want[i].needs, "%s needs %s, want %s",
                  want[i].name, ooc_needs_name(l->needs),
                  ooc_needs_name(want[i].needs));
    seen[l->op] = 1;
  }
  for (k = 0; k < OOC_OPK_COUNT; k++)
    ck_assert_msg(seen[k], "op %s not covered", ooc_op_name(k));
  ck_assert_str_eq(ooc_needs_name(OOC_NEED_INPUT | OOC_NEED_OUTPUT),
                   "input+output");
  ck_assert_uint_eq(layer(m[0], "drop")->saved_bytes, 8 * 8 * 8 * 2);
  ck_assert_uint_eq(layer(m[0], "bn")->saved_bytes, 2 * 4 * 4);
  for (k = 0; k < 3; k++)
    ooc_model_free(m[k]);

  /* Without a parameter upstream there is no backward at all. */
  m[0] = load_str("{\"name\":\"g\",\"input\":[4,8,8],\"layers\":["
                  "{\"name\":\"r\",\"op\":\"relu\"},"
                  "{\"name\":\"p\",\"op\":\"maxpool\",\"kernel\":2}]}", 1);
  ck_assert_int_eq(layer(m[0], "p")->has_bwd, 0);
  ck_assert_uint_eq(layer(m[0], "p")->needs, OOC_NEED_NONE);
  ck_assert_double_eq(layer(m[0], "p")->bwd_data_flops, 0);
  ooc_model_free(m[0]);
}
END_TEST

START_TEST(test_aliases)
{
  /* flatten of a conv, then an in-place dropout: both share conv's
   * storage */
  ooc_model *m = load_str("{\"name\":\"a\",\"input\":[2,4,4],\"layers\":["
                          "{\"name\":\"c\",\"op\":\"conv2d\",\"out\":2,"
                          "\"kernel\":1},"
                          "{\"name\":\"f\",\"op\":\"flatten\"},"
                          "{\"name\":\"d\",\"op\":\"dropout\","
                          "\"in_place\":true}]}", 3);
  ck_assert_int_eq(layer(m, "d")->alias_of, 2);
  ck_assert_int_eq(ooc_model_storage(m, 3), 1);
  ck_assert_uint_eq(layer(m, "d")->out_bytes, 0);
  ck_assert_uint_eq(layer(m, "d")->saved_bytes, 32 * 3); /* 1-byte mask */
  ooc_model_free(m);
}
END_TEST

START_TEST(test_signature)
{
  ooc_model *m = load(DATA "tiny_cnn.json", 2);
  ooc_model *m2;
  char buf[256], small[10];
  int n = ooc_layer_signature(m, 1, buf, sizeof buf);
  ck_assert_str_eq(buf, "conv2d b=2 in=3x8x8 out=4x8x8 k=3x3 s=1x1 p=1x1 "
                        "d=1x1 g=1 fp32");
  ck_assert_int_eq(n, (int)strlen(buf));
  ck_assert_int_eq(ooc_layer_signature(m, 1, small, sizeof small), n);
  ck_assert_int_eq((int)strlen(small), 9);
  ooc_layer_signature(m, 6, buf, sizeof buf);
  ck_assert_str_eq(buf, "linear b=2 in=64 out=10 bias=1 fp32");
  ooc_layer_signature(m, 4, buf, sizeof buf);
  ck_assert_str_eq(buf, "maxpool b=2 in=4x8x8 out=4x4x4 k=2x2 s=2x2 p=0x0 "
                        "fp32");

  m2 = load(DATA "tiny_cnn.json", 2);
  ck_assert_uint_eq(m->fingerprint, m2->fingerprint);
  ooc_model_free(m2);
  m2 = load(DATA "tiny_cnn.json", 3);
  ck_assert_uint_ne(m->fingerprint, m2->fingerprint);
  ooc_model_free(m2);
  ooc_model_free(m);
}
END_TEST

/* Every op in the table: found by its name, its kind matches its slot, its
 * required attributes are among the accepted ones; and the small helpers. */
START_TEST(test_op_table)
{
  ooc_dtype d;
  int k;
  for (k = 0; k < OOC_OPK_COUNT; k++) {
    const ooc_op_type *t = ooc_op_get((ooc_op_kind)k);
    ck_assert_ptr_nonnull(t);
    ck_assert_int_eq(t->kind, k);
    ck_assert_ptr_eq(ooc_op_find(t->name), t);
    ck_assert_str_eq(ooc_op_name((ooc_op_kind)k), t->name);
    ck_assert_ptr_nonnull(t->infer);
    ck_assert_int_lt(t->cls, OOC_CLASS_COUNT);
    {
      char req[64], *w, *save = NULL;
      snprintf(req, sizeof req, "%s", t->required);
      for (w = strtok_r(req, " ", &save); w; w = strtok_r(NULL, " ", &save))
        ck_assert_msg(strstr(t->attrs, w) != NULL, "%s: required '%s' not "
                      "in '%s'", t->name, w, t->attrs);
    }
  }
  ck_assert_ptr_null(ooc_op_find("conv"));
  ck_assert_ptr_null(ooc_op_get(OOC_OPK_COUNT));
  ck_assert_int_eq(ooc_dtype_parse("bf16", &d), OOC_OK);
  ck_assert_int_eq(d, OOC_BF16);
  ck_assert_int_eq(ooc_dtype_parse("fp8", &d), OOC_EINVAL);
  ck_assert_uint_eq(ooc_dtype_size(OOC_FP32), 4);
  ck_assert_uint_eq(ooc_dtype_size(OOC_FP16), 2);
  ck_assert_str_eq(ooc_dtype_name(OOC_FP16), "fp16");
  ck_assert_str_eq(ooc_op_class_name(OOC_CLASS_GEMM), "gemm");
  {
    ooc_shape sh = { .ndim = 3, .d = { 3, 224, 224 } };
    ck_assert_int_eq(ooc_shape_elems(&sh), 150528);
  }
}
END_TEST

/* ---- expressions --------------------------------------------------------- */

static ooc_value
ev(const char *s)
{
  ooc_expr_var vars[3] = { { "depth", { 1, 50, 50.0 } },
                           { "i", { 1, 1, 1.0 } },
                           { "i", { 1, 2, 2.0 } } };
  ooc_value v = { 0 };
  ooc_err e = { 0 };
  int rc = ooc_expr_eval(s, vars, 3, &v, &e);
  ck_assert_msg(rc == OOC_OK, "'%s': %s", s, e.msg);
  return v;
}

static void
ev_int(const char *s, int64_t want)
{
  ooc_value v = ev(s);
  ck_assert_msg(v.is_int, "'%s' is not an integer", s);
  ck_assert_msg(v.i == want, "'%s' = %lld, want %lld", s, (long long)v.i,
                (long long)want);
}

static void
ev_bad(const char *s, int code, const char *msg)
{
  ooc_value v;
  ooc_err e = { 0 };
  int rc = ooc_expr_eval(s, NULL, 0, &v, &e);
  ck_assert_msg(rc == code, "'%s': code %d, want %d", s, rc, code);
  ck_assert_str_eq(e.msg, msg);
}

START_TEST(test_expr)
{
  ev_int("(depth - 2) / 3", 16);
  ev_int("7 / 2", 3);
  ev_int("-7 / 2", -3);
  ev_int("7 % 3", 1);
  ev_int("1 + 2 * 3", 7);
  ev_int("(1 + 2) * 3", 9);
  ev_int("10 - 2 - 3", 5);
  ev_int("2 < 3 && 3 <= 3", 1);
  ev_int("1 == 2 || !0", 1);
  ev_int("!(1 != 2)", 0);
  ev_int("3 >= 4", 0);
  ev_int("depth >= 152 ? 8 : 4", 4);
  ev_int("depth == 50 ? 1 : depth == 101 ? 2 : 3", 1);
  ev_int("0 ? 1 : 0 ? 2 : 3", 3);
  ev_int("min(3, 4) + max(2, 9)", 12);
  ev_int("ceil(7 / 2.0)", 4);
  ev_int("floor(3.7)", 3);
  ev_int("ceil(7 / 2)", 3);
  ev_int("i", 2); /* the inner scope shadows */
  ev_int("0 && 1 / 0", 0);
  ev_int("1 || 1 / 0", 1);
  ev_int("0 ? 1 / 0 : 5", 5);
  ev_int("-(-3)", 3);
  ck_assert_double_eq(ev("7 / 2.0").d, 3.5);
  ck_assert_int_eq(ev("7 / 2.0").is_int, 0);
  ck_assert_double_eq(ev("min(1, 2.5)").d, 1.0);
  ck_assert_double_eq(ev("1e3").d, 1000.0);

  ev_bad("1 / 0", OOC_EINVAL, "expression '1 / 0': division by zero");
  ev_bad("dpeth + 1", OOC_EINVAL,
         "expression 'dpeth + 1': unknown name 'dpeth'");
  ev_bad("1 +", OOC_EINVAL, "expression '1 +': unexpected end");
  ev_bad("(1", OOC_EINVAL, "expression '(1': expected ')'");
  ev_bad("2 3", OOC_EINVAL,
         "expression '2 3': unexpected text after the expression");
  ev_bad("9223372036854775807 + 1", OOC_ERANGE,
         "expression '9223372036854775807 + 1': integer overflow");
  ev_bad("foo(1)", OOC_EINVAL,
         "expression 'foo(1)': unknown function (use min, max, ceil, floor)");
  ev_bad("min(1)", OOC_EINVAL,
         "expression 'min(1)': min/max take two arguments");
  ev_bad("1 ? 2", OOC_EINVAL, "expression '1 ? 2': expected ':' in '? :'");
  ev_bad("", OOC_EINVAL, "expression '': unexpected end");
  ev_bad("1 & 2", OOC_EINVAL,
         "expression '1 & 2': unexpected text after the expression");
}
END_TEST

/* ---- bad input ----------------------------------------------------------- */

START_TEST(test_bad_files)
{
  bad_file(DATA "bad_add.json", 2, OOC_EINVAL,
           DATA "bad_add.json: layer 'res_add': in: shape [4,8,8] does not "
                "match [8,4,4]", 1);
  bad_file(DATA "bad_concat.json", 2, OOC_EINVAL,
           DATA "bad_concat.json: layer 'cat': in: shape [4,4,4] does not "
                "match [4,8,8] except on axis 0", 1);
  bad_file(DATA "bad_malformed.json", 2, OOC_EPARSE,
           DATA "bad_malformed.json: malformed JSON near line 4, column 3",
           1);
  bad_file(DATA "bad_truncated.json", 2, OOC_EPARSE,
           DATA "bad_truncated.json: malformed JSON near line 5, column 45 "
                "(unexpected end: truncated?)", 1);
  bad_file(DATA "bad_binary.json", 2, OOC_EPARSE,
           DATA "bad_binary.json: binary data (NUL byte), not text", 1);
  bad_file(DATA "bad_op.json", 2, OOC_EINVAL,
           DATA "bad_op.json: layer 'c1': op: unknown op 'conv' (valid: "
                "conv2d, ", 0);
  bad_file(DATA "bad_missing.json", 2, OOC_EINVAL,
           DATA "bad_missing.json: layer 'c1': out: missing", 1);
  bad_file(DATA "bad_negative.json", 2, OOC_EINVAL,
           DATA "bad_negative.json: layer 'fc': out: -3 must be at least 1",
           1);
  bad_file(DATA "bad_overflow.json", 2, OOC_ERANGE,
           DATA "bad_overflow.json: layer 'fc': out: 1e+30 is out of range "
                "(at most 1099511627776)", 1);
  bad_file(DATA "bad_unknown_in.json", 2, OOC_EINVAL,
           DATA "bad_unknown_in.json: layer 'sum': in: unknown layer 'c9'", 1);
  bad_file(DATA "bad_cycle_self.json", 2, OOC_EINVAL,
           DATA "bad_cycle_self.json: layer 'sum': in: 'sum' refers to the "
                "layer itself (a cycle)", 1);
  bad_file(DATA "bad_cycle_later.json", 2, OOC_EINVAL,
           DATA "bad_cycle_later.json: layer 'r1': in: 'r2' is defined after "
                "this layer (a cycle: layers must be in topological order)",
           1);
  bad_file("no_such_model", 2, OOC_ENOTFOUND,
           "unknown model 'no_such_model' (available: ", 0);
  bad_file(DATA "tiny_cnn.json", 0, OOC_EINVAL, "batch must be >= 1 (got 0)",
           1);
  bad_file(DATA "tiny_cnn.json", -5, OOC_EINVAL,
           "batch must be >= 1 (got -5)", 1);
  bad_file(DATA "no_such_file.json", 2, OOC_EIO, "no_such_file.json: ", 0);
  {
    /* [1e6,1e6,1e3] is 1e15 elements: fine at batch 1, overflows int64
     * bytes at batch 10000 */
    ooc_model *m = load(DATA "bad_shape_overflow.json", 1);
    ooc_model_free(m);
    bad_file(DATA "bad_shape_overflow.json", 10000, OOC_ERANGE,
             DATA "bad_shape_overflow.json: layer 'input': out: shape "
                  "[1000000,1000000,1000] x batch 10000 overflows a 64-bit "
                  "size", 1);
  }
}
END_TEST

START_TEST(test_bad_set)
{
  ooc_kv kv = { "imagee", "3" };
  ooc_model_opts o = { .batch = 1, .sets = &kv, .n_sets = 1 };
  ooc_model *m = (ooc_model *)1;
  ooc_err e = { 0 };
  int rc = ooc_model_load(DATA "tiny_cnn.json", &o, &m, &e);
  ck_assert_int_eq(rc, OOC_ENOTFOUND);
  ck_assert_ptr_null(m);
  ck_assert_str_eq(e.msg, DATA "tiny_cnn.json: --set imagee: unknown "
                               "parameter (valid: image, width, classes)");
  kv.key = "image";
  kv.value = "big";
  rc = ooc_model_load(DATA "tiny_cnn.json", &o, &m, &e);
  ck_assert_int_eq(rc, OOC_EINVAL);
  ck_assert_str_eq(e.msg, DATA "tiny_cnn.json: --set image: 'big' is not a "
                               "number");
  kv.value = "1"; /* a 1x1 image cannot take the 2x2 pool */
  rc = ooc_model_load(DATA "tiny_cnn.json", &o, &m, &e);
  ck_assert_int_eq(rc, OOC_EINVAL);
  ck_assert_str_eq(e.msg, DATA "tiny_cnn.json: layer 'pool1': kernel: 2 is "
                               "larger than the padded input 1 + 2*0 along "
                               "spatial dim 0");
}
END_TEST

/* The framework block's op rules. With maxpool_indices "none" the pool's
 * backward reads x and y (cuDNN); "int32" saves 4 B per output element.
 * relu_in_place / add_in_place make every relu / add without its own
 * in_place attribute run in place where that is legal: r overwrites the
 * conv's output (the conv's backward needs its input), a the conv c2's;
 * r2 would overwrite the pool's output, which the pool's backward reads,
 * so it writes its own; r3 says in_place false; s would overwrite r3's
 * output, which r3's backward reads. */
START_TEST(test_framework_ops)
{
  static const char *const fmt =
      "{\"name\":\"fw\",\"input\":[4,8,8],\"framework\":{"
      "\"maxpool_indices\":\"%s\",\"relu_in_place\":true,"
      "\"add_in_place\":true},\"layers\":["
      "{\"name\":\"c\",\"op\":\"conv2d\",\"out\":4,\"kernel\":3,\"pad\":1},"
      "{\"name\":\"r\",\"op\":\"relu\"},"
      "{\"name\":\"p\",\"op\":\"maxpool\",\"kernel\":2},"
      "{\"name\":\"c2\",\"op\":\"conv2d\",\"out\":4,\"kernel\":3,\"pad\":1},"
      "{\"name\":\"a\",\"op\":\"add\",\"in\":[\"c2\",\"p\"]},"
      "{\"name\":\"r2\",\"op\":\"relu\",\"in\":\"p\"},"
      "{\"name\":\"r3\",\"op\":\"relu\",\"in\":\"a\",\"in_place\":false},"
      "{\"name\":\"s\",\"op\":\"add\",\"in\":[\"r3\",\"r2\"]}]}";
  char json[1024];
  ooc_model *m;

  snprintf(json, sizeof json, fmt, "none");
  m = load_str(json, 2);
  ck_assert_int_eq(m->fw_maxpool_index_bytes, 0);
  ck_assert_int_eq(m->fw_relu_in_place, 1);
  ck_assert_int_eq(m->fw_add_in_place, 1);
  ck_assert_int_eq(layer(m, "r")->alias_of, ooc_model_find_layer(m, "c"));
  ck_assert_uint_eq(layer(m, "r")->out_bytes, 0);
  ck_assert_uint_eq(layer(m, "p")->needs, OOC_NEED_INPUT | OOC_NEED_OUTPUT);
  ck_assert_uint_eq(layer(m, "p")->saved_bytes, 0);
  ck_assert_int_eq(layer(m, "a")->alias_of, ooc_model_find_layer(m, "c2"));
  ck_assert_int_eq(layer(m, "r2")->alias_of, -1);
  ck_assert_uint_eq(layer(m, "r2")->out_bytes, 4 * 4 * 4 * 4 * 2);
  ck_assert_int_eq(layer(m, "r2")->a.in_place, 0);
  ck_assert_int_eq(layer(m, "r3")->alias_of, -1);
  ck_assert_int_eq(layer(m, "s")->alias_of, -1);
  ck_assert_uint_eq(layer(m, "s")->out_bytes, 512);
  ooc_model_free(m);

  snprintf(json, sizeof json, fmt, "int32");
  m = load_str(json, 2);
  ck_assert_uint_eq(layer(m, "p")->needs, OOC_NEED_INPUT);
  ck_assert_uint_eq(layer(m, "p")->saved_bytes, 4 * 4 * 4 * 4 * 2);
  /* the indices keep the output's storage: r2 still may not overwrite
   * it (its storage is p's, which p's backward uses) */
  ck_assert_int_eq(layer(m, "r2")->alias_of, -1);
  ooc_model_free(m);

  /* Defaults: PyTorch's int64 indices, in place as each layer says. */
  m = load_str("{\"name\":\"d\",\"input\":[4,8,8],\"layers\":["
               "{\"name\":\"c\",\"op\":\"conv2d\",\"out\":4,"
               "\"kernel\":1},"
               "{\"name\":\"p\",\"op\":\"maxpool\",\"kernel\":2},"
               "{\"name\":\"r\",\"op\":\"relu\"}]}", 3);
  ck_assert_str_eq(m->framework, "pytorch");
  ck_assert_int_eq(m->fw_maxpool_index_bytes, 8);
  ck_assert_int_eq(m->fw_relu_in_place, -1);
  ck_assert_uint_eq(layer(m, "p")->saved_bytes, 4 * 4 * 4 * 8 * 3);
  ck_assert_int_eq(layer(m, "r")->alias_of, -1);
  ooc_model_free(m);
  /* A pooling with no backward (nothing before it is trained) saves no
   * indices: its output is all it keeps. */
  m = load_str("{\"name\":\"d\",\"input\":[4,8,8],\"layers\":["
               "{\"name\":\"p\",\"op\":\"maxpool\",\"kernel\":2},"
               "{\"name\":\"c\",\"op\":\"conv2d\",\"out\":4,"
               "\"kernel\":1}]}", 3);
  ck_assert_int_eq(layer(m, "p")->has_bwd, 0);
  ck_assert_uint_eq(layer(m, "p")->saved_bytes, 0);
  ck_assert_uint_eq(layer(m, "p")->out_bytes, 4 * 4 * 4 * 4 * 3);
  ooc_model_free(m);

  snprintf(json, sizeof json, fmt, "int16");
  bad_str(json, OOC_EINVAL, "t.json: framework.maxpool_indices: expected "
          "\"int64\" (PyTorch), \"int32\" (Caffe) or \"none\" (the backward "
          "reads the input and the output, as cuDNN's does)");
  bad_str("{\"name\":\"d\",\"input\":[4],\"framework\":{\"add_in_place\":1},"
          "\"layers\":[{\"name\":\"l\",\"op\":\"linear\",\"out\":2}]}",
          OOC_EINVAL, "t.json: framework.add_in_place: expected true or "
          "false");
  /* An in_place written on the layer is not softened. */
  bad_str("{\"name\":\"d\",\"input\":[4,8,8],\"framework\":{"
          "\"maxpool_indices\":\"none\"},\"layers\":["
          "{\"name\":\"c\",\"op\":\"conv2d\",\"out\":4,\"kernel\":1},"
          "{\"name\":\"p\",\"op\":\"maxpool\",\"kernel\":2},"
          "{\"name\":\"r\",\"op\":\"relu\",\"in_place\":true}]}",
          OOC_EINVAL, "layer 'r': in_place: overwrites the output of 'p', "
          "which its backward needs");
  /* Nor the input of a layer the framework recomputes (a dropout's
   * backward needs no input, but its recompute reads one); the
   * framework's relu default writes its own output instead. */
  bad_str("{\"name\":\"d\",\"input\":[4],\"layers\":["
          "{\"name\":\"f\",\"op\":\"linear\",\"out\":4},"
          "{\"name\":\"dr\",\"op\":\"dropout\",\"in\":\"f\","
          "\"recompute\":true},"
          "{\"name\":\"r\",\"op\":\"relu\",\"in\":\"f\","
          "\"in_place\":true},"
          "{\"name\":\"a\",\"op\":\"add\",\"in\":[\"dr\",\"r\"]}]}",
          OOC_EINVAL, "layer 'r': in_place: overwrites the input of 'dr', "
          "which its recompute (recompute: true) reads");
  m = load_str("{\"name\":\"d\",\"input\":[4],\"framework\":{"
               "\"relu_in_place\":true},\"layers\":["
               "{\"name\":\"f\",\"op\":\"linear\",\"out\":4},"
               "{\"name\":\"dr\",\"op\":\"dropout\",\"in\":\"f\","
               "\"recompute\":true},"
               "{\"name\":\"r\",\"op\":\"relu\",\"in\":\"f\"},"
               "{\"name\":\"a\",\"op\":\"add\",\"in\":[\"dr\",\"r\"]}]}", 2);
  ck_assert_int_eq(layer(m, "r")->alias_of, -1);
  ooc_model_free(m);
  /* Nor the input batch, which stays as loaded for the iteration and has
   * no gradient (here no backward needs it, so only that rule refuses):
   * an add into it, or a relu through a flatten of it, is
   * refused when written on the layer; a framework default writes its
   * own output instead. */
  bad_str("{\"name\":\"d\",\"input\":[3,8,8],\"layers\":["
          "{\"name\":\"p\",\"op\":\"avgpool\",\"kernel\":1,\"stride\":1},"
          "{\"name\":\"c1\",\"op\":\"conv2d\",\"out\":3,\"kernel\":3,"
          "\"pad\":1},"
          "{\"name\":\"a1\",\"op\":\"add\",\"in\":[\"input\",\"c1\"],"
          "\"in_place\":true}]}",
          OOC_EINVAL, "t.json: layer 'a1': in_place: overwrites the input "
          "batch 'input', which oocsim keeps as loaded for the whole "
          "iteration (drop in_place)");
  bad_str("{\"name\":\"d\",\"input\":[3,8,8],\"layers\":["
          "{\"name\":\"f\",\"op\":\"flatten\"},"
          "{\"name\":\"r\",\"op\":\"relu\",\"in_place\":true}]}",
          OOC_EINVAL, "t.json: layer 'r': in_place: overwrites the input "
          "batch 'input', which oocsim keeps as loaded for the whole "
          "iteration (drop in_place)");
  m = load_str("{\"name\":\"d\",\"input\":[3,8,8],\"framework\":{"
               "\"relu_in_place\":true,\"add_in_place\":true},\"layers\":["
               "{\"name\":\"r\",\"op\":\"relu\"},"
               "{\"name\":\"c1\",\"op\":\"conv2d\",\"out\":3,\"kernel\":3,"
               "\"pad\":1},"
               "{\"name\":\"a1\",\"op\":\"add\",\"in\":[\"input\",\"c1\"]}]}",
               2);
  ck_assert_int_eq(layer(m, "r")->alias_of, -1);
  ck_assert_int_eq(layer(m, "r")->a.in_place, 0);
  ck_assert_int_eq(layer(m, "a1")->alias_of, -1);
  ck_assert_uint_eq(layer(m, "a1")->out_bytes, 3 * 8 * 8 * 4 * 2);
  ooc_model_free(m);
}
END_TEST

/* Input generators: a run of inputs by repeat, a choice by if. */
START_TEST(test_in_generators)
{
  static const char *const base =
      "{\"name\":\"g\",\"input\":[2,4,4],\"layers\":["
      "{\"name\":\"c0\",\"op\":\"conv2d\",\"out\":2,\"kernel\":1},"
      "{\"repeat\":3,\"var\":\"j\",\"layers\":[{\"name\":\"f{j}\","
      "\"op\":\"conv2d\",\"out\":2,\"kernel\":1,\"in\":\"c0\"}]},"
      "{\"name\":\"cat\",\"op\":\"concat\",\"in\":%s}]}";
  char json[1024];
  ooc_model *m;
  const ooc_layer *c;
  int k;

  snprintf(json, sizeof json, base,
           "[\"c0\",{\"repeat\":3,\"var\":\"t\",\"in\":\"f{t}\"},"
           "{\"if\":\"1 > 2\",\"in\":\"c0\",\"else\":[\"f0\",\"f2\"]}]");
  m = load_str(json, 2);
  c = layer(m, "cat");
  ck_assert_int_eq(c->n_in, 6);
  {
    const char *want[] = { "c0", "f0", "f1", "f2", "f0", "f2" };
    for (k = 0; k < 6; k++)
      ck_assert_str_eq(m->layers[ooc_layer_input(m, c, k)].name, want[k]);
  }
  shape_is(c, 3, 12, 4, 4);
  ooc_model_free(m);

  snprintf(json, sizeof json, base, "{\"repeat\":2}");
  bad_str(json, OOC_EINVAL, "layer 'cat': in: an input generator needs "
          "\"in\"");
  snprintf(json, sizeof json, base, "[{\"foo\":1}]");
  bad_str(json, OOC_EINVAL, "layer 'cat': in: an object in 'in' needs "
          "either \"repeat\" or \"if\"");
  snprintf(json, sizeof json, base,
           "{\"repeat\":1,\"in\":\"c0\",\"else\":\"c0\"}");
  bad_str(json, OOC_EINVAL, "layer 'cat': in: 'else' is not a field of an "
          "input generator (valid: repeat, var, in)");
  snprintf(json, sizeof json, base, "{\"repeat\":0,\"in\":\"c0\"}");
  bad_str(json, OOC_EINVAL, "layer 'cat': in: the input generators gave no "
          "inputs");
  snprintf(json, sizeof json, base, "{\"repeat\":1,\"var\":\"t\",\"in\":"
           "\"f{t + 5}\"}");
  bad_str(json, OOC_EINVAL, "layer 'cat': in: unknown layer 'f5'");
}
END_TEST

/* Flash attention keeps an fp32 log-sum-exp per row and head instead of
 * the softmax, reads its output in the backward and recomputes QK^T and
 * the softmax there. S 16, H 32, 4 heads, batch 2: eager saves
 * 4 x 16 x 16 x 4 B x 2; flash 4 x 16 x 4 B x 2. Backward per sample:
 * eager 8 S^2 H + 4 heads S^2 = 69632, flash 10 S^2 H + 9 heads S^2 =
 * 91136; the forward is the same. A word parameter chooses it. */
START_TEST(test_flash_attention)
{
  static const char *const fmt =
      "{\"name\":\"f\",\"input\":[16],\"params\":{\"attention\":"
      "[\"eager\",\"flash\"]},\"layers\":["
      "{\"name\":\"e\",\"op\":\"embedding\",\"vocab\":10,\"out\":32},"
      "{\"name\":\"qkv\",\"op\":\"linear\",\"out\":96},"
      "{\"name\":\"a\",\"op\":\"attention\",\"heads\":4,"
      "\"impl\":\"%s\"}]}";
  char json[512];
  ooc_kv kv = { "attention", "flash" };
  ooc_model_opts o = { .batch = 2, .sets = &kv, .n_sets = 1 };
  ooc_model *m = NULL;
  ooc_err e = { 0 };
  const ooc_layer *a;

  snprintf(json, sizeof json, fmt, "{attention}");
  m = load_str(json, 2);
  a = layer(m, "a");
  ck_assert_int_eq(a->a.flash, 0);
  ck_assert_uint_eq(a->saved_bytes, 4 * 16 * 16 * 4 * 2);
  ck_assert_str_eq(m->params[0].word, "eager");
  ck_assert_double_eq(m->params[0].value, 0);
  ooc_model_free(m);

  ck_assert_int_eq(ooc_model_load_string(json, "t.json", &o, &m, &e), OOC_OK);
  a = layer(m, "a");
  ck_assert_int_eq(a->a.flash, 1);
  ck_assert_uint_eq(a->saved_bytes, 4 * 16 * 4 * 2);
  ck_assert_uint_eq(a->needs, OOC_NEED_INPUT | OOC_NEED_OUTPUT);
  ck_assert_double_eq(a->fwd_flops, 2 * 37888);
  ck_assert_double_eq(a->bwd_data_flops, 2 * 91136);
  ck_assert_str_eq(m->params[0].word, "flash");
  ck_assert_int_eq(m->params[0].set, 1);
  ck_assert_double_eq(m->params[0].value, 1);
  ooc_model_free(m);

  kv.value = "fast";
  m = (ooc_model *)1;
  ck_assert_int_eq(ooc_model_load_string(json, "t.json", &o, &m, &e),
                   OOC_EINVAL);
  ck_assert_ptr_null(m);
  ck_assert_str_eq(e.msg, "t.json: --set attention: 'fast' is not one of "
                   "eager, flash");

  snprintf(json, sizeof json, fmt, "fast");
  bad_str(json, OOC_EINVAL, "layer 'a': impl: unknown implementation 'fast' "
          "(use eager or flash)");
  bad_str("{\"name\":\"f\",\"input\":[4],\"params\":{\"w\":[]},\"layers\":["
          "{\"name\":\"l\",\"op\":\"linear\",\"out\":2}]}", OOC_EINVAL,
          "t.json: params: w: expected a number, an expression or a "
          "non-empty list of words");
  bad_str("{\"name\":\"f\",\"input\":[4],\"params\":{\"w\":[\"a\",\"a\"]},"
          "\"layers\":[{\"name\":\"l\",\"op\":\"linear\",\"out\":2}]}",
          OOC_EINVAL, "t.json: params: w: 'a' is listed twice");
  bad_str("{\"name\":\"f\",\"input\":[4],\"params\":{\"w\":[\"a b\"]},"
          "\"layers\":[{\"name\":\"l\",\"op\":\"linear\",\"out\":2}]}",
          OOC_EINVAL, "t.json: params: w: word 1: expected a word");
}
END_TEST

/* The transformer zoo's ops by hand, batch 2, S = 8:
 * - embedding vocab 10, 8 positions, 2 types, width 16: (10+8+2) x 16 =
 *   320 parameters; two adds per element (position, type): 2 x 8 x 16;
 * - rmsnorm [8,16]: 16 weights, an fp32 1/rms per row: 8 x 4 B x 2;
 *   4 / 6 / 2 FLOPs per element forward / data / weight;
 * - grouped-query attention, 4 heads on 2 kv heads of width 4: the packed
 *   input is 16 + 2 x 8 = 32 wide; forward 4 S^2 H + 5 heads S^2 =
 *   4096 + 1280 = 5376;
 * - rope over the 24 columns of q and k in slices of 4: 3 x 8 x 24;
 * - swiglu of 24 columns: [8,12], 5 / 10 FLOPs per output element;
 * - tokens: a class token and 9 positions on [8,16]: (1+9) x 16
 *   parameters, [9,16]; slice row 0: [1,16]. */
START_TEST(test_transformer_ops)
{
  static const char *const fmt =
      "{\"name\":\"t\",\"input\":[8],\"layers\":["
      "{\"name\":\"e\",\"op\":\"embedding\",\"vocab\":10,\"out\":16,"
      "\"positions\":8,\"types\":2},"
      "{\"name\":\"n\",\"op\":\"rmsnorm\"},"
      "{\"name\":\"qkv\",\"op\":\"linear\",\"out\":32,\"bias\":false},"
      "{\"name\":\"r\",\"op\":\"rope\",\"head_dim\":%s,\"rotate\":%s},"
      "{\"name\":\"a\",\"op\":\"attention\",\"heads\":4,\"kv_heads\":%s},"
      "{\"name\":\"up\",\"op\":\"linear\",\"out\":24,\"in\":\"n\"},"
      "{\"name\":\"sw\",\"op\":\"swiglu\"},"
      "{\"name\":\"tk\",\"op\":\"tokens\",\"positions\":%s,\"in\":\"n\"},"
      "{\"name\":\"sl\",\"op\":\"slice\",\"length\":%s}]}";
  char json[1024];
  ooc_model *m;
  const ooc_layer *l;

  snprintf(json, sizeof json, fmt, "4", "24", "2", "9", "1");
  m = load_str(json, 2);
  l = layer(m, "e");
  ck_assert_uint_eq(l->params, 320);
  ck_assert_double_eq(l->fwd_flops, 2 * 2 * 8 * 16);
  l = layer(m, "n");
  ck_assert_uint_eq(l->params, 16);
  ck_assert_uint_eq(l->saved_bytes, 8 * 4 * 2);
  ck_assert_double_eq(l->fwd_flops, 2 * 4 * 128);
  ck_assert_double_eq(l->bwd_data_flops, 2 * 6 * 128);
  ck_assert_double_eq(l->bwd_weight_flops, 2 * 2 * 128);
  ck_assert_uint_eq(l->needs, OOC_NEED_INPUT);
  l = layer(m, "r");
  shape_is(l, 2, 8, 32, 0);
  ck_assert_double_eq(l->fwd_flops, 2 * 3 * 8 * 24);
  ck_assert_uint_eq(l->needs, OOC_NEED_NONE);
  l = layer(m, "a");
  shape_is(l, 2, 8, 16, 0);
  ck_assert_double_eq(l->fwd_flops, 2 * 5376);
  ck_assert_uint_eq(l->saved_bytes, 4 * 8 * 8 * 4 * 2);
  l = layer(m, "sw");
  shape_is(l, 2, 8, 12, 0);
  ck_assert_double_eq(l->fwd_flops, 2 * 5 * 96);
  ck_assert_double_eq(l->bwd_data_flops, 2 * 10 * 96);
  l = layer(m, "tk");
  shape_is(l, 2, 9, 16, 0);
  ck_assert_uint_eq(l->params, 160);
  l = layer(m, "sl");
  shape_is(l, 2, 1, 16, 0);
  ck_assert_uint_eq(m->total_params, 320 + 16 + 16 * 32 + 16 * 24 + 24 +
                                         160);
  ooc_model_free(m);

  snprintf(json, sizeof json, fmt, "3", "24", "2", "9", "1");
  bad_str(json, OOC_EINVAL, "layer 'r': head_dim: 3 must be even and "
          "divide the 24 rotated columns");
  snprintf(json, sizeof json, fmt, "4", "40", "2", "9", "1");
  bad_str(json, OOC_EINVAL, "layer 'r': rotate: 40 is more than the "
          "input's 32 columns");
  snprintf(json, sizeof json, fmt, "4", "24", "3", "9", "1");
  bad_str(json, OOC_EINVAL, "layer 'a': kv_heads: 3 does not divide heads "
          "4");
  snprintf(json, sizeof json, fmt, "4", "24", "1", "9", "1");
  bad_str(json, OOC_EINVAL, "layer 'a': in: packed q,k,v width 32 is not "
          "H + 2 x 1 x H / 4 for any H");
  snprintf(json, sizeof json, fmt, "4", "24", "2", "8", "1");
  bad_str(json, OOC_EINVAL, "layer 'tk': positions: 8 is less than the 9 "
          "rows with the prepended tokens");
  snprintf(json, sizeof json, fmt, "4", "24", "2", "9", "10");
  bad_str(json, OOC_EINVAL, "layer 'sl': length: rows 0 to 9 are past the "
          "input's 9");
  bad_str("{\"name\":\"t\",\"input\":[8,5],\"layers\":["
          "{\"name\":\"sw\",\"op\":\"swiglu\"}]}", OOC_EINVAL,
          "layer 'sw': in: the last dim 5 is odd (it packs the gate and the "
          "up projection)");
}
END_TEST

/* --precision: mixed precision keeps half-precision weights and
 * gradients, fp32 master weights and fp32 optimizer state: with Adam
 * 2 + 2 + 4 + 8 = 16 B per parameter (ZeRO, sec. 3.1), where --dtype
 * bf16 counts 2 + 2 + 4; fp32 and tf32 are fp32 throughout. tiny_cnn has
 * 766 parameters. */
START_TEST(test_precision)
{
  ooc_model_opts o = { .batch = 2, .optimizer = OOC_OPT_ADAM,
                       .precision = OOC_PREC_AMP_BF16 };
  ooc_model *m = load_opts(DATA "tiny_cnn.json", &o), *n;
  ooc_err e = { 0 };
  uint64_t fp;

  ck_assert_int_eq(m->dtype, OOC_BF16);
  ck_assert_int_eq(m->precision, OOC_PREC_AMP_BF16);
  ck_assert_uint_eq(m->weight_bytes, 766 * 2);
  ck_assert_uint_eq(m->grad_bytes, 766 * 2);
  ck_assert_uint_eq(m->opt_bytes, 766 * 12);
  ck_assert_uint_eq(layer(m, "conv1")->out_bytes, 1024);   /* bf16 */
  fp = m->fingerprint;
  ooc_model_free(m);

  o.precision = OOC_PREC_NONE;
  o.dtype_set = 1;
  o.dtype = OOC_BF16;
  n = load_opts(DATA "tiny_cnn.json", &o);
  ck_assert_uint_eq(n->opt_bytes, 766 * 4);     /* pure bf16 Adam */
  ck_assert(n->fingerprint != fp);
  ooc_model_free(n);

  o.dtype_set = 0;
  o.precision = OOC_PREC_TF32;
  m = load_opts(DATA "tiny_cnn.json", &o);
  ck_assert_int_eq(m->dtype, OOC_FP32);
  ck_assert_uint_eq(m->weight_bytes + m->grad_bytes + m->opt_bytes,
                    766 * 16);
  ooc_model_free(m);

  o.dtype_set = 1;
  m = (ooc_model *)1;
  ck_assert_int_eq(ooc_model_load(DATA "tiny_cnn.json", &o, &m, &e),
                   OOC_EINVAL);
  ck_assert_ptr_null(m);
  ck_assert_str_eq(e.msg, "--precision sets the dtype: give --precision or "
                   "--dtype, not both");
  {
    ooc_precision p;
    ck_assert_int_eq(ooc_precision_parse("amp-fp16", &p), OOC_OK);
    ck_assert_int_eq(p, OOC_PREC_AMP_FP16);
    ck_assert_str_eq(ooc_precision_name(p), "amp-fp16");
    ck_assert_int_eq(ooc_precision_parse("fp8", &p), OOC_EINVAL);
    ck_assert_ptr_null(ooc_precision_name(OOC_PREC_NONE));
  }
}
END_TEST

START_TEST(test_bad_strings)
{
  {
    /* A layer name holds 255 bytes, not one more. */
    char json[700], name[300];
    ooc_model *m = NULL;
    ooc_model_opts o = { .batch = 1 };
    memset(name, 'n', 255);
    name[255] = '\0';
    snprintf(json, sizeof json, "{\"name\":\"x\",\"input\":[4],\"layers\":"
             "[{\"name\":\"%s\",\"op\":\"relu\"}]}", name);
    ck_assert_int_eq(ooc_model_load_string(json, "t.json", &o, &m, NULL),
                     OOC_OK);
    ck_assert_int_eq((int)strlen(m->layers[1].name), 255);
    ooc_model_free(m);
    snprintf(json, sizeof json, "{\"name\":\"x\",\"input\":[4],\"layers\":"
             "[{\"name\":\"%sn\",\"op\":\"relu\"}]}", name);
    bad_str(json, OOC_EINVAL, "is too long (at most 255 bytes)");
  }
  bad_str("\x89PNG\r\n\x1a\n garbage", OOC_EPARSE,
          "t.json: not UTF-8 text: byte 0x89 at line 1, column 1 (a model)");
  bad_str("PNG\r\n\x1a\n garbage", OOC_EPARSE,
          "t.json: malformed JSON near line 1, column 1");
  bad_str("", OOC_EPARSE, "malformed JSON near line 1, column 1 (unexpected "
                          "end: truncated?)");
  {
    ooc_model *m = (ooc_model *)1;
    ooc_model_opts o = { .batch = 1 };
    /* a NULL error context is allowed */
    ck_assert_int_eq(ooc_model_load_string("{", "t.json", &o, &m, NULL),
                     OOC_EPARSE);
    ck_assert_ptr_null(m);
  }
  bad_str("[1, 2]", OOC_EPARSE, "expected a JSON object at the top level");
  /* An upsample sized by a second input takes no scale, and needs inputs
   * of one rank. */
  bad_str("{\"name\":\"u\",\"input\":[3,8,8],\"layers\":["
          "{\"name\":\"p\",\"op\":\"maxpool\",\"kernel\":2},"
          "{\"name\":\"up\",\"op\":\"upsample\",\"in\":[\"p\","
          "\"input\"],\"scale\":2}]}", OOC_EINVAL,
          "scale: not with a second input (the output takes that input's "
          "spatial size)");
  bad_str("{\"name\":\"u\",\"input\":[3,8,8],\"layers\":["
          "{\"name\":\"f\",\"op\":\"flatten\"},"
          "{\"name\":\"up\",\"op\":\"upsample\",\"in\":[\"input\","
          "\"f\"]}]}", OOC_EINVAL,
          "the second input (the size to resize to) must have the first's "
          "rank 3 (got 1)");
  /* A tied linear computes with an embedding's table: one of its shape
   * must exist, or its weights would vanish from the counts. */
  bad_str("{\"name\":\"t\",\"input\":[16],\"layers\":["
          "{\"name\":\"a\",\"op\":\"linear\",\"out\":4,\"tied\":true}]}",
          OOC_EINVAL, "t.json: layer 'a': tied: no embedding layer has vocab "
          "4 and width 16, the table this layer's weights would be ([out x "
          "input features])");
  bad_str("{\"name\":\"t\",\"input\":[8],\"layers\":["
          "{\"name\":\"emb\",\"op\":\"embedding\",\"vocab\":10,\"out\":4},"
          "{\"name\":\"head\",\"op\":\"linear\",\"out\":7,\"tied\":true}]}",
          OOC_EINVAL, "t.json: layer 'head': tied: no embedding layer has "
          "vocab 7 and width 4");
  bad_str("{\"name\":\"x\",\"input\":[3,8,8]}", OOC_EINVAL,
          "t.json: layers: missing");
  bad_str("{\"name\":\"x\",\"layers\":[]}", OOC_EINVAL,
          "t.json: input: missing");
  bad_str("{\"input\":[3],\"layers\":[]}", OOC_EINVAL, "t.json: name: missing");
  bad_str("{\"name\":\"x\",\"input\":[3,0],\"layers\":[{\"op\":\"relu\"}]}",
          OOC_EINVAL, "t.json: input: 0 must be at least 1");
  bad_str("{\"name\":\"x\",\"input\":[3,8,8],\"laers\":[]}", OOC_EINVAL,
          "t.json: laers: unknown top-level field");
  bad_str("{\"name\":\"x\",\"dtype\":\"fp8\",\"input\":[3],\"layers\":[]}",
          OOC_EINVAL, "t.json: dtype: expected fp32, fp16 or bf16");
  /* kernel larger than the padded input */
  bad_str("{\"name\":\"x\",\"input\":[3,4,4],\"layers\":[{\"name\":\"c\","
          "\"op\":\"conv2d\",\"out\":2,\"kernel\":7,\"pad\":1}]}",
          OOC_EINVAL, "t.json: layer 'c': kernel: 7 (dilated 7) is larger "
                      "than the padded input 4 + 2*1 along spatial dim 0");
  bad_str("{\"name\":\"x\",\"input\":[3,8,8],\"layers\":[{\"name\":\"c\","
          "\"op\":\"conv2d\",\"out\":4,\"kernel\":3,\"groups\":2}]}",
          OOC_EINVAL, "layer 'c': groups: 2 does not divide the 3 input "
                      "channels");
  bad_str("{\"name\":\"x\",\"input\":[3,8,8],\"layers\":[{\"name\":\"c\","
          "\"op\":\"conv2d\",\"out\":4,\"kernel\":[3,3,3]}]}",
          OOC_EINVAL, "layer 'c': kernel: 3 values given, the input has 2 "
                      "spatial dims");
  bad_str("{\"name\":\"x\",\"input\":[3,8,8],\"layers\":[{\"name\":\"c\","
          "\"op\":\"conv2d\",\"out\":4,\"kernel\":3,\"strid\":2}]}",
          OOC_EINVAL, "layer 'c': strid: not an attribute of conv2d (valid: "
                      "out kernel stride pad dilation groups bias)");
  bad_str("{\"name\":\"x\",\"input\":[3,8,8],\"layers\":[{\"name\":\"c\","
          "\"op\":\"conv2d\",\"out\":\"width * 2\",\"kernel\":3}]}",
          OOC_EINVAL, "t.json: layer 'c': out: expression 'width * 2': "
                      "unknown name 'width'");
  bad_str("{\"name\":\"x\",\"params\":{\"w\":0},\"input\":[3,8,8],"
          "\"layers\":[{\"name\":\"c\",\"op\":\"conv2d\",\"out\":\"8 / w\","
          "\"kernel\":3}]}",
          OOC_EINVAL, "t.json: layer 'c': out: expression '8 / w': division "
                      "by zero");
  bad_str("{\"name\":\"x\",\"input\":[3,8,8],\"layers\":["
          "{\"name\":\"r\",\"op\":\"relu\"},{\"name\":\"r\",\"op\":\"relu\"}]}",
          OOC_EINVAL, "t.json: layer 'r': name: 'r' is not unique (also "
                      "layer 1)");
  bad_str("{\"name\":\"x\",\"input\":[3,8,8],\"layers\":["
          "{\"name\":\"input\",\"op\":\"relu\"}]}",
          OOC_EINVAL, "layer 'input': name: 'input' is reserved for the "
                      "implicit input layer");
  /* A list these parameters do not expand is still checked for what
   * holds whatever the parameters (a typo there would surface only for
   * the parameters that take it); its values are not evaluated. */
  bad_str("{\"name\":\"x\",\"params\":{\"k\":0},\"input\":[3,8,8],"
          "\"layers\":[{\"name\":\"r\",\"op\":\"relu\"},"
          "{\"if\":\"k > 0\",\"layers\":[1]}]}",
          OOC_EINVAL, "t.json: if after layer 'r': layers[0]: expected an "
                      "object (in a list these parameters do not expand)");
  bad_str("{\"name\":\"x\",\"params\":{\"k\":1},\"input\":[3,8,8],"
          "\"layers\":[{\"name\":\"r\",\"op\":\"relu\"},"
          "{\"if\":\"k > 0\",\"layers\":[{\"op\":\"relu\"}],"
          "\"else\":[{\"op\":\"relu\",\"pad\":\"1/0\"}]}]}",
          OOC_EINVAL, "t.json: if after layer 'r': else[0]: pad: not an "
                      "attribute of relu (valid: in_place) (in a list these "
                      "parameters do not expand)");
  bad_str("{\"name\":\"x\",\"input\":[3,8,8],\"layers\":["
          "{\"name\":\"r\",\"op\":\"relu\"},"
          "{\"repeat\":0,\"layers\":[{\"if\":1,\"layers\":["
          "{\"op\":2147483648}]}]}]}",
          OOC_EINVAL, "t.json: repeat after layer 'r': layers[0].layers[0]: "
                      "op: expected a string (in a list these parameters do "
                      "not expand)");
  /* ... but not evaluated: what the branch guards against is fine. */
  {
    ooc_model *m = NULL;
    ooc_err e = { 0 };
    ooc_model_opts o = { .batch = 2 };
    ck_assert_msg(
        ooc_model_load_string(
            "{\"name\":\"x\",\"params\":{\"w\":0},\"input\":[3,8,8],"
            "\"layers\":[{\"name\":\"r\",\"op\":\"relu\"},"
            "{\"if\":\"w > 0\",\"layers\":[{\"op\":\"conv2d\","
            "\"out\":\"8 / w\",\"kernel\":3}]}]}",
            "t.json", &o, &m, &e) == OOC_OK, "%s", e.msg);
    ooc_model_free(m);
  }
  bad_str("{\"name\":\"x\",\"input\":[3,8,8],\"layers\":["
          "{\"name\":\"r\",\"op\":\"relu\"},"
          "{\"name\":\"@prev\",\"op\":\"relu\"},"
          "{\"name\":\"a\",\"op\":\"add\",\"in\":[\"@prev\",\"r\"]}]}",
          OOC_EINVAL, "t.json: layer '@prev': name: '@prev' starts with '@', "
                      "which \"in\" keeps for @prev and @in");
  bad_str("{\"name\":\"x\",\"input\":[3,8,8],\"layers\":["
          "{\"name\":\"a\",\"op\":\"add\",\"in\":[\"@prev\",\"@in\"]}]}",
          OOC_EINVAL, "layer 'a': in: '@in' is only defined inside a repeat "
                      "or if block");
  bad_str("{\"name\":\"x\",\"input\":[3,8,8],\"layers\":["
          "{\"name\":\"a\",\"op\":\"add\"}]}",
          OOC_EINVAL, "layer 'a': in: add takes at least 2 inputs, got 1");
  bad_str("{\"name\":\"x\",\"input\":[3,8,8],\"layers\":["
          "{\"repeat\":-1,\"var\":\"i\",\"layers\":[]}]}",
          OOC_EINVAL, "t.json: repeat after layer 'input': repeat: -1 must "
                      "be at least 0");
  bad_str("{\"name\":\"x\",\"input\":[3],\"layers\":["
          "{\"repeat\":4096,\"layers\":[{\"repeat\":1000000,\"layers\":[]}]}]}",
          OOC_ERANGE, "t.json: repeat after layer 'input': repeat: the "
                      "layer list expands too far: more than 16777216 repeat "
                      "iterations and list items in all");
  /* A name with a control character (legal JSON, escaped) would reach
   * the terminal as it is in info and the reports; the error does not
   * print it either. */
  bad_str("{\"name\":\"m\\u001b[31m\",\"input\":[3],\"layers\":[]}",
          OOC_EINVAL, "t.json: name: holds control character 0x1b (names "
                      "are printed as they are)");
  bad_str("{\"name\":\"m\",\"input\":[3],\"layers\":[{\"name\":"
          "\"fc\\u0007\",\"op\":\"linear\",\"out\":4}]}",
          OOC_EINVAL, "t.json: layer #1: name: holds control character 0x07 "
                      "(names are printed as they are)");
  /* A repeat of items that emit nothing counts them too: 2^20 iterations
   * of 16 empty ifs would take minutes to expand (a fuzzed model), and
   * fail at the 2^24th item instead, naming the repeat (with 16 items
   * the repeat's own count crosses the cap; with 15, an item of its
   * body). */
  for (int items = 15; items <= 16; items++) {
    char body[16 * 32 + 256];
    int n = snprintf(body, sizeof body, "{\"name\":\"x\",\"input\":[3],"
                     "\"layers\":[{\"repeat\":1048576,\"layers\":[");
    for (int k = 0; k < items; k++)
      n += snprintf(body + n, sizeof body - (size_t)n, "%s{\"if\":\"0\","
                    "\"layers\":[]}", k ? "," : "");
    snprintf(body + n, sizeof body - (size_t)n, "]}]}");
    bad_str(body, OOC_ERANGE, "t.json: repeat after layer 'input': repeat: "
                              "the layer list expands too far: more than "
                              "16777216 repeat iterations and list items in "
                              "all");
  }
  bad_str("{\"name\":\"x\",\"params\":{\"d\":4},\"check\":[[\"d % 3 == 2\","
          "\"d must be 3n+2\"]],\"input\":[3],\"layers\":[]}",
          OOC_EINVAL, "t.json: check: d must be 3n+2 ('d % 3 == 2' is "
                      "false)");
  bad_str("{\"name\":\"x\",\"input\":[3,8,8],\"layers\":["
          "{\"name\":\"s\",\"op\":\"act\",\"act\":\"silu\",\"in_place\":1}]}",
          OOC_EINVAL, "layer 's': in_place: the backward of silu needs its "
                      "input, which an in-place op overwrites");
  bad_str("{\"name\":\"x\",\"input\":[3,8,8],\"layers\":["
          "{\"name\":\"c\",\"op\":\"conv2d\",\"out\":3,\"kernel\":1},"
          "{\"name\":\"s\",\"op\":\"act\",\"act\":\"sigmoid\"},"
          "{\"name\":\"r\",\"op\":\"relu\",\"in_place\":true}]}",
          OOC_EINVAL, "layer 'r': in_place: overwrites the output of 's', "
                      "which its backward needs");
  bad_str("{\"name\":\"x\",\"input\":[3,8,8],\"layers\":["
          "{\"name\":\"c\",\"op\":\"conv2d\",\"out\":3,\"kernel\":1},"
          "{\"name\":\"s\",\"op\":\"act\",\"act\":\"tanh\"},"
          "{\"name\":\"f\",\"op\":\"flatten\"},"
          "{\"name\":\"d\",\"op\":\"dropout\",\"in_place\":true}]}",
          OOC_EINVAL, "layer 'd': in_place: overwrites the output of 's', "
                      "which its backward needs");
  bad_str("{\"name\":\"x\",\"input\":[8],\"layers\":["
          "{\"name\":\"e\",\"op\":\"embedding\",\"vocab\":10,\"out\":12},"
          "{\"name\":\"a\",\"op\":\"attention\",\"heads\":5}]}",
          OOC_EINVAL, "layer 'a': heads: 5 does not divide the hidden size 4");
  bad_str("{\"name\":\"x\",\"input\":[8],\"layers\":["
          "{\"name\":\"e\",\"op\":\"embedding\",\"vocab\":10,\"out\":12,"
          "\"positions\":4}]}",
          OOC_EINVAL, "layer 'e': positions: 4 is less than the sequence "
                      "length 8");
  bad_str("{\"name\":\"x\",\"input\":[3,8,8],\"layers\":["
          "{\"name\":\"r\",\"op\":\"reshape\",\"shape\":[5,-1]}]}",
          OOC_EINVAL, "layer 'r': shape: [5,-1] does not have the 192 "
                      "elements of the input [3,8,8]");
  bad_str("{\"name\":\"x\",\"input\":[3,8,8],\"layers\":["
          "{\"name\":\"r{1/0}\",\"op\":\"relu\"}]}",
          OOC_EINVAL, "t.json: layer 'r{1/0}': name: expression '1/0': "
                      "division by zero");
  bad_str("{\"name\":\"x\",\"input\":[3,8,8],\"layers\":[{\"name\":\"c\","
          "\"op\":\"conv2d\",\"out\":4.5,\"kernel\":3}]}",
          OOC_EINVAL, "layer 'c': out: 4.5 is not an integer");
  bad_str("{\"name\":\"x\",\"input\":[3,8,8],\"layers\":[{\"name\":\"c\","
          "\"op\":\"conv2d\",\"out\":\"9223372036854775807 * 2\","
          "\"kernel\":3}]}",
          OOC_ERANGE, "layer 'c': out: expression '9223372036854775807 * 2': "
                      "integer overflow");
  bad_str("{\"name\":\"x\",\"input\":[3,8,8],\"layers\":[{\"name\":\"d\","
          "\"op\":\"dropout\",\"p\":1.5}]}",
          OOC_EINVAL, "layer 'd': p: 1.5 must be in [0, 1)");
  bad_str("{\"name\":\"x\",\"input\":[3,8,8],\"layers\":["
          "{\"name\":\"c\",\"out\":3}]}",
          OOC_EINVAL, "t.json: layer 'c': op: missing");
  bad_str("{\"name\":\"x\",\"params\":{\"a\":1,\"a\":2},\"input\":[3],"
          "\"layers\":[]}", OOC_EINVAL, "t.json: key 'a' given twice (in 'params')");
  bad_str("{\"name\":\"x\",\"input\":[3,8,8],\"layers\":[\"relu\"]}",
          OOC_EINVAL, "t.json: layer #1: expected an object");
  /* An in-place relu on c, which c2 (a conv, needs its input) also reads:
   * c2's backward would see relu(c) instead of c. Through a flatten too. */
  bad_str("{\"name\":\"x\",\"input\":[3,8,8],\"layers\":["
          "{\"name\":\"c\",\"op\":\"conv2d\",\"out\":4,\"kernel\":3},"
          "{\"name\":\"c2\",\"op\":\"conv2d\",\"out\":4,\"kernel\":1},"
          "{\"name\":\"r\",\"op\":\"relu\",\"in\":\"c\",\"in_place\":true}]}",
          OOC_EINVAL, "t.json: layer 'r': in_place: overwrites the input of "
                      "'c2', which its backward needs");
  bad_str("{\"name\":\"x\",\"input\":[3,8,8],\"layers\":["
          "{\"name\":\"c\",\"op\":\"conv2d\",\"out\":4,\"kernel\":3},"
          "{\"name\":\"f\",\"op\":\"flatten\"},"
          "{\"name\":\"fc\",\"op\":\"linear\",\"out\":3},"
          "{\"name\":\"d\",\"op\":\"dropout\",\"in\":\"c\","
          "\"in_place\":true}]}",
          OOC_EINVAL, "t.json: layer 'd': in_place: overwrites the input of "
                      "'fc', which its backward needs");
  /* ... and the output of a sibling in-place relu on the same memory. */
  bad_str("{\"name\":\"x\",\"input\":[3,8,8],\"layers\":["
          "{\"name\":\"c\",\"op\":\"conv2d\",\"out\":4,\"kernel\":3},"
          "{\"name\":\"b\",\"op\":\"batchnorm\"},"
          "{\"name\":\"r\",\"op\":\"relu\",\"in_place\":true},"
          "{\"name\":\"d\",\"op\":\"dropout\",\"in\":\"b\","
          "\"in_place\":true}]}",
          OOC_EINVAL, "t.json: layer 'd': in_place: overwrites the output of "
                      "'r', which its backward needs");
  /* A control character in a name cannot split the message in two. */
  bad_str("{\"name\":\"x\",\"input\":[3,8,8],\"layers\":["
          "{\"name\":\"a\\nb\",\"op\":\"conv2d\",\"out\":4}]}",
          OOC_EINVAL, "t.json: layer 'a?b': kernel: missing");
  /* A long expression is cut so that the reason still fits the line. */
  {
    char json[4096], ex[1100];
    memset(ex, '(', 500);
    ex[500] = '1';
    memset(ex + 501, ')', 500);
    ex[1001] = '\0';
    snprintf(json, sizeof json, "{\"name\":\"x\",\"input\":[\"%s\"],"
             "\"layers\":[{\"op\":\"relu\"}]}", ex);
    bad_str(json, OOC_EINVAL, "t.json: input: expression '((((((((((");
    bad_str(json, OOC_EINVAL, "(((...': nested too deeply");
  }
}
END_TEST

/* ---- deep models --------------------------------------------------------- */

/* depth 3002: 1000 bottleneck blocks of 10 layers, 4 projection pairs, a
 * stem of 4, a head of 4 and the input = 10017 layers. (Load time is
 * measured by `make bench`, not asserted here.) */
/* SuperNeurons' Alg. 1 on a network shaped like the seed's Fig. 6: two
 * nested fans, b -> {c, d} and, inside d's branch, f -> {g, h}, joined by
 * i (a concat of e, g and h) before j:
 *   a -> b -> c -> e ------------.
 *         `-> d -> f -> g -------+-> i -> j
 *                    `-> h ------'
 * The walk goes depth first: a, b, then b's first consumer c and on to e;
 * e's consumer i has 1 of its 3 inputs and waits; back to b's second
 * consumer d, then f, g (i: 2 of 3), h (i: 3 of 3: i runs), j. So e runs
 * before d, unlike the file's order, and i only after e, g and h. */
START_TEST(test_route_nested_fans)
{
  static const char *json =
    "{ \"name\": \"fig6\", \"input\": [64], \"layers\": ["
    "  { \"name\": \"b\", \"op\": \"relu\" },"
    "  { \"name\": \"c\", \"op\": \"relu\", \"in\": [\"b\"] },"
    "  { \"name\": \"d\", \"op\": \"relu\", \"in\": [\"b\"] },"
    "  { \"name\": \"e\", \"op\": \"relu\", \"in\": [\"c\"] },"
    "  { \"name\": \"f\", \"op\": \"relu\", \"in\": [\"d\"] },"
    "  { \"name\": \"g\", \"op\": \"relu\", \"in\": [\"f\"] },"
    "  { \"name\": \"h\", \"op\": \"relu\", \"in\": [\"f\"] },"
    "  { \"name\": \"i\", \"op\": \"concat\", \"in\": [\"e\", \"g\", \"h\"] },"
    "  { \"name\": \"j\", \"op\": \"relu\", \"in\": [\"i\"] } ] }";
  static const char *const want[] = { "input", "b", "c", "e", "d", "f", "g",
                                      "h", "i", "j" };
  ooc_model_opts mo = { .batch = 2 };
  ooc_model *m = NULL;
  ooc_err err = { 0 };
  int32_t order[16];

  ck_assert_int_eq(ooc_model_load_string(json, "fig6.json", &mo, &m, &err),
                   OOC_OK);
  ck_assert_int_eq(m->n_layers, 10);
  ck_assert_int_eq(ooc_route_construct(m, order, &err), 10);
  for (int k = 0; k < 10; k++)
    ck_assert_str_eq(m->layers[order[k]].name, want[k]);
  /* The counters are reset: the walk gives the same route again. */
  ck_assert_int_eq(ooc_route_construct(m, order, &err), 10);
  ck_assert_str_eq(m->layers[order[3]].name, "e");
  ooc_model_free(m);
}
END_TEST

/* An exact error message of a model string. */
static void
bad_str_eq(const char *json, int code, const char *msg)
{
  ooc_model *m = NULL;
  ooc_err e = { 0 };
  ooc_model_opts o = { .batch = 2 };
  int rc = ooc_model_load_string(json, "t.json", &o, &m, &e);
  ck_assert_int_eq(rc, code);
  ck_assert_ptr_null(m);
  ck_assert_str_eq(e.msg, msg);
}

/* A growing buffer for generated model text. */
struct gen {
  char *s;
  size_t n, cap;
};

static void
gen_add(struct gen *g, const char *fmt, ...)
{
  va_list ap;
  int k;

  for (;;) {
    va_start(ap, fmt);
    k = vsnprintf(g->s + g->n, g->cap - g->n, fmt, ap);
    va_end(ap);
    ck_assert_int_ge(k, 0);
    if ((size_t)k < g->cap - g->n)
      break;
    g->cap = 2 * g->cap + (size_t)k + 64;
    g->s = realloc(g->s, g->cap);
    ck_assert_ptr_nonnull(g->s);
  }
  g->n += (size_t)k;
}

/* 50,000 params and 10,000 lets that use the first and the last of them
 * load (names are hashed, duplicate keys found by sorting: this took
 * minutes while both were quadratic); the repeat variable i shadows the
 * param i inside the repeat only. */
START_TEST(test_many_params)
{
  struct gen g = { .cap = 1 << 20 };
  ooc_model *m;
  int i;

  g.s = malloc(g.cap);
  ck_assert_ptr_nonnull(g.s);
  gen_add(&g, "{\"name\":\"many\",\"input\":[4],\"params\":{\"i\":100");
  for (i = 0; i < 50000; i++)
    gen_add(&g, ",\"p%d\":%d", i, i);
  gen_add(&g, "},\"let\":{");
  for (i = 0; i < 10000; i++)
    gen_add(&g, "%s\"l%d\":\"p0 + p%d + p49999\"", i ? "," : "", i, i);
  gen_add(&g, "},\"layers\":[{\"repeat\":2,\"var\":\"i\",\"layers\":["
              "{\"name\":\"r{i}\",\"op\":\"relu\"}]},"
              "{\"name\":\"after{i}_{l9999}\",\"op\":\"relu\"}]}");
  m = load_str(g.s, 2);
  ck_assert_int_eq(m->n_params, 50001);
  ck_assert_str_eq(m->params[50000].name, "p49999");
  ck_assert_double_eq(m->params[50000].value, 49999);
  layer(m, "r0");
  layer(m, "r1");
  layer(m, "after100_59998");
  ooc_model_free(m);
  free(g.s);
}
END_TEST

/* Repeated names are reported as before the hashing: the first
 * repetition in document order, in a large object too (p50 comes before
 * p3's second definition although "p3" sorts first). */
START_TEST(test_many_params_dups)
{
  struct gen g = { .cap = 1 << 16 };
  int i;

  g.s = malloc(g.cap);
  ck_assert_ptr_nonnull(g.s);
  gen_add(&g, "{\"name\":\"many\",\"input\":[4],\"params\":{");
  for (i = 0; i < 100; i++)
    gen_add(&g, "%s\"p%d\":%d", i ? "," : "", i, i);
  gen_add(&g, ",\"p50\":1,\"p3\":1},\"layers\":[{\"op\":\"relu\"}]}");
  bad_str_eq(g.s, OOC_EINVAL, "t.json: key 'p50' given twice (in 'params')");
  g.n = 0;
  gen_add(&g, "{\"name\":\"many\",\"input\":[4],\"params\":{");
  for (i = 0; i < 100; i++)
    gen_add(&g, "%s\"p%d\":%d", i ? "," : "", i, i);
  gen_add(&g, "},\"let\":{\"q\":1,\"p42\":2},\"layers\":[{\"op\":\"relu\"}]}");
  bad_str_eq(g.s, OOC_EINVAL, "t.json: let: p42: defined twice");
  free(g.s);
}
END_TEST

/* The scope's index follows pushes, pops and its own growth. */
START_TEST(test_expr_scope)
{
  ooc_expr_scope sc;
  ooc_value v;
  ooc_err e = { 0 };
  char names[300][8];
  int i;

  ooc_expr_scope_init(&sc);
  for (i = 0; i < 300; i++) {
    snprintf(names[i], sizeof names[i], "v%d", i);
    ck_assert_int_eq(ooc_expr_scope_push(&sc, names[i], ooc_value_int(i)),
                     OOC_OK);
  }
  ck_assert_int_eq(ooc_expr_scope_push(&sc, "v7", ooc_value_int(-7)),
                   OOC_OK);
  ck_assert_int_eq(ooc_expr_eval_scope("v7 + v299", &sc, &v, &e), OOC_OK);
  ck_assert_int_eq(v.i, 292);
  ck_assert_int_eq(ooc_expr_scope_find(&sc, "v7x", 2), 300);
  ooc_expr_scope_pop_to(&sc, 300);
  ck_assert_int_eq(ooc_expr_eval_scope("v7", &sc, &v, &e), OOC_OK);
  ck_assert_int_eq(v.i, 7);
  ooc_expr_scope_pop_to(&sc, 10);
  ck_assert_int_eq(ooc_expr_scope_find(&sc, "v10", 3), -1);
  ck_assert_int_eq(ooc_expr_eval_scope("v10", &sc, &v, &e), OOC_EINVAL);
  ck_assert_str_eq(e.msg, "expression 'v10': unknown name 'v10'");
  ooc_expr_scope_fini(&sc);
  ooc_expr_scope_fini(&sc);
}
END_TEST

START_TEST(test_deep)
{
  ooc_kv kv = { "depth", "3002" };
  ooc_model_opts o = { .batch = 32, .sets = &kv, .n_sets = 1 };
  ooc_model *m = load_opts(DATA "deep_resnet.json", &o);
  ck_assert_int_eq(m->n_layers, 10017);
  ooc_model_free(m);
}
END_TEST

/* Error messages are one line of UTF-8 whatever the input's bytes: a
 * control character or a byte that is not UTF-8 (Latin-1, a character cut
 * by a length limit, an overlong form, a surrogate) becomes '?', and
 * well-formed characters of two to four bytes are kept. */
START_TEST(test_err_text)
{
  ooc_err err = { 0 };

  ooc_err_set(&err, OOC_EINVAL, "layer '%s': bad", "a\nb\tc\x7f");
  ck_assert_str_eq(err.msg, "layer 'a?b?c?': bad");
  ooc_err_set(&err, OOC_EINVAL, "layer '%s'", "caf\xe9 na\xefve");
  ck_assert_str_eq(err.msg, "layer 'caf? na?ve'");
  ooc_err_set(&err, OOC_EINVAL, "layer '%s'",
              "\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80");
  ck_assert_str_eq(err.msg, "layer '\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80'");
  /* "%.4s" cuts the euro sign after its first byte. */
  ooc_err_set(&err, OOC_EINVAL, "'%.4s'", "abc\xe2\x82\xac");
  ck_assert_str_eq(err.msg, "'abc?'");
  ooc_err_set(&err, OOC_EINVAL, "%s|%s|%s|%s", "\xc0\xaf", "\xed\xa0\x80",
              "\xf4\x90\x80\x80", "\x80");
  ck_assert_str_eq(err.msg, "??|???|????|?");
  ooc_err_set(&err, OOC_EINVAL, "ok");
  ooc_err_prefix(&err, OOC_EINVAL, "file \xff: ");
  ck_assert_str_eq(err.msg, "file ?: ok");
}
END_TEST

static Suite *
model_suite(void)
{
  Suite *s = suite_create("model");
  TCase *t = tcase_create("models");
  TCase *b = tcase_create("bad input");
  TCase *x = tcase_create("expressions");
  TCase *p = tcase_create("deep");

  tcase_add_test(t, test_tiny_cnn);
  tcase_add_test(b, test_err_text);
  tcase_add_test(t, test_optimizer_dtype);
  tcase_add_test(t, test_set);
  tcase_add_test(t, test_set_dependent_param);
  tcase_add_test(t, test_residual);
  tcase_add_test(t, test_add_in_place);
  tcase_add_test(t, test_concat);
  tcase_add_test(t, test_nested_if);
  tcase_add_test(t, test_transformer);
  tcase_add_test(t, test_spatial_ops);
  tcase_add_test(t, test_strided_costs);
  tcase_add_test(t, test_needs);
  tcase_add_test(t, test_framework_ops);
  tcase_add_test(t, test_in_generators);
  tcase_add_test(t, test_flash_attention);
  tcase_add_test(t, test_transformer_ops);
  tcase_add_test(t, test_precision);
  tcase_add_test(t, test_aliases);
  tcase_add_test(t, test_signature);
  tcase_add_test(t, test_op_table);
  suite_add_tcase(s, t);
  tcase_add_test(x, test_expr);
  tcase_add_test(x, test_expr_scope);
  suite_add_tcase(s, x);
  tcase_add_test(b, test_bad_files);
  tcase_add_test(b, test_bad_set);
  tcase_add_test(b, test_bad_strings);
  /* test_bad_strings expands two models to the 2^24-item cap: 2.7 s on
   * an idle 2-core machine, past Check's default 4 s under load (CI's
   * distcheck while another build ran). */
  tcase_set_timeout(b, 60);
  suite_add_tcase(s, b);
  tcase_set_timeout(p, 120);
  tcase_add_test(p, test_deep);
  tcase_add_test(p, test_route_nested_fans);
  tcase_add_test(p, test_many_params);
  tcase_add_test(p, test_many_params_dups);
  suite_add_tcase(s, p);
  return s;
}

int
main(void)
{
  SRunner *sr = srunner_create(model_suite());
  int failed;
  srunner_run_all(sr, CK_NORMAL);
  failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
