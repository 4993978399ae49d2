/* clinfer — OpenVINO IR op translators, part 2: MatMul, padding,
 * splitting, slicing and Reverse, Interpolate, reductions, normalisations,
 * index ops, and layers of clinfer's own extension opset. */
#include "frontend/ir/ir-ops.h"
#include <string.h>

/* ---------------------------------------------------------------- */
/* MatMul                                                            */

/* Input @input of @l, its last two dims swapped when @transpose. */
static ClinferNode *
matmul_operand (IrReader *r, IrLayer *l, guint input, gboolean transpose,
    GError **error)
{
  ClinferShape s = ir_input_shape (l, input);
  ClinferNode *n = ir_add_node (r, l, transpose ? "Transpose" : "Identity",
      13, 1, 1, input == 0 ? "a" : "b");
  int64_t perm[CLINFER_MAX_RANK];

  ir_sink (l, input, n, 0);
  if (!transpose || s.rank == 1)
    return n;
  if (s.rank < 2) {
    ir_set_error (r, l, error, CLINFER_ERROR_UNSUPPORTED_OP,
        "transpose_%c needs the rank of input %u, which the file does not give",
        input == 0 ? 'a' : 'b', input);
    return NULL;
  }
  for (int i = 0; i < s.rank; i++)
    perm[i] = i;
  perm[s.rank - 2] = s.rank - 1;
  perm[s.rank - 1] = s.rank - 2;
  clinfer_node_set_attr (n, "perm", clinfer_attr_new_ints (perm, s.rank));
  return n;
}

static gboolean
tr_matmul (IrReader *r, IrLayer *l, GError **error)
{
  gboolean ta, tb;
  ClinferNode *a, *b;

  if (!ir_attr_bool (r, l, "transpose_a", FALSE, &ta, error)
      || !ir_attr_bool (r, l, "transpose_b", FALSE, &tb, error))
    return FALSE;
  if (!ta && !tb) {
    ir_simple (r, l, "MatMul", 13, 2, 1);
    return TRUE;
  }
  if (!(a = matmul_operand (r, l, 0, ta, error))
      || !(b = matmul_operand (r, l, 1, tb, error)))
    return FALSE;
  ir_output (r, l, 0, ir_binary (r, l, "MatMul", NULL, a, b), 0);
  return TRUE;
}

/* ---------------------------------------------------------------- */
/* Pad, Split, VariadicSplit                                         */

static gboolean
tr_pad (IrReader *r, IrLayer *l, GError **error)
{
  static const char *const modes[] = { "constant", "edge", "reflect",
    "symmetric", NULL };
  ClinferNode *n = ir_add_node (r, l, "Pad", 13, l->inputs->len > 3 ? 3 : 2,
      1, NULL);
  ClinferNode *pads = ir_add_node (r, l, "Concat", 13, 2, 1, "pads");
  int mode;

  if (!ir_attr_enum (r, l, "pad_mode", modes, 0, &mode, error))
    return FALSE;
  if (mode == 3) {
    ir_set_error (r, l, error, CLINFER_ERROR_UNSUPPORTED_OP,
        "pad_mode='symmetric' is not supported (constant, edge, reflect are)");
    return FALSE;
  }
  clinfer_node_set_attr (n, "mode", clinfer_attr_new_string (modes[mode]));
  clinfer_node_set_attr (pads, "axis", clinfer_attr_new_int (0));
  ir_sink_int_list (r, l, 1, pads, 0, "pads_begin");
  ir_sink_int_list (r, l, 2, pads, 1, "pads_end");
  ir_sink (l, 0, n, 0);
  ir_connect (n, 1, pads);
  if (l->inputs->len > 3)
    ir_sink (l, 3, n, 2);
  ir_output (r, l, 0, n, 0);
  return TRUE;
}

static gboolean
tr_split (IrReader *r, IrLayer *l, GError **error)
{
  g_autofree int64_t *axis = NULL;
  int64_t num;
  gsize n;
  ClinferNode *s;

  if (!ir_const_ints (r, l, 1, "axis", &axis, &n, error)
      || !ir_attr_int (r, l, "num_splits", TRUE, 0, &num, error))
    return FALSE;
  if (n != 1 || num != (int64_t) l->outputs->len) {
    ir_set_error (r, l, error, CLINFER_ERROR_PARSE,
        "num_splits=%" G_GINT64_FORMAT " with %u output ports and %"
        G_GSIZE_FORMAT " axis values, expected one output per split and one "
        "axis", num, l->outputs->len, n);
    return FALSE;
  }
  s = ir_add_node (r, l, "Split", 13, 1, l->outputs->len, NULL);
  ir_sink (l, 0, s, 0);
  clinfer_node_set_attr (s, "axis", clinfer_attr_new_int (axis[0]));
  for (guint i = 0; i < l->outputs->len; i++)
    ir_output (r, l, i, s, i);
  return TRUE;
}

/* VariadicSplit: a -1 length takes what is left of the axis. */
static gboolean
tr_variadic_split (IrReader *r, IrLayer *l, GError **error)
{
  g_autofree int64_t *axis = NULL, *lens = NULL;
  gsize n, nl = 0;
  ClinferTensor *t;
  ClinferNode *s;

  if (!ir_const_ints (r, l, 1, "axis", &axis, &n, error)
      || !ir_try_const (r, l, 2, &t, error))
    return FALSE;
  s = ir_add_node (r, l, "Split", 13, 2, l->outputs->len, NULL);
  ir_sink (l, 0, s, 0);
  clinfer_node_set_attr (s, "axis", clinfer_attr_new_int (n ? axis[0] : 0));
  for (guint i = 0; i < l->outputs->len; i++)
    ir_output (r, l, i, s, i);
  if (t && !ir_const_ints (r, l, 2, "split_lengths", &lens, &nl, error))
    return FALSE;
  for (gsize i = 0; i < nl; i++)
    if (lens[i] == -1) {
      ClinferShape ds = ir_input_shape (l, 0);
      int64_t a = axis[0] < 0 ? axis[0] + ds.rank : axis[0], used = 0;
      if (a < 0 || a >= ds.rank || ds.dims[a] < 0) {
        ir_set_error (r, l, error, CLINFER_ERROR_UNSUPPORTED_OP,
            "a -1 split length needs a static size of the split axis");
        return FALSE;
      }
      for (gsize j = 0; j < nl; j++)
        used += j == i ? 0 : lens[j];
      lens[i] = ds.dims[a] - used;
    }
  if (lens)
    ir_connect (s, 1, ir_add_const_i64 (r, l, "split", lens, nl, FALSE));
  else
    ir_sink_int_list (r, l, 2, s, 1, "split");
  return TRUE;
}

/* ---------------------------------------------------------------- */
/* StridedSlice, Slice                                               */

static gboolean
mask_bit (const int64_t *mask, gsize n, gsize i)
{
  return i < n && mask[i] != 0;
}

typedef struct {
  int64_t *begin, *end, *strides;
  int64_t *bm, *em, *nm, *sm, *elm;
  gsize nb, ne, ns, nbm, nem, nnm, nsm, nelm;
} StridedArgs;

static void
strided_args_clear (StridedArgs *a)
{
  g_free (a->begin); g_free (a->end); g_free (a->strides);
  g_free (a->bm); g_free (a->em); g_free (a->nm); g_free (a->sm);
  g_free (a->elm);
}

static gboolean
strided_args_read (IrReader *r, IrLayer *l, StridedArgs *a, GError **error)
{
  if (!ir_const_ints (r, l, 1, "begin", &a->begin, &a->nb, error)
      || !ir_const_ints (r, l, 2, "end", &a->end, &a->ne, error)
      || (l->inputs->len > 3
          && !ir_const_ints (r, l, 3, "strides", &a->strides, &a->ns, error))
      || !ir_attr_ints (r, l, "begin_mask", FALSE, &a->bm, &a->nbm, error)
      || !ir_attr_ints (r, l, "end_mask", FALSE, &a->em, &a->nem, error)
      || !ir_attr_ints (r, l, "new_axis_mask", FALSE, &a->nm, &a->nnm, error)
      || !ir_attr_ints (r, l, "shrink_axis_mask", FALSE, &a->sm, &a->nsm, error)
      || !ir_attr_ints (r, l, "ellipsis_mask", FALSE, &a->elm, &a->nelm, error))
    return FALSE;
  for (gsize i = 0; i < MAX (a->nnm, a->nelm); i++)
    if (mask_bit (a->nm, a->nnm, i) || mask_bit (a->elm, a->nelm, i)) {
      ir_set_error (r, l, error, CLINFER_ERROR_UNSUPPORTED_OP,
          "new_axis_mask and ellipsis_mask are not supported");
      return FALSE;
    }
  if (a->ne != a->nb || (a->strides && a->ns != a->nb) || a->nb > CLINFER_MAX_RANK) {
    ir_set_error (r, l, error, CLINFER_ERROR_PARSE,
        "begin, end and strides have %" G_GSIZE_FORMAT ", %" G_GSIZE_FORMAT
        " and %" G_GSIZE_FORMAT " values, expected the same count (<= %d)",
        a->nb, a->ne, a->strides ? a->ns : a->nb, CLINFER_MAX_RANK);
    return FALSE;
  }
  return TRUE;
}

/* StridedSlice with constant begin/end/strides: a Slice over the first
 * len(begin) axes, masked bounds opened, shrunk axes squeezed after. */
static gboolean
tr_strided_slice (IrReader *r, IrLayer *l, GError **error)
{
  StridedArgs a = { 0 };
  int64_t starts[CLINFER_MAX_RANK], ends[CLINFER_MAX_RANK];
  int64_t axes[CLINFER_MAX_RANK], steps[CLINFER_MAX_RANK], squeeze[CLINFER_MAX_RANK];
  gsize nsq = 0;
  ClinferNode *slice;
  gboolean ok = strided_args_read (r, l, &a, error);

  for (gsize i = 0; ok && i < a.nb; i++) {
    int64_t step = a.strides ? a.strides[i] : 1;
    if (step == 0) {
      ir_set_error (r, l, error, CLINFER_ERROR_PARSE, "stride %" G_GSIZE_FORMAT
          " is 0", i);
      ok = FALSE;
      break;
    }
    axes[i] = (int64_t) i;
    steps[i] = step;
    starts[i] = mask_bit (a.bm, a.nbm, i) ? (step > 0 ? 0 : G_MAXINT64) : a.begin[i];
    ends[i] = mask_bit (a.em, a.nem, i) ? (step > 0 ? G_MAXINT64 : G_MININT64)
        : a.end[i];
    if (mask_bit (a.sm, a.nsm, i)) {
      starts[i] = a.begin[i];
      ends[i] = a.begin[i] == -1 ? G_MAXINT64 : a.begin[i] + 1;
      steps[i] = 1;
      squeeze[nsq++] = (int64_t) i;
    }
  }
  if (ok) {
    slice = ir_add_node (r, l, "Slice", 13, 5, 1, nsq ? "slice" : NULL);
    ir_sink (l, 0, slice, 0);
    ir_connect (slice, 1, ir_add_const_i64 (r, l, "starts", starts, a.nb, FALSE));
    ir_connect (slice, 2, ir_add_const_i64 (r, l, "ends", ends, a.nb, FALSE));
    ir_connect (slice, 3, ir_add_const_i64 (r, l, "axes", axes, a.nb, FALSE));
    ir_connect (slice, 4, ir_add_const_i64 (r, l, "steps", steps, a.nb, FALSE));
    if (nsq) {
      ClinferNode *sq = ir_add_node (r, l, "Squeeze", 13, 2, 1, NULL);
      ir_connect (sq, 0, slice);
      ir_connect (sq, 1, ir_add_const_i64 (r, l, "shrink", squeeze, nsq, FALSE));
      slice = sq;
    }
    ir_output (r, l, 0, slice, 0);
  }
  strided_args_clear (&a);
  return ok;
}

/* Slice-8 (data, start, stop, step[, axes]) -> ONNX Slice (data, starts,
 * ends, axes, steps). */
static gboolean
tr_slice (IrReader *r, IrLayer *l, GError **error)
{
  ClinferNode *n = ir_add_node (r, l, "Slice", 13, 5, 1, NULL);

  ir_sink (l, 0, n, 0);
  ir_sink_int_list (r, l, 1, n, 1, "starts");
  ir_sink_int_list (r, l, 2, n, 2, "ends");
  ir_sink_int_list (r, l, 3, n, 4, "steps");
  if (l->inputs->len > 4)
    ir_sink_int_list (r, l, 4, n, 3, "axes");
  ir_output (r, l, 0, n, 0);
  return TRUE;
}

/* Reverse-1 -> Slice-13 stepping by -1 along the reversed axes: listed
 * in input 1 (mode index), or flagged per dimension (mode mask). */
static gboolean
tr_reverse (IrReader *r, IrLayer *l, GError **error)
{
  static const char *const modes[] = { "index", "mask", NULL };
  g_autofree int64_t *axes = NULL, *starts = NULL, *ends = NULL, *steps = NULL;
  ClinferNode *n;
  gsize na = 0;
  int mode;

  if (!ir_attr_enum (r, l, "mode", modes, 0, &mode, error))
    return FALSE;
  if (mode == 0) {
    if (!ir_const_ints (r, l, 1, "axes", &axes, &na, error))
      return FALSE;
  } else {
    ClinferTensor *mask;
    gsize nm;

    if (!ir_try_const (r, l, 1, &mask, error))
      return FALSE;
    if (mask == NULL || clinfer_tensor_get_shape (mask)->rank > 1) {
      ir_set_error (r, l, error, CLINFER_ERROR_UNSUPPORTED_OP,
          "input 1 (axes mask) must be a Const list");
      return FALSE;
    }
    nm = (gsize) clinfer_tensor_get_n_elements (mask);
    axes = g_new0 (int64_t, MAX (nm, 1));
    for (gsize i = 0; i < nm; i++)
      if (clinfer_tensor_get_as_int64 (mask, (int64_t) i) != 0)
        axes[na++] = (int64_t) i;
  }
  if (na == 0) {
    n = ir_add_node (r, l, "Identity", 16, 1, 1, NULL);
    ir_sink (l, 0, n, 0);
    ir_output (r, l, 0, n, 0);
    return TRUE;
  }
  starts = g_new (int64_t, na);
  ends = g_new (int64_t, na);
  steps = g_new (int64_t, na);
  for (gsize i = 0; i < na; i++) {
    starts[i] = -1;
    ends[i] = G_MININT64;
    steps[i] = -1;
  }
  n = ir_add_node (r, l, "Slice", 13, 5, 1, NULL);
  ir_sink (l, 0, n, 0);
  ir_connect (n, 1, ir_add_const_i64 (r, l, "starts", starts, na, FALSE));
  ir_connect (n, 2, ir_add_const_i64 (r, l, "ends", ends, na, FALSE));
  ir_connect (n, 3, ir_add_const_i64 (r, l, "axes", axes, na, FALSE));
  ir_connect (n, 4, ir_add_const_i64 (r, l, "steps", steps, na, FALSE));
  ir_output (r, l, 0, n, 0);
  return TRUE;
}

/* ---------------------------------------------------------------- */
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
/* Reductions and normalisations                                     */

static ClinferNode *
reduce_node (IrReader *r, IrLayer *l, const char *op_type, const char *suffix,
    gboolean keepdims)
{
  ClinferNode *n = ir_add_node (r, l, op_type, 18, 2, 1, suffix);

  clinfer_node_set_attr (n, "keepdims", clinfer_attr_new_int (keepdims));
  /* OpenVINO: empty axes reduce nothing. */
  clinfer_node_set_attr (n, "noop_with_empty_axes", clinfer_attr_new_int (1));
  return n;
}

static gboolean
tr_reduce (IrReader *r, IrLayer *l, GError **error)
{
  gboolean keep;
  ClinferNode *n;

  if (!ir_attr_bool (r, l, "keep_dims", FALSE, &keep, error))
    return FALSE;
  n = reduce_node (r, l, l->def->onnx_op, NULL, keep);
  ir_sink (l, 0, n, 0);
  ir_sink_int_list (r, l, 1, n, 1, "axes");
  ir_output (r, l, 0, n, 0);
  return TRUE;
}

/* NormalizeL2: x / sqrt (max (sum x^2, eps)) or x / sqrt (sum x^2 + eps). */
static gboolean
tr_normalize_l2 (IrReader *r, IrLayer *l, GError **error)
{
  static const char *const modes[] = { "add", "max", NULL };
  ClinferElementType t = ir_input_type (l, 0);
  ClinferNode *x = ir_add_node (r, l, "Identity", 13, 1, 1, "x");
  ClinferNode *sum, *den, *y;
  float eps;
  int mode;

  if (!ir_attr_float (r, l, "eps", TRUE, 0.f, &eps, error)
      || !ir_attr_enum (r, l, "eps_mode", modes, 0, &mode, error))
    return FALSE;
  ir_sink (l, 0, x, 0);
  sum = reduce_node (r, l, "ReduceSumSquare", "sum_squares", TRUE);
  ir_connect (sum, 0, x);
  ir_sink_int_list (r, l, 1, sum, 1, "axes");
  den = ir_binary (r, l, mode == 0 ? "Add" : "Max", "eps", sum,
      ir_add_scalar (r, l, "eps_value", t, eps));
  den = ir_unary (r, l, "Sqrt", "norm", den);
  y = ir_binary (r, l, "Div", NULL, x, den);
  ir_output (r, l, 0, y, 0);
  return TRUE;
}

/* MVN-1 (axes from across_channels, eps outside the root) and MVN-6
 * (axes input, eps_mode). */
static gboolean
tr_mvn (IrReader *r, IrLayer *l, GError **error)
{
  static const char *const modes[] = { "inside_sqrt", "outside_sqrt", NULL };
  ClinferElementType t = ir_input_type (l, 0);
  ClinferNode *x = ir_add_node (r, l, "Identity", 13, 1, 1, "x");
  ClinferNode *axes = ir_add_node (r, l, "Identity", 13, 1, 1, "axes");
  ClinferNode *mean, *d, *var, *den, *eps_node;
  gboolean across = FALSE, norm_var;
  int mode = 1;
  float eps;

  if (!ir_attr_bool (r, l, "normalize_variance", TRUE, &norm_var, error)
      || !ir_attr_float (r, l, "eps", TRUE, 0.f, &eps, error)
      || (l->opset >= 6
          && !ir_attr_enum (r, l, "eps_mode", modes, 0, &mode, error))
      || (l->opset < 6
          && !ir_attr_bool (r, l, "across_channels", FALSE, &across, error)))
    return FALSE;
  ir_sink (l, 0, x, 0);
  if (l->opset >= 6) {
    ir_sink_int_list (r, l, 1, axes, 0, "axes_list");
  } else {
    ClinferShape s = ir_input_shape (l, 0);
    int64_t list[CLINFER_MAX_RANK];
    gsize n = 0;
    if (s.rank < 2) {
      ir_set_error (r, l, error, CLINFER_ERROR_UNSUPPORTED_OP,
          "MVN-1 needs the rank (>= 2) of its input");
      return FALSE;
    }
    for (int i = across ? 1 : 2; i < s.rank; i++)
      list[n++] = i;
    ir_connect (axes, 0, ir_add_const_i64 (r, l, "axes_list", list, n, FALSE));
  }
  mean = ir_binary (r, l, "ReduceMean", "mean", x, axes);
  mean->opset = 18;
  d = ir_binary (r, l, "Sub", norm_var ? "centered" : NULL, x, mean);
  if (!norm_var) {
    ir_output (r, l, 0, d, 0);
    return TRUE;
  }
  var = ir_binary (r, l, "ReduceMean", "variance", ir_binary (r, l, "Mul",
      "squares", d, d), axes);
  var->opset = 18;
  eps_node = ir_add_scalar (r, l, "eps", t, eps);
  if (mode == 0)
    den = ir_unary (r, l, "Sqrt", "std", ir_binary (r, l, "Add", "var_eps",
        var, eps_node));
  else
    den = ir_binary (r, l, "Add", "std_eps", ir_unary (r, l, "Sqrt", "std",
        var), eps_node);
  ir_output (r, l, 0, ir_binary (r, l, "Div", NULL, d, den), 0);
  return TRUE;
}

/* BatchNormInference-1 orders its ports gamma, beta, data, mean, variance;
 * -5 orders them as ONNX does. */
static gboolean
tr_batch_norm (IrReader *r, IrLayer *l, GError **error)
{
  static const guint v1_order[] = { 2, 0, 1, 3, 4 };
  ClinferNode *n = ir_add_node (r, l, "BatchNormalization", 9, 5, 1, NULL);
  float eps;

  if (!ir_attr_float (r, l, "epsilon", TRUE, 0.f, &eps, error))
    return FALSE;
  for (guint i = 0; i < 5; i++)
    ir_sink (l, l->opset >= 5 ? i : v1_order[i], n, i);
  clinfer_node_set_attr (n, "epsilon", clinfer_attr_new_float (eps));
  ir_output (r, l, 0, n, 0);
  return TRUE;
}

static gboolean
tr_lrn (IrReader *r, IrLayer *l, GError **error)
{
  g_autofree int64_t *axes = NULL;
  gsize na;
  float alpha, beta, bias;
  int64_t size;
  ClinferNode *n;

  if (!ir_const_ints (r, l, 1, "axes", &axes, &na, error)
      || !ir_attr_float (r, l, "alpha", TRUE, 0.f, &alpha, error)
      || !ir_attr_float (r, l, "beta", TRUE, 0.f, &beta, error)
      || !ir_attr_float (r, l, "bias", TRUE, 0.f, &bias, error)
      || !ir_attr_int (r, l, "size", TRUE, 0, &size, error))
    return FALSE;
  if (na != 1 || axes[0] != 1) {
    ir_set_error (r, l, error, CLINFER_ERROR_UNSUPPORTED_OP,
        "only LRN across channels (axes = [1]) is supported");
    return FALSE;
  }
  n = ir_simple (r, l, "LRN", 13, 1, 1);
  clinfer_node_set_attr (n, "alpha", clinfer_attr_new_float (alpha));
  clinfer_node_set_attr (n, "beta", clinfer_attr_new_float (beta));
  clinfer_node_set_attr (n, "bias", clinfer_attr_new_float (bias));
  clinfer_node_set_attr (n, "size", clinfer_attr_new_int (size));
  return TRUE;
}

/* ---------------------------------------------------------------- */
/* Index and layout ops                                              */

/* Output @port of @n as IR output @output, cast when @type_attr (an IR
 * element type attribute, default @def) is not i64. */
static gboolean
output_index_type (IrReader *r, IrLayer *l, guint output, ClinferNode *n,
    guint port, const char *type_attr, const char *def, GError **error)
{
  const char *name = ir_attr_str (l, type_attr, def);
  ClinferElementType t = clinfer_ir_type_from_name (name);
  ClinferNode *cast;

  if (t != CLINFER_TYPE_I64 && t != CLINFER_TYPE_I32) {
    ir_set_error (r, l, error, CLINFER_ERROR_UNSUPPORTED_OP,
        "%s='%s' is not supported (expected i64 or i32)", type_attr, name);
    return FALSE;
  }
  if (output >= l->outputs->len)
    return TRUE;
  if (t == CLINFER_TYPE_I64) {
    ir_output (r, l, output, n, port);
    return TRUE;
  }
  cast = ir_cast (r, l, "indices", t);
  cast->inputs[0].node = n;
  cast->inputs[0].port = port;
  ir_output (r, l, output, cast, 0);
  return TRUE;
}

static gboolean
tr_topk (IrReader *r, IrLayer *l, GError **error)
{
  static const char *const modes[] = { "max", "min", NULL };
  static const char *const sorts[] = { "value", "none", "index", NULL };
  ClinferNode *n = ir_add_node (r, l, "TopK", 11, 2, 2, NULL);
  int64_t axis;
  int mode, sort;

  if (!ir_attr_int (r, l, "axis", TRUE, 0, &axis, error)
      || !ir_attr_enum (r, l, "mode", modes, 0, &mode, error)
      || !ir_attr_enum (r, l, "sort", sorts, 0, &sort, error))
    return FALSE;
  if (sort == 2) {
    ir_set_error (r, l, error, CLINFER_ERROR_UNSUPPORTED_OP,
        "sort='index' is not supported (value and none are)");
    return FALSE;
  }
  clinfer_node_set_attr (n, "axis", clinfer_attr_new_int (axis));
  clinfer_node_set_attr (n, "largest", clinfer_attr_new_int (mode == 0));
  clinfer_node_set_attr (n, "sorted", clinfer_attr_new_int (sort == 0));
  ir_sink (l, 0, n, 0);
  ir_sink_int_list (r, l, 1, n, 1, "k");
  ir_output (r, l, 0, n, 0);
  return output_index_type (r, l, 1, n, 1, "index_element_type",
      l->opset >= 3 ? "i32" : "i64", error);
}

static gboolean
tr_depth_space (IrReader *r, IrLayer *l, GError **error)
{
  static const char *const modes[] = { "blocks_first", "depth_first", NULL };
  gboolean d2s = g_ascii_strcasecmp (l->def->type, "DepthToSpace") == 0;
  int64_t bs;
  int mode;
  ClinferNode *n;

  if (!ir_attr_int (r, l, "block_size", TRUE, 1, &bs, error)
      || !ir_attr_enum (r, l, "mode", modes, 0, &mode, error))
    return FALSE;
  if (!d2s && mode != 0) {
    ir_set_error (r, l, error, CLINFER_ERROR_UNSUPPORTED_OP,
        "SpaceToDepth mode='depth_first' is not supported");
    return FALSE;
  }
  n = ir_simple (r, l, d2s ? "DepthToSpace" : "SpaceToDepth", 13, 1, 1);
  clinfer_node_set_attr (n, "blocksize", clinfer_attr_new_int (bs));
  if (d2s)
    clinfer_node_set_attr (n, "mode", clinfer_attr_new_string (mode ? "CRD"
        : "DCR"));
  return TRUE;
}

static gboolean
tr_nonzero (IrReader *r, IrLayer *l, GError **error)
{
  ClinferNode *n = ir_add_node (r, l, "NonZero", 13, 1, 1, NULL);

  ir_sink (l, 0, n, 0);
  return output_index_type (r, l, 0, n, 0, "output_type", "i64", error);
}

static gboolean
tr_int_attr_op (IrReader *r, IrLayer *l, const char *attr, const char *onnx,
    const char *onnx_attr, int64_t def, GError **error)
{
  int64_t v;

  if (!ir_attr_int (r, l, attr, FALSE, def, &v, error))
    return FALSE;
  clinfer_node_set_attr (ir_simple (r, l, onnx, 13, l->inputs->len, 1),
      onnx_attr, clinfer_attr_new_int (v));
  return TRUE;
}

static gboolean
tr_gather_nd (IrReader *r, IrLayer *l, GError **error)
{
  return tr_int_attr_op (r, l, "batch_dims", "GatherND", "batch_dims", 0, error);
}

static gboolean
tr_gather_elements (IrReader *r, IrLayer *l, GError **error)
{
  return tr_int_attr_op (r, l, "axis", "GatherElements", "axis", 0, error);
}

/* The ONNX reduction of ScatterElementsUpdate-12 / ScatterNDUpdate-15
 * (which both start from the data's values, as ONNX's do). */
static gboolean
scatter_reduction (IrReader *r, IrLayer *l, const char **onnx, GError **error)
{
  static const char *const names[] = { "none", "sum", "prod", "min", "max",
    NULL };
  static const char *const onnx_names[] = { "none", "add", "mul", "min",
    "max" };
  gboolean init;
  int red;

  if (!ir_attr_bool (r, l, "use_init_val", TRUE, &init, error))
    return FALSE;
  if (!init) {
    ir_set_error (r, l, error, CLINFER_ERROR_UNSUPPORTED_OP,
        "use_init_val='false' is not supported");
    return FALSE;
  }
  if (!ir_attr_enum (r, l, "reduction", names, 0, &red, error))
    return FALSE;
  *onnx = onnx_names[red];
  return TRUE;
}

static gboolean
tr_scatter_elements (IrReader *r, IrLayer *l, GError **error)
{
  g_autofree int64_t *axis = NULL;
  const char *red;
  gsize n;
  ClinferNode *s;

  if (!ir_const_ints (r, l, 3, "axis", &axis, &n, error))
    return FALSE;
  if (n != 1) {
    ir_set_error (r, l, error, CLINFER_ERROR_UNSUPPORTED_OP,
        "input 3 (axis) must hold one value, not %" G_GSIZE_FORMAT, n);
    return FALSE;
  }
  if (!scatter_reduction (r, l, &red, error))
    return FALSE;
  s = ir_simple (r, l, "ScatterElements", 18, 3, 1);
  clinfer_node_set_attr (s, "axis", clinfer_attr_new_int (axis[0]));
  clinfer_node_set_attr (s, "reduction", clinfer_attr_new_string (red));
  return TRUE;
}

static gboolean
tr_cumsum (IrReader *r, IrLayer *l, GError **error)
{
  gboolean exclusive, reverse;
  ClinferNode *n = ir_add_node (r, l, "CumSum", 14, 2, 1, NULL);
  int64_t zero = 0;

  if (!ir_attr_bool (r, l, "exclusive", FALSE, &exclusive, error)
      || !ir_attr_bool (r, l, "reverse", FALSE, &reverse, error))
    return FALSE;
  clinfer_node_set_attr (n, "exclusive", clinfer_attr_new_int (exclusive));
  clinfer_node_set_attr (n, "reverse", clinfer_attr_new_int (reverse));
  ir_sink (l, 0, n, 0);
  if (l->inputs->len > 1)
    ir_sink (l, 1, n, 1);
  else
    ir_connect (n, 1, ir_add_const_i64 (r, l, "axis", &zero, 1, TRUE));
  ir_output (r, l, 0, n, 0);
  return TRUE;
}

static gboolean
tr_einsum (IrReader *r, IrLayer *l, GError **error)
{
  const char *eq = ir_attr_str (l, "equation", NULL);

  if (eq == NULL) {
    ir_set_error (r, l, error, CLINFER_ERROR_PARSE,
        "attribute 'equation' is missing");
    return FALSE;
  }
  clinfer_node_set_attr (ir_simple (r, l, "Einsum", 12, l->inputs->len, 1),
      "equation", clinfer_attr_new_string (eq));
  return TRUE;
}

/* OneHot (indices, depth, on, off) -> ONNX OneHot (indices, depth,
 * [off, on]). */
static gboolean
tr_one_hot (IrReader *r, IrLayer *l, GError **error)
{
  int64_t axis, one = 1;
  ClinferNode *n = ir_add_node (r, l, "OneHot", 11, 3, 1, NULL);
  ClinferNode *values = ir_add_node (r, l, "Concat", 13, 2, 1, "values");

  if (!ir_attr_int (r, l, "axis", TRUE, -1, &axis, error))
    return FALSE;
  clinfer_node_set_attr (n, "axis", clinfer_attr_new_int (axis));
  clinfer_node_set_attr (values, "axis", clinfer_attr_new_int (0));
  for (guint i = 0; i < 2; i++) {
    ClinferNode *v = ir_add_node (r, l, "Reshape", 14, 2, 1,
        i == 0 ? "off" : "on");
    ir_sink (l, i == 0 ? 3 : 2, v, 0);
    ir_connect (v, 1, ir_add_const_i64 (r, l, "one", &one, 1, FALSE));
    ir_connect (values, i, v);
  }
  ir_sink (l, 0, n, 0);
  ir_sink (l, 1, n, 1);
  ir_connect (n, 2, values);
  ir_output (r, l, 0, n, 0);
  return TRUE;
}

static gboolean
tr_scatter_nd (IrReader *r, IrLayer *l, GError **error)
{
  const char *red;

  if (!scatter_reduction (r, l, &red, error))
    return FALSE;
  clinfer_node_set_attr (ir_simple (r, l, "ScatterND", 18, 3, 1), "reduction",
      clinfer_attr_new_string (red));
  return TRUE;
}

/* ---------------------------------------------------------------- */
/* clinfer extension opset                                           */

/* <data> values are "i:3", "f:0.5", "s:text", "ints:1,2", "floats:0.5,1";
 * "clinfer.domain" and "clinfer.opset" give the node's domain and opset. */
static ClinferAttr *
extension_attr (const char *v)
{
  const char *colon = strchr (v, ':');
  g_autofree char *kind = colon ? g_strndup (v, colon - v) : NULL;
  const char *body = colon ? colon + 1 : NULL;
  g_auto (GStrv) parts = NULL;
  gsize n;

  if (kind == NULL)
    return NULL;
  if (strcmp (kind, "i") == 0)
    return clinfer_attr_new_int (g_ascii_strtoll (body, NULL, 10));
  if (strcmp (kind, "f") == 0)
    return clinfer_attr_new_float ((float) g_ascii_strtod (body, NULL));
  if (strcmp (kind, "s") == 0)
    return clinfer_attr_new_string (body);
  if (strcmp (kind, "ints") != 0 && strcmp (kind, "floats") != 0)
    return NULL;
  parts = g_strsplit (body, ",", -1);
  n = *body ? g_strv_length (parts) : 0;
  if (kind[0] == 'i') {
    g_autofree int64_t *iv = g_new0 (int64_t, MAX (n, 1));
    for (gsize i = 0; i < n; i++)
      iv[i] = g_ascii_strtoll (parts[i], NULL, 10);
    return clinfer_attr_new_ints (iv, n);
  } else {
    g_autofree float *fv = g_new0 (float, MAX (n, 1));
    for (gsize i = 0; i < n; i++)
      fv[i] = (float) g_ascii_strtod (parts[i], NULL);
    return clinfer_attr_new_floats (fv, n);
  }
}

/* Node input positions of the layer's inputs: "clinfer.inputs" gives the
 * node's input count and "clinfer.absent" the positions left out. */
static gboolean
extension_inputs (IrReader *r, IrLayer *l, guint *n_inputs, guint *pos,
    GError **error)
{
  g_autofree int64_t *absent = NULL;
  int64_t total;
  gsize na;
  guint k = 0;

  if (!ir_attr_int (r, l, "clinfer.inputs", FALSE, l->inputs->len, &total, error)
      || !ir_attr_ints (r, l, "clinfer.absent", FALSE, &absent, &na, error))
    return FALSE;
  if (total < (int64_t) l->inputs->len || total > 64
      || (gsize) total != l->inputs->len + na) {
    ir_set_error (r, l, error, CLINFER_ERROR_PARSE,
        "clinfer.inputs=%" G_GINT64_FORMAT " does not match %u ports and %"
        G_GSIZE_FORMAT " absent inputs", total, l->inputs->len, na);
    return FALSE;
  }
  for (guint i = 0; i < (guint) total; i++) {
    gboolean gone = FALSE;
    for (gsize j = 0; j < na; j++)
      gone = gone || absent[j] == i;
    if (!gone && k < l->inputs->len)
      pos[k++] = i;
  }
  if (k != l->inputs->len) {
    ir_set_error (r, l, error, CLINFER_ERROR_PARSE,
        "clinfer.absent lists positions outside 0..%" G_GINT64_FORMAT,
        total - 1);
    return FALSE;
  }
  *n_inputs = (guint) total;
  return TRUE;
}

static gboolean
tr_extension (IrReader *r, IrLayer *l, GError **error)
{
  guint pos[64], n_inputs;
  ClinferNode *n;
  GHashTableIter it;
  gpointer k, v;

  if (!extension_inputs (r, l, &n_inputs, pos, error))
    return FALSE;
  n = ir_add_node (r, l, l->type, 1, n_inputs, l->outputs->len, NULL);
  for (guint i = 0; i < l->inputs->len; i++)
    ir_sink (l, i, n, pos[i]);
  for (guint i = 0; i < l->outputs->len; i++)
    ir_output (r, l, i, n, i);

  g_free (n->domain);
  n->domain = g_strdup (ir_attr_str (l, "clinfer.domain", ""));
  n->opset = (int) g_ascii_strtoll (ir_attr_str (l, "clinfer.opset", "1"),
      NULL, 10);
  g_hash_table_iter_init (&it, l->data);
  while (g_hash_table_iter_next (&it, &k, &v)) {
    ClinferAttr *a;
    if (g_str_has_prefix (k, "clinfer."))
      continue;
    if ((a = extension_attr (v)) == NULL) {
      ir_set_error (r, l, error, CLINFER_ERROR_PARSE,
          "attribute %s='%s' is not a typed clinfer attribute (i:, f:, s:, "
          "ints:, floats:)", (const char *) k, (const char *) v);
      return FALSE;
    }
    clinfer_node_set_attr (n, k, a);
  }
  return TRUE;
}

const IrOpDef clinfer_ir_extension_op =
  { "*", 0, 0, 0, G_MAXUINT, 0, G_MAXUINT, tr_extension, NULL, 0 };

static gboolean
tr_foreign (IrReader *r, IrLayer *l, GError **error)
{
  ClinferNode *n = ir_add_node (r, l, l->type, 1, l->inputs->len,
      l->outputs->len, NULL);
  GHashTableIter it;
  gpointer k, v;

  for (guint i = 0; i < l->inputs->len; i++)
    ir_sink (l, i, n, i);
  for (guint i = 0; i < l->outputs->len; i++)
    ir_output (r, l, i, n, i);
  g_free (n->domain);
  n->domain = g_strdup (l->version);
  g_hash_table_iter_init (&it, l->data);
  while (g_hash_table_iter_next (&it, &k, &v))
    clinfer_node_set_attr (n, k, clinfer_attr_new_string (v));
  return TRUE;
}

const IrOpDef clinfer_ir_foreign_op =
  { "*", 0, 0, 0, G_MAXUINT, 0, G_MAXUINT, tr_foreign, NULL, 0 };

/* ---------------------------------------------------------------- */
/* Table                                                             */

#define V G_MAXUINT
#define REDUCE(type, onnx, since) \
  { type, since, 0, 2, 2, 1, 1, tr_reduce, onnx, 18 }

const IrOpDef clinfer_ir_ops_more[] = {
  { "MatMul", 1, 0, 2, 2, 1, 1, tr_matmul, NULL, 0 },
  { "Pad", 1, 0, 3, 4, 1, 1, tr_pad, NULL, 0 },
  { "Split", 1, 0, 2, 2, 1, V, tr_split, NULL, 0 },
  { "VariadicSplit", 1, 0, 3, 3, 1, V, tr_variadic_split, NULL, 0 },
  { "StridedSlice", 1, 0, 3, 4, 1, 1, tr_strided_slice, NULL, 0 },
  { "Slice", 8, 0, 4, 5, 1, 1, tr_slice, NULL, 0 },
  { "Reverse", 1, 0, 2, 2, 1, 1, tr_reverse, NULL, 0 },
  { "Interpolate", 4, 10, 3, 4, 1, 1, tr_interpolate, NULL, 0 },
  { "Interpolate", 11, 0, 2, 3, 1, 1, tr_interpolate, NULL, 0 },
  REDUCE ("ReduceMean", "ReduceMean", 1), REDUCE ("ReduceSum", "ReduceSum", 1),
  REDUCE ("ReduceMax", "ReduceMax", 1), REDUCE ("ReduceMin", "ReduceMin", 1),
  REDUCE ("ReduceProd", "ReduceProd", 1), REDUCE ("ReduceL1", "ReduceL1", 4),
  REDUCE ("ReduceL2", "ReduceL2", 4),
  { "NormalizeL2", 1, 0, 2, 2, 1, 1, tr_normalize_l2, NULL, 0 },
  { "MVN", 1, 5, 1, 1, 1, 1, tr_mvn, NULL, 0 },
  { "MVN", 6, 0, 2, 2, 1, 1, tr_mvn, NULL, 0 },
  { "BatchNormInference", 1, 0, 5, 5, 1, 1, tr_batch_norm, NULL, 0 },
  { "LRN", 1, 0, 2, 2, 1, 1, tr_lrn, NULL, 0 },
  { "TopK", 1, 0, 2, 2, 1, 2, tr_topk, NULL, 0 },
  { "DepthToSpace", 1, 0, 1, 1, 1, 1, tr_depth_space, NULL, 0 },
  { "SpaceToDepth", 1, 0, 1, 1, 1, 1, tr_depth_space, NULL, 0 },
  { "NonZero", 3, 0, 1, 1, 1, 1, tr_nonzero, NULL, 0 },
  { "GatherND", 5, 0, 2, 2, 1, 1, tr_gather_nd, NULL, 0 },
  { "GatherElements", 6, 0, 2, 2, 1, 1, tr_gather_elements, NULL, 0 },
  { "ScatterNDUpdate", 3, 0, 3, 3, 1, 1, tr_scatter_nd, NULL, 0 },
  { "ScatterElementsUpdate", 3, 0, 4, 4, 1, 1, tr_scatter_elements, NULL, 0 },
  { "CumSum", 3, 0, 1, 2, 1, 1, tr_cumsum, NULL, 0 },
  { "Einsum", 7, 0, 1, V, 1, 1, tr_einsum, NULL, 0 },
  { "OneHot", 1, 0, 4, 4, 1, 1, tr_one_hot, NULL, 0 },
  { NULL }
};
