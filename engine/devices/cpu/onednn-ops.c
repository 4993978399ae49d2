/* clinfer — the oneDNN fast path's ops: which nodes it takes and the
 * primitives it builds for them at compile time (Conv / FusedConv with
 * bias, residual and activation post-ops and weights in the primitive's
 * preferred layout; MaxPool; the zero channel pad Concat (x, zeros)). */
#include "devices/cpu/onednn-internal.h"
#include "ops/conv.h"
#include <omp.h>
#include <stdlib.h>
#include <string.h>

#define SCRATCH_ALIGN 64
/* conv_wants_nhwc (): weights of at least this many bytes, and this many
 * times the input's elements. */
#define CONV_NHWC_MIN_WEIGHTS (512 * 1024)
#define CONV_NHWC_WEIGHTS_RATIO 4

static gboolean
is_op (const ClinferNode *node, const char *domain, const char *op_type)
{
  return clinfer_node_is_builtin_op (node, domain, op_type);
}

static gboolean
is_f32_4d (const ClinferPortDesc *d)
{
  return d && d->type == CLINFER_TYPE_F32 && d->shape.rank == 4
      && clinfer_shape_is_static (&d->shape);
}

static gboolean
slot_is (const ClinferPlan *plan, guint slot, ClinferSlotKind kind)
{
  return slot != G_MAXUINT
      && g_array_index (plan->slots, ClinferSlot, slot).kind == kind;
}

/* An activation input: produced at run time, in the arena or bound. */
static gboolean
activation_slot (const ClinferPlan *plan, guint slot)
{
  return slot_is (plan, slot, CLINFER_SLOT_ARENA)
      || slot_is (plan, slot, CLINFER_SLOT_INPUT);
}

static gboolean
conv_accepts (const ClinferPlan *plan, const ClinferStep *st)
{
  const ClinferNode *node = st->node;
  ClinferPortDesc *x = clinfer_node_input_desc (node, 0);
  ClinferPortDesc *w = clinfer_node_input_desc (node, 1);
  ClinferPortDesc *b = clinfer_node_input_desc (node, 2);
  ClinferPortDesc *z = node->n_inputs > 3 ? clinfer_node_input_desc (node, 3) : NULL;
  const ClinferConvParams *p = node->op_data;

  if (p == NULL || !is_f32_4d (x) || !is_f32_4d (w) || w->value == NULL
      || !is_f32_4d (&node->outputs[0]) || !activation_slot (plan, st->in_slots[0]))
    return FALSE;
  if (b && (b->value == NULL || b->type != CLINFER_TYPE_F32))
    return FALSE;
  if (z && (!is_f32_4d (z) || !activation_slot (plan, st->in_slots[3])))
    return FALSE;
  return p->group >= 1 && x->shape.dims[1] % p->group == 0
      && w->shape.dims[0] % p->group == 0
      && w->shape.dims[1] * p->group == x->shape.dims[1];
}

static gboolean
deconv_accepts (const ClinferPlan *plan, const ClinferStep *st)
{
  const ClinferNode *node = st->node;
  ClinferPortDesc *x = clinfer_node_input_desc (node, 0);
  ClinferPortDesc *w = clinfer_node_input_desc (node, 1);
  ClinferPortDesc *b = clinfer_node_input_desc (node, 2);

  return node->n_inputs <= 3 && is_f32_4d (x) && is_f32_4d (w)
      && w->value != NULL && is_f32_4d (&node->outputs[0])
      && activation_slot (plan, st->in_slots[0])
      && (b == NULL || (b->value != NULL && b->type == CLINFER_TYPE_F32));
}

static gboolean
pool_accepts (const ClinferPlan *plan, const ClinferStep *st)
{
  const ClinferNode *node = st->node;
  ClinferPortDesc *x = clinfer_node_input_desc (node, 0);
  int64_t storage = 0;

  return node->n_outputs == 1 && is_f32_4d (x) && is_f32_4d (&node->outputs[0])
      && activation_slot (plan, st->in_slots[0])
      && clinfer_node_attr_int (node, "storage_order", 0, &storage, NULL);
}

/* Concat (x, zeros) along channels of 4-D f32: a channel pad. */
static gboolean
pad_channels_accepts (const ClinferPlan *plan, const ClinferStep *st)
{
  const ClinferNode *node = st->node;
  ClinferPortDesc *x = clinfer_node_input_desc (node, 0);
  ClinferPortDesc *zeros = node->n_inputs == 2 ? clinfer_node_input_desc (node, 1) : NULL;
  int64_t axis = 0;
  const float *v;

  if (!is_f32_4d (x) || zeros == NULL || !is_f32_4d (zeros) || zeros->value == NULL
      || x->value != NULL || !activation_slot (plan, st->in_slots[0])
      || !clinfer_node_attr_int (node, "axis", 0, &axis, NULL)
      || (axis != 1 && axis != -3))
    return FALSE;
  for (int i = 0; i < 4; i++)
    if (i != 1 && x->shape.dims[i] != zeros->shape.dims[i])
      return FALSE;
  v = clinfer_tensor_get_const_data (zeros->value);
  for (int64_t i = 0; i < clinfer_tensor_get_n_elements (zeros->value); i++)
    if (v[i] != 0.f)
      return FALSE;
  return TRUE;
}

/* Concat along channels of 4-D f32 arena activations (2 to 64 of them,
 * distinct, batch 1, the same height and width): the blocked concat. */
static gboolean
concat_accepts (const ClinferPlan *plan, const ClinferStep *st)
{
  const ClinferNode *node = st->node;
  const ClinferShape *y = &node->outputs[0].shape;
  int64_t axis = 0;

  if (node->n_inputs < 2 || node->n_inputs > 64 || !is_f32_4d (&node->outputs[0])
      || y->dims[0] != 1 || !clinfer_node_attr_int (node, "axis", 0, &axis, NULL)
      || (axis != 1 && axis != -3))
    return FALSE;
  for (guint i = 0; i < node->n_inputs; i++) {
    ClinferPortDesc *x = clinfer_node_input_desc (node, i);
    if (x == NULL || !is_f32_4d (x) || x->value != NULL
        || !slot_is (plan, st->in_slots[i], CLINFER_SLOT_ARENA)
        || x->shape.dims[0] != 1 || x->shape.dims[2] != y->dims[2]
        || x->shape.dims[3] != y->dims[3])
      return FALSE;
    for (guint j = 0; j < i; j++)
      if (st->in_slots[j] == st->in_slots[i])
        return FALSE;
  }
  return TRUE;
}

gboolean
clinfer_onednn_accepts (const ClinferPlan *plan, const ClinferStep *st,
    OnednnOpKind *kind)
{
  const ClinferNode *node = st->node;

  if (st->dynamic || node->n_outputs < 1
      || !slot_is (plan, st->out_slots[0], CLINFER_SLOT_ARENA))
    return FALSE;
  if (is_op (node, "", "Conv") || is_op (node, "com.clinfer", "FusedConv")) {
    *kind = ONEDNN_OP_CONV;
    return conv_accepts (plan, st);
  }
  if (is_op (node, "", "ConvTranspose")) {
    *kind = ONEDNN_OP_DECONV;
    return deconv_accepts (plan, st);
  }
  if (is_op (node, "", "MaxPool")) {
    *kind = ONEDNN_OP_POOL;
    return pool_accepts (plan, st);
  }
  if (is_op (node, "", "Concat")) {
    *kind = ONEDNN_OP_PAD_CHANNELS;
    if (pad_channels_accepts (plan, st))
      return TRUE;
    *kind = ONEDNN_OP_CONCAT;
    return concat_accepts (plan, st);
  }
  if (is_op (node, "", "Transpose")) {
    *kind = ONEDNN_OP_TRANSPOSE;
    return clinfer_onednn_transpose_accepts (plan, st);
  }
  if (is_op (node, "", "MatMul")) {
    *kind = ONEDNN_OP_MATMUL;
    return clinfer_onednn_matmul_accepts (plan, st);
  }
  if (is_op (node, "", "Softmax")) {
    *kind = ONEDNN_OP_SOFTMAX;
    return clinfer_onednn_softmax_accepts (plan, st);
  }
  return clinfer_onednn_eltwise_accepts (plan, st, kind);
}

/* oneDNN's implementation name of @pd ("jit:avx512_core", ...). */
static const char *
onednn_impl (const_dnnl_primitive_desc_t pd)
{
  const char *impl = NULL;

  if (dnnl_primitive_desc_query (pd, dnnl_query_impl_info_str, 0, &impl)
      != dnnl_success || impl == NULL)
    return "unknown";
  return impl;
}

char *
clinfer_onednn_impl_name (const_dnnl_primitive_desc_t pd)
{
  return g_strdup_printf ("onednn:%s", onednn_impl (pd));
}

static gsize
align_up (gsize n)
{
  return (n + SCRATCH_ALIGN - 1) & ~(gsize) (SCRATCH_ALIGN - 1);
}

/* Primitive from @pd (freed), its scratchpad placed at the start of the
 * step's scratch region. */
/* oneDNN's reference implementations are far slower than the C kernels
 * (a deconvolution to a plain dst took 129 ms instead of 0.6): a step
 * whose primitive would be one stays on the C kernels (its builder
 * returns FALSE without an error, which unclaims it). */
gboolean
clinfer_onednn_pd_is_reference (const_dnnl_primitive_desc_t pd)
{
  const char *impl = NULL;

  return dnnl_primitive_desc_query (pd, dnnl_query_impl_info_str, 0, &impl)
      != dnnl_success || impl == NULL || g_str_has_prefix (impl, "ref");
}

gboolean
clinfer_onednn_primitive_create (OnednnStep *s, dnnl_primitive_desc_t pd,
    const ClinferStep *st, GError **error)
{
  const dnnl_memory_desc_t *sp = dnnl_primitive_desc_query_md (pd,
      dnnl_query_scratchpad_md, 0);
  gboolean ok;

  if (clinfer_onednn_pd_is_reference (pd)) {
    dnnl_primitive_desc_destroy (pd);
    return FALSE;
  }
  if (sp)
    s->scratchpad_md = *sp;
  g_free (st->kernel.name);
  ((ClinferStep *) st)->kernel.name = clinfer_onednn_impl_name (pd);
  ok = clinfer_onednn_check (dnnl_primitive_create (&s->prim, pd),
      "creating a primitive", error);
  dnnl_primitive_desc_destroy (pd);
  return ok;
}

/* Attributes with the user-managed scratchpad (callers add post-ops). */
gboolean
clinfer_onednn_make_attr (dnnl_primitive_attr_t *attr, GError **error)
{
  if (!clinfer_onednn_check (dnnl_primitive_attr_create (attr),
          "creating attributes", error))
    return FALSE;
  return clinfer_onednn_check (dnnl_primitive_attr_set_scratchpad_mode (*attr,
          dnnl_scratchpad_mode_user), "setting the scratchpad mode", error);
}

static gboolean
append_activation (dnnl_post_ops_t po, const ClinferConvParams *p)
{
  switch (p->act) {
    case CLINFER_ACT_RELU:
      return dnnl_post_ops_append_eltwise (po, 1.f, dnnl_eltwise_relu, 0.f, 0.f)
          == dnnl_success;
    case CLINFER_ACT_LEAKY_RELU:
      return dnnl_post_ops_append_eltwise (po, 1.f, dnnl_eltwise_relu,
          p->act_alpha, 0.f) == dnnl_success;
    case CLINFER_ACT_CLIP:
      return dnnl_post_ops_append_eltwise (po, 1.f, dnnl_eltwise_clip_v2,
          p->act_min, p->act_max) == dnnl_success;
    default:
      return TRUE;
  }
}

/* The eltwise steps fused into a conv (after its own activation) or a
 * MatMul: @post[0 .. n). */
static gboolean
append_fused (dnnl_post_ops_t po, const OnednnEltwise *post, guint n)
{
  gboolean ok = TRUE;

  for (guint i = 0; ok && i < n; i++) {
    const OnednnEltwise *e = &post[i];
    ok = dnnl_post_ops_append_eltwise (po, 1.f, e->alg, e->alpha, e->beta)
        == dnnl_success
        && (e->alg2 == 0 || dnnl_post_ops_append_eltwise (po, 1.f, e->alg2,
                e->alpha2, e->beta2) == dnnl_success);
  }
  return ok;
}

/* The scratchpad mode and post-ops: a residual z (binary add, or sum
 * when @as_sum; none when @z_md is NULL), @p's activation (@p may be
 * NULL), then @post[0 .. n). On failure *attr is destroyed. */
static gboolean
post_ops_attr (const dnnl_memory_desc_t *z_md, gboolean as_sum,
    const ClinferConvParams *p, const OnednnEltwise *post, guint n,
    dnnl_primitive_attr_t *attr, GError **error)
{
  dnnl_post_ops_t po = NULL;
  gboolean ok;

  if (!clinfer_onednn_make_attr (attr, error))
    return FALSE;
  if (!clinfer_onednn_check (dnnl_post_ops_create (&po), "creating post-ops",
          error)) {
    dnnl_primitive_attr_destroy (*attr);
    *attr = NULL;
    return FALSE;
  }
  ok = z_md == NULL
      || (as_sum ? dnnl_post_ops_append_sum (po, 1.f)
          : dnnl_post_ops_append_binary (po, dnnl_binary_add, z_md)) == dnnl_success;
  ok = ok && (p == NULL || append_activation (po, p))
      && append_fused (po, post, n)
      && dnnl_primitive_attr_set_post_ops (*attr, po) == dnnl_success;
  dnnl_post_ops_destroy (po);
  if (!ok) {
    dnnl_primitive_attr_destroy (*attr);
    *attr = NULL;
    g_set_error (error, CLINFER_ERROR, CLINFER_ERROR_DEVICE,
        "oneDNN: cannot set the post-ops");
  }
  return ok;
}

gboolean
clinfer_onednn_eltwise_attr (const OnednnEltwise *post, guint n,
    dnnl_primitive_attr_t *attr, GError **error)
{
  return post_ops_attr (NULL, FALSE, NULL, post, n, attr, error);
}

/* Post-ops of FusedConv: residual, activation, the fused eltwise steps. */
static gboolean
conv_attr (const ClinferConvParams *p, const OnednnStep *s,
    const dnnl_memory_desc_t *z_md, gboolean as_sum,
    dnnl_primitive_attr_t *attr, GError **error)
{
  return post_ops_attr (z_md, as_sum, p, s->post, s->n_post, attr, error);
}

/* Reorders the constant @t (plain, @user_md) into a new buffer of @want. */
gboolean
clinfer_onednn_constant_new (dnnl_engine_t engine, const ClinferTensor *t,
    const dnnl_memory_desc_t *user_md, const dnnl_memory_desc_t *want,
    void **data, dnnl_memory_t *mem, GError **error)
{
  dnnl_memory_t src = NULL;
  dnnl_primitive_desc_t pd = NULL;
  dnnl_primitive_t r = NULL;
  dnnl_stream_t stream = NULL;
  gsize bytes = dnnl_memory_desc_get_size (want);
  gboolean ok;

  *data = g_aligned_alloc0 (MAX (bytes, 1), 1, SCRATCH_ALIGN);
  ok = clinfer_onednn_check (dnnl_memory_create (mem, want, engine, *data),
          "creating the weights", error)
      && clinfer_onednn_check (dnnl_memory_create (&src, user_md, engine,
              (void *) clinfer_tensor_get_const_data ((ClinferTensor *) t)),
          "wrapping the weights", error)
      && clinfer_onednn_check (dnnl_reorder_primitive_desc_create (&pd, user_md,
              engine, want, engine, NULL), "reordering the weights", error)
      && clinfer_onednn_check (dnnl_primitive_create (&r, pd),
          "reordering the weights", error)
      && clinfer_onednn_check (dnnl_stream_create (&stream, engine,
              dnnl_stream_default_flags), "creating a stream", error);
  if (ok) {
    dnnl_exec_arg_t args[] = { { DNNL_ARG_FROM, src }, { DNNL_ARG_TO, *mem } };
    ok = clinfer_onednn_check (dnnl_primitive_execute (r, stream, 2, args),
            "reordering the weights", error)
        && clinfer_onednn_check (dnnl_stream_wait (stream),
            "reordering the weights", error);
  }
  if (stream)
    dnnl_stream_destroy (stream);
  if (r)
    dnnl_primitive_destroy (r);
  if (pd)
    dnnl_primitive_desc_destroy (pd);
  if (src)
    dnnl_memory_destroy (src);
  return ok;
}

void
clinfer_onednn_operands_in_place (OnednnStep *s, guint src_slot,
    const dnnl_memory_desc_t *src_md, guint dst_slot,
    const dnnl_memory_desc_t *dst_md)
{
  s->src.slot = src_slot;
  s->src.md = s->src.slot_md = *src_md;
  s->dst.slot = dst_slot;
  s->dst.md = s->dst.slot_md = *dst_md;
  s->z.slot = G_MAXUINT;
  s->scratchpad_offset = 0;
  s->scratch_bytes = dnnl_memory_desc_get_size (&s->scratchpad_md);
}

/* Lays out the step's scratch: scratchpad first, then the operands'
 * temporaries. */
gboolean
clinfer_onednn_place_operands (ClinferOnednnPlan *oplan, OnednnStep *s, const ClinferStep *st,
    const dnnl_memory_desc_t *src_md, const dnnl_memory_desc_t *z_md,
    const dnnl_memory_desc_t *dst_md, GError **error)
{
  gsize end = align_up (dnnl_memory_desc_get_size (&s->scratchpad_md));

  s->scratchpad_offset = 0;
  if (!clinfer_onednn_operand_init (oplan, &s->src, st->in_slots[s->src_input],
          src_md, FALSE, &end, error)
      || (z_md && !clinfer_onednn_operand_init (oplan, &s->z,
              st->in_slots[s->z_input],
              z_md, FALSE, &end, error))
      || !clinfer_onednn_operand_init (oplan, &s->dst, s->out_slot, dst_md,
          TRUE, &end, error))
    return FALSE;
  s->scratch_bytes = end;
  return TRUE;
}

typedef struct {
  dnnl_memory_desc_t src, weights, bias, dst, z, user_weights;
  dnnl_dims_t strides, dilates, pad_l, pad_r;
} ConvDescs;

static gboolean
conv_descs (ClinferOnednnPlan *oplan, const ClinferStep *st, ConvDescs *d,
    GError **error)
{
  const ClinferNode *node = st->node;
  const ClinferConvParams *p = node->op_data;
  ClinferPortDesc *x = clinfer_node_input_desc (node, 0);
  ClinferPortDesc *w = clinfer_node_input_desc (node, 1);
  const ClinferShape *y = &node->outputs[0].shape;
  ClinferWindow win;
  dnnl_memory_desc_t slot_md;
  int64_t g = p->group, m = w->shape.dims[0];

  if (!clinfer_conv_window (node, &x->shape, &w->shape, &win, error))
    return FALSE;
  if (win.n != 2)
    return TRUE;
  for (int i = 0; i < 2; i++) {
    d->strides[i] = win.stride[i];
    d->dilates[i] = win.dilation[i] - 1;
    d->pad_l[i] = win.pad_begin[i];
    d->pad_r[i] = win.pad_end[i];
  }
  /* A few input channels (the first layer): plain input, no reorder. */
  clinfer_onednn_slot_md (oplan, st->in_slots[0], &slot_md);
  if (!oplan->blocked[st->in_slots[0]] && x->shape.dims[1] <= 4)
    d->src = slot_md;
  else
    clinfer_onednn_md_4d (&x->shape, oplan->block_tag, &d->src);
  clinfer_onednn_md_4d (y, oplan->block_tag, &d->dst);
  d->z = d->dst;
  if (g == 1) {
    dnnl_dims_t wd = { m, w->shape.dims[1], w->shape.dims[2], w->shape.dims[3] };
    dnnl_memory_desc_init_by_tag (&d->user_weights, 4, wd, dnnl_f32, dnnl_oihw);
    dnnl_memory_desc_init_by_tag (&d->weights, 4, wd, dnnl_f32, dnnl_format_tag_any);
  } else {
    dnnl_dims_t wd = { g, m / g, w->shape.dims[1], w->shape.dims[2], w->shape.dims[3] };
    dnnl_memory_desc_init_by_tag (&d->user_weights, 5, wd, dnnl_f32, dnnl_goihw);
    dnnl_memory_desc_init_by_tag (&d->weights, 5, wd, dnnl_f32, dnnl_format_tag_any);
  }
  {
    dnnl_dims_t bd = { m };
    dnnl_memory_desc_init_by_tag (&d->bias, 1, bd, dnnl_f32, dnnl_x);
  }
  return TRUE;
}

/* Whether to try the conv of @st on NHWC operands first: oneDNN 2.6's
 * brgemm convolutions (brgconv) take only NHWC, and beat its blocked jit
 * kernels on a spatial kernel whose weights are large (at least
 * CONV_NHWC_MIN_WEIGHTS bytes, half a Zen 4 core's L2, so they come from
 * L3 in a model) and outweigh the activations (at least
 * CONV_NHWC_WEIGHTS_RATIO times the input). jit -> brgconv with the
 * operands' reorders, in the model, 1 thread: open-nsfw's 3x3 convs with
 * 256 channels on 7x7 (2.4 MB, 47x the input) 0.61 -> 0.49 ms (2 threads
 * 0.325 -> 0.268), 128 on 14x14 (590 KB, 5.9x) 0.52 -> 0.50 (2 threads
 * equal) and strided to 7x7 0.174 -> 0.149; smaller weights lose:
 * u2netp's 64 channels on 10x10 (147 KB, 5.8x) 0.072 -> 0.095, open-nsfw's
 * 64 strided to 14x14 (147 KB, 0.74x) 0.147 -> 0.172, its 32 on 56x56
 * 0.51 -> 0.59. brgconv_1x1 on 7x7 and 14x14 was slower too. */
static gboolean
conv_wants_nhwc (ClinferOnednnPlan *oplan, const ClinferStep *st)
{
  const ClinferConvParams *p = st->node->op_data;
  ClinferPortDesc *x = clinfer_node_input_desc (st->node, 0);
  ClinferPortDesc *w = clinfer_node_input_desc (st->node, 1);
  int64_t nw = clinfer_shape_n_elements (&w->shape);

  return p->group == 1 && oplan->blocked[st->in_slots[0]]
      && oplan->block_tag == dnnl_nChw16c && w->shape.rank == 4
      && w->shape.dims[2] * w->shape.dims[3] > 1
      && nw * (int64_t) sizeof (float) >= CONV_NHWC_MIN_WEIGHTS
      && nw >= CONV_NHWC_WEIGHTS_RATIO * clinfer_shape_n_elements (&x->shape);
}

/* The convolution's primitive desc with @attr, NULL when unimplemented. */
static dnnl_primitive_desc_t
conv_pd (ClinferOnednnPlan *oplan, ConvDescs *d, gboolean with_bias,
    dnnl_primitive_attr_t attr)
{
  dnnl_convolution_desc_t cd;
  dnnl_primitive_desc_t pd = NULL;

  if (dnnl_dilated_convolution_forward_desc_init (&cd, dnnl_forward_inference,
          dnnl_convolution_direct, &d->src, &d->weights,
          with_bias ? &d->bias : NULL, &d->dst, d->strides, d->dilates,
          d->pad_l, d->pad_r) != dnnl_success
      || dnnl_primitive_desc_create (&pd, &cd, attr, oplan->engine, NULL)
          != dnnl_success)
    return NULL;
  return pd;
}

/* Reorders the weights (and bias) into what @pd wants, creates the
 * primitive and places the operands: shared by Conv and ConvTranspose. */
static gboolean
conv_finish (ClinferOnednnPlan *oplan, OnednnStep *s, const ClinferStep *st,
    dnnl_primitive_desc_t pd, ConvDescs *d, gboolean has_z, GError **error)
{
  ClinferPortDesc *w = clinfer_node_input_desc (st->node, 1);
  ClinferPortDesc *b = clinfer_node_input_desc (st->node, 2);
  const dnnl_memory_desc_t *wmd = dnnl_primitive_desc_query_md (pd,
      dnnl_query_weights_md, 0);

  if (clinfer_onednn_pd_is_reference (pd)) {
    dnnl_primitive_desc_destroy (pd);
    return FALSE;
  }
  if (!clinfer_onednn_constant_new (oplan->engine, w->value, &d->user_weights, wmd,
          &s->weights_data, &s->weights, error)
      || (b && !clinfer_onednn_constant_new (oplan->engine, b->value, &d->bias, &d->bias,
              &s->bias_data, &s->bias, error))) {
    dnnl_primitive_desc_destroy (pd);
    return FALSE;
  }
  if (!clinfer_onednn_primitive_create (s, pd, st, error))
    return FALSE;
  return clinfer_onednn_place_operands (oplan, s, st, &d->src, has_z ? &d->z : NULL, &d->dst,
      error);
}

/* The plain one-channel output of a *_to_one step @s reading @src,
 * both placed, and the step's kernel name (@name, taken). */
static gboolean
to_one_operands (ClinferOnednnPlan *oplan, OnednnStep *s,
    const ClinferStep *st, const dnnl_memory_desc_t *src, char *name,
    GError **error)
{
  dnnl_memory_desc_t dst;
  gsize end = 0;

  g_free (st->kernel.name);
  ((ClinferStep *) st)->kernel.name = name;
  clinfer_onednn_md_4d (&st->node->outputs[0].shape, dnnl_nchw, &dst);
  s->src_input = 0;
  if (!clinfer_onednn_operand_init (oplan, &s->src, st->in_slots[0], src,
          FALSE, &end, error)
      || !clinfer_onednn_operand_init (oplan, &s->dst, s->out_slot, &dst, TRUE,
          &end, error))
    return FALSE;
  s->scratch_bytes = end;
  return TRUE;
}

/* ---------------------------------------------------------------- */
/* Convs to one output channel                                       */

/* oneDNN 2.6 pads a conv's one output channel to a whole block of 8 or 16
 * and computes them all: basic-pitch's 8 -> 1 5x5 conv on 172 x 264 took
 * 3.8 ms for 9 M multiply-adds. conv_to_one () computes the one channel
 * as dot products along the input's contiguous floats (the channel block,
 * or a kernel row of a plain input). */
#define CONV1_SPLIT_MACS (1 << 18)
#define CONV1_MAX_SEGMENTS (1 << 20)

gboolean
clinfer_onednn_conv_to_one_candidate (const ClinferStep *st)
{
  const ClinferNode *node = st->node;
  const ClinferConvParams *p = node->op_data;

  return p != NULL && p->group == 1 && node->outputs[0].shape.rank == 4
      && node->outputs[0].shape.dims[1] == 1
      && (node->n_inputs <= 3 || node->inputs[3].node == NULL);
}

void
clinfer_onednn_conv_to_one (const OnednnStep *s, const float *x, float *y)
{
  const ClinferCpuConvOneArgs *a = &s->conv1;
  const ClinferCpuConvGeom *g = &a->g;
  gsize in_image = (gsize) s->n_blocks * g->ih * a->row_floats;
  gsize out_image = (gsize) g->oh * g->ow;
  /* Rows, split into column chunks when there are few (a 1-D conv has
   * one): about four tasks a thread. */
  int nt = omp_get_max_threads ();
  int64_t rows = s->batch * g->oh;
  int64_t n_chunks = MAX (1, MIN (g->ow / 64, (4 * nt + rows - 1) / rows));
  int64_t chunk = (g->ow + n_chunks - 1) / n_chunks;
  gboolean split = (double) out_image * s->batch * a->n_seg * a->seg_len
      >= CONV1_SPLIT_MACS;

#pragma omp parallel for schedule (static) if (split)
  for (int64_t t = 0; t < rows * n_chunks; t++) {
    int64_t r = t / n_chunks, n = r / g->oh;
    int oy = (int) (r % g->oh), ox0 = (int) (t % n_chunks * chunk);
    int ox1 = (int) MIN (g->ow, ox0 + chunk);
    if (ox0 < ox1)
      s->simd->conv_to_one (a, x + n * in_image, y + n * out_image + oy * g->ow,
          oy, ox0, ox1);
  }
}

/* The conv_to_one () form of conv step @s when it fits
 * (clinfer_onednn_conv_to_one_candidate ()): the input blocked, plain
 * with kernel rows of whole vectors and no dilation along x, or plain
 * with 4 channels or more (reordered to blocked); the output plain (one
 * channel always is). */
static gboolean
conv_to_one_build (ClinferOnednnPlan *oplan, OnednnStep *s,
    const ClinferStep *st, GError **error)
{
  const ClinferNode *node = st->node;
  const ClinferConvParams *p = node->op_data;
  ClinferPortDesc *x = clinfer_node_input_desc (node, 0);
  ClinferPortDesc *w = clinfer_node_input_desc (node, 1);
  ClinferPortDesc *b = clinfer_node_input_desc (node, 2);
  ClinferCpuConvOneArgs *a = &s->conv1;
  ClinferCpuConvGeom *g = &a->g;
  const ClinferCpuSimd *k = clinfer_cpu_simd_get (oplan->isa);
  gboolean blocked = oplan->blocked[st->in_slots[0]];
  int64_t block = oplan->block_tag == dnnl_nChw16c ? 16 : 8, vw = k->nr / 2;
  int64_t cin = x->shape.dims[1], n_blocks, lanes, n_seg, seg_len;
  gboolean plain_rows;
  ClinferWindow win;
  dnnl_memory_desc_t src;
  const float *wv;
  float *wp;
  int sg = 0;

  if (!clinfer_conv_window (node, &x->shape, &w->shape, &win, error))
    return FALSE;
  if (oplan->blocked[st->out_slots[0]]
      || !clinfer_cpu_conv_geom_from_window (&win, g))
    return FALSE;
  /* A plain input is read as it is when its kernel rows are whole
   * vectors; with 4 channels or more it is otherwise reordered into the
   * blocked layout first (fewer leave most lanes idle: oneDNN then). */
  plain_rows = !blocked && g->dw == 1 && g->kw % vw == 0;
  if (!blocked && !plain_rows) {
    if (cin < 4)
      return FALSE;
    blocked = TRUE;
  }
  if (blocked) {
    if (block % vw != 0)
      return FALSE;
    n_blocks = (cin + block - 1) / block;
    lanes = block;
    seg_len = block;
    n_seg = (int64_t) g->kh * n_blocks * g->kw;
  } else {
    n_blocks = cin;
    lanes = 1;
    seg_len = g->kw;
    n_seg = (int64_t) g->kh * cin;
  }
  if (n_seg > CONV1_MAX_SEGMENTS
      || cin * g->ih * (int64_t) g->iw * lanes > G_MAXINT32
      || seg_len * n_seg > G_MAXINT32)
    return FALSE;
  a->n_seg = n_seg;
  a->seg_len = seg_len;
  a->px_floats = lanes;
  a->row_floats = (ptrdiff_t) g->iw * lanes;
  a->bias = b ? *(const float *) clinfer_tensor_get_const_data (b->value) : 0.f;
  a->ep.act = p->act;
  a->ep.min = p->act_min;
  a->ep.max = p->act_max;
  a->ep.alpha = p->act_alpha;
  /* Segment tables in one block: offsets, kx, ky starts. */
  s->aux_data = g_malloc0 (n_seg * (sizeof (ptrdiff_t) + sizeof (int))
      + (g->kh + 1) * sizeof (int));
  {
    ptrdiff_t *off = s->aux_data;
    int *kx_of = (int *) (off + n_seg), *ky_start = kx_of + n_seg;
    ptrdiff_t plane = (ptrdiff_t) g->ih * a->row_floats;

    wp = g_aligned_alloc0 (n_seg * seg_len, sizeof (float), 64);
    wv = clinfer_tensor_get_const_data (w->value);
    for (int ky = 0; ky < g->kh; ky++) {
      ky_start[ky] = sg;
      for (int64_t c = 0; c < n_blocks; c++)
        for (int kx = 0; kx < (blocked ? g->kw : 1); kx++, sg++) {
          off[sg] = c * plane + (ptrdiff_t) ky * g->dh * a->row_floats
              + (ptrdiff_t) kx * g->dw * lanes;
          kx_of[sg] = kx;
          if (blocked)
            for (int64_t l = 0; l < block && c * block + l < cin; l++)
              wp[sg * seg_len + l] = wv[((c * block + l) * g->kh + ky) * g->kw + kx];
          else
            for (int j = 0; j < g->kw; j++)
              wp[sg * seg_len + j] = wv[(c * g->kh + ky) * g->kw + j];
        }
    }
    ky_start[g->kh] = sg;
    a->seg_off = off;
    a->seg_kx = blocked ? kx_of : NULL;
    a->ky_start = ky_start;
  }
  a->w = wp;
  s->weights_data = wp;
  s->simd = k;
  s->batch = x->shape.dims[0];
  s->n_blocks = n_blocks;
  if (oplan->blocked[st->in_slots[0]])
    clinfer_onednn_view_md (oplan, st->in_slots[0], &x->shape, &src);
  else if (blocked)
    clinfer_onednn_md_4d (&x->shape, oplan->block_tag, &src);
  else
    clinfer_onednn_md_4d (&x->shape, dnnl_nchw, &src);
  return to_one_operands (oplan, s, st, &src, g_strdup_printf (
          "onednn-layout:conv%dx%d_to_one_%s_%s", g->kh, g->kw,
          blocked ? (block == 16 ? "nChw16c" : "nChw8c") : "nchw",
          k->isa_name), error);
}

gboolean
clinfer_onednn_conv_build (ClinferOnednnPlan *oplan, OnednnStep *s,
    const ClinferStep *st, GError **error)
{
  const ClinferNode *node = st->node;
  const ClinferConvParams *p = node->op_data;
  ClinferPortDesc *b = clinfer_node_input_desc (node, 2);
  gboolean has_z = node->n_inputs > 3 && node->inputs[3].node != NULL;
  dnnl_primitive_attr_t attr = NULL;
  dnnl_primitive_desc_t pd = NULL;
  ConvDescs d = { 0 };
  dnnl_memory_desc_t blocked_src, blocked_dst;
  GError *local = NULL;

  /* conv_to_one_build () declines (FALSE, no error) only before it
   * allocates anything, so @s is still clean for oneDNN's conv. */
  if (clinfer_onednn_conv_to_one_candidate (st)) {
    if (conv_to_one_build (oplan, s, st, &local))
      return TRUE;
    if (local) {
      g_propagate_error (error, local);
      return FALSE;
    }
  }
  if (!conv_descs (oplan, st, &d, error))
    return FALSE;
  if (d.src.ndims == 0)
    return FALSE;              /* not 2-D */
  blocked_src = d.src;
  blocked_dst = d.dst;
  for (int nhwc = conv_wants_nhwc (oplan, st); nhwc >= 0 && pd == NULL;
      nhwc--) {
    d.src = blocked_src;
    d.dst = blocked_dst;
    if (nhwc) {
      /* The blocked slots are reordered into temporaries around it. */
      dnnl_memory_desc_init_by_tag (&d.src, 4, blocked_src.dims, dnnl_f32,
          dnnl_nhwc);
      dnnl_memory_desc_init_by_tag (&d.dst, 4, blocked_dst.dims, dnnl_f32,
          dnnl_nhwc);
    }
    d.z = d.dst;
    /* The residual as a binary post-op reads it in the kernel; where the
     * implementation lacks that, it is copied into dst for a sum post-op. */
    for (int as_sum = 0; as_sum < 2 && pd == NULL; as_sum++) {
      if (!conv_attr (p, s, has_z ? &d.z : NULL, as_sum, &attr, error))
        return FALSE;
      pd = conv_pd (oplan, &d, b != NULL, attr);
      dnnl_primitive_attr_destroy (attr);
      s->z_as_sum = as_sum;
      if (nhwc && pd && !g_str_has_prefix (onednn_impl (pd), "brg")) {
        dnnl_primitive_desc_destroy (pd);
        pd = NULL;
      }
      if (!has_z)
        break;
    }
  }
  if (pd == NULL)
    return FALSE;
  /* A reference implementation is refused in conv_finish (primitive
   * creation); with post-ops the plan then unfuses and tries again. */
  return conv_finish (oplan, s, st, pd, &d, has_z, error);
}

/* ConvTranspose geometry from the node's attributes and the inferred
 * output extents; FALSE (no error) for what the deconvolution cannot
 * express exactly (output_shape, auto_pad SAME, pads the output_padding
 * would make negative). */
static gboolean
deconv_descs (ClinferOnednnPlan *oplan, const ClinferStep *st, ConvDescs *d,
    int64_t *group, GError **error)
{
  const ClinferNode *node = st->node;
  ClinferPortDesc *x = clinfer_node_input_desc (node, 0);
  ClinferPortDesc *w = clinfer_node_input_desc (node, 1);
  const ClinferShape *y = &node->outputs[0].shape;
  ClinferWindowAttrs a;
  int64_t out_shape[CLINFER_MAX_SPATIAL + 2], g, m;
  gsize n_out_shape = 0;

  if (!clinfer_window_attrs_parse (node, FALSE, &a, error)
      || !clinfer_conv_group_attr (node, group, error)
      || !clinfer_window_read_ints (node, "output_shape", 0,
          CLINFER_MAX_SPATIAL + 2, out_shape, &n_out_shape, error))
    return FALSE;
  if (n_out_shape > 0 || a.auto_pad == CLINFER_AUTO_PAD_SAME_UPPER
      || a.auto_pad == CLINFER_AUTO_PAD_SAME_LOWER)
    return TRUE;
  g = *group;
  m = w->shape.dims[1] * g;
  if (y->dims[1] != m || x->shape.dims[1] != w->shape.dims[0]
      || w->shape.dims[0] % g != 0)
    return TRUE;
  for (int i = 0; i < 2; i++) {
    int64_t s = a.n_strides ? a.strides[i] : 1;
    int64_t dl = a.n_dilations ? a.dilations[i] : 1;
    int64_t k = w->shape.dims[2 + i];
    gboolean pads = a.auto_pad == CLINFER_AUTO_PAD_NOTSET && a.n_pads;

    d->strides[i] = s;
    d->dilates[i] = dl - 1;
    d->pad_l[i] = pads ? a.pads[i] : 0;
    d->pad_r[i] = (x->shape.dims[2 + i] - 1) * s + (k - 1) * dl + 1
        - d->pad_l[i] - y->dims[2 + i];
    if (d->pad_r[i] < 0)
      return TRUE;
  }
  clinfer_onednn_md_4d (&x->shape, oplan->block_tag, &d->src);
  clinfer_onednn_md_4d (y, oplan->block_tag, &d->dst);
  /* ONNX weights are [C_in, C_out / group, kH, kW]: "io" order. */
  if (g == 1) {
    dnnl_dims_t wd = { m, w->shape.dims[0], w->shape.dims[2], w->shape.dims[3] };
    dnnl_memory_desc_init_by_tag (&d->user_weights, 4, wd, dnnl_f32, dnnl_iohw);
    dnnl_memory_desc_init_by_tag (&d->weights, 4, wd, dnnl_f32, dnnl_format_tag_any);
  } else {
    dnnl_dims_t wd = { g, m / g, w->shape.dims[0] / g, w->shape.dims[2],
      w->shape.dims[3] };
    dnnl_memory_desc_init_by_tag (&d->user_weights, 5, wd, dnnl_f32, dnnl_giohw);
    dnnl_memory_desc_init_by_tag (&d->weights, 5, wd, dnnl_f32, dnnl_format_tag_any);
  }
  {
    dnnl_dims_t bd = { m };
    dnnl_memory_desc_init_by_tag (&d->bias, 1, bd, dnnl_f32, dnnl_x);
  }
  return TRUE;
}

/* ConvTranspose steps of at least this many outputs split their rows
 * between the threads. */
#define DECONV_SPLIT_OUTPUTS 8192

/* A ConvTranspose to one channel whose kernel equals its stride, from a
 * blocked input to the plain output (a text detector's final map: DBNet's
 * 24 -> 1 channels, 2 x 2 stride 2 to 320 x 320): oneDNN 2.6 pads the one
 * output channel to a whole block and takes 0.55 ms for 2.5 M
 * multiply-adds; the simd table's deconv_to_one () works per input pixel,
 * four taps' dot products at once (0.27 ms). Rows split between the
 * threads. */
void
clinfer_onednn_deconv_to_one (const OnednnStep *s, const float *x, float *y)
{
  const ClinferCpuDeconvArgs *a = &s->deconv;
  gsize in_image = (gsize) s->n_blocks * a->ih * a->iw * a->block;
  gsize out_image = (gsize) a->ih * a->kh * a->iw * a->kw;

#pragma omp parallel if (s->batch * (int64_t) out_image >= DECONV_SPLIT_OUTPUTS)
  {
    int nt = omp_get_num_threads (), t = omp_get_thread_num ();
    int iy0 = a->ih * t / nt, iy1 = a->ih * (t + 1) / nt;

    for (int64_t n = 0; n < s->batch && iy1 > iy0; n++)
      s->simd->deconv_to_one (a, x + n * in_image, y + n * out_image, iy0, iy1);
  }
}

/* The deconv_to_one () form of ConvTranspose step @s when it fits: one
 * output channel, kernel = stride, no pads or dilation, group 1, the
 * input blocked and the output plain. */
static gboolean
deconv_to_one_build (ClinferOnednnPlan *oplan, OnednnStep *s,
    const ClinferStep *st, const ConvDescs *d, int64_t group, GError **error)
{
  const ClinferNode *node = st->node;
  ClinferPortDesc *x = clinfer_node_input_desc (node, 0);
  ClinferPortDesc *w = clinfer_node_input_desc (node, 1);
  ClinferPortDesc *b = clinfer_node_input_desc (node, 2);
  const ClinferShape *y = &node->outputs[0].shape;
  ClinferCpuDeconvArgs *a = &s->deconv;
  const ClinferCpuSimd *k = clinfer_cpu_simd_get (oplan->isa);
  int64_t block = oplan->block_tag == dnnl_nChw16c ? 16 : 8, vw = k->nr / 2;
  int64_t cin = x->shape.dims[1], kh = w->shape.dims[2], kw = w->shape.dims[3];
  dnnl_memory_desc_t src;
  const float *wv;
  float *mem;

  if (d->src.ndims == 0 || group != 1 || y->dims[1] != 1
      || !oplan->blocked[st->in_slots[0]] || oplan->blocked[st->out_slots[0]]
      || block % vw != 0 || kh * kw > CLINFER_CPU_DECONV_MAX_TAPS
      || (cin + block - 1) / block * block / vw > CLINFER_CPU_DECONV_MAX_VEC
      || d->strides[0] != kh || d->strides[1] != kw || d->dilates[0] != 0
      || d->dilates[1] != 0 || d->pad_l[0] != 0 || d->pad_l[1] != 0
      || d->pad_r[0] != 0 || d->pad_r[1] != 0
      || x->shape.dims[2] * kh != y->dims[2] || x->shape.dims[3] * kw != y->dims[3]
      || y->dims[2] > G_MAXINT || y->dims[3] > G_MAXINT)
    return FALSE;
  s->simd = k;
  s->block = block;
  s->batch = x->shape.dims[0];
  s->n_blocks = (cin + block - 1) / block;
  a->block = (int) block;
  a->cin_vec = (int) (s->n_blocks * block / vw);
  a->ih = (int) x->shape.dims[2];
  a->iw = (int) x->shape.dims[3];
  a->kh = (int) kh;
  a->kw = (int) kw;
  a->bias = b ? *(const float *) clinfer_tensor_get_const_data (b->value) : 0.f;
  /* [tap][cin_vec][VW]: channel c of vector v is v * VW + lane; the taps
   * rounded up to 4 with zeros (the kernel does 4 at a time). */
  mem = g_aligned_alloc0 ((gsize) (kh * kw + 3) / 4 * 4 * a->cin_vec * vw,
      sizeof (float), 64);
  wv = clinfer_tensor_get_const_data (w->value);
  for (int64_t c = 0; c < cin; c++)
    for (int64_t t = 0; t < kh * kw; t++)
      mem[(t * a->cin_vec + c / vw) * vw + c % vw] = wv[c * kh * kw + t];
  a->w = mem;
  s->weights_data = mem;
  clinfer_onednn_view_md (oplan, st->in_slots[0], &x->shape, &src);
  return to_one_operands (oplan, s, st, &src, g_strdup_printf (
          "onednn-layout:deconv%dx%d_to_one_nChw%dc_%s", (int) kh, (int) kw,
          (int) block, k->isa_name), error);
}

gboolean
clinfer_onednn_deconv_build (ClinferOnednnPlan *oplan, OnednnStep *s,
    const ClinferStep *st, GError **error)
{
  gboolean with_bias = clinfer_node_input_desc (st->node, 2) != NULL;
  dnnl_deconvolution_desc_t dd;
  dnnl_primitive_attr_t attr = NULL;
  dnnl_primitive_desc_t pd = NULL;
  ConvDescs d = { 0 };
  int64_t group = 1;
  dnnl_status_t status;

  if (!deconv_descs (oplan, st, &d, &group, error))
    return FALSE;
  if (deconv_to_one_build (oplan, s, st, &d, group, error))
    return TRUE;
  if (d.src.ndims == 0)
    return FALSE;              /* not expressible */
  if (!clinfer_onednn_make_attr (&attr, error))
    return FALSE;
  status = dnnl_dilated_deconvolution_forward_desc_init (&dd,
      dnnl_forward_inference, dnnl_deconvolution_direct, &d.src, &d.weights,
      with_bias ? &d.bias : NULL, &d.dst, d.strides, d.dilates, d.pad_l,
      d.pad_r);
  if (status == dnnl_success)
    status = dnnl_primitive_desc_create (&pd, &dd, attr, oplan->engine, NULL);
  dnnl_primitive_attr_destroy (attr);
  if (status != dnnl_success)
    return FALSE;
  return conv_finish (oplan, s, st, pd, &d, FALSE, error);
}

void
clinfer_onednn_max_pool_blocked (const OnednnStep *s, const float *src,
    float *dst)
{
  const ClinferCpuConvGeom *g = &s->pool_geom;
  gsize in_plane = (gsize) g->ih * g->iw * s->block;
  gsize out_plane = (gsize) g->oh * g->ow * s->block;
  int64_t planes = s->batch * s->n_blocks;
  /* Row bands of about 4096 outputs: enough work per task for threads.
   * Band-major, so each thread takes the same rows of every channel block,
   * as the depthwise + 1x1 steps around split theirs (the lines it reads
   * and writes stay on its core). */
  int64_t rows = MAX (1, MIN (g->oh, 4096 / MAX (1, g->ow * s->block)));
  int64_t bands;

  rows = MIN (rows, MAX (1, (g->oh + omp_get_max_threads () - 1)
          / omp_get_max_threads ()));
  bands = (g->oh + rows - 1) / rows;

#pragma omp parallel for schedule (static) if (planes * bands > 1 && planes * out_plane > 8192)
  for (int64_t t = 0; t < planes * bands; t++) {
    int64_t p = t % planes, oy0 = t / planes * rows;
    s->simd->max_pool_blocked (g, (int) s->block, src + p * in_plane,
        dst + p * out_plane, (int) oy0, (int) MIN (oy0 + rows, g->oh));
  }
}

gboolean
clinfer_onednn_pool_build (ClinferOnednnPlan *oplan, OnednnStep *s,
    const ClinferStep *st, GError **error)
{
  const ClinferNode *node = st->node;
  ClinferPortDesc *x = clinfer_node_input_desc (node, 0);
  const ClinferShape *y = &node->outputs[0].shape;
  ClinferWindowAttrs attrs;
  ClinferWindow win;
  dnnl_dims_t strides, kernel, dilation, pad_l, pad_r;
  dnnl_memory_desc_t src, dst;
  dnnl_pooling_v2_desc_t pdesc;
  dnnl_primitive_attr_t attr = NULL;
  dnnl_primitive_desc_t pd = NULL;
  dnnl_status_t status;

  if (!clinfer_window_attrs_parse (node, TRUE, &attrs, error)
      || !clinfer_window_resolve (node, &attrs, 2, x->shape.dims + 2, NULL,
          &win, error))
    return FALSE;
  for (int i = 0; i < 2; i++) {
    strides[i] = win.stride[i];
    kernel[i] = win.kernel[i];
    dilation[i] = win.dilation[i] - 1;
    pad_l[i] = win.pad_begin[i];
    /* ceil_mode: the last window may start in the padding; max pooling
     * ignores padded cells, so the right pad just has to reach it. */
    pad_r[i] = MAX (win.pad_end[i], (y->dims[2 + i] - 1) * win.stride[i]
        + (win.kernel[i] - 1) * win.dilation[i] + 1 - x->shape.dims[2 + i]
        - win.pad_begin[i]);
    if (win.pad_begin[i] >= win.kernel[i])
      return FALSE;
  }
  /* Both sides blocked: clinfer's own kernel pools the channel-padded view
   * (the same bytes; zero channels pool to zero). oneDNN 2.6's jit pooling
   * costs several times a memory pass at BlazeFace's sizes, and takes a
   * slower tail path on a partial last block. */
  s->simd = clinfer_cpu_simd_get (oplan->isa);
  s->block = oplan->block_tag == dnnl_nChw16c ? 16 : 8;
  if (oplan->blocked[st->in_slots[0]] && oplan->blocked[s->out_slot]
      && s->block % (s->simd->nr / 2) == 0
      && clinfer_cpu_conv_geom_from_window (&win, &s->pool_geom)) {
    /* ceil_mode: the output extents are the node's. */
    s->pool_geom.oh = y->dims[2];
    s->pool_geom.ow = y->dims[3];
    clinfer_onednn_view_md (oplan, st->in_slots[0], &x->shape, &src);
    clinfer_onednn_view_md (oplan, s->out_slot, y, &dst);
    s->batch = x->shape.dims[0];
    s->n_blocks = (x->shape.dims[1] + s->block - 1) / s->block;
    g_free (st->kernel.name);
    ((ClinferStep *) st)->kernel.name = g_strdup_printf (
        "onednn-layout:max_pool_nChw%dc_%s", (int) s->block, s->simd->isa_name);
    return clinfer_onednn_place_operands (oplan, s, st, &src, NULL, &dst,
        error);
  }
  clinfer_onednn_md_4d (&x->shape, oplan->block_tag, &src);
  clinfer_onednn_md_4d (y, oplan->block_tag, &dst);
  if (!clinfer_onednn_make_attr (&attr, error))
    return FALSE;
  status = dnnl_pooling_v2_forward_desc_init (&pdesc, dnnl_forward_inference,
      dnnl_pooling_max, &src, &dst, strides, kernel, dilation, pad_l, pad_r);
  if (status == dnnl_success)
    status = dnnl_primitive_desc_create (&pd, &pdesc, attr, oplan->engine, NULL);
  dnnl_primitive_attr_destroy (attr);
  if (status != dnnl_success)
    return FALSE;
  if (!clinfer_onednn_primitive_create (s, pd, st, error))
    return FALSE;
  return clinfer_onednn_place_operands (oplan, s, st, &src, NULL, &dst, error);
}

/* The transpose's perm: 1 for (0, 2, 3, 1) (NCHW to NHWC), 2 for
 * (0, 3, 1, 2) (NHWC to NCHW), else 0. */
static int
transpose_kind (const ClinferNode *node)
{
  static const int64_t to_nhwc[] = { 0, 2, 3, 1 }, to_nchw[] = { 0, 3, 1, 2 };
  const int64_t *perm = NULL;
  gsize n = 0;

  if (!clinfer_node_attr_ints (node, "perm", &perm, &n, NULL) || n != 4)
    return 0;
  if (memcmp (perm, to_nhwc, sizeof (to_nhwc)) == 0)
    return 1;
  return memcmp (perm, to_nchw, sizeof (to_nchw)) == 0 ? 2 : 0;
}

gboolean
clinfer_onednn_transpose_accepts (const ClinferPlan *plan,
    const ClinferStep *st)
{
  ClinferPortDesc *x = clinfer_node_input_desc (st->node, 0);

  return st->node->n_inputs == 1 && x && is_f32_4d (x) && x->value == NULL
      && is_f32_4d (&st->node->outputs[0])
      && activation_slot (plan, st->in_slots[0]) && transpose_kind (st->node);
}

/* A layout change as one oneDNN reorder: NCHW to NHWC reads the input in
 * its slot's layout (blocked, when a fast-path step wrote it: no reorder
 * to plain before, no second pass) and writes the output as the NHWC
 * layout of the input's dims; NHWC to NCHW reads the input that way and
 * writes the plain output. The output stays plain (decide_layouts ()).
 * BlazeFace: its input and its four NHWC outputs. */
gboolean
clinfer_onednn_transpose_build (ClinferOnednnPlan *oplan, OnednnStep *s,
    const ClinferStep *st, GError **error)
{
  ClinferPortDesc *x = clinfer_node_input_desc (st->node, 0);
  const ClinferShape *y = &st->node->outputs[0].shape;
  dnnl_memory_desc_t src, dst;
  dnnl_primitive_desc_t pd = NULL;

  if (oplan->blocked[st->out_slots[0]])
    return FALSE;
  if (transpose_kind (st->node) == 1) {
    clinfer_onednn_slot_md (oplan, st->in_slots[0], &src);
    clinfer_onednn_md_4d (&x->shape, dnnl_nhwc, &dst);
  } else {
    if (oplan->blocked[st->in_slots[0]])
      return FALSE;
    clinfer_onednn_md_4d (y, dnnl_nhwc, &src);
    clinfer_onednn_md_4d (y, dnnl_nchw, &dst);
  }
  if (dnnl_reorder_primitive_desc_create (&pd, &src, oplan->engine, &dst,
          oplan->engine, NULL) != dnnl_success)
    return FALSE;
  if (!clinfer_onednn_primitive_create (s, pd, st, error))
    return FALSE;
  clinfer_onednn_operands_in_place (s, st->in_slots[0], &src, s->out_slot,
      &dst);
  return TRUE;
}

/* Channel concat of blocked tensors whose channels are whole blocks: in
 * a blocked layout the output is the inputs' blocks one after the other,
 * so each input can live in the output at its blocks' offset (an alias,
 * planned as one region) and their producers write the output directly;
 * the step then does nothing. Anything else (a partial block, a plain
 * input, a graph output, an input another step already keeps in its
 * output) stays on the C kernels. */
gboolean
clinfer_onednn_concat_build (ClinferOnednnPlan *oplan, OnednnStep *s,
    const ClinferStep *st, GError **error)
{
  ClinferPlan *plan = oplan->plan;
  int64_t block = oplan->block_tag == dnnl_nChw16c ? 16 : 8;
  const ClinferSlot *y = &g_array_index (plan->slots, ClinferSlot,
      st->out_slots[0]);

  if (!oplan->blocked[st->out_slots[0]] || y->is_output || y->aliased)
    return FALSE;
  for (guint i = 0; i < st->node->n_inputs; i++) {
    const ClinferSlot *x = &g_array_index (plan->slots, ClinferSlot,
        st->in_slots[i]);
    if (!oplan->blocked[st->in_slots[i]] || x->is_output || x->aliased
        || clinfer_node_input_desc (st->node, i)->shape.dims[1] % block != 0)
      return FALSE;
  }
  s->block = block;
  g_free (st->kernel.name);
  ((ClinferStep *) st)->kernel.name = g_strdup_printf (
      "onednn-layout:concat_in_place_nChw%dc", (int) block);
  return TRUE;
}

void
clinfer_onednn_concat_alias (ClinferOnednnPlan *oplan, const OnednnStep *s)
{
  ClinferPlan *plan = oplan->plan;
  const ClinferStep *st = &g_array_index (plan->steps, ClinferStep, s->step);
  const ClinferShape *y = &st->node->outputs[0].shape;
  gsize offset = 0;

  for (guint i = 0; i < st->node->n_inputs; i++) {
    ClinferSlot *x = &g_array_index (plan->slots, ClinferSlot, st->in_slots[i]);
    x->aliased = TRUE;
    x->alias_of = st->out_slots[0];
    x->alias_offset = offset;
    offset += (gsize) clinfer_node_input_desc (st->node, i)->shape.dims[1]
        * y->dims[2] * y->dims[3] * sizeof (float);
  }
}

gboolean
clinfer_onednn_pad_channels_build (ClinferOnednnPlan *oplan, OnednnStep *s,
    const ClinferStep *st, GError **error)
{
  ClinferPortDesc *x = clinfer_node_input_desc (st->node, 0);
  const ClinferShape *y = &st->node->outputs[0].shape;
  dnnl_memory_desc_t src, dst;

  /* In a blocked layout the channels past x's are x's zero padding and
   * then whole blocks: a copy of x's blocks and zeros after them. */
  clinfer_onednn_md_4d (&x->shape, oplan->block_tag, &src);
  clinfer_onednn_md_4d (y, oplan->block_tag, &dst);
  s->batch = x->shape.dims[0];
  s->copy_bytes = dnnl_memory_desc_get_size (&src) / MAX (s->batch, 1);
  s->out_bytes = dnnl_memory_desc_get_size (&dst) / MAX (s->batch, 1);
  s->c_in = x->shape.dims[1];
  s->block = oplan->block_tag == dnnl_nChw16c ? 16 : 8;
  s->hw = x->shape.dims[2] * x->shape.dims[3];
  g_free (st->kernel.name);
  ((ClinferStep *) st)->kernel.name = g_strdup_printf ("onednn-layout:pad_channels_%s",
      oplan->block_tag == dnnl_nChw16c ? "nChw16c" : "nChw8c");
  return clinfer_onednn_place_operands (oplan, s, st, &src, NULL, &dst, error);
}
