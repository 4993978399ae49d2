/* clinfer — OpenCL MaxPool, AveragePool, GlobalMaxPool and
 * GlobalAveragePool (kernels/pool.cl), NCHW with 1 to 3 spatial dims;
 * f32/f16, every pool on f64, and MaxPool on i8 and u8 too. */
#include "devices/opencl/ocl-internal.h"
#include "ops/conv.h"
#include <string.h>

static gboolean
pool_input_ok (const ClinferNode *node, const char **reason)
{
  ClinferPortDesc *x = clinfer_node_input_desc (node, 0);

  if (!clinfer_ocl_float_type (clinfer_ocl_in_type (node, 0))) {
    *reason = "element type is not f32 or f16";
    return FALSE;
  }
  if (x == NULL || x->shape.rank < 3 || x->shape.rank > 2 + CLINFER_MAX_SPATIAL) {
    *reason = "1 to 3 spatial dims expected";
    return FALSE;
  }
  return TRUE;
}

/* Options of the typed pools (kernels/pool.cl pool_max_typed,
 * pool_global_typed) for @node: MaxPool on i8 and u8, every pool on f64,
 * as the CPU device; NULL otherwise. */
static const char *
typed_options (const ClinferNode *node)
{
  switch (clinfer_ocl_in_type (node, 0)) {
    case CLINFER_TYPE_I8:
      return strcmp (node->op_type, "MaxPool") == 0
          ? "-DPOOL_T=char -DPOOL_LOWEST=CHAR_MIN" : NULL;
    case CLINFER_TYPE_U8:
      return strcmp (node->op_type, "MaxPool") == 0
          ? "-DPOOL_T=uchar -DPOOL_LOWEST=0" : NULL;
    case CLINFER_TYPE_F64:
      return "-DPOOL_T=double -DPOOL_FLOAT -DPOOL_LOWEST=(-INFINITY) "
          "-DUSE_FP64";
    default: return NULL;
  }
}

/* pool_input_ok for the typed pools. */
static gboolean
typed_input_ok (const OclDevice *dev, const ClinferNode *node,
    const char **reason)
{
  ClinferPortDesc *x = clinfer_node_input_desc (node, 0);

  if (!clinfer_ocl_fp64_ok (dev, clinfer_ocl_in_type (node, 0), reason))
    return FALSE;
  if (x == NULL || x->shape.rank < 3
      || x->shape.rank > 2 + CLINFER_MAX_SPATIAL) {
    *reason = "1 to 3 spatial dims expected";
    return FALSE;
  }
  return TRUE;
}

gboolean
clinfer_ocl_pool_supports (const OclDevice *dev, const ClinferNode *node, const char **reason)
{
  if (node->n_outputs > 1 && node->outputs[1].type != CLINFER_TYPE_I64) {
    *reason = "Indices output of another type than i64";
    return FALSE;
  }
  if (typed_options (node))
    return typed_input_ok (dev, node, reason);
  return pool_input_ok (node, reason);
}

static void
to_dhw (const int64_t *v, int n, int fill, int out[3])
{
  for (int i = 0; i < 3; i++) {
    int j = i - (3 - n);
    out[i] = j >= 0 ? (int) v[j] : fill;
  }
}

/* MaxPool whose windows stay inside each row: 8 outputs per work-item. */
static gboolean
pool_max8 (OclBuilder *b, const ClinferNode *node, const int *in,
    const int *out, const int *k, const int *s, const int *d, const int *pb,
    GError **error)
{
  const ClinferShape *xs = clinfer_ocl_in_shape (b, 0);
  OclLaunch *l = clinfer_ocl_launch_new (b, "pool",
      clinfer_ocl_data_options (clinfer_ocl_in_type (node, 0)), "pool_max8",
      error);

  if (l == NULL)
    return FALSE;
  clinfer_ocl_arg_input (l, 0);
  clinfer_ocl_arg_output (l, 0);
  clinfer_ocl_arg_int (l, (int) xs->dims[1]);
  clinfer_ocl_arg_int4 (l, in[0], in[1], in[2], 0);
  clinfer_ocl_arg_int4 (l, out[0], out[1], out[2], 0);
  clinfer_ocl_arg_int4 (l, k[0], k[1], k[2], 0);
  clinfer_ocl_arg_int4 (l, s[0], s[1], s[2], 0);
  clinfer_ocl_arg_int4 (l, d[0], d[1], d[2], 0);
  clinfer_ocl_arg_int4 (l, pb[0], pb[1], pb[2], 0);
  clinfer_ocl_launch_set_global (l, 3, (size_t) out[1] * out[2] / 8,
      xs->dims[1], xs->dims[0]);
  clinfer_ocl_launch_tile0 (l, 16);
  return TRUE;
}

/* MaxPool on i8, u8 or f64, AveragePool on f64 (kernels/pool.cl
 * pool_max_typed); @p: in, out, k, s, d, pad begin, pad end. */
static gboolean
pool_typed (OclBuilder *b, const ClinferNode *node, int p[7][3], int mode,
    gboolean has_idx, gboolean col_major, GError **error)
{
  const ClinferShape *xs = clinfer_ocl_in_shape (b, 0);
  OclLaunch *l = clinfer_ocl_launch_new (b, "pool", typed_options (node),
      "pool_max_typed", error);

  if (l == NULL)
    return FALSE;
  clinfer_ocl_arg_input (l, 0);
  clinfer_ocl_arg_output (l, 0);
  clinfer_ocl_arg_output (l, has_idx ? 1 : 0);   /* unused without Indices */
  clinfer_ocl_arg_int (l, (int) xs->dims[1]);
  for (guint i = 0; i < 7; i++)
    clinfer_ocl_arg_int4 (l, p[i][0], p[i][1], p[i][2], 0);
  clinfer_ocl_arg_int (l, mode);
  clinfer_ocl_arg_int (l, has_idx);
  clinfer_ocl_arg_int (l, col_major);
  clinfer_ocl_launch_set_global (l, 3, (size_t) p[1][0] * p[1][1] * p[1][2],
      xs->dims[1], xs->dims[0]);
  return TRUE;
}

gboolean
clinfer_ocl_pool_build (OclBuilder *b, const ClinferNode *node, GError **error)
{
  const ClinferShape *xs = clinfer_ocl_in_shape (b, 0);
  gboolean is_max = strcmp (node->op_type, "MaxPool") == 0;
  int64_t include_pad = 0, order = 0;
  gboolean has_idx = node->n_outputs > 1;
  int in[3], out[3], k[3], s[3], d[3], pb[3], pe[3], mode;
  ClinferWindowAttrs attrs;
  ClinferWindow win;
  OclLaunch *l;

  if (!clinfer_window_attrs_parse (node, TRUE, &attrs, error)
      || !clinfer_window_resolve (node, &attrs, xs->rank - 2, xs->dims + 2,
          NULL, &win, error)
      || !clinfer_node_attr_int (node, "count_include_pad", 0, &include_pad,
          error)
      || !clinfer_node_attr_int (node, "storage_order", 0, &order, error))
    return FALSE;
  to_dhw (win.in, win.n, 1, in);
  to_dhw (win.out, win.n, 1, out);
  to_dhw (win.kernel, win.n, 1, k);
  to_dhw (win.stride, win.n, 1, s);
  to_dhw (win.dilation, win.n, 1, d);
  to_dhw (win.pad_begin, win.n, 0, pb);
  to_dhw (win.pad_end, win.n, 0, pe);
  mode = is_max ? 0 : include_pad ? 2 : 1;
  if (typed_options (node)) {
    int p[7][3];
    memcpy (p[0], in, sizeof (in));
    memcpy (p[1], out, sizeof (out));
    memcpy (p[2], k, sizeof (k));
    memcpy (p[3], s, sizeof (s));
    memcpy (p[4], d, sizeof (d));
    memcpy (p[5], pb, sizeof (pb));
    memcpy (p[6], pe, sizeof (pe));
    return pool_typed (b, node, p, mode, has_idx, order == 1, error);
  }
  /* 8 outputs per work-item suit CPU implementations; GPUs take one. */
  if (is_max && !has_idx && win.n == 2 && out[2] % 8 == 0 && pb[2] == 0
      && !b->dev->core->gpu_shaped
      && (out[2] - 1) * s[2] + (k[2] - 1) * d[2] < in[2])
    return pool_max8 (b, node, in, out, k, s, d, pb, error);
  l = clinfer_ocl_launch_new (b, "pool",
      clinfer_ocl_data_options (clinfer_ocl_in_type (node, 0)), "pool_window",
      error);
  if (l == NULL)
    return FALSE;
  clinfer_ocl_arg_input (l, 0);
  clinfer_ocl_arg_output (l, 0);
  clinfer_ocl_arg_output (l, has_idx ? 1 : 0);   /* unused without Indices */
  clinfer_ocl_arg_int (l, (int) xs->dims[1]);
  clinfer_ocl_arg_int4 (l, in[0], in[1], in[2], 0);
  clinfer_ocl_arg_int4 (l, out[0], out[1], out[2], 0);
  clinfer_ocl_arg_int4 (l, k[0], k[1], k[2], 0);
  clinfer_ocl_arg_int4 (l, s[0], s[1], s[2], 0);
  clinfer_ocl_arg_int4 (l, d[0], d[1], d[2], 0);
  clinfer_ocl_arg_int4 (l, pb[0], pb[1], pb[2], 0);
  clinfer_ocl_arg_int4 (l, pe[0], pe[1], pe[2], 0);
  clinfer_ocl_arg_int (l, mode);
  clinfer_ocl_arg_int (l, has_idx);
  clinfer_ocl_arg_int (l, order == 1);
  clinfer_ocl_launch_set_global (l, 3, (size_t) out[0] * out[1] * out[2],
      xs->dims[1], xs->dims[0]);
  return TRUE;
}

gboolean
clinfer_ocl_global_pool_supports (const OclDevice *dev, const ClinferNode *node, const char **reason)
{
  if (typed_options (node))
    return typed_input_ok (dev, node, reason);
  return pool_input_ok (node, reason);
}

gboolean
clinfer_ocl_global_pool_build (OclBuilder *b, const ClinferNode *node,
    GError **error)
{
  const ClinferShape *xs = clinfer_ocl_in_shape (b, 0);
  int64_t plane = 1;
  const char *typed;
  OclLaunch *l;

  for (int i = 2; i < xs->rank; i++)
    plane *= xs->dims[i];
  typed = typed_options (node);
  l = clinfer_ocl_launch_new (b, "pool", typed ? typed
      : clinfer_ocl_data_options (clinfer_ocl_in_type (node, 0)),
      typed ? "pool_global_typed" : "pool_global", error);
  if (l == NULL)
    return FALSE;
  clinfer_ocl_arg_input (l, 0);
  clinfer_ocl_arg_output (l, 0);
  clinfer_ocl_arg_int (l, (int) plane);
  clinfer_ocl_arg_int (l, strcmp (node->op_type, "GlobalMaxPool") == 0 ? 0 : 1);
  clinfer_ocl_launch_set_global (l, 1, xs->dims[0] * xs->dims[1], 1, 1);
  return TRUE;
}
