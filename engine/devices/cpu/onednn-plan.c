/* clinfer — the oneDNN fast path's plan and run: claiming steps, layout
 * propagation (activations stay blocked between claimed steps, reorders
 * only at boundaries), re-planning the arena for the blocked slots, one
 * scratch per request for reorder temporaries and the user-managed
 * scratchpads, and executing a claimed step. */
#include "devices/cpu/onednn-internal.h"
#include "ops/conv.h"
#include <omp.h>
#include <stdlib.h>
#include <string.h>

#define SCRATCH_ALIGN 64

typedef struct {
  dnnl_memory_t src_slot, src, z_slot, z, dst_slot, dst, scratchpad;
  dnnl_exec_arg_t args[8];
  int n_args;
} RunStep;

struct _ClinferOnednnRun {
  ClinferOnednnPlan *oplan;
  dnnl_stream_t stream;
  void *scratch;
  RunStep *steps;
};

gboolean
clinfer_onednn_enabled (void)
{
  const char *v = g_getenv ("CLINFER_CPU_ONEDNN");
  return v == NULL || strcmp (v, "0") != 0;
}

gboolean
clinfer_onednn_check (dnnl_status_t status, const char *what, GError **error)
{
  if (status == dnnl_success)
    return TRUE;
  g_set_error (error, CLINFER_ERROR, CLINFER_ERROR_DEVICE,
      "oneDNN: %s failed (status %d)", what, (int) status);
  return FALSE;
}

dnnl_engine_t
clinfer_onednn_engine (GError **error)
{
  static gsize once = 0;
  static dnnl_engine_t engine = NULL;
  static dnnl_status_t status = dnnl_success;

  if (g_once_init_enter (&once)) {
    status = dnnl_engine_create (&engine, dnnl_cpu, 0);
    g_once_init_leave (&once, 1);
  }
  if (!clinfer_onednn_check (status, "creating the CPU engine", error))
    return NULL;
  return engine;
}

void
clinfer_onednn_md_4d (const ClinferShape *shape, dnnl_format_tag_t tag,
    dnnl_memory_desc_t *md)
{
  dnnl_dims_t dims = { shape->dims[0], shape->dims[1], shape->dims[2],
    shape->dims[3] };
  dnnl_memory_desc_init_by_tag (md, 4, dims, dnnl_f32, tag);
}

void
clinfer_onednn_pad_channels_shape (const ClinferOnednnPlan *oplan,
    ClinferShape *shape)
{
  int64_t b = oplan->block_tag == dnnl_nChw16c ? 16 : 8;
  shape->dims[1] = (shape->dims[1] + b - 1) / b * b;
}

void
clinfer_onednn_view_md (const ClinferOnednnPlan *oplan, guint slot,
    const ClinferShape *shape, dnnl_memory_desc_t *md)
{
  ClinferShape s = *shape;

  if (slot != G_MAXUINT && oplan->blocked[slot])
    clinfer_onednn_pad_channels_shape (oplan, &s);
  clinfer_onednn_md_4d (&s, oplan->block_tag, md);
}

void
clinfer_onednn_slot_md (const ClinferOnednnPlan *oplan, guint slot,
    dnnl_memory_desc_t *md)
{
  const ClinferSlot *s = &g_array_index (oplan->plan->slots, ClinferSlot, slot);
  clinfer_onednn_md_4d (&s->shape, oplan->blocked[slot] ? oplan->block_tag
      : dnnl_nchw, md);
}

gboolean
clinfer_onednn_operand_init (ClinferOnednnPlan *oplan, OnednnOperand *o,
    guint slot, const dnnl_memory_desc_t *want, gboolean is_output,
    gsize *scratch_end, GError **error)
{
  dnnl_primitive_desc_t pd = NULL;
  dnnl_primitive_attr_t attr = NULL;
  const dnnl_memory_desc_t *sp;
  gboolean ok;

  o->slot = slot;
  o->md = *want;
  clinfer_onednn_slot_md (oplan, slot, &o->slot_md);
  if (dnnl_memory_desc_equal (&o->slot_md, want))
    return TRUE;
  if (oplan->blocked[slot]) {
    /* The channel-padded view of a blocked slot: the same bytes. */
    ClinferShape padded = g_array_index (oplan->plan->slots, ClinferSlot,
        slot).shape;
    clinfer_onednn_pad_channels_shape (oplan, &padded);
    clinfer_onednn_md_4d (&padded, oplan->block_tag, &o->slot_md);
    if (dnnl_memory_desc_equal (&o->slot_md, want))
      return TRUE;
    clinfer_onednn_slot_md (oplan, slot, &o->slot_md);
  }
  ok = clinfer_onednn_check (dnnl_primitive_attr_create (&attr),
          "creating attributes", error)
      && clinfer_onednn_check (dnnl_primitive_attr_set_scratchpad_mode (attr,
              dnnl_scratchpad_mode_user), "setting the scratchpad mode", error)
      && clinfer_onednn_check (dnnl_reorder_primitive_desc_create (&pd,
              is_output ? want : &o->slot_md, oplan->engine,
              is_output ? &o->slot_md : want, oplan->engine, attr),
          "creating a layout reorder", error);
  if (attr)
    dnnl_primitive_attr_destroy (attr);
  if (!ok)
    return FALSE;
  /* Plain <-> blocked reorders need no scratchpad; refuse one that does
   * rather than share the primitive's. */
  sp = dnnl_primitive_desc_query_md (pd, dnnl_query_scratchpad_md, 0);
  if (sp && dnnl_memory_desc_get_size (sp) > 0) {
    dnnl_primitive_desc_destroy (pd);
    g_set_error (error, CLINFER_ERROR, CLINFER_ERROR_DEVICE,
        "oneDNN: a layout reorder needs a scratchpad");
    return FALSE;
  }
  ok = clinfer_onednn_check (dnnl_primitive_create (&o->reorder, pd),
      "creating a layout reorder", error);
  dnnl_primitive_desc_destroy (pd);
  o->temp_offset = *scratch_end;
  *scratch_end += (dnnl_memory_desc_get_size (want) + SCRATCH_ALIGN - 1)
      & ~(gsize) (SCRATCH_ALIGN - 1);
  return ok;
}

static void
operand_clear (OnednnOperand *o)
{
  if (o->reorder)
    dnnl_primitive_destroy (o->reorder);
  o->reorder = NULL;
}

static void
step_clear (OnednnStep *s)
{
  operand_clear (&s->src);
  operand_clear (&s->z);
  operand_clear (&s->dst);
  if (s->prim)
    dnnl_primitive_destroy (s->prim);
  if (s->prim2)
    dnnl_primitive_destroy (s->prim2);
  if (s->weights)
    dnnl_memory_destroy (s->weights);
  if (s->bias)
    dnnl_memory_destroy (s->bias);
  g_aligned_free (s->weights_data);
  g_aligned_free (s->bias_data);
  g_free (s->aux_data);
  memset (s, 0, sizeof (*s));
}

void
clinfer_onednn_plan_free (ClinferOnednnPlan *oplan)
{
  if (oplan == NULL)
    return;
  for (guint i = 0; i < oplan->steps->len; i++)
    step_clear (&g_array_index (oplan->steps, OnednnStep, i));
  g_array_unref (oplan->steps);
  g_free (oplan->step_index);
  g_free (oplan->fused_into);
  g_free (oplan->blocked);
  g_free (oplan);
}

gboolean
clinfer_onednn_plan_owns_step (const ClinferOnednnPlan *oplan, guint step)
{
  return oplan && step < oplan->plan->steps->len && oplan->step_index[step] >= 0;
}

/* A slot stays blocked when a claimed step writes it and only claimed
 * steps read it (never a graph output), and it has more than one
 * channel. */
static void
decide_layouts (ClinferOnednnPlan *oplan, const gboolean *claimed,
    const OnednnOpKind *kinds)
{
  ClinferPlan *plan = oplan->plan;
  guint n_slots = plan->slots->len;
  g_autofree gboolean *plain_reader = g_new0 (gboolean, MAX (n_slots, 1));

  memset (oplan->blocked, 0, sizeof (gboolean) * MAX (n_slots, 1));
  for (guint i = 0; i < plan->steps->len; i++) {
    ClinferStep *st = &g_array_index (plan->steps, ClinferStep, i);
    /* a bias Add fused into a MatMul is written by it, plain */
    gboolean plain = !claimed[i] || kinds[i] == ONEDNN_OP_MATMUL
        || kinds[i] == ONEDNN_OP_SOFTMAX || (kinds[i] == ONEDNN_OP_FUSED
            && kinds[oplan->fused_into[i]] == ONEDNN_OP_MATMUL);
    for (guint j = 0; j < st->node->n_inputs; j++)
      if (st->in_slots[j] != G_MAXUINT && plain)
        plain_reader[st->in_slots[j]] = TRUE;
    /* One channel stays plain: blocked, it would take 8 or 16 times its
     * bytes, and every step after it would read and write them (ocr-det's
     * 1 x 1 x 320 x 320 map: its bias Add and Sigmoid 0.18 -> 0.06 ms). A
     * transpose reads any layout and writes a plain one. */
    if (!plain && kinds[i] != ONEDNN_OP_TRANSPOSE
        && !(st->node->outputs[0].shape.rank == 4
            && st->node->outputs[0].shape.dims[1] == 1))
      oplan->blocked[st->out_slots[0]] = TRUE;
  }
  for (guint i = 0; i < n_slots; i++) {
    ClinferSlot *s = &g_array_index (plan->slots, ClinferSlot, i);
    if (plain_reader[i] || s->is_output || s->kind != CLINFER_SLOT_ARENA)
      oplan->blocked[i] = FALSE;
  }
}

static gboolean
build_step (ClinferOnednnPlan *oplan, OnednnStep *s, ClinferStep *st,
    GError **error)
{
  switch (s->kind) {
    case ONEDNN_OP_CONV:
      return clinfer_onednn_conv_build (oplan, s, st, error);
    case ONEDNN_OP_DECONV:
      return clinfer_onednn_deconv_build (oplan, s, st, error);
    case ONEDNN_OP_POOL:
      return clinfer_onednn_pool_build (oplan, s, st, error);
    case ONEDNN_OP_PAD_CHANNELS:
      return clinfer_onednn_pad_channels_build (oplan, s, st, error);
    case ONEDNN_OP_CONCAT:
      return clinfer_onednn_concat_build (oplan, s, st, error);
    case ONEDNN_OP_TRANSPOSE:
      return clinfer_onednn_transpose_build (oplan, s, st, error);
    case ONEDNN_OP_ELTWISE:
    case ONEDNN_OP_BINARY:
    case ONEDNN_OP_AVG_POOL:
    case ONEDNN_OP_RESAMPLE:
      return clinfer_onednn_eltwise_build (oplan, s, st, error);
    case ONEDNN_OP_MATMUL:
      return clinfer_onednn_matmul_build (oplan, s, st, error);
    case ONEDNN_OP_SOFTMAX:
      return clinfer_onednn_softmax_build (oplan, s, st, error);
    case ONEDNN_OP_DWPW:
      for (guint i = 0; i < s->step; i++)
        if (oplan->fused_into[i] == (int) s->step)
          return clinfer_onednn_dwpw_build (oplan, s, st,
              &g_array_index (oplan->plan->steps, ClinferStep, i), error);
      return FALSE;
    case ONEDNN_OP_UPSAMPLE_ADD:
      for (guint i = 0; i < s->step; i++)
        if (oplan->fused_into[i] == (int) s->step)
          return clinfer_onednn_upsample_add_build (oplan, s, st,
              &g_array_index (oplan->plan->steps, ClinferStep, i), error);
      return FALSE;
    case ONEDNN_OP_FUSED:
      return TRUE;
  }
  return FALSE;
}

/* The eltwise algorithms a conv's post-ops use so far. oneDNN 2.6's jit
 * convs give every post-op of one algorithm the parameters of the first
 * (seen with two linear post-ops): a step whose algorithm is there with
 * other parameters is not fused; consecutive linears are composed. */
typedef struct {
  dnnl_alg_kind_t alg[2 * ONEDNN_MAX_POST_OPS + 1];
  float alpha[2 * ONEDNN_MAX_POST_OPS + 1], beta[2 * ONEDNN_MAX_POST_OPS + 1];
  guint n;
} PostOpAlgs;

static gboolean
post_alg_fits (const PostOpAlgs *u, dnnl_alg_kind_t alg, float alpha,
    float beta)
{
  for (guint i = 0; alg != 0 && i < u->n; i++)
    if (u->alg[i] == alg && (u->alpha[i] != alpha || u->beta[i] != beta))
      return FALSE;
  return TRUE;
}

static void
post_alg_add (PostOpAlgs *u, dnnl_alg_kind_t alg, float alpha, float beta)
{
  if (alg == 0 || u->n >= G_N_ELEMENTS (u->alg))
    return;
  u->alg[u->n] = alg;
  u->alpha[u->n] = alpha;
  u->beta[u->n] = beta;
  u->n++;
}

/* The conv's own activation (FusedConv), as append_activation adds it. */
static void
post_algs_init (PostOpAlgs *u, const ClinferNode *conv)
{
  const ClinferConvParams *p = conv->op_data;

  u->n = 0;
  if (p == NULL)
    return;
  if (p->act == CLINFER_ACT_RELU)
    post_alg_add (u, dnnl_eltwise_relu, 0.f, 0.f);
  else if (p->act == CLINFER_ACT_LEAKY_RELU)
    post_alg_add (u, dnnl_eltwise_relu, p->act_alpha, 0.f);
  else if (p->act == CLINFER_ACT_CLIP)
    post_alg_add (u, dnnl_eltwise_clip_v2, p->act_min, p->act_max);
}

/* A MatMul's only reader that adds a constant bias of N values (the
 * last dim) becomes the MatMul's bias: the Add step is claimed as
 * ONEDNN_OP_FUSED (no work) and the MatMul writes its output slot. */
static gboolean
fuse_matmul_bias (ClinferOnednnPlan *oplan, guint i, guint j,
    gboolean *claimed, OnednnOpKind *kinds)
{
  ClinferPlan *plan = oplan->plan;
  ClinferStep *mm = &g_array_index (plan->steps, ClinferStep, i);
  ClinferStep *add = &g_array_index (plan->steps, ClinferStep, j);
  const ClinferShape *y = &mm->node->outputs[0].shape;
  const ClinferNode *node = add->node;
  guint bi = node->n_inputs == 2 && add->in_slots[0] == mm->out_slots[0] ? 1 : 0;
  ClinferPortDesc *b = node->n_inputs == 2 ? clinfer_node_input_desc (node, bi)
      : NULL;
  ClinferSlot *out;

  if (b == NULL || !clinfer_node_is_builtin_op (node, "", "Add")
      || add->in_slots[1 - bi] != mm->out_slots[0] || b->value == NULL
      || b->type != CLINFER_TYPE_F32 || b->shape.rank > y->rank
      || clinfer_tensor_get_n_elements (b->value) != y->dims[y->rank - 1]
      || !clinfer_shape_equal (&node->outputs[0].shape, y))
    return FALSE;
  out = &g_array_index (plan->slots, ClinferSlot, add->out_slots[0]);
  if (out->kind != CLINFER_SLOT_ARENA)
    return FALSE;
  claimed[j] = TRUE;
  kinds[j] = ONEDNN_OP_FUSED;
  oplan->fused_into[j] = i;
  return TRUE;
}

/* Then a Relu, the only reader of what MatMul step @i (or its bias)
 * writes to slot @cur: a transformer's first feed-forward layer. Fused
 * the same way; the MatMul applies it as it stores its tiles, where a
 * step of its own would read the whole output back (lore's 1 x 54 x
 * 2048 at 2 threads: 0.12 ms, the other thread's columns included). A
 * MatMul of two activations always runs on oneDNN's primitive, which
 * takes any eltwise post-ops: there a chain of claimed eltwise steps is
 * fused (attention's scores divided by sqrt (d)). */
static void
fuse_matmul_relu (ClinferOnednnPlan *oplan, guint i, guint cur,
    const guint *n_readers, const guint *reader, gboolean *claimed,
    OnednnOpKind *kinds)
{
  ClinferPlan *plan = oplan->plan;
  ClinferStep *mm = &g_array_index (plan->steps, ClinferStep, i);
  ClinferPortDesc *b = clinfer_node_input_desc (mm->node, 1);
  gboolean any_eltwise = b && b->value == NULL;

  for (guint n_post = 0; n_post < ONEDNN_MAX_POST_OPS; n_post++) {
    ClinferStep *next;
    OnednnEltwise e;
    guint src;
    if (n_readers[cur] != 1
        || g_array_index (plan->slots, ClinferSlot, cur).is_output)
      return;
    next = &g_array_index (plan->steps, ClinferStep, reader[cur]);
    if (next->node->outputs[0].type != CLINFER_TYPE_F32
        || g_array_index (plan->slots, ClinferSlot,
            next->out_slots[0]).kind != CLINFER_SLOT_ARENA)
      return;
    if (!(clinfer_node_is_builtin_op (next->node, "", "Relu")
            && next->node->n_inputs == 1 && next->in_slots[0] == cur)
        && !(any_eltwise && claimed[reader[cur]]
            && kinds[reader[cur]] == ONEDNN_OP_ELTWISE
            && clinfer_onednn_eltwise_spec (next->node, &e, &src)
            && next->in_slots[src] == cur))
      return;
    claimed[reader[cur]] = TRUE;
    kinds[reader[cur]] = ONEDNN_OP_FUSED;
    oplan->fused_into[reader[cur]] = i;
    if (!any_eltwise)
      return;
    cur = next->out_slots[0];
  }
}

/* Post-op fusion: a claimed conv followed by eltwise steps, each the
 * only reader of the one before (never a graph output), runs them as
 * eltwise post-ops. The fused steps become ONEDNN_OP_FUSED (no work);
 * the conv writes the last one's output slot. */
static void
fuse_post_ops (ClinferOnednnPlan *oplan, gboolean *claimed,
    OnednnOpKind *kinds)
{
  ClinferPlan *plan = oplan->plan;
  guint n_slots = plan->slots->len, n = plan->steps->len;
  g_autofree guint *n_readers = g_new0 (guint, MAX (n_slots, 1));
  g_autofree guint *reader = g_new0 (guint, MAX (n_slots, 1));

  for (guint i = 0; i < n; i++) {
    ClinferStep *st = &g_array_index (plan->steps, ClinferStep, i);
    oplan->fused_into[i] = -1;
    for (guint j = 0; j < st->node->n_inputs; j++)
      if (st->in_slots[j] != G_MAXUINT) {
        n_readers[st->in_slots[j]]++;
        reader[st->in_slots[j]] = i;
      }
  }
  for (guint i = 0; i < n; i++) {
    ClinferStep *st = &g_array_index (plan->steps, ClinferStep, i);
    guint cur = st->out_slots[0], n_post = 0;
    PostOpAlgs used;
    OnednnEltwise last = { 0 };

    if (claimed[i] && kinds[i] == ONEDNN_OP_MATMUL) {
      if (n_readers[cur] == 1
          && !g_array_index (plan->slots, ClinferSlot, cur).is_output
          && fuse_matmul_bias (oplan, i, reader[cur], claimed, kinds))
        cur = g_array_index (plan->steps, ClinferStep,
            reader[cur]).out_slots[0];
      fuse_matmul_relu (oplan, i, cur, n_readers, reader, claimed, kinds);
      continue;
    }
    /* conv_to_one () applies the conv's own activation only. */
    if (!claimed[i] || kinds[i] != ONEDNN_OP_CONV
        || clinfer_onednn_conv_to_one_candidate (st))
      continue;
    post_algs_init (&used, st->node);
    while (n_post < ONEDNN_MAX_POST_OPS && n_readers[cur] == 1
        && !g_array_index (plan->slots, ClinferSlot, cur).is_output) {
      guint j = reader[cur], src;
      ClinferStep *next = &g_array_index (plan->steps, ClinferStep, j);
      OnednnEltwise e;
      gboolean composes;
      /* Swish as a post-op made oneDNN 2.6's jit:avx2 conv of 24 x 208
       * x 208 take 3.79 ms instead of 3.03; clinfer_onednn_swish () after
       * it takes 0.49 (Zen 4). */
      if (!claimed[j] || kinds[j] != ONEDNN_OP_ELTWISE
          || !clinfer_onednn_eltwise_spec (next->node, &e, &src)
          || next->in_slots[src] != cur || e.alg == dnnl_eltwise_swish)
        break;
      composes = n_post > 0 && last.alg == dnnl_eltwise_linear
          && last.alg2 == 0 && e.alg == dnnl_eltwise_linear && e.alg2 == 0;
      if (!composes && (!post_alg_fits (&used, e.alg, e.alpha, e.beta)
              || !post_alg_fits (&used, e.alg2, e.alpha2, e.beta2)))
        break;
      if (!composes) {
        post_alg_add (&used, e.alg, e.alpha, e.beta);
        post_alg_add (&used, e.alg2, e.alpha2, e.beta2);
      } else {
        /* The composed linear replaces the previous one's entry. */
        e.beta = e.alpha * last.beta + e.beta;
        e.alpha = e.alpha * last.alpha;
        used.alpha[used.n - 1] = e.alpha;
        used.beta[used.n - 1] = e.beta;
      }
      last = e;
      kinds[j] = ONEDNN_OP_FUSED;
      oplan->fused_into[j] = i;
      cur = next->out_slots[0];
      n_post++;
    }
  }
}

/* Per slot of @plan: how many step inputs read it (*n_readers) and the
 * step that writes it (*producer, -1 for none); both g_free ()d by the
 * caller. */
static void
readers_and_producers (const ClinferPlan *plan, guint **n_readers,
    int **producer)
{
  guint n_slots = plan->slots->len;

  *n_readers = g_new0 (guint, MAX (n_slots, 1));
  *producer = g_new (int, MAX (n_slots, 1));
  for (guint i = 0; i < n_slots; i++)
    (*producer)[i] = -1;
  for (guint i = 0; i < plan->steps->len; i++) {
    ClinferStep *st = &g_array_index (plan->steps, ClinferStep, i);
    for (guint j = 0; j < st->node->n_inputs; j++)
      if (st->in_slots[j] != G_MAXUINT)
        (*n_readers)[st->in_slots[j]]++;
    (*producer)[st->out_slots[0]] = (int) i;
  }
}

/* Transpose step @t can become strides of a MatMul's operand: f32 of
 * rank 3 or 4 with static shapes, its slots arena slots that are no graph
 * output and in no alias, not fused elsewhere. */
static gboolean
transpose_foldable (ClinferOnednnPlan *oplan, int t, int rank)
{
  ClinferPlan *plan = oplan->plan;
  ClinferStep *st;
  ClinferPortDesc *x;
  int perm[CLINFER_MAX_RANK];

  if (t < 0 || oplan->fused_into[t] >= 0)
    return FALSE;
  st = &g_array_index (plan->steps, ClinferStep, t);
  x = clinfer_node_input_desc (st->node, 0);
  if (!clinfer_node_is_builtin_op (st->node, "", "Transpose")
      || st->node->n_inputs != 1 || x == NULL || x->type != CLINFER_TYPE_F32
      || x->shape.rank != rank || !clinfer_shape_is_static (&x->shape)
      || !clinfer_transpose_perm (st->node, rank, perm, NULL))
    return FALSE;
  for (int k = 0; k < 2; k++) {
    ClinferSlot *s = &g_array_index (plan->slots, ClinferSlot,
        k ? st->out_slots[0] : st->in_slots[0]);
    if (s->kind != CLINFER_SLOT_ARENA || s->is_output || s->aliased)
      return FALSE;
  }
  return TRUE;
}

/* Attention's head Transposes around a MatMul of two activations (q and
 * v to [heads, tokens, dim], k to [heads, dim, tokens], the result back
 * to [tokens, heads, dim]) become strides of the MatMul's operands:
 * oneDNN's matmul reads and writes any strides. A Transpose that alone
 * reads the MatMul's output, or whose output the MatMul alone reads, is
 * claimed as ONEDNN_OP_FUSED; transpose_aliases () then puts the
 * transposed slot in the other one's bytes (lore: 24 Transposes, 0.21 ms
 * at 2 threads). */
static void
fuse_matmul_transposes (ClinferOnednnPlan *oplan, gboolean *claimed,
    OnednnOpKind *kinds)
{
  ClinferPlan *plan = oplan->plan;
  g_autofree guint *n_readers = NULL;
  g_autofree int *producer = NULL;

  readers_and_producers (plan, &n_readers, &producer);
  for (guint i = 0; i < plan->steps->len; i++) {
    ClinferStep *st = &g_array_index (plan->steps, ClinferStep, i);
    ClinferPortDesc *b = clinfer_node_input_desc (st->node, 1);
    int rank = st->node->outputs[0].shape.rank;
    guint o = st->out_slots[0];

    if (!claimed[i] || kinds[i] != ONEDNN_OP_MATMUL || b == NULL
        || b->value != NULL || (rank != 3 && rank != 4))
      continue;
    for (guint j = 0; j < 2; j++) {
      guint y = st->in_slots[j];
      int t = producer[y];
      if (n_readers[y] != 1 || (j == 1 && y == st->in_slots[0])
          || !transpose_foldable (oplan, t, rank))
        continue;
      claimed[t] = TRUE;
      kinds[t] = ONEDNN_OP_FUSED;
      oplan->fused_into[t] = (int) i;
    }
    if (n_readers[o] != 1)
      continue;
    for (guint r = i + 1; r < plan->steps->len; r++) {
      ClinferStep *rs = &g_array_index (plan->steps, ClinferStep, r);
      if (rs->node->n_inputs < 1 || rs->in_slots[0] != o)
        continue;
      if (transpose_foldable (oplan, (int) r, rank)) {
        claimed[r] = TRUE;
        kinds[r] = ONEDNN_OP_FUSED;
        oplan->fused_into[r] = (int) i;
      }
      break;
    }
  }
}

/* A depthwise conv whose only reader is a 1x1 conv, neither with fused
 * eltwise steps, runs with it as one ONEDNN_OP_DWPW step (onednn-dwpw.c):
 * the depthwise becomes ONEDNN_OP_FUSED (no work) with fused_into set to
 * the 1x1, which comes after it. */
static void
fuse_dw_pw (ClinferOnednnPlan *oplan, gboolean *claimed, OnednnOpKind *kinds)
{
  ClinferPlan *plan = oplan->plan;
  guint n = plan->steps->len;
  g_autofree guint *n_readers = NULL;
  g_autofree int *producer = NULL;
  g_autofree gboolean *has_post = g_new0 (gboolean, MAX (n, 1));

  readers_and_producers (plan, &n_readers, &producer);
  for (guint i = 0; i < n; i++)
    if (oplan->fused_into[i] >= 0)
      has_post[oplan->fused_into[i]] = TRUE;
  for (guint j = 0; j < n; j++) {
    ClinferStep *pw = &g_array_index (plan->steps, ClinferStep, j);
    guint slot = pw->in_slots[0];
    int i;

    if (!claimed[j] || kinds[j] != ONEDNN_OP_CONV || has_post[j]
        || slot == G_MAXUINT || n_readers[slot] != 1
        || g_array_index (plan->slots, ClinferSlot, slot).is_output)
      continue;
    i = producer[slot];
    if (i < 0 || !claimed[i] || kinds[i] != ONEDNN_OP_CONV || has_post[i]
        || !clinfer_onednn_dwpw_accepts (oplan,
            &g_array_index (plan->steps, ClinferStep, i), pw))
      continue;
    kinds[j] = ONEDNN_OP_DWPW;
    kinds[i] = ONEDNN_OP_FUSED;
    oplan->fused_into[i] = (int) j;
  }
}

/* An Add of two activations of its own shape, one of them the only
 * reader of a nearest Resize by whole factors (resize_matches ()), runs
 * with it as one ONEDNN_OP_UPSAMPLE_ADD step: the Resize becomes
 * ONEDNN_OP_FUSED with fused_into set to the Add. */
static void
fuse_resize_add (ClinferOnednnPlan *oplan, gboolean *claimed,
    OnednnOpKind *kinds)
{
  ClinferPlan *plan = oplan->plan;
  guint n = plan->steps->len;
  g_autofree guint *n_readers = NULL;
  g_autofree int *producer = NULL;

  readers_and_producers (plan, &n_readers, &producer);
  for (guint j = 0; j < n; j++) {
    ClinferStep *add = &g_array_index (plan->steps, ClinferStep, j);
    const ClinferNode *node = add->node;
    const ClinferShape *y = &node->outputs[0].shape;

    if (!claimed[j] || kinds[j] != ONEDNN_OP_BINARY || node->n_inputs != 2
        || !clinfer_node_is_builtin_op (node, "", "Add")
        || add->in_slots[0] == add->in_slots[1])
      continue;
    for (guint k = 0; k < 2; k++) {
      guint r = add->in_slots[k], z = add->in_slots[1 - k];
      ClinferPortDesc *zd = clinfer_node_input_desc (node, 1 - k);
      int i = r == G_MAXUINT ? -1 : producer[r];
      if (i < 0 || !claimed[i] || kinds[i] != ONEDNN_OP_RESAMPLE
          || oplan->fused_into[i] >= 0 || n_readers[r] != 1
          || g_array_index (plan->slots, ClinferSlot, r).is_output
          || z == G_MAXUINT || zd == NULL || zd->value != NULL
          || !clinfer_shape_equal (&zd->shape, y))
        continue;
      kinds[j] = ONEDNN_OP_UPSAMPLE_ADD;
      kinds[i] = ONEDNN_OP_FUSED;
      oplan->fused_into[i] = (int) j;
      break;
    }
  }
}

/* A Relu step: the last a per-channel chain takes. */
static gboolean
is_relu_step (const ClinferStep *st)
{
  OnednnEltwise e;
  guint src;

  return clinfer_onednn_eltwise_spec (st->node, &e, &src)
      && e.alg == dnnl_eltwise_relu && e.alpha == 0.f && e.alg2 == 0;
}

/* A per-channel constant step (Add, Sub, Mul, Div by one value per
 * channel) whose only reader is another, and so on, up to a Relu, runs
 * as one step (per_channel_chain_build ()): the others become
 * ONEDNN_OP_FUSED with fused_into set to the first. ocr-det's BatchNorm
 * after its first ConvTranspose (Mul, Add) and the Relu after it: three
 * passes over 24 x 160 x 160 in one. Not with CLINFER_CPU_PER_CHANNEL=0
 * (oneDNN's binary steps then). */
static void
fuse_per_channel_chain (ClinferOnednnPlan *oplan, gboolean *claimed,
    OnednnOpKind *kinds)
{
  ClinferPlan *plan = oplan->plan;
  guint n = plan->steps->len;
  g_autofree guint *n_readers = NULL;
  g_autofree int *producer = NULL;
  g_autofree int *reader = g_new (int, MAX (plan->slots->len, 1));

  if (g_strcmp0 (g_getenv ("CLINFER_CPU_PER_CHANNEL"), "0") == 0)
    return;
  readers_and_producers (plan, &n_readers, &producer);
  for (guint i = 0; i < plan->slots->len; i++)
    reader[i] = -1;
  for (guint i = 0; i < n; i++) {
    ClinferStep *st = &g_array_index (plan->steps, ClinferStep, i);
    for (guint j = 0; j < st->node->n_inputs; j++)
      if (st->in_slots[j] != G_MAXUINT)
        reader[st->in_slots[j]] = (int) i;
  }
  for (guint i = 0; i < n; i++) {
    ClinferStep *head = &g_array_index (plan->steps, ClinferStep, i);
    const ClinferTensor *c;
    guint cur = head->out_slots[0], x;
    int op, len = 0;

    if (!claimed[i] || kinds[i] != ONEDNN_OP_BINARY || oplan->fused_into[i] >= 0
        || !clinfer_onednn_per_channel_const (plan, head, &op, &c, &x))
      continue;
    while (len < 8 && n_readers[cur] == 1 && reader[cur] > (int) i
        && !g_array_index (plan->slots, ClinferSlot, cur).is_output) {
      int j = reader[cur];
      ClinferStep *f = &g_array_index (plan->steps, ClinferStep, j);
      gboolean relu = kinds[j] == ONEDNN_OP_ELTWISE && is_relu_step (f);
      if (!claimed[j] || oplan->fused_into[j] >= 0
          || !(relu || (kinds[j] == ONEDNN_OP_BINARY
                  && clinfer_onednn_per_channel_const (plan, f, &op, &c, &x)
                  && f->in_slots[x] == cur)))
        break;
      kinds[j] = ONEDNN_OP_FUSED;
      oplan->fused_into[j] = (int) i;
      cur = f->out_slots[0];
      len++;
      if (relu)
        break;
    }
  }
}

/* The post-ops and output slot of conv step @i from its fused steps. */
static void
collect_post_ops (ClinferOnednnPlan *oplan, guint i, OnednnStep *s)
{
  ClinferPlan *plan = oplan->plan;

  for (guint j = i + 1; j < plan->steps->len; j++) {
    ClinferStep *st = &g_array_index (plan->steps, ClinferStep, j);
    guint src;
    OnednnEltwise e, *prev = s->n_post ? &s->post[s->n_post - 1] : NULL;
    if (oplan->fused_into[j] != (int) i || s->n_post >= ONEDNN_MAX_POST_OPS)
      continue;
    clinfer_onednn_eltwise_spec (st->node, &e, &src);
    s->out_slot = st->out_slots[0];
    /* linear (a2, b2) after linear (a1, b1): linear (a1 a2, a2 b1 + b2),
     * as fuse_post_ops decided. */
    if (prev && prev->alg == dnnl_eltwise_linear && prev->alg2 == 0
        && e.alg == dnnl_eltwise_linear && e.alg2 == 0) {
      prev->beta = e.alpha * prev->beta + e.beta;
      prev->alpha = e.alpha * prev->alpha;
      continue;
    }
    s->post[s->n_post++] = e;
  }
}

/* A conv whose post-ops oneDNN refused (or a per-channel chain that did
 * not fit) runs its fused steps alone, each as the kind it is. */
static gboolean
unfuse (ClinferOnednnPlan *oplan, guint i, OnednnOpKind *kinds)
{
  gboolean any = FALSE;

  for (guint j = 0; j < oplan->plan->steps->len; j++)
    if (oplan->fused_into[j] == (int) i) {
      oplan->fused_into[j] = -1;
      if (!clinfer_onednn_accepts (oplan->plan,
              &g_array_index (oplan->plan->steps, ClinferStep, j), &kinds[j]))
        kinds[j] = ONEDNN_OP_ELTWISE;
      any = TRUE;
    }
  return any;
}

/* Builds every claimed step; a step oneDNN cannot implement is
 * unclaimed (*retry) and the layouts have to be decided again. */
static gboolean
build_steps (ClinferOnednnPlan *oplan, gboolean *claimed,
    OnednnOpKind *kinds, gboolean *retry, GError **error)
{
  ClinferPlan *plan = oplan->plan;

  *retry = FALSE;
  for (guint i = 0; i < plan->steps->len; i++) {
    ClinferStep *st = &g_array_index (plan->steps, ClinferStep, i);
    OnednnStep s = { .kind = kinds[i], .step = i, .z_input = 3,
      .weights_arg = DNNL_ARG_WEIGHTS, .out_slot = st->out_slots[0] };
    GError *local = NULL;

    oplan->step_index[i] = -1;
    if (!claimed[i])
      continue;
    if (kinds[i] == ONEDNN_OP_FUSED) {
      ClinferStep *conv = &g_array_index (plan->steps, ClinferStep,
          oplan->fused_into[i]);
      OnednnOpKind into = kinds[oplan->fused_into[i]];
      g_free (st->kernel.name);
      st->kernel.name = g_strdup_printf (into == ONEDNN_OP_DWPW
          ? "onednn-fused:depthwise run by %s" : into == ONEDNN_OP_UPSAMPLE_ADD
          ? "onednn-fused:upsampled by %s" : clinfer_node_is_builtin_op (
              st->node, "", "Transpose") ? "onednn-fused:strides of %s"
          : "onednn-fused:post-op of %s", clinfer_node_label (conv->node));
      oplan->step_index[i] = oplan->steps->len;
      g_array_append_val (oplan->steps, s);
      continue;
    }
    if (kinds[i] == ONEDNN_OP_CONV)
      collect_post_ops (oplan, i, &s);
    if (!build_step (oplan, &s, st, &local)) {
      step_clear (&s);
      if (local) {
        g_propagate_error (error, local);
        return FALSE;
      }
      if (kinds[i] == ONEDNN_OP_DWPW || kinds[i] == ONEDNN_OP_UPSAMPLE_ADD) {
        /* Both steps go back to oneDNN's own primitives. */
        gboolean dw = kinds[i] == ONEDNN_OP_DWPW;
        for (guint j = 0; j < i; j++)
          if (oplan->fused_into[j] == (int) i) {
            oplan->fused_into[j] = -1;
            kinds[j] = dw ? ONEDNN_OP_CONV : ONEDNN_OP_RESAMPLE;
          }
        kinds[i] = dw ? ONEDNN_OP_CONV : ONEDNN_OP_BINARY;
      } else if (!unfuse (oplan, i, kinds))
        claimed[i] = FALSE;
      *retry = TRUE;
      continue;
    }
    oplan->scratch_bytes = MAX (oplan->scratch_bytes, s.scratch_bytes);
    oplan->step_index[i] = oplan->steps->len;
    g_array_append_val (oplan->steps, s);
  }
  return TRUE;
}

static void
clear_steps (ClinferOnednnPlan *oplan)
{
  for (guint i = 0; i < oplan->steps->len; i++)
    step_clear (&g_array_index (oplan->steps, OnednnStep, i));
  g_array_set_size (oplan->steps, 0);
  oplan->scratch_bytes = 0;
}

/* f (0) == 0 for an eltwise post-op: the ones a conv may carry whose
 * zero-preservation is plain from the definition. */
static gboolean
eltwise_keeps_zero (dnnl_alg_kind_t alg, float alpha, float beta)
{
  switch ((int) alg) {
    case 0:
    case dnnl_eltwise_relu:
    case dnnl_eltwise_tanh:
    case dnnl_eltwise_elu:
    case dnnl_eltwise_square:
    case dnnl_eltwise_abs:
    case dnnl_eltwise_gelu_tanh:
    case dnnl_eltwise_gelu_erf:
    case dnnl_eltwise_swish:
    case dnnl_eltwise_hardswish:
      return TRUE;
    case dnnl_eltwise_linear:
      return beta == 0.f;
    case dnnl_eltwise_clip:
    case dnnl_eltwise_clip_v2:
      return alpha <= 0.f && beta >= 0.f;
    default:
      return FALSE;
  }
}

/* A conv's (or depthwise + 1x1's) output lanes past its channels: the
 * weights and bias there are zero, so they hold act (0 + z's lanes) and
 * then the post-ops of that. */
static gboolean
conv_keeps_zero (const OnednnStep *s, const ClinferStep *st,
    const gboolean *lanes_zero)
{
  const ClinferConvParams *p = st->node->op_data;

  if (s->z.md.ndims > 0 && (s->z.reorder || !lanes_zero[s->z.slot]))
    return FALSE;
  if (p == NULL || clinfer_activation_apply (p, 0.f) != 0.f)
    return FALSE;
  for (guint k = 0; k < s->n_post; k++)
    if (!eltwise_keeps_zero (s->post[k].alg, s->post[k].alpha, s->post[k].beta)
        || !eltwise_keeps_zero (s->post[k].alg2, s->post[k].alpha2,
            s->post[k].beta2))
      return FALSE;
  return TRUE;
}

/* Per slot: whether the padding lanes of its last channel block are known
 * to be zero once its producer ran, in step order. A channel pad zeroes
 * them; a conv (oneDNN's, or the depthwise + 1x1 step) keeps zeros where
 * its residual has them and its activation and post-ops map 0 to 0; a max
 * pool keeps its input's. Everything else (an eltwise step runs on the
 * channel-padded view and may leave f (0) there) is unknown. */
static gboolean *
padding_lanes_zero (ClinferOnednnPlan *oplan)
{
  ClinferPlan *plan = oplan->plan;
  gboolean *zero = g_new0 (gboolean, MAX (plan->slots->len, 1));

  for (guint i = 0; i < oplan->steps->len; i++) {
    const OnednnStep *s = &g_array_index (oplan->steps, OnednnStep, i);
    const ClinferStep *st = &g_array_index (plan->steps, ClinferStep, s->step);
    gboolean z = FALSE;

    /* A fused step writes nothing: its conv wrote the chain's last slot. */
    if (s->kind == ONEDNN_OP_FUSED || !oplan->blocked[s->out_slot]
        || s->dst.reorder)
      continue;
    if (s->kind == ONEDNN_OP_PAD_CHANNELS)
      z = TRUE;
    else if (s->kind == ONEDNN_OP_CONV || s->kind == ONEDNN_OP_DWPW)
      z = conv_keeps_zero (s, st, zero);
    else if (s->kind == ONEDNN_OP_POOL)
      z = !s->src.reorder && zero[s->src.slot];
    zero[s->out_slot] = z;
  }
  return zero;
}

/* A channel pad whose input x and output y are both blocked (no reorder
 * on either side), batch 1: x's blocks are then exactly y's first blocks,
 * so x becomes an alias of y at offset 0 (the planner places them as one
 * region, alive from x's producer to y's and x's last readers) and the
 * step only zeroes y's channels past x's. x's other readers see x
 * unchanged: the step writes only x's padding lanes, which no consumer
 * reads as data. A second pad of the same x copies as before. */
static void
pad_in_place (ClinferOnednnPlan *oplan, OnednnStep *s,
    const gboolean *lanes_zero)
{
  ClinferPlan *plan = oplan->plan;
  ClinferSlot *x = &g_array_index (plan->slots, ClinferSlot, s->src.slot);
  ClinferSlot *y = &g_array_index (plan->slots, ClinferSlot, s->dst.slot);
  ClinferStep *st = &g_array_index (plan->steps, ClinferStep, s->step);

  s->x_lanes_zero = !s->src.reorder && lanes_zero[s->src.slot];
  if (s->batch != 1 || s->src.reorder || s->dst.reorder
      || !oplan->blocked[s->src.slot] || !oplan->blocked[s->dst.slot]
      || x->kind != CLINFER_SLOT_ARENA || y->kind != CLINFER_SLOT_ARENA
      || x->is_output || x->aliased || s->src.slot == s->dst.slot
      || x->bytes > y->bytes)
    return;
  x->aliased = TRUE;
  x->alias_of = s->dst.slot;
  x->alias_offset = 0;
  s->in_place = TRUE;
  g_free (st->kernel.name);
  st->kernel.name = g_strdup_printf ("onednn-layout:pad_channels_in_place_%s",
      oplan->block_tag == dnnl_nChw16c ? "nChw16c" : "nChw8c");
}

/* The Transposes fused into MatMul step @s (fuse_matmul_transposes ()):
 * an input's transposed slot lives in the Transpose's input, the MatMul's
 * output in the Transpose's output; the MatMul's strides read and write
 * them there. */
static void
transpose_aliases (ClinferOnednnPlan *oplan, const OnednnStep *s)
{
  ClinferPlan *plan = oplan->plan;
  const ClinferStep *mm = &g_array_index (plan->steps, ClinferStep, s->step);

  for (guint j = 0; j < plan->steps->len; j++) {
    ClinferStep *t = &g_array_index (plan->steps, ClinferStep, j);
    gboolean input = j < s->step;
    ClinferSlot *from;
    if (oplan->fused_into[j] != (int) s->step
        || !clinfer_node_is_builtin_op (t->node, "", "Transpose"))
      continue;
    from = &g_array_index (plan->slots, ClinferSlot,
        input ? t->out_slots[0] : mm->out_slots[0]);
    from->aliased = TRUE;
    from->alias_of = input ? t->in_slots[0] : t->out_slots[0];
    from->alias_offset = 0;
  }
}

/* Blocked slots hold their channels rounded up to whole blocks: enlarge
 * them, let channel pads run in place, and plan the arena again. */
static void
resize_slots (ClinferOnednnPlan *oplan)
{
  ClinferPlan *plan = oplan->plan;
  g_autofree gboolean *lanes_zero = NULL;

  for (guint i = 0; i < plan->slots->len; i++) {
    ClinferSlot *s = &g_array_index (plan->slots, ClinferSlot, i);
    dnnl_memory_desc_t md;
    if (!oplan->blocked[i])
      continue;
    clinfer_onednn_slot_md (oplan, i, &md);
    s->bytes = MAX (s->bytes, dnnl_memory_desc_get_size (&md));
  }
  /* A conv with post-ops (a MatMul with its bias) writes its last fused
   * step's slot: that slot lives from the conv on. */
  for (guint i = 0; i < oplan->steps->len; i++) {
    OnednnStep *st = &g_array_index (oplan->steps, OnednnStep, i);
    ClinferSlot *s = &g_array_index (plan->slots, ClinferSlot, st->out_slot);
    ClinferStep *own = &g_array_index (plan->steps, ClinferStep, st->step);
    if (st->kind != ONEDNN_OP_FUSED && st->out_slot != own->out_slots[0])
      s->first_step = MIN (s->first_step, (int) st->step);
    /* A depthwise + 1x1 step reads the depthwise's input, an upsample +
     * add step the Resize's: it lives until then (no later step may be
     * planned over it before). */
    if (st->kind == ONEDNN_OP_DWPW || st->kind == ONEDNN_OP_UPSAMPLE_ADD) {
      ClinferSlot *x = &g_array_index (plan->slots, ClinferSlot, st->src.slot);
      x->last_step = MAX (x->last_step, (int) st->step);
    }
  }
  /* After the lifetimes are final; in step order, so that a pad of a
   * pad's output chains (x in y in z). */
  lanes_zero = padding_lanes_zero (oplan);
  /* Concats first: their inputs must live in their outputs (the step does
   * nothing), a channel pad may copy instead. */
  for (guint i = 0; i < oplan->steps->len; i++) {
    OnednnStep *st = &g_array_index (oplan->steps, OnednnStep, i);
    if (st->kind == ONEDNN_OP_CONCAT)
      clinfer_onednn_concat_alias (oplan, st);
    else if (st->kind == ONEDNN_OP_MATMUL)
      transpose_aliases (oplan, st);
  }
  for (guint i = 0; i < oplan->steps->len; i++) {
    OnednnStep *st = &g_array_index (oplan->steps, OnednnStep, i);
    if (st->kind == ONEDNN_OP_PAD_CHANNELS)
      pad_in_place (oplan, st, lanes_zero);
  }
  clinfer_plan_assign_memory (plan);
}

/* Multiply-adds of the claimed convs of at least 4096 output pixels
 * (@large: the ones whose time the multiply-adds set) or of fewer (the
 * others: bound by per-call and per-row costs, where the AVX-512 kernels'
 * 32 registers win), with their channels rounded up to blocks of @b (an
 * input of up to 4 channels is read plain). */
static double
padded_conv_work (const ClinferPlan *plan, const gboolean *claimed,
    const OnednnOpKind *kinds, int64_t b, gboolean large)
{
  double work = 0;

  for (guint i = 0; i < plan->steps->len; i++) {
    const ClinferStep *st = &g_array_index (plan->steps, ClinferStep, i);
    const ClinferConvParams *p = st->node->op_data;
    const ClinferShape *x, *w, *y;
    int64_t ic, oc, g;

    if (!claimed[i] || kinds[i] != ONEDNN_OP_CONV || p == NULL)
      continue;
    x = &clinfer_node_input_desc (st->node, 0)->shape;
    w = &clinfer_node_input_desc (st->node, 1)->shape;
    y = &st->node->outputs[0].shape;
    if (x->rank != 4 || w->rank != 4 || y->rank != 4
        || (y->dims[2] * y->dims[3] >= 4096) != large)
      continue;
    ic = x->dims[1];
    oc = y->dims[1];
    g = MAX (p->group, 1);
    if (ic > 4)
      ic = (ic + b - 1) / b * b;
    oc = (oc + b - 1) / b * b;
    /* Depthwise: one multiply-add per output channel and tap. */
    work += (double) (g == x->dims[1] && w->dims[1] == 1 ? 1 : ic / g) * oc
        * y->dims[2] * y->dims[3] * w->dims[2] * w->dims[3];
  }
  return work;
}

/* The channel block of the blocked layouts: 16 with AVX-512, 8 with AVX2.
 * Where AVX-512 runs at AVX2's rate (Zen 4) the wider block only adds the
 * zero channels it pads to the large convs (BlazeFace's 24 channels
 * become 32) and gains on the small ones: the model takes 8 when the
 * 16-channel rounding adds more than a fifth to its large convs'
 * multiply-adds (BlazeFace 1.4-1.6x, PP-OCRv4 det 1.26x: 10-18% faster
 * with 8 on Zen 4; the OCR classifier and recogniser, with no such
 * convs, run 4-20% faster with 16) and what it adds is more than
 * CLINFER_BLOCK8_SMALL_SHARE of the small convs' multiply-adds (added
 * / small: BlazeFace 128 0.34, PP-OCRv4 det 0.39, 8 faster; ddddocr-det
 * 0.05 and ddddocr 0.08, 16 faster by 1.5-3.5% and 1%: their 48- to
 * 384-channel convs on 52x52 and smaller planes gain more on the AVX-512
 * kernels than the 24-channel ones on 104x104 and 208x208 lose;
 * docs/performance.md). CLINFER_CPU_BLOCK=8 or 16 overrides. */
#define CLINFER_BLOCK8_GAIN 1.2
#define CLINFER_BLOCK8_SMALL_SHARE 0.16
static dnnl_format_tag_t
choose_block (ClinferCpuIsa isa, const ClinferPlan *plan,
    const gboolean *claimed, const OnednnOpKind *kinds)
{
  const char *env = g_getenv ("CLINFER_CPU_BLOCK");
  double w8, w16, s8;

  if (isa < CLINFER_CPU_ISA_AVX512)
    return dnnl_nChw8c;
  if (env != NULL && strcmp (env, "8") == 0)
    return dnnl_nChw8c;
  if (env != NULL && strcmp (env, "16") == 0)
    return dnnl_nChw16c;
  if (!clinfer_cpu_avx512_half_rate ())
    return dnnl_nChw16c;
  w8 = padded_conv_work (plan, claimed, kinds, 8, TRUE);
  w16 = padded_conv_work (plan, claimed, kinds, 16, TRUE);
  s8 = padded_conv_work (plan, claimed, kinds, 8, FALSE);
  g_debug ("channel block: large convs %.4g (by 8) %.4g (by 16) multiply-adds, "
      "small convs %.4g (by 8)", w8, w16, s8);
  return w8 > 0 && w16 > CLINFER_BLOCK8_GAIN * w8
      && w16 - w8 > CLINFER_BLOCK8_SMALL_SHARE * s8
      ? dnnl_nChw8c : dnnl_nChw16c;
}

ClinferOnednnPlan *
clinfer_onednn_plan_new (ClinferDevice *device, ClinferPlan *plan,
    const char *origin, GError **error)
{
  guint n = plan->steps->len;
  g_autofree gboolean *claimed = g_new0 (gboolean, MAX (n, 1));
  g_autofree OnednnOpKind *kinds = g_new0 (OnednnOpKind, MAX (n, 1));
  ClinferOnednnPlan *oplan;
  gboolean any = FALSE, retry = TRUE;
  GError *local = NULL;

  for (guint i = 0; i < n; i++) {
    claimed[i] = clinfer_onednn_accepts (plan,
        &g_array_index (plan->steps, ClinferStep, i), &kinds[i]);
    any = any || claimed[i];
  }
  if (!any)
    return NULL;
  oplan = g_new0 (ClinferOnednnPlan, 1);
  oplan->plan = plan;
  oplan->step_index = g_new (int, MAX (n, 1));
  oplan->fused_into = g_new (int, MAX (n, 1));
  oplan->blocked = g_new0 (gboolean, MAX (plan->slots->len, 1));
  oplan->steps = g_array_new (FALSE, TRUE, sizeof (OnednnStep));
  oplan->threads = device->threads;
  oplan->block_tag = choose_block (device->isa, plan, claimed, kinds);
  /* clinfer's own blocked kernels (max pool, pad, depthwise + 1x1) take
   * the ISA whose vector matches the block. */
  oplan->isa = oplan->block_tag == dnnl_nChw8c
      ? MIN (device->isa, CLINFER_CPU_ISA_AVX2) : device->isa;
  oplan->engine = clinfer_onednn_engine (&local);
  fuse_post_ops (oplan, claimed, kinds);
  fuse_matmul_transposes (oplan, claimed, kinds);
  fuse_dw_pw (oplan, claimed, kinds);
  fuse_resize_add (oplan, claimed, kinds);
  fuse_per_channel_chain (oplan, claimed, kinds);
  while (oplan->engine && retry) {
    clear_steps (oplan);
    decide_layouts (oplan, claimed, kinds);
    if (!build_steps (oplan, claimed, kinds, &retry, &local))
      break;
  }
  if (local) {
    g_propagate_prefixed_error (error, local, "%s: ", origin);
    clinfer_onednn_plan_free (oplan);
    return NULL;
  }
  if (oplan->steps->len == 0) {
    clinfer_onednn_plan_free (oplan);
    return NULL;
  }
  resize_slots (oplan);
  return oplan;
}

/* ---------------------------------------------------------------- */
/* Runs                                                              */

static gpointer
slot_data (ClinferTensor **slot_tensors, guint slot)
{
  return slot_tensors[slot] ? clinfer_tensor_get_data (slot_tensors[slot]) : NULL;
}

static gboolean
memory_new (ClinferOnednnRun *run, dnnl_memory_t *mem,
    const dnnl_memory_desc_t *md, void *data, GError **error)
{
  return clinfer_onednn_check (dnnl_memory_create (mem, md,
          run->oplan->engine, data), "creating a memory object", error);
}

/* The slot's memory and, with a reorder, the primitive-side temporary. */
static gboolean
operand_memories (ClinferOnednnRun *run, const OnednnOperand *o,
    ClinferTensor **slot_tensors, dnnl_memory_t *slot_mem, dnnl_memory_t *mem,
    GError **error)
{
  if (!memory_new (run, slot_mem, &o->slot_md, slot_data (slot_tensors, o->slot),
          error))
    return FALSE;
  if (o->reorder == NULL) {
    *mem = *slot_mem;
    return TRUE;
  }
  return memory_new (run, mem, &o->md, (guint8 *) run->scratch + o->temp_offset,
      error);
}

static void
add_arg (RunStep *rs, int arg, dnnl_memory_t mem)
{
  rs->args[rs->n_args].arg = arg;
  rs->args[rs->n_args].memory = mem;
  rs->n_args++;
}

static gboolean
run_step_init (ClinferOnednnRun *run, const OnednnStep *s, RunStep *rs,
    ClinferTensor **slot_tensors, GError **error)
{
  /* Done by the conv's post-ops, or by the concat inputs' producers. */
  if (s->kind == ONEDNN_OP_FUSED || s->kind == ONEDNN_OP_CONCAT)
    return TRUE;
  if (!operand_memories (run, &s->src, slot_tensors, &rs->src_slot, &rs->src,
          error)
      || !operand_memories (run, &s->dst, slot_tensors, &rs->dst_slot, &rs->dst,
          error)
      || (s->z.md.ndims > 0
          && !operand_memories (run, &s->z, slot_tensors, &rs->z_slot, &rs->z,
              error))
      || (dnnl_memory_desc_get_size (&s->scratchpad_md) > 0
          && !memory_new (run, &rs->scratchpad, &s->scratchpad_md,
              (guint8 *) run->scratch + s->scratchpad_offset, error)))
    return FALSE;
  add_arg (rs, DNNL_ARG_SRC, rs->src);
  add_arg (rs, DNNL_ARG_DST, rs->dst);
  if (rs->scratchpad)
    add_arg (rs, DNNL_ARG_SCRATCHPAD, rs->scratchpad);
  if (s->weights)
    add_arg (rs, s->weights_arg, s->weights);
  if (s->bias)
    add_arg (rs, DNNL_ARG_BIAS, s->bias);
  if (rs->z && s->z_as_weights)
    add_arg (rs, DNNL_ARG_WEIGHTS, rs->z);
  else if (rs->z && s->kind == ONEDNN_OP_BINARY)
    add_arg (rs, DNNL_ARG_SRC_1, rs->z);
  else if (rs->z && !s->z_as_sum)
    add_arg (rs, DNNL_ARG_ATTR_MULTIPLE_POST_OP (0) | DNNL_ARG_SRC_1, rs->z);
  return TRUE;
}

static void
run_step_clear (RunStep *rs)
{
  dnnl_memory_t m[] = { rs->src_slot, rs->src, rs->z_slot, rs->z, rs->dst_slot,
    rs->dst, rs->scratchpad };
  for (gsize i = 0; i < G_N_ELEMENTS (m); i++) {
    gboolean dup = FALSE;
    for (gsize j = 0; j < i; j++)
      dup = dup || m[j] == m[i];
    if (m[i] && !dup)
      dnnl_memory_destroy (m[i]);
  }
}

void
clinfer_onednn_run_free (ClinferOnednnRun *run)
{
  if (run == NULL)
    return;
  for (guint i = 0; run->steps && i < run->oplan->steps->len; i++)
    run_step_clear (&run->steps[i]);
  if (run->stream)
    dnnl_stream_destroy (run->stream);
  g_free (run->steps);
  free (run->scratch);
  g_free (run);
}

ClinferOnednnRun *
clinfer_onednn_run_new (ClinferOnednnPlan *oplan, ClinferTensor **slot_tensors,
    GError **error)
{
  ClinferOnednnRun *run = g_new0 (ClinferOnednnRun, 1);

  run->oplan = oplan;
  run->steps = g_new0 (RunStep, MAX (oplan->steps->len, 1));
  if (posix_memalign (&run->scratch, SCRATCH_ALIGN,
          MAX (oplan->scratch_bytes, SCRATCH_ALIGN)) != 0) {
    run->scratch = NULL;
    g_set_error (error, CLINFER_ERROR, CLINFER_ERROR_INVALID_ARGUMENT,
        "out of memory allocating a %" G_GSIZE_FORMAT "-byte oneDNN scratch",
        oplan->scratch_bytes);
    clinfer_onednn_run_free (run);
    return NULL;
  }
  if (!clinfer_onednn_check (dnnl_stream_create (&run->stream, oplan->engine,
          dnnl_stream_default_flags), "creating a stream", error)) {
    clinfer_onednn_run_free (run);
    return NULL;
  }
  for (guint i = 0; i < oplan->steps->len; i++) {
    OnednnStep *s = &g_array_index (oplan->steps, OnednnStep, i);
    if (!run_step_init (run, s, &run->steps[i], slot_tensors, error)) {
      clinfer_onednn_run_free (run);
      return NULL;
    }
  }
  return run;
}

/* Points @mem at the slot's current data (input slots change per
 * inference; arena views never do). */
static gboolean
bind_slot (dnnl_memory_t mem, ClinferTensor **slot_tensors, guint slot,
    GError **error)
{
  void *want = slot_data (slot_tensors, slot), *have = NULL;

  if (dnnl_memory_get_data_handle (mem, &have) == dnnl_success && have == want)
    return TRUE;
  return clinfer_onednn_check (dnnl_memory_set_data_handle (mem, want),
      "binding an input", error);
}

static gboolean
reorder (ClinferOnednnRun *run, const OnednnOperand *o, dnnl_memory_t from,
    dnnl_memory_t to, GError **error)
{
  dnnl_exec_arg_t args[] = { { DNNL_ARG_FROM, from }, { DNNL_ARG_TO, to } };

  return clinfer_onednn_check (dnnl_primitive_execute (o->reorder, run->stream,
          2, args), "a layout reorder", error);
}

/* Zeroes lanes @used.. of each of @hw pixels of one channel block: the
 * whole block per pixel with a select, which vectorises (a memset per
 * pixel of the few lanes does not). */
static void
zero_block_tail (float *blk, int64_t hw, int64_t block, int64_t used)
{
  if (block == 16) {
    for (int64_t i = 0; i < hw; i++)
      for (int c = 0; c < 16; c++)
        blk[i * 16 + c] = c < used ? blk[i * 16 + c] : 0.f;
  } else {
    for (int64_t i = 0; i < hw; i++)
      for (int c = 0; c < 8; c++)
        blk[i * 8 + c] = c < used ? blk[i * 8 + c] : 0.f;
  }
}

/* Pads of at least this many bytes split between the threads. */
#define PAD_SPLIT_BYTES (64 * 1024)

/* y = x's blocks, then zeros; in place (x already is y's first blocks)
 * only the zeros. Each thread takes the same run of pixels (a band of
 * rows) in every channel block, as the depthwise + 1x1 and max pool steps
 * split theirs: the lines it writes are the ones its core reads next. */
static void
pad_channels (const OnednnStep *s, const void *src, void *dst)
{
  gsize plane = (gsize) s->hw * s->block;
  gsize x_blocks = s->copy_bytes / (plane * sizeof (float));
  gsize y_blocks = s->out_bytes / (plane * sizeof (float));

#pragma omp parallel if (s->batch * s->out_bytes >= PAD_SPLIT_BYTES)
  {
    int nt = omp_get_num_threads (), t = omp_get_thread_num ();
    int64_t p0 = s->hw * t / nt, np = s->hw * (t + 1) / nt - p0;
    gsize run = (gsize) np * s->block * sizeof (float);

    for (int64_t n = 0; n < s->batch && np > 0; n++) {
      const float *x = (const float *) src + n * x_blocks * plane + p0 * s->block;
      float *y = (float *) dst + n * y_blocks * plane + p0 * s->block;
      if (!s->in_place)
        for (gsize b = 0; b < x_blocks; b++)
          memcpy (y + b * plane, x + b * plane, run);
      for (gsize b = x_blocks; b < y_blocks; b++)
        memset (y + b * plane, 0, run);
      /* x's last partial block: its padding channels become real ones,
       * and an eltwise step before may have left non-zeros there. */
      if (s->c_in % s->block != 0 && !s->x_lanes_zero)
        zero_block_tail (y + (s->c_in / s->block) * plane, np, s->block,
            s->c_in % s->block);
    }
  }
}

gboolean
clinfer_onednn_step_run (ClinferOnednnRun *run, guint step,
    ClinferTensor **slot_tensors, GError **error)
{
  const OnednnStep *s = &g_array_index (run->oplan->steps, OnednnStep,
      run->oplan->step_index[step]);
  RunStep *rs = &run->steps[run->oplan->step_index[step]];

  if (s->kind == ONEDNN_OP_FUSED || s->kind == ONEDNN_OP_CONCAT)
    return TRUE;

  if (!bind_slot (rs->src_slot, slot_tensors, s->src.slot, error)
      || (rs->z_slot && !bind_slot (rs->z_slot, slot_tensors, s->z.slot, error))
      || (s->src.reorder && !reorder (run, &s->src, rs->src_slot, rs->src, error))
      || (s->z.reorder && !reorder (run, &s->z, rs->z_slot, rs->z, error)))
    return FALSE;
  if (s->prim == NULL) {
    /* clinfer's own kernels on the operands' memory. */
    void *x = NULL, *y = NULL, *z = NULL;
    dnnl_memory_get_data_handle (rs->src, &x);
    dnnl_memory_get_data_handle (rs->dst, &y);
    if (rs->z)
      dnnl_memory_get_data_handle (rs->z, &z);
    switch (s->kind) {
      case ONEDNN_OP_PAD_CHANNELS:
        pad_channels (s, x, y);
        break;
      case ONEDNN_OP_DWPW:
        clinfer_onednn_dwpw_run (s, x, z, y);
        break;
      case ONEDNN_OP_SOFTMAX:
        clinfer_onednn_softmax_columns (s, x, y);
        break;
      case ONEDNN_OP_DECONV:
        clinfer_onednn_deconv_to_one (s, x, y);
        break;
      case ONEDNN_OP_CONV:
        clinfer_onednn_conv_to_one (s, x, y);
        break;
      case ONEDNN_OP_UPSAMPLE_ADD:
        clinfer_onednn_upsample_add (s, x, z, y);
        break;
      case ONEDNN_OP_BINARY:
        /* The per-channel operand: an activation (z) or a constant. */
        clinfer_onednn_binary_per_channel (s, x, z ? z : s->weights_data, y);
        break;
      case ONEDNN_OP_MATMUL:
        clinfer_onednn_matmul_gemm (s, x, y, run->scratch);
        break;
      case ONEDNN_OP_POOL:
        clinfer_onednn_max_pool_blocked (s, x, y);
        break;
      case ONEDNN_OP_ELTWISE:
        clinfer_onednn_swish (s, x, y);
        break;
      default:
        g_set_error (error, CLINFER_ERROR, CLINFER_ERROR_DEVICE,
            "oneDNN step of kind %d has no kernel", (int) s->kind);
        return FALSE;
    }
  } else {
    if (s->z_as_sum) {
      void *z = NULL, *y = NULL;
      dnnl_memory_get_data_handle (rs->z, &z);
      dnnl_memory_get_data_handle (rs->dst, &y);
      memcpy (y, z, dnnl_memory_desc_get_size (&s->dst.md));
    }
    if (!clinfer_onednn_check (dnnl_primitive_execute (s->prim, run->stream,
            rs->n_args, rs->args), "executing a primitive", error))
      return FALSE;
    if (s->prim2) {
      dnnl_exec_arg_t args[] = { { DNNL_ARG_SRC, rs->dst },
        { DNNL_ARG_DST, rs->dst } };
      if (!clinfer_onednn_check (dnnl_primitive_execute (s->prim2, run->stream,
              2, args), "executing a primitive", error))
        return FALSE;
    }
  }
  if (s->dst.reorder && !reorder (run, &s->dst, rs->dst, rs->dst_slot, error))
    return FALSE;
  return clinfer_onednn_check (dnnl_stream_wait (run->stream), "waiting", error);
}
