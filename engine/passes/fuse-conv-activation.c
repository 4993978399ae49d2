/* clinfer — pass fuse-conv-activation: Conv [-> Add (per-channel constant bias or a
 * same-shape residual)]* [-> Relu | Clip | LeakyRelu] becomes one
 * com.clinfer FusedConv, so the CPU kernels apply them on the hot tile. */
#include "passes/passes.h"
#include "ops/op.h"
#include <math.h>
#include <string.h>

typedef struct {
  ClinferNode *conv;
  ClinferPortRef tail;       /* output of the last absorbed node */
  ClinferPortRef z;          /* residual, node NULL when none */
  ClinferTensor *bias;       /* folded f32 [M] bias, NULL when unchanged */
  GPtrArray *absorbed;       /* nodes merged into the FusedConv */
  const char *act;           /* "" when none */
  float act_min, act_max, act_alpha;
} Chain;

/* The only consumer of @ref, or NULL when it has several or feeds a graph
 * output. */
static ClinferNode *
single_consumer (const ClinferGraph *graph, ClinferPortRef ref)
{
  if (clinfer_graph_count_uses (graph, ref) != 1)
    return NULL;
  for (guint i = 0; i < graph->nodes->len; i++) {
    ClinferNode *n = g_ptr_array_index (graph->nodes, i);
    for (guint j = 0; j < n->n_inputs; j++)
      if (n->inputs[j].node == ref.node && n->inputs[j].port == ref.port)
        return n;
  }
  return NULL;                 /* the use is a graph output */
}

static ClinferPortDesc *
port_desc (ClinferPortRef ref)
{
  return &ref.node->outputs[ref.port];
}

/* Channel values of constant @c when it broadcasts against the output
 * shape @out only along the channel dim (or is a scalar); NULL otherwise. */
static gboolean
per_channel_value (const ClinferTensor *c, const ClinferShape *out, int64_t m,
    float *vals)
{
  const ClinferShape *s = clinfer_tensor_get_shape (c);
  int k = 1 - (out->rank - s->rank);   /* index of the channel dim in @s */
  int64_t n = clinfer_tensor_get_n_elements (c);

  if (clinfer_tensor_get_element_type (c) != CLINFER_TYPE_F32
      || s->rank > out->rank || (n != 1 && n != m))
    return FALSE;
  for (int i = 0; i < s->rank; i++)
    if (s->dims[i] != 1 && i != k)
      return FALSE;
  for (int64_t i = 0; i < m; i++)
    vals[i] = (float) clinfer_tensor_get_as_double (c, n == 1 ? 0 : i);
  return TRUE;
}

/* Adds the per-channel constant of @add into the chain's bias. */
static gboolean
absorb_bias (Chain *ch, const ClinferTensor *c)
{
  const ClinferPortDesc *out = port_desc (ch->tail);
  ClinferPortDesc *b = clinfer_node_input_desc (ch->conv, 2);
  int64_t m = out->shape.rank >= 2 ? out->shape.dims[1] : -1;
  g_autofree float *vals = NULL;
  float *dst;

  if (m <= 0 || out->type != CLINFER_TYPE_F32 || (b && b->value == NULL))
    return FALSE;
  vals = g_new (float, m);
  if (!per_channel_value (c, &out->shape, m, vals))
    return FALSE;
  if (ch->bias == NULL) {
    ClinferShape s = clinfer_shape_make (1, &m);
    ch->bias = clinfer_tensor_new (CLINFER_TYPE_F32, &s, NULL);
    if (ch->bias == NULL)
      return FALSE;
    dst = clinfer_tensor_get_data (ch->bias);
    for (int64_t i = 0; i < m; i++)
      dst[i] = b ? (float) clinfer_tensor_get_as_double (b->value, i) : 0.f;
  }
  dst = clinfer_tensor_get_data (ch->bias);
  for (int64_t i = 0; i < m; i++)
    dst[i] += vals[i];
  return TRUE;
}

static gboolean
try_absorb_add (Chain *ch, ClinferNode *add)
{
  guint self = add->inputs[0].node == ch->tail.node
      && add->inputs[0].port == ch->tail.port ? 0 : 1;
  ClinferPortDesc *other = clinfer_node_input_desc (add, 1 - self);
  const ClinferPortDesc *out = port_desc (ch->tail);

  /* Legacy (opset < 7) broadcasting has its own alignment rules. */
  if (add->n_inputs != 2 || other == NULL
      || clinfer_node_get_attr (add, "broadcast") != NULL)
    return FALSE;
  if (other->value && absorb_bias (ch, other->value))
    return TRUE;
  if (ch->z.node == NULL && other->type == out->type
      && clinfer_shape_is_static (&out->shape)
      && clinfer_shape_equal (&other->shape, &out->shape)) {
    ch->z = add->inputs[1 - self];
    return TRUE;
  }
  return FALSE;
}

/* Clip bound from input @i (opset 11+) or attribute @name (older). */
static gboolean
clip_bound (const ClinferNode *clip, guint i, const char *name, float def,
    float *out)
{
  ClinferPortDesc *d = clinfer_node_input_desc (clip, i);

  if (clip->n_inputs > i && clip->inputs[i].node != NULL) {
    if (d == NULL || d->value == NULL
        || clinfer_tensor_get_n_elements (d->value) != 1)
      return FALSE;
    *out = (float) clinfer_tensor_get_as_double (d->value, 0);
    return TRUE;
  }
  return clinfer_node_attr_float (clip, name, def, out, NULL);
}

static gboolean
try_absorb_activation (Chain *ch, ClinferNode *node)
{
  if (clinfer_pass_is_op (node, "Relu")) {
    ch->act = "Relu";
    return TRUE;
  }
  if (clinfer_pass_is_op (node, "LeakyRelu")) {
    ch->act = "LeakyRelu";
    return clinfer_node_attr_float (node, "alpha", 0.01f, &ch->act_alpha, NULL);
  }
  if (clinfer_pass_is_op (node, "Clip")) {
    ch->act = "Clip";
    return clip_bound (node, 1, "min", -INFINITY, &ch->act_min)
        && clip_bound (node, 2, "max", INFINITY, &ch->act_max)
        && ch->act_min <= ch->act_max;
  }
  return FALSE;
}

/* Follows single-consumer edges from the conv, absorbing what fits. */
static void
collect_chain (const ClinferGraph *graph, Chain *ch)
{
  ClinferNode *next;

  while ((next = single_consumer (graph, ch->tail)) != NULL) {
    if (clinfer_pass_is_op (next, "Add") && try_absorb_add (ch, next)) {
      g_ptr_array_add (ch->absorbed, next);
      ch->tail.node = next;
      ch->tail.port = 0;
      continue;
    }
    if (try_absorb_activation (ch, next)) {
      g_ptr_array_add (ch->absorbed, next);
      ch->tail.node = next;
      ch->tail.port = 0;
    } else {
      ch->act = "";
    }
    break;
  }
}

static ClinferNode *
build_fused (ClinferGraph *graph, Chain *ch)
{
  ClinferNode *conv = ch->conv;
  ClinferNode *f = clinfer_graph_add_node (graph, "FusedConv", "com.clinfer",
      conv->name, 4, 1);
  ClinferPortDesc *tail = port_desc (ch->tail);

  f->opset = 1;
  clinfer_node_copy_attrs (conv, f);
  clinfer_node_set_attr (f, "activation", clinfer_attr_new_string (ch->act));
  if (strcmp (ch->act, "Clip") == 0) {
    clinfer_node_set_attr (f, "activation_min", clinfer_attr_new_float (ch->act_min));
    clinfer_node_set_attr (f, "activation_max", clinfer_attr_new_float (ch->act_max));
  } else if (strcmp (ch->act, "LeakyRelu") == 0) {
    clinfer_node_set_attr (f, "activation_alpha",
        clinfer_attr_new_float (ch->act_alpha));
  }
  f->inputs[0] = conv->inputs[0];
  f->inputs[1] = conv->inputs[1];
  if (ch->bias) {
    g_autofree char *name = g_strdup_printf ("%s/fused_bias",
        conv->outputs[0].name);
    f->inputs[2].node = clinfer_graph_add_constant (graph, name, ch->bias);
    f->inputs[2].port = 0;
  } else if (conv->n_inputs > 2) {
    f->inputs[2] = conv->inputs[2];
  }
  f->inputs[3] = ch->z;
  /* The fused output keeps the tensor name the consumers knew. */
  g_free (f->outputs[0].name);
  f->outputs[0].name = g_strdup (tail->name);
  f->outputs[0].type = tail->type;
  f->outputs[0].shape = tail->shape;
  return f;
}

static gboolean
fuse_from (ClinferGraph *graph, ClinferNode *conv, GHashTable *removed,
    gboolean *changed, GError **error)
{
  Chain ch = { conv, { conv, 0 }, { NULL, 0 }, NULL, NULL, "", -INFINITY,
    INFINITY, 0.01f };
  ClinferPortRef to = { NULL, 0 };
  gboolean ok = TRUE;

  ch.absorbed = g_ptr_array_new ();
  collect_chain (graph, &ch);
  if (ch.absorbed->len > 0) {
    to.node = build_fused (graph, &ch);
    clinfer_graph_replace_uses (graph, ch.tail, to);
    for (guint i = 0; i < ch.absorbed->len; i++) {
      ClinferNode *n = g_ptr_array_index (ch.absorbed, i);
      g_hash_table_add (removed, n);
      clinfer_graph_remove_node (graph, n);
    }
    g_hash_table_add (removed, conv);
    clinfer_graph_remove_node (graph, conv);
    *changed = TRUE;
    ok = clinfer_graph_resolve_ops (graph, error)
        && clinfer_node_infer (to.node, error);
  }
  g_ptr_array_unref (ch.absorbed);
  if (ch.bias)
    clinfer_tensor_unref (ch.bias);
  return ok;
}

gboolean
clinfer_pass_fuse_conv_activation (ClinferGraph *graph, const ClinferPassContext *ctx,
    gboolean *changed, GError **error)
{
  g_autoptr (GPtrArray) order = clinfer_graph_topological_order (graph, error);
  g_autoptr (GHashTable) removed = g_hash_table_new (NULL, NULL);

  if (order == NULL)
    return FALSE;
  for (guint i = 0; i < order->len; i++) {
    ClinferNode *node = g_ptr_array_index (order, i);

    /* @removed holds freed nodes: test membership before touching one. */
    if (g_hash_table_contains (removed, node) || !clinfer_pass_is_op (node, "Conv")
        || node->def == NULL)
      continue;
    if (!fuse_from (graph, node, removed, changed, error))
      return FALSE;
  }
  return TRUE;
}
