/* clinfer — the config-file loader: CustomLayer elements (top level, or
 * inside one wrapping root) with Kernel (Source, Define), Buffers (Tensor,
 * Data), CompilerOptions and WorkSizes, validated into OclCustomLayer.
 * Every error names the file, the line, the layer and the item. */
#include "devices/opencl/ocl-custom.h"
#include <libxml/parser.h>
#include <libxml/tree.h>
#include <string.h>

#define WRAP_OPEN "<clinfer-config>"
#define WRAP_CLOSE "</clinfer-config>"

typedef struct {
  const char *path;
  char *dir;
} Loader;

static void
arg_free (gpointer data)
{
  OclCustomArg *a = data;

  if (a == NULL)
    return;
  g_free (a->data_name);
  g_free (a);
}

static void
define_free (gpointer data)
{
  OclCustomDefine *d = data;

  g_free (d->name);
  g_free (d->type);
  g_free (d->param);
  g_free (d->def);
  g_free (d);
}

static void
layer_free (gpointer data)
{
  OclCustomLayer *l = data;

  g_free (l->name);
  g_free (l->file);
  g_free (l->entry);
  g_free (l->source);
  g_free (l->options);
  g_ptr_array_unref (l->defines);
  g_ptr_array_unref (l->args);
  g_ptr_array_unref (l->out_shapes);
  for (guint i = 0; i < 3; i++) {
    clinfer_ocl_ws_free (l->global[i]);
    clinfer_ocl_ws_free (l->local[i]);
  }
  g_free (l);
}

void
clinfer_ocl_custom_free (OclCustomLayers *layers)
{
  if (layers == NULL)
    return;
  g_hash_table_unref (layers->layers);
  g_free (layers->path);
  g_free (layers);
}

/* Attribute @name of @e (owned copy), or NULL. */
static char *
attr (xmlNodePtr e, const char *name)
{
  xmlChar *v = xmlGetProp (e, (const xmlChar *) name);
  char *s = v ? g_strdup ((const char *) v) : NULL;

  xmlFree (v);
  return s;
}

static gboolean
is_element (xmlNodePtr n, const char *name)
{
  return n->type == XML_ELEMENT_NODE
      && strcmp ((const char *) n->name, name) == 0;
}

static gboolean
layer_error (GError **error, const Loader *ld, xmlNodePtr at,
    const char *layer, const char *fmt, ...) G_GNUC_PRINTF (5, 6);

static gboolean
layer_error (GError **error, const Loader *ld, xmlNodePtr at,
    const char *layer, const char *fmt, ...)
{
  g_autofree char *msg = NULL;
  va_list ap;

  va_start (ap, fmt);
  msg = g_strdup_vprintf (fmt, ap);
  va_end (ap);
  g_set_error (error, CLINFER_ERROR, CLINFER_ERROR_PARSE,
      "%s:%ld: custom layer '%s': %s", ld->path, xmlGetLineNo (at),
      layer ? layer : "(unnamed)", msg);
  return FALSE;
}

/* A non-negative decimal attribute; FALSE with an error when missing or
 * malformed. */
static gboolean
int_attr (const Loader *ld, xmlNodePtr e, const char *layer,
    const char *name, int *out, GError **error)
{
  g_autofree char *v = attr (e, name);
  guint64 n;

  if (v == NULL)
    return layer_error (error, ld, e, layer, "<%s> without %s", e->name, name);
  if (!g_ascii_string_to_unsigned (v, 10, 0, 1023, &n, NULL))
    return layer_error (error, ld, e, layer, "<%s %s=\"%s\">: expected an "
        "integer from 0 to 1023", e->name, name, v);
  *out = (int) n;
  return TRUE;
}

static gboolean
parse_format (const char *text, OclFormat *fmt)
{
  static const char *const names[] = { "BFYX", "BYXF", "FYXB", "YXFB", "ANY" };

  for (guint i = 0; i < G_N_ELEMENTS (names); i++)
    if (g_ascii_strcasecmp (text, names[i]) == 0) {
      *fmt = (OclFormat) i;
      return TRUE;
    }
  return FALSE;
}

/* ---------------------------------------------------------------- */
/* Kernel                                                            */

static gboolean
load_source (const Loader *ld, xmlNodePtr e, OclCustomLayer *l, GString *src,
    GError **error)
{
  g_autofree char *file = attr (e, "filename");
  g_autofree char *path = NULL, *text = NULL;
  g_autoptr (GError) err = NULL;

  if (file == NULL || *file == '\0')
    return layer_error (error, ld, e, l->name, "<Source> without filename");
  path = g_path_is_absolute (file) ? g_strdup (file)
      : g_build_filename (ld->dir, file, NULL);
  if (!g_file_get_contents (path, &text, NULL, &err)) {
    g_set_error (error, CLINFER_ERROR, CLINFER_ERROR_IO,
        "%s:%ld: custom layer '%s': cannot read kernel source %s: %s",
        ld->path, xmlGetLineNo (e), l->name, path, err->message);
    return FALSE;
  }
  g_string_append (src, text);
  if (src->len && src->str[src->len - 1] != '\n')
    g_string_append_c (src, '\n');
  return TRUE;
}

static gboolean
load_define (const Loader *ld, xmlNodePtr e, OclCustomLayer *l, GError **error)
{
  OclCustomDefine *d;
  char *name = attr (e, "name");

  if (name == NULL || *name == '\0') {
    g_free (name);
    return layer_error (error, ld, e, l->name, "<Define> without name");
  }
  d = g_new0 (OclCustomDefine, 1);
  d->name = name;
  d->type = attr (e, "type");
  d->param = attr (e, "param");
  d->def = attr (e, "default");
  g_ptr_array_add (l->defines, d);
  return TRUE;
}

static gboolean
load_kernel (const Loader *ld, xmlNodePtr e, OclCustomLayer *l, GError **error)
{
  g_autoptr (GString) src = g_string_new (NULL);

  if (l->entry != NULL)
    return layer_error (error, ld, e, l->name, "more than one <Kernel>");
  l->entry = attr (e, "entry");
  if (l->entry == NULL || *l->entry == '\0')
    return layer_error (error, ld, e, l->name, "<Kernel> without entry");
  for (xmlNodePtr c = e->children; c; c = c->next) {
    if (is_element (c, "Source") && !load_source (ld, c, l, src, error))
      return FALSE;
    if (is_element (c, "Define") && !load_define (ld, c, l, error))
      return FALSE;
  }
  if (src->len == 0)
    return layer_error (error, ld, e, l->name, "<Kernel> without <Source>");
  l->source = g_string_free (g_steal_pointer (&src), FALSE);
  return TRUE;
}

/* ---------------------------------------------------------------- */
/* Buffers                                                           */

static gboolean
load_tensor (const Loader *ld, xmlNodePtr e, OclCustomLayer *l,
    OclCustomArg *a, GError **error)
{
  g_autofree char *type = attr (e, "type");
  g_autofree char *fmt = attr (e, "format");

  if (type == NULL || (g_ascii_strcasecmp (type, "input") != 0
          && g_ascii_strcasecmp (type, "output") != 0))
    return layer_error (error, ld, e, l->name, "<Tensor> type is '%s', "
        "expected input or output", type ? type : "(missing)");
  a->kind = g_ascii_strcasecmp (type, "input") == 0 ? OCL_CUSTOM_INPUT
      : OCL_CUSTOM_OUTPUT;
  a->format = OCL_FMT_BFYX;
  if (fmt && !parse_format (fmt, &a->format))
    return layer_error (error, ld, e, l->name, "<Tensor> format '%s' is not "
        "one of BFYX, BYXF, FYXB, YXFB, ANY", fmt);
  return int_attr (ld, e, l->name, "port-index", &a->port, error);
}

static gboolean
load_buffers (const Loader *ld, xmlNodePtr e, OclCustomLayer *l,
    GError **error)
{
  for (xmlNodePtr c = e->children; c; c = c->next) {
    OclCustomArg *a;
    int index;
    if (!is_element (c, "Tensor") && !is_element (c, "Data"))
      continue;
    if (!int_attr (ld, c, l->name, "arg-index", &index, error))
      return FALSE;
    if ((guint) index < l->args->len && g_ptr_array_index (l->args, index))
      return layer_error (error, ld, c, l->name, "arg-index %d is bound twice",
          index);
    a = g_new0 (OclCustomArg, 1);
    if ((guint) index >= l->args->len)
      g_ptr_array_set_size (l->args, index + 1);
    g_ptr_array_index (l->args, index) = a;
    if (is_element (c, "Tensor")) {
      if (!load_tensor (ld, c, l, a, error))
        return FALSE;
    } else {
      a->kind = OCL_CUSTOM_DATA;
      a->data_name = attr (c, "name");
      if (a->data_name == NULL || *a->data_name == '\0')
        return layer_error (error, ld, c, l->name, "<Data> without name");
    }
  }
  for (guint i = 0; i < l->args->len; i++)
    if (g_ptr_array_index (l->args, i) == NULL)
      return layer_error (error, ld, e, l->name, "kernel argument %u is not "
          "bound (arg-index 0 to %u must each have a <Tensor> or <Data>)", i,
          l->args->len - 1);
  if (l->args->len == 0)
    return layer_error (error, ld, e, l->name, "<Buffers> binds no argument");
  return TRUE;
}

/* ---------------------------------------------------------------- */
/* WorkSizes                                                         */

static gboolean
load_rules (const Loader *ld, xmlNodePtr e, OclCustomLayer *l,
    const char *which, OclWsExpr **rules, guint *n, GError **error)
{
  g_autofree char *text = attr (e, which);
  g_auto (GStrv) parts = NULL;

  /* A later <WorkSizes> replaces an earlier one. */
  for (guint i = 0; i < *n; i++)
    g_clear_pointer (&rules[i], clinfer_ocl_ws_free);
  *n = 0;
  if (text == NULL || *g_strstrip (text) == '\0')
    return TRUE;
  parts = g_strsplit (text, ",", -1);
  if (g_strv_length (parts) > 3)
    return layer_error (error, ld, e, l->name, "WorkSizes %s=\"%s\" has more "
        "than 3 rules", which, text);
  for (guint i = 0; parts[i]; i++) {
    g_autofree char *why = NULL;
    rules[i] = clinfer_ocl_ws_parse (g_strstrip (parts[i]), &why);
    if (rules[i] == NULL)
      return layer_error (error, ld, e, l->name, "invalid WorkSizes %s rule "
          "'%s': %s", which, parts[i], why);
    *n = i + 1;
  }
  return TRUE;
}

static gboolean
load_worksizes (const Loader *ld, xmlNodePtr e, OclCustomLayer *l,
    GError **error)
{
  g_autofree char *dim = attr (e, "dim");

  l->dim_input = -1;
  if (dim && g_ascii_strcasecmp (g_strstrip (dim), "output") != 0) {
    const char *rest = dim + 5;
    guint64 n = 0;
    if (g_ascii_strncasecmp (dim, "input", 5) != 0
        || (*rest && ((*rest != ',' && *rest != ' ')
                || !g_ascii_string_to_unsigned (g_strstrip ((char *) rest + 1),
                    10, 0, 1023, &n, NULL))))
      return layer_error (error, ld, e, l->name, "WorkSizes dim=\"%s\": "
          "expected output, input or input,N", dim);
    l->dim_input = (int) n;
  }
  return load_rules (ld, e, l, "global", l->global, &l->n_global, error)
      && load_rules (ld, e, l, "local", l->local, &l->n_local, error);
}

/* ---------------------------------------------------------------- */
/* OutputShape (clinfer extension)                                   */

static void
out_shape_free (gpointer data)
{
  OclOutputShape *o = data;

  for (guint i = 0; i < o->n_dims; i++)
    clinfer_ocl_ws_free (o->dims[i]);
  g_free (o);
}

static gboolean
load_output_shape (const Loader *ld, xmlNodePtr e, OclCustomLayer *l,
    GError **error)
{
  OclOutputShape *o = g_new0 (OclOutputShape, 1);
  g_autofree char *dims = attr (e, "dims");
  g_autofree char *type = attr (e, "type");
  g_autofree char *input = attr (e, "input");

  g_ptr_array_add (l->out_shapes, o);
  if (!int_attr (ld, e, l->name, "port-index", &o->port, error))
    return FALSE;
  if (input && !int_attr (ld, e, l->name, "input", &o->input, error))
    return FALSE;
  if (type) {
    o->type = clinfer_element_type_from_name (type);
    if (o->type == CLINFER_TYPE_UNDEFINED || o->type == CLINFER_TYPE_STRING)
      return layer_error (error, ld, e, l->name, "<OutputShape type=\"%s\">: "
          "not an element type (f32, f16, i32, i64, u8, ...)", type);
  }
  if (dims && *g_strstrip (dims)) {
    g_auto (GStrv) parts = g_strsplit (dims, ",", -1);
    if (g_strv_length (parts) > CLINFER_MAX_RANK)
      return layer_error (error, ld, e, l->name, "<OutputShape dims=\"%s\">: "
          "more than %d dims", dims, CLINFER_MAX_RANK);
    for (guint i = 0; parts[i]; i++) {
      g_autofree char *why = NULL;
      o->dims[i] = clinfer_ocl_ws_parse (g_strstrip (parts[i]), &why);
      if (o->dims[i] == NULL)
        return layer_error (error, ld, e, l->name, "<OutputShape> dim %u "
            "'%s': %s", i, parts[i], why);
      o->n_dims = i + 1;
    }
  }
  return TRUE;
}

gboolean
clinfer_ocl_custom_output_shape (const OclCustomLayer *layer, guint port,
    const ClinferElementType *in_types, const ClinferShape *in_shapes,
    const gboolean *present, guint n_inputs, ClinferElementType *type,
    ClinferShape *shape, GError **error)
{
  const OclOutputShape *rule = NULL;
  int input = 0;
  int64_t vars[4] = { 1, 1, 1, 1 };
  const ClinferShape *s;

  for (guint i = 0; i < layer->out_shapes->len; i++) {
    const OclOutputShape *o = g_ptr_array_index (layer->out_shapes, i);
    if ((guint) o->port == port)
      rule = o;
  }
  if (rule)
    input = rule->input;
  if ((guint) input >= n_inputs || !present[input]) {
    g_set_error (error, CLINFER_ERROR, CLINFER_ERROR_INVALID_ARGUMENT,
        "%s:%d: custom layer '%s': output %u takes its shape from input %d, "
        "which the node does not have (add <OutputShape port-index=\"%u\" "
        "dims=\"...\"/>)", layer->file, layer->line, layer->name, port,
        input, port);
    return FALSE;
  }
  *type = rule && rule->type != CLINFER_TYPE_UNDEFINED ? rule->type
      : in_types[input];
  s = &in_shapes[input];
  if (rule == NULL || rule->n_dims == 0) {
    *shape = *s;
    return TRUE;
  }
  /* X is the last dim, Y the one before, then F and B. */
  for (int k = 0; k < 4 && s->rank >= 0 && k < s->rank; k++)
    vars[3 - k] = s->dims[s->rank - 1 - k];
  shape->rank = (int) rule->n_dims;
  for (guint i = 0; i < rule->n_dims; i++) {
    g_autofree char *why = NULL;
    int64_t v;
    gboolean dynamic = s->rank < 0;
    for (int k = 0; k < MIN (s->rank, 4); k++)
      dynamic = dynamic || s->dims[s->rank - 1 - k] < 0;
    if (dynamic) {
      shape->dims[i] = CLINFER_DIM_DYNAMIC;
      continue;
    }
    if (!clinfer_ocl_ws_eval (rule->dims[i], vars, &v, &why) || v < 0) {
      g_set_error (error, CLINFER_ERROR, CLINFER_ERROR_INVALID_ARGUMENT,
          "%s:%d: custom layer '%s': <OutputShape> dim %u '%s': %s",
          layer->file, layer->line, layer->name, i,
          clinfer_ocl_ws_text (rule->dims[i]), why ? why : "negative");
      return FALSE;
    }
    shape->dims[i] = v;
  }
  return TRUE;
}

/* ---------------------------------------------------------------- */
/* Layers and the file                                               */

static OclCustomLayer *
load_layer (const Loader *ld, xmlNodePtr e, GError **error)
{
  OclCustomLayer *l = g_new0 (OclCustomLayer, 1);
  g_autofree char *type = attr (e, "type");
  g_autofree char *version = attr (e, "version");
  gboolean have_kernel = FALSE, have_buffers = FALSE, ok = TRUE;

  l->defines = g_ptr_array_new_with_free_func (define_free);
  l->args = g_ptr_array_new_with_free_func (arg_free);
  l->out_shapes = g_ptr_array_new_with_free_func (out_shape_free);
  l->file = g_strdup (ld->path);
  l->line = (int) xmlGetLineNo (e);
  l->name = attr (e, "name");
  l->dim_input = -1;
  if (l->name == NULL || *l->name == '\0')
    ok = layer_error (error, ld, e, NULL, "<CustomLayer> without name");
  else if (type && g_ascii_strcasecmp (type, "SimpleGPU") != 0)
    ok = layer_error (error, ld, e, l->name, "type '%s' is not supported "
        "(expected SimpleGPU)", type);
  else if (version && strcmp (version, "1") != 0)
    ok = layer_error (error, ld, e, l->name, "version '%s' is not supported "
        "(expected 1)", version);
  for (xmlNodePtr c = e->children; ok && c; c = c->next) {
    if (is_element (c, "Kernel")) {
      have_kernel = TRUE;
      ok = load_kernel (ld, c, l, error);
    } else if (is_element (c, "Buffers")) {
      have_buffers = TRUE;
      ok = load_buffers (ld, c, l, error);
    } else if (is_element (c, "CompilerOptions")) {
      g_free (l->options);
      l->options = attr (c, "options");
    } else if (is_element (c, "WorkSizes"))
      ok = load_worksizes (ld, c, l, error);
    else if (is_element (c, "OutputShape"))
      ok = load_output_shape (ld, c, l, error);
  }
  if (ok && !have_kernel)
    ok = layer_error (error, ld, e, l->name, "no <Kernel>");
  if (ok && !have_buffers)
    ok = layer_error (error, ld, e, l->name, "no <Buffers>");
  if (!ok) {
    layer_free (l);
    return NULL;
  }
  if (l->options == NULL)
    l->options = g_strdup ("");
  return l;
}

static gboolean
load_layers (const Loader *ld, xmlNodePtr parent, OclCustomLayers *out,
    int depth, GError **error)
{
  for (xmlNodePtr c = parent->children; c; c = c->next) {
    OclCustomLayer *l;
    if (c->type != XML_ELEMENT_NODE)
      continue;
    if (!is_element (c, "CustomLayer")) {
      /* One wrapping root (e.g. <CustomLayers>) is accepted. */
      if (depth == 0 && !load_layers (ld, c, out, 1, error))
        return FALSE;
      continue;
    }
    if (!(l = load_layer (ld, c, error)))
      return FALSE;
    /* A later definition of the same name replaces an earlier one. */
    g_hash_table_replace (out->layers, l->name, l);
  }
  return TRUE;
}

/* The text with an XML declaration blanked (same columns and lines) so
 * the file can be wrapped in one root element. */
static char *
wrap_text (const char *text, gsize length, gsize *out_len)
{
  GString *s = g_string_sized_new (length + 40);
  g_autofree char *body = g_strndup (text, length);
  char *p = body;

  if ((guchar) p[0] == 0xef && (guchar) p[1] == 0xbb && (guchar) p[2] == 0xbf)
    memset (p, ' ', 3);
  while (*p == ' ' || *p == '\t' || *p == '\r' || *p == '\n')
    p++;
  if (g_str_has_prefix (p, "<?xml")) {
    char *end = strstr (p, "?>");
    for (char *q = p; end && q < end + 2; q++)
      if (*q != '\n')
        *q = ' ';
  }
  g_string_append (s, WRAP_OPEN);
  g_string_append_len (s, body, (gssize) strlen (body));
  g_string_append (s, WRAP_CLOSE);
  *out_len = s->len;
  return g_string_free (s, FALSE);
}

OclCustomLayers *
clinfer_ocl_custom_parse (const char *path, const char *text, gsize length,
    GError **error)
{
  Loader ld = { path, g_path_get_dirname (path) };
  gsize n = 0;
  g_autofree char *wrapped = wrap_text (text, length, &n);
  xmlParserCtxtPtr ctxt = xmlNewParserCtxt ();
  xmlDocPtr doc = NULL;
  OclCustomLayers *out = NULL;

  if (ctxt && n < G_MAXINT)
    doc = xmlCtxtReadMemory (ctxt, wrapped, (int) n, NULL, NULL,
        XML_PARSE_NONET | XML_PARSE_NOERROR | XML_PARSE_NOWARNING
        | XML_PARSE_BIG_LINES);
  if (doc == NULL || !ctxt->wellFormed) {
    xmlErrorPtr e = ctxt ? xmlCtxtGetLastError (ctxt) : NULL;
    g_autofree char *msg = g_strdup (e && e->message ? e->message
        : "not well-formed");
    int col = e ? e->int2 : 0;
    /* Line 1 carries the wrapping element. */
    if (e && e->line == 1 && col > (int) strlen (WRAP_OPEN))
      col -= (int) strlen (WRAP_OPEN);
    g_set_error (error, CLINFER_ERROR, CLINFER_ERROR_PARSE,
        "%s:%d:%d: malformed XML: %s", path, e ? e->line : 0, col,
        g_strchomp (msg));
  } else {
    out = g_new0 (OclCustomLayers, 1);
    out->path = g_strdup (path);
    out->layers = g_hash_table_new_full (g_str_hash, g_str_equal, NULL,
        layer_free);
    if (!load_layers (&ld, xmlDocGetRootElement (doc), out, 0, error))
      g_clear_pointer (&out, clinfer_ocl_custom_free);
    else if (g_hash_table_size (out->layers) == 0) {
      g_set_error (error, CLINFER_ERROR, CLINFER_ERROR_PARSE,
          "%s: no <CustomLayer> element", path);
      g_clear_pointer (&out, clinfer_ocl_custom_free);
    }
  }
  xmlFreeDoc (doc);
  if (ctxt)
    xmlFreeParserCtxt (ctxt);
  g_free (ld.dir);
  return out;
}

OclCustomLayers *
clinfer_ocl_custom_load (const char *path, GError **error)
{
  g_autofree char *text = NULL;
  gsize length = 0;
  g_autoptr (GError) err = NULL;

  if (!g_file_get_contents (path, &text, &length, &err)) {
    g_set_error (error, CLINFER_ERROR, CLINFER_ERROR_IO,
        "cannot read the config file %s: %s", path, err->message);
    return NULL;
  }
  return clinfer_ocl_custom_parse (path, text, length, error);
}

const OclCustomLayer *
clinfer_ocl_custom_lookup (const OclCustomLayers *layers, const char *name)
{
  return layers ? g_hash_table_lookup (layers->layers, name) : NULL;
}

gboolean
clinfer_ocl_custom_handles (const OclCustomLayers *layers,
    const ClinferNode *node)
{
  return clinfer_ocl_custom_lookup (layers, node->op_type) != NULL;
}
