/* clinfer — OpenVINO IR op translators: Interpolate. Each OpenVINO layer
 * becomes one or a few nodes of the engine's ONNX-semantics op set; the
 * table at the end lists the (type, opset range) this file reads. */
#include "frontend/ir/ir-ops.h"
#include <math.h>
#include <string.h>

/* Interpolate-4 / -11 -> Resize-13                                  */

typedef struct {
  int mode, ct, nearest, calc;
  float cube;
  gboolean antialias;
} InterpAttrs;

static gboolean
interp_attrs (IrReader *r, IrLayer *l, InterpAttrs *a, GError **error)
{
  static const char *const modes[] = { "nearest", "linear", "linear_onnx",
    "cubic", NULL };
  static const char *const cts[] = { "half_pixel", "pytorch_half_pixel",
    "asymmetric", "tf_half_pixel_for_nn", "align_corners", NULL };
  static const char *const nearest[] = { "round_prefer_floor",
    "round_prefer_ceil", "floor", "ceil", NULL };
  static const char *const calcs[] = { "sizes", "scales", NULL };
  g_autofree int64_t *pb = NULL, *pe = NULL;
  gsize nb, ne;

  if (!ir_attr_enum (r, l, "mode", modes, 0, &a->mode, error)
      || !ir_attr_enum (r, l, "coordinate_transformation_mode", cts, 0, &a->ct,
          error)
      || !ir_attr_enum (r, l, "nearest_mode", nearest, 0, &a->nearest, error)
      || !ir_attr_enum (r, l, "shape_calculation_mode", calcs, 0, &a->calc,
          error)
      || !ir_attr_float (r, l, "cube_coeff", FALSE, -0.75f, &a->cube, error)
      || !ir_attr_bool (r, l, "antialias", FALSE, &a->antialias, error)
      || !ir_attr_ints (r, l, "pads_begin", FALSE, &pb, &nb, error)
      || !ir_attr_ints (r, l, "pads_end", FALSE, &pe, &ne, error))
    return FALSE;
  for (gsize i = 0; i < MAX (nb, ne); i++)
    if ((i < nb && pb[i]) || (i < ne && pe[i])) {
      ir_set_error (r, l, error, CLINFER_ERROR_UNSUPPORTED_OP,
          "non-zero pads_begin/pads_end are not supported");
      return FALSE;
    }
  if (a->antialias) {
    ir_set_error (r, l, error, CLINFER_ERROR_UNSUPPORTED_OP,
        "antialias=true is not supported");
    return FALSE;
  }
  return TRUE;
}

/* Full-rank sizes or scales: @input as is when it covers every axis,
 * else scattered into Shape (data) or ones at the given axes. */
static gboolean
interp_full_param (IrReader *r, IrLayer *l, ClinferNode *resize, guint input,
    gboolean sizes, int axes_input, GError **error)
{
  ClinferShape ds = ir_input_shape (l, 0);
  g_autofree int64_t *axes = NULL;
  gsize na = 0;
  gboolean all = TRUE;
  ClinferNode *base, *scatter;

  if (axes_input >= 0
      && !ir_const_ints (r, l, (guint) axes_input, "axes", &axes, &na, error))
    return FALSE;
  for (gsize i = 0; i < na; i++)
    all = all && axes[i] == (int64_t) i;
  all = all && (axes_input < 0 || (ds.rank >= 0 && na == (gsize) ds.rank));
  if (all) {
    if (sizes) {
      ir_sink_int_list (r, l, input, resize, 3, "sizes");
    } else {
      ClinferNode *c = ir_cast (r, l, "scales", CLINFER_TYPE_F32);
      ir_sink (l, input, c, 0);
      ir_connect (resize, 2, c);
    }
    return TRUE;
  }
  if (ds.rank < 0) {
    ir_set_error (r, l, error, CLINFER_ERROR_UNSUPPORTED_OP,
        "resizing some axes needs the rank of the data input");
    return FALSE;
  }
  if (sizes) {
    base = ir_add_node (r, l, "Shape", 13, 1, 1, "data_shape");
    ir_sink (l, 0, base, 0);
  } else {
    float ones[CLINFER_MAX_RANK];
    for (int i = 0; i < ds.rank; i++)
      ones[i] = 1.f;
    base = ir_add_const_f32 (r, l, "ones", ones, (gsize) ds.rank, FALSE);
  }
  scatter = ir_add_node (r, l, "ScatterElements", 13, 3, 1,
      sizes ? "sizes" : "scales");
  ir_connect (scatter, 0, base);
  ir_connect (scatter, 1, ir_add_const_i64 (r, l, "axes", axes, na, FALSE));
  if (sizes) {
    ir_sink_int_list (r, l, input, scatter, 2, "given_sizes");
  } else {
    ClinferNode *c = ir_cast (r, l, "given_scales", CLINFER_TYPE_F32);
    ir_sink (l, input, c, 0);
    ir_connect (scatter, 2, c);
  }
  ir_connect (resize, sizes ? 3 : 2, scatter);
  return TRUE;
}

static gboolean
tr_interpolate (IrReader *r, IrLayer *l, GError **error)
{
  static const char *const onnx_modes[] = { "nearest", "linear", "linear",
    "cubic" };
  static const char *const cts[] = { "half_pixel", "pytorch_half_pixel",
    "asymmetric", "tf_half_pixel_for_nn", "align_corners" };
  static const char *const nearest[] = { "round_prefer_floor",
    "round_prefer_ceil", "floor", "ceil" };
  gboolean v11 = l->opset >= 11;
  InterpAttrs a;
  ClinferNode *n;
  guint input;
  int axes_input;

  if (!interp_attrs (r, l, &a, error))
    return FALSE;
  n = ir_add_node (r, l, "Resize", 13, 4, 1, NULL);
  ir_sink (l, 0, n, 0);
  ir_output (r, l, 0, n, 0);
  clinfer_node_set_attr (n, "mode", clinfer_attr_new_string (onnx_modes[a.mode]));
  clinfer_node_set_attr (n, "coordinate_transformation_mode",
      clinfer_attr_new_string (cts[a.ct]));
  clinfer_node_set_attr (n, "nearest_mode",
      clinfer_attr_new_string (nearest[a.nearest]));
  clinfer_node_set_attr (n, "cubic_coeff_a", clinfer_attr_new_float (a.cube));
  input = v11 ? 1 : (a.calc == 0 ? 1 : 2);
  axes_input = (int) l->inputs->len > (v11 ? 2 : 3) ? (v11 ? 2 : 3) : -1;
  return interp_full_param (r, l, n, input, a.calc == 0, axes_input, error);
}

/* ---------------------------------------------------------------- */

/* ---------------------------------------------------------------- */
/* Table                                                             */

const IrOpDef clinfer_ir_ops_resize[] = {
  { "Interpolate", 4, 10, 3, 4, 1, 1, tr_interpolate, NULL, 0 },
  { "Interpolate", 11, 0, 2, 3, 1, 1, tr_interpolate, NULL, 0 },
  { NULL }
};
