/* clinfer — ONNX frontend: ModelProto / TensorProto (protobuf-c, generated
 * from the system onnx.proto at build time) to ClinferGraph / ClinferTensor.
 *
 * Everything read from the file is untrusted: every optional pointer is
 * checked and every problem is a GError naming the file, never an abort.
 *
 * Subgraphs (GRAPH / GRAPHS attributes of If, Loop, Scan...) become their
 * own ClinferGraph with ->parent set to the enclosing graph. Their formal
 * inputs are ordinary Parameter nodes in graph->inputs. A name the body
 * reads from an enclosing scope becomes an extra Parameter node of the
 * body that is NOT in graph->inputs, named like the outer tensor and
 * carrying the int attribute "outer_scope" = 1: the op implementing
 * If/Loop binds it by name to the enclosing value. Intermediate scopes get
 * such a Parameter too, so every graph only ever binds from its direct
 * parent.
 */
#include "frontend/onnx/onnx-reader.h"
#include "onnx.pb-c.h"
#include <errno.h>
#include <stdio.h>
#include <string.h>

/* Deeper nesting of subgraphs than this is treated as a malicious file
 * rather than recursed into. */
#define MAX_SUBGRAPH_DEPTH 64

typedef struct {
  const char *origin;         /* file name for messages */
  const char *base_dir;       /* external data directory, may be NULL */
  GHashTable *functions;      /* "domain\nname" of model-local functions */
} ReadCtx;

/* Tensor names visible in one graph, chained to the enclosing graphs'. */
typedef struct _Scope Scope;
struct _Scope {
  ClinferGraph *graph;
  GHashTable *names;          /* char* -> ClinferPortRef* (both owned) */
  Scope *parent;
  int depth;
};

static ClinferGraph *graph_from_proto (ReadCtx *ctx,
    const Onnx__GraphProto *gp, Scope *parent, GError **error);

static const char *
nz (const char *s)
{
  return s ? s : "";
}

/* protobuf-c leaves .data NULL for an empty bytes field. */
static char *
binary_to_string (const ProtobufCBinaryData *b)
{
  return b->data ? g_strndup ((const char *) b->data, b->len) : g_strdup ("");
}

static const char *
normalize_domain (const char *domain)
{
  if (domain == NULL || strcmp (domain, "ai.onnx") == 0)
    return "";
  return domain;
}

/* --- element types ---------------------------------------------------- */

static const char *
onnx_type_name (int32_t dt)
{
  static const char *names[] = { "UNDEFINED", "FLOAT", "UINT8", "INT8",
    "UINT16", "INT16", "INT32", "INT64", "STRING", "BOOL", "FLOAT16",
    "DOUBLE", "UINT32", "UINT64", "COMPLEX64", "COMPLEX128", "BFLOAT16",
    "FLOAT8E4M3FN", "FLOAT8E4M3FNUZ", "FLOAT8E5M2", "FLOAT8E5M2FNUZ",
    "UINT4", "INT4", "FLOAT4E2M1" };
  return dt >= 0 && (gsize) dt < G_N_ELEMENTS (names) ? names[dt] : NULL;
}

/* ClinferElementType values follow TensorProto.DataType; this only checks
 * which of them clinfer carries. */
static gboolean
element_type_from_onnx (int32_t dt, const char *origin, const char *what,
    ClinferElementType *out, GError **error)
{
  const char *name = onnx_type_name (dt);

  if ((dt >= CLINFER_TYPE_F32 && dt <= CLINFER_TYPE_U64)
      || dt == CLINFER_TYPE_BF16) {
    *out = (ClinferElementType) dt;
    return TRUE;
  }
  if (name && dt != 0)
    g_set_error (error, CLINFER_ERROR, CLINFER_ERROR_NOT_IMPLEMENTED,
        "%s: %s has element type %s, which clinfer does not support",
        origin, what, name);
  else
    g_set_error (error, CLINFER_ERROR, CLINFER_ERROR_PARSE,
        "%s: %s has unknown data type %d, expected an ONNX "
        "TensorProto.DataType", origin, what, (int) dt);
  return FALSE;
}

/* --- tensors ----------------------------------------------------------- */

static void
swap_to_host (ClinferTensor *t)
{
#if G_BYTE_ORDER == G_BIG_ENDIAN
  gsize esize = clinfer_element_type_size (clinfer_tensor_get_element_type (t));
  guint8 *p = clinfer_tensor_get_data (t);
  gsize bytes = clinfer_tensor_get_byte_size (t);

  for (gsize off = 0; esize > 1 && off < bytes; off += esize)
    for (gsize k = 0; k < esize / 2; k++) {
      guint8 tmp = p[off + k];
      p[off + k] = p[off + esize - 1 - k];
      p[off + esize - 1 - k] = tmp;
    }
#else
  (void) t;                   /* ONNX raw data is little-endian, as we are */
#endif
}

static gboolean
check_count (gsize have, int64_t want, const char *field, const char *origin,
    const char *what, GError **error)
{
  if ((guint64) have == (guint64) want)
    return TRUE;
  g_set_error (error, CLINFER_ERROR, CLINFER_ERROR_PARSE,
      "%s: %s has %" G_GSIZE_FORMAT " values in %s, expected %" G_GINT64_FORMAT
      " (the product of its dims)", origin, what, have, field, want);
  return FALSE;
}

/* The typed repeated field holding values of @type (the non-raw
 * encoding): its name and how many values it has. */
static gsize
typed_field_count (const Onnx__TensorProto *p, ClinferElementType type,
    const char **field)
{
  switch (type) {
    case CLINFER_TYPE_F32: *field = "float_data"; return p->n_float_data;
    case CLINFER_TYPE_F64: *field = "double_data"; return p->n_double_data;
    case CLINFER_TYPE_I64: *field = "int64_data"; return p->n_int64_data;
    case CLINFER_TYPE_U32:
    case CLINFER_TYPE_U64: *field = "uint64_data"; return p->n_uint64_data;
    case CLINFER_TYPE_STRING: *field = "string_data"; return p->n_string_data;
    default: *field = "int32_data"; return p->n_int32_data;
  }
}

/* Copies the typed repeated fields (the non-raw encoding) into @t; the
 * caller checked their count (typed_field_count ()) before allocating. */
static void
fill_from_typed_fields (const Onnx__TensorProto *p, ClinferTensor *t)
{
  int64_t n = clinfer_tensor_get_n_elements (t);
  gpointer dst = clinfer_tensor_get_data (t);

  switch (clinfer_tensor_get_element_type (t)) {
    case CLINFER_TYPE_F32:
      if (n > 0)
        memcpy (dst, p->float_data, n * sizeof (float));
      return;
    case CLINFER_TYPE_F64:
      if (n > 0)
        memcpy (dst, p->double_data, n * sizeof (double));
      return;
    case CLINFER_TYPE_I64:
      if (n > 0)
        memcpy (dst, p->int64_data, n * sizeof (int64_t));
      return;
    case CLINFER_TYPE_U32:
    case CLINFER_TYPE_U64:
      for (int64_t i = 0; i < n; i++) {
        if (clinfer_tensor_get_element_type (t) == CLINFER_TYPE_U32)
          ((uint32_t *) dst)[i] = (uint32_t) p->uint64_data[i];
        else
          ((uint64_t *) dst)[i] = p->uint64_data[i];
      }
      return;
    case CLINFER_TYPE_STRING:
      for (int64_t i = 0; i < n; i++)
        ((char **) dst)[i] = binary_to_string (&p->string_data[i]);
      return;
    default:
      break;
  }
  /* The narrow types (and f16/bf16 as bit patterns) live in int32_data. */
  for (int64_t i = 0; i < n; i++) {
    int32_t v = p->int32_data[i];
    switch (clinfer_tensor_get_element_type (t)) {
      case CLINFER_TYPE_I32: ((int32_t *) dst)[i] = v; break;
      case CLINFER_TYPE_I16: ((int16_t *) dst)[i] = (int16_t) v; break;
      case CLINFER_TYPE_I8: ((int8_t *) dst)[i] = (int8_t) v; break;
      case CLINFER_TYPE_U16:
      case CLINFER_TYPE_F16:
      case CLINFER_TYPE_BF16: ((uint16_t *) dst)[i] = (uint16_t) v; break;
      case CLINFER_TYPE_U8: ((uint8_t *) dst)[i] = (uint8_t) v; break;
      case CLINFER_TYPE_BOOL: ((uint8_t *) dst)[i] = v != 0; break;
      default: break;
    }
  }
}

/* Rejects absolute locations and ".." components so a model cannot make
 * us read files outside its own directory. */
static gboolean
external_location_ok (const char *location)
{
  g_auto (GStrv) parts = NULL;

  if (*location == '\0' || g_path_is_absolute (location))
    return FALSE;
  parts = g_strsplit_set (location, "/\\", -1);
  for (char **p = parts; *p; p++)
    if (strcmp (*p, "..") == 0)
      return FALSE;
  return TRUE;
}

static gboolean
parse_external_keys (const Onnx__TensorProto *p, const char **location,
    guint64 *offset, gint64 *length, const char *origin, const char *what,
    GError **error)
{
  *location = NULL;
  *offset = 0;
  *length = -1;
  for (gsize i = 0; i < p->n_external_data; i++) {
    const Onnx__StringStringEntryProto *e = p->external_data[i];
    const char *key = e ? nz (e->key) : "", *val = e ? nz (e->value) : "";
    char *end = NULL;
    guint64 v;

    if (strcmp (key, "location") == 0) {
      *location = val;
      continue;
    }
    if (strcmp (key, "offset") != 0 && strcmp (key, "length") != 0)
      continue;               /* "checksum" and future keys */
    errno = 0;
    v = g_ascii_strtoull (val, &end, 10);
    if (errno || end == val || *end || v > G_MAXINT64) {
      g_set_error (error, CLINFER_ERROR, CLINFER_ERROR_PARSE,
          "%s: %s has external data %s '%s', expected a byte count",
          origin, what, key, val);
      return FALSE;
    }
    if (strcmp (key, "offset") == 0)
      *offset = v;
    else
      *length = (gint64) v;
  }
  if (*location == NULL || !external_location_ok (*location)) {
    g_set_error (error, CLINFER_ERROR, CLINFER_ERROR_PARSE,
        "%s: %s has external data location '%s', expected a relative path "
        "inside the model's directory", origin, what, nz (*location));
    return FALSE;
  }
  return TRUE;
}

/* Reads external data (location/offset/length keys) relative to
 * @base_dir into a new tensor of @type and @shape (@bytes bytes), after
 * checking that the file holds them: a model cannot make us allocate
 * more than its files hold. */
static ClinferTensor *
read_external (const Onnx__TensorProto *p, ClinferElementType type,
    const ClinferShape *shape, gsize bytes, const char *base_dir,
    const char *origin, const char *what, GError **error)
{
  g_autoptr (ClinferTensor) t = NULL;
  const char *location;
  guint64 offset;
  gint64 length;
  g_autofree char *path = NULL;
  FILE *f;
  gboolean ok;
  off_t size;

  if (!parse_external_keys (p, &location, &offset, &length, origin, what,
          error))
    return NULL;
  if (base_dir == NULL) {
    g_set_error (error, CLINFER_ERROR, CLINFER_ERROR_IO,
        "%s: %s keeps its data in external file '%s', but the model was "
        "not read from a directory", origin, what, location);
    return NULL;
  }
  if (length >= 0 && (guint64) length != bytes) {
    g_set_error (error, CLINFER_ERROR, CLINFER_ERROR_PARSE,
        "%s: %s has external data length %" G_GINT64_FORMAT ", expected %"
        G_GSIZE_FORMAT " bytes", origin, what, length, bytes);
    return NULL;
  }
  path = g_build_filename (base_dir, location, NULL);
  f = fopen (path, "rb");
  if (f == NULL) {
    g_set_error (error, CLINFER_ERROR, CLINFER_ERROR_IO,
        "%s: cannot open external data file '%s' of %s: %s", origin, path,
        what, g_strerror (errno));
    return NULL;
  }
  ok = fseeko (f, 0, SEEK_END) == 0 && (size = ftello (f)) >= 0
      && offset <= (guint64) size && bytes <= (guint64) size - offset;
  if (ok) {
    t = clinfer_tensor_new (type, shape, error);
    if (t == NULL) {
      fclose (f);
      return NULL;
    }
    ok = fseeko (f, (off_t) offset, SEEK_SET) == 0
        && fread (clinfer_tensor_get_data (t), 1, bytes, f) == bytes;
  }
  fclose (f);
  if (!ok) {
    g_set_error (error, CLINFER_ERROR, CLINFER_ERROR_IO,
        "%s: external data file '%s' is too short for %s: expected %"
        G_GSIZE_FORMAT " bytes at offset %" G_GUINT64_FORMAT, origin, path,
        what, bytes, offset);
    return NULL;
  }
  swap_to_host (t);
  return g_steal_pointer (&t);
}

static gboolean
shape_from_dims (const Onnx__TensorProto *p, ClinferShape *shape,
    const char *origin, const char *what, GError **error)
{
  if (p->n_dims > CLINFER_MAX_RANK) {
    g_set_error (error, CLINFER_ERROR, CLINFER_ERROR_NOT_IMPLEMENTED,
        "%s: %s has rank %" G_GSIZE_FORMAT ", clinfer supports up to %d",
        origin, what, p->n_dims, CLINFER_MAX_RANK);
    return FALSE;
  }
  shape->rank = (int) p->n_dims;
  for (gsize i = 0; i < p->n_dims; i++) {
    if (p->dims[i] < 0) {
      g_set_error (error, CLINFER_ERROR, CLINFER_ERROR_PARSE,
          "%s: %s has dim %" G_GSIZE_FORMAT " = %" G_GINT64_FORMAT
          ", expected a size >= 0", origin, what, i, p->dims[i]);
      return FALSE;
    }
    shape->dims[i] = p->dims[i];
  }
  if (clinfer_shape_n_elements (shape) < 0) {
    g_set_error (error, CLINFER_ERROR, CLINFER_ERROR_PARSE,
        "%s: %s has too many elements", origin, what);
    return FALSE;
  }
  return TRUE;
}

static ClinferTensor *
tensor_from_proto (const Onnx__TensorProto *p, const char *base_dir,
    const char *origin, const char *what, GError **error)
{
  g_autoptr (ClinferTensor) t = NULL;
  ClinferElementType type;
  ClinferShape shape;
  guint64 bytes64;
  gsize bytes;

  if (!element_type_from_onnx (p->has_data_type ? p->data_type : 0, origin,
          what, &type, error)
      || !shape_from_dims (p, &shape, origin, what, error))
    return NULL;
  if (p->segment) {
    g_set_error (error, CLINFER_ERROR, CLINFER_ERROR_NOT_IMPLEMENTED,
        "%s: %s is a segment of a larger tensor, which clinfer does not "
        "support", origin, what);
    return NULL;
  }
  /* Sizes are checked against the data the model holds before anything
   * is allocated: a few bytes of protobuf may declare any dims. */
  if (!clinfer_shape_get_byte_size (&shape, type, &bytes64) || bytes64 > G_MAXSIZE) {
    g_autofree char *s = clinfer_shape_to_string (&shape);
    g_set_error (error, CLINFER_ERROR, CLINFER_ERROR_PARSE,
        "%s: %s of shape %s and type %s is too large", origin, what, s,
        clinfer_element_type_name (type));
    return NULL;
  }
  bytes = (gsize) bytes64;
  if (p->has_data_location
      && p->data_location == ONNX__TENSOR_PROTO__DATA_LOCATION__EXTERNAL) {
    if (type == CLINFER_TYPE_STRING)
      goto no_raw_strings;
    return read_external (p, type, &shape, bytes, base_dir, origin, what,
        error);
  }
  if (!p->has_raw_data) {
    const char *field;
    gsize have = typed_field_count (p, type, &field);
    if (!check_count (have, clinfer_shape_n_elements (&shape), field, origin,
            what, error))
      return NULL;
    t = clinfer_tensor_new (type, &shape, error);
    if (t)
      fill_from_typed_fields (p, t);
    return g_steal_pointer (&t);
  }
  if (type == CLINFER_TYPE_STRING)
    goto no_raw_strings;
  if (p->raw_data.len != bytes) {
    g_autofree char *s = clinfer_shape_to_string (&shape);
    g_set_error (error, CLINFER_ERROR, CLINFER_ERROR_PARSE,
        "%s: %s has %" G_GSIZE_FORMAT " bytes of raw data, expected %"
        G_GSIZE_FORMAT " (shape %s of %s)", origin, what, p->raw_data.len,
        bytes, s, clinfer_element_type_name (type));
    return NULL;
  }
  t = clinfer_tensor_new (type, &shape, error);
  if (t == NULL)
    return NULL;
  if (bytes > 0)
    memcpy (clinfer_tensor_get_data (t), p->raw_data.data, bytes);
  swap_to_host (t);
  return g_steal_pointer (&t);

no_raw_strings:
  g_set_error (error, CLINFER_ERROR, CLINFER_ERROR_PARSE,
      "%s: %s is a STRING tensor with raw or external data, expected "
      "string_data", origin, what);
  return NULL;
}

ClinferTensor *
clinfer_onnx_tensor_from_proto (const struct Onnx__TensorProto *proto,
    const char *base_dir, const char *origin, GError **error)
{
  g_autofree char *what = NULL;

  g_return_val_if_fail (proto != NULL, NULL);
  what = proto->name && *proto->name
      ? g_strdup_printf ("tensor '%s'", proto->name) : g_strdup ("tensor");
  return tensor_from_proto (proto, base_dir, origin ? origin : "<memory>",
      what, error);
}

/* --- files ------------------------------------------------------------- */

/* Maps @path read-only: protobuf-c copies what it keeps, so mapping
 * rather than reading saves one copy of large weights. */
static GMappedFile *
load_file (const char *path, const char *expected, GError **error)
{
  g_autoptr (GError) local = NULL;
  g_autoptr (GMappedFile) file = g_mapped_file_new (path, FALSE, &local);

  if (file == NULL) {
    g_set_error (error, CLINFER_ERROR, CLINFER_ERROR_IO,
        "%s: cannot read %s: %s", path, expected, local->message);
    return NULL;
  }
  if (g_mapped_file_get_length (file) == 0) {
    g_set_error (error, CLINFER_ERROR, CLINFER_ERROR_PARSE,
        "%s: the file is empty, expected %s", path, expected);
    return NULL;
  }
  return g_steal_pointer (&file);
}

ClinferTensor *
clinfer_onnx_read_tensor_file (const char *path, char **name, GError **error)
{
  g_autoptr (GMappedFile) file = NULL;
  g_autofree char *dir = NULL;
  Onnx__TensorProto *p;
  ClinferTensor *t;

  g_return_val_if_fail (path != NULL, NULL);
  file = load_file (path, "a serialized ONNX TensorProto", error);
  if (file == NULL)
    return NULL;
  p = onnx__tensor_proto__unpack (NULL, g_mapped_file_get_length (file),
      (const uint8_t *) g_mapped_file_get_contents (file));
  if (p == NULL) {
    g_set_error (error, CLINFER_ERROR, CLINFER_ERROR_PARSE,
        "%s: not an ONNX TensorProto or truncated (protobuf parsing failed)",
        path);
    return NULL;
  }
  dir = g_path_get_dirname (path);
  t = clinfer_onnx_tensor_from_proto (p, dir, path, error);
  if (t && name)
    *name = g_strdup (nz (p->name));
  onnx__tensor_proto__free_unpacked (p, NULL);
  return t;
}

/* --- scopes ------------------------------------------------------------ */

static void
scope_init (Scope *scope, ClinferGraph *graph, Scope *parent)
{
  scope->graph = graph;
  scope->names = g_hash_table_new_full (g_str_hash, g_str_equal, g_free,
      g_free);
  scope->parent = parent;
  scope->depth = parent ? parent->depth + 1 : 0;
}

static void
scope_clear (Scope *scope)
{
  g_clear_pointer (&scope->names, g_hash_table_unref);
}

/* Registers @name as output @port of @node; FALSE if the name exists. */
static gboolean
scope_define (Scope *scope, const char *name, ClinferNode *node, guint port)
{
  ClinferPortRef *r;

  if (g_hash_table_contains (scope->names, name))
    return FALSE;
  r = g_new (ClinferPortRef, 1);
  r->node = node;
  r->port = port;
  g_hash_table_insert (scope->names, g_strdup (name), r);
  return TRUE;
}

/* Finds @name in @scope or, through outer-scope Parameters (see the top
 * of the file), in an enclosing one. */
static gboolean
scope_lookup (Scope *scope, const char *name, ClinferPortRef *out)
{
  ClinferPortRef *r = g_hash_table_lookup (scope->names, name);
  ClinferPortRef outer;
  const ClinferPortDesc *d;
  ClinferNode *p;

  if (r) {
    *out = *r;
    return TRUE;
  }
  if (scope->parent == NULL || !scope_lookup (scope->parent, name, &outer))
    return FALSE;
  d = &outer.node->outputs[outer.port];
  p = clinfer_graph_add_node (scope->graph, "Parameter", "", name, 0, 1);
  g_free (p->outputs[0].name);
  p->outputs[0].name = g_strdup (name);
  p->outputs[0].type = d->type;
  p->outputs[0].shape = d->shape;
  clinfer_node_set_attr (p, "outer_scope", clinfer_attr_new_int (1));
  scope_define (scope, name, p, 0);
  out->node = p;
  out->port = 0;
  return TRUE;
}

/* --- attributes -------------------------------------------------------- */

/* Old exporters leave AttributeProto.type unset: infer it from the field
 * that holds a value. */
static int
attr_proto_type (const Onnx__AttributeProto *a)
{
  if (a->has_type)
    return a->type;
  if (a->has_f) return ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOAT;
  if (a->has_i) return ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT;
  if (a->has_s) return ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__STRING;
  if (a->t) return ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__TENSOR;
  if (a->g) return ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__GRAPH;
  if (a->n_floats) return ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOATS;
  if (a->n_ints) return ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INTS;
  if (a->n_strings) return ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__STRINGS;
  if (a->n_tensors) return ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__TENSORS;
  if (a->n_graphs) return ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__GRAPHS;
  return ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__UNDEFINED;
}

static ClinferTensor *
attr_tensor (ReadCtx *ctx, const Onnx__TensorProto *p, const ClinferNode *node,
    const char *attr, GError **error)
{
  g_autofree char *what = g_strdup_printf ("tensor attribute '%s' of node %s",
      attr, clinfer_node_label (node));

  if (p == NULL) {
    g_set_error (error, CLINFER_ERROR, CLINFER_ERROR_PARSE,
        "%s: %s has no tensor", ctx->origin, what);
    return NULL;
  }
  return tensor_from_proto (p, ctx->base_dir, ctx->origin, what, error);
}

static ClinferGraph *
attr_graph (ReadCtx *ctx, const Onnx__GraphProto *p, Scope *scope,
    const ClinferNode *node, const char *attr, GError **error)
{
  if (p == NULL) {
    g_set_error (error, CLINFER_ERROR, CLINFER_ERROR_PARSE,
        "%s: graph attribute '%s' of node %s has no graph", ctx->origin, attr,
        clinfer_node_label (node));
    return NULL;
  }
  if (scope->depth >= MAX_SUBGRAPH_DEPTH) {
    g_set_error (error, CLINFER_ERROR, CLINFER_ERROR_PARSE,
        "%s: subgraphs nested deeper than %d levels at node %s", ctx->origin,
        MAX_SUBGRAPH_DEPTH, clinfer_node_label (node));
    return NULL;
  }
  return graph_from_proto (ctx, p, scope, error);
}

/* TENSORS / GRAPHS / STRINGS lists; arrays are NULL-terminated like the
 * ones clinfer_graph_copy() makes. */
static gboolean
attr_fill_list (ReadCtx *ctx, const Onnx__AttributeProto *a, Scope *scope,
    const ClinferNode *node, ClinferAttr *out, GError **error)
{
  switch (out->type) {
    case CLINFER_ATTR_STRINGS:
      out->strings.v = g_new0 (char *, a->n_strings + 1);
      for (gsize i = 0; i < a->n_strings; i++, out->strings.n++)
        out->strings.v[i] = binary_to_string (&a->strings[i]);
      return TRUE;
    case CLINFER_ATTR_TENSORS:
      out->tensors.v = g_new0 (ClinferTensor *, a->n_tensors + 1);
      for (gsize i = 0; i < a->n_tensors; i++, out->tensors.n++) {
        out->tensors.v[i] = attr_tensor (ctx, a->tensors[i], node, a->name,
            error);
        if (out->tensors.v[i] == NULL)
          return FALSE;
      }
      return TRUE;
    case CLINFER_ATTR_GRAPHS:
      out->graphs.v = g_new0 (ClinferGraph *, a->n_graphs + 1);
      for (gsize i = 0; i < a->n_graphs; i++, out->graphs.n++) {
        out->graphs.v[i] = attr_graph (ctx, a->graphs[i], scope, node, a->name,
            error);
        if (out->graphs.v[i] == NULL)
          return FALSE;
      }
      return TRUE;
    default:
      break;                  /* only called for the three list types */
  }
  return TRUE;
}

static ClinferAttr *
attr_from_proto (ReadCtx *ctx, const Onnx__AttributeProto *a, Scope *scope,
    const ClinferNode *node, GError **error)
{
  g_autoptr (GError) local = NULL;
  ClinferAttr *out = g_new0 (ClinferAttr, 1);
  int type = attr_proto_type (a);

  switch (type) {
    case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOAT:
      out->type = CLINFER_ATTR_FLOAT;
      out->f = a->f;
      return out;
    case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT:
      out->type = CLINFER_ATTR_INT;
      out->i = a->i;
      return out;
    case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__STRING:
      out->type = CLINFER_ATTR_STRING;
      out->s = binary_to_string (&a->s);
      return out;
    case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__TENSOR:
      out->type = CLINFER_ATTR_TENSOR;
      out->t = attr_tensor (ctx, a->t, node, a->name, &local);
      break;
    case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__GRAPH:
      out->type = CLINFER_ATTR_GRAPH;
      out->g = attr_graph (ctx, a->g, scope, node, a->name, &local);
      break;
    case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOATS:
      g_free (out);
      return clinfer_attr_new_floats (a->floats, a->n_floats);
    case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INTS:
      g_free (out);
      return clinfer_attr_new_ints (a->ints, a->n_ints);
    case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__STRINGS:
    case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__TENSORS:
    case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__GRAPHS:
      out->type = type == ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__STRINGS
          ? CLINFER_ATTR_STRINGS
          : type == ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__TENSORS
          ? CLINFER_ATTR_TENSORS : CLINFER_ATTR_GRAPHS;
      attr_fill_list (ctx, a, scope, node, out, &local);
      break;
    case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__SPARSE_TENSOR:
    case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__SPARSE_TENSORS:
    case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__TYPE_PROTO:
    case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__TYPE_PROTOS:
      g_free (out);
      g_set_error (error, CLINFER_ERROR, CLINFER_ERROR_NOT_IMPLEMENTED,
          "%s: attribute '%s' of node %s is a %s, which clinfer does not "
          "support", ctx->origin, a->name, clinfer_node_label (node),
          type <= ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__SPARSE_TENSORS
          ? "sparse tensor" : "type proto");
      return NULL;
    default:
      g_free (out);
      g_set_error (error, CLINFER_ERROR, CLINFER_ERROR_PARSE,
          "%s: attribute '%s' of node %s has unknown type %d", ctx->origin,
          a->name, clinfer_node_label (node), type);
      return NULL;
  }
  if (local) {
    clinfer_attr_free (out);
    g_propagate_error (error, g_steal_pointer (&local));
    return NULL;
  }
  return out;
}

static gboolean
node_set_attrs (ReadCtx *ctx, const Onnx__NodeProto *np, ClinferNode *node,
    Scope *scope, GError **error)
{
  for (gsize i = 0; i < np->n_attribute; i++) {
    const Onnx__AttributeProto *a = np->attribute[i];
    ClinferAttr *attr;

    if (a == NULL || a->name == NULL || *a->name == '\0') {
      g_set_error (error, CLINFER_ERROR, CLINFER_ERROR_PARSE,
          "%s: node %s has an attribute without a name", ctx->origin,
          clinfer_node_label (node));
      return FALSE;
    }
    if (clinfer_node_get_attr (node, a->name)) {
      g_set_error (error, CLINFER_ERROR, CLINFER_ERROR_PARSE,
          "%s: node %s has attribute '%s' twice", ctx->origin,
          clinfer_node_label (node), a->name);
      return FALSE;
    }
    attr = attr_from_proto (ctx, a, scope, node, error);
    if (attr == NULL)
      return FALSE;
    clinfer_node_set_attr (node, a->name, attr);
  }
  return TRUE;
}

/* --- Constant nodes ---------------------------------------------------- */

static ClinferTensor *
constant_list_tensor (ClinferElementType type, const void *v, gsize n,
    int rank, GError **error)
{
  ClinferShape shape = clinfer_shape_make (rank, (int64_t[]) { (int64_t) n });
  ClinferTensor *t = clinfer_tensor_new (type, &shape, error);

  if (t == NULL)
    return NULL;
  if (type == CLINFER_TYPE_STRING) {
    const ProtobufCBinaryData *s = v;
    for (gsize i = 0; i < n; i++)
      ((char **) clinfer_tensor_get_data (t))[i] = binary_to_string (&s[i]);
  } else if (n > 0) {
    memcpy (clinfer_tensor_get_data (t), v,
        n * clinfer_element_type_size (type));
  }
  return t;
}

/* The value of an ONNX Constant node from whichever value* attribute it
 * has. @label names the node in messages. */
static ClinferTensor *
constant_value (ReadCtx *ctx, const Onnx__NodeProto *np, const char *label,
    GError **error)
{
  for (gsize i = 0; i < np->n_attribute; i++) {
    const Onnx__AttributeProto *a = np->attribute[i];
    const char *n = a ? nz (a->name) : "";
    g_autofree char *what = g_strdup_printf ("attribute '%s' of node %s",
        n, label);

    if (strcmp (n, "value") == 0 && a->t)
      return tensor_from_proto (a->t, ctx->base_dir, ctx->origin, what, error);
    if (strcmp (n, "value_float") == 0)
      return constant_list_tensor (CLINFER_TYPE_F32, &a->f, 1, 0, error);
    if (strcmp (n, "value_floats") == 0)
      return constant_list_tensor (CLINFER_TYPE_F32, a->floats, a->n_floats, 1,
          error);
    if (strcmp (n, "value_int") == 0)
      return constant_list_tensor (CLINFER_TYPE_I64, &a->i, 1, 0, error);
    if (strcmp (n, "value_ints") == 0)
      return constant_list_tensor (CLINFER_TYPE_I64, a->ints, a->n_ints, 1,
          error);
    if (strcmp (n, "value_string") == 0)
      return constant_list_tensor (CLINFER_TYPE_STRING, &a->s, 1, 0, error);
    if (strcmp (n, "value_strings") == 0)
      return constant_list_tensor (CLINFER_TYPE_STRING, a->strings,
          a->n_strings, 1, error);
    if (strcmp (n, "sparse_value") == 0) {
      g_set_error (error, CLINFER_ERROR, CLINFER_ERROR_NOT_IMPLEMENTED,
          "%s: node %s has a sparse_value, which clinfer does not support",
          ctx->origin, label);
      return NULL;
    }
  }
  g_set_error (error, CLINFER_ERROR, CLINFER_ERROR_PARSE,
      "%s: node %s has no value attribute (value, value_float, value_floats, "
      "value_int, value_ints, value_string or value_strings)", ctx->origin,
      label);
  return NULL;
}

static ClinferNode *
constant_from_proto (ReadCtx *ctx, ClinferGraph *graph,
    const Onnx__NodeProto *np, GError **error)
{
  g_autoptr (ClinferTensor) value = NULL;
  const char *out = np->n_output == 1 ? nz (np->output[0]) : "";
  g_autofree char *label = g_strdup_printf ("Constant '%s' (output '%s')",
      nz (np->name), out);
  ClinferNode *node;

  if (np->n_input != 0 || *out == '\0') {
    g_set_error (error, CLINFER_ERROR, CLINFER_ERROR_PARSE,
        "%s: node %s has %" G_GSIZE_FORMAT " inputs and %" G_GSIZE_FORMAT
        " outputs, expected none and one named output", ctx->origin, label,
        np->n_input, np->n_output);
    return NULL;
  }
  value = constant_value (ctx, np, label, error);
  if (value == NULL)
    return NULL;
  /* clinfer_graph_add_constant() names node and tensor alike; keep the
   * ONNX node name apart from the output tensor name. */
  node = clinfer_graph_add_constant (graph, out, value);
  g_free (node->name);
  node->name = g_strdup (nz (np->name));
  return node;
}

/* --- nodes ------------------------------------------------------------- */

static gboolean
check_node_domain (ReadCtx *ctx, ClinferNode *node, GError **error)
{
  g_autofree char *key = g_strdup_printf ("%s\n%s", node->domain,
      node->op_type);

  if (g_hash_table_contains (ctx->functions, key)) {
    g_set_error (error, CLINFER_ERROR, CLINFER_ERROR_NOT_IMPLEMENTED,
        "%s: node %s calls a model-local function, which clinfer does not "
        "support", ctx->origin, clinfer_node_label (node));
    return FALSE;
  }
  if (node->opset <= 0) {
    g_set_error (error, CLINFER_ERROR, CLINFER_ERROR_PARSE,
        "%s: node %s uses domain '%s', which the model does not import in "
        "opset_import", ctx->origin, clinfer_node_label (node),
        *node->domain ? node->domain : "ai.onnx");
    return FALSE;
  }
  return TRUE;
}

/* Output names: each unique in the scope; an empty name (unused optional
 * output) gets a generated one that nobody can reference. */
static gboolean
node_name_outputs (ReadCtx *ctx, const Onnx__NodeProto *np, ClinferNode *node,
    Scope *scope, GError **error)
{
  for (guint i = 0; i < node->n_outputs; i++) {
    const char *name = nz (np->output[i]);

    g_free (node->outputs[i].name);
    if (*name == '\0') {
      node->outputs[i].left_out = TRUE;
      node->outputs[i].name = g_strdup_printf ("%s#%u:unused%u",
          node->op_type, node->id, i);
      for (guint k = 1; g_hash_table_contains (scope->names,
              node->outputs[i].name); k++) {
        g_free (node->outputs[i].name);
        node->outputs[i].name = g_strdup_printf ("%s#%u:unused%u.%u",
            node->op_type, node->id, i, k);
      }
      continue;
    }
    node->outputs[i].name = g_strdup (name);
    if (!scope_define (scope, name, node, i)) {
      g_set_error (error, CLINFER_ERROR, CLINFER_ERROR_PARSE,
          "%s: node %s outputs tensor '%s', which is already defined in "
          "the graph (duplicate output tensor name)", ctx->origin,
          clinfer_node_label (node), name);
      return FALSE;
    }
  }
  return TRUE;
}

/* First pass over a node: creates it and defines its outputs, so that
 * references to them resolve whatever the node order. */
static ClinferNode *
node_create (ReadCtx *ctx, ClinferGraph *graph, const Onnx__NodeProto *np,
    Scope *scope, GError **error)
{
  const char *domain = normalize_domain (np->domain);
  ClinferNode *node;

  if (np->op_type == NULL || *np->op_type == '\0') {
    g_set_error (error, CLINFER_ERROR, CLINFER_ERROR_PARSE,
        "%s: node '%s' has no op_type", ctx->origin, nz (np->name));
    return NULL;
  }
  if (np->n_input > G_MAXUINT / 2 || np->n_output > G_MAXUINT / 2) {
    g_set_error (error, CLINFER_ERROR, CLINFER_ERROR_PARSE,
        "%s: node '%s' has too many inputs or outputs", ctx->origin,
        nz (np->name));
    return NULL;
  }
  if (*domain == '\0' && strcmp (np->op_type, "Constant") == 0) {
    node = constant_from_proto (ctx, graph, np, error);
    if (node == NULL)
      return NULL;
  } else {
    node = clinfer_graph_add_node (graph, np->op_type, domain, np->name,
        (guint) np->n_input, (guint) np->n_output);
  }
  if (!check_node_domain (ctx, node, error)
      || !node_name_outputs (ctx, np, node, scope, error))
    return NULL;
  return node;
}

/* Second pass: attributes (subgraphs see the whole enclosing scope) and
 * input connections. */
static gboolean
node_connect (ReadCtx *ctx, const Onnx__NodeProto *np, ClinferNode *node,
    Scope *scope, GError **error)
{
  if (strcmp (node->op_type, "Constant") != 0 || *node->domain
      || clinfer_node_get_attr (node, "value") == NULL) {
    if (!node_set_attrs (ctx, np, node, scope, error))
      return FALSE;
  }
  for (guint i = 0; i < node->n_inputs; i++) {
    const char *name = nz (np->input[i]);

    if (*name == '\0')
      continue;               /* absent optional input */
    if (!scope_lookup (scope, name, &node->inputs[i])) {
      g_set_error (error, CLINFER_ERROR, CLINFER_ERROR_PARSE,
          "%s: input %u '%s' of node %s is not produced by any node, graph "
          "input or initializer", ctx->origin, i, name,
          clinfer_node_label (node));
      return FALSE;
    }
  }
  return TRUE;
}

/* --- graphs ------------------------------------------------------------ */

static gboolean
shape_from_type (ReadCtx *ctx, const Onnx__ValueInfoProto *vi,
    ClinferElementType *type, ClinferShape *shape, GError **error)
{
  const Onnx__TypeProto *tp = vi->type;
  const Onnx__TensorShapeProto *sp;
  g_autofree char *what = g_strdup_printf ("graph input '%s'", vi->name);

  *type = CLINFER_TYPE_UNDEFINED;
  *shape = clinfer_shape_unknown ();
  if (tp == NULL || tp->value_case == ONNX__TYPE_PROTO__VALUE__NOT_SET)
    return TRUE;              /* subgraph inputs may leave the type out */
  if (tp->value_case != ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE
      || tp->tensor_type == NULL) {
    g_set_error (error, CLINFER_ERROR, CLINFER_ERROR_NOT_IMPLEMENTED,
        "%s: %s is not a dense tensor (sequence, map, optional or sparse), "
        "which clinfer does not support", ctx->origin, what);
    return FALSE;
  }
  if (tp->tensor_type->has_elem_type && tp->tensor_type->elem_type != 0
      && !element_type_from_onnx (tp->tensor_type->elem_type, ctx->origin,
          what, type, error))
    return FALSE;
  sp = tp->tensor_type->shape;
  if (sp == NULL)
    return TRUE;
  if (sp->n_dim > CLINFER_MAX_RANK) {
    g_set_error (error, CLINFER_ERROR, CLINFER_ERROR_NOT_IMPLEMENTED,
        "%s: %s has rank %" G_GSIZE_FORMAT ", clinfer supports up to %d",
        ctx->origin, what, sp->n_dim, CLINFER_MAX_RANK);
    return FALSE;
  }
  shape->rank = (int) sp->n_dim;
  for (gsize i = 0; i < sp->n_dim; i++) {
    const Onnx__TensorShapeProto__Dimension *d = sp->dim[i];
    /* dim_param names ("batch") are not kept: dynamic is all we need. */
    shape->dims[i] = d && d->value_case
        == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE
        && d->dim_value >= 0 ? d->dim_value : CLINFER_DIM_DYNAMIC;
  }
  return TRUE;
}

static gboolean
graph_add_initializers (ReadCtx *ctx, ClinferGraph *graph,
    const Onnx__GraphProto *gp, Scope *scope, GError **error)
{
  if (gp->n_sparse_initializer > 0) {
    g_set_error (error, CLINFER_ERROR, CLINFER_ERROR_NOT_IMPLEMENTED,
        "%s: graph '%s' has sparse initializers, which clinfer does not "
        "support", ctx->origin, graph->name);
    return FALSE;
  }
  for (gsize i = 0; i < gp->n_initializer; i++) {
    const Onnx__TensorProto *p = gp->initializer[i];
    const char *name = p ? nz (p->name) : "";
    g_autofree char *what = g_strdup_printf ("initializer '%s'", name);
    g_autoptr (ClinferTensor) t = NULL;
    ClinferNode *node;

    if (*name == '\0') {
      g_set_error (error, CLINFER_ERROR, CLINFER_ERROR_PARSE,
          "%s: initializer %" G_GSIZE_FORMAT " of graph '%s' has no name",
          ctx->origin, i, graph->name);
      return FALSE;
    }
    t = tensor_from_proto (p, ctx->base_dir, ctx->origin, what, error);
    if (t == NULL)
      return FALSE;
    node = clinfer_graph_add_constant (graph, name, t);
    if (!scope_define (scope, name, node, 0)) {
      g_set_error (error, CLINFER_ERROR, CLINFER_ERROR_PARSE,
          "%s: initializer '%s' is defined twice (duplicate tensor name)",
          ctx->origin, name);
      return FALSE;
    }
  }
  return TRUE;
}

/* Graph inputs; IR < 4 also lists initializers as inputs (defaults that
 * could be overridden): those stay constants. */
static gboolean
graph_add_inputs (ReadCtx *ctx, ClinferGraph *graph,
    const Onnx__GraphProto *gp, Scope *scope, GError **error)
{
  for (gsize i = 0; i < gp->n_input; i++) {
    const Onnx__ValueInfoProto *vi = gp->input[i];
    ClinferElementType type;
    ClinferShape shape;
    ClinferNode *node;

    if (vi == NULL || vi->name == NULL || *vi->name == '\0') {
      g_set_error (error, CLINFER_ERROR, CLINFER_ERROR_PARSE,
          "%s: input %" G_GSIZE_FORMAT " of graph '%s' has no name",
          ctx->origin, i, graph->name);
      return FALSE;
    }
    if (g_hash_table_contains (scope->names, vi->name)) {
      ClinferPortRef *r = g_hash_table_lookup (scope->names, vi->name);
      if (strcmp (r->node->op_type, "Constant") == 0)
        continue;
      g_set_error (error, CLINFER_ERROR, CLINFER_ERROR_PARSE,
          "%s: graph input '%s' is listed twice (duplicate tensor name)",
          ctx->origin, vi->name);
      return FALSE;
    }
    if (!shape_from_type (ctx, vi, &type, &shape, error))
      return FALSE;
    /* The model's own inputs are bound by callers, who need their type;
     * a subgraph's may take theirs from the enclosing node. */
    if (graph->parent == NULL && type == CLINFER_TYPE_UNDEFINED) {
      g_set_error (error, CLINFER_ERROR, CLINFER_ERROR_PARSE,
          "%s: graph input '%s' has no element type (TypeProto.tensor_type."
          "elem_type), which a model input needs", ctx->origin, vi->name);
      return FALSE;
    }
    node = clinfer_graph_add_input (graph, vi->name, type, &shape);
    scope_define (scope, vi->name, node, 0);
  }
  return TRUE;
}

static gboolean
graph_add_nodes (ReadCtx *ctx, ClinferGraph *graph, const Onnx__GraphProto *gp,
    Scope *scope, GError **error)
{
  g_autofree ClinferNode **nodes = g_new0 (ClinferNode *, MAX (gp->n_node, 1));

  for (gsize i = 0; i < gp->n_node; i++) {
    if (gp->node[i] == NULL) {
      g_set_error (error, CLINFER_ERROR, CLINFER_ERROR_PARSE,
          "%s: node %" G_GSIZE_FORMAT " of graph '%s' is empty", ctx->origin,
          i, graph->name);
      return FALSE;
    }
    nodes[i] = node_create (ctx, graph, gp->node[i], scope, error);
    if (nodes[i] == NULL)
      return FALSE;
  }
  for (gsize i = 0; i < gp->n_node; i++)
    if (!node_connect (ctx, gp->node[i], nodes[i], scope, error))
      return FALSE;
  return TRUE;
}

static gboolean
graph_add_outputs (ReadCtx *ctx, ClinferGraph *graph,
    const Onnx__GraphProto *gp, Scope *scope, GError **error)
{
  for (gsize i = 0; i < gp->n_output; i++) {
    const Onnx__ValueInfoProto *vi = gp->output[i];
    const char *name = vi ? nz (vi->name) : "";
    ClinferPortRef ref;

    if (*name == '\0' || !scope_lookup (scope, name, &ref)) {
      g_set_error (error, CLINFER_ERROR, CLINFER_ERROR_PARSE,
          "%s: graph '%s' output %" G_GSIZE_FORMAT " '%s' is not produced by "
          "any node, graph input or initializer", ctx->origin, graph->name, i,
          name);
      return FALSE;
    }
    clinfer_graph_add_output (graph, ref, name);
  }
  return TRUE;
}

/* Fills @graph (whose opsets / parent are already set) from @gp. */
static gboolean
graph_fill (ReadCtx *ctx, ClinferGraph *graph, const Onnx__GraphProto *gp,
    Scope *parent, GError **error)
{
  Scope scope;
  gboolean ok;

  scope_init (&scope, graph, parent);
  ok = graph_add_initializers (ctx, graph, gp, &scope, error)
      && graph_add_inputs (ctx, graph, gp, &scope, error)
      && graph_add_nodes (ctx, graph, gp, &scope, error)
      && graph_add_outputs (ctx, graph, gp, &scope, error);
  scope_clear (&scope);
  return ok;
}

static ClinferGraph *
graph_from_proto (ReadCtx *ctx, const Onnx__GraphProto *gp, Scope *parent,
    GError **error)
{
  g_autoptr (ClinferGraph) graph = clinfer_graph_new (nz (gp->name),
      ctx->origin);

  graph->parent = parent->graph;
  if (!graph_fill (ctx, graph, gp, parent, error))
    return NULL;
  return g_steal_pointer (&graph);
}

/* --- models ------------------------------------------------------------ */

static gboolean
model_check (const Onnx__ModelProto *m, const char *origin, GError **error)
{
  if (!m->has_ir_version) {
    g_set_error (error, CLINFER_ERROR, CLINFER_ERROR_PARSE,
        "%s: no ir_version, not an ONNX model", origin);
    return FALSE;
  }
  if (m->graph == NULL) {
    g_set_error (error, CLINFER_ERROR, CLINFER_ERROR_PARSE,
        "%s: the model has no graph", origin);
    return FALSE;
  }
  /* The range of the Debian ONNX backend test data (libonnx-testdata). */
  if (m->ir_version < CLINFER_ONNX_IR_VERSION_MIN
      || m->ir_version > CLINFER_ONNX_IR_VERSION_MAX) {
    g_set_error (error, CLINFER_ERROR, CLINFER_ERROR_UNSUPPORTED_VERSION,
        "%s: ONNX IR version %" G_GINT64_FORMAT " is not supported, expected "
        "%d to %d", origin, m->ir_version, CLINFER_ONNX_IR_VERSION_MIN,
        CLINFER_ONNX_IR_VERSION_MAX);
    return FALSE;
  }
  return TRUE;
}

static gboolean
model_read_opsets (const Onnx__ModelProto *m, ClinferGraph *graph,
    const char *origin, GError **error)
{
  for (gsize i = 0; i < m->n_opset_import; i++) {
    const Onnx__OperatorSetIdProto *o = m->opset_import[i];
    const char *domain = o ? normalize_domain (o->domain) : "";

    if (o == NULL || !o->has_version || o->version <= 0
        || o->version > G_MAXINT) {
      g_set_error (error, CLINFER_ERROR, CLINFER_ERROR_PARSE,
          "%s: opset_import %" G_GSIZE_FORMAT " has no valid version",
          origin, i);
      return FALSE;
    }
    if (*domain == '\0' && o->version > CLINFER_ONNX_OPSET_MAX) {
      g_set_error (error, CLINFER_ERROR, CLINFER_ERROR_UNSUPPORTED_VERSION,
          "%s: ONNX opset %" G_GINT64_FORMAT " is not supported, expected at "
          "most %d", origin, o->version, CLINFER_ONNX_OPSET_MAX);
      return FALSE;
    }
    g_hash_table_insert (graph->opsets, g_strdup (domain),
        GINT_TO_POINTER ((int) o->version));
  }
  return TRUE;
}

static void
model_read_metadata (const Onnx__ModelProto *m, ClinferGraph *graph,
    GHashTable *functions)
{
  for (gsize i = 0; i < m->n_metadata_props; i++) {
    const Onnx__StringStringEntryProto *e = m->metadata_props[i];
    if (e && e->key)
      g_hash_table_insert (graph->metadata, g_strdup (e->key),
          g_strdup (nz (e->value)));
  }
  for (gsize i = 0; i < m->n_functions; i++) {
    const Onnx__FunctionProto *f = m->functions[i];
    if (f && f->name)
      g_hash_table_add (functions, g_strdup_printf ("%s\n%s",
          normalize_domain (f->domain), f->name));
  }
}

static ClinferGraph *
graph_from_model (const Onnx__ModelProto *m, const char *origin,
    const char *base_dir, GError **error)
{
  g_autoptr (GHashTable) functions = g_hash_table_new_full (g_str_hash,
      g_str_equal, g_free, NULL);
  ReadCtx ctx = { origin, base_dir, functions };
  g_autoptr (ClinferGraph) graph = NULL;

  if (!model_check (m, origin, error))
    return NULL;
  graph = clinfer_graph_new (nz (m->graph->name), origin);
  if (!model_read_opsets (m, graph, origin, error))
    return NULL;
  model_read_metadata (m, graph, functions);
  if (!graph_fill (&ctx, graph, m->graph, NULL, error))
    return NULL;
  return g_steal_pointer (&graph);
}

ClinferGraph *
clinfer_onnx_read_from_data (const guint8 *data, gsize size,
    const char *origin, const char *base_dir, GError **error)
{
  Onnx__ModelProto *m;
  ClinferGraph *graph;

  if (origin == NULL)
    origin = "<memory>";
  if (size == 0 || data == NULL) {
    g_set_error (error, CLINFER_ERROR, CLINFER_ERROR_PARSE,
        "%s: no data, expected an ONNX model", origin);
    return NULL;
  }
  m = onnx__model_proto__unpack (NULL, size, data);
  if (m == NULL) {
    g_set_error (error, CLINFER_ERROR, CLINFER_ERROR_PARSE,
        "%s: not an ONNX model or truncated (protobuf parsing failed)",
        origin);
    return NULL;
  }
  graph = graph_from_model (m, origin, base_dir, error);
  onnx__model_proto__free_unpacked (m, NULL);
  return graph;
}

ClinferGraph *
clinfer_onnx_read (const char *path, GError **error)
{
  g_autoptr (GMappedFile) file = NULL;
  g_autofree char *dir = NULL;

  g_return_val_if_fail (path != NULL, NULL);
  file = load_file (path, "an ONNX model", error);
  if (file == NULL)
    return NULL;
  dir = g_path_get_dirname (path);
  return clinfer_onnx_read_from_data (
      (const guint8 *) g_mapped_file_get_contents (file),
      g_mapped_file_get_length (file), path, dir, error);
}
