/* clinfer — OpenVINO IR v11 writer: walks the graph in topological order,
 * has the op exporters (ir-export-ops*.c) emit layers, stores each
 * distinct constant once in the .bin, and serialises layers (ids in
 * emission order, so topologically sorted), ports with precision and
 * dims, tensor names and edges. Ops without an exporter are written in
 * the clinfer extension opset. */
#include "frontend/ir/ir-writer.h"
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

/* Compressed (f16) storage is for weights: small constants (scales,
 * epsilons, shapes) keep full precision. */
#define COMPRESS_MIN_ELEMENTS 9
#define BLOB_ALIGN 8

typedef struct {
  ClinferElementType type;
  ClinferShape shape;
  GPtrArray *names;          /* char*, tensor names */
} IrOut;

typedef struct {
  char *type;
  char *version;
  char *name;
  GString *data;             /* ' key="value"' */
  GArray *ins;               /* IrVal */
  GArray *outs;              /* IrOut */
  gboolean decompression;
} IrSpec;

struct _IrWriter {
  const ClinferGraph *graph;
  const char *path;
  gboolean compress;
  GPtrArray *specs;          /* IrSpec* in emission order */
  GByteArray *bin;
  GHashTable *blobs;         /* GBytes (content) -> offset + 1 */
  GHashTable *values;        /* ClinferPortDesc* -> IrVal* */
  GHashTable *names;         /* tensor names in use (set) */
  GHashTable *layer_names;   /* layer names in use (set) */
  GHashTable *out_names;     /* ClinferPortDesc* -> GPtrArray of graph output names */
  GString *extension_ops;
  guint n_extension;
  const ClinferNode *current;  /* node being written, for messages */
  char *broken;              /* first dangling reference, for the error */
};

/* ---------------------------------------------------------------- */
/* Layer builder                                                     */

static void
out_clear (gpointer p)
{
  IrOut *o = p;
  if (o->names)
    g_ptr_array_unref (o->names);
}

static void
spec_free (IrSpec *s)
{
  g_free (s->type);
  g_free (s->version);
  g_free (s->name);
  g_string_free (s->data, TRUE);
  g_array_unref (s->ins);
  g_array_unref (s->outs);
  g_free (s);
}

static IrSpec *
spec_at (IrWriter *w, int layer)
{
  return g_ptr_array_index (w->specs, layer);
}

static char *
unique_in (GHashTable *set, const char *base)
{
  char *name = g_strdup (base);

  for (guint k = 1; g_hash_table_contains (set, name); k++) {
    g_free (name);
    name = g_strdup_printf ("%s_%u", base, k);
  }
  g_hash_table_add (set, g_strdup (name));
  return name;
}

int
irw_layer (IrWriter *w, const char *type, int opset, const char *name,
    const char *suffix)
{
  IrSpec *s = g_new0 (IrSpec, 1);
  g_autofree char *base = suffix ? g_strdup_printf ("%s/%s", name, suffix)
      : g_strdup (name && *name ? name : type);

  s->type = g_strdup (type);
  s->version = opset > 0 ? g_strdup_printf ("opset%d", opset)
      : g_strdup (CLINFER_IR_EXTENSION_OPSET);
  s->name = unique_in (w->layer_names, base);
  s->data = g_string_new (NULL);
  s->ins = g_array_new (FALSE, FALSE, sizeof (IrVal));
  s->outs = g_array_new (FALSE, TRUE, sizeof (IrOut));
  g_array_set_clear_func (s->outs, out_clear);
  g_ptr_array_add (w->specs, s);
  return (int) w->specs->len - 1;
}

static void
append_xml_escaped (GString *out, const char *s)
{
  for (; *s; s++) {
    switch (*s) {
      case '&': g_string_append (out, "&amp;"); break;
      case '<': g_string_append (out, "&lt;"); break;
      case '>': g_string_append (out, "&gt;"); break;
      case '"': g_string_append (out, "&quot;"); break;
      default: g_string_append_c (out, *s); break;
    }
  }
}

void
irw_attr (IrWriter *w, int layer, const char *key, const char *fmt, ...)
{
  IrSpec *s = spec_at (w, layer);
  g_autofree char *v = NULL;
  va_list ap;

  va_start (ap, fmt);
  v = g_strdup_vprintf (fmt, ap);
  va_end (ap);
  g_string_append_printf (s->data, " %s=\"", key);
  append_xml_escaped (s->data, v);
  g_string_append_c (s->data, '"');
}

void
irw_attr_ints (IrWriter *w, int layer, const char *key, const int64_t *v,
    gsize n)
{
  GString *list = g_string_new (NULL);

  for (gsize i = 0; i < n; i++)
    g_string_append_printf (list, "%s%" G_GINT64_FORMAT, i ? ", " : "", v[i]);
  irw_attr (w, layer, key, "%s", list->str);
  g_string_free (list, TRUE);
}

void
irw_input (IrWriter *w, int layer, IrVal v)
{
  if (v.layer < 0) {
    if (w->broken == NULL)
      w->broken = g_strdup_printf ("node %s reads a value that was not "
          "written", w->current ? clinfer_node_label (w->current) : "?");
    return;
  }
  g_array_append_val (spec_at (w, layer)->ins, v);
}

IrVal
irw_output (IrWriter *w, int layer, ClinferElementType type,
    const ClinferShape *shape)
{
  IrSpec *s = spec_at (w, layer);
  IrOut o = { type, shape ? *shape : clinfer_shape_unknown (), NULL };

  g_array_append_val (s->outs, o);
  return (IrVal) { layer, s->outs->len - 1 };
}

void
irw_mark_decompression (IrWriter *w, int layer)
{
  spec_at (w, layer)->decompression = TRUE;
}

static IrOut *
val_out (IrWriter *w, IrVal v)
{
  return &g_array_index (spec_at (w, v.layer)->outs, IrOut, v.out);
}

ClinferElementType
irw_type (IrWriter *w, IrVal v)
{
  return v.layer < 0 ? CLINFER_TYPE_UNDEFINED : val_out (w, v)->type;
}

const ClinferShape *
irw_shape (IrWriter *w, IrVal v)
{
  static const ClinferShape unknown = { -1, { 0 } };
  return v.layer < 0 ? &unknown : &val_out (w, v)->shape;
}

IrVal
irw_op (IrWriter *w, const ClinferNode *n, const char *type, int opset,
    const char *suffix, const IrVal *ins, guint n_ins, guint port)
{
  int l = irw_layer (w, type, opset, *n->name ? n->name : n->outputs[0].name,
      suffix);

  for (guint i = 0; i < n_ins; i++)
    irw_input (w, l, ins[i]);
  return irw_output (w, l, n->outputs[port].type, &n->outputs[port].shape);
}

/* ---------------------------------------------------------------- */
/* Constants                                                         */

/* Offset of @size bytes at @data in the .bin, stored once. */
static gsize
blob_offset (IrWriter *w, const void *data, gsize size)
{
  g_autoptr (GBytes) key = g_bytes_new (data, size);
  gpointer v;
  gsize offset;

  if (g_hash_table_lookup_extended (w->blobs, key, NULL, &v))
    return GPOINTER_TO_SIZE (v) - 1;
  while (w->bin->len % BLOB_ALIGN)
    g_byte_array_append (w->bin, (const guint8 *) "", 1);
  offset = w->bin->len;
  g_byte_array_append (w->bin, data, (guint) size);
  g_hash_table_insert (w->blobs, g_bytes_ref (key), GSIZE_TO_POINTER (offset + 1));
  return offset;
}

static char *
shape_text (const ClinferShape *s)
{
  GString *t = g_string_new (NULL);

  if (s->rank < 0)
    return g_string_free (t, FALSE);
  for (int i = 0; i < s->rank; i++) {
    if (s->dims[i] < 0)
      g_string_append_printf (t, "%s?", i ? ", " : "");
    else
      g_string_append_printf (t, "%s%" G_GINT64_FORMAT, i ? ", " : "", s->dims[i]);
  }
  return g_string_free (t, FALSE);
}

static IrVal
const_layer (IrWriter *w, const char *name, ClinferElementType type,
    const ClinferShape *shape, const void *data, gsize size)
{
  int l = irw_layer (w, "Const", 1, name, NULL);
  g_autofree char *st = shape_text (shape);
  gsize offset = blob_offset (w, data, size);

  irw_attr (w, l, "element_type", "%s", clinfer_ir_type_name (type));
  irw_attr (w, l, "shape", "%s", st);
  irw_attr (w, l, "offset", "%" G_GSIZE_FORMAT, offset);
  irw_attr (w, l, "size", "%" G_GSIZE_FORMAT, size);
  return irw_output (w, l, type, shape);
}

/* f16 copy of an f32 tensor, or NULL when a value does not fit. */
static guint16 *
to_half (const ClinferTensor *t, gsize n)
{
  const float *src = clinfer_tensor_get_const_data (t);
  g_autofree guint16 *h = g_new (guint16, MAX (n, 1));

  for (gsize i = 0; i < n; i++) {
    if (!isfinite (src[i]) || fabsf (src[i]) > 65504.f)
      return NULL;
    h[i] = clinfer_float_to_half (src[i]);
  }
  return g_steal_pointer (&h);
}

IrVal
irw_const (IrWriter *w, const ClinferTensor *t, const char *name,
    gboolean compressible)
{
  ClinferElementType type = clinfer_tensor_get_element_type (t);
  const ClinferShape *shape = clinfer_tensor_get_shape (t);
  gsize n = (gsize) clinfer_tensor_get_n_elements (t);
  g_autoptr (ClinferTensor) dense = NULL;
  g_autofree guint16 *half = NULL;

  if (clinfer_ir_type_name (type) == NULL) {
    if (w->broken == NULL)
      w->broken = g_strdup_printf ("constant '%s' has element type %s, which "
          "IR cannot hold", name, clinfer_element_type_name (type));
    return IR_VAL_NONE;
  }
  if (!clinfer_tensor_is_contiguous (t))
    t = dense = clinfer_tensor_copy (t, NULL);
  if (w->compress && compressible && type == CLINFER_TYPE_F32
      && n >= COMPRESS_MIN_ELEMENTS && (half = to_half (t, n))) {
    g_autofree char *cname = g_strdup_printf ("%s_compressed", name);
    IrVal c = const_layer (w, cname, CLINFER_TYPE_F16, shape, half,
        n * sizeof (guint16));
    int l = irw_layer (w, "Convert", 1, name, NULL);
    irw_attr (w, l, "destination_type", "f32");
    irw_mark_decompression (w, l);
    irw_input (w, l, c);
    return irw_output (w, l, CLINFER_TYPE_F32, shape);
  }
  return const_layer (w, name, type, shape, clinfer_tensor_get_const_data (t),
      clinfer_tensor_get_byte_size (t));
}

IrVal
irw_const_i64 (IrWriter *w, const char *name, const int64_t *v, gsize n,
    gboolean scalar)
{
  int64_t dim = (int64_t) n;
  ClinferShape s = clinfer_shape_make (scalar ? 0 : 1, &dim);
  static const int64_t zero = 0;

  return const_layer (w, name, CLINFER_TYPE_I64, &s, n ? (const void *) v
      : (const void *) &zero, n * sizeof (int64_t));
}

IrVal
irw_const_float (IrWriter *w, const char *name, ClinferElementType type,
    double v, gboolean one_d)
{
  int64_t one = 1;
  ClinferShape s = clinfer_shape_make (one_d ? 1 : 0, &one);
  float f = (float) v;
  guint16 h = clinfer_float_to_half (f);

  if (type == CLINFER_TYPE_F64)
    return const_layer (w, name, type, &s, &v, sizeof (double));
  if (type == CLINFER_TYPE_F16)
    return const_layer (w, name, type, &s, &h, sizeof (h));
  return const_layer (w, name, CLINFER_TYPE_F32, &s, &f, sizeof (f));
}

/* ---------------------------------------------------------------- */
/* Graph values                                                      */

const ClinferTensor *
irw_in_value (const ClinferNode *n, guint i)
{
  ClinferPortDesc *d = clinfer_node_input_desc (n, i);
  return d ? d->value : NULL;
}

IrVal
irw_in (IrWriter *w, const ClinferNode *n, guint i)
{
  ClinferPortDesc *d = clinfer_node_input_desc (n, i);
  IrVal *v;
  IrVal c;

  if (d == NULL)
    return IR_VAL_NONE;
  if ((v = g_hash_table_lookup (w->values, d)))
    return *v;
  if (d->value == NULL)
    return IR_VAL_NONE;
  /* Constants are written where first used. */
  c = irw_const (w, d->value, d->name, TRUE);
  irw_set (w, n->inputs[i].node, n->inputs[i].port, c);
  return c;
}

void
irw_set (IrWriter *w, const ClinferNode *n, guint port, IrVal v)
{
  const ClinferPortDesc *d = &n->outputs[port];
  GPtrArray *graph_names = g_hash_table_lookup (w->out_names, d);
  IrOut *o;

  if (v.layer < 0)
    return;                  /* w->broken says why */
  o = val_out (w, v);

  g_hash_table_replace (w->values, (gpointer) d, g_memdup2 (&v, sizeof (v)));
  if (o->names == NULL)
    o->names = g_ptr_array_new_with_free_func (g_free);
  /* The engine's tensor name, plus any graph output name of the port. */
  if (!g_hash_table_contains (w->names, d->name)) {
    g_hash_table_add (w->names, g_strdup (d->name));
    g_ptr_array_add (o->names, g_strdup (d->name));
  }
  for (guint i = 0; graph_names && i < graph_names->len; i++) {
    const char *name = g_ptr_array_index (graph_names, i);
    if (!g_hash_table_contains (w->names, name)) {
      g_hash_table_add (w->names, g_strdup (name));
      g_ptr_array_add (o->names, g_strdup (name));
    }
  }
}

/* ---------------------------------------------------------------- */
/* Extension opset                                                   */

static gboolean
extension_attrs (IrWriter *w, int l, const ClinferNode *n, GError **error)
{
  GHashTableIter it;
  gpointer k, v;

  irw_attr (w, l, "clinfer.domain", "%s", n->domain);
  irw_attr (w, l, "clinfer.opset", "%d", n->opset);
  g_hash_table_iter_init (&it, n->attrs);
  while (g_hash_table_iter_next (&it, &k, &v)) {
    const ClinferAttr *a = v;
    GString *s = g_string_new (NULL);
    switch (a->type) {
      case CLINFER_ATTR_INT: g_string_printf (s, "i:%" G_GINT64_FORMAT, a->i); break;
      case CLINFER_ATTR_FLOAT: g_string_printf (s, "f:%.9g", a->f); break;
      case CLINFER_ATTR_STRING: g_string_printf (s, "s:%s", a->s); break;
      case CLINFER_ATTR_INTS:
        g_string_append (s, "ints:");
        for (gsize i = 0; i < a->ints.n; i++)
          g_string_append_printf (s, "%s%" G_GINT64_FORMAT, i ? "," : "",
              a->ints.v[i]);
        break;
      case CLINFER_ATTR_FLOATS:
        g_string_append (s, "floats:");
        for (gsize i = 0; i < a->floats.n; i++)
          g_string_append_printf (s, "%s%.9g", i ? "," : "", a->floats.v[i]);
        break;
      default:
        g_set_error (error, CLINFER_ERROR, CLINFER_ERROR_UNSUPPORTED_OP,
            "%s: node %s: attribute '%s' of type %s cannot be written to an "
            "IR", w->path, clinfer_node_label (n), (const char *) k,
            clinfer_attr_type_name (a->type));
        g_string_free (s, TRUE);
        return FALSE;
    }
    irw_attr (w, l, k, "%s", s->str);
    g_string_free (s, TRUE);
  }
  return TRUE;
}

/* The node as one layer of the clinfer extension opset. */
static gboolean
write_extension (IrWriter *w, const ClinferNode *n, GError **error)
{
  int l = irw_layer (w, n->op_type, 0, *n->name ? n->name : n->outputs[0].name,
      NULL);

  GString *absent = g_string_new (NULL);

  if (!extension_attrs (w, l, n, error)) {
    g_string_free (absent, TRUE);
    return FALSE;
  }
  /* Absent optional inputs are left out and listed, so the reader can put
   * the present ones back at their positions. */
  for (guint i = 0; i < n->n_inputs; i++) {
    IrVal v = n->inputs[i].node ? irw_in (w, n, i) : IR_VAL_NONE;
    if (n->inputs[i].node)
      irw_input (w, l, v);
    else
      g_string_append_printf (absent, "%s%u", absent->len ? "," : "", i);
  }
  irw_attr (w, l, "clinfer.inputs", "%u", n->n_inputs);
  if (absent->len)
    irw_attr (w, l, "clinfer.absent", "%s", absent->str);
  g_string_free (absent, TRUE);
  for (guint i = 0; i < n->n_outputs; i++)
    irw_set (w, n, i, irw_output (w, l, n->outputs[i].type,
        &n->outputs[i].shape));
  w->n_extension++;
  if (!strstr (w->extension_ops->str, n->op_type))
    g_string_append_printf (w->extension_ops, "%s%s",
        w->extension_ops->len ? ", " : "", n->op_type);
  return TRUE;
}

/* ---------------------------------------------------------------- */
/* Walking the graph                                                 */

/* Forgets the layers from @mark on: values and names they gave. */
static void
roll_back (IrWriter *w, guint mark)
{
  GHashTableIter it;
  gpointer k, v;

  g_hash_table_iter_init (&it, w->values);
  while (g_hash_table_iter_next (&it, &k, &v))
    if (((IrVal *) v)->layer >= (int) mark)
      g_hash_table_iter_remove (&it);
  for (guint i = mark; i < w->specs->len; i++) {
    IrSpec *s = spec_at (w, (int) i);
    for (guint j = 0; j < s->outs->len; j++) {
      IrOut *o = &g_array_index (s->outs, IrOut, j);
      for (guint k2 = 0; o->names && k2 < o->names->len; k2++)
        g_hash_table_remove (w->names, g_ptr_array_index (o->names, k2));
    }
    g_hash_table_remove (w->layer_names, s->name);
  }
  g_ptr_array_remove_range (w->specs, mark, w->specs->len - mark);
}

static gboolean
write_node (IrWriter *w, const ClinferNode *n, GError **error)
{
  IrExportFunc fn;
  guint mark = w->specs->len;

  if (strcmp (n->op_type, "Constant") == 0 || strcmp (n->op_type, "Parameter") == 0)
    return TRUE;
  w->current = n;
  fn = *n->domain ? NULL : clinfer_ir_exporter_lookup (n->op_type);
  if (fn) {
    GError *err = NULL;
    if (fn (w, n, &err))
      return TRUE;
    if (err) {
      g_propagate_error (error, err);
      return FALSE;
    }
    /* Declined (an attribute OpenVINO cannot express): drop what it
     * emitted and write the node in the extension opset. */
    roll_back (w, mark);
  }
  return write_extension (w, n, error);
}

static gboolean
write_parameter (IrWriter *w, const ClinferNode *n, GError **error)
{
  const ClinferPortDesc *d = &n->outputs[0];
  const char *type = clinfer_ir_type_name (d->type);
  g_autofree char *shape = NULL;
  int l;

  if (type == NULL) {
    g_set_error (error, CLINFER_ERROR, CLINFER_ERROR_TYPE_MISMATCH,
        "%s: input '%s' has element type %s, which IR cannot hold", w->path,
        d->name, clinfer_element_type_name (d->type));
    return FALSE;
  }
  l = irw_layer (w, "Parameter", 1, d->name, NULL);
  shape = d->shape.rank < 0 ? g_strdup ("...") : shape_text (&d->shape);
  irw_attr (w, l, "shape", "%s", shape);
  irw_attr (w, l, "element_type", "%s", type);
  irw_set (w, n, 0, irw_output (w, l, d->type, &d->shape));
  return TRUE;
}

static gboolean
write_results (IrWriter *w, GError **error)
{
  for (guint i = 0; i < w->graph->outputs->len; i++) {
    const ClinferGraphOutput *o = &g_array_index (w->graph->outputs,
        ClinferGraphOutput, i);
    IrVal *v = o->ref.node ? g_hash_table_lookup (w->values,
        &o->ref.node->outputs[o->ref.port]) : NULL;
    g_autofree char *name = g_strdup_printf ("%s/sink_port_0", o->name);
    int l;

    if (v == NULL) {
      g_set_error (error, CLINFER_ERROR, CLINFER_ERROR_INVALID_ARGUMENT,
          "%s: graph output '%s' has no producer", w->path, o->name);
      return FALSE;
    }
    l = irw_layer (w, "Result", 1, name, NULL);
    irw_input (w, l, *v);
  }
  return TRUE;
}

static void
collect_output_names (IrWriter *w)
{
  for (guint i = 0; i < w->graph->outputs->len; i++) {
    const ClinferGraphOutput *o = &g_array_index (w->graph->outputs,
        ClinferGraphOutput, i);
    GPtrArray *names;
    if (o->ref.node == NULL)
      continue;
    names = g_hash_table_lookup (w->out_names, &o->ref.node->outputs[o->ref.port]);
    if (names == NULL) {
      names = g_ptr_array_new_with_free_func (g_free);
      g_hash_table_insert (w->out_names, &o->ref.node->outputs[o->ref.port], names);
    }
    g_ptr_array_add (names, g_strdup (o->name));
  }
}

static gboolean
write_graph (IrWriter *w, GError **error)
{
  g_autoptr (GPtrArray) order = clinfer_graph_topological_order (w->graph,
      error);

  if (order == NULL)
    return FALSE;
  collect_output_names (w);
  for (guint i = 0; i < w->graph->inputs->len; i++)
    if (!write_parameter (w, g_ptr_array_index (w->graph->inputs, i), error))
      return FALSE;
  for (guint i = 0; i < order->len; i++)
    if (!write_node (w, g_ptr_array_index (order, i), error))
      return FALSE;
  /* Outputs read straight from a constant. */
  for (guint i = 0; i < w->graph->outputs->len; i++) {
    const ClinferGraphOutput *o = &g_array_index (w->graph->outputs,
        ClinferGraphOutput, i);
    const ClinferPortDesc *d = o->ref.node ? &o->ref.node->outputs[o->ref.port]
        : NULL;
    if (d && d->value && !g_hash_table_contains (w->values, d))
      irw_set (w, o->ref.node, o->ref.port, irw_const (w, d->value, d->name,
          FALSE));
  }
  if (!write_results (w, error))
    return FALSE;
  if (w->broken) {
    g_set_error (error, CLINFER_ERROR, CLINFER_ERROR_INVALID_ARGUMENT,
        "%s: %s", w->path, w->broken);
    return FALSE;
  }
  return TRUE;
}

/* ---------------------------------------------------------------- */
/* Serialisation                                                     */

static void
append_port (GString *x, guint id, const IrOut *o)
{
  const char *prec = clinfer_ir_precision_name (o->type);

  g_string_append_printf (x, "\t\t\t\t<port id=\"%u\"", id);
  if (prec)
    g_string_append_printf (x, " precision=\"%s\"", prec);
  if (o->names && o->names->len) {
    GString *names = g_string_new (NULL);
    for (guint i = 0; i < o->names->len; i++) {
      const char *n = g_ptr_array_index (o->names, i);
      if (i)
        g_string_append_c (names, ',');
      for (; *n; n++) {
        if (*n == ',')
          g_string_append_c (names, '\\');
        g_string_append_c (names, *n);
      }
    }
    g_string_append (x, " names=\"");
    append_xml_escaped (x, names->str);
    g_string_append_c (x, '"');
    g_string_free (names, TRUE);
  }
  g_string_append (x, ">\n");
  for (int i = 0; i < o->shape.rank; i++) {
    if (o->shape.dims[i] < 0)
      g_string_append (x, "\t\t\t\t\t<dim>-1</dim>\n");
    else
      g_string_append_printf (x, "\t\t\t\t\t<dim>%" G_GINT64_FORMAT "</dim>\n",
          o->shape.dims[i]);
  }
  g_string_append (x, "\t\t\t\t</port>\n");
}

static void
append_layer (IrWriter *w, GString *x, GString *edges, guint id, IrSpec *s)
{
  g_string_append_printf (x, "\t\t<layer id=\"%u\" name=\"", id);
  append_xml_escaped (x, s->name);
  g_string_append_printf (x, "\" type=\"%s\" version=\"%s\">\n", s->type,
      s->version);
  if (s->data->len)
    g_string_append_printf (x, "\t\t\t<data%s />\n", s->data->str);
  if (s->decompression)
    g_string_append (x, "\t\t\t<rt_info>\n\t\t\t\t<attribute "
        "name=\"decompression\" version=\"0\" />\n\t\t\t</rt_info>\n");
  if (s->ins->len) {
    g_string_append (x, "\t\t\t<input>\n");
    for (guint i = 0; i < s->ins->len; i++) {
      IrVal v = g_array_index (s->ins, IrVal, i);
      IrOut src = *val_out (w, v);
      src.names = NULL;
      append_port (x, i, &src);
      g_string_append_printf (edges, "\t\t<edge from-layer=\"%d\" from-port="
          "\"%u\" to-layer=\"%u\" to-port=\"%u\" />\n", v.layer,
          spec_at (w, v.layer)->ins->len + v.out, id, i);
    }
    g_string_append (x, "\t\t\t</input>\n");
  }
  if (s->outs->len) {
    g_string_append (x, "\t\t\t<output>\n");
    for (guint i = 0; i < s->outs->len; i++)
      append_port (x, s->ins->len + i, &g_array_index (s->outs, IrOut, i));
    g_string_append (x, "\t\t\t</output>\n");
  }
  g_string_append (x, "\t\t</layer>\n");
}

static gboolean
save (IrWriter *w, GError **error)
{
  GString *x = g_string_new ("<?xml version=\"1.0\"?>\n");
  GString *edges = g_string_new (NULL);
  g_autofree char *bin_path = g_str_has_suffix (w->path, ".xml")
      ? g_strdup_printf ("%.*s.bin", (int) strlen (w->path) - 4, w->path)
      : g_strdup_printf ("%s.bin", w->path);
  g_autoptr (GError) err = NULL;
  gboolean ok;

  g_string_append (x, "<net name=\"");
  append_xml_escaped (x, *w->graph->name ? w->graph->name : "clinfer");
  g_string_append (x, "\" version=\"11\">\n\t<layers>\n");
  for (guint i = 0; i < w->specs->len; i++)
    append_layer (w, x, edges, i, spec_at (w, (int) i));
  g_string_append_printf (x, "\t</layers>\n\t<edges>\n%s\t</edges>\n"
      "\t<rt_info>\n\t\t<info name=\"generator\" value=\"clinfer-convert\" />\n"
      "\t</rt_info>\n</net>\n", edges->str);
  ok = g_file_set_contents (bin_path, (const char *) w->bin->data,
      (gssize) w->bin->len, &err)
      && g_file_set_contents (w->path, x->str, (gssize) x->len, &err);
  if (!ok)
    g_set_error (error, CLINFER_ERROR, CLINFER_ERROR_IO, "%s: %s", w->path,
        err->message);
  g_string_free (x, TRUE);
  g_string_free (edges, TRUE);
  return ok;
}

gboolean
clinfer_ir_write (const ClinferGraph *graph, const char *xml_path,
    ClinferIrWriteOptions *options, GError **error)
{
  IrWriter w = { 0 };
  gboolean ok;

  w.graph = graph;
  w.path = xml_path;
  w.compress = options && options->compress_to_fp16;
  w.specs = g_ptr_array_new_with_free_func ((GDestroyNotify) spec_free);
  w.bin = g_byte_array_new ();
  w.blobs = g_hash_table_new_full (g_bytes_hash, g_bytes_equal,
      (GDestroyNotify) g_bytes_unref, NULL);
  w.values = g_hash_table_new_full (NULL, NULL, NULL, g_free);
  w.names = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  w.layer_names = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  w.out_names = g_hash_table_new_full (NULL, NULL, NULL,
      (GDestroyNotify) g_ptr_array_unref);
  w.extension_ops = g_string_new (NULL);
  ok = write_graph (&w, error) && save (&w, error);
  if (ok && options) {
    options->n_extension_layers = w.n_extension;
    options->extension_ops = w.extension_ops->len
        ? g_strdup (w.extension_ops->str) : NULL;
  }
  g_string_free (w.extension_ops, TRUE);
  g_free (w.broken);
  g_hash_table_unref (w.out_names);
  g_hash_table_unref (w.layer_names);
  g_hash_table_unref (w.names);
  g_hash_table_unref (w.values);
  g_hash_table_unref (w.blobs);
  g_byte_array_unref (w.bin);
  g_ptr_array_unref (w.specs);
  return ok;
}
