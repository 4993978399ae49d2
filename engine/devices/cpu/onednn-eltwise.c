/* clinfer — the oneDNN fast path's element-wise ops on the blocked layout:
 * unary activations and arithmetic with a scalar constant (eltwise, with
 * an optional second eltwise in place), Add/Sub/Mul/Div of two
 * activations or of an activation and a broadcast constant (binary),
 * average / global pooling and nearest Resize by whole factors
 * (resampling). Which nodes they take and the primitives they build. */
#include "devices/cpu/onednn-internal.h"
#include "ops/conv.h"
#include "ops/resize.h"
#include <math.h>
#include <omp.h>
#include <string.h>

/* Per-channel and upsample-add steps of at least this many bytes split
 * between the threads. */
#define BINARY_SPLIT_BYTES (64 * 1024)
#include <stdlib.h>

static gboolean
is_op (const ClinferNode *node, const char *op_type)
{
  return clinfer_node_is_builtin_op (node, "", op_type);
}

static gboolean
is_f32_4d (const ClinferPortDesc *d)
{
  return d && d->type == CLINFER_TYPE_F32 && d->shape.rank == 4
      && clinfer_shape_is_static (&d->shape);
}

static gboolean
activation_slot (const ClinferPlan *plan, guint slot)
{
  ClinferSlotKind k;

  if (slot == G_MAXUINT)
    return FALSE;
  k = g_array_index (plan->slots, ClinferSlot, slot).kind;
  return k == CLINFER_SLOT_ARENA || k == CLINFER_SLOT_INPUT;
}

/* Clip's bounds: inputs 1 and 2 (opset 11+) or the min/max attributes;
 * an absent bound is unbounded. */
static gboolean
clip_bounds (const ClinferNode *node, float *lo, float *hi)
{
  *lo = -INFINITY;
  *hi = INFINITY;
  if (node->n_inputs > 1 && node->inputs[1].node && !clinfer_op_scalar_f32_input (node, 1, lo))
    return FALSE;
  if (node->n_inputs > 2 && node->inputs[2].node && !clinfer_op_scalar_f32_input (node, 2, hi))
    return FALSE;
  if (node->n_inputs == 1
      && (!clinfer_node_attr_float (node, "min", -INFINITY, lo, NULL)
          || !clinfer_node_attr_float (node, "max", INFINITY, hi, NULL)))
    return FALSE;
  return !isnan (*lo) && !isnan (*hi);
}

/* Unary element-wise ops, and arithmetic of an activation with a scalar
 * constant, as one or two eltwise algorithms (the second in place). */
gboolean
clinfer_onednn_eltwise_spec (const ClinferNode *node, OnednnEltwise *e,
    guint *src_input)
{
  float c, alpha;

  memset (e, 0, sizeof (*e));
  *src_input = 0;
  if (is_op (node, "Relu")) {
    e->alg = dnnl_eltwise_relu;
  } else if (is_op (node, "LeakyRelu")) {
    e->alg = dnnl_eltwise_relu;
    if (!clinfer_node_attr_float (node, "alpha", 0.01f, &e->alpha, NULL))
      return FALSE;
  } else if (is_op (node, "Sigmoid")) {
    e->alg = dnnl_eltwise_logistic;
  } else if (is_op (node, "Tanh")) {
    e->alg = dnnl_eltwise_tanh;
  } else if (is_op (node, "HardSwish")) {
    e->alg = dnnl_eltwise_hardswish;
  } else if (clinfer_node_is_builtin_op (node, "com.clinfer", "Swish")) {
    /* x * sigmoid (alpha x) */
    e->alg = dnnl_eltwise_swish;
    e->alpha = 1.f;
  } else if (is_op (node, "HardSigmoid")) {
    /* max (0, min (1, alpha x + beta)): linear, then clip in place */
    e->alg = dnnl_eltwise_linear;
    if (!clinfer_node_attr_float (node, "alpha", 0.2f, &e->alpha, NULL)
        || !clinfer_node_attr_float (node, "beta", 0.5f, &e->beta, NULL))
      return FALSE;
    e->alg2 = dnnl_eltwise_clip_v2;
    e->alpha2 = 0.f;
    e->beta2 = 1.f;
  } else if (is_op (node, "Clip")) {
    e->alg = dnnl_eltwise_clip_v2;
    if (!clip_bounds (node, &e->alpha, &e->beta))
      return FALSE;
  } else if (node->n_inputs == 2 && (is_op (node, "Add") || is_op (node, "Sub")
          || is_op (node, "Mul") || is_op (node, "Div"))) {
    gboolean first = clinfer_op_scalar_f32_input (node, 0, &c);
    if (!first && !clinfer_op_scalar_f32_input (node, 1, &c))
      return FALSE;
    *src_input = first ? 1 : 0;
    e->alg = dnnl_eltwise_linear;
    alpha = 1.f;
    if (is_op (node, "Add"))
      e->beta = c;
    else if (is_op (node, "Sub")) {
      alpha = first ? -1.f : 1.f;
      e->beta = first ? c : -c;
    } else if (is_op (node, "Mul"))
      alpha = c;
    else if (first || c == 0.f)
      return FALSE;            /* c / x has no eltwise form */
    else
      alpha = 1.f / c;
    e->alpha = alpha;
  } else {
    return FALSE;
  }
  return TRUE;
}

/* Add/Sub/Mul/Div where output and the first operand have one 4-D shape
 * (Add and Mul swap their operands to get there) and the other operand
 * broadcasts to it: a run-time activation, or a constant of at most 4
 * dims. */
static gboolean
binary_spec (const ClinferPlan *plan, const ClinferStep *st,
    dnnl_alg_kind_t *alg, guint *src_input, guint *other_input)
{
  const ClinferNode *node = st->node;
  const ClinferShape *y = &node->outputs[0].shape;
  gboolean commutes = is_op (node, "Add") || is_op (node, "Mul");
  ClinferPortDesc *a, *b;

  if (node->n_inputs != 2)
    return FALSE;
  if (is_op (node, "Add"))
    *alg = dnnl_binary_add;
  else if (is_op (node, "Sub"))
    *alg = dnnl_binary_sub;
  else if (is_op (node, "Mul"))
    *alg = dnnl_binary_mul;
  else if (is_op (node, "Div"))
    *alg = dnnl_binary_div;
  else
    return FALSE;
  *src_input = 0;
  *other_input = 1;
  a = clinfer_node_input_desc (node, 0);
  b = clinfer_node_input_desc (node, 1);
  if (a == NULL || b == NULL || !is_f32_4d (&node->outputs[0]))
    return FALSE;
  if (!(is_f32_4d (a) && a->value == NULL && clinfer_shape_equal (&a->shape, y)
          && activation_slot (plan, st->in_slots[0]))) {
    if (!commutes)
      return FALSE;
    *src_input = 1;
    *other_input = 0;
    a = b;
    b = clinfer_node_input_desc (node, 0);
    if (!(is_f32_4d (a) && a->value == NULL
            && clinfer_shape_equal (&a->shape, y)
            && activation_slot (plan, st->in_slots[1])))
      return FALSE;
  }
  if (b->type != CLINFER_TYPE_F32 || !clinfer_shape_is_static (&b->shape)
      || b->shape.rank > 4)
    return FALSE;
  if (b->value == NULL
      && (b->shape.rank != 4 || !activation_slot (plan, st->in_slots[*other_input])))
    return FALSE;
  for (int i = 0; i < b->shape.rank; i++) {
    int64_t d = b->shape.dims[b->shape.rank - 1 - i];
    if (d != 1 && d != y->dims[3 - i])
      return FALSE;
  }
  return TRUE;
}

static gboolean
pool_kind (const ClinferNode *node)
{
  return is_op (node, "AveragePool") || is_op (node, "GlobalAveragePool")
      || is_op (node, "GlobalMaxPool");
}

gboolean
clinfer_onednn_eltwise_accepts (const ClinferPlan *plan, const ClinferStep *st,
    OnednnOpKind *kind)
{
  const ClinferNode *node = st->node;
  ClinferPortDesc *x = clinfer_node_input_desc (node, 0);
  OnednnEltwise e;
  dnnl_alg_kind_t alg;
  guint src, other;

  if (node->n_outputs != 1 || !is_f32_4d (&node->outputs[0]))
    return FALSE;
  if (clinfer_onednn_eltwise_spec (node, &e, &src)) {
    x = clinfer_node_input_desc (node, src);
    *kind = ONEDNN_OP_ELTWISE;
    return is_f32_4d (x) && x->value == NULL
        && clinfer_shape_equal (&x->shape, &node->outputs[0].shape)
        && activation_slot (plan, st->in_slots[src]);
  }
  if (binary_spec (plan, st, &alg, &src, &other)) {
    *kind = ONEDNN_OP_BINARY;
    return TRUE;
  }
  if (pool_kind (node)) {
    int64_t cip = 0, ceil = 0;
    *kind = ONEDNN_OP_AVG_POOL;
    return is_f32_4d (x) && activation_slot (plan, st->in_slots[0])
        && clinfer_node_attr_int (node, "count_include_pad", 0, &cip, NULL)
        && clinfer_node_attr_int (node, "ceil_mode", 0, &ceil, NULL) && ceil == 0;
  }
  if (is_op (node, "Resize")) {
    *kind = ONEDNN_OP_RESAMPLE;
    return is_f32_4d (x) && activation_slot (plan, st->in_slots[0]);
  }
  return FALSE;
}

/* ---------------------------------------------------------------- */
/* Builders                                                          */

/* The primitive desc of @op_desc, NULL when oneDNN has none. */
/* @op_desc's primitive with @attr, NULL when oneDNN has none or only a
 * reference implementation (those nodes are left to the C kernels). */
static dnnl_primitive_desc_t
pd_with_attr (ClinferOnednnPlan *oplan, const_dnnl_op_desc_t op_desc,
    const_dnnl_primitive_attr_t attr)
{
  dnnl_primitive_desc_t pd = NULL;

  if (dnnl_primitive_desc_create (&pd, op_desc, attr, oplan->engine, NULL)
      != dnnl_success)
    pd = NULL;
  if (pd && clinfer_onednn_pd_is_reference (pd)) {
    dnnl_primitive_desc_destroy (pd);
    pd = NULL;
  }
  return pd;
}

static dnnl_primitive_desc_t
make_pd (ClinferOnednnPlan *oplan, const_dnnl_op_desc_t op_desc, GError **error)
{
  dnnl_primitive_attr_t attr = NULL;
  dnnl_primitive_desc_t pd;

  if (!clinfer_onednn_make_attr (&attr, error))
    return NULL;
  pd = pd_with_attr (oplan, op_desc, attr);
  dnnl_primitive_attr_destroy (attr);
  return pd;
}

static gboolean
eltwise_build (ClinferOnednnPlan *oplan, OnednnStep *s, const ClinferStep *st,
    GError **error)
{
  const ClinferShape *y = &st->node->outputs[0].shape;
  dnnl_memory_desc_t md;
  dnnl_eltwise_desc_t ed;
  dnnl_primitive_desc_t pd, pd2 = NULL;
  OnednnEltwise e;
  guint src;

  if (!clinfer_onednn_eltwise_spec (st->node, &e, &src))
    return FALSE;
  s->src_input = src;
  /* A plain output (a boundary): run on the plain layout, the input
   * reordered in. */
  if (!oplan->blocked[st->out_slots[0]])
    clinfer_onednn_md_4d (y, dnnl_nchw, &md);
  else if (oplan->blocked[st->in_slots[src]])
    clinfer_onednn_view_md (oplan, st->out_slots[0], y, &md);
  else
    clinfer_onednn_md_4d (y, oplan->block_tag, &md);
  if (e.alg == dnnl_eltwise_swish) {
    /* oneDNN 2.6's swish took 0.67 ms on 24 x 208 x 208 (nChw8c, Zen 4),
     * the simd table's vector exp 0.49 (the logistic and Mul it replaces
     * 0.45 + 0.39): it takes the whole buffer, padding lanes included
     * (swish (0) is 0), in one pass: clinfer_onednn_swish (). */
    s->simd = clinfer_cpu_simd_get (oplan->isa);
    g_free (st->kernel.name);
    ((ClinferStep *) st)->kernel.name = g_strdup_printf (
        "onednn-layout:swish_rows_%s", s->simd->isa_name);
    return clinfer_onednn_place_operands (oplan, s, st, &md, NULL, &md,
        error);
  }
  if (dnnl_eltwise_forward_desc_init (&ed, dnnl_forward_inference, e.alg, &md,
          e.alpha, e.beta) != dnnl_success
      || (pd = make_pd (oplan, &ed, error)) == NULL)
    return FALSE;
  if (e.alg2 != 0) {
    if (dnnl_eltwise_forward_desc_init (&ed, dnnl_forward_inference, e.alg2,
            &md, e.alpha2, e.beta2) != dnnl_success
        || (pd2 = make_pd (oplan, &ed, error)) == NULL) {
      dnnl_primitive_desc_destroy (pd);
      return FALSE;
    }
    if (!clinfer_onednn_check (dnnl_primitive_create (&s->prim2, pd2),
            "creating a primitive", error)) {
      dnnl_primitive_desc_destroy (pd2);
      dnnl_primitive_desc_destroy (pd);
      return FALSE;
    }
    dnnl_primitive_desc_destroy (pd2);
  }
  if (!clinfer_onednn_primitive_create (s, pd, st, error))
    return FALSE;
  return clinfer_onednn_place_operands (oplan, s, st, &md, NULL, &md, error);
}

void
clinfer_onednn_swish (const OnednnStep *s, const float *x, float *y)
{
  int64_t n = (int64_t) (dnnl_memory_desc_get_size (&s->dst.md)
      / sizeof (float));
  /* whole cache lines per part */
  int64_t parts = MAX (1, MIN (omp_get_max_threads (),
          n * (int64_t) sizeof (float) / BINARY_SPLIT_BYTES));

#pragma omp parallel for schedule (static) if (parts > 1)
  for (int64_t p = 0; p < parts; p++) {
    int64_t i0 = n * p / parts / 16 * 16;
    int64_t i1 = p + 1 == parts ? n : n * (p + 1) / parts / 16 * 16;
    s->simd->unary_row (7, x + i0, y + i0, i1 - i0);
  }
}

/* x op c on blocked layouts, c one value per channel (a squeeze-and-
 * excitation gate, a folded BatchNorm's scale): oneDNN 2.6 has no
 * binary kernel for that with 8-channel blocks on AVX-512 machines (and
 * the reference one is 10x slower). Each thread takes the same run of
 * pixels in every channel block, as the other blocked steps split
 * theirs. */
void
clinfer_onednn_binary_per_channel (const OnednnStep *s, const float *x,
    const float *c, float *y)
{
  int64_t hw = s->hw, block = s->block, nb = s->n_blocks;

#pragma omp parallel if (s->batch * nb * hw * block * (int64_t) sizeof (float) \
    >= BINARY_SPLIT_BYTES)
  {
    int nt = omp_get_num_threads (), t = omp_get_thread_num ();
    int64_t p0 = hw * t / nt, np = hw * (t + 1) / nt - p0;

    for (int64_t n = 0; n < s->batch && np > 0; n++)
      for (int64_t b = 0; b < nb; b++) {
        gsize off = ((gsize) (n * nb + b) * hw + p0) * block;
        if (s->bin_op == 4)
          s->simd->per_channel_affine (x + off, c + b * block,
              c + nb * block + b * block, y + off, np, (int) block,
              s->bin_relu);
        else
          s->simd->per_channel (s->bin_op, x + off,
              c + n * s->bin_c_stride + b * block, y + off, np, (int) block);
      }
  }
}

/* The per-channel kernel for binary step @s when oneDNN has none: @md
 * (x and y) and @md1 (an activation's [N or 1, C, 1, 1], or NULL with
 * constant @b) are channel-padded blocked views. */
static gboolean
per_channel_build (ClinferOnednnPlan *oplan, OnednnStep *s,
    const ClinferStep *st, dnnl_alg_kind_t alg, const ClinferPortDesc *b,
    const dnnl_memory_desc_t *md, const dnnl_memory_desc_t *md1,
    GError **error)
{
  int64_t block = oplan->block_tag == dnnl_nChw16c ? 16 : 8;
  int64_t cpad = md->padded_dims[1];

  /* An activation's padding channels hold what its step computed there;
   * dividing by them could make NaNs that the next conv's zero weights
   * keep. */
  if (md->ndims != 4 || cpad % block != 0
      || (md1 && (alg == dnnl_binary_div || md1->padded_dims[1] != cpad
              || md1->dims[2] != 1 || md1->dims[3] != 1
              || (md1->dims[0] != 1 && md1->dims[0] != md->dims[0]))))
    return FALSE;
  s->simd = clinfer_cpu_simd_get (oplan->isa);
  s->bin_op = alg == dnnl_binary_add ? 0 : alg == dnnl_binary_sub ? 1
      : alg == dnnl_binary_mul ? 2 : 3;
  s->batch = md->dims[0];
  s->block = block;
  s->n_blocks = cpad / block;
  s->hw = md->dims[2] * md->dims[3];
  s->bin_c_stride = md1 && md1->dims[0] != 1 ? cpad : 0;
  if (md1 == NULL) {
    float *v = g_aligned_alloc (cpad, sizeof (float), 64);
    gsize n = clinfer_tensor_get_n_elements (b->value);
    memcpy (v, clinfer_tensor_get_const_data (b->value), n * sizeof (float));
    for (int64_t i = n; i < cpad; i++)
      v[i] = alg == dnnl_binary_div ? 1.f : 0.f;
    s->weights_data = v;
  }
  g_free (st->kernel.name);
  ((ClinferStep *) st)->kernel.name = g_strdup_printf (
      "onednn-layout:binary_per_channel_nChw%dc", (int) block);
  return clinfer_onednn_place_operands (oplan, s, st, md, md1, md, error);
}

gboolean
clinfer_onednn_per_channel_const (const ClinferPlan *plan,
    const ClinferStep *st, int *op, const ClinferTensor **c, guint *x)
{
  const ClinferShape *y = &st->node->outputs[0].shape;
  dnnl_alg_kind_t alg;
  guint src, other;
  ClinferPortDesc *b;

  if (!binary_spec (plan, st, &alg, &src, &other))
    return FALSE;
  b = clinfer_node_input_desc (st->node, other);
  if (b->value == NULL || b->shape.rank < 3
      || clinfer_tensor_get_n_elements (b->value) != y->dims[1]
      || b->shape.dims[b->shape.rank - 3] != y->dims[1])
    return FALSE;
  /* binary_spec swaps only Add and Mul: Sub and Div are x op c. */
  *op = alg == dnnl_binary_add ? 0 : alg == dnnl_binary_sub ? 1
      : alg == dnnl_binary_mul ? 2 : 3;
  *c = b->value;
  *x = src;
  return TRUE;
}

/* A chain of per-channel constant steps (a BatchNorm written as Mul and
 * Add) with an optional Relu at its end (fuse_per_channel_chain () made
 * them this step's fused steps) as one pass: y = max (x * a + b, 0). */
static gboolean
per_channel_chain_build (ClinferOnednnPlan *oplan, OnednnStep *s,
    const ClinferStep *st, GError **error)
{
  ClinferPlan *plan = oplan->plan;
  const ClinferShape *y = &st->node->outputs[0].shape;
  int64_t block = oplan->block_tag == dnnl_nChw16c ? 16 : 8;
  dnnl_memory_desc_t md;
  int64_t cpad;
  float *a, *b;
  int op;
  const ClinferTensor *c;
  guint x;

  if (!clinfer_onednn_per_channel_const (plan, st, &op, &c, &x)
      || !oplan->blocked[st->in_slots[x]])
    return FALSE;
  s->src_input = x;
  for (guint j = s->step + 1; j < plan->steps->len; j++)
    if (oplan->fused_into[j] == (int) s->step) {
      ClinferStep *f = &g_array_index (plan->steps, ClinferStep, j);
      s->out_slot = f->out_slots[0];
    }
  if (!oplan->blocked[s->out_slot])
    return FALSE;
  clinfer_onednn_view_md (oplan, s->out_slot, y, &md);
  cpad = md.padded_dims[1];
  if (cpad % block != 0)
    return FALSE;
  a = g_aligned_alloc0 (2 * cpad, sizeof (float), 64);
  b = a + cpad;
  for (int64_t i = 0; i < cpad; i++)
    a[i] = 1.f;
  s->bin_relu = FALSE;
  for (guint j = s->step; j < plan->steps->len; j++) {
    const ClinferStep *f = &g_array_index (plan->steps, ClinferStep, j);
    OnednnEltwise e;
    guint src;
    if (j != s->step && oplan->fused_into[j] != (int) s->step)
      continue;
    if (j != s->step && clinfer_onednn_eltwise_spec (f->node, &e, &src)
        && e.alg == dnnl_eltwise_relu && e.alpha == 0.f && e.alg2 == 0) {
      s->bin_relu = TRUE;     /* a Relu, the chain's last */
      continue;
    }
    if (!clinfer_onednn_per_channel_const (plan, f, &op, &c, &x)) {
      g_aligned_free (a);
      return FALSE;
    }
    for (int64_t i = 0; i < y->dims[1]; i++) {
      float v = ((const float *) clinfer_tensor_get_const_data (c))[i];
      switch (op) {
        case 0: b[i] += v; break;
        case 1: b[i] -= v; break;
        case 2: a[i] *= v; b[i] *= v; break;
        default: a[i] /= v; b[i] /= v; break;
      }
    }
  }
  s->simd = clinfer_cpu_simd_get (oplan->isa);
  s->bin_op = 4;
  s->batch = md.dims[0];
  s->block = block;
  s->n_blocks = cpad / block;
  s->hw = md.dims[2] * md.dims[3];
  s->bin_c_stride = 0;
  s->weights_data = a;
  g_free (st->kernel.name);
  ((ClinferStep *) st)->kernel.name = g_strdup_printf (
      "onednn-layout:per_channel_affine%s_nChw%dc", s->bin_relu ? "_relu" : "",
      (int) block);
  return clinfer_onednn_place_operands (oplan, s, st, &md, NULL, &md, error);
}

static gboolean
binary_build (ClinferOnednnPlan *oplan, OnednnStep *s, const ClinferStep *st,
    GError **error)
{
  const ClinferNode *node = st->node;
  const ClinferShape *y = &node->outputs[0].shape;
  dnnl_memory_desc_t md, md1, user_md1;
  dnnl_binary_desc_t bd;
  dnnl_primitive_desc_t pd = NULL;
  dnnl_alg_kind_t alg;
  ClinferPortDesc *b;
  guint src, other;
  gboolean per_channel, padded;

  if (!binary_spec (oplan->plan, st, &alg, &src, &other))
    return FALSE;
  for (guint j = s->step + 1; j < oplan->plan->steps->len; j++)
    if (oplan->fused_into[j] == (int) s->step)
      return per_channel_chain_build (oplan, s, st, error);
  s->src_input = src;
  b = clinfer_node_input_desc (node, other);
  per_channel = b->value != NULL && b->shape.rank >= 3
      && clinfer_tensor_get_n_elements (b->value) == y->dims[1]
      && b->shape.dims[b->shape.rank - 3] == y->dims[1];
  /* The channel-padded view where every operand allows it. */
  padded = oplan->blocked[st->in_slots[src]] && oplan->blocked[st->out_slots[0]]
      && (b->value == NULL ? oplan->blocked[st->in_slots[other]] : per_channel);
  if (padded)
    clinfer_onednn_view_md (oplan, st->out_slots[0], y, &md);
  else
    clinfer_onednn_md_4d (y, oplan->blocked[st->out_slots[0]]
        ? oplan->block_tag : dnnl_nchw, &md);
  if (b->value == NULL) {
    /* An activation: read in the slot's own layout. */
    if (padded)
      clinfer_onednn_view_md (oplan, st->in_slots[other], &b->shape, &md1);
    else
      clinfer_onednn_slot_md (oplan, st->in_slots[other], &md1);
    s->z_input = other;
  } else {
    dnnl_dims_t d = { 1, 1, 1, 1 };
    for (int i = 0; i < b->shape.rank; i++)
      d[4 - b->shape.rank + i] = b->shape.dims[i];
    if (padded)
      d[1] = md.dims[1];
    dnnl_memory_desc_init_by_tag (&user_md1, 4, d, dnnl_f32, dnnl_nchw);
    /* In src0's layout: the jit kernels broadcast it per channel. */
    dnnl_memory_desc_init_by_tag (&md1, 4, d, dnnl_f32,
        oplan->blocked[st->out_slots[0]] ? oplan->block_tag : dnnl_nchw);
  }
  /* clinfer's per-channel kernel wherever it fits (faster than oneDNN
   * 2.6's jit:uni binary: ocr-rec's 480 x 6 x 80 gate 0.041 -> 0.037 ms),
   * unless CLINFER_CPU_PER_CHANNEL=0; then only where oneDNN has none. */
  if (padded && (b->value == NULL || per_channel)
      && g_strcmp0 (g_getenv ("CLINFER_CPU_PER_CHANNEL"), "0") != 0
      && per_channel_build (oplan, s, st, alg, b, &md,
          b->value == NULL ? &md1 : NULL, error))
    return TRUE;
  if (dnnl_binary_desc_init (&bd, alg, &md, &md1, &md) != dnnl_success
      || (pd = make_pd (oplan, &bd, error)) == NULL
      || clinfer_onednn_pd_is_reference (pd)) {
    g_clear_pointer (&pd, dnnl_primitive_desc_destroy);
    return padded && (b->value == NULL || per_channel)
        && per_channel_build (oplan, s, st, alg, b, &md,
            b->value == NULL ? &md1 : NULL, error);
  }
  if (b->value != NULL && padded) {
    /* Per-channel values, zero past the real channels: in a [1, C, 1, 1]
     * blocked desc, just the values in order. */
    gsize n = clinfer_tensor_get_n_elements (b->value);
    s->weights_arg = DNNL_ARG_SRC_1;
    s->weights_data = g_aligned_alloc0 (md1.padded_dims[1], sizeof (float), 64);
    memcpy (s->weights_data, clinfer_tensor_get_const_data (b->value),
        n * sizeof (float));
    if (!clinfer_onednn_check (dnnl_memory_create (&s->weights, &md1,
            oplan->engine, s->weights_data), "creating a constant", error)) {
      dnnl_primitive_desc_destroy (pd);
      return FALSE;
    }
  } else if (b->value != NULL) {
    s->weights_arg = DNNL_ARG_SRC_1;
    if (!clinfer_onednn_constant_new (oplan->engine, b->value, &user_md1, &md1,
            &s->weights_data, &s->weights, error)) {
      dnnl_primitive_desc_destroy (pd);
      return FALSE;
    }
  }
  if (!clinfer_onednn_primitive_create (s, pd, st, error))
    return FALSE;
  return clinfer_onednn_place_operands (oplan, s, st, &md,
      b->value == NULL ? &md1 : NULL, &md, error);
}

static gboolean
avg_pool_build (ClinferOnednnPlan *oplan, OnednnStep *s, const ClinferStep *st,
    GError **error)
{
  const ClinferNode *node = st->node;
  ClinferPortDesc *x = clinfer_node_input_desc (node, 0);
  const ClinferShape *y = &node->outputs[0].shape;
  gboolean global = !is_op (node, "AveragePool");
  dnnl_dims_t strides, kernel, dilation = { 0, 0 }, pad_l, pad_r;
  dnnl_memory_desc_t src, dst;
  dnnl_pooling_v2_desc_t pdesc;
  dnnl_alg_kind_t alg = is_op (node, "GlobalMaxPool") ? dnnl_pooling_max
      : dnnl_pooling_avg_exclude_padding;
  dnnl_primitive_desc_t pd;

  if (global) {
    if (y->dims[2] != 1 || y->dims[3] != 1)
      return FALSE;
    for (int i = 0; i < 2; i++) {
      strides[i] = 1;
      kernel[i] = x->shape.dims[2 + i];
      pad_l[i] = pad_r[i] = 0;
    }
  } else {
    ClinferWindowAttrs attrs;
    ClinferWindow win;
    int64_t cip = 0;
    if (!clinfer_window_attrs_parse (node, TRUE, &attrs, error)
        || !clinfer_window_resolve (node, &attrs, 2, x->shape.dims + 2, NULL,
            &win, error)
        || !clinfer_node_attr_int (node, "count_include_pad", 0, &cip, error))
      return FALSE;
    if (cip)
      alg = dnnl_pooling_avg_include_padding;
    for (int i = 0; i < 2; i++) {
      if (win.dilation[i] != 1 || win.out[i] != y->dims[2 + i])
        return FALSE;
      strides[i] = win.stride[i];
      kernel[i] = win.kernel[i];
      pad_l[i] = win.pad_begin[i];
      pad_r[i] = win.pad_end[i];
    }
  }
  clinfer_onednn_md_4d (&x->shape, oplan->block_tag, &src);
  clinfer_onednn_md_4d (y, oplan->block_tag, &dst);
  if (dnnl_pooling_v2_forward_desc_init (&pdesc, dnnl_forward_inference, alg,
          &src, &dst, strides, kernel, dilation, pad_l, pad_r) != dnnl_success
      || (pd = make_pd (oplan, &pdesc, error)) == NULL)
    return FALSE;
  if (!clinfer_onednn_primitive_create (s, pd, st, error))
    return FALSE;
  return clinfer_onednn_place_operands (oplan, s, st, &src, NULL, &dst, error);
}

/* Linear taps of oneDNN's resampling for output @o of a dim @in -> @out:
 * half-pixel source coordinate, both neighbours clamped to the edge. */
static void
onednn_linear_tap (int64_t o, int64_t in, int64_t out, int64_t *i0,
    int64_t *i1, float *w1)
{
  float c = ((float) o + 0.5f) * (float) in / (float) out - 0.5f;
  float f = floorf (c);

  *i0 = MAX ((int64_t) f, 0);
  *i1 = MIN ((int64_t) ceilf (c), in - 1);
  *w1 = fabsf (c - f);
}

/* The node's linear taps of dim @d equal oneDNN's: the same weight on the
 * same input index, for every output index (taps NULL: an unchanged dim,
 * which oneDNN also copies). */
static gboolean
linear_taps_match (const ClinferResizeGeometry *g, int d, int64_t in,
    int64_t out)
{
  if (g->taps[d] == NULL)
    return in == out;
  for (int64_t o = 0; o < out; o++) {
    const ClinferResizeTap *t = &g->taps[d][o];
    int64_t i0, i1;
    float w1, want[2], got[2] = { 0.f, 0.f };
    if (t->extrap)
      return FALSE;
    onednn_linear_tap (o, in, out, &i0, &i1, &w1);
    /* Weights per distinct index: {i0, i1} (one index when equal). */
    want[0] = i0 == i1 ? 1.f : 1.f - w1;
    want[1] = i0 == i1 ? 0.f : w1;
    for (int k = 0; k < 2; k++) {
      if (t->idx[k] == i0)
        got[0] += t->w[k];
      else if (t->idx[k] == i1)
        got[1] += t->w[k];
      else if (t->w[k] != 0.f)
        return FALSE;
    }
    if (fabsf (got[0] - want[0]) > 1e-5f || fabsf (got[1] - want[1]) > 1e-5f)
      return FALSE;
  }
  return TRUE;
}

/* Nearest Resize by a whole factor k on H and W, N and C unchanged, where
 * the node's taps are floor (i / k): oneDNN's nearest resampling picks
 * round ((i + 0.5) / k - 0.5), the same index for every i. Linear Resize
 * of H and W whose taps are oneDNN's half-pixel ones (half_pixel, and
 * pytorch_half_pixel to sizes above 1; any scale): *@linear TRUE. */
static gboolean
resize_matches (const ClinferNode *node, const ClinferShape *xs,
    const ClinferShape *ys, gboolean *linear)
{
  ClinferResizeGeometry g;
  gboolean ok;

  if (!clinfer_resize_const_geometry (node, &g))
    return FALSE;
  *linear = g.mode == CLINFER_RESIZE_LINEAR;
  if (*linear) {
    ok = g.rank == 4 && g.n_taps == 2;
    for (int d = 0; ok && d < 4; d++)
      ok = g.out[d] == ys->dims[d] && xs->dims[d] > 0
          && (d >= 2 || xs->dims[d] == ys->dims[d])
          && linear_taps_match (&g, d, xs->dims[d], ys->dims[d]);
    clinfer_resize_geometry_clear (&g);
    return ok;
  }
  ok = g.mode == CLINFER_RESIZE_NEAREST && g.rank == 4;
  for (int d = 0; ok && d < 4; d++) {
    int64_t k = ys->dims[d] / MAX (xs->dims[d], 1);
    ok = g.out[d] == ys->dims[d] && xs->dims[d] > 0 && k >= 1
        && k * xs->dims[d] == ys->dims[d] && (d >= 2 || k == 1)
        && g.taps[d] != NULL;
    for (int64_t i = 0; ok && i < ys->dims[d]; i++)
      ok = !g.taps[d][i].extrap && g.taps[d][i].idx[0] == i / k;
  }
  clinfer_resize_geometry_clear (&g);
  return ok;
}

static gboolean
resample_build (ClinferOnednnPlan *oplan, OnednnStep *s, const ClinferStep *st,
    GError **error)
{
  ClinferPortDesc *x = clinfer_node_input_desc (st->node, 0);
  const ClinferShape *y = &st->node->outputs[0].shape;
  dnnl_memory_desc_t src, dst;
  dnnl_resampling_desc_t rd;
  dnnl_primitive_desc_t pd;
  gboolean linear = FALSE;

  if (!resize_matches (st->node, &x->shape, y, &linear))
    return FALSE;
  clinfer_onednn_md_4d (&x->shape, oplan->block_tag, &src);
  clinfer_onednn_md_4d (y, oplan->block_tag, &dst);
  if (dnnl_resampling_forward_desc_init (&rd, dnnl_forward_inference,
          linear ? dnnl_resampling_linear : dnnl_resampling_nearest, NULL,
          &src, &dst) != dnnl_success
      || (pd = make_pd (oplan, &rd, error)) == NULL)
    return FALSE;
  if (!clinfer_onednn_primitive_create (s, pd, st, error))
    return FALSE;
  return clinfer_onednn_place_operands (oplan, s, st, &src, NULL, &dst, error);
}

gboolean
clinfer_onednn_eltwise_build (ClinferOnednnPlan *oplan, OnednnStep *s,
    const ClinferStep *st, GError **error)
{
  switch (s->kind) {
    case ONEDNN_OP_ELTWISE:
      return eltwise_build (oplan, s, st, error);
    case ONEDNN_OP_BINARY:
      return binary_build (oplan, s, st, error);
    case ONEDNN_OP_AVG_POOL:
      return avg_pool_build (oplan, s, st, error);
    case ONEDNN_OP_RESAMPLE:
      return resample_build (oplan, s, st, error);
    default:
      return FALSE;
  }
}

/* Two activations of rank 2 to 4, [.., M, K] by [.., K, N], the same
 * batch dims (attention's scores and their product with the values; a
 * Gemm of two activations, gemm-to-matmul). */
static gboolean
matmul_activations (const ClinferPlan *plan, const ClinferStep *st,
    const ClinferPortDesc *a, const ClinferPortDesc *b,
    const ClinferPortDesc *y)
{
  int r = a->shape.rank;

  if (b->value != NULL || r < 2 || r > 4 || b->shape.rank != r
      || y->shape.rank != r || !clinfer_shape_is_static (&a->shape)
      || !clinfer_shape_is_static (&b->shape)
      || !activation_slot (plan, st->in_slots[1]))
    return FALSE;
  for (int i = 0; i < r - 2; i++)
    if (a->shape.dims[i] != b->shape.dims[i])
      return FALSE;
  return a->shape.dims[r - 1] == b->shape.dims[r - 2]
      && y->shape.dims[r - 1] == b->shape.dims[r - 1];
}

/* MatMul of a 2-D or 3-D activation by constant [K, N] weights, or of two
 * activations (matmul_activations ()). */
gboolean
clinfer_onednn_matmul_accepts (const ClinferPlan *plan, const ClinferStep *st)
{
  const ClinferNode *node = st->node;
  ClinferPortDesc *a = clinfer_node_input_desc (node, 0);
  ClinferPortDesc *b = clinfer_node_input_desc (node, 1);
  const ClinferPortDesc *y = &node->outputs[0];

  /* oneDNN's matmul divides by the extents: an empty operand (a model
   * file's 0 extent) stays on the reference eval. */
  if (!is_op (node, "MatMul") || node->n_inputs != 2 || a == NULL
      || b == NULL || !clinfer_shape_is_static (&y->shape)
      || clinfer_shape_n_elements (&y->shape) == 0
      || !clinfer_shape_is_static (&b->shape)
      || clinfer_shape_n_elements (&b->shape) == 0)
    return FALSE;
  if (a->type == CLINFER_TYPE_F32 && b->type == CLINFER_TYPE_F32
      && y->type == CLINFER_TYPE_F32 && a->value == NULL
      && activation_slot (plan, st->in_slots[0])
      && matmul_activations (plan, st, a, b, y))
    return TRUE;
  return is_op (node, "MatMul") && node->n_inputs == 2 && a && b
      && a->type == CLINFER_TYPE_F32 && b->type == CLINFER_TYPE_F32
      && y->type == CLINFER_TYPE_F32 && a->value == NULL && b->value != NULL
      && (a->shape.rank == 2 || a->shape.rank == 3) && b->shape.rank == 2
      && clinfer_shape_is_static (&a->shape) && clinfer_shape_is_static (&y->shape)
      && a->shape.dims[a->shape.rank - 1] == b->shape.dims[0]
      && y->shape.rank == a->shape.rank
      && y->shape.dims[y->shape.rank - 1] == b->shape.dims[1]
      && activation_slot (plan, st->in_slots[0]);
}

/* The bias Add fused into MatMul step @st (fuse_matmul_bias), or NULL;
 * the eltwise steps fused after it (fuse_matmul_relu) as s->post
 * (s->mm_relu for a Relu, which the GEMM takes) and the MatMul's output
 * slot set to the last fused step's. */
static ClinferPortDesc *
matmul_fused (ClinferOnednnPlan *oplan, OnednnStep *s, const ClinferStep *st)
{
  ClinferPortDesc *bias = NULL;

  for (guint j = st - &g_array_index (oplan->plan->steps, ClinferStep, 0) + 1;
      j < oplan->plan->steps->len; j++) {
    ClinferStep *f = &g_array_index (oplan->plan->steps, ClinferStep, j);
    guint src;
    /* Transposes: strides, matmul_activations_build () */
    if (oplan->fused_into[j] != (int) s->step || is_op (f->node, "Transpose"))
      continue;
    /* the bias: a fused Add of a constant of N values (the last dim)
     * reading the MatMul's own output, as fuse_matmul_bias () takes */
    ClinferPortDesc *c = is_op (f->node, "Add") && f->node->n_inputs == 2
        ? clinfer_node_input_desc (f->node,
            f->in_slots[0] == st->out_slots[0] ? 1 : 0) : NULL;
    if (c && c->value && s->out_slot == st->out_slots[0]
        && clinfer_tensor_get_n_elements (c->value)
        == st->node->outputs[0].shape.dims[st->node->outputs[0].shape.rank - 1]) {
      bias = c;
    } else if (s->n_post < ONEDNN_MAX_POST_OPS
        && clinfer_onednn_eltwise_spec (f->node, &s->post[s->n_post], &src)) {
      s->mm_relu |= is_op (f->node, "Relu");
      s->n_post++;
    }
    s->out_slot = f->out_slots[0];
  }
  return bias;
}

/* oneDNN's primitive for matmul @mm, with the fused eltwise steps as
 * post-ops. */
static dnnl_primitive_desc_t
matmul_pd (ClinferOnednnPlan *oplan, const OnednnStep *s,
    const dnnl_matmul_desc_t *mm, GError **error)
{
  dnnl_primitive_attr_t attr = NULL;
  dnnl_primitive_desc_t pd;

  if (s->n_post == 0)
    return make_pd (oplan, mm, error);
  if (!clinfer_onednn_eltwise_attr (s->post, s->n_post, &attr, error))
    return NULL;
  pd = pd_with_attr (oplan, mm, attr);
  dnnl_primitive_attr_destroy (attr);
  return pd;
}

/* y = up (x) + z, up a nearest Resize by whole factors (the feature
 * pyramid of PP-OCR det: each level upsampled x2 and added to the one
 * above): one pass that reads x and z and writes y, instead of writing
 * up (x) and reading it back. Each thread takes a band of output rows of
 * every channel block, as the other blocked steps split theirs. */
void
clinfer_onednn_upsample_add (const OnednnStep *s, const float *x,
    const float *z, float *y)
{
  const ClinferCpuConvGeom *g = &s->pool_geom;
  int64_t planes = s->batch * s->n_blocks, block = s->block;
  gsize in_plane = (gsize) g->ih * g->iw * block;
  gsize out_plane = (gsize) g->oh * g->ow * block;

#pragma omp parallel if (planes * out_plane * sizeof (float) >= BINARY_SPLIT_BYTES)
  {
    int nt = omp_get_num_threads (), t = omp_get_thread_num ();
    int oy0 = g->oh * t / nt, oy1 = g->oh * (t + 1) / nt;

    for (int64_t p = 0; p < planes; p++)
      for (int oy = oy0; oy < oy1; oy++) {
        gsize o = p * out_plane + (gsize) oy * g->ow * block;
        s->simd->upsample_add_row (x + p * in_plane
            + (gsize) (oy / g->kh) * g->iw * block, z + o, y + o, g->ow,
            g->kw, (int) block);
      }
  }
}

gboolean
clinfer_onednn_upsample_add_build (ClinferOnednnPlan *oplan, OnednnStep *s,
    const ClinferStep *add, const ClinferStep *rs, GError **error)
{
  guint x_slot = rs->in_slots[0], r_slot = rs->out_slots[0];
  guint z_in = add->in_slots[0] == r_slot ? 1 : 0;
  guint z_slot = add->in_slots[z_in], y_slot = add->out_slots[0];
  ClinferPortDesc *x = clinfer_node_input_desc (rs->node, 0);
  const ClinferShape *y = &add->node->outputs[0].shape;
  ClinferCpuConvGeom *g = &s->pool_geom;
  dnnl_memory_desc_t xmd, zmd, ymd;
  gsize end = 0;

  if (!oplan->blocked[x_slot] || !oplan->blocked[z_slot]
      || !oplan->blocked[y_slot] || x->shape.rank != 4 || y->rank != 4
      || y->dims[2] > G_MAXINT || y->dims[3] > G_MAXINT)
    return FALSE;
  clinfer_onednn_view_md (oplan, x_slot, &x->shape, &xmd);
  clinfer_onednn_view_md (oplan, z_slot, y, &zmd);
  clinfer_onednn_view_md (oplan, y_slot, y, &ymd);
  s->simd = clinfer_cpu_simd_get (oplan->isa);
  s->block = oplan->block_tag == dnnl_nChw16c ? 16 : 8;
  s->batch = y->dims[0];
  s->n_blocks = ymd.padded_dims[1] / s->block;
  if (xmd.padded_dims[1] != ymd.padded_dims[1]
      || zmd.padded_dims[1] != ymd.padded_dims[1]
      || x->shape.dims[0] != y->dims[0])
    return FALSE;
  g->ih = (int) x->shape.dims[2];
  g->iw = (int) x->shape.dims[3];
  g->oh = (int) y->dims[2];
  g->ow = (int) y->dims[3];
  g->kh = g->oh / MAX (g->ih, 1);
  g->kw = g->ow / MAX (g->iw, 1);
  if (g->kh * g->ih != g->oh || g->kw * g->iw != g->ow)
    return FALSE;
  s->src_input = 0;
  s->z_input = z_in;
  s->out_slot = y_slot;
  if (!clinfer_onednn_operand_init (oplan, &s->src, x_slot, &xmd, FALSE, &end,
          error)
      || !clinfer_onednn_operand_init (oplan, &s->z, z_slot, &zmd, FALSE, &end,
          error)
      || !clinfer_onednn_operand_init (oplan, &s->dst, y_slot, &ymd, TRUE, &end,
          error))
    return FALSE;
  s->scratch_bytes = end;
  g_free (add->kernel.name);
  ((ClinferStep *) add)->kernel.name = g_strdup_printf (
      "onednn-layout:upsample_nearest_add_nChw%dc_%s", (int) s->block,
      s->simd->isa_name);
  return TRUE;
}

/* MatMuls of at most this many rows whose weights are at least
 * MATMUL_GEMM_MIN_BYTES run on clinfer's GEMM (matmul_gemm ()). */
#define MATMUL_GEMM_MAX_ROWS 64
#define MATMUL_GEMM_MIN_BYTES (1024 * 1024)
#define MATMUL_ALIGN 64

/* A MatMul with few rows and large constant weights (a recogniser's
 * final classifier: 40 x 120 by 120 x 6625, 3.2 MB) reads each weight
 * once per inference, so its time is how the weights stream in. oneDNN
 * 2.6's brgemm takes 0.58 ms when they are in the L2/L3 caches but
 * 0.76-0.86 ms in the model, after other steps pushed them out. Here
 * each thread takes a run of whole column panels (B packed at compile
 * time, one panel of k x nr floats in L1) and computes every row of it
 * before the next panel: each weight is read once, in order. The threads'
 * runs are column ranges, as softmax_columns () splits the rows after it
 * (multiples of nr floats, so no two threads write one cache line). */
void
clinfer_onednn_matmul_gemm (const OnednnStep *s, const float *x, float *y,
    void *scratch)
{
  const ClinferCpuSimd *k = s->simd;
  int m = s->mm_m, kd = s->mm_k, n = s->mm_n, mr = s->mm_mr, nr = k->nr;
  int panels = (n + nr - 1) / nr;

#pragma omp parallel
  {
    int nt = omp_get_num_threads (), t = omp_get_thread_num ();
    int p0 = panels * t / nt, p1 = panels * (t + 1) / nt;
    float *a = (float *) ((guint8 *) scratch + s->mm_a_offset
        + (gsize) t * s->mm_a_bytes);

    if (p1 > p0) {
      clinfer_cpu_pack_a (x, m, kd, mr, a);
      for (int p = p0; p < p1; p++) {
        int c0 = p * nr;
        k->gemm_rows (mr, m, kd, a, s->mm_zero, s->mm_b + (gsize) p * kd * nr,
            MIN (nr, n - c0), y + c0, n, s->mm_bias ? s->mm_bias + c0 : NULL,
            0, s->mm_relu);
      }
    }
  }
}

/* The GEMM variant of a MatMul step: B packed, the zeros and the bias
 * in one allocation; A's per-thread panels in the scratch. */
static gboolean
matmul_gemm_build (ClinferOnednnPlan *oplan, OnednnStep *s,
    const ClinferStep *st, int64_t m, int64_t kd, int64_t n,
    const ClinferPortDesc *b, const ClinferPortDesc *bias)
{
  const ClinferCpuSimd *k = clinfer_cpu_simd_get (oplan->isa);
  int mr = clinfer_cpu_gemm_mr (k, (int) MIN (m, G_MAXINT));
  int64_t panels = (n + k->nr - 1) / k->nr, mrows = (m + mr - 1) / mr * mr;
  gsize nb = (gsize) panels * kd * k->nr, nz = (gsize) mrows;
  float *mem;

  if (m > MATMUL_GEMM_MAX_ROWS || kd > G_MAXINT / 2 || n > G_MAXINT / 2
      || (gsize) kd * n * sizeof (float) < MATMUL_GEMM_MIN_BYTES)
    return FALSE;
  mem = g_aligned_alloc0 (nb + nz + (bias || s->mm_relu ? (gsize) n : 0),
      sizeof (float), MATMUL_ALIGN);
  k->pack_b (mem, clinfer_tensor_get_const_data (b->value), n, (int) kd,
      (int) n);
  s->weights_data = mem;
  s->simd = k;
  s->mm_m = (int) m;
  s->mm_mr = mr;
  s->mm_k = (int) kd;
  s->mm_n = (int) n;
  s->mm_b = mem;
  s->mm_zero = mem + nb;
  s->mm_bias = bias || s->mm_relu ? mem + nb + nz : NULL;
  if (bias)
    memcpy (mem + nb + nz, clinfer_tensor_get_const_data (bias->value),
        (gsize) n * sizeof (float));
  s->mm_a_offset = 0;
  s->mm_a_bytes = (gsize) mrows * kd * sizeof (float);
  s->mm_a_bytes = (s->mm_a_bytes + MATMUL_ALIGN - 1) / MATMUL_ALIGN
      * MATMUL_ALIGN;
  s->scratch_bytes = s->mm_a_bytes * MAX (oplan->threads, 1);
  g_free (st->kernel.name);
  ((ClinferStep *) st)->kernel.name = g_strdup_printf (
      "onednn-layout:gemm_column_panels%s_%s", s->mm_relu ? "_relu" : "",
      k->isa_name);
  return TRUE;
}

/* Plain dims of @d's shape. */
static void
plain_md (const ClinferShape *shape, dnnl_memory_desc_t *md)
{
  static const dnnl_format_tag_t tags[] = { dnnl_a, dnnl_a, dnnl_ab,
    dnnl_abc, dnnl_abcd };
  dnnl_dims_t d = { 0 };

  for (int i = 0; i < shape->rank; i++)
    d[i] = shape->dims[i];
  dnnl_memory_desc_init_by_tag (md, shape->rank, d, dnnl_f32,
      tags[shape->rank]);
}

/* @md: @shape read through the strides of a dense tensor that Transpose
 * @perm relates to it: @shape is perm of that tensor (@input: a
 * Transpose's output read from its input) or that tensor is perm of
 * @shape (a Transpose's input written into its output). */
static void
transposed_md (const ClinferShape *shape, const int *perm, gboolean input,
    dnnl_memory_desc_t *md)
{
  int r = shape->rank;
  dnnl_dims_t d, dense_dims, dense, strides;

  for (int i = 0; i < r; i++) {
    d[i] = shape->dims[i];
    /* the dense tensor's dims */
    dense_dims[input ? perm[i] : i] = input ? shape->dims[i]
        : shape->dims[perm[i]];
  }
  dense[r - 1] = 1;
  for (int i = r - 2; i >= 0; i--)
    dense[i] = dense[i + 1] * dense_dims[i + 1];
  for (int i = 0; i < r; i++) {
    if (input)
      strides[i] = dense[perm[i]];
    else
      strides[perm[i]] = dense[i];
  }
  dnnl_memory_desc_init_by_strides (md, r, d, dnnl_f32, strides);
}

/* The Transposes fused into MatMul step @st (fuse_matmul_transposes ()):
 * its operands' descriptors with their strides. */
static void
matmul_transposed_mds (ClinferOnednnPlan *oplan, const OnednnStep *s,
    const ClinferStep *st, dnnl_memory_desc_t *amd, dnnl_memory_desc_t *bmd,
    dnnl_memory_desc_t *ymd)
{
  const ClinferNode *node = st->node;
  int r = node->outputs[0].shape.rank, perm[CLINFER_MAX_RANK];

  for (guint j = 0; j < oplan->plan->steps->len; j++) {
    ClinferStep *t = &g_array_index (oplan->plan->steps, ClinferStep, j);
    if (oplan->fused_into[j] != (int) s->step || !is_op (t->node, "Transpose")
        || !clinfer_transpose_perm (t->node, r, perm, NULL))
      continue;
    if (t->out_slots[0] == st->in_slots[0])
      transposed_md (&clinfer_node_input_desc (node, 0)->shape, perm, TRUE,
          amd);
    else if (t->out_slots[0] == st->in_slots[1])
      transposed_md (&clinfer_node_input_desc (node, 1)->shape, perm, TRUE,
          bmd);
    else
      transposed_md (&node->outputs[0].shape, perm, FALSE, ymd);
  }
}

/* MatMul of two activations: oneDNN's primitive on the plain slots (or
 * through the strides of fused Transposes), B bound as the weights
 * argument every run (z operand, z_as_weights). */
static gboolean
matmul_activations_build (ClinferOnednnPlan *oplan, OnednnStep *s,
    const ClinferStep *st, ClinferPortDesc *bias, GError **error)
{
  const ClinferNode *node = st->node;
  ClinferPortDesc *a = clinfer_node_input_desc (node, 0);
  ClinferPortDesc *b = clinfer_node_input_desc (node, 1);
  const ClinferShape *y = &node->outputs[0].shape;
  dnnl_memory_desc_t amd, bmd, ymd, biasmd;
  dnnl_matmul_desc_t mm;
  dnnl_primitive_desc_t pd;
  dnnl_dims_t bd = { 1, 1, 1, 1 };

  if (oplan->blocked[st->in_slots[1]])
    return FALSE;
  plain_md (&a->shape, &amd);
  plain_md (&b->shape, &bmd);
  plain_md (y, &ymd);
  matmul_transposed_mds (oplan, s, st, &amd, &bmd, &ymd);
  bd[y->rank - 1] = y->dims[y->rank - 1];
  dnnl_memory_desc_init_by_tag (&biasmd, y->rank, bd, dnnl_f32,
      y->rank == 2 ? dnnl_ab : y->rank == 3 ? dnnl_abc : dnnl_abcd);
  if (dnnl_matmul_desc_init (&mm, &amd, &bmd, bias ? &biasmd : NULL, &ymd)
      != dnnl_success || (pd = matmul_pd (oplan, s, &mm, error)) == NULL)
    return FALSE;
  if ((bias && !clinfer_onednn_constant_new (oplan->engine, bias->value,
              &biasmd, &biasmd, &s->bias_data, &s->bias, error))
      || !clinfer_onednn_primitive_create (s, pd, st, error))
    return FALSE;
  clinfer_onednn_operands_in_place (s, st->in_slots[0], &amd, s->out_slot,
      &ymd);
  s->z.slot = st->in_slots[1];
  s->z.md = s->z.slot_md = bmd;
  s->z_input = 1;
  s->z_as_weights = TRUE;
  return TRUE;
}

/* Plain operands (matmul slots are never blocked); the weights packed
 * once into the layout the implementation picks, the bias of a fused Add
 * copied. */
gboolean
clinfer_onednn_matmul_build (ClinferOnednnPlan *oplan, OnednnStep *s,
    const ClinferStep *st, GError **error)
{
  const ClinferNode *node = st->node;
  ClinferPortDesc *a = clinfer_node_input_desc (node, 0);
  ClinferPortDesc *b = clinfer_node_input_desc (node, 1);
  const ClinferShape *y = &node->outputs[0].shape;
  int r = a->shape.rank;
  dnnl_dims_t ad = { 0 }, wd = { 1, 1, 1 }, yd = { 0 }, bd = { 1, 1, 1 };
  dnnl_memory_desc_t amd, wmd, user_wmd, ymd, bmd;
  ClinferPortDesc *bias = matmul_fused (oplan, s, st);
  const dnnl_memory_desc_t *want;
  dnnl_matmul_desc_t mm;
  dnnl_primitive_desc_t pd;
  gsize end;

  if (oplan->blocked[st->in_slots[0]] || oplan->blocked[s->out_slot])
    return FALSE;
  if (b->value == NULL)
    return matmul_activations_build (oplan, s, st, bias, error);
  for (int i = 0; i < r; i++) {
    ad[i] = a->shape.dims[i];
    yd[i] = y->dims[i];
  }
  wd[r - 2] = b->shape.dims[0];
  wd[r - 1] = b->shape.dims[1];
  dnnl_memory_desc_init_by_tag (&amd, r, ad, dnnl_f32, r == 2 ? dnnl_ab : dnnl_abc);
  dnnl_memory_desc_init_by_tag (&ymd, r, yd, dnnl_f32, r == 2 ? dnnl_ab : dnnl_abc);
  dnnl_memory_desc_init_by_tag (&user_wmd, r, wd, dnnl_f32, r == 2 ? dnnl_ab : dnnl_abc);
  dnnl_memory_desc_init_by_tag (&wmd, r, wd, dnnl_f32, dnnl_format_tag_any);
  bd[r - 1] = y->dims[r - 1];
  dnnl_memory_desc_init_by_tag (&bmd, r, bd, dnnl_f32, r == 2 ? dnnl_ab : dnnl_abc);
  /* Bound in place: the slots' own plain layout, no reorders. */
  clinfer_onednn_operands_in_place (s, st->in_slots[0], &amd, s->out_slot,
      &ymd);
  if (matmul_gemm_build (oplan, s, st, r == 2 ? ad[0] : ad[0] * ad[1],
          ad[r - 1], wd[r - 1], b, bias))
    return TRUE;
  if (dnnl_matmul_desc_init (&mm, &amd, &wmd, bias ? &bmd : NULL, &ymd)
      != dnnl_success || (pd = matmul_pd (oplan, s, &mm, error)) == NULL)
    return FALSE;
  want = dnnl_primitive_desc_query_md (pd, dnnl_query_weights_md, 0);
  if (!clinfer_onednn_constant_new (oplan->engine, b->value, &user_wmd, want,
          &s->weights_data, &s->weights, error)
      || (bias && !clinfer_onednn_constant_new (oplan->engine, bias->value,
              &bmd, &bmd, &s->bias_data, &s->bias, error))
      || !clinfer_onednn_primitive_create (s, pd, st, error))
    return FALSE;
  s->scratchpad_offset = 0;
  end = dnnl_memory_desc_get_size (&s->scratchpad_md);
  s->scratch_bytes = end;
  return TRUE;
}

/* Softmax as oneDNN sees it on the plain layout: before opset 13 the
 * input is flattened to [outer, inner] at axis and normalised over inner;
 * from 13 on it is normalised along one axis, [outer, n, inner]. */
static gboolean
softmax_dims (const ClinferNode *node, const ClinferShape *x, dnnl_dims_t d,
    int *ndims)
{
  int64_t axis, outer = 1, n, inner = 1;

  if (!clinfer_node_attr_int (node, "axis", node->opset < 13 ? 1 : -1, &axis,
          NULL) || x->rank < 1 || axis < -x->rank || axis >= x->rank)
    return FALSE;
  if (axis < 0)
    axis += x->rank;
  for (int i = 0; i < axis; i++)
    outer *= x->dims[i];
  for (int i = axis + 1; i < x->rank; i++)
    inner *= x->dims[i];
  n = x->dims[axis];
  if (node->opset < 13) {
    n *= inner;
    inner = 1;
  }
  d[0] = outer;
  d[1] = n;
  d[2] = inner;
  *ndims = inner == 1 ? 2 : 3;
  return outer > 0 && n > 0;
}

gboolean
clinfer_onednn_softmax_accepts (const ClinferPlan *plan, const ClinferStep *st)
{
  const ClinferNode *node = st->node;
  ClinferPortDesc *x = clinfer_node_input_desc (node, 0);
  const ClinferPortDesc *y = &node->outputs[0];
  dnnl_dims_t d;
  int nd;

  return is_op (node, "Softmax") && node->n_inputs == 1 && x
      && x->type == CLINFER_TYPE_F32 && y->type == CLINFER_TYPE_F32
      && x->value == NULL && clinfer_shape_is_static (&x->shape)
      && clinfer_shape_equal (&x->shape, &y->shape)
      && softmax_dims (node, &x->shape, d, &nd)
      && activation_slot (plan, st->in_slots[0]);
}

/* Rows at least this long run on softmax_columns (), split between the
 * threads when there are several. */
#define SOFTMAX_SPLIT_COLS 1024

/* Threads and rows softmax_columns () handles per parallel region. */
#define SPLIT_MAX_THREADS 64
#define SPLIT_ROWS 64

/* Softmax over long rows (a classifier's or a recogniser's scores after a
 * MatMul), each row split into one run of columns per thread: partial
 * maxima, a barrier, exp and partial sums, a barrier, the scaling. A
 * MatMul with few rows splits its output by columns too, so each thread
 * reads what its own core wrote; oneDNN's softmax splits by rows, and
 * half of every row then has to come over from the other core (4x slower
 * than one thread on a 2-vCPU VM whose vCPUs sit far apart). Runs are
 * multiples of 16 floats, so no two threads write one cache line. With
 * one thread it is also faster than oneDNN 2.6's jit softmax (40 x 6625:
 * 0.13 against 0.14-0.20 ms on Zen 4). */
void
clinfer_onednn_softmax_columns (const OnednnStep *s, const float *x, float *y)
{
  const ClinferCpuSimd *k = s->simd;
  int64_t rows = s->sm_rows, cols = s->sm_cols;
  /* Per thread, its partial maxima then sums of SPLIT_ROWS rows: thread
   * major, so each thread writes lines of its own (row-major, the
   * threads' values would share every line). */
  float part[2][SPLIT_MAX_THREADS * SPLIT_ROWS];

  for (int64_t r0 = 0; r0 < rows; r0 += SPLIT_ROWS) {
    int64_t nr = MIN (SPLIT_ROWS, rows - r0);

#pragma omp parallel num_threads (MIN (omp_get_max_threads (), SPLIT_MAX_THREADS))
    {
      int nt = omp_get_num_threads (), t = omp_get_thread_num ();
      int64_t c0 = t == 0 ? 0 : cols * t / nt / 16 * 16;
      int64_t c1 = t == nt - 1 ? cols : cols * (t + 1) / nt / 16 * 16;
      int64_t n = c1 - c0;
      float *mine[2] = { &part[0][t * SPLIT_ROWS], &part[1][t * SPLIT_ROWS] };

      for (int64_t r = 0; r < nr; r++)
        mine[0][r] = n > 0 ? k->row_max (x + (r0 + r) * cols + c0, n)
            : -INFINITY;
#pragma omp barrier
      for (int64_t r = 0; r < nr; r++) {
        float m = part[0][r];
        for (int i = 1; i < nt; i++)
          m = part[0][i * SPLIT_ROWS + r] > m ? part[0][i * SPLIT_ROWS + r] : m;
        mine[1][r] = n > 0 ? k->exp_sum (x + (r0 + r) * cols + c0,
            y + (r0 + r) * cols + c0, n, m) : 0.f;
      }
#pragma omp barrier
      for (int64_t r = 0; r < nr && n > 0; r++) {
        float sum = 0.f;
        for (int i = 0; i < nt; i++)
          sum += part[1][i * SPLIT_ROWS + r];
        k->scale (y + (r0 + r) * cols + c0, n, 1.f / sum);
      }
    }
  }
}

/* Plain operands bound in place, as for MatMul. */
gboolean
clinfer_onednn_softmax_build (ClinferOnednnPlan *oplan, OnednnStep *s,
    const ClinferStep *st, GError **error)
{
  ClinferPortDesc *x = clinfer_node_input_desc (st->node, 0);
  dnnl_dims_t d;
  dnnl_memory_desc_t md;
  dnnl_softmax_v2_desc_t sd;
  dnnl_primitive_desc_t pd;
  int nd;

  if (oplan->blocked[st->in_slots[0]] || oplan->blocked[st->out_slots[0]]
      || !softmax_dims (st->node, &x->shape, d, &nd))
    return FALSE;
  dnnl_memory_desc_init_by_tag (&md, nd, d, dnnl_f32,
      nd == 2 ? dnnl_ab : dnnl_abc);
  s->src.slot = st->in_slots[0];
  s->dst.slot = st->out_slots[0];
  s->z.slot = G_MAXUINT;
  if (nd == 2 && d[1] >= SOFTMAX_SPLIT_COLS) {
    s->simd = clinfer_cpu_simd_get (oplan->isa);
    s->sm_rows = d[0];
    s->sm_cols = d[1];
    s->src.md = s->src.slot_md = s->dst.md = s->dst.slot_md = md;
    g_free (st->kernel.name);
    ((ClinferStep *) st)->kernel.name = g_strdup_printf (
        "onednn-layout:softmax_column_split_%s", s->simd->isa_name);
    return TRUE;
  }
  if (dnnl_softmax_v2_forward_desc_init (&sd, dnnl_forward_inference,
          dnnl_softmax_accurate, &md, &md, 1) != dnnl_success
      || (pd = make_pd (oplan, &sd, error)) == NULL
      || !clinfer_onednn_primitive_create (s, pd, st, error))
    return FALSE;
  s->src.md = s->src.slot_md = md;
  s->dst.md = s->dst.slot_md = md;
  s->scratchpad_offset = 0;
  s->scratch_bytes = dnnl_memory_desc_get_size (&s->scratchpad_md);
  return TRUE;
}
