/* clinfer — graph sources: Parameter (graph input) and Constant. Their
 * values come from the request or the node itself; they have no eval. */
#include "ops/op.h"

static gboolean
infer_source (const ClinferNode *node, const ClinferValueInfo *in,
    ClinferValueInfo *out, GError **error)
{
  /* Type and shape are set on the port when the node is created. */
  out[0].type = node->outputs[0].type;
  out[0].shape = node->outputs[0].shape;
  return TRUE;
}

static gboolean
prepare_constant (ClinferNode *node, GError **error)
{
  const ClinferAttr *a = clinfer_node_get_attr (node, "value");

  if (a == NULL || a->type != CLINFER_ATTR_TENSOR) {
    g_set_error (error, CLINFER_ERROR, CLINFER_ERROR_INVALID_ARGUMENT,
        "%s: a Constant needs a tensor attribute 'value'",
        clinfer_node_label (node));
    return FALSE;
  }
  if (node->outputs[0].value == NULL)
    node->outputs[0].value = clinfer_tensor_ref (a->t);
  node->outputs[0].type = clinfer_tensor_get_element_type (a->t);
  node->outputs[0].shape = *clinfer_tensor_get_shape (a->t);
  return TRUE;
}

const ClinferOpDef clinfer_ops_source[] = {
  { "Parameter", "", 1, 0, 0, 0, 1, 1, CLINFER_OP_SOURCE,
    NULL, NULL, infer_source, NULL },
  { "Constant", "", 1, 0, 0, 0, 1, 1, CLINFER_OP_SOURCE,
    prepare_constant, NULL, infer_source, NULL },
  { NULL }
};
