/* clinfer — steps built at run time: a dynamic step (output shapes known
 * only from the values of its inputs, e.g. Reshape or Resize fed by graph
 * inputs) is built by the same op factories from a copy of its node that
 * carries the actual input shapes and the values of its small parameter
 * inputs, with the output shapes inferred from them. */
#include "devices/opencl/ocl-internal.h"
#include <string.h>

struct _OclLateNode {
  ClinferNode node;          /* shallow copy: attrs, op_data, def shared */
  ClinferPortRef *inputs;
  ClinferNode *producers;    /* one stub per input with one output */
  ClinferPortDesc *in_descs;
  ClinferPortDesc *outputs;
};

gboolean
clinfer_ocl_input_known (const ClinferNode *node, guint port)
{
  if (clinfer_ocl_const_input (node, port))
    return TRUE;
  /* Dynamic steps are built when they run, from the actual values. */
  for (guint i = 0; i < node->n_outputs; i++)
    if (!clinfer_shape_is_static (&node->outputs[i].shape))
      return TRUE;
  return FALSE;
}

OclLateNode *
clinfer_ocl_late_node_new (const ClinferNode *node, const ClinferValueInfo *in,
    GError **error)
{
  OclLateNode *l = g_new0 (OclLateNode, 1);
  guint ni = node->n_inputs, no = node->n_outputs;
  g_autofree ClinferValueInfo *out = g_new0 (ClinferValueInfo, MAX (no, 1));

  for (guint j = 0; j < no; j++)
    out[j].shape = clinfer_shape_unknown ();
  if (!clinfer_node_infer_checked (node, in, out, error)) {
    g_free (l);
    return NULL;
  }
  /* The label is cached on first use: fill it in the original so the
   * copy shares it and never allocates one of its own. */
  (void) clinfer_node_label (node);
  l->node = *node;
  l->inputs = g_new0 (ClinferPortRef, MAX (ni, 1));
  l->producers = g_new0 (ClinferNode, MAX (ni, 1));
  l->in_descs = g_new0 (ClinferPortDesc, MAX (ni, 1));
  l->outputs = g_new0 (ClinferPortDesc, MAX (no, 1));
  for (guint j = 0; j < ni; j++) {
    const ClinferPortDesc *d = clinfer_node_input_desc (node, j);
    if (d == NULL || !in[j].present)
      continue;
    l->in_descs[j] = *d;
    l->in_descs[j].type = in[j].type;
    l->in_descs[j].shape = in[j].shape;
    l->in_descs[j].value = (ClinferTensor *) in[j].value;
    l->producers[j] = *node->inputs[j].node;
    l->producers[j].n_outputs = 1;
    l->producers[j].outputs = &l->in_descs[j];
    l->inputs[j].node = &l->producers[j];
    l->inputs[j].port = 0;
  }
  for (guint j = 0; j < no; j++) {
    l->outputs[j] = node->outputs[j];
    l->outputs[j].type = out[j].type;
    l->outputs[j].shape = out[j].shape;
    l->outputs[j].value = NULL;
  }
  l->node.inputs = l->inputs;
  l->node.outputs = l->outputs;
  return l;
}

const ClinferNode *
clinfer_ocl_late_node_get (const OclLateNode *l)
{
  return &l->node;
}

void
clinfer_ocl_late_node_free (OclLateNode *l)
{
  if (l == NULL)
    return;
  g_free (l->inputs);
  g_free (l->producers);
  g_free (l->in_descs);
  g_free (l->outputs);
  g_free (l);
}
