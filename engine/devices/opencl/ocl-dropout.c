/* clinfer — OpenCL Dropout (kernels/binary.cl): a copy outside training
 * (ocl-layout.c), and opset 12+ training mode read at run time with the
 * masks of the seed attribute drawn on the host as the CPU device draws
 * them, so both devices drop the same elements. */
#include "devices/opencl/ocl-internal.h"
#include <string.h>

/* TRUE when training_mode may be true at run time: an input that is not a
 * constant false. */
static gboolean
may_train (const ClinferNode *node)
{
  const ClinferTensor *t = clinfer_ocl_const_input (node, 2);

  if (node->opset < 12 || node->n_inputs < 3 || node->inputs[2].node == NULL)
    return FALSE;
  return t == NULL || (clinfer_tensor_get_n_elements (t) > 0
      && clinfer_tensor_get_as_double (t, 0) != 0.0);
}

gboolean
clinfer_ocl_dropout_supports (const OclDevice *dev, const ClinferNode *node,
    const char **reason)
{
  ClinferElementType t = clinfer_ocl_in_type (node, 0);

  if (!may_train (node))
    return clinfer_ocl_copy_supports (dev, node, reason);
  if (clinfer_node_get_attr (node, "seed") == NULL) {
    /* The CPU device draws a new mask per run without a seed. */
    *reason = "training mode without a seed attribute";
    return FALSE;
  }
  if (!clinfer_ocl_float_type (t) || node->outputs[0].type != t
      || (node->n_inputs > 1 && node->inputs[1].node
          && clinfer_ocl_in_type (node, 1) != t)
      || clinfer_ocl_in_type (node, 2) != CLINFER_TYPE_BOOL) {
    *reason = "training mode needs f32 or f16 data and ratio, and a bool "
        "training_mode";
    return FALSE;
  }
  return TRUE;
}

/* The CPU device's draws (ops/activation.c): two MT19937 words per element
 * from GRand seeded with @seed, as the 53-bit integer numpy's
 * random_sample() divides by 2^53. */
static guint64 *
dropout_draws (int64_t seed, int64_t n)
{
  g_autoptr (GRand) rand = g_rand_new_with_seed ((guint32) seed);
  guint64 *k = g_try_new (guint64, MAX (n, 1));

  for (int64_t i = 0; k && i < n; i++) {
    guint32 a = g_rand_int (rand) >> 5, b = g_rand_int (rand) >> 6;
    k[i] = (guint64) a * 67108864u + b;
  }
  return k;
}

gboolean
clinfer_ocl_dropout_build (OclBuilder *b, const ClinferNode *node,
    GError **error)
{
  ClinferElementType t = clinfer_ocl_in_type (node, 0);
  int64_t n = clinfer_shape_n_elements (&node->outputs[0].shape), seed = 0;
  gboolean has_ratio = node->n_inputs > 1 && node->inputs[1].node != NULL;
  g_autofree char *opts = NULL;
  g_autofree guint64 *draws = NULL;
  OclLaunch *l;

  if (!may_train (node))
    return clinfer_ocl_copy_build (b, node, error);
  if (!clinfer_node_attr_int (node, "seed", 0, &seed, error))
    return FALSE;
  if (!(draws = dropout_draws (seed, n))) {
    g_set_error (error, CLINFER_ERROR, CLINFER_ERROR_DEVICE,
        "%s: no memory for the dropout mask of %" G_GINT64_FORMAT " elements",
        clinfer_node_label (node), n);
    return FALSE;
  }
  opts = g_strdup_printf ("-DA_T=%s -DC_T=float -DY_T=%s -DC_FLOAT%s",
      clinfer_ocl_c_type (t), clinfer_ocl_c_type (t),
      t == CLINFER_TYPE_F16 ? " -DA_HALF -DY_HALF" : "");
  if (!(l = clinfer_ocl_launch_new (b, "binary", opts, "dropout_train", error)))
    return FALSE;
  clinfer_ocl_arg_input (l, 0);
  clinfer_ocl_arg_input (l, has_ratio ? 1 : 0);
  clinfer_ocl_arg_input (l, 2);
  if (!clinfer_ocl_arg_data (b, l, draws, sizeof (guint64) * MAX (n, 1),
          error))
    return FALSE;
  clinfer_ocl_arg_output (l, 0);
  /* Without the mask output the kernel never writes it. */
  clinfer_ocl_arg_output (l, node->n_outputs > 1 ? 1 : 0);
  clinfer_ocl_arg_int (l, (int) n);
  clinfer_ocl_arg_int (l, has_ratio);
  clinfer_ocl_arg_int (l, node->n_outputs > 1);
  clinfer_ocl_launch_set_global (l, 1, n, 1, 1);
  return TRUE;
}
