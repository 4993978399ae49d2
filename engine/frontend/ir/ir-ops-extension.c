/* clinfer — IR layers outside the OpenVINO opsets: clinfer's own
 * extension opset (the engine's ops written by clinfer-convert, with typed
 * attributes) and layers of other opsets kept as nodes of that domain. */
#include "frontend/ir/ir-ops.h"
#include <string.h>

/* ---------------------------------------------------------------- */
/* clinfer extension opset                                           */

/* <data> values are "i:3", "f:0.5", "s:text", "ints:1,2", "floats:0.5,1";
 * "clinfer.domain" and "clinfer.opset" give the node's domain and opset. */
static ClinferAttr *
extension_attr (const char *v)
{
  const char *colon = strchr (v, ':');
  g_autofree char *kind = colon ? g_strndup (v, colon - v) : NULL;
  const char *body = colon ? colon + 1 : NULL;
  g_auto (GStrv) parts = NULL;
  gsize n;

  if (kind == NULL)
    return NULL;
  if (strcmp (kind, "i") == 0)
    return clinfer_attr_new_int (g_ascii_strtoll (body, NULL, 10));
  if (strcmp (kind, "f") == 0)
    return clinfer_attr_new_float ((float) g_ascii_strtod (body, NULL));
  if (strcmp (kind, "s") == 0)
    return clinfer_attr_new_string (body);
  if (strcmp (kind, "ints") != 0 && strcmp (kind, "floats") != 0)
    return NULL;
  parts = g_strsplit (body, ",", -1);
  n = *body ? g_strv_length (parts) : 0;
  if (kind[0] == 'i') {
    g_autofree int64_t *iv = g_new0 (int64_t, MAX (n, 1));
    for (gsize i = 0; i < n; i++)
      iv[i] = g_ascii_strtoll (parts[i], NULL, 10);
    return clinfer_attr_new_ints (iv, n);
  } else {
    g_autofree float *fv = g_new0 (float, MAX (n, 1));
    for (gsize i = 0; i < n; i++)
      fv[i] = (float) g_ascii_strtod (parts[i], NULL);
    return clinfer_attr_new_floats (fv, n);
  }
}

/* Node input positions of the layer's inputs: "clinfer.inputs" gives the
 * node's input count and "clinfer.absent" the positions left out. */
static gboolean
extension_inputs (IrReader *r, IrLayer *l, guint *n_inputs, guint *pos,
    GError **error)
{
  g_autofree int64_t *absent = NULL;
  int64_t total;
  gsize na;
  guint k = 0;

  if (!ir_attr_int (r, l, "clinfer.inputs", FALSE, l->inputs->len, &total, error)
      || !ir_attr_ints (r, l, "clinfer.absent", FALSE, &absent, &na, error))
    return FALSE;
  if (total < (int64_t) l->inputs->len || total > 64
      || (gsize) total != l->inputs->len + na) {
    ir_set_error (r, l, error, CLINFER_ERROR_PARSE,
        "clinfer.inputs=%" G_GINT64_FORMAT " does not match %u ports and %"
        G_GSIZE_FORMAT " absent inputs", total, l->inputs->len, na);
    return FALSE;
  }
  for (guint i = 0; i < (guint) total; i++) {
    gboolean gone = FALSE;
    for (gsize j = 0; j < na; j++)
      gone = gone || absent[j] == i;
    if (!gone && k < l->inputs->len)
      pos[k++] = i;
  }
  if (k != l->inputs->len) {
    ir_set_error (r, l, error, CLINFER_ERROR_PARSE,
        "clinfer.absent lists positions outside 0..%" G_GINT64_FORMAT,
        total - 1);
    return FALSE;
  }
  *n_inputs = (guint) total;
  return TRUE;
}

static gboolean
tr_extension (IrReader *r, IrLayer *l, GError **error)
{
  guint pos[64], n_inputs;
  ClinferNode *n;
  GHashTableIter it;
  gpointer k, v;

  if (!extension_inputs (r, l, &n_inputs, pos, error))
    return FALSE;
  n = ir_add_node (r, l, l->type, 1, n_inputs, l->outputs->len, NULL);
  for (guint i = 0; i < l->inputs->len; i++)
    ir_sink (l, i, n, pos[i]);
  for (guint i = 0; i < l->outputs->len; i++)
    ir_output (r, l, i, n, i);

  g_free (n->domain);
  n->domain = g_strdup (ir_attr_str (l, "clinfer.domain", ""));
  n->opset = (int) g_ascii_strtoll (ir_attr_str (l, "clinfer.opset", "1"),
      NULL, 10);
  g_hash_table_iter_init (&it, l->data);
  while (g_hash_table_iter_next (&it, &k, &v)) {
    ClinferAttr *a;
    if (g_str_has_prefix (k, "clinfer."))
      continue;
    if ((a = extension_attr (v)) == NULL) {
      ir_set_error (r, l, error, CLINFER_ERROR_PARSE,
          "attribute %s='%s' is not a typed clinfer attribute (i:, f:, s:, "
          "ints:, floats:)", (const char *) k, (const char *) v);
      return FALSE;
    }
    clinfer_node_set_attr (n, k, a);
  }
  return TRUE;
}

const IrOpDef clinfer_ir_extension_op =
  { "*", 0, 0, 0, G_MAXUINT, 0, G_MAXUINT, tr_extension, NULL, 0 };

static gboolean
tr_foreign (IrReader *r, IrLayer *l, GError **error)
{
  ClinferNode *n = ir_add_node (r, l, l->type, 1, l->inputs->len,
      l->outputs->len, NULL);
  GHashTableIter it;
  gpointer k, v;

  for (guint i = 0; i < l->inputs->len; i++)
    ir_sink (l, i, n, i);
  for (guint i = 0; i < l->outputs->len; i++)
    ir_output (r, l, i, n, i);
  g_free (n->domain);
  n->domain = g_strdup (l->version);
  g_hash_table_iter_init (&it, l->data);
  while (g_hash_table_iter_next (&it, &k, &v))
    clinfer_node_set_attr (n, k, clinfer_attr_new_string (v));
  return TRUE;
}

const IrOpDef clinfer_ir_foreign_op =
  { "*", 0, 0, 0, G_MAXUINT, 0, G_MAXUINT, tr_foreign, NULL, 0 };
