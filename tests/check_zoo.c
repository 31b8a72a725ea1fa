/* tests/check_zoo.c — the model zoo in models/ against published
 * parameter counts and forward FLOPs.
 *
 * Every model is loaded through ooc_model_load() at batch 1, exactly as
 * `oocsim info -m NAME` does, and its totals are compared with a figure that
 * does not come from this code base:
 *  - parameter counts: the torchvision / Hugging Face / timm checkpoints
 *    (exact integers), or a layer-by-layer hand count written out in the
 *    model's "_source" where no checkpoint figure exists;
 *  - forward FLOPs: the torchvision model table's "GFLOPS" column, which
 *    counts the multiply-adds of convolutions and linear layers (so it is
 *    compared with 2 x that sum here, FLOPs counting a multiply-add as 2),
 *    and Kaplan et al. 2020 (Table 1) for the transformer's GEMMs.
 * The issue asks for 0.5%, or 2% where the reference itself varies (rounded
 * to two digits, or differing between counters).
 *
 * Owned by the zoo. Each case loads a few models; the whole suite loads
 * about 20 (ResNet-3002 has 10,017 layers) and runs in well under a second.
 */
#include "config.h"

#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ir/model.h"
#include "base/util.h"

#define MODELS OOC_SRCDIR "/models/"

/* Load models/NAME.json at batch 1 with optional --set overrides; fails the
 * test with the loader's message if it does not load. */
static ooc_model *
load_set(const char *name, const ooc_kv *sets, int n_sets)
{
  char path[1024];
  ooc_model_opts o = { .batch = 1, .optimizer = OOC_OPT_SGD_MOMENTUM,
                       .sets = sets, .n_sets = n_sets };
  ooc_model *m = NULL;
  ooc_err err = { 0 };
  int rc;

  snprintf(path, sizeof path, MODELS "%s.json", name);
  rc = ooc_model_load(path, &o, &m, &err);
  ck_assert_msg(rc == OOC_OK, "%s: load failed (%d): %s", name, rc, err.msg);
  ck_assert_ptr_nonnull(m);
  return m;
}

static ooc_model *
load(const char *name)
{
  return load_set(name, NULL, 0);
}

/* Loading must fail with code `want` and a message containing `needle`. */
static void
load_fails(const char *name, const ooc_kv *sets, int n_sets, int want,
           const char *needle)
{
  char path[1024];
  ooc_model_opts o = { .batch = 1, .sets = sets, .n_sets = n_sets };
  ooc_model *m = NULL;
  ooc_err err = { 0 };
  int rc;

  snprintf(path, sizeof path, MODELS "%s.json", name);
  rc = ooc_model_load(path, &o, &m, &err);
  ck_assert_msg(rc == want, "%s: expected %d, got %d (%s)", name, want, rc,
                err.msg);
  ck_assert_ptr_null(m);
  ck_assert_msg(strstr(err.msg, needle) != NULL,
                "%s: message '%s' does not mention '%s'", name, err.msg,
                needle);
}

/* |got - ref| <= tol * ref */
static void
assert_near(const char *what, double got, double ref, double tol)
{
  ck_assert_msg(fabs(got - ref) <= tol * ref,
                "%s: got %.6g, reference %.6g (off by %.3f%%, allowed %.1f%%)",
                what, got, ref, 100.0 * (got - ref) / ref, 100.0 * tol);
}

/* Forward FLOPs of the convolutions and linear layers (what the torchvision
 * table counts, as 2 x multiply-adds; bias additions are included and are
 * below 0.1% for every model here). */
static double
gemm_flops(const ooc_model *m)
{
  double f = 0;
  int i;
  for (i = 0; i < m->n_layers; i++) {
    ooc_op_kind k = m->layers[i].op;
    if (k == OOC_OPK_CONV2D || k == OOC_OPK_CONV3D || k == OOC_OPK_DECONV2D ||
        k == OOC_OPK_LINEAR)
      f += m->layers[i].fwd_flops;
  }
  return f;
}

static const ooc_layer *
layer(const ooc_model *m, const char *name)
{
  int i = ooc_model_find_layer(m, name);
  ck_assert_msg(i >= 0, "%s: no layer '%s'", m->name, name);
  return &m->layers[i];
}

static void
assert_shape(const ooc_layer *l, int ndim, const int64_t *d)
{
  int i;
  ck_assert_msg(l->out.ndim == ndim, "%s: rank %d, want %d", l->name,
                l->out.ndim, ndim);
  for (i = 0; i < ndim; i++)
    ck_assert_msg(l->out.d[i] == d[i], "%s: dim %d is %lld, want %lld",
                  l->name, i, (long long)l->out.d[i], (long long)d[i]);
}

/* ---- parameter counts ---------------------------------------------------- */

struct ref_params {
  const char *name;
  uint64_t params;
};

/* Exact counts of the reference checkpoints (torchvision.models.* with
 * 1000 classes; Hugging Face "gpt2" with the LM head tied to wte). Our
 * layers are the same, so the counts agree to the parameter. */
static const struct ref_params exact_refs[] = {
  { "alexnet", 61100840 },      /* torchvision alexnet */
  { "alexnet_caffe", 60965224 }, /* BVLC bvlc_alexnet (two-tower groups) */
  { "vgg16", 138357544 },       /* torchvision vgg16 (Simonyan Table 2: 138M) */
  { "resnet50", 25557032 },     /* torchvision resnet50 */
  { "resnet101", 44549160 },    /* torchvision resnet101 */
  { "resnet152", 60192808 },    /* torchvision resnet152 */
  { "densenet121", 7978856 },   /* torchvision densenet121 */
  { "gpt2", 124439808 },        /* Hugging Face gpt2 (124M, tied head) */
  { "gpt2_medium", 354823168 }, /* Hugging Face gpt2-medium (tied head) */
  { "gpt2_xl", 1557611200 },    /* Hugging Face gpt2-xl (tied head) */
  { "bert_large", 335174458 },  /* Hugging Face bert-large-uncased
                                   BertForMaskedLM */
  { "vit_b16", 86567656 },      /* torchvision vit_b_16 */
  { "llama2_7b", 6738415616 },  /* Hugging Face meta-llama/Llama-2-7b-hf */
};

START_TEST(test_params_exact)
{
  const struct ref_params *r = &exact_refs[_i];
  ooc_model *m = load(r->name);
  /* The tolerance is 0.5%; the layers are the reference's, so the
   * count must match exactly. */
  assert_near(r->name, (double)m->total_params, (double)r->params, 0.005);
  ck_assert_msg(m->total_params == r->params, "%s: %llu params, want %llu",
                r->name, (unsigned long long)m->total_params,
                (unsigned long long)r->params);
  ooc_model_free(m);
}
END_TEST

START_TEST(test_params_inception_v4)
{
  /* ~42.68M: timm / Cadene pretrainedmodels inception_v4 (the paper gives
   * no count; the OpenVINO TF graph, whose BN has no scale, lists 42.648M).
   * 2% since the reference varies. */
  ooc_model *m = load("inception_v4");
  assert_near("inception_v4 params", (double)m->total_params, 42.68e6, 0.02);
  ooc_model_free(m);
}
END_TEST

START_TEST(test_params_hand_counted)
{
  ooc_model *m;

  /* U-Net, width 64, depth 4, 1 input channel, 2 classes: encoder
   * 4,684,224 + bottom 14,157,824 + decoder 12,188,480 + 1x1 out 130 =
   * 31,030,658 (all convolutions with bias; see unet.json _source). */
  m = load("unet");
  ck_assert_uint_eq(m->total_params, 31030658);
  ooc_model_free(m);

  /* DeepLabv3+ with 21 classes: ResNet-101 without fc 42,500,160 (44,549,160
   * - 2,049,000) + ASPP 15,535,104 + decoder 1,303,648 + classifier 5,397 =
   * 59,344,309; within the 58-60M usually quoted for ResNet-101 DeepLabv3+. */
  m = load("deeplabv3plus");
  ck_assert_uint_eq(m->total_params, 59344309);
  ooc_model_free(m);

  /* 3D ResNeXt-101 32x4d, 400 classes (Kinetics): stem 65,984 + stages
   * 233,472 + 1,344,512 + 29,562,880 + 16,314,368 + fc 819,600 =
   * 48,340,816 (hand count, block by block, in resnext101_3d.json). */
  m = load("resnext101_3d");
  ck_assert_uint_eq(m->total_params, 48340816);
  ooc_model_free(m);
}
END_TEST

/* ---- forward FLOPs -------------------------------------------------------- */

struct ref_flops {
  const char *name;
  double gmacs;  /* reference multiply-adds per sample, 1e9 */
  double tol;
};

/* torchvision model table ("GFLOPS" column = GMACs of conv + linear, 224x224
 * input); inception_v4 from timm's model card (12.3 GMACs at 299x299). */
static const struct ref_flops flop_refs[] = {
  { "alexnet", 0.71, 0.02 },     /* given to 2 digits: 0.714 is 0.6% off */
  { "vgg16", 15.47, 0.005 },
  { "resnet50", 4.09, 0.005 },
  { "resnet101", 7.80, 0.005 },
  { "resnet152", 11.51, 0.005 },
  { "densenet121", 2.83, 0.005 },
  { "inception_v4", 12.3, 0.02 },
};

START_TEST(test_gemm_flops)
{
  const struct ref_flops *r = &flop_refs[_i];
  ooc_model *m = load(r->name);
  char what[64];
  snprintf(what, sizeof what, "%s conv+linear FLOPs", r->name);
  assert_near(what, gemm_flops(m), 2e9 * r->gmacs, r->tol);
  ooc_model_free(m);
}
END_TEST

START_TEST(test_total_flops)
{
  /* The whole forward, normalisation, activations and pooling included,
   * against the same references at 2%: ResNet-50 ~4.1 GMACs = ~8.2 GFLOPs
   * (the figure), VGG-16 ~15.5 GMACs, AlexNet ~0.71 GMACs. (DenseNet
   * is left out: its BN and ReLU over the growing concatenations add 2.3%.) */
  static const struct ref_flops tot[] = {
    { "resnet50", 4.09, 0.02 }, { "vgg16", 15.47, 0.02 },
    { "alexnet", 0.71, 0.02 },
  };
  size_t i;
  for (i = 0; i < sizeof tot / sizeof tot[0]; i++) {
    ooc_model *m = load(tot[i].name);
    char what[64];
    snprintf(what, sizeof what, "%s forward FLOPs", tot[i].name);
    assert_near(what, m->fwd_flops, 2e9 * tot[i].gmacs, tot[i].tol);
    ck_assert(m->fwd_flops >= gemm_flops(m));
    ooc_model_free(m);
  }
}
END_TEST

START_TEST(test_gpt2_flops)
{
  /* Kaplan et al. 2020, Table 1: forward GEMM FLOPs per token are
   * 2 x (QKV 3H^2 + proj H^2 + MLP 8H^2) per layer + 2 x H x vocab for the
   * (tied) LM head: 2 x 1024 x (12 x 12 x 768^2 + 768 x 50257) =
   * 252,993,601,536 per sequence (bias additions add 0.13%). The attention
   * core adds at least 4 S^2 H per layer (QK^T and PV). */
  ooc_model *m = load("gpt2");
  double s = 1024, h = 768;
  assert_near("gpt2 GEMM FLOPs", gemm_flops(m), 252993601536.0, 0.005);
  ck_assert(m->fwd_flops >= gemm_flops(m) + 12 * 4 * s * s * h);
  ck_assert(m->fwd_flops <= 1.2 * (gemm_flops(m) + 12 * 4 * s * s * h));
  ooc_model_free(m);
}
END_TEST

/* The transformer zoo's forward FLOPs against published counts:
 * - llama2_7b: 2 x the linear layers' parameters per token (Kaplan et
 *   al. 2020, Table 1): 2 x (32 x (4 x 4096^2 + 3 x 4096 x 11008) +
 *   4096 x 32000) = 13,212,155,904 per token, x 4096 tokens; the
 *   attention core adds 4 S^2 H per layer (QK^T, PV);
 * - bert_large: 2 x (24 x 12 H^2 + H^2 (MLM dense) + H x vocab) per
 *   token at H = 1024, x 512 (biases add 0.1%);
 * - vit_b16: torchvision's 17.56 GFLOPS counts multiply-adds of the
 *   convolution, the linear layers and the attention matmuls: 2 x that
 *   within 0.5% of ours for those three;
 * - gpt2_xl: as gpt2, 2 x 1024 x (48 x 12 x 1600^2 + 1600 x 50257). */
START_TEST(test_transformer_zoo_flops)
{
  ooc_model *m = load("llama2_7b");
  double s = 4096, h = 4096, att = 0;
  int i;
  assert_near("llama2_7b GEMM FLOPs", gemm_flops(m),
              13212155904.0 * 4096, 0.005);
  for (i = 0; i < m->n_layers; i++)
    if (m->layers[i].op == OOC_OPK_ATTENTION)
      att += m->layers[i].fwd_flops;
  ck_assert(att >= 32 * 4 * s * s * h);
  ck_assert(att <= 1.01 * 32 * 4 * s * s * h);
  ck_assert_int_eq(layer(m, "l0_attn")->a.flash, 1);   /* flash default */
  assert_shape(layer(m, "l0_swiglu"), 2, (const int64_t[]){ 4096, 11008 });
  ooc_model_free(m);

  m = load("bert_large");
  assert_near("bert_large GEMM FLOPs", gemm_flops(m),
              2.0 * 512 * (24 * 12 * 1024.0 * 1024 + 1024.0 * 1024 +
                           1024.0 * 30522), 0.005);
  ooc_model_free(m);

  m = load("vit_b16");
  att = 0;
  for (i = 0; i < m->n_layers; i++)
    if (m->layers[i].op == OOC_OPK_ATTENTION)
      att += 4.0 * 197 * 197 * 768;      /* its matmuls, not the softmax */
  assert_near("vit_b16 FLOPs", gemm_flops(m) + att, 2 * 17.56e9, 0.005);
  assert_shape(layer(m, "cls_pos"), 2, (const int64_t[]){ 197, 768 });
  ooc_model_free(m);

  m = load("gpt2_xl");
  assert_near("gpt2_xl GEMM FLOPs", gemm_flops(m),
              2.0 * 1024 * (48 * 12 * 1600.0 * 1600 + 1600.0 * 50257), 0.005);
  ooc_model_free(m);
}
END_TEST

/* Every transformer of the zoo takes --set attention=eager|flash: flash
 * keeps 4 B per row and head where eager keeps the softmax. Llama 2 with
 * grouped-query attention (kv_heads 8, as the 70B model has) packs fewer
 * key/value columns: 4096 + 2 x 8 x 128 = 6144, and has 4096 x 3072 x 2
 * fewer parameters per layer. */
START_TEST(test_transformer_zoo_attention)
{
  static const char *const names[] = { "gpt2", "gpt2_medium", "gpt2_xl",
                                       "bert_large", "vit_b16",
                                       "llama2_7b" };
  ooc_kv eager = { .key = "attention", .value = "eager" },
         flash = { .key = "attention", .value = "flash" },
         gqa = { .key = "kv_heads", .value = "8" };
  size_t i;
  for (i = 0; i < sizeof names / sizeof names[0]; i++) {
    ooc_model *a = load_set(names[i], &eager, 1);
    ooc_model *b = load_set(names[i], &flash, 1);
    int j, n = 0;
    for (j = 0; j < a->n_layers; j++)
      if (a->layers[j].op == OOC_OPK_ATTENTION) {
        const ooc_layer *la = &a->layers[j], *lb = &b->layers[j];
        int64_t rows = lb->out.d[0];
        ck_assert_int_eq(la->a.flash, 0);
        ck_assert_int_eq(lb->a.flash, 1);
        ck_assert_uint_eq(la->saved_bytes,
                          (uint64_t)(la->a.heads * rows * rows * 4));
        ck_assert_uint_eq(lb->saved_bytes, (uint64_t)(lb->a.heads * rows * 4));
        n++;
      }
    ck_assert_msg(n > 0, "%s has no attention", names[i]);
    ck_assert_uint_eq(a->total_params, b->total_params);
    ck_assert(b->activation_bytes < a->activation_bytes);
    ooc_model_free(a);
    ooc_model_free(b);
  }
  {
    ooc_model *m = load_set("llama2_7b", &gqa, 1);
    assert_shape(layer(m, "l0_qkv"), 2, (const int64_t[]){ 4096, 6144 });
    ck_assert_int_eq(layer(m, "l0_attn")->a.kv_heads, 8);
    ck_assert_uint_eq(m->total_params,
                      6738415616ULL - 32ULL * 4096 * 3072 * 2);
    ooc_model_free(m);
  }
}
END_TEST

/* ---- parametric models ---------------------------------------------------- */

START_TEST(test_resnet_depth)
{
  static const struct { const char *depth, *fixed; } eq[] = {
    { "50", "resnet50" }, { "101", "resnet101" }, { "152", "resnet152" },
  };
  size_t i;
  for (i = 0; i < sizeof eq / sizeof eq[0]; i++) {
    ooc_kv kv = { .key = "depth", .value = eq[i].depth };
    ooc_model *a = load_set("resnet", &kv, 1), *b = load(eq[i].fixed);
    ck_assert_uint_eq(a->total_params, b->total_params);
    ck_assert_int_eq(a->n_layers, b->n_layers);
    ck_assert(a->fwd_flops == b->fwd_flops);
    ck_assert_uint_eq(a->activation_bytes, b->activation_bytes);
    ooc_model_free(a);
    ooc_model_free(b);
  }
}
END_TEST

START_TEST(test_resnet_deep)
{
  ooc_kv kv = { .key = "depth", .value = "1001" };
  ooc_model *m = load_set("resnet", &kv, 1);
  /* n = 333 blocks as 3-8-319-3: 10 layers a block, 2 more for each of the
   * 4 projections, 4 stem layers + the input, 4 in the head. */
  ck_assert_int_eq(m->n_layers, 333 * 10 + 8 + 5 + 4);
  ck_assert_uint_gt(m->total_params, 300000000);
  ooc_model_free(m);

  kv.value = "3002";
  m = load_set("resnet", &kv, 1);
  ck_assert_int_eq(m->n_layers, 1000 * 10 + 8 + 5 + 4); /* 10,017 */
  layer(m, "res4_985_relu"); /* stage 3 has 986 blocks */
  ck_assert_int_eq(ooc_model_find_layer(m, "res4_986_relu"), -1);
  ooc_model_free(m);

  kv.value = "51";
  load_fails("resnet", &kv, 1, OOC_EINVAL, "3n+2");
  kv.value = "32";
  load_fails("resnet", &kv, 1, OOC_EINVAL, "at least 35");
}
END_TEST

START_TEST(test_image_size)
{
  /* --set image=512 scales every feature map by (512/224)^2 = 5.2245 (the
   * classifier's few activations do not scale) and leaves the weights
   * alone: global pooling makes the classifier independent of the size. */
  ooc_kv kv = { .key = "image", .value = "512" };
  ooc_model *a = load("resnet50"), *b = load_set("resnet50", &kv, 1);
  double r = (double)b->activation_bytes / (double)a->activation_bytes;
  ck_assert_uint_eq(a->total_params, b->total_params);
  ck_assert_msg(r > 5.1 && r <= 5.2245, "activation ratio %.4f", r);
  ck_assert(b->fwd_flops > 5.1 * a->fwd_flops);
  ooc_model_free(a);
  ooc_model_free(b);

  /* AlexNet and VGG-16 keep torchvision's adaptive average pool, so their
   * classifiers keep their size too. */
  a = load_set("vgg16", &kv, 1);
  ck_assert_uint_eq(a->total_params, 138357544);
  assert_shape(layer(a, "avgpool"), 3, (const int64_t[]){ 512, 7, 7 });
  ooc_model_free(a);
  a = load_set("alexnet", &kv, 1);
  ck_assert_uint_eq(a->total_params, 61100840);
  assert_shape(layer(a, "avgpool"), 3, (const int64_t[]){ 256, 6, 6 });
  ooc_model_free(a);
}
END_TEST

START_TEST(test_densenet_growth)
{
  ooc_model *m = load("densenet121");
  /* 64 + 6x32 = 256 -> 128; 128 + 12x32 = 512 -> 256; 256 + 24x32 = 1024 ->
   * 512; 512 + 16x32 = 1024 at 7x7 (Huang et al., Table 1). */
  assert_shape(layer(m, "block1_6_concat"), 3, (const int64_t[]){ 256, 56, 56 });
  assert_shape(layer(m, "trans1_pool"), 3, (const int64_t[]){ 128, 28, 28 });
  assert_shape(layer(m, "block3_24_concat"), 3, (const int64_t[]){ 1024, 14, 14 });
  assert_shape(layer(m, "block4_16_concat"), 3, (const int64_t[]){ 1024, 7, 7 });
  ooc_model_free(m);
}
END_TEST

START_TEST(test_segmentation)
{
  ooc_model *m = load("deeplabv3plus");
  const ooc_layer *l;
  /* Output stride 16: the last stage stays at 512/16 = 32 with dilation 2. */
  assert_shape(layer(m, "res5_2_relu"), 3, (const int64_t[]){ 2048, 32, 32 });
  l = layer(m, "aspp_b3");
  ck_assert_int_eq(l->a.dilation[0], 18);
  assert_shape(l, 3, (const int64_t[]){ 256, 32, 32 });
  assert_shape(layer(m, "aspp_cat"), 3, (const int64_t[]){ 1280, 32, 32 });
  assert_shape(layer(m, "dec_cat"), 3, (const int64_t[]){ 304, 128, 128 });
  assert_shape(layer(m, "up"), 3, (const int64_t[]){ 21, 512, 512 });
  ooc_model_free(m);

  /* At 513 x 513, as frameworks train it: convolutions and pooling floor
   * (257, 129, 65, 33), and each upsample takes the size of the map it
   * joins: ASPP's image pooling back to 33, the decoder to the low-level
   * 129, the classifier to the input's 513. */
  {
    const ooc_kv s513[] = { { "image", "513" } };
    m = load_set("deeplabv3plus", s513, 1);
    assert_shape(layer(m, "conv1"), 3, (const int64_t[]){ 64, 257, 257 });
    assert_shape(layer(m, "res2_2_relu"), 3,
                 (const int64_t[]){ 256, 129, 129 });
    assert_shape(layer(m, "res5_2_relu"), 3,
                 (const int64_t[]){ 2048, 33, 33 });
    assert_shape(layer(m, "aspp_pool_up"), 3,
                 (const int64_t[]){ 256, 33, 33 });
    assert_shape(layer(m, "dec_cat"), 3, (const int64_t[]){ 304, 129, 129 });
    assert_shape(layer(m, "up"), 3, (const int64_t[]){ 21, 513, 513 });
    ck_assert_uint_eq(m->total_params, 59344309);
    ooc_model_free(m);
  }

  m = load("unet");
  assert_shape(layer(m, "mid_relu2"), 3, (const int64_t[]){ 1024, 32, 32 });
  assert_shape(layer(m, "cat1"), 3, (const int64_t[]){ 128, 512, 512 });
  assert_shape(layer(m, "out_conv"), 3, (const int64_t[]){ 2, 512, 512 });
  ooc_model_free(m);

  {
    ooc_kv kv[2] = { { .key = "depth", .value = "5" },
                     { .key = "width", .value = "32" } };
    m = load_set("unet", kv, 2);
    /* Per level l of width w_l = 32 x 2^l: two 3x3 convs (9 cin w_l + w_l
     * each) down, a 2x2 up-conv (4 x 2w_l x w_l + w_l) and two 3x3 convs
     * (from 2w_l) up; bottom level w_5 = 1024; 1x1 out: 31,093,954. */
    ck_assert_uint_eq(m->total_params, 31093954);
    assert_shape(layer(m, "mid_relu2"), 3, (const int64_t[]){ 1024, 16, 16 });
    ooc_model_free(m);
    kv[0].value = "4";
    kv[1].key = "image";
    kv[1].value = "500";
    load_fails("unet", kv, 2, OOC_EINVAL, "multiple of 2^depth");
  }
}
END_TEST

START_TEST(test_video)
{
  ooc_kv kv[2] = { { .key = "frames", .value = "32" },
                   { .key = "image", .value = "224" } };
  ooc_model *a = load("resnext101_3d"), *b;
  const ooc_layer *l = layer(a, "res2_0_conv2");
  ck_assert_int_eq(l->op, OOC_OPK_CONV3D);
  ck_assert_int_eq(l->a.groups, 32);
  assert_shape(l, 4, (const int64_t[]){ 128, 8, 28, 28 });
  assert_shape(layer(a, "res5_2_relu"), 4, (const int64_t[]){ 2048, 1, 4, 4 });
  /* 32 x 4d: the grouped 3x3x3 conv has 128 x 4 x 27 weights. */
  ck_assert_uint_eq(l->params, 128 * 4 * 27);

  b = load_set("resnext101_3d", kv, 2);
  ck_assert_uint_eq(a->total_params, b->total_params);
  /* Twice the frames and (224/112)^2 the pixels: ~8x the activations. */
  ck_assert(b->activation_bytes > 7 * a->activation_bytes);
  ooc_model_free(a);
  ooc_model_free(b);
}
END_TEST

START_TEST(test_gpt2_sizes)
{
  /* Hugging Face gpt2-medium and gpt2-large (tied heads). */
  ooc_kv med[3] = { { .key = "layers", .value = "24" },
                    { .key = "hidden", .value = "1024" },
                    { .key = "heads", .value = "16" } };
  ooc_kv large[3] = { { .key = "layers", .value = "36" },
                      { .key = "hidden", .value = "1280" },
                      { .key = "heads", .value = "20" } };
  ooc_kv seq = { .key = "seq", .value = "2048" };
  ooc_model *m = load_set("gpt2", med, 3);
  ck_assert_uint_eq(m->total_params, 354823168);
  ooc_model_free(m);
  m = load_set("gpt2", large, 3);
  ck_assert_uint_eq(m->total_params, 774030080);
  ooc_model_free(m);

  /* A longer sequence adds position rows: 1024 x 768 more parameters. */
  m = load_set("gpt2", &seq, 1);
  ck_assert_uint_eq(m->total_params, 124439808 + 1024 * 768);
  assert_shape(layer(m, "h11_attn"), 2, (const int64_t[]){ 2048, 768 });
  ck_assert_uint_eq(layer(m, "lm_head")->params, 0);
  ooc_model_free(m);
}
END_TEST

START_TEST(test_every_model_loads)
{
  /* Every file in models/ loads at its defaults (a new model must too). */
  static const char *const all[] = {
    "alexnet", "vgg16", "resnet50", "resnet101", "resnet152", "resnet",
    "densenet121", "inception_v4", "unet", "deeplabv3plus", "resnext101_3d",
    "gpt2", "alexnet_caffe", "gpt2_medium", "gpt2_xl", "bert_large",
    "vit_b16", "llama2_7b",
  };
  char **names = NULL;
  int n = 0, i;
  ooc_err err = { 0 };
  size_t k;

  ck_assert_int_eq(ooc_data_list("models", &names, &n, &err), OOC_OK);
  for (k = 0; k < sizeof all / sizeof all[0]; k++) {
    int found = 0;
    for (i = 0; i < n; i++)
      found |= strcmp(names[i], all[k]) == 0;
    ck_assert_msg(found, "models/%s.json is not listed", all[k]);
  }
  for (i = 0; i < n; i++) {
    ooc_model *m = load(names[i]);
    ck_assert_uint_gt(m->total_params, 0);
    ck_assert(m->fwd_flops > 0);
    ooc_model_free(m);
  }
  ooc_data_list_free(names, n);
}
END_TEST

static Suite *
zoo_suite(void)
{
  Suite *s = suite_create("zoo");
  TCase *tc;

  tc = tcase_create("params");
  tcase_add_loop_test(tc, test_params_exact, 0,
                      (int)(sizeof exact_refs / sizeof exact_refs[0]));
  tcase_add_test(tc, test_params_inception_v4);
  tcase_add_test(tc, test_params_hand_counted);
  suite_add_tcase(s, tc);

  tc = tcase_create("flops");
  tcase_add_loop_test(tc, test_gemm_flops, 0,
                      (int)(sizeof flop_refs / sizeof flop_refs[0]));
  tcase_add_test(tc, test_total_flops);
  tcase_add_test(tc, test_gpt2_flops);
  tcase_add_test(tc, test_transformer_zoo_flops);
  tcase_add_test(tc, test_transformer_zoo_attention);
  suite_add_tcase(s, tc);

  tc = tcase_create("parametric");
  tcase_set_timeout(tc, 60);
  tcase_add_test(tc, test_resnet_depth);
  tcase_add_test(tc, test_resnet_deep);
  tcase_add_test(tc, test_image_size);
  tcase_add_test(tc, test_densenet_growth);
  tcase_add_test(tc, test_segmentation);
  tcase_add_test(tc, test_video);
  tcase_add_test(tc, test_gpt2_sizes);
  tcase_add_test(tc, test_every_model_loads);
  suite_add_tcase(s, tc);
  return s;
}

int
main(void)
{
  SRunner *sr = srunner_create(zoo_suite());
  int failed;
  srunner_run_all(sr, CK_NORMAL);
  failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
