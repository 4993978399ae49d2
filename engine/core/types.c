/* clinfer — element types and shapes: names, sizes, parsing, broadcasting. */
#include <clinfer/types.h>
#include <clinfer/error.h>
#include <string.h>
#include <stdlib.h>

static const struct {
  ClinferElementType type;
  gsize size;
  const char *name;
  const char *alias1, *alias2;
} type_table[] = {
  { CLINFER_TYPE_F32, 4, "f32", "float32", "float" },
  { CLINFER_TYPE_U8, 1, "u8", "uint8", NULL },
  { CLINFER_TYPE_I8, 1, "i8", "int8", NULL },
  { CLINFER_TYPE_U16, 2, "u16", "uint16", NULL },
  { CLINFER_TYPE_I16, 2, "i16", "int16", NULL },
  { CLINFER_TYPE_I32, 4, "i32", "int32", NULL },
  { CLINFER_TYPE_I64, 8, "i64", "int64", NULL },
  { CLINFER_TYPE_STRING, sizeof (char *), "string", NULL, NULL },
  { CLINFER_TYPE_BOOL, 1, "bool", "boolean", NULL },
  { CLINFER_TYPE_F16, 2, "f16", "float16", "half" },
  { CLINFER_TYPE_F64, 8, "f64", "float64", "double" },
  { CLINFER_TYPE_U32, 4, "u32", "uint32", NULL },
  { CLINFER_TYPE_U64, 8, "u64", "uint64", NULL },
  { CLINFER_TYPE_BF16, 2, "bf16", "bfloat16", NULL },
};

gsize
clinfer_element_type_size (ClinferElementType type)
{
  for (gsize i = 0; i < G_N_ELEMENTS (type_table); i++)
    if (type_table[i].type == type)
      return type_table[i].size;
  return 0;
}

const char *
clinfer_element_type_name (ClinferElementType type)
{
  for (gsize i = 0; i < G_N_ELEMENTS (type_table); i++)
    if (type_table[i].type == type)
      return type_table[i].name;
  return "undefined";
}

ClinferElementType
clinfer_element_type_from_name (const char *name)
{
  if (name == NULL)
    return CLINFER_TYPE_UNDEFINED;
  for (gsize i = 0; i < G_N_ELEMENTS (type_table); i++) {
    if (g_ascii_strcasecmp (name, type_table[i].name) == 0
        || (type_table[i].alias1
            && g_ascii_strcasecmp (name, type_table[i].alias1) == 0)
        || (type_table[i].alias2
            && g_ascii_strcasecmp (name, type_table[i].alias2) == 0))
      return type_table[i].type;
  }
  return CLINFER_TYPE_UNDEFINED;
}

gboolean
clinfer_element_type_is_float (ClinferElementType type)
{
  return type == CLINFER_TYPE_F32 || type == CLINFER_TYPE_F16
      || type == CLINFER_TYPE_F64 || type == CLINFER_TYPE_BF16;
}

ClinferShape
clinfer_shape_make (int rank, const int64_t *dims)
{
  ClinferShape s = { 0 };
  s.rank = CLAMP (rank, -1, CLINFER_MAX_RANK);
  for (int i = 0; i < s.rank; i++)
    s.dims[i] = dims ? dims[i] : CLINFER_DIM_DYNAMIC;
  return s;
}

ClinferShape
clinfer_shape_unknown (void)
{
  ClinferShape s = { 0 };
  s.rank = -1;
  return s;
}

gboolean
clinfer_shape_is_static (const ClinferShape *shape)
{
  if (shape->rank < 0)
    return FALSE;
  for (int i = 0; i < shape->rank; i++)
    if (shape->dims[i] < 0)
      return FALSE;
  return TRUE;
}

gboolean
clinfer_shape_equal (const ClinferShape *a, const ClinferShape *b)
{
  if (a->rank != b->rank)
    return FALSE;
  for (int i = 0; i < a->rank; i++)
    if (a->dims[i] != b->dims[i])
      return FALSE;
  return TRUE;
}

int64_t
clinfer_shape_n_elements (const ClinferShape *shape)
{
  int64_t n = 1;

  if (shape->rank < 0)
    return -1;
  for (int i = 0; i < shape->rank; i++) {
    if (shape->dims[i] < 0)
      return -1;
    if (shape->dims[i] != 0 && n > G_MAXINT64 / shape->dims[i])
      return -1;
    n *= shape->dims[i];
  }
  return n;
}

gboolean
clinfer_shape_get_byte_size (const ClinferShape *shape,
    ClinferElementType type, guint64 *bytes)
{
  guint64 esize = clinfer_element_type_size (type), n = esize, span = esize;

  if (esize == 0 || !clinfer_shape_is_static (shape))
    return FALSE;
  for (int i = 0; i < shape->rank; i++) {
    guint64 d = (guint64) shape->dims[i];
    if (!g_uint64_checked_mul (&n, n, d)
        || !g_uint64_checked_mul (&span, span, MAX (d, 1))
        || span > CLINFER_MAX_TENSOR_BYTES)
      return FALSE;
  }
  *bytes = n;
  return TRUE;
}

char *
clinfer_shape_to_string (const ClinferShape *shape)
{
  GString *s;

  if (shape->rank < 0)
    return g_strdup ("[?]");
  if (shape->rank == 0)
    return g_strdup ("scalar");
  s = g_string_new (NULL);
  for (int i = 0; i < shape->rank; i++) {
    if (i)
      g_string_append_c (s, 'x');
    if (shape->dims[i] < 0)
      g_string_append_c (s, '?');
    else
      g_string_append_printf (s, "%" G_GINT64_FORMAT, shape->dims[i]);
  }
  return g_string_free (s, FALSE);
}

gboolean
clinfer_shape_parse (const char *text, ClinferShape *shape, GError **error)
{
  g_auto (GStrv) parts = NULL;
  ClinferShape s = { 0 };

  if (text == NULL || *text == '\0' || g_strcmp0 (text, "scalar") == 0) {
    *shape = s;
    return TRUE;
  }
  parts = g_strsplit_set (text, "x,", -1);
  for (int i = 0; parts[i]; i++) {
    const char *p = g_strstrip (parts[i]);
    char *end = NULL;
    gint64 v;

    if (s.rank >= CLINFER_MAX_RANK) {
      g_set_error (error, CLINFER_ERROR, CLINFER_ERROR_INVALID_ARGUMENT,
          "shape '%s' has more than %d dimensions", text, CLINFER_MAX_RANK);
      return FALSE;
    }
    if (strcmp (p, "?") == 0) {
      s.dims[s.rank++] = CLINFER_DIM_DYNAMIC;
      continue;
    }
    v = g_ascii_strtoll (p, &end, 10);
    if (*p == '\0' || end == NULL || *end != '\0' || v < -1) {
      g_set_error (error, CLINFER_ERROR, CLINFER_ERROR_INVALID_ARGUMENT,
          "invalid dimension '%s' in shape '%s' (expected e.g. 1x3x224x224)",
          p, text);
      return FALSE;
    }
    s.dims[s.rank++] = v;
  }
  *shape = s;
  return TRUE;
}

gboolean
clinfer_shape_broadcast (const ClinferShape *a, const ClinferShape *b,
    ClinferShape *out, GError **error)
{
  ClinferShape r = { 0 };

  if (a->rank < 0 || b->rank < 0) {
    *out = clinfer_shape_unknown ();
    return TRUE;
  }
  r.rank = MAX (a->rank, b->rank);
  for (int i = 0; i < r.rank; i++) {
    int ia = a->rank - r.rank + i, ib = b->rank - r.rank + i;
    int64_t da = ia >= 0 ? a->dims[ia] : 1;
    int64_t db = ib >= 0 ? b->dims[ib] : 1;

    if (da == db)
      r.dims[i] = da;
    else if (da == 1)
      r.dims[i] = db;
    else if (db == 1)
      r.dims[i] = da;
    else if (da < 0 || db < 0)
      r.dims[i] = MAX (da, db) > 1 ? MAX (da, db) : CLINFER_DIM_DYNAMIC;
    else {
      g_autofree char *sa = clinfer_shape_to_string (a);
      g_autofree char *sb = clinfer_shape_to_string (b);
      g_set_error (error, CLINFER_ERROR, CLINFER_ERROR_SHAPE_MISMATCH,
          "shapes %s and %s cannot be broadcast together (dimension %d: "
          "%" G_GINT64_FORMAT " vs %" G_GINT64_FORMAT ")", sa, sb, i, da, db);
      return FALSE;
    }
  }
  *out = r;
  return TRUE;
}
