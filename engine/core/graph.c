/* clinfer — graph construction, rewiring, copying and topological order. */
#include "core/graph.h"
#include <string.h>

const char *
clinfer_attr_type_name (ClinferAttrType type)
{
  static const char *names[] = { "float", "int", "string", "tensor", "graph",
    "floats", "ints", "strings", "tensors", "graphs" };
  return (guint) type < G_N_ELEMENTS (names) ? names[type] : "unknown";
}

void
clinfer_attr_free (ClinferAttr *attr)
{
  if (attr == NULL)
    return;
  switch (attr->type) {
    case CLINFER_ATTR_STRING: g_free (attr->s); break;
    case CLINFER_ATTR_TENSOR: clinfer_tensor_unref (attr->t); break;
    case CLINFER_ATTR_GRAPH: clinfer_graph_free (attr->g); break;
    case CLINFER_ATTR_FLOATS: g_free (attr->floats.v); break;
    case CLINFER_ATTR_INTS: g_free (attr->ints.v); break;
    case CLINFER_ATTR_STRINGS:
      for (gsize i = 0; i < attr->strings.n; i++)
        g_free (attr->strings.v[i]);
      g_free (attr->strings.v);
      break;
    case CLINFER_ATTR_TENSORS:
      for (gsize i = 0; i < attr->tensors.n; i++)
        clinfer_tensor_unref (attr->tensors.v[i]);
      g_free (attr->tensors.v);
      break;
    case CLINFER_ATTR_GRAPHS:
      for (gsize i = 0; i < attr->graphs.n; i++)
        clinfer_graph_free (attr->graphs.v[i]);
      g_free (attr->graphs.v);
      break;
    default:
      break;
  }
  g_free (attr);
}

ClinferAttr *
clinfer_attr_new_int (int64_t v)
{
  ClinferAttr *a = g_new0 (ClinferAttr, 1);
  a->type = CLINFER_ATTR_INT;
  a->i = v;
  return a;
}

ClinferAttr *
clinfer_attr_new_float (float v)
{
  ClinferAttr *a = g_new0 (ClinferAttr, 1);
  a->type = CLINFER_ATTR_FLOAT;
  a->f = v;
  return a;
}

ClinferAttr *
clinfer_attr_new_string (const char *v)
{
  ClinferAttr *a = g_new0 (ClinferAttr, 1);
  a->type = CLINFER_ATTR_STRING;
  a->s = g_strdup (v);
  return a;
}

ClinferAttr *
clinfer_attr_new_ints (const int64_t *v, gsize n)
{
  ClinferAttr *a = g_new0 (ClinferAttr, 1);
  a->type = CLINFER_ATTR_INTS;
  a->ints.v = n ? g_memdup2 (v, n * sizeof (int64_t)) : NULL;
  a->ints.n = n;
  return a;
}

ClinferAttr *
clinfer_attr_new_floats (const float *v, gsize n)
{
  ClinferAttr *a = g_new0 (ClinferAttr, 1);
  a->type = CLINFER_ATTR_FLOATS;
  a->floats.v = n ? g_memdup2 (v, n * sizeof (float)) : NULL;
  a->floats.n = n;
  return a;
}

ClinferAttr *
clinfer_attr_new_tensor (ClinferTensor *t)
{
  ClinferAttr *a = g_new0 (ClinferAttr, 1);
  a->type = CLINFER_ATTR_TENSOR;
  a->t = clinfer_tensor_ref (t);
  return a;
}

/* Copies an attribute; tensors are shared, subgraphs deep-copied. */
static ClinferAttr *
attr_copy (const ClinferAttr *src)
{
  ClinferAttr *a = g_new0 (ClinferAttr, 1);

  *a = *src;
  switch (src->type) {
    case CLINFER_ATTR_STRING: a->s = g_strdup (src->s); break;
    case CLINFER_ATTR_TENSOR: clinfer_tensor_ref (a->t); break;
    case CLINFER_ATTR_GRAPH: a->g = clinfer_graph_copy (src->g); break;
    case CLINFER_ATTR_FLOATS:
      a->floats.v = g_memdup2 (src->floats.v, src->floats.n * sizeof (float));
      break;
    case CLINFER_ATTR_INTS:
      a->ints.v = g_memdup2 (src->ints.v, src->ints.n * sizeof (int64_t));
      break;
    case CLINFER_ATTR_STRINGS:
      a->strings.v = g_new0 (char *, src->strings.n + 1);
      for (gsize i = 0; i < src->strings.n; i++)
        a->strings.v[i] = g_strdup (src->strings.v[i]);
      break;
    case CLINFER_ATTR_TENSORS:
      a->tensors.v = g_new0 (ClinferTensor *, src->tensors.n + 1);
      for (gsize i = 0; i < src->tensors.n; i++)
        a->tensors.v[i] = clinfer_tensor_ref (src->tensors.v[i]);
      break;
    case CLINFER_ATTR_GRAPHS:
      a->graphs.v = g_new0 (ClinferGraph *, src->graphs.n + 1);
      for (gsize i = 0; i < src->graphs.n; i++)
        a->graphs.v[i] = clinfer_graph_copy (src->graphs.v[i]);
      break;
    default:
      break;
  }
  return a;
}

static void
node_free (ClinferNode *node)
{
  if (node->op_data_free && node->op_data)
    node->op_data_free (node->op_data);
  for (guint i = 0; i < node->n_outputs; i++) {
    g_free (node->outputs[i].name);
    if (node->outputs[i].value)
      clinfer_tensor_unref (node->outputs[i].value);
  }
  g_free (node->outputs);
  g_free (node->inputs);
  g_hash_table_unref (node->attrs);
  g_free (node->name);
  g_free (node->op_type);
  g_free (node->domain);
  g_free (node->label_);
  g_free (node);
}

ClinferGraph *
clinfer_graph_new (const char *name, const char *origin)
{
  ClinferGraph *g = g_new0 (ClinferGraph, 1);

  g->name = g_strdup (name ? name : "");
  g->origin = g_strdup (origin ? origin : "<memory>");
  g->nodes = g_ptr_array_new_with_free_func ((GDestroyNotify) node_free);
  g->inputs = g_ptr_array_new ();
  g->outputs = g_array_new (FALSE, TRUE, sizeof (ClinferGraphOutput));
  g->opsets = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  g->metadata = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, g_free);
  return g;
}

void
clinfer_graph_free (ClinferGraph *graph)
{
  if (graph == NULL)
    return;
  for (guint i = 0; i < graph->outputs->len; i++)
    g_free (g_array_index (graph->outputs, ClinferGraphOutput, i).name);
  g_array_unref (graph->outputs);
  g_ptr_array_unref (graph->inputs);
  g_ptr_array_unref (graph->nodes);
  g_hash_table_unref (graph->opsets);
  g_hash_table_unref (graph->metadata);
  g_free (graph->name);
  g_free (graph->origin);
  g_free (graph);
}

ClinferNode *
clinfer_graph_add_node (ClinferGraph *graph, const char *op_type,
    const char *domain, const char *name, guint n_inputs, guint n_outputs)
{
  ClinferNode *n = g_new0 (ClinferNode, 1);

  n->id = graph->next_id++;
  n->op_type = g_strdup (op_type);
  n->domain = g_strdup (domain ? domain : "");
  n->name = g_strdup (name ? name : "");
  n->opset = clinfer_graph_get_opset (graph, n->domain);
  n->attrs = g_hash_table_new_full (g_str_hash, g_str_equal, g_free,
      (GDestroyNotify) clinfer_attr_free);
  n->n_inputs = n_inputs;
  n->inputs = g_new0 (ClinferPortRef, MAX (n_inputs, 1));
  n->n_outputs = n_outputs;
  n->outputs = g_new0 (ClinferPortDesc, MAX (n_outputs, 1));
  n->graph = graph;
  for (guint i = 0; i < n_outputs; i++) {
    n->outputs[i].shape = clinfer_shape_unknown ();
    n->outputs[i].name = g_strdup_printf ("%s:%u",
        *n->name ? n->name : n->op_type, i);
  }
  g_ptr_array_add (graph->nodes, n);
  return n;
}

ClinferNode *
clinfer_graph_add_input (ClinferGraph *graph, const char *name,
    ClinferElementType type, const ClinferShape *shape)
{
  ClinferNode *n = clinfer_graph_add_node (graph, "Parameter", "", name, 0, 1);

  g_free (n->outputs[0].name);
  n->outputs[0].name = g_strdup (name);
  n->outputs[0].type = type;
  n->outputs[0].shape = shape ? *shape : clinfer_shape_unknown ();
  g_ptr_array_add (graph->inputs, n);
  return n;
}

guint64
clinfer_graph_get_memory_limit (const ClinferGraph *graph)
{
  while (graph->parent)
    graph = graph->parent;
  return graph->memory_limit ? MIN (graph->memory_limit, CLINFER_MAX_TENSOR_BYTES)
      : CLINFER_MAX_TENSOR_BYTES;
}

ClinferNode *
clinfer_graph_add_constant (ClinferGraph *graph, const char *name,
    ClinferTensor *value)
{
  ClinferNode *n = clinfer_graph_add_node (graph, "Constant", "", name, 0, 1);

  g_free (n->outputs[0].name);
  n->outputs[0].name = g_strdup (name);
  n->outputs[0].type = clinfer_tensor_get_element_type (value);
  n->outputs[0].shape = *clinfer_tensor_get_shape (value);
  n->outputs[0].value = clinfer_tensor_ref (value);
  clinfer_node_set_attr (n, "value", clinfer_attr_new_tensor (value));
  return n;
}

void
clinfer_graph_add_output (ClinferGraph *graph, ClinferPortRef ref,
    const char *name)
{
  ClinferGraphOutput o = { ref, g_strdup (name) };
  g_array_append_val (graph->outputs, o);
}

void
clinfer_graph_remove_node (ClinferGraph *graph, ClinferNode *node)
{
  g_ptr_array_remove (graph->inputs, node);
  g_ptr_array_remove (graph->nodes, node);   /* frees */
}

void
clinfer_graph_replace_uses (ClinferGraph *graph, ClinferPortRef from,
    ClinferPortRef to)
{
  for (guint i = 0; i < graph->nodes->len; i++) {
    ClinferNode *n = g_ptr_array_index (graph->nodes, i);
    for (guint j = 0; j < n->n_inputs; j++)
      if (n->inputs[j].node == from.node && n->inputs[j].port == from.port)
        n->inputs[j] = to;
  }
  for (guint i = 0; i < graph->outputs->len; i++) {
    ClinferGraphOutput *o = &g_array_index (graph->outputs, ClinferGraphOutput, i);
    if (o->ref.node == from.node && o->ref.port == from.port)
      o->ref = to;
  }
}

guint
clinfer_graph_count_uses (const ClinferGraph *graph, ClinferPortRef ref)
{
  guint uses = 0;

  for (guint i = 0; i < graph->nodes->len; i++) {
    ClinferNode *n = g_ptr_array_index (graph->nodes, i);
    for (guint j = 0; j < n->n_inputs; j++)
      if (n->inputs[j].node == ref.node && n->inputs[j].port == ref.port)
        uses++;
  }
  for (guint i = 0; i < graph->outputs->len; i++) {
    ClinferGraphOutput *o = &g_array_index (graph->outputs, ClinferGraphOutput, i);
    if (o->ref.node == ref.node && o->ref.port == ref.port)
      uses++;
  }
  return uses;
}

static ClinferNode *
node_copy_shallow (ClinferGraph *dst, const ClinferNode *src)
{
  ClinferNode *n = clinfer_graph_add_node (dst, src->op_type, src->domain,
      src->name, src->n_inputs, src->n_outputs);

  n->id = src->id;
  n->opset = src->opset;
  n->def = NULL;             /* re-resolved (op_data is per node) */
  for (guint i = 0; i < src->n_outputs; i++) {
    g_free (n->outputs[i].name);
    n->outputs[i].name = g_strdup (src->outputs[i].name);
    n->outputs[i].type = src->outputs[i].type;
    n->outputs[i].shape = src->outputs[i].shape;
    n->outputs[i].left_out = src->outputs[i].left_out;
    if (src->outputs[i].value)
      n->outputs[i].value = clinfer_tensor_ref (src->outputs[i].value);
  }
  clinfer_node_copy_attrs (src, n);
  return n;
}

ClinferGraph *
clinfer_graph_copy (const ClinferGraph *graph)
{
  ClinferGraph *g = clinfer_graph_new (graph->name, graph->origin);
  g_autoptr (GHashTable) map = g_hash_table_new (NULL, NULL);
  GHashTableIter it;
  gpointer k, v;

  g->memory_limit = graph->memory_limit;

  g_hash_table_iter_init (&it, graph->opsets);
  while (g_hash_table_iter_next (&it, &k, &v))
    g_hash_table_insert (g->opsets, g_strdup (k), v);
  g_hash_table_iter_init (&it, graph->metadata);
  while (g_hash_table_iter_next (&it, &k, &v))
    g_hash_table_insert (g->metadata, g_strdup (k), g_strdup (v));
  g->parent = graph->parent;
  g->next_id = graph->next_id;
  for (guint i = 0; i < graph->nodes->len; i++) {
    const ClinferNode *src = g_ptr_array_index (graph->nodes, i);
    g_hash_table_insert (map, (gpointer) src, node_copy_shallow (g, src));
  }
  g->next_id = graph->next_id;
  for (guint i = 0; i < graph->nodes->len; i++) {
    const ClinferNode *src = g_ptr_array_index (graph->nodes, i);
    ClinferNode *dst = g_hash_table_lookup (map, src);
    for (guint j = 0; j < src->n_inputs; j++) {
      dst->inputs[j].node = src->inputs[j].node
          ? g_hash_table_lookup (map, src->inputs[j].node) : NULL;
      dst->inputs[j].port = src->inputs[j].port;
    }
  }
  for (guint i = 0; i < graph->inputs->len; i++)
    g_ptr_array_add (g->inputs,
        g_hash_table_lookup (map, g_ptr_array_index (graph->inputs, i)));
  for (guint i = 0; i < graph->outputs->len; i++) {
    const ClinferGraphOutput *o =
        &g_array_index (graph->outputs, ClinferGraphOutput, i);
    ClinferPortRef r = { g_hash_table_lookup (map, o->ref.node), o->ref.port };
    clinfer_graph_add_output (g, r, o->name);
  }
  return g;
}

/* Kahn's algorithm, picking ready nodes in insertion order. */
GPtrArray *
clinfer_graph_topological_order (const ClinferGraph *graph, GError **error)
{
  guint n = graph->nodes->len;
  g_autoptr (GHashTable) index = g_hash_table_new (NULL, NULL);
  g_autofree guint *pending = g_new0 (guint, MAX (n, 1));
  g_autofree GPtrArray **consumers = g_new0 (GPtrArray *, MAX (n, 1));
  GPtrArray *order = g_ptr_array_sized_new (n);
  GQueue ready = G_QUEUE_INIT;

  for (guint i = 0; i < n; i++)
    g_hash_table_insert (index, g_ptr_array_index (graph->nodes, i),
        GUINT_TO_POINTER (i + 1));
  for (guint i = 0; i < n; i++) {
    ClinferNode *node = g_ptr_array_index (graph->nodes, i);
    for (guint j = 0; j < node->n_inputs; j++) {
      guint p;
      if (node->inputs[j].node == NULL)
        continue;
      p = GPOINTER_TO_UINT (g_hash_table_lookup (index, node->inputs[j].node));
      if (p == 0)
        continue;            /* producer outside the graph (outer scope) */
      pending[i]++;
      if (consumers[p - 1] == NULL)
        consumers[p - 1] = g_ptr_array_new ();
      g_ptr_array_add (consumers[p - 1], GUINT_TO_POINTER (i));
    }
  }
  /* A min-ordered ready set keeps ties in insertion order; a queue of
   * indices scanned in order is enough for the graph sizes at hand. */
  for (guint i = 0; i < n; i++)
    if (pending[i] == 0)
      g_queue_push_tail (&ready, GUINT_TO_POINTER (i));
  while (!g_queue_is_empty (&ready)) {
    guint i = GPOINTER_TO_UINT (g_queue_pop_head (&ready));
    g_ptr_array_add (order, g_ptr_array_index (graph->nodes, i));
    if (consumers[i] == NULL)
      continue;
    for (guint k = 0; k < consumers[i]->len; k++) {
      guint c = GPOINTER_TO_UINT (g_ptr_array_index (consumers[i], k));
      if (--pending[c] == 0)
        g_queue_push_tail (&ready, GUINT_TO_POINTER (c));
    }
  }
  for (guint i = 0; i < n; i++)
    if (consumers[i])
      g_ptr_array_unref (consumers[i]);
  if (order->len != n) {
    const ClinferNode *bad = NULL;
    for (guint i = 0; i < n && bad == NULL; i++)
      if (pending[i] > 0)
        bad = g_ptr_array_index (graph->nodes, i);
    g_set_error (error, CLINFER_ERROR, CLINFER_ERROR_PARSE,
        "%s: the graph has a cycle through node %s", graph->origin,
        clinfer_node_label (bad));
    g_ptr_array_unref (order);
    return NULL;
  }
  return order;
}

int
clinfer_graph_get_opset (const ClinferGraph *graph, const char *domain)
{
  gpointer v;

  for (const ClinferGraph *g = graph; g; g = g->parent) {
    if (g_hash_table_lookup_extended (g->opsets, domain ? domain : "", NULL, &v))
      return GPOINTER_TO_INT (v);
  }
  return 0;
}

void
clinfer_node_set_attr (ClinferNode *node, const char *name, ClinferAttr *attr)
{
  g_hash_table_insert (node->attrs, g_strdup (name), attr);
}

void
clinfer_node_copy_attrs (const ClinferNode *src, ClinferNode *dst)
{
  GHashTableIter it;
  gpointer k, v;

  g_hash_table_iter_init (&it, src->attrs);
  while (g_hash_table_iter_next (&it, &k, &v))
    g_hash_table_insert (dst->attrs, g_strdup (k), attr_copy (v));
}

const ClinferAttr *
clinfer_node_get_attr (const ClinferNode *node, const char *name)
{
  return g_hash_table_lookup (node->attrs, name);
}

static gboolean
attr_of_type (const ClinferNode *node, const char *name, ClinferAttrType type,
    const ClinferAttr **out, GError **error)
{
  const ClinferAttr *a = clinfer_node_get_attr (node, name);

  *out = NULL;
  if (a == NULL)
    return TRUE;
  if (a->type != type) {
    g_set_error (error, CLINFER_ERROR, CLINFER_ERROR_INVALID_ARGUMENT,
        "%s: attribute '%s' is of type %s, expected %s",
        clinfer_node_label (node), name, clinfer_attr_type_name (a->type),
        clinfer_attr_type_name (type));
    return FALSE;
  }
  *out = a;
  return TRUE;
}

gboolean
clinfer_node_attr_int (const ClinferNode *node, const char *name, int64_t def,
    int64_t *out, GError **error)
{
  const ClinferAttr *a;

  if (!attr_of_type (node, name, CLINFER_ATTR_INT, &a, error))
    return FALSE;
  *out = a ? a->i : def;
  return TRUE;
}

gboolean
clinfer_node_attr_float (const ClinferNode *node, const char *name, float def,
    float *out, GError **error)
{
  const ClinferAttr *a = clinfer_node_get_attr (node, name);

  /* Exporters sometimes write integral floats as ints: accept them. */
  if (a && a->type == CLINFER_ATTR_INT) {
    *out = (float) a->i;
    return TRUE;
  }
  if (!attr_of_type (node, name, CLINFER_ATTR_FLOAT, &a, error))
    return FALSE;
  *out = a ? a->f : def;
  return TRUE;
}

gboolean
clinfer_node_attr_string (const ClinferNode *node, const char *name,
    const char *def, const char **out, GError **error)
{
  const ClinferAttr *a;

  if (!attr_of_type (node, name, CLINFER_ATTR_STRING, &a, error))
    return FALSE;
  *out = a ? a->s : def;
  return TRUE;
}

gboolean
clinfer_node_attr_ints (const ClinferNode *node, const char *name,
    const int64_t **out, gsize *n, GError **error)
{
  const ClinferAttr *a;

  if (!attr_of_type (node, name, CLINFER_ATTR_INTS, &a, error))
    return FALSE;
  *out = a ? a->ints.v : NULL;
  *n = a ? a->ints.n : 0;
  return TRUE;
}

gboolean
clinfer_node_attr_floats (const ClinferNode *node, const char *name,
    const float **out, gsize *n, GError **error)
{
  const ClinferAttr *a;

  if (!attr_of_type (node, name, CLINFER_ATTR_FLOATS, &a, error))
    return FALSE;
  *out = a ? a->floats.v : NULL;
  *n = a ? a->floats.n : 0;
  return TRUE;
}

const char *
clinfer_node_label (const ClinferNode *node)
{
  ClinferNode *n = (ClinferNode *) node;
  g_autofree char *note = NULL;

  if (node == NULL)
    return "(none)";
  if (n->label_ == NULL) {
    note = node->label_note ? g_strdup_printf (" (%s)", node->label_note)
        : g_strdup ("");
    if (*node->name)
      n->label_ = g_strdup_printf ("%s%s%s '%s'%s",
          *node->domain ? node->domain : "", *node->domain ? "." : "",
          node->op_type, node->name, note);
    else
      n->label_ = g_strdup_printf ("%s%s%s #%u (output '%s')%s",
          *node->domain ? node->domain : "", *node->domain ? "." : "",
          node->op_type, node->id,
          node->n_outputs ? node->outputs[0].name : "", note);
  }
  return n->label_;
}

void
clinfer_node_set_label_note (ClinferNode *node, const char *note)
{
  node->label_note = note;
  g_clear_pointer (&node->label_, g_free);
}

/* @s with @prefix and then @sep skipped, or NULL when it does not start
 * so. */
static const char *
skip_prefix (const char *s, const char *prefix, const char *sep)
{
  gsize n = strlen (prefix);

  if (strncmp (s, prefix, n) != 0 || !g_str_has_prefix (s + n, sep))
    return NULL;
  return s + n + strlen (sep);
}

void
clinfer_node_prefix_error (GError **error, const ClinferNode *node,
    const char *device)
{
  const char *origin = node->graph ? node->graph->origin : NULL;
  const char *label = clinfer_node_label (node);
  const char *what, *p;
  char *msg;

  if (error == NULL || *error == NULL)
    return;
  what = (*error)->message;
  if (origin && (p = skip_prefix (what, origin, ": ")))
    what = p;
  if ((p = skip_prefix (what, "node ", "")) && (p = skip_prefix (p, label, ""))) {
    /* "node <label>: ", "node <label> on <device>: " or "node <label> " */
    if (g_str_has_prefix (p, " on ") && strstr (p, ": "))
      what = strstr (p, ": ") + 2;
    else if (g_str_has_prefix (p, ": "))
      what = p + 2;
    else if (*p == ' ')
      what = p + 1;
  } else if ((p = skip_prefix (what, label, ": "))) {
    what = p;                /* "<label>: " */
  }
  msg = g_strdup_printf ("%s%snode %s%s%s: %s", origin ? origin : "",
      origin ? ": " : "", label, device ? " on " : "", device ? device : "",
      what);
  g_free ((*error)->message);
  (*error)->message = msg;
}

ClinferPortDesc *
clinfer_node_input_desc (const ClinferNode *node, guint i)
{
  const ClinferPortRef *r;

  if (i >= node->n_inputs)
    return NULL;
  r = &node->inputs[i];
  if (r->node == NULL || r->port >= r->node->n_outputs)
    return NULL;
  return &r->node->outputs[r->port];
}

guint
clinfer_node_n_present_inputs (const ClinferNode *node)
{
  guint n = node->n_inputs;

  while (n > 0 && node->inputs[n - 1].node == NULL)
    n--;
  return n;
}
