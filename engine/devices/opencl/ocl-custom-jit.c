/* clinfer — building a custom layer's kernel for one node: the JIT
 * define block (NUM_INPUTS, work sizes, INPUTi_* / OUTPUTi_* dims, type,
 * format, padding, pitches, offset) and the user defines prepended to the
 * layer's sources, the work sizes from the WorkSizes rules, reorders for
 * non-BFYX Tensor formats, and the kernel arguments in arg-index order. */
#include "devices/opencl/ocl-custom.h"
#include <string.h>

/* ---------------------------------------------------------------- */
/* The built-in define block                                         */

static void
array_define (GString *s, const char *name, const char *type,
    const guint64 *v, guint n)
{
  g_string_append_printf (s, "#define %s_SIZE %u\n", name, n);
  g_string_append_printf (s, "#define %s_INIT { ", name);
  for (guint i = 0; i < n; i++)
    g_string_append_printf (s, "%" G_GUINT64_FORMAT ",", v[i]);
  g_string_append_printf (s, " }\n#define %s (%s []){ ", name, type);
  for (guint i = 0; i < n; i++)
    g_string_append_printf (s, "%" G_GUINT64_FORMAT ",", v[i]);
  g_string_append (s, " }\n");
}

static const char *
cl_type_name (ClinferElementType t)
{
  switch (t) {
    case CLINFER_TYPE_I8: return "char";
    case CLINFER_TYPE_U8: return "uchar";
    case CLINFER_TYPE_I32: return "int";
    case CLINFER_TYPE_I64: return "long";
    case CLINFER_TYPE_F16: return "half";
    case CLINFER_TYPE_F32: return "float";
    default: return NULL;
  }
}

/* b, f, y, x (or b, f, z, y, x for 5-D) from @shape, missing dims 1. */
static guint
bfyx_dims (const ClinferShape *shape, guint64 *d)
{
  guint n = shape->rank == 5 ? 5 : 4;

  for (guint i = 0; i < n; i++)
    d[i] = (int) i < shape->rank ? (guint64) shape->dims[i] : 1;
  return n;
}

/* Element pitches in b, f, (z,) y, x order for @fmt. */
static void
pitches (const guint64 *d, guint n, OclFormat fmt, guint64 *p)
{
  guint64 b = d[0], f = d[1], y = d[n - 2], x = d[n - 1];

  if (n == 5) {
    p[4] = 1;
    p[3] = x;
    p[2] = x * y;
    p[1] = x * y * d[2];
    p[0] = p[1] * f;
    return;
  }
  switch (fmt) {
    case OCL_FMT_BYXF: p[1] = 1; p[3] = f; p[2] = f * x; p[0] = f * x * y; break;
    case OCL_FMT_FYXB: p[0] = 1; p[3] = b; p[2] = b * x; p[1] = b * x * y; break;
    case OCL_FMT_YXFB: p[0] = 1; p[1] = b; p[3] = b * f; p[2] = b * f * x; break;
    default: p[3] = 1; p[2] = x; p[1] = x * y; p[0] = x * y * f; break;
  }
}

static gboolean
tensor_defines (GString *s, const char *layer, const char *prefix,
    const OclJitTensor *t, GError **error)
{
  static const char *const fmt_names[] = { "BFYX", "BYXF", "FYXB", "YXFB",
    "BFYX" };
  guint64 d[5], p[5], zero[5] = { 0 };
  g_autofree char *name = NULL;
  const char *type = cl_type_name (t->type);
  guint n;

  if (t->shape.rank > 5 || (t->shape.rank == 5 && t->format != OCL_FMT_BFYX
          && t->format != OCL_FMT_ANY)) {
    g_set_error (error, CLINFER_ERROR, CLINFER_ERROR_NOT_IMPLEMENTED,
        "custom layer '%s': %s has %d dims (at most 5, and 5-D only as BFYX)",
        layer, prefix, t->shape.rank);
    return FALSE;
  }
  if (type == NULL) {
    g_set_error (error, CLINFER_ERROR, CLINFER_ERROR_TYPE_MISMATCH,
        "custom layer '%s': %s is %s (kernels take i8, u8, i32, i64, f16 or "
        "f32)", layer, prefix, clinfer_element_type_name (t->type));
    return FALSE;
  }
  n = bfyx_dims (&t->shape, d);
  pitches (d, n, t->format, p);
  name = g_strdup_printf ("%s_DIMS", prefix);
  array_define (s, name, "int", d, n);
  g_string_append_printf (s, "#define %s_TYPE %s\n", prefix, type);
  g_string_append_printf (s, "#define %s_FORMAT_%s\n", prefix,
      n == 5 ? "BFZYX" : fmt_names[t->format]);
  g_free (name);
  name = g_strdup_printf ("%s_LOWER_PADDING", prefix);
  array_define (s, name, "int", zero, n);
  g_free (name);
  name = g_strdup_printf ("%s_UPPER_PADDING", prefix);
  array_define (s, name, "int", zero, n);
  g_free (name);
  name = g_strdup_printf ("%s_PITCHES", prefix);
  array_define (s, name, "int", p, n);
  g_string_append_printf (s, "#define %s_OFFSET 0\n", prefix);
  return TRUE;
}

char *
clinfer_ocl_jit_defines (const char *layer, const OclJitTensor *inputs,
    guint n_inputs, const OclJitTensor *outputs, guint n_outputs,
    const size_t *gws, guint n_gws, const size_t *lws, guint n_lws,
    GError **error)
{
  g_autoptr (GString) s = g_string_new (NULL);
  guint64 g[3], l[3];

  for (guint i = 0; i < 3; i++) {
    g[i] = i < n_gws ? gws[i] : 0;
    l[i] = i < n_lws ? lws[i] : 0;
  }
  g_string_append_printf (s, "#define NUM_INPUTS %u\n", n_inputs);
  array_define (s, "GLOBAL_WORKSIZE", "ulong", g, n_gws);
  array_define (s, "LOCAL_WORKSIZE", "ulong", l, n_lws);
  for (guint i = 0; i < n_inputs + n_outputs; i++) {
    gboolean in = i < n_inputs;
    g_autofree char *prefix = g_strdup_printf ("%s%u", in ? "INPUT" : "OUTPUT",
        in ? i : i - n_inputs);
    if (!tensor_defines (s, layer, prefix, in ? &inputs[i]
            : &outputs[i - n_inputs], error))
      return NULL;
  }
  return g_string_free (g_steal_pointer (&s), FALSE);
}

/* ---------------------------------------------------------------- */
/* User defines                                                      */

static void
append_float (GString *s, double v)
{
  char buf[G_ASCII_DTOSTR_BUF_SIZE];

  g_string_append (s, g_ascii_formatd (buf, sizeof (buf), "%f", v));
}

/* Attribute text: ints decimal, floats with six decimals, lists joined
 * by ',', strings verbatim ("true"/"false" as 1/0). */
static char *
attr_text (const ClinferAttr *a)
{
  GString *s = g_string_new (NULL);

  switch (a->type) {
    case CLINFER_ATTR_INT:
      g_string_append_printf (s, "%" G_GINT64_FORMAT, a->i);
      break;
    case CLINFER_ATTR_FLOAT:
      append_float (s, a->f);
      break;
    case CLINFER_ATTR_STRING:
      g_string_append (s, g_ascii_strcasecmp (a->s, "true") == 0 ? "1"
          : g_ascii_strcasecmp (a->s, "false") == 0 ? "0" : a->s);
      break;
    case CLINFER_ATTR_INTS:
      for (gsize i = 0; i < a->ints.n; i++)
        g_string_append_printf (s, "%s%" G_GINT64_FORMAT, i ? "," : "",
            a->ints.v[i]);
      break;
    case CLINFER_ATTR_FLOATS:
      for (gsize i = 0; i < a->floats.n; i++) {
        if (i)
          g_string_append_c (s, ',');
        append_float (s, a->floats.v[i]);
      }
      break;
    case CLINFER_ATTR_STRINGS:
      for (gsize i = 0; i < a->strings.n; i++)
        g_string_append_printf (s, "%s%s", i ? "," : "", a->strings.v[i]);
      break;
    default:
      break;
  }
  return g_string_free (s, FALSE);
}

char *
clinfer_ocl_jit_user_defines (const OclCustomLayer *layer,
    const ClinferNode *node)
{
  GString *s = g_string_new (NULL);

  for (guint i = 0; i < layer->defines->len; i++) {
    const OclCustomDefine *d = g_ptr_array_index (layer->defines, i);
    const ClinferAttr *a = d->param ? clinfer_node_get_attr (node, d->param)
        : NULL;
    g_autofree char *value = a ? attr_text (a) : g_strdup (d->def ? d->def : "");
    if (g_strcmp0 (d->type, "int[]") == 0 || g_strcmp0 (d->type, "float[]") == 0)
      g_string_append_printf (s, "#define %s (%s) {%s}\n", d->name, d->type,
          value);
    else
      g_string_append_printf (s, "#define %s %s\n", d->name, value);
  }
  return g_string_free (s, FALSE);
}

/* ---------------------------------------------------------------- */
/* Work sizes                                                        */

static gboolean
ws_error (GError **error, const OclCustomLayer *l, const char *fmt, ...)
    G_GNUC_PRINTF (3, 4);

static gboolean
ws_error (GError **error, const OclCustomLayer *l, const char *fmt, ...)
{
  g_autofree char *msg = NULL;
  va_list ap;

  va_start (ap, fmt);
  msg = g_strdup_vprintf (fmt, ap);
  va_end (ap);
  g_set_error (error, CLINFER_ERROR, CLINFER_ERROR_INVALID_ARGUMENT,
      "%s:%d: custom layer '%s': %s", l->file, l->line, l->name, msg);
  return FALSE;
}

/* B, F, Y, X: output 0 as d0..d3, or input N from the last dim back. */
static gboolean
ws_vars (const OclCustomLayer *l, const ClinferNode *node, int64_t v[4],
    GError **error)
{
  const ClinferShape *s;

  for (int i = 0; i < 4; i++)
    v[i] = 1;
  if (l->dim_input < 0) {
    s = &node->outputs[0].shape;
    for (int i = 0; i < 4 && i < s->rank; i++)
      v[i] = s->dims[i];
    return TRUE;
  }
  if ((guint) l->dim_input >= node->n_inputs
      || node->inputs[l->dim_input].node == NULL)
    return ws_error (error, l, "WorkSizes dim=input,%d but node %s has %u "
        "inputs", l->dim_input, clinfer_node_label (node), node->n_inputs);
  s = &clinfer_node_input_desc (node, l->dim_input)->shape;
  for (int i = 0; i < 4 && i < s->rank; i++)
    v[3 - i] = s->dims[s->rank - 1 - i];
  return TRUE;
}

static gboolean
eval_rules (const OclCustomLayer *l, OclWsExpr *const *rules, guint n,
    const int64_t v[4], const char *which, size_t *out, GError **error)
{
  for (guint i = 0; i < n; i++) {
    g_autofree char *why = NULL;
    int64_t r = 0;
    if (!clinfer_ocl_ws_eval (rules[i], v, &r, &why))
      return ws_error (error, l, "WorkSizes %s rule '%s': %s", which,
          clinfer_ocl_ws_text (rules[i]), why);
    if (r <= 0)
      return ws_error (error, l, "WorkSizes %s rule '%s' gives %" G_GINT64_FORMAT
          " (B=%" G_GINT64_FORMAT " F=%" G_GINT64_FORMAT " Y=%" G_GINT64_FORMAT
          " X=%" G_GINT64_FORMAT "); work sizes must be positive", which,
          clinfer_ocl_ws_text (rules[i]), r, v[0], v[1], v[2], v[3]);
    out[i] = (size_t) r;
  }
  return TRUE;
}

gboolean
clinfer_ocl_custom_work_sizes (const OclCustomLayer *l,
    const ClinferNode *node, size_t *gws, guint *n_gws, size_t *lws,
    guint *n_lws, GError **error)
{
  int64_t v[4];

  if (!ws_vars (l, node, v, error))
    return FALSE;
  *n_lws = l->n_local;
  if (l->n_global == 0) {
    gws[0] = (size_t) MAX (clinfer_shape_n_elements (&node->outputs[0].shape), 1);
    *n_gws = 1;
  } else {
    *n_gws = l->n_global;
    if (!eval_rules (l, l->global, l->n_global, v, "global", gws, error))
      return FALSE;
  }
  if (!eval_rules (l, l->local, l->n_local, v, "local", lws, error))
    return FALSE;
  if (l->n_local && l->n_local != *n_gws)
    return ws_error (error, l, "WorkSizes has %u global and %u local rules; "
        "the counts must match", *n_gws, l->n_local);
  for (guint i = 0; i < l->n_local; i++)
    if (gws[i] % lws[i] != 0)
      return ws_error (error, l, "WorkSizes global size %" G_GSIZE_FORMAT
          " (dimension %u) is not a multiple of the local size %" G_GSIZE_FORMAT,
          gws[i], i, lws[i]);
  return TRUE;
}
