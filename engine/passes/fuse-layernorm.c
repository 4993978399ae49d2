/* clinfer — pass fuse-layernorm: layer normalisation written out as element-wise
 * nodes (exporters from before opset 17, e.g. Paddle2ONNX: the attention
 * blocks of PP-OCRv4 rec) becomes one LayerNormalization node, nine
 * steps in one pass over each row. Recognised, x being an f32 tensor, the
 * reductions over its last axis (keepdims), each inner node used only
 * inside the pattern (d by the square and the Div):
 *   d = Sub (x, ReduceMean (x))
 *   y = Div (d, Sqrt (Add (ReduceMean (Pow (d, 2)), eps)))
 *   [y = Mul (y, scale)] [y = Add (y, bias)]
 * (Pow (d, 2) also as Mul (d, d); Add, Mul in either operand order);
 * scale and bias constants of one value per column of the last axis. A
 * missing scale becomes ones. The form with the standard deviation (eps
 * added to it, the variance optionally scaled by constants: PyTorch
 * exports of an unbiased std, e.g. LORE's encoder)
 *   y = [Add (] Div ([Mul (scale,] d [)], Add (Sqrt (V), eps)) [, bias)]
 *   V = ReduceMean (Pow (d', 2)) [* k] [/ k'], d' = d or Sub (x, ReduceMean (x))
 * becomes one com.clinfer LayerNormStd node, for devices that run it
 * (ClinferPassContext.layer_norm_std: the CPU and GPU devices). Compile
 * only. */
#include "passes/passes.h"
#include "ops/op.h"
#include <string.h>

static gboolean
is_op (const ClinferNode *node, const char *op_type)
{
  return clinfer_pass_is_op (node, op_type)
      && clinfer_node_get_attr (node, "broadcast") == NULL;
}

static guint
uses (const ClinferGraph *graph, const ClinferNode *node)
{
  return clinfer_graph_count_uses (graph,
      (ClinferPortRef) { (ClinferNode *) node, 0 });
}

/* ReduceMean over the last axis of its input, keepdims, axes given as the
 * attribute (before opset 18) or a constant input. */
static gboolean
mean_of_last_axis (const ClinferNode *node)
{
  ClinferPortDesc *x, *a;
  const int64_t *axes = NULL;
  gsize n = 0;
  int64_t keep = 1, axis;

  if (!is_op (node, "ReduceMean") || node->inputs[0].node == NULL
      || !clinfer_node_attr_int (node, "keepdims", 1, &keep, NULL) || !keep)
    return FALSE;
  x = clinfer_node_input_desc (node, 0);
  if (x->shape.rank < 1)
    return FALSE;
  if (node->n_inputs > 1 && node->inputs[1].node) {
    a = clinfer_node_input_desc (node, 1);
    if (a->value == NULL || a->type != CLINFER_TYPE_I64
        || clinfer_tensor_get_n_elements (a->value) != 1)
      return FALSE;
    axis = *(const int64_t *) clinfer_tensor_get_const_data (a->value);
  } else {
    if (!clinfer_node_attr_ints (node, "axes", &axes, &n, NULL) || n != 1)
      return FALSE;
    axis = axes[0];
  }
  return axis == -1 || axis == x->shape.rank - 1;
}

/* @node is op (t, constant) or op (constant, t) when @commutes, the
 * constant of one value per column of the last axis of @y (@y's shape):
 * sets *t and *c. */
static gboolean
with_columns (const ClinferNode *node, const char *op, gboolean commutes,
    const ClinferShape *y, ClinferPortRef *t, ClinferTensor **c)
{
  if (!is_op (node, op) || node->n_inputs != 2)
    return FALSE;
  for (guint k = 0; k < (commutes ? 2u : 1u); k++) {
    ClinferPortDesc *d = clinfer_node_input_desc (node, 1 - k);
    const ClinferShape *s;
    gboolean ok;
    if (d == NULL || d->value == NULL || d->type != CLINFER_TYPE_F32
        || node->inputs[k].node == NULL)
      continue;
    s = clinfer_tensor_get_shape (d->value);
    ok = s->rank >= 1 && y->rank >= 1
        && s->dims[s->rank - 1] == y->dims[y->rank - 1];
    for (int i = 0; ok && i < s->rank - 1; i++)
      ok = s->dims[i] == 1;
    if (!ok)
      continue;
    *t = node->inputs[k];
    *c = d->value;
    return TRUE;
  }
  return FALSE;
}

typedef struct {
  ClinferPortRef x;
  float eps;
  ClinferTensor *scale, *bias;   /* borrowed; NULL when absent */
  gboolean std_form;         /* LayerNormStd: eps added to the std */
  float var_scale;           /* its factor on the variance */
} LnMatch;

/* Sub (x, ReduceMean (x)) over the last axis, used @n_uses times; sets
 * *x (or checks it when already set). */
static gboolean
centred (const ClinferGraph *graph, ClinferNode *sub, guint n_uses,
    ClinferPortRef *x, GPtrArray *nodes)
{
  ClinferNode *mean;

  if (!is_op (sub, "Sub") || sub->n_inputs != 2 || uses (graph, sub) != n_uses)
    return FALSE;
  mean = sub->inputs[1].node;
  if (!mean_of_last_axis (mean) || uses (graph, mean) != 1
      || !clinfer_pass_same_port (mean->inputs[0], sub->inputs[0]))
    return FALSE;
  if (x->node && !clinfer_pass_same_port (*x, sub->inputs[0]))
    return FALSE;
  *x = sub->inputs[0];
  g_ptr_array_add (nodes, sub);
  g_ptr_array_add (nodes, mean);
  return TRUE;
}

/* Mul (d, d) or Pow (d, 2), used once: its d (*d) and how many of its
 * inputs read d (*d_uses). */
static gboolean
square_of (const ClinferGraph *graph, ClinferNode *sq, ClinferNode **d,
    guint *d_uses)
{
  float two;

  if (sq == NULL || uses (graph, sq) != 1 || sq->n_inputs != 2
      || sq->inputs[0].port != 0)
    return FALSE;
  if (is_op (sq, "Pow") && clinfer_op_scalar_f32_input (sq, 1, &two)
      && two == 2.f)
    *d_uses = 1;
  else if (is_op (sq, "Mul") && sq->inputs[0].node == sq->inputs[1].node
      && sq->inputs[1].port == 0)
    *d_uses = 2;
  else
    return FALSE;
  *d = sq->inputs[0].node;
  return TRUE;
}

/* The Div ... chain at @div: x and eps, the inner nodes into @nodes. */
static gboolean
match_core (const ClinferGraph *graph, ClinferNode *div, LnMatch *m,
    GPtrArray *nodes)
{
  ClinferNode *sqrt_, *add, *var, *d;
  ClinferPortRef v;
  guint d_uses;

  if (!is_op (div, "Div") || div->n_inputs != 2 || div->inputs[0].port != 0)
    return FALSE;
  sqrt_ = div->inputs[1].node;
  if (!is_op (sqrt_, "Sqrt") || uses (graph, sqrt_) != 1)
    return FALSE;
  add = sqrt_->inputs[0].node;
  if (!is_op (add, "Add") || add->n_inputs != 2 || uses (graph, add) != 1)
    return FALSE;
  if (clinfer_op_scalar_f32_input (add, 1, &m->eps))
    v = add->inputs[0];
  else if (clinfer_op_scalar_f32_input (add, 0, &m->eps))
    v = add->inputs[1];
  else
    return FALSE;
  var = v.node;
  if (m->eps < 0.f || !mean_of_last_axis (var) || uses (graph, var) != 1
      || !square_of (graph, var->inputs[0].node, &d, &d_uses)
      || d != div->inputs[0].node)
    return FALSE;
  /* d read by the square and the Div only. */
  g_ptr_array_add (nodes, div);
  g_ptr_array_add (nodes, sqrt_);
  g_ptr_array_add (nodes, add);
  g_ptr_array_add (nodes, var);
  g_ptr_array_add (nodes, var->inputs[0].node);
  m->x.node = NULL;
  return centred (graph, d, d_uses + 1, &m->x, nodes);
}

/* The standard-deviation form at Div @div:
 *   Div ([Mul (scale,] d1 [)], Add (Sqrt (V), eps))
 *   V = ReduceMean (Mul (d2, d2) or Pow (d2, 2)) [* k] [/ k'] (scalar
 *   constants k, k': the unbiased variance's n / (n - 1))
 * d1, d2 = Sub (x, ReduceMean (x)), the same node or two alike (PyTorch
 * exports compute the mean twice). */
static gboolean
match_std (const ClinferGraph *graph, ClinferNode *div, LnMatch *m,
    GPtrArray *nodes)
{
  const ClinferShape *y = &div->outputs[0].shape;
  ClinferNode *num, *d1, *add, *sqrt_, *v, *var, *sq, *d2;
  ClinferPortRef in, xref = { NULL, 0 };
  ClinferTensor *c;
  float k = 1.f;
  guint sq_uses;

  if (!is_op (div, "Div") || div->n_inputs != 2 || div->inputs[0].port != 0)
    return FALSE;
  num = div->inputs[0].node;
  add = div->inputs[1].node;
  if (num == NULL || !is_op (add, "Add") || add->n_inputs != 2
      || uses (graph, add) != 1)
    return FALSE;
  d1 = num;
  if (with_columns (num, "Mul", TRUE, y, &in, &c)) {
    if (in.port != 0 || uses (graph, num) != 1)
      return FALSE;
    m->scale = c;
    g_ptr_array_add (nodes, num);
    d1 = in.node;
  }
  if (clinfer_op_scalar_f32_input (add, 1, &m->eps))
    sqrt_ = add->inputs[0].node;
  else if (clinfer_op_scalar_f32_input (add, 0, &m->eps))
    sqrt_ = add->inputs[1].node;
  else
    return FALSE;
  if (!is_op (sqrt_, "Sqrt") || uses (graph, sqrt_) != 1 || m->eps < 0.f)
    return FALSE;
  g_ptr_array_add (nodes, div);
  g_ptr_array_add (nodes, add);
  g_ptr_array_add (nodes, sqrt_);
  /* V: the variance times and divided by scalar constants. */
  v = sqrt_->inputs[0].node;
  while (v && (is_op (v, "Mul") || is_op (v, "Div")) && v->n_inputs == 2
      && uses (graph, v) == 1) {
    float f;
    gboolean right = clinfer_op_scalar_f32_input (v, 1, &f);
    if (!right && !(is_op (v, "Mul") && clinfer_op_scalar_f32_input (v, 0, &f)))
      break;
    if (is_op (v, "Div") && f == 0.f)
      return FALSE;
    k = is_op (v, "Div") ? k / f : k * f;
    g_ptr_array_add (nodes, v);
    v = v->inputs[right ? 0 : 1].node;
  }
  var = v;
  if (!mean_of_last_axis (var) || uses (graph, var) != 1 || !(k > 0.f))
    return FALSE;
  g_ptr_array_add (nodes, var);
  sq = var->inputs[0].node;
  if (!square_of (graph, sq, &d2, &sq_uses))
    return FALSE;
  g_ptr_array_add (nodes, sq);
  if (d2 == d1) {
    if (!centred (graph, d1, sq_uses + 1, &xref, nodes))
      return FALSE;
  } else if (!centred (graph, d1, 1, &xref, nodes)
      || !centred (graph, d2, sq_uses, &xref, nodes)) {
    return FALSE;
  }
  m->x = xref;
  m->std_form = TRUE;
  m->var_scale = k;
  return TRUE;
}

/* The whole pattern ending at @tail: [Add bias (] [Mul scale (] Div
 * [)] [)]. */
static gboolean
match (const ClinferGraph *graph, ClinferNode *tail, gboolean std_form,
    LnMatch *m, GPtrArray *nodes)
{
  const ClinferShape *y = &tail->outputs[0].shape;
  ClinferNode *n = tail;
  ClinferPortRef in;
  ClinferTensor *c;

  if (tail->n_outputs != 1 || tail->outputs[0].type != CLINFER_TYPE_F32
      || y->rank < 1)
    return FALSE;
  memset (m, 0, sizeof (*m));
  g_ptr_array_set_size (nodes, 0);
  if (with_columns (n, "Add", TRUE, y, &in, &c)) {
    m->bias = c;
    g_ptr_array_add (nodes, n);
    n = in.node;
    if (n == NULL || in.port != 0 || uses (graph, n) != 1)
      return FALSE;
  }
  {
    guint mark = nodes->len;
    LnMatch before = *m;
    if (std_form && match_std (graph, n, m, nodes))
      return TRUE;
    g_ptr_array_set_size (nodes, mark);
    *m = before;
  }
  if (with_columns (n, "Mul", TRUE, y, &in, &c)) {
    m->scale = c;
    g_ptr_array_add (nodes, n);
    n = in.node;
    if (n == NULL || in.port != 0 || uses (graph, n) != 1)
      return FALSE;
  }
  return match_core (graph, n, m, nodes);
}

/* @t (one value per column, any leading 1 dims) as a [n] constant node,
 * or ones when NULL. */
static ClinferNode *
column_constant (ClinferGraph *graph, const char *name, ClinferTensor *t,
    int64_t n, GError **error)
{
  g_autoptr (ClinferTensor) v = clinfer_tensor_new (CLINFER_TYPE_F32,
      &(ClinferShape) { .rank = 1, .dims = { n } }, error);
  float *d;

  if (v == NULL)
    return NULL;
  d = clinfer_tensor_get_data (v);
  if (t)
    memcpy (d, clinfer_tensor_get_const_data (t), n * sizeof (float));
  else
    for (int64_t i = 0; i < n; i++)
      d[i] = 1.f;
  return clinfer_graph_add_constant (graph, name, v);
}

static gboolean
replace (ClinferGraph *graph, ClinferNode *tail, const LnMatch *m,
    GPtrArray *nodes, GHashTable *removed, GError **error)
{
  ClinferPortDesc *out = &tail->outputs[0];
  int64_t cols = out->shape.dims[out->shape.rank - 1];
  g_autofree char *sname = g_strdup_printf ("%s/ln_scale", tail->name);
  g_autofree char *bname = g_strdup_printf ("%s/ln_bias", tail->name);
  ClinferNode *scale, *bias = NULL, *ln;

  scale = column_constant (graph, sname, m->scale, cols, error);
  if (scale == NULL
      || (m->bias && !(bias = column_constant (graph, bname, m->bias, cols,
              error))))
    return FALSE;
  if (m->std_form) {
    ln = clinfer_graph_add_node (graph, "LayerNormStd", "com.clinfer",
        tail->name, bias ? 3 : 2, 1);
    ln->opset = 1;
    clinfer_node_set_attr (ln, "var_scale", clinfer_attr_new_float (m->var_scale));
  } else {
    ln = clinfer_graph_add_node (graph, "LayerNormalization", "", tail->name,
        bias ? 3 : 2, 1);
    ln->opset = MAX (tail->opset, 17);
    clinfer_node_set_attr (ln, "axis", clinfer_attr_new_int (-1));
  }
  ln->inputs[0] = m->x;
  ln->inputs[1] = (ClinferPortRef) { scale, 0 };
  if (bias)
    ln->inputs[2] = (ClinferPortRef) { bias, 0 };
  clinfer_node_set_attr (ln, "epsilon", clinfer_attr_new_float (m->eps));
  return clinfer_pass_replace_pattern (graph, tail, ln, nodes, removed, error);
}

gboolean
clinfer_pass_fuse_layernorm (ClinferGraph *graph,
    const ClinferPassContext *ctx, gboolean *changed, GError **error)
{
  g_autoptr (GPtrArray) order = clinfer_graph_topological_order (graph, error);
  g_autoptr (GHashTable) removed = g_hash_table_new (NULL, NULL);
  g_autoptr (GPtrArray) nodes = g_ptr_array_new ();

  if (order == NULL)
    return FALSE;
  /* Last nodes first: the longest pattern (with the bias Add) wins over
   * the shorter one inside it. */
  for (guint i = order->len; i-- > 0;) {
    ClinferNode *node = g_ptr_array_index (order, i);
    LnMatch m;

    /* @removed holds freed nodes: test membership before touching one. */
    if (g_hash_table_contains (removed, node)
        || !(is_op (node, "Add") || is_op (node, "Mul") || is_op (node, "Div"))
        || !match (graph, node, ctx->layer_norm_std, &m, nodes))
      continue;
    if (!replace (graph, node, &m, nodes, removed, error))
      return FALSE;
    *changed = TRUE;
  }
  return TRUE;
}
