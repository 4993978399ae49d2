/* clinfer — op defs for custom OpenCL layers whose op the engine does not
 * know: with them a model using the op can be read (with the config) and
 * planned; the OpenCL device then runs the layer's kernel for the node.
 * Shape inference: the layer's <OutputShape> rules (a clinfer extension),
 * else each output takes input 0's shape and type. There is no CPU eval:
 * such a node runs only on an OpenCL device. */
#include "devices/opencl/ocl-custom.h"
#include "ops/custom-ops.h"
#include <string.h>

typedef struct {
  gint ref;
  OclCustomLayers *layers;
} LayerFile;

typedef struct {
  ClinferOpDef def;          /* first: node->def points here */
  LayerFile *file;
  const OclCustomLayer *layer;
  char *note;                /* def.note: "custom OpenCL layer from <file>" */
} LayerOp;

static void
layer_file_unref (LayerFile *f)
{
  if (!g_atomic_int_dec_and_test (&f->ref))
    return;
  clinfer_ocl_custom_free (f->layers);
  g_free (f);
}

static void
layer_op_free (gpointer p)
{
  LayerOp *op = p;

  layer_file_unref (op->file);
  g_free (op->note);
  g_free (op);
}

static gboolean
layer_infer (const ClinferNode *node, const ClinferValueInfo *in,
    ClinferValueInfo *out, GError **error)
{
  const LayerOp *op = (const LayerOp *) node->def;
  guint n = MAX (node->n_inputs, 1);
  g_autofree ClinferElementType *types = g_new0 (ClinferElementType, n);
  g_autofree ClinferShape *shapes = g_new0 (ClinferShape, n);
  g_autofree gboolean *present = g_new0 (gboolean, n);

  for (guint i = 0; i < node->n_inputs; i++) {
    types[i] = in[i].type;
    shapes[i] = in[i].shape;
    present[i] = in[i].present;
  }
  for (guint i = 0; i < node->n_outputs; i++)
    if (!clinfer_ocl_custom_output_shape (op->layer, i, types, shapes, present,
            node->n_inputs, &out[i].type, &out[i].shape, error)) {
      g_prefix_error (error, "node %s: ", clinfer_node_label (node));
      return FALSE;
    }
  return TRUE;
}

gboolean
clinfer_ocl_custom_add_ops (const char *config_file, ClinferOpSet *set,
    GError **error)
{
  LayerFile *f;
  GHashTableIter it;
  gpointer k, v;

  f = g_new0 (LayerFile, 1);
  f->ref = 1;
  f->layers = clinfer_ocl_custom_load (config_file, error);
  if (f->layers == NULL) {
    g_free (f);
    return FALSE;
  }
  g_hash_table_iter_init (&it, f->layers->layers);
  while (g_hash_table_iter_next (&it, &k, &v)) {
    const OclCustomLayer *layer = v;
    LayerOp *op;
    /* A layer named like a built-in op overrides only its kernel: shape
     * inference stays the built-in op's. */
    if (clinfer_op_is_known ("", layer->name))
      continue;
    op = g_new0 (LayerOp, 1);
    op->file = f;
    g_atomic_int_inc (&f->ref);
    op->layer = layer;
    op->def.op_type = layer->name;
    op->def.domain = "*";      /* matched by op type in any domain */
    op->def.min_inputs = 0;
    op->def.max_inputs = CLINFER_VARIADIC;
    op->def.min_outputs = 1;
    op->def.max_outputs = CLINFER_VARIADIC;
    op->def.flags = CLINFER_OP_NO_FOLD;
    op->def.infer = layer_infer;
    op->note = g_strdup_printf ("custom OpenCL layer from %s", config_file);
    op->def.note = op->note;
    clinfer_op_set_add_def (set, &op->def, op, layer_op_free);
  }
  layer_file_unref (f);
  return TRUE;
}
