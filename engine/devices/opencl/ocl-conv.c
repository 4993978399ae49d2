/* clinfer — OpenCL Conv and FusedConv (kernels/conv.cl): geometry from
 * the op's parsed attributes (engine/ops/conv.h), then the 1x1, depthwise
 * or generic direct kernel, each with the bias + residual + activation
 * epilogue. */
#include "devices/opencl/ocl-internal.h"
#include "ops/conv.h"

gboolean
clinfer_ocl_conv_supports (const OclDevice *dev, const ClinferNode *node, const char **reason)
{
  ClinferElementType t = clinfer_ocl_in_type (node, 0);
  ClinferPortDesc *x = clinfer_node_input_desc (node, 0);
  ClinferPortDesc *w = clinfer_node_input_desc (node, 1);

  if (!clinfer_ocl_float_type (t)) {
    *reason = "element type is not f32 or f16";
    return FALSE;
  }
  for (guint i = 1; i < node->n_inputs; i++)
    if (node->inputs[i].node && clinfer_ocl_in_type (node, i) != t) {
      *reason = "inputs of mixed element types";
      return FALSE;
    }
  if (x == NULL || w == NULL || x->shape.rank < 3
      || x->shape.rank > 2 + CLINFER_MAX_SPATIAL
      || w->shape.rank != x->shape.rank) {
    *reason = "1 to 3 spatial dims expected";
    return FALSE;
  }
  return TRUE;
}

/* Pads @v (n spatial values) to (D, H, W) with @fill in front. */
static void
to_dhw (const int64_t *v, int n, int fill, int out[3])
{
  for (int i = 0; i < 3; i++) {
    int j = i - (3 - n);
    out[i] = j >= 0 ? (int) v[j] : fill;
  }
}

typedef struct {
  int in[3], out[3], k[3], s[3], d[3], p[3];
  int batch, cin, cout, group;
} ConvGeom;

static gboolean
conv_geom (const ClinferNode *node, ConvGeom *g, GError **error)
{
  const ClinferShape *xs = &clinfer_node_input_desc (node, 0)->shape;
  const ClinferShape *ws = &clinfer_node_input_desc (node, 1)->shape;
  const ClinferConvParams *p = node->op_data;
  ClinferWindow win;

  if (!clinfer_conv_window (node, xs, ws, &win, error))
    return FALSE;
  to_dhw (win.in, win.n, 1, g->in);
  to_dhw (win.out, win.n, 1, g->out);
  to_dhw (win.kernel, win.n, 1, g->k);
  to_dhw (win.stride, win.n, 1, g->s);
  to_dhw (win.dilation, win.n, 1, g->d);
  to_dhw (win.pad_begin, win.n, 0, g->p);
  g->batch = (int) xs->dims[0];
  g->cin = (int) xs->dims[1];
  g->cout = (int) ws->dims[0];
  g->group = (int) p->group;
  return TRUE;
}

static void
epilogue_args (OclLaunch *l, const ClinferNode *node)
{
  const ClinferConvParams *p = node->op_data;
  gboolean has_b = node->n_inputs > 2 && node->inputs[2].node != NULL;
  gboolean has_z = node->n_inputs > 3 && node->inputs[3].node != NULL;
  int act = p->act == CLINFER_ACT_RELU ? 1 : p->act == CLINFER_ACT_CLIP ? 2
      : p->act == CLINFER_ACT_LEAKY_RELU ? 3 : 0;

  clinfer_ocl_arg_int (l, has_b);
  clinfer_ocl_arg_int (l, has_z);
  clinfer_ocl_arg_int (l, act);
  clinfer_ocl_arg_float (l, p->act == CLINFER_ACT_CLIP ? p->act_min : p->act_alpha);
  clinfer_ocl_arg_float (l, p->act_max);
}

static void
tensor_args (OclLaunch *l)
{
  clinfer_ocl_arg_input (l, 0);
  clinfer_ocl_arg_input (l, 1);
  clinfer_ocl_arg_input (l, 2);
  clinfer_ocl_arg_input (l, 3);
  clinfer_ocl_arg_output (l, 0);
}

static void
geometry_args (OclLaunch *l, const ConvGeom *g)
{
  clinfer_ocl_arg_int4 (l, g->in[0], g->in[1], g->in[2], 0);
  clinfer_ocl_arg_int4 (l, g->out[0], g->out[1], g->out[2], 0);
  clinfer_ocl_arg_int4 (l, g->k[0], g->k[1], g->k[2], 0);
  clinfer_ocl_arg_int4 (l, g->s[0], g->s[1], g->s[2], 0);
  clinfer_ocl_arg_int4 (l, g->d[0], g->d[1], g->d[2], 0);
  clinfer_ocl_arg_int4 (l, g->p[0], g->p[1], g->p[2], 0);
}

static gboolean
is_1x1 (const ConvGeom *g)
{
  for (int i = 0; i < 3; i++)
    if (g->k[i] != 1 || g->s[i] != 1 || g->p[i] != 0)
      return FALSE;
  return g->group == 1;
}

/* GPU shapes (OclCore.gpu_shaped): one output (or 4 output channels) per
 * work-item, consecutive work-items on consecutive pixels, work-groups of
 * 64 or more; 1x1 convs as a GEMM with 16x16 tiles in local memory. */
static gboolean
conv_build_gpu (OclBuilder *b, const ClinferNode *node, const ConvGeom *g,
    GError **error)
{
  const char *opts = clinfer_ocl_data_options (clinfer_ocl_in_type (node, 0));
  int out_sp = g->out[0] * g->out[1] * g->out[2];
  int cin_g = g->cin / MAX (g->group, 1), cout_g = g->cout / MAX (g->group, 1);
  gboolean depthwise = g->group == g->cin && g->group == g->cout
      && g->in[0] == 1 && g->k[0] == 1;
  gboolean by4 = !depthwise && cout_g % 4 == 0;
  OclLaunch *l;

  if (is_1x1 (g) && clinfer_ocl_core_can_tile16 (b->dev->core)) {
    if (!(l = clinfer_ocl_launch_new (b, "conv", opts, "conv_1x1_tiled",
                error)))
      return FALSE;
    tensor_args (l);
    clinfer_ocl_arg_int (l, g->cin);
    clinfer_ocl_arg_int (l, g->cout);
    clinfer_ocl_arg_int (l, out_sp);
    epilogue_args (l, node);
    clinfer_ocl_launch_tiles16 (l, out_sp, g->cout, g->batch);
    return TRUE;
  }
  if (!(l = clinfer_ocl_launch_new (b, "conv", opts, depthwise
              ? "conv_depthwise" : by4 ? "conv_direct4" : "conv_direct", error)))
    return FALSE;
  tensor_args (l);
  if (depthwise)
    clinfer_ocl_arg_int (l, g->cout);
  else {
    clinfer_ocl_arg_int (l, cin_g);
    clinfer_ocl_arg_int (l, g->cout);
    clinfer_ocl_arg_int (l, cout_g);
  }
  geometry_args (l, g);
  epilogue_args (l, node);
  clinfer_ocl_launch_set_global (l, 3, out_sp, by4 ? g->cout / 4 : g->cout,
      g->batch);
  clinfer_ocl_launch_tile0 (l, 64);
  return TRUE;
}

gboolean
clinfer_ocl_conv_build (OclBuilder *b, const ClinferNode *node, GError **error)
{
  const char *opts = clinfer_ocl_data_options (clinfer_ocl_in_type (node, 0));
  int out_sp, cin_g, cout_g;
  OclLaunch *l;
  ConvGeom g;

  if (!conv_geom (node, &g, error))
    return FALSE;
  if (b->dev->core->gpu_shaped)
    return conv_build_gpu (b, node, &g, error);
  out_sp = g.out[0] * g.out[1] * g.out[2];
  cin_g = g.cin / MAX (g.group, 1);
  cout_g = g.cout / MAX (g.group, 1);
  if (is_1x1 (&g)) {
    int vec = out_sp % 16 == 0 ? 16 : out_sp % 8 == 0 && g.cout % 4 == 0 ? 8
        : out_sp % 4 == 0 ? 4 : 1;
    if (!(l = clinfer_ocl_launch_new (b, "conv", opts, vec == 16
                ? "conv_1x1_vec16" : vec == 8 ? "conv_1x1_vec8" : vec == 4
                ? "conv_1x1_vec4" : "conv_1x1", error)))
      return FALSE;
    tensor_args (l);
    clinfer_ocl_arg_int (l, g.cin);
    clinfer_ocl_arg_int (l, g.cout);
    clinfer_ocl_arg_int (l, out_sp);
    epilogue_args (l, node);
    clinfer_ocl_launch_set_global (l, 3, out_sp / vec, (g.cout + 3) / 4,
        g.batch);
    clinfer_ocl_launch_tile0 (l, vec > 1 ? 16 : 64);
  } else if (g.group == g.cin && g.group == g.cout && g.in[0] == 1
      && g.k[0] == 1) {
    int vec = g.out[2] % 16 == 0 ? 16 : g.out[2] % 8 == 0 ? 8
        : g.out[2] % 4 == 0 ? 4 : 1;
    /* Two output rows per work-item where they share input rows. */
    gboolean rows2 = vec == 16 && out_sp > 0 && g.s[1] == 1 && g.d[1] == 1;
    if (!(l = clinfer_ocl_launch_new (b, "conv", opts, rows2
                ? "conv_depthwise16x2" : vec == 16 ? "conv_depthwise16"
                : vec == 8 ? "conv_depthwise8" : vec == 4 ? "conv_depthwise4"
                : "conv_depthwise", error)))
      return FALSE;
    tensor_args (l);
    clinfer_ocl_arg_int (l, g.cout);
    geometry_args (l, &g);
    epilogue_args (l, node);
    if (rows2) {
      /* Work-groups of up to 16 tiles x row pairs, one channel each. */
      size_t tiles = g.out[2] / 16, pairs = (g.out[1] + 1) / 2;
      size_t l0 = MIN (tiles, 16), l1 = MIN (pairs, MAX (16 / l0, 1));
      clinfer_ocl_launch_set_global (l, 3, (tiles + l0 - 1) / l0 * l0,
          (pairs + l1 - 1) / l1 * l1, (size_t) g.cout * g.batch);
      clinfer_ocl_launch_set_local (l, l0, l1, 1);
    } else {
      clinfer_ocl_launch_set_global (l, 3, out_sp / vec, g.cout, g.batch);
      clinfer_ocl_launch_tile0 (l, vec > 1 ? 16 : 64);
    }
  } else if (cout_g % 4 == 0 && g.in[0] == 1 && g.k[0] == 1
      && g.out[2] % 8 == 0) {
    int oc_vec = cout_g % 8 == 0 ? 8 : 4;
    if (!(l = clinfer_ocl_launch_new (b, "conv", opts, oc_vec == 8
                ? "conv_direct8x8" : "conv_direct4x8", error)))
      return FALSE;
    tensor_args (l);
    clinfer_ocl_arg_int (l, cin_g);
    clinfer_ocl_arg_int (l, g.cout);
    clinfer_ocl_arg_int (l, cout_g);
    geometry_args (l, &g);
    epilogue_args (l, node);
    clinfer_ocl_launch_set_global (l, 3, out_sp / 8, g.cout / oc_vec,
        g.batch);
    clinfer_ocl_launch_tile0 (l, 16);
  } else {
    gboolean by4 = cout_g % 4 == 0;
    if (!(l = clinfer_ocl_launch_new (b, "conv", opts,
                by4 ? "conv_direct4" : "conv_direct", error)))
      return FALSE;
    tensor_args (l);
    clinfer_ocl_arg_int (l, cin_g);
    clinfer_ocl_arg_int (l, g.cout);
    clinfer_ocl_arg_int (l, cout_g);
    geometry_args (l, &g);
    epilogue_args (l, node);
    clinfer_ocl_launch_set_global (l, 3, out_sp, by4 ? g.cout / 4 : g.cout,
        g.batch);
    clinfer_ocl_launch_tile0 (l, 64);
  }
  return TRUE;
}

/* ---- ConvTranspose ---- */

gboolean
clinfer_ocl_conv_transpose_supports (const OclDevice *dev,
    const ClinferNode *node, const char **reason)
{
  return clinfer_ocl_conv_supports (dev, node, reason);
}

/* Begin pads: from output_shape / auto_pad (split of the total padding
 * as ONNX says) or the pads attribute. */
static gboolean
transpose_pads (const ClinferNode *node, int n, const int64_t *in,
    const int64_t *out, const int64_t *k, const int64_t *s, const int64_t *d,
    int64_t *pb, GError **error)
{
  const int64_t *pads = NULL, *opad = NULL, *oshape = NULL;
  gsize np = 0, nop = 0, nos = 0;
  const char *auto_pad = "NOTSET";

  if (!clinfer_node_attr_ints (node, "pads", &pads, &np, error)
      || !clinfer_node_attr_ints (node, "output_padding", &opad, &nop, error)
      || !clinfer_node_attr_ints (node, "output_shape", &oshape, &nos, error)
      || !clinfer_node_attr_string (node, "auto_pad", "NOTSET", &auto_pad,
          error))
    return FALSE;
  for (int i = 0; i < n; i++) {
    int64_t total = s[i] * (in[i] - 1) + (nop ? opad[i] : 0)
        + (k[i] - 1) * d[i] + 1 - out[i];
    /* A negative total (output_shape beyond the full extent) pads the
     * end, as the reference eval: floor division. */
    int64_t half = total >= 0 ? total / 2 : -((-total + 1) / 2);
    if (nos || g_str_has_prefix (auto_pad, "SAME"))
      pb[i] = g_strcmp0 (auto_pad, "SAME_UPPER") == 0 ? half : total - half;
    else
      pb[i] = np ? pads[i] : 0;
  }
  return TRUE;
}

gboolean
clinfer_ocl_conv_transpose_build (OclBuilder *b, const ClinferNode *node,
    GError **error)
{
  const ClinferShape *xs = clinfer_ocl_in_shape (b, 0);
  const ClinferShape *ws = clinfer_ocl_in_shape (b, 1);
  const ClinferShape *ys = &node->outputs[0].shape;
  int n = xs->rank - 2, in[3], out[3], k[3], st[3], dl[3], pd[3];
  int64_t kk[3], ss[3], dd[3], pb[3], group = 1;
  const int64_t *a;
  gsize na;
  OclLaunch *l;

  if (!clinfer_node_attr_int (node, "group", 1, &group, error))
    return FALSE;
  for (int i = 0; i < n; i++) {
    kk[i] = ws->dims[2 + i];
    ss[i] = dd[i] = 1;
  }
  if (!clinfer_node_attr_ints (node, "strides", &a, &na, error))
    return FALSE;
  for (gsize i = 0; i < na && (int) i < n; i++)
    ss[i] = a[i];
  if (!clinfer_node_attr_ints (node, "dilations", &a, &na, error))
    return FALSE;
  for (gsize i = 0; i < na && (int) i < n; i++)
    dd[i] = a[i];
  if (!transpose_pads (node, n, xs->dims + 2, ys->dims + 2, kk, ss, dd, pb,
          error))
    return FALSE;
  to_dhw (xs->dims + 2, n, 1, in);
  to_dhw (ys->dims + 2, n, 1, out);
  to_dhw (kk, n, 1, k);
  to_dhw (ss, n, 1, st);
  to_dhw (dd, n, 1, dl);
  to_dhw (pb, n, 0, pd);
  l = clinfer_ocl_launch_new (b, "conv",
      clinfer_ocl_data_options (clinfer_ocl_in_type (node, 0)),
      "conv_transpose", error);
  if (l == NULL)
    return FALSE;
  clinfer_ocl_arg_input (l, 0);
  clinfer_ocl_arg_input (l, 1);
  clinfer_ocl_arg_input (l, 2);
  clinfer_ocl_arg_output (l, 0);
  clinfer_ocl_arg_int (l, (int) (xs->dims[1] / group));
  clinfer_ocl_arg_int (l, (int) ys->dims[1]);
  clinfer_ocl_arg_int (l, (int) ws->dims[1]);
  clinfer_ocl_arg_int4 (l, in[0], in[1], in[2], 0);
  clinfer_ocl_arg_int4 (l, out[0], out[1], out[2], 0);
  clinfer_ocl_arg_int4 (l, k[0], k[1], k[2], 0);
  clinfer_ocl_arg_int4 (l, st[0], st[1], st[2], 0);
  clinfer_ocl_arg_int4 (l, dl[0], dl[1], dl[2], 0);
  clinfer_ocl_arg_int4 (l, pd[0], pd[1], pd[2], 0);
  clinfer_ocl_arg_int (l, node->n_inputs > 2 && node->inputs[2].node != NULL);
  clinfer_ocl_launch_set_global (l, 3, (size_t) out[0] * out[1] * out[2],
      ys->dims[1], ys->dims[0]);
  return TRUE;
}
