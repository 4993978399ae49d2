/* clinfer — OpenVINO IR reader: parses the .xml with libxml2 (layers,
 * ports, edges), maps the .bin read-only, checks every reference, and has
 * the op translators (ir-ops*.c) turn each layer into engine nodes, then
 * wires the edges and checks the result is acyclic. */
#include "frontend/ir/ir-private.h"
#include "ops/op.h"
#include <libxml/parser.h>
#include <libxml/tree.h>
#include <errno.h>
#include <stdarg.h>
#include <string.h>

/* ---------------------------------------------------------------- */
/* Element types                                                     */

static const struct {
  ClinferElementType type;
  const char *name;          /* element_type attribute */
  const char *precision;     /* port precision attribute */
  const char *alias;
} ir_types[] = {
  { CLINFER_TYPE_F32, "f32", "FP32", NULL },
  { CLINFER_TYPE_F16, "f16", "FP16", NULL },
  { CLINFER_TYPE_BF16, "bf16", "BF16", NULL },
  { CLINFER_TYPE_F64, "f64", "FP64", NULL },
  { CLINFER_TYPE_I8, "i8", "I8", NULL },
  { CLINFER_TYPE_I16, "i16", "I16", NULL },
  { CLINFER_TYPE_I32, "i32", "I32", NULL },
  { CLINFER_TYPE_I64, "i64", "I64", NULL },
  { CLINFER_TYPE_U8, "u8", "U8", NULL },
  { CLINFER_TYPE_U16, "u16", "U16", NULL },
  { CLINFER_TYPE_U32, "u32", "U32", NULL },
  { CLINFER_TYPE_U64, "u64", "U64", NULL },
  { CLINFER_TYPE_BOOL, "boolean", "BOOL", "BOOLEAN" },
};

const char *
clinfer_ir_type_name (ClinferElementType type)
{
  for (gsize i = 0; i < G_N_ELEMENTS (ir_types); i++)
    if (ir_types[i].type == type)
      return ir_types[i].name;
  return NULL;
}

const char *
clinfer_ir_precision_name (ClinferElementType type)
{
  for (gsize i = 0; i < G_N_ELEMENTS (ir_types); i++)
    if (ir_types[i].type == type)
      return ir_types[i].precision;
  return NULL;
}

ClinferElementType
clinfer_ir_type_from_name (const char *name)
{
  if (name == NULL)
    return CLINFER_TYPE_UNDEFINED;
  for (gsize i = 0; i < G_N_ELEMENTS (ir_types); i++)
    if (g_ascii_strcasecmp (name, ir_types[i].name) == 0
        || g_ascii_strcasecmp (name, ir_types[i].precision) == 0
        || (ir_types[i].alias && g_ascii_strcasecmp (name, ir_types[i].alias) == 0))
      return ir_types[i].type;
  return CLINFER_TYPE_UNDEFINED;
}

/* ---------------------------------------------------------------- */
/* Small parsers                                                     */

static gboolean
parse_int (const char *text, int64_t *out)
{
  g_autofree char *s = g_strstrip (g_strdup (text));
  char *end = NULL;
  gint64 v;

  if (*s == '\0')
    return FALSE;
  errno = 0;
  v = g_ascii_strtoll (s, &end, 10);
  if (errno != 0 || end == s || *end != '\0')
    return FALSE;
  *out = v;
  return TRUE;
}

/* One dimension: "3", "-1", "?", "1..10", "..10", "2..". Intervals with
 * equal bounds are static. */
static gboolean
parse_dim (const char *text, int64_t *out)
{
  g_autofree char *s = g_strstrip (g_strdup (text));
  const char *dots = strstr (s, "..");
  int64_t lo = 0, hi = -1;

  if (strcmp (s, "?") == 0 || strcmp (s, "-1") == 0) {
    *out = CLINFER_DIM_DYNAMIC;
    return TRUE;
  }
  if (dots == NULL)
    return parse_int (s, out) && *out >= 0;
  {
    g_autofree char *a = g_strndup (s, dots - s);
    const char *b = dots + 2;
    if ((*a && (!parse_int (a, &lo) || lo < 0))
        || (*b && (!parse_int (b, &hi) || hi < -1)))
      return FALSE;
  }
  *out = (*s && lo == hi) ? lo : CLINFER_DIM_DYNAMIC;
  return TRUE;
}

gboolean
clinfer_ir_parse_shape (const char *text, ClinferShape *shape)
{
  g_autofree char *s = g_strstrip (g_strdup (text ? text : ""));
  g_auto (GStrv) parts = NULL;
  char *p = s;
  gsize len = strlen (s);

  if (len >= 2 && s[0] == '[' && s[len - 1] == ']') {
    s[len - 1] = '\0';
    p = g_strstrip (s + 1);
  }
  if (strcmp (p, "...") == 0) {
    *shape = clinfer_shape_unknown ();
    return TRUE;
  }
  *shape = clinfer_shape_make (0, NULL);
  if (*p == '\0')
    return TRUE;
  parts = g_strsplit (p, ",", -1);
  if (g_strv_length (parts) > CLINFER_MAX_RANK)
    return FALSE;
  shape->rank = (int) g_strv_length (parts);
  for (int i = 0; i < shape->rank; i++)
    if (!parse_dim (parts[i], &shape->dims[i]))
      return FALSE;
  return TRUE;
}

/* Splits a names attribute at unescaped commas; "\," is a comma. */
static char **
split_names (const char *text)
{
  GPtrArray *names = g_ptr_array_new ();
  GString *cur = g_string_new (NULL);

  for (const char *p = text; ; p++) {
    if (*p == '\\' && p[1] == ',') {
      g_string_append_c (cur, ',');
      p++;
    } else if (*p == ',' || *p == '\0') {
      if (cur->len > 0)
        g_ptr_array_add (names, g_strdup (cur->str));
      g_string_truncate (cur, 0);
      if (*p == '\0')
        break;
    } else {
      g_string_append_c (cur, *p);
    }
  }
  g_string_free (cur, TRUE);
  g_ptr_array_add (names, NULL);
  return (char **) g_ptr_array_free (names, FALSE);
}

/* ---------------------------------------------------------------- */
/* Layers                                                            */

static void
port_clear (gpointer p)
{
  g_strfreev (((IrPort *) p)->names);
}

static IrLayer *
layer_new (void)
{
  IrLayer *l = g_new0 (IrLayer, 1);

  l->data = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, g_free);
  l->inputs = g_array_new (FALSE, TRUE, sizeof (IrPort));
  l->outputs = g_array_new (FALSE, TRUE, sizeof (IrPort));
  g_array_set_clear_func (l->inputs, port_clear);
  g_array_set_clear_func (l->outputs, port_clear);
  l->sinks = g_array_new (FALSE, TRUE, sizeof (IrSink));
  return l;
}

static void
layer_free (IrLayer *l)
{
  g_free (l->name);
  g_free (l->type);
  g_free (l->version);
  g_free (l->output_names);
  g_hash_table_unref (l->data);
  g_array_unref (l->inputs);
  g_array_unref (l->outputs);
  g_array_unref (l->sinks);
  g_free (l->src);
  g_free (l->src_port);
  g_free (l->out_refs);
  if (l->value)
    clinfer_tensor_unref (l->value);
  g_free (l->label_);
  g_free (l);
}

const char *
ir_layer_label (IrLayer *l)
{
  if (l->label_ == NULL)
    l->label_ = g_strdup_printf ("layer %" G_GINT64_FORMAT " '%s' (%s, %s)",
        l->id, l->name, l->type, l->version);
  return l->label_;
}

void
ir_set_error (IrReader *r, IrLayer *l, GError **error, int code,
    const char *fmt, ...)
{
  g_autofree char *msg = NULL;
  va_list ap;

  va_start (ap, fmt);
  msg = g_strdup_vprintf (fmt, ap);
  va_end (ap);
  if (l)
    g_set_error (error, CLINFER_ERROR, code, "%s:%d: %s: %s", r->origin,
        l->line, ir_layer_label (l), msg);
  else
    g_set_error (error, CLINFER_ERROR, code, "%s: %s", r->origin, msg);
}

/* (transfer full) Attribute @name of @node, or NULL. */
static char *
xml_prop (xmlNode *node, const char *name)
{
  xmlChar *v = xmlGetProp (node, (const xmlChar *) name);
  char *s = v ? g_strdup ((const char *) v) : NULL;

  xmlFree (v);
  return s;
}

static gboolean
is_element (xmlNode *n, const char *name)
{
  return n->type == XML_ELEMENT_NODE
      && strcmp ((const char *) n->name, name) == 0;
}

static xmlNode *
child_element (xmlNode *parent, const char *name)
{
  for (xmlNode *c = parent->children; c; c = c->next)
    if (is_element (c, name))
      return c;
  return NULL;
}

static gboolean
parse_port (IrReader *r, IrLayer *l, xmlNode *xp, IrPort *port, GError **error)
{
  g_autofree char *id = xml_prop (xp, "id"), *prec = xml_prop (xp, "precision");
  g_autofree char *names = xml_prop (xp, "names");
  int64_t v;
  int rank = 0;

  if (id == NULL || !parse_int (id, &v) || v < 0 || v > G_MAXINT) {
    ir_set_error (r, l, error, CLINFER_ERROR_PARSE,
        "a <port> has id '%s', expected a non-negative integer",
        id ? id : "(missing)");
    return FALSE;
  }
  port->id = (guint) v;
  port->type = clinfer_ir_type_from_name (prec);
  port->described = prec != NULL;
  port->names = names ? split_names (names) : NULL;
  port->shape = clinfer_shape_make (0, NULL);
  for (xmlNode *d = xp->children; d; d = d->next) {
    g_autofree char *text = NULL;
    if (!is_element (d, "dim"))
      continue;
    text = (char *) xmlNodeGetContent (d);
    if (rank >= CLINFER_MAX_RANK || !parse_dim (text ? text : "",
            &port->shape.dims[rank])) {
      ir_set_error (r, l, error, CLINFER_ERROR_PARSE,
          "port %u: <dim> '%s' is not a dimension (integer >= 0, -1, ?, a..b), "
          "or more than %d dims", port->id, text ? text : "", CLINFER_MAX_RANK);
      return FALSE;
    }
    rank++;
  }
  port->shape.rank = rank;
  return TRUE;
}

static gboolean
parse_ports (IrReader *r, IrLayer *l, xmlNode *section, GArray *ports,
    GError **error)
{
  if (section == NULL)
    return TRUE;
  for (xmlNode *c = section->children; c; c = c->next) {
    IrPort port = { 0 };
    if (!is_element (c, "port"))
      continue;
    g_array_append_val (ports, port);
    if (!parse_port (r, l, c, &g_array_index (ports, IrPort, ports->len - 1),
            error))
      return FALSE;
  }
  return TRUE;
}

/* Position of the port with @id in @ports, or -1. */
static int
port_position (GArray *ports, guint id)
{
  for (guint i = 0; i < ports->len; i++)
    if (g_array_index (ports, IrPort, i).id == id)
      return (int) i;
  return -1;
}

static gboolean
check_unique_port_ids (IrReader *r, IrLayer *l, GError **error)
{
  for (guint k = 0; k < 2; k++) {
    GArray *ports = k == 0 ? l->inputs : l->outputs;
    for (guint i = 0; i < ports->len; i++) {
      guint id = g_array_index (ports, IrPort, i).id;
      if (port_position (l->inputs, id) != (k == 0 ? (int) i : -1)
          || (k == 0 && port_position (l->outputs, id) >= 0)
          || (k == 1 && port_position (l->outputs, id) != (int) i)) {
        ir_set_error (r, l, error, CLINFER_ERROR_PARSE,
            "port id %u is used more than once", id);
        return FALSE;
      }
    }
  }
  return TRUE;
}

static void
read_data_attrs (IrLayer *l, xmlNode *data)
{
  if (data == NULL)
    return;
  for (xmlAttr *a = data->properties; a; a = a->next) {
    xmlChar *v = xmlNodeListGetString (data->doc, a->children, 1);
    g_hash_table_replace (l->data, g_strdup ((const char *) a->name),
        g_strdup (v ? (const char *) v : ""));
    xmlFree (v);
  }
}

static gboolean
parse_layer_header (IrReader *r, IrLayer *l, xmlNode *xl, GError **error)
{
  g_autofree char *id = xml_prop (xl, "id");
  int64_t v;

  l->line = (int) xmlGetLineNo (xl);
  l->name = xml_prop (xl, "name");
  l->type = xml_prop (xl, "type");
  l->version = xml_prop (xl, "version");
  l->output_names = xml_prop (xl, "output_names");
  if (l->name == NULL)
    l->name = g_strdup ("");
  if (l->version == NULL)
    l->version = g_strdup ("opset1");
  if (id == NULL || !parse_int (id, &v)) {
    g_set_error (error, CLINFER_ERROR, CLINFER_ERROR_PARSE,
        "%s:%d: <layer name='%s'> has id '%s', expected an integer",
        r->origin, l->line, l->name, id ? id : "(missing)");
    return FALSE;
  }
  l->id = v;
  if (l->type == NULL || *l->type == '\0') {
    if (l->type == NULL)
      l->type = g_strdup ("");
    ir_set_error (r, l, error, CLINFER_ERROR_PARSE, "the layer has no type");
    return FALSE;
  }
  if (g_str_has_prefix (l->version, "opset")
      && parse_int (l->version + 5, &v) && v > 0 && v < 1000)
    l->opset = (int) v;
  return TRUE;
}

static gboolean
parse_layer (IrReader *r, xmlNode *xl, GError **error)
{
  IrLayer *l = layer_new ();

  g_ptr_array_add (r->layers, l);
  if (!parse_layer_header (r, l, xl, error))
    return FALSE;
  if (g_hash_table_contains (r->by_id, &l->id)) {
    ir_set_error (r, l, error, CLINFER_ERROR_PARSE,
        "layer id %" G_GINT64_FORMAT " is used by more than one layer", l->id);
    return FALSE;
  }
  g_hash_table_insert (r->by_id, &l->id, l);
  read_data_attrs (l, child_element (xl, "data"));
  if (!parse_ports (r, l, child_element (xl, "input"), l->inputs, error)
      || !parse_ports (r, l, child_element (xl, "output"), l->outputs, error)
      || !check_unique_port_ids (r, l, error))
    return FALSE;
  l->src = g_new0 (IrLayer *, MAX (l->inputs->len, 1));
  l->src_port = g_new0 (guint, MAX (l->inputs->len, 1));
  l->out_refs = g_new0 (ClinferPortRef, MAX (l->outputs->len, 1));
  return TRUE;
}

/* ---------------------------------------------------------------- */
/* Edges                                                             */

static gboolean
edge_int (IrReader *r, xmlNode *xe, const char *name, int64_t *out,
    GError **error)
{
  g_autofree char *v = xml_prop (xe, name);

  if (v == NULL || !parse_int (v, out)) {
    g_set_error (error, CLINFER_ERROR, CLINFER_ERROR_PARSE,
        "%s:%ld: <edge> has %s='%s', expected an integer", r->origin,
        xmlGetLineNo (xe), name, v ? v : "(missing)");
    return FALSE;
  }
  return TRUE;
}

static IrLayer *
edge_layer (IrReader *r, xmlNode *xe, int64_t id, const char *end,
    GError **error)
{
  IrLayer *l = g_hash_table_lookup (r->by_id, &id);

  if (l == NULL)
    g_set_error (error, CLINFER_ERROR, CLINFER_ERROR_PARSE,
        "%s:%ld: <edge> %s layer %" G_GINT64_FORMAT " which does not exist",
        r->origin, xmlGetLineNo (xe), end, id);
  return l;
}

static gboolean
parse_edge (IrReader *r, xmlNode *xe, GError **error)
{
  int64_t fl, fp, tl, tp;
  IrLayer *from, *to;
  int out_pos, in_pos;
  long line = xmlGetLineNo (xe);

  if (!edge_int (r, xe, "from-layer", &fl, error)
      || !edge_int (r, xe, "from-port", &fp, error)
      || !edge_int (r, xe, "to-layer", &tl, error)
      || !edge_int (r, xe, "to-port", &tp, error)
      || !(from = edge_layer (r, xe, fl, "comes from", error))
      || !(to = edge_layer (r, xe, tl, "goes to", error)))
    return FALSE;
  out_pos = fp >= 0 && fp <= G_MAXINT ? port_position (from->outputs, (guint) fp) : -1;
  in_pos = tp >= 0 && tp <= G_MAXINT ? port_position (to->inputs, (guint) tp) : -1;
  if (out_pos < 0 || in_pos < 0) {
    IrLayer *bad = out_pos < 0 ? from : to;
    g_set_error (error, CLINFER_ERROR, CLINFER_ERROR_PARSE,
        "%s:%ld: <edge> from layer %" G_GINT64_FORMAT " port %" G_GINT64_FORMAT
        " to layer %" G_GINT64_FORMAT " port %" G_GINT64_FORMAT ": %s has no %s "
        "port %" G_GINT64_FORMAT, r->origin, line, fl, fp, tl, tp,
        ir_layer_label (bad), out_pos < 0 ? "output" : "input",
        out_pos < 0 ? fp : tp);
    return FALSE;
  }
  if (to->src[in_pos] != NULL) {
    g_set_error (error, CLINFER_ERROR, CLINFER_ERROR_PARSE,
        "%s:%ld: input port %" G_GINT64_FORMAT " of %s has more than one "
        "incoming edge", r->origin, line, tp, ir_layer_label (to));
    return FALSE;
  }
  to->src[in_pos] = from;
  to->src_port[in_pos] = (guint) out_pos;
  return TRUE;
}

/* ---------------------------------------------------------------- */
/* Document                                                          */

static gboolean
check_net (IrReader *r, xmlNode *root, GError **error)
{
  g_autofree char *version = NULL;
  int64_t v;

  if (root == NULL || !is_element (root, "net")) {
    g_set_error (error, CLINFER_ERROR, CLINFER_ERROR_PARSE,
        "%s: the root element is <%s>, expected <net> (an OpenVINO IR .xml)",
        r->origin, root ? (const char *) root->name : "");
    return FALSE;
  }
  version = xml_prop (root, "version");
  if (version == NULL || !parse_int (version, &v)) {
    g_set_error (error, CLINFER_ERROR, CLINFER_ERROR_PARSE,
        "%s: <net> has version '%s', expected %d or %d", r->origin,
        version ? version : "(missing)", CLINFER_IR_VERSION_MIN,
        CLINFER_IR_VERSION_MAX);
    return FALSE;
  }
  if (v < CLINFER_IR_VERSION_MIN || v > CLINFER_IR_VERSION_MAX) {
    g_set_error (error, CLINFER_ERROR, CLINFER_ERROR_UNSUPPORTED_VERSION,
        "%s: IR version %" G_GINT64_FORMAT " is not supported (versions %d "
        "and %d are read)", r->origin, v, CLINFER_IR_VERSION_MIN,
        CLINFER_IR_VERSION_MAX);
    return FALSE;
  }
  return TRUE;
}

static gboolean
parse_net (IrReader *r, xmlNode *root, GError **error)
{
  xmlNode *layers, *edges;
  g_autofree char *name = NULL;

  if (!check_net (r, root, error))
    return FALSE;
  name = xml_prop (root, "name");
  g_free (r->graph->name);
  r->graph->name = g_strdup (name ? name : "");
  layers = child_element (root, "layers");
  edges = child_element (root, "edges");
  if (layers == NULL) {
    g_set_error (error, CLINFER_ERROR, CLINFER_ERROR_PARSE,
        "%s: <net> has no <layers>", r->origin);
    return FALSE;
  }
  for (xmlNode *c = layers->children; c; c = c->next)
    if (is_element (c, "layer") && !parse_layer (r, c, error))
      return FALSE;
  for (xmlNode *c = edges ? edges->children : NULL; c; c = c->next)
    if (is_element (c, "edge") && !parse_edge (r, c, error))
      return FALSE;
  return TRUE;
}

static void
silent_xml_error (void *ctx, const char *msg, ...)
{
}

static gboolean parse_with_context (IrReader *r, const char *xml, gsize size,
    GError **error);

static gboolean
parse_document (IrReader *r, const char *xml, gsize size, GError **error)
{
  xmlGenericErrorFunc old_handler;
  void *old_context;
  gboolean ok;

  if (size > G_MAXINT) {
    g_set_error (error, CLINFER_ERROR, CLINFER_ERROR_PARSE,
        "%s: the XML is too large (%" G_GSIZE_FORMAT " bytes)", r->origin, size);
    return FALSE;
  }
  /* Encoding errors bypass the context's error options and go to the
   * (thread-local) generic handler: silence it for this parse only. */
  old_handler = xmlGenericError;
  old_context = xmlGenericErrorContext;
  xmlSetGenericErrorFunc (NULL, silent_xml_error);
  ok = parse_with_context (r, xml, size, error);
  xmlSetGenericErrorFunc (old_context, old_handler);
  return ok;
}

static gboolean
parse_with_context (IrReader *r, const char *xml, gsize size, GError **error)
{
  xmlParserCtxtPtr ctxt;
  xmlDocPtr doc;
  gboolean ok;

  ctxt = xmlNewParserCtxt ();
  if (ctxt == NULL) {
    g_set_error (error, CLINFER_ERROR, CLINFER_ERROR_PARSE,
        "%s: cannot create an XML parser", r->origin);
    return FALSE;
  }
  doc = xmlCtxtReadMemory (ctxt, xml, (int) size, NULL, NULL,
      XML_PARSE_NONET | XML_PARSE_NOERROR | XML_PARSE_NOWARNING
      | XML_PARSE_BIG_LINES);
  if (doc == NULL || !ctxt->wellFormed) {
    xmlErrorPtr e = xmlCtxtGetLastError (ctxt);
    g_autofree char *msg = g_strdup (e && e->message ? e->message
        : "not well-formed");
    g_set_error (error, CLINFER_ERROR, CLINFER_ERROR_PARSE,
        "%s:%d:%d: malformed XML: %s", r->origin, e ? e->line : 0,
        e ? e->int2 : 0, g_strchomp (msg));
    xmlFreeDoc (doc);
    xmlFreeParserCtxt (ctxt);
    return FALSE;
  }
  ok = parse_net (r, xmlDocGetRootElement (doc), error);
  xmlFreeDoc (doc);
  xmlFreeParserCtxt (ctxt);
  return ok;
}

/* ---------------------------------------------------------------- */
/* Translation helpers                                               */

/* @base, or @base with "_1", "_2"... when taken; records the result. */
static char *
unique_name (IrReader *r, const char *base)
{
  char *name = g_strdup (base);

  for (guint k = 1; g_hash_table_contains (r->tensor_names, name); k++) {
    g_free (name);
    name = g_strdup_printf ("%s_%u", base, k);
  }
  g_hash_table_add (r->tensor_names, g_strdup (name));
  return name;
}

static void
rename_port (IrReader *r, ClinferPortDesc *d, const char *base)
{
  g_hash_table_remove (r->tensor_names, d->name);
  g_free (d->name);
  d->name = unique_name (r, base);
}

ClinferNode *
ir_add_node (IrReader *r, IrLayer *l, const char *op_type, int opset,
    guint n_inputs, guint n_outputs, const char *suffix)
{
  g_autofree char *name = suffix ? g_strdup_printf ("%s/%s", l->name, suffix)
      : g_strdup (l->name);
  ClinferNode *n = clinfer_graph_add_node (r->graph, op_type, "", name,
      n_inputs, n_outputs);

  n->opset = opset;
  for (guint i = 0; i < n_outputs; i++) {
    g_autofree char *base = g_strdup_printf ("%s:%u", name, i);
    g_free (n->outputs[i].name);
    n->outputs[i].name = unique_name (r, base);
  }
  return n;
}

void
ir_sink (IrLayer *l, guint input, ClinferNode *node, guint index)
{
  IrSink s = { input, node, index };
  g_array_append_val (l->sinks, s);
}

void
ir_output (IrReader *r, IrLayer *l, guint output, ClinferNode *node,
    guint port)
{
  const IrPort *p = &g_array_index (l->outputs, IrPort, output);

  l->out_refs[output].node = node;
  l->out_refs[output].port = port;
  if (p->names && p->names[0])
    rename_port (r, &node->outputs[port], p->names[0]);
  if (node->outputs[port].type == CLINFER_TYPE_UNDEFINED)
    node->outputs[port].type = p->type;
}

void
ir_connect (ClinferNode *node, guint index, ClinferNode *src)
{
  node->inputs[index].node = src;
  node->inputs[index].port = 0;
}

const IrPort *
ir_input_port (IrLayer *l, guint input)
{
  return &g_array_index (l->inputs, IrPort, input);
}

static const IrPort *
producer_port (IrLayer *l, guint input)
{
  IrLayer *src = input < l->inputs->len ? l->src[input] : NULL;
  return src ? &g_array_index (src->outputs, IrPort, l->src_port[input]) : NULL;
}

ClinferElementType
ir_input_type (IrLayer *l, guint input)
{
  const IrPort *p = ir_input_port (l, input), *q = producer_port (l, input);

  if (p->type != CLINFER_TYPE_UNDEFINED)
    return p->type;
  if (q && q->type != CLINFER_TYPE_UNDEFINED)
    return q->type;
  if (l->src[input] && l->src[input]->out_refs[l->src_port[input]].node) {
    ClinferPortRef ref = l->src[input]->out_refs[l->src_port[input]];
    return ref.node->outputs[ref.port].type;
  }
  return CLINFER_TYPE_UNDEFINED;
}

ClinferShape
ir_input_shape (IrLayer *l, guint input)
{
  const IrPort *p = ir_input_port (l, input), *q = producer_port (l, input);

  if (l->src[input] && l->src[input]->value)
    return *clinfer_tensor_get_shape (l->src[input]->value);
  if (p->described)
    return p->shape;
  if (q && q->described)
    return q->shape;
  if (l->src[input] && l->src[input]->out_refs[l->src_port[input]].node) {
    ClinferPortRef ref = l->src[input]->out_refs[l->src_port[input]];
    return ref.node->outputs[ref.port].shape;
  }
  return clinfer_shape_unknown ();
}

ClinferNode *
ir_add_const (IrReader *r, IrLayer *l, const char *suffix,
    ClinferTensor *value)
{
  g_autofree char *base = suffix ? g_strdup_printf ("%s/%s", l->name, suffix)
      : g_strdup (l->name);
  g_autofree char *name = unique_name (r, base);

  return clinfer_graph_add_constant (r->graph, name, value);
}

ClinferNode *
ir_add_const_i64 (IrReader *r, IrLayer *l, const char *suffix,
    const int64_t *v, gsize n, gboolean scalar)
{
  int64_t dim = (int64_t) n;
  ClinferShape s = clinfer_shape_make (scalar ? 0 : 1, &dim);
  g_autoptr (ClinferTensor) t = clinfer_tensor_new (CLINFER_TYPE_I64, &s, NULL);

  if (n)
    memcpy (clinfer_tensor_get_data (t), v, n * sizeof (int64_t));
  return ir_add_const (r, l, suffix, t);
}

ClinferNode *
ir_add_const_f32 (IrReader *r, IrLayer *l, const char *suffix,
    const float *v, gsize n, gboolean scalar)
{
  int64_t dim = (int64_t) n;
  ClinferShape s = clinfer_shape_make (scalar ? 0 : 1, &dim);
  g_autoptr (ClinferTensor) t = clinfer_tensor_new (CLINFER_TYPE_F32, &s, NULL);

  if (n)
    memcpy (clinfer_tensor_get_data (t), v, n * sizeof (float));
  return ir_add_const (r, l, suffix, t);
}

/* ---------------------------------------------------------------- */
/* Attributes                                                        */

const char *
ir_attr_str (IrLayer *l, const char *name, const char *def)
{
  const char *v = g_hash_table_lookup (l->data, name);
  return v ? v : def;
}

static gboolean
attr_missing (IrReader *r, IrLayer *l, const char *name, gboolean required,
    const char *what, GError **error)
{
  if (required)
    ir_set_error (r, l, error, CLINFER_ERROR_PARSE,
        "attribute '%s' (%s) is missing", name, what);
  return !required;
}

gboolean
ir_attr_int (IrReader *r, IrLayer *l, const char *name, gboolean required,
    int64_t def, int64_t *out, GError **error)
{
  const char *v = ir_attr_str (l, name, NULL);

  *out = def;
  if (v == NULL)
    return attr_missing (r, l, name, required, "an integer", error);
  if (!parse_int (v, out)) {
    ir_set_error (r, l, error, CLINFER_ERROR_PARSE,
        "attribute %s='%s' is not an integer", name, v);
    return FALSE;
  }
  return TRUE;
}

gboolean
ir_attr_float (IrReader *r, IrLayer *l, const char *name, gboolean required,
    float def, float *out, GError **error)
{
  const char *v = ir_attr_str (l, name, NULL);
  g_autofree char *s = NULL;
  char *end = NULL;
  double d;

  *out = def;
  if (v == NULL)
    return attr_missing (r, l, name, required, "a number", error);
  s = g_strstrip (g_strdup (v));
  d = g_ascii_strtod (s, &end);
  if (*s == '\0' || end == s || *end != '\0') {
    ir_set_error (r, l, error, CLINFER_ERROR_PARSE,
        "attribute %s='%s' is not a number", name, v);
    return FALSE;
  }
  *out = (float) d;
  return TRUE;
}

gboolean
ir_attr_bool (IrReader *r, IrLayer *l, const char *name, gboolean def,
    gboolean *out, GError **error)
{
  const char *v = ir_attr_str (l, name, NULL);
  g_autofree char *s = v ? g_strstrip (g_strdup (v)) : NULL;

  *out = def;
  if (s == NULL)
    return TRUE;
  if (g_ascii_strcasecmp (s, "true") == 0 || strcmp (s, "1") == 0)
    *out = TRUE;
  else if (g_ascii_strcasecmp (s, "false") == 0 || strcmp (s, "0") == 0)
    *out = FALSE;
  else {
    ir_set_error (r, l, error, CLINFER_ERROR_PARSE,
        "attribute %s='%s' is not a boolean (true/false/1/0)", name, v);
    return FALSE;
  }
  return TRUE;
}

gboolean
ir_attr_ints (IrReader *r, IrLayer *l, const char *name, gboolean required,
    int64_t **out, gsize *n, GError **error)
{
  const char *v = ir_attr_str (l, name, NULL);
  g_auto (GStrv) parts = NULL;
  g_autofree int64_t *vals = NULL;
  gsize k;

  *out = NULL;
  *n = 0;
  if (v == NULL)
    return attr_missing (r, l, name, required, "a list of integers", error);
  parts = g_strsplit (v, ",", -1);
  k = g_strv_length (parts);
  if (k == 1 && g_strstrip (parts[0])[0] == '\0')
    k = 0;
  vals = g_new0 (int64_t, MAX (k, 1));
  for (gsize i = 0; i < k; i++)
    if (!parse_int (parts[i], &vals[i])) {
      ir_set_error (r, l, error, CLINFER_ERROR_PARSE,
          "attribute %s='%s' is not a comma-separated list of integers",
          name, v);
      return FALSE;
    }
  *out = g_steal_pointer (&vals);
  *n = k;
  return TRUE;
}

gboolean
ir_attr_enum (IrReader *r, IrLayer *l, const char *name,
    const char *const *names, int def, int *out, GError **error)
{
  const char *v = ir_attr_str (l, name, NULL);
  g_autofree char *s = v ? g_strstrip (g_strdup (v)) : NULL;
  g_autofree char *all = NULL;

  *out = def;
  if (s == NULL)
    return TRUE;
  for (int i = 0; names[i]; i++)
    if (g_ascii_strcasecmp (s, names[i]) == 0) {
      *out = i;
      return TRUE;
    }
  all = g_strjoinv (", ", (char **) names);
  ir_set_error (r, l, error, CLINFER_ERROR_UNSUPPORTED_OP,
      "attribute %s='%s' is not supported (expected one of: %s)", name, v, all);
  return FALSE;
}

/* ---------------------------------------------------------------- */
/* Constants                                                         */

/* Checks the Const attributes against the .bin and the output port. */
static gboolean
const_layout (IrReader *r, IrLayer *l, ClinferElementType *type,
    ClinferShape *shape, int64_t *offset, int64_t *size, GError **error)
{
  const char *et = ir_attr_str (l, "element_type", NULL);
  const char *sh = ir_attr_str (l, "shape", NULL);
  gsize have = r->weights ? g_bytes_get_size (r->weights) : 0;
  gboolean empty_placeholder;
  int64_t n;

  *type = clinfer_ir_type_from_name (et);
  if (*type == CLINFER_TYPE_UNDEFINED) {
    ir_set_error (r, l, error, et ? CLINFER_ERROR_UNSUPPORTED_OP
        : CLINFER_ERROR_PARSE, "element_type '%s' is not supported (expected "
        "f32, f16, bf16, f64, i8..i64, u8..u64 or boolean)", et ? et : "(missing)");
    return FALSE;
  }
  if (sh == NULL || !clinfer_ir_parse_shape (sh, shape)
      || !clinfer_shape_is_static (shape)) {
    ir_set_error (r, l, error, CLINFER_ERROR_PARSE,
        "shape '%s' is not a static shape of rank <= %d", sh ? sh : "(missing)",
        CLINFER_MAX_RANK);
    return FALSE;
  }
  if (!ir_attr_int (r, l, "offset", TRUE, 0, offset, error)
      || !ir_attr_int (r, l, "size", TRUE, 0, size, error))
    return FALSE;
  n = clinfer_shape_n_elements (shape);
  /* OpenVINO writes an empty constant with a placeholder byte. */
  empty_placeholder = n == 0 && *size > 0
      && *size <= (int64_t) clinfer_element_type_size (*type);
  if (n < 0 || (guint64) n > G_MAXINT64 / clinfer_element_type_size (*type)
      || (*size != n * (int64_t) clinfer_element_type_size (*type)
          && !empty_placeholder)) {
    g_autofree char *s = clinfer_shape_to_string (shape);
    ir_set_error (r, l, error, CLINFER_ERROR_PARSE,
        "size %" G_GINT64_FORMAT " does not match shape %s of %s (expected %"
        G_GINT64_FORMAT " bytes)", *size, s, clinfer_ir_type_name (*type),
        n * (int64_t) clinfer_element_type_size (*type));
    return FALSE;
  }
  if (*offset < 0 || (guint64) *offset > have || (guint64) *size > have - *offset) {
    if (r->weights == NULL)
      ir_set_error (r, l, error, CLINFER_ERROR_IO,
          "the constant needs weights but %s does not exist",
          r->bin_path ? r->bin_path : "the .bin file");
    else
      ir_set_error (r, l, error, CLINFER_ERROR_PARSE,
          "offset %" G_GINT64_FORMAT " + size %" G_GINT64_FORMAT " is past the "
          "end of the weights (%" G_GSIZE_FORMAT " bytes)", *offset, *size, have);
    return FALSE;
  }
  if (empty_placeholder)
    *size = 0;
  return TRUE;
}

/* Loads the value of Const layer @l (once). */
static ClinferTensor *
const_value (IrReader *r, IrLayer *l, GError **error)
{
  ClinferElementType type;
  ClinferShape shape;
  int64_t offset, size;
  const guint8 *base;
  gsize esize;

  if (l->value)
    return l->value;
  if (!const_layout (r, l, &type, &shape, &offset, &size, error))
    return NULL;
  esize = clinfer_element_type_size (type);
  base = size > 0 ? (const guint8 *) g_bytes_get_data (r->weights, NULL) + offset
      : NULL;
  /* In place when aligned for the element type (little-endian files). */
  if (base && G_BYTE_ORDER == G_LITTLE_ENDIAN
      && ((guintptr) base % esize) == 0) {
    l->value = clinfer_tensor_new_wrapped (type, &shape, NULL, (gpointer) base,
        (GDestroyNotify) g_bytes_unref, g_bytes_ref (r->weights), error);
  } else {
    l->value = clinfer_tensor_new (type, &shape, error);
    if (l->value && size > 0)
      memcpy (clinfer_tensor_get_data (l->value), base, (gsize) size);
  }
  if (l->value == NULL)
    g_prefix_error (error, "%s: %s: ", r->origin, ir_layer_label (l));
  return l->value;
}

/* Value of a Convert layer to f32 whose input is a Const: how OpenVINO's
 * converter stores scalar attributes of compressed (f16) models, e.g. the
 * alpha of HardSigmoid. Kept in @l->value like a Const's. */
static ClinferTensor *
converted_const_value (IrReader *r, IrLayer *l, GError **error)
{
  const char *to = ir_attr_str (l, "destination_type", NULL);
  IrLayer *src = l->inputs->len == 1 ? l->src[0] : NULL;
  ClinferTensor *in;
  float *out;
  int64_t n;

  if (l->value)
    return l->value;
  if (to == NULL || clinfer_ir_type_from_name (to) != CLINFER_TYPE_F32
      || src == NULL || src->def == NULL
      || g_ascii_strcasecmp (src->def->type, "Const") != 0)
    return NULL;
  in = const_value (r, src, error);
  if (in == NULL)
    return NULL;
  l->value = clinfer_tensor_new (CLINFER_TYPE_F32,
      clinfer_tensor_get_shape (in), error);
  if (l->value == NULL)
    return NULL;
  out = clinfer_tensor_get_data (l->value);
  n = clinfer_tensor_get_n_elements (in);
  for (int64_t i = 0; i < n; i++)
    out[i] = (float) clinfer_tensor_get_as_double (in, i);
  return l->value;
}

ClinferTensor *
ir_input_const (IrReader *r, IrLayer *l, guint input, GError **error)
{
  IrLayer *src = input < l->inputs->len ? l->src[input] : NULL;

  if (src == NULL || src->def == NULL)
    return NULL;
  if (g_ascii_strcasecmp (src->def->type, "Convert") == 0)
    return converted_const_value (r, src, error);
  if (g_ascii_strcasecmp (src->def->type, "Const") != 0)
    return NULL;
  return const_value (r, src, error);
}

/* ---------------------------------------------------------------- */
/* Source layers: Parameter, Const, Result                           */

static const char *
port_name (const IrPort *p, const char *def)
{
  return p->names && p->names[0] ? p->names[0] : def;
}

static gboolean
translate_parameter (IrReader *r, IrLayer *l, GError **error)
{
  const IrPort *out = &g_array_index (l->outputs, IrPort, 0);
  const char *et = ir_attr_str (l, "element_type", NULL);
  const char *sh = ir_attr_str (l, "shape", NULL);
  ClinferElementType type = et ? clinfer_ir_type_from_name (et) : out->type;
  ClinferShape shape = out->shape;
  g_autofree char *name = NULL;
  ClinferNode *n;

  if (type == CLINFER_TYPE_UNDEFINED) {
    ir_set_error (r, l, error, CLINFER_ERROR_UNSUPPORTED_OP,
        "element_type '%s' is not supported", et ? et : "(missing)");
    return FALSE;
  }
  if (sh && !clinfer_ir_parse_shape (sh, &shape)) {
    ir_set_error (r, l, error, CLINFER_ERROR_PARSE,
        "shape '%s' is not a shape (dims >= 0, -1, ?, a..b or ...)", sh);
    return FALSE;
  }
  name = unique_name (r, port_name (out, l->name));
  n = clinfer_graph_add_input (r->graph, name, type, &shape);
  l->out_refs[0].node = n;
  return TRUE;
}

static gboolean
translate_const (IrReader *r, IrLayer *l, GError **error)
{
  ClinferTensor *t = const_value (r, l, error);
  const IrPort *out = &g_array_index (l->outputs, IrPort, 0);

  if (t == NULL)
    return FALSE;
  l->out_refs[0].node = ir_add_const (r, l, NULL, t);
  if (out->names && out->names[0])
    rename_port (r, &l->out_refs[0].node->outputs[0], out->names[0]);
  return TRUE;
}

/* Graph output of a Result layer, named by output_names, the producer's
 * tensor name or the layer name. */
static gboolean
add_result (IrReader *r, IrLayer *l, GError **error)
{
  ClinferPortRef ref = l->src[0]->out_refs[l->src_port[0]];
  g_auto (GStrv) names = l->output_names ? split_names (l->output_names) : NULL;

  if (ref.node == NULL) {
    ir_set_error (r, l, error, CLINFER_ERROR_UNSUPPORTED_OP,
        "its input comes from output %u of %s, which is not supported",
        l->src_port[0], ir_layer_label (l->src[0]));
    return FALSE;
  }
  clinfer_graph_add_output (r->graph, ref, names && names[0] ? names[0]
      : port_name (ir_input_port (l, 0), ref.node->outputs[ref.port].name));
  return TRUE;
}

/* ---------------------------------------------------------------- */
/* Driver                                                            */

/* "2", "1 to 3", "1 or more" */
static char *
count_range (guint lo, guint hi)
{
  if (lo == hi)
    return g_strdup_printf ("%u", lo);
  if (hi == G_MAXUINT)
    return g_strdup_printf ("%u or more", lo);
  return g_strdup_printf ("%u to %u", lo, hi);
}

static gboolean
check_layer_def (IrReader *r, IrLayer *l, GError **error)
{
  gboolean known = FALSE;
  const IrOpDef *d;

  /* Every layer, extension and foreign ones too: translators read their
   * inputs' producers. */
  for (guint i = 0; i < l->inputs->len; i++)
    if (l->src[i] == NULL) {
      ir_set_error (r, l, error, CLINFER_ERROR_PARSE,
          "input port %u has no incoming edge",
          g_array_index (l->inputs, IrPort, i).id);
      return FALSE;
    }
  if (strcmp (l->version, CLINFER_IR_EXTENSION_OPSET) == 0) {
    l->def = &clinfer_ir_extension_op;
    return TRUE;
  }
  if (l->opset == 0 && !g_str_has_prefix (l->version, "opset")
      && *l->version != '\0') {
    l->def = &clinfer_ir_foreign_op;
    return TRUE;
  }
  if (l->opset == 0) {
    ir_set_error (r, l, error, CLINFER_ERROR_UNSUPPORTED_OP,
        "opset '%s' is not supported (expected opset1..opset%d)", l->version,
        CLINFER_IR_OPSET_MAX);
    return FALSE;
  }
  d = clinfer_ir_op_lookup (l->type, l->opset, &known);
  if (d == NULL) {
    ir_set_error (r, l, error, l->opset > CLINFER_IR_OPSET_MAX
        ? CLINFER_ERROR_UNSUPPORTED_VERSION : CLINFER_ERROR_UNSUPPORTED_OP,
        known ? "%s is not supported at version %s (reads opset1..opset%d)"
        : "operation type '%s' (version %s) is not supported (reads opset1..opset%d)",
        l->type, l->version, CLINFER_IR_OPSET_MAX);
    return FALSE;
  }
  if (l->inputs->len < d->min_inputs || l->inputs->len > d->max_inputs
      || l->outputs->len < d->min_outputs || l->outputs->len > d->max_outputs) {
    g_autofree char *ins = count_range (d->min_inputs, d->max_inputs);
    g_autofree char *outs = count_range (d->min_outputs, d->max_outputs);
    ir_set_error (r, l, error, CLINFER_ERROR_PARSE,
        "the layer has %u input and %u output ports, expected %s input and %s "
        "output ports for %s-%s", l->inputs->len, l->outputs->len, ins, outs,
        d->type, l->version);
    return FALSE;
  }
  l->def = d;
  return TRUE;
}

static gboolean
translate_layer (IrReader *r, IrLayer *l, GError **error)
{
  const char *t = l->def->type;

  if (strcmp (t, "Parameter") == 0)
    return translate_parameter (r, l, error);
  if (strcmp (t, "Const") == 0)
    return translate_const (r, l, error);
  if (strcmp (t, "Result") == 0)
    return TRUE;
  return l->def->translate (r, l, error);
}

/* Connects every sink to its producer's engine port. */
static gboolean
wire_layer (IrReader *r, IrLayer *l, GError **error)
{
  for (guint i = 0; i < l->sinks->len; i++) {
    IrSink *s = &g_array_index (l->sinks, IrSink, i);
    IrLayer *src = l->src[s->input];
    ClinferPortRef ref = src->out_refs[l->src_port[s->input]];

    if (ref.node == NULL) {
      ir_set_error (r, l, error, CLINFER_ERROR_UNSUPPORTED_OP,
          "input %u reads output %u of %s, which is not supported", s->input,
          l->src_port[s->input], ir_layer_label (src));
      return FALSE;
    }
    s->node->inputs[s->index] = ref;
  }
  return TRUE;
}

static gboolean
build_graph (IrReader *r, GError **error)
{
  g_autoptr (GPtrArray) order = NULL;

  for (guint i = 0; i < r->layers->len; i++)
    if (!check_layer_def (r, g_ptr_array_index (r->layers, i), error))
      return FALSE;
  /* Sources first, so translators can look at constant inputs. */
  for (guint pass = 0; pass < 2; pass++)
    for (guint i = 0; i < r->layers->len; i++) {
      IrLayer *l = g_ptr_array_index (r->layers, i);
      gboolean source = l->def->translate == NULL;
      if (source == (pass == 0) && !translate_layer (r, l, error))
        return FALSE;
    }
  for (guint i = 0; i < r->layers->len; i++)
    if (!wire_layer (r, g_ptr_array_index (r->layers, i), error))
      return FALSE;
  for (guint i = 0; i < r->layers->len; i++) {
    IrLayer *l = g_ptr_array_index (r->layers, i);
    if (strcmp (l->def->type, "Result") == 0 && !add_result (r, l, error))
      return FALSE;
  }
  if (r->graph->outputs->len == 0) {
    g_set_error (error, CLINFER_ERROR, CLINFER_ERROR_PARSE,
        "%s: the model has no Result layer", r->origin);
    return FALSE;
  }
  order = clinfer_graph_topological_order (r->graph, error);
  return order != NULL;
}

static ClinferGraph *
read_ir (const char *xml, gsize xml_size, GBytes *weights, const char *origin,
    const char *bin_path, GError **error)
{
  IrReader r = { 0 };
  gboolean ok;

  r.origin = origin ? origin : "<memory>";
  r.bin_path = bin_path;
  r.graph = clinfer_graph_new ("", r.origin);
  g_hash_table_insert (r.graph->opsets, g_strdup (""), GINT_TO_POINTER (13));
  r.weights = weights ? g_bytes_ref (weights) : NULL;
  r.layers = g_ptr_array_new_with_free_func ((GDestroyNotify) layer_free);
  r.by_id = g_hash_table_new (g_int64_hash, g_int64_equal);
  r.tensor_names = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  ok = parse_document (&r, xml, xml_size, error) && build_graph (&r, error);
  g_hash_table_unref (r.tensor_names);
  g_hash_table_unref (r.by_id);
  g_ptr_array_unref (r.layers);
  if (r.weights)
    g_bytes_unref (r.weights);
  if (!ok)
    g_clear_pointer (&r.graph, clinfer_graph_free);
  return r.graph;
}

ClinferGraph *
clinfer_ir_read_from_data (const char *xml, gsize xml_size, GBytes *weights,
    const char *origin, GError **error)
{
  g_return_val_if_fail (xml != NULL || xml_size == 0, NULL);
  return read_ir (xml, xml_size, weights, origin, NULL, error);
}

/* "model.xml" -> "model.bin" */
static char *
default_bin_path (const char *xml_path)
{
  if (g_str_has_suffix (xml_path, ".xml"))
    return g_strdup_printf ("%.*s.bin", (int) strlen (xml_path) - 4, xml_path);
  return g_strdup_printf ("%s.bin", xml_path);
}

ClinferGraph *
clinfer_ir_read (const char *xml_path, const char *bin_path, GError **error)
{
  g_autofree char *xml = NULL, *default_bin = NULL;
  g_autoptr (GBytes) weights = NULL;
  g_autoptr (GError) err = NULL;
  gsize size;

  g_return_val_if_fail (xml_path != NULL, NULL);
  if (!g_file_get_contents (xml_path, &xml, &size, &err)) {
    g_set_error (error, CLINFER_ERROR, CLINFER_ERROR_IO, "%s: %s", xml_path,
        err->message);
    return NULL;
  }
  if (bin_path == NULL)
    bin_path = default_bin = default_bin_path (xml_path);
  if (g_file_test (bin_path, G_FILE_TEST_EXISTS) || default_bin == NULL) {
    GMappedFile *mf = g_mapped_file_new (bin_path, FALSE, &err);
    if (mf == NULL) {
      g_set_error (error, CLINFER_ERROR, CLINFER_ERROR_IO,
          "%s: cannot read the weights: %s", xml_path, err->message);
      return NULL;
    }
    weights = g_mapped_file_get_bytes (mf);
    g_mapped_file_unref (mf);
  }
  return read_ir (xml, size, weights, xml_path, bin_path, error);
}
