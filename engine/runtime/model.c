/* clinfer — ClinferModel: reading model files and describing their ports. */
#include "runtime/runtime.h"
#include "devices/device.h"
#include "frontend/onnx/onnx-reader.h"
#include "frontend/ir/ir-reader.h"
#include <string.h>

ClinferModel *
clinfer_model_read (const char *path, GError **error)
{
  return clinfer_model_read_with_config (path, NULL, error);
}

/* The config's extensions: its custom ops and the layers of its config
 * file. NULL (no error) when @config is NULL. */
static gboolean
config_ops (const ClinferCompileConfig *config, ClinferOpSet **ops,
    GError **error)
{
  *ops = NULL;
  if (config == NULL)
    return TRUE;
  *ops = clinfer_op_set_copy (config->custom_ops);
  if (config->config_file
      && !clinfer_device_add_config_file_ops (config->config_file, *ops, error)) {
    g_clear_pointer (ops, clinfer_op_set_unref);
    return FALSE;
  }
  return TRUE;
}

/* (transfer full of @graph) Resolves @graph's ops and wraps it. */
static ClinferModel *
model_new (ClinferGraph *graph, const char *path, ClinferOpSet *ops,
    const ClinferCompileConfig *config, GError **error)
{
  ClinferModel *model;

  if (!clinfer_graph_resolve_ops_with (graph, ops, error)) {
    clinfer_graph_free (graph);
    clinfer_op_set_unref (ops);
    return NULL;
  }
  model = g_new0 (ClinferModel, 1);
  model->ref_count = 1;
  model->path = g_strdup (path);
  model->graph = graph;
  if (ops && clinfer_op_set_get_size (ops) > 0)
    model->ops = g_steal_pointer (&ops);
  clinfer_op_set_unref (ops);
  if (model->ops && config && config->config_file)
    model->config_file = g_strdup (config->config_file);
  return model;
}

ClinferModel *
clinfer_model_read_with_config (const char *path,
    const ClinferCompileConfig *config, GError **error)
{
  ClinferGraph *graph;
  ClinferOpSet *ops;

  g_return_val_if_fail (path != NULL, NULL);
  if (!config_ops (config, &ops, error))
    return NULL;
  /* OpenVINO IR: model.xml with model.bin beside it. */
  if (g_str_has_suffix (path, ".xml") || g_str_has_suffix (path, ".XML"))
    graph = clinfer_ir_read (path, NULL, error);
  else
    graph = clinfer_onnx_read (path, error);
  if (graph == NULL) {
    clinfer_op_set_unref (ops);
    return NULL;
  }
  return model_new (graph, path, ops, config, error);
}

ClinferModel *
clinfer_model_read_from_data (const guint8 *data, gsize size,
    const guint8 *weights, gsize weights_size, const char *name,
    const ClinferCompileConfig *config, GError **error)
{
  ClinferGraph *graph;
  ClinferOpSet *ops;
  gsize i = 0;

  g_return_val_if_fail (data != NULL || size == 0, NULL);
  if (name == NULL)
    name = "model";
  if (!config_ops (config, &ops, error))
    return NULL;
  /* IR is XML text (optionally after a BOM or blanks); a serialized
   * ModelProto never starts with '<' (it would be field 7, wire type 4). */
  if (size >= 3 && data[0] == 0xef && data[1] == 0xbb && data[2] == 0xbf)
    i = 3;
  while (i < size && g_ascii_isspace (data[i]))
    i++;
  if (i < size && data[i] == '<') {
    g_autoptr (GBytes) bin = g_bytes_new (weights, weights ? weights_size : 0);
    graph = clinfer_ir_read_from_data ((const char *) data, size, bin, name,
        error);
  } else {
    graph = clinfer_onnx_read_from_data (data, size, name, NULL, error);
  }
  if (graph == NULL) {
    clinfer_op_set_unref (ops);
    return NULL;
  }
  return model_new (graph, name, ops, config, error);
}

ClinferModel *
clinfer_model_ref (ClinferModel *model)
{
  g_atomic_int_inc (&model->ref_count);
  return model;
}

void
clinfer_model_unref (ClinferModel *model)
{
  if (model == NULL || !g_atomic_int_dec_and_test (&model->ref_count))
    return;
  clinfer_graph_free (model->graph);
  clinfer_op_set_unref (model->ops);
  g_free (model->config_file);
  g_free (model->path);
  g_free (model);
}

const char *
clinfer_model_get_path (const ClinferModel *model)
{
  return model->path;
}

guint
clinfer_model_get_n_inputs (const ClinferModel *model)
{
  return model->graph->inputs->len;
}

guint
clinfer_model_get_n_outputs (const ClinferModel *model)
{
  return model->graph->outputs->len;
}

gboolean
clinfer_model_get_input (const ClinferModel *model, guint index,
    ClinferPortInfo *info)
{
  ClinferNode *n;

  if (index >= model->graph->inputs->len)
    return FALSE;
  n = g_ptr_array_index (model->graph->inputs, index);
  info->name = n->outputs[0].name;
  info->type = n->outputs[0].type;
  info->shape = n->outputs[0].shape;
  return TRUE;
}

gboolean
clinfer_model_get_output (const ClinferModel *model, guint index,
    ClinferPortInfo *info)
{
  const ClinferGraphOutput *o;
  const ClinferPortDesc *d;

  if (index >= model->graph->outputs->len)
    return FALSE;
  o = &g_array_index (model->graph->outputs, ClinferGraphOutput, index);
  d = o->ref.node ? &o->ref.node->outputs[o->ref.port] : NULL;
  info->name = o->name;
  info->type = d ? d->type : CLINFER_TYPE_UNDEFINED;
  info->shape = d ? d->shape : clinfer_shape_unknown ();
  return TRUE;
}

int
clinfer_model_find_input (const ClinferModel *model, const char *name)
{
  for (guint i = 0; i < model->graph->inputs->len; i++) {
    ClinferNode *n = g_ptr_array_index (model->graph->inputs, i);
    if (g_strcmp0 (n->outputs[0].name, name) == 0)
      return (int) i;
  }
  return -1;
}

const char *
clinfer_model_get_metadata (const ClinferModel *model, const char *key)
{
  return g_hash_table_lookup (model->graph->metadata, key);
}

gboolean
clinfer_model_reshape (ClinferModel *model, const char *name,
    const ClinferShape *shape, GError **error)
{
  int idx = clinfer_model_find_input (model, name);
  ClinferNode *n;
  ClinferShape *cur;

  if (idx < 0) {
    g_set_error (error, CLINFER_ERROR, CLINFER_ERROR_INVALID_ARGUMENT,
        "%s: the model has no input named '%s'", model->path, name);
    return FALSE;
  }
  n = g_ptr_array_index (model->graph->inputs, idx);
  cur = &n->outputs[0].shape;
  if (cur->rank >= 0) {
    gboolean ok = cur->rank == shape->rank;
    for (int i = 0; ok && i < cur->rank; i++)
      ok = cur->dims[i] < 0 || cur->dims[i] == shape->dims[i];
    if (!ok) {
      g_autofree char *want = clinfer_shape_to_string (cur);
      g_autofree char *got = clinfer_shape_to_string (shape);
      g_set_error (error, CLINFER_ERROR, CLINFER_ERROR_SHAPE_MISMATCH,
          "%s: input '%s' has shape %s, cannot reshape it to %s",
          model->path, name, want, got);
      return FALSE;
    }
  }
  *cur = *shape;
  return TRUE;
}
