/* clinfer-convert — the model optimizer: reads an ONNX or OpenVINO IR
 * model, fixes input shapes, embeds mean/scale/channel-reversal
 * pre-processing as graph nodes, runs the named middle passes (shape and
 * value propagation, constant folding, dead-node removal, fusions) and
 * writes OpenVINO IR v11 (.xml + .bin). */
#include "tool-common.h"
#include "runtime/runtime.h"
#include "frontend/ir/ir-reader.h"
#include "passes/passes.h"
#include <glib/gstdio.h>
#include <errno.h>
#include <locale.h>
#include <stdio.h>
#include <string.h>

#define TOOL_NAME "clinfer-convert"

typedef struct {
  char *output;
  gboolean compress_to_fp16;
  char **mean_values;        /* NAME=v,v,v */
  char **scale_values;       /* NAME=v,v,v */
  char **reverse_channels;   /* NAME */
  char *dump_graph;
} ConvertOptions;

static void
convert_options_clear (ConvertOptions *c)
{
  g_free (c->output);
  g_strfreev (c->mean_values);
  g_strfreev (c->scale_values);
  g_strfreev (c->reverse_channels);
  g_free (c->dump_graph);
}

/* ---------------------------------------------------------------- */
/* Pre-processing nodes                                              */

static ClinferNode *
find_input (ClinferGraph *g, const char *name, const char *option,
    GError **error)
{
  for (guint i = 0; i < g->inputs->len; i++) {
    ClinferNode *n = g_ptr_array_index (g->inputs, i);
    if (strcmp (n->outputs[0].name, name) == 0)
      return n;
  }
  g_set_error (error, TOOL_ERROR, TOOL_ERROR_FAILED,
      "%s: the model has no input named '%s'", option, name);
  return NULL;
}

/* The channel axis of @in for @count channels: 1 (NCHW) or the last
 * (NHWC) dim when it has that extent. */
static gboolean
channel_axis (const ClinferNode *in, int64_t count, const char *option,
    int *axis, GError **error)
{
  const ClinferShape *s = &in->outputs[0].shape;

  if (s->rank >= 2 && s->dims[1] == count)
    *axis = 1;
  else if (s->rank >= 1 && s->dims[s->rank - 1] == count)
    *axis = s->rank - 1;
  else {
    g_autofree char *shape = clinfer_shape_to_string (s);
    g_set_error (error, TOOL_ERROR, TOOL_ERROR_FAILED,
        "%s: input '%s' has shape %s, which has no channel dim of %"
        G_GINT64_FORMAT " (dim 1 or the last; fix it with --shape)", option,
        in->outputs[0].name, shape, count);
    return FALSE;
  }
  return TRUE;
}

/* A constant of @values shaped to broadcast along @axis of @in. */
static ClinferNode *
channel_const (ClinferGraph *g, const ClinferNode *in, int axis,
    const double *values, gsize n, const char *what)
{
  const ClinferShape *s = &in->outputs[0].shape;
  int64_t dims[CLINFER_MAX_RANK];
  g_autofree char *name = g_strdup_printf ("%s/%s", in->outputs[0].name, what);
  g_autoptr (ClinferTensor) t = NULL;
  ClinferShape cs;
  float *p;

  for (int i = 0; i < s->rank - axis; i++)
    dims[i] = i == 0 ? (int64_t) n : 1;
  cs = clinfer_shape_make (s->rank - axis, dims);
  t = clinfer_tensor_new (CLINFER_TYPE_F32, &cs, NULL);
  p = clinfer_tensor_get_data (t);
  for (gsize i = 0; i < n; i++)
    p[i] = (float) values[i];
  return clinfer_graph_add_constant (g, name, t);
}

static gboolean
parse_values (const char *arg, const char *option, char **name,
    double **values, gsize *n, GError **error)
{
  const char *eq = strrchr (arg, '=');
  g_auto (GStrv) parts = NULL;

  if (eq == NULL || eq == arg || eq[1] == '\0') {
    g_set_error (error, TOOL_ERROR, TOOL_ERROR_USAGE,
        "%s expects NAME=v,v,v (e.g. data=127.5,127.5,127.5), got '%s'",
        option, arg);
    return FALSE;
  }
  *name = g_strndup (arg, eq - arg);
  parts = g_strsplit (eq + 1, ",", -1);
  *n = g_strv_length (parts);
  *values = g_new0 (double, *n);
  for (gsize i = 0; i < *n; i++) {
    char *end = NULL;
    (*values)[i] = g_ascii_strtod (g_strstrip (parts[i]), &end);
    if (end == parts[i] || *end != '\0') {
      g_set_error (error, TOOL_ERROR, TOOL_ERROR_USAGE,
          "%s %s: '%s' is not a number", option, arg, parts[i]);
      return FALSE;
    }
  }
  return TRUE;
}

/* Per input: reverse channels, subtract mean, divide by scale, in that
 * order (mean and scale are in the model's channel order), as nodes
 * between the Parameter and its consumers. */
typedef struct {
  ClinferNode *input;
  gboolean reverse;
  double *mean, *scale;
  gsize n_mean, n_scale;
} PreProc;

static gboolean
insert_preproc (ClinferGraph *g, PreProc *p, GError **error)
{
  ClinferPortRef in = { p->input, 0 }, cur = in;
  ClinferNode *first = NULL, *n;
  int axis;
  gsize count = p->reverse ? 3 : MAX (p->n_mean, p->n_scale);
  const char *name = p->input->outputs[0].name;

  if (p->input->outputs[0].type != CLINFER_TYPE_F32) {
    g_set_error (error, TOOL_ERROR, TOOL_ERROR_FAILED, "input '%s' is %s: "
        "mean, scale and channel reversal need an f32 input", name,
        clinfer_element_type_name (p->input->outputs[0].type));
    return FALSE;
  }
  if (!channel_axis (p->input, (int64_t) count, "--mean-values/--scale-values/"
          "--reverse-channels", &axis, error))
    return FALSE;
  if ((p->n_mean && p->n_mean != count) || (p->n_scale && p->n_scale != count)) {
    g_set_error (error, TOOL_ERROR, TOOL_ERROR_USAGE, "input '%s': mean, scale "
        "and channel reversal must agree on %" G_GSIZE_FORMAT " channels",
        name, count);
    return FALSE;
  }
  if (p->reverse) {
    int64_t idx[3] = { 2, 1, 0 }, dim = 3;
    ClinferShape s = clinfer_shape_make (1, &dim);
    g_autoptr (ClinferTensor) t = clinfer_tensor_new (CLINFER_TYPE_I64, &s, NULL);
    g_autofree char *iname = g_strdup_printf ("%s/reverse_indices", name);
    memcpy (clinfer_tensor_get_data (t), idx, sizeof (idx));
    n = clinfer_graph_add_node (g, "Gather", "", "reverse_channels", 2, 1);
    n->opset = 13;
    clinfer_node_set_attr (n, "axis", clinfer_attr_new_int (axis));
    n->inputs[1] = (ClinferPortRef) { clinfer_graph_add_constant (g, iname, t), 0 };
    first = n;
    cur = (ClinferPortRef) { n, 0 };
  }
  for (guint k = 0; k < 2; k++) {
    double *v = k == 0 ? p->mean : p->scale;
    if (v == NULL)
      continue;
    n = clinfer_graph_add_node (g, k == 0 ? "Sub" : "Div", "",
        k == 0 ? "mean_values" : "scale_values", 2, 1);
    n->opset = 14;
    n->inputs[0] = cur;
    n->inputs[1] = (ClinferPortRef) { channel_const (g, p->input, axis, v,
        count, k == 0 ? "mean" : "scale"), 0 };
    if (first == NULL)
      first = n;
    cur = (ClinferPortRef) { n, 0 };
  }
  /* Rewire the consumers, then feed the chain from the input. */
  clinfer_graph_replace_uses (g, in, cur);
  first->inputs[0] = in;
  return TRUE;
}

static PreProc *
preproc_for (GPtrArray *list, ClinferNode *input)
{
  PreProc *p;

  for (guint i = 0; i < list->len; i++)
    if (((PreProc *) g_ptr_array_index (list, i))->input == input)
      return g_ptr_array_index (list, i);
  p = g_new0 (PreProc, 1);
  p->input = input;
  g_ptr_array_add (list, p);
  return p;
}

static void
preproc_free (PreProc *p)
{
  g_free (p->mean);
  g_free (p->scale);
  g_free (p);
}

static gboolean
add_preprocessing (ClinferGraph *g, const ConvertOptions *c, GError **error)
{
  g_autoptr (GPtrArray) list = g_ptr_array_new_with_free_func (
      (GDestroyNotify) preproc_free);

  for (guint k = 0; k < 2; k++) {
    char **args = k == 0 ? c->mean_values : c->scale_values;
    const char *option = k == 0 ? "--mean-values" : "--scale-values";
    for (guint i = 0; args && args[i]; i++) {
      g_autofree char *name = NULL;
      double *v;
      gsize n;
      ClinferNode *in;
      PreProc *p;
      if (!parse_values (args[i], option, &name, &v, &n, error))
        return FALSE;
      if (!(in = find_input (g, name, option, error))) {
        g_free (v);
        return FALSE;
      }
      p = preproc_for (list, in);
      g_free (k == 0 ? p->mean : p->scale);
      *(k == 0 ? &p->mean : &p->scale) = v;
      *(k == 0 ? &p->n_mean : &p->n_scale) = n;
    }
  }
  for (guint i = 0; c->reverse_channels && c->reverse_channels[i]; i++) {
    ClinferNode *in = find_input (g, c->reverse_channels[i],
        "--reverse-channels", error);
    if (in == NULL)
      return FALSE;
    preproc_for (list, in)->reverse = TRUE;
  }
  for (guint i = 0; i < list->len; i++)
    if (!insert_preproc (g, g_ptr_array_index (list, i), error))
      return FALSE;
  return TRUE;
}

/* ---------------------------------------------------------------- */
/* Conversion                                                        */

static gboolean
apply_shapes (ClinferModel *model, const ToolOptions *opts, GError **error)
{
  for (guint i = 0; opts->shapes && opts->shapes[i]; i++) {
    const char *eq = strrchr (opts->shapes[i], '=');
    g_autofree char *name = g_strndup (opts->shapes[i], eq - opts->shapes[i]);
    ClinferShape shape;

    /* tool_options_parse() checked the syntax. */
    if (!clinfer_shape_parse (eq + 1, &shape, error)
        || !clinfer_model_reshape (model, name, &shape, error))
      return FALSE;
  }
  return TRUE;
}

static gboolean
run_passes (ClinferGraph *g, const ClinferOpSet *ops, const ToolOptions *opts,
    const ConvertOptions *c, GError **error)
{
  g_autoptr (ClinferCompileConfig) config = tool_compile_config_new (opts,
      error);
  ClinferPassContext ctx = { NULL, clinfer_graph_get_opset (g, ""),
    c->dump_graph, TRUE };

  if (config == NULL)
    return FALSE;
  ctx.disabled_passes = config->disabled_passes;
  if (c->dump_graph && g_mkdir_with_parents (c->dump_graph, 0755) != 0) {
    int saved = errno;
    g_set_error (error, TOOL_ERROR, TOOL_ERROR_FAILED,
        "--dump-graph: cannot create %s: %s", c->dump_graph, g_strerror (saved));
    return FALSE;
  }
  return clinfer_graph_resolve_ops_with (g, ops, error)
      && clinfer_passes_run (g, &ctx, error);
}

/* --output dir/sub/model.xml: the folders are created as needed. */
static gboolean
make_parent_dir (const char *path, GError **error)
{
  g_autofree char *dir = g_path_get_dirname (path);

  if (g_mkdir_with_parents (dir, 0755) != 0) {
    int saved = errno;
    g_set_error (error, TOOL_ERROR, TOOL_ERROR_FAILED,
        "--output: cannot create the folder %s: %s", dir, g_strerror (saved));
    return FALSE;
  }
  return TRUE;
}

static gboolean
convert (const ToolOptions *opts, const ConvertOptions *c, GError **error)
{
  /* Read with the config: custom op libraries (--custom-lib) resolve the
   * nodes of their ops, which are then written as extension layers. */
  g_autoptr (ClinferCompileConfig) config = tool_compile_config_new (opts, error);
  g_autoptr (ClinferModel) model = config
      ? clinfer_model_read_with_config (opts->model_path, config, error) : NULL;
  g_autoptr (ClinferGraph) g = NULL;
  ClinferIrWriteOptions wopts = { c->compress_to_fp16, 0, NULL };
  g_autofree char *bin = NULL;
  GStatBuf st;

  if (model == NULL || !apply_shapes (model, opts, error))
    return FALSE;
  g = clinfer_graph_copy (model->graph);
  if (!add_preprocessing (g, c, error)
      || !run_passes (g, model->ops, opts, c, error)
      || !make_parent_dir (c->output, error)
      || !clinfer_ir_write (g, c->output, &wopts, error))
    return FALSE;
  if (wopts.n_extension_layers) {
    fflush (stdout);
    fprintf (stderr, "%s: warning: %u layer%s (%s) %s no OpenVINO "
        "equivalent and %s written in the '%s' extension opset: clinfer "
        "reads %s, OpenVINO cannot load it\n", TOOL_NAME,
        wopts.n_extension_layers, wopts.n_extension_layers > 1 ? "s" : "",
        wopts.extension_ops, wopts.n_extension_layers > 1 ? "have" : "has",
        wopts.n_extension_layers > 1 ? "are" : "is",
        CLINFER_IR_EXTENSION_OPSET, c->output);
  }
  g_free (wopts.extension_ops);
  bin = g_str_has_suffix (c->output, ".xml")
      ? g_strdup_printf ("%.*s.bin", (int) strlen (c->output) - 4, c->output)
      : g_strdup_printf ("%s.bin", c->output);
  printf ("wrote %s and %s (%" G_GINT64_FORMAT " bytes of weights)\n",
      c->output, bin, g_stat (bin, &st) == 0 ? (gint64) st.st_size : (gint64) -1);
  return TRUE;
}

int
main (int argc, char **argv)
{
  ConvertOptions c = { 0 };
  const GOptionEntry entries[] = {
    { "output", 'o', 0, G_OPTION_ARG_FILENAME, &c.output,
      "Write OUT.xml and OUT.bin (OpenVINO IR v11); required", "OUT.xml" },
    { "compress-to-fp16", 0, 0, G_OPTION_ARG_NONE, &c.compress_to_fp16,
      "Store f32 weights as f16 followed by a Convert", NULL },
    { "mean-values", 0, 0, G_OPTION_ARG_STRING_ARRAY, &c.mean_values,
      "Subtract per-channel means from input NAME (repeatable)",
      "NAME=v,v,v" },
    { "scale-values", 0, 0, G_OPTION_ARG_STRING_ARRAY, &c.scale_values,
      "Divide input NAME by per-channel scales, after the mean (repeatable)",
      "NAME=v,v,v" },
    { "reverse-channels", 0, 0, G_OPTION_ARG_STRING_ARRAY, &c.reverse_channels,
      "Reverse the 3 channels of input NAME (RGB<->BGR), before mean and scale "
      "(repeatable)", "NAME" },
    { "dump-graph", 0, 0, G_OPTION_ARG_FILENAME, &c.dump_graph,
      "Write the graph as Graphviz DIR/NN-<pass>.dot before and after each "
      "pass", "DIR" },
    G_OPTION_ENTRY_NULL
  };
  ToolOptions opts;
  g_autoptr (GError) err = NULL;
  int ret;

  setlocale (LC_ALL, "");
  setlocale (LC_NUMERIC, "C");
  g_set_prgname (TOOL_NAME);
  tool_options_init (&opts, TOOL_NAME);
  if (!tool_options_parse (&opts, "Converts MODEL (.onnx or OpenVINO .xml) to "
          "OpenVINO IR v11, running the\ncompile passes that do not depend on "
          "a device (see --list-passes).", entries, &argc, &argv, &err))
    goto out;
  if (opts.version) {
    printf ("%s %s\n", TOOL_NAME, CLINFER_VERSION);
    goto out;
  }
  if (opts.list_devices) {
    tool_print_devices ();
    goto out;
  }
  if (c.output == NULL)
    g_set_error (&err, TOOL_ERROR, TOOL_ERROR_USAGE,
        "--output OUT.xml is required (see --help)");
  else
    convert (&opts, &c, &err);

out:
  ret = tool_fail (TOOL_NAME, err);
  convert_options_clear (&c);
  tool_options_clear (&opts);
  return ret;
}
