/* clinfer — Graphviz dump of a graph (clinfer-convert --dump-graph): what
 * each compile pass left behind, with op types, names, and element types
 * and shapes on the edges. */
#include "passes/passes.h"
#include <stdio.h>
#include <string.h>

/* Escapes @s for a double-quoted DOT string. */
static void
append_escaped (GString *out, const char *s)
{
  for (; s && *s; s++) {
    if (*s == '"' || *s == '\\')
      g_string_append_c (out, '\\');
    if (*s == '\n')
      g_string_append (out, "\\n");
    else
      g_string_append_c (out, *s);
  }
}

/* "f32 1x3x128x128", or "?" before shape inference. */
static char *
port_label (const ClinferPortDesc *d)
{
  g_autofree char *shape = clinfer_shape_to_string (&d->shape);

  if (d->type == CLINFER_TYPE_UNDEFINED)
    return g_strdup (d->shape.rank < 0 ? "?" : shape);
  return g_strdup_printf ("%s %s", clinfer_element_type_name (d->type), shape);
}

static void
append_node (GString *out, const ClinferNode *n)
{
  gboolean is_const = strcmp (n->op_type, "Constant") == 0;
  gboolean is_param = strcmp (n->op_type, "Parameter") == 0;

  g_string_append_printf (out, "  n%u [label=\"", n->id);
  if (is_const) {
    g_autofree char *l = port_label (&n->outputs[0]);
    g_string_append (out, "Const\\n");
    append_escaped (out, l);
    g_string_append (out, "\", shape=ellipse, fontsize=9, color=gray50];\n");
    return;
  }
  if (*n->domain) {
    append_escaped (out, n->domain);
    g_string_append_c (out, '.');
  }
  append_escaped (out, n->op_type);
  if (is_param) {
    g_autofree char *l = port_label (&n->outputs[0]);
    g_string_append (out, "\\n");
    append_escaped (out, n->outputs[0].name);
    g_string_append (out, "\\n");
    append_escaped (out, l);
  } else if (*n->name) {
    g_string_append (out, "\\n");
    append_escaped (out, n->name);
  }
  g_string_append_printf (out, "\", shape=box%s];\n", is_param
      ? ", style=filled, fillcolor=lightblue" : "");
}

static void
append_edges (GString *out, const ClinferNode *n)
{
  for (guint j = 0; j < n->n_inputs; j++) {
    const ClinferPortRef *r = &n->inputs[j];
    g_autofree char *l = NULL;
    if (r->node == NULL || r->port >= r->node->n_outputs)
      continue;
    l = port_label (&r->node->outputs[r->port]);
    g_string_append_printf (out, "  n%u -> n%u [label=\"", r->node->id, n->id);
    append_escaped (out, l);
    if (r->node->n_outputs > 1 || n->n_inputs > 1)
      g_string_append_printf (out, " (%u:%u)", r->port, j);
    g_string_append (out, "\", fontsize=9];\n");
  }
}

gboolean
clinfer_graph_write_dot (const ClinferGraph *graph, const char *path,
    const char *title, GError **error)
{
  GString *out = g_string_new ("digraph clinfer {\n  rankdir=TB;\n"
      "  node [fontname=\"Helvetica\", fontsize=10];\n"
      "  edge [fontname=\"Helvetica\"];\n");
  gboolean ok;
  g_autoptr (GError) err = NULL;

  if (title) {
    g_string_append (out, "  labelloc=t;\n  label=\"");
    append_escaped (out, title);
    g_string_append (out, "\";\n");
  }
  for (guint i = 0; i < graph->nodes->len; i++)
    append_node (out, g_ptr_array_index (graph->nodes, i));
  for (guint i = 0; i < graph->nodes->len; i++)
    append_edges (out, g_ptr_array_index (graph->nodes, i));
  for (guint i = 0; i < graph->outputs->len; i++) {
    const ClinferGraphOutput *o = &g_array_index (graph->outputs,
        ClinferGraphOutput, i);
    g_autofree char *l = NULL;
    if (o->ref.node == NULL)
      continue;
    l = port_label (&o->ref.node->outputs[o->ref.port]);
    g_string_append_printf (out, "  out%u [label=\"", i);
    append_escaped (out, o->name);
    g_string_append (out, "\", shape=box, style=filled, fillcolor=palegreen];\n");
    g_string_append_printf (out, "  n%u -> out%u [label=\"", o->ref.node->id, i);
    append_escaped (out, l);
    g_string_append (out, "\", fontsize=9];\n");
  }
  g_string_append (out, "}\n");
  ok = g_file_set_contents (path, out->str, (gssize) out->len, &err);
  if (!ok)
    g_set_error (error, CLINFER_ERROR, CLINFER_ERROR_IO,
        "%s: cannot write the graph dump: %s", path, err->message);
  g_string_free (out, TRUE);
  return ok;
}
