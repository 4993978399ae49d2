/* clinfer — OpenVINO IR op translators: shape and layout ops: Concat, Reshape, Transpose, Squeeze,
 * Unsqueeze, ShapeOf, Convert, Gather, Broadcast, Tile, Range, Pad, Split,
 * VariadicSplit, StridedSlice, Slice and Reverse. Each OpenVINO layer
 * becomes one or a few nodes of the engine's ONNX-semantics op set; the
 * table at the end lists the (type, opset range) this file reads. */
#include "frontend/ir/ir-ops.h"
#include <string.h>

/* ---------------------------------------------------------------- */
/* Shape ops                                                         */

static gboolean
tr_concat (IrReader *r, IrLayer *l, GError **error)
{
  int64_t axis;

  if (!ir_attr_int (r, l, "axis", TRUE, 0, &axis, error))
    return FALSE;
  clinfer_node_set_attr (ir_simple (r, l, "Concat", 13, l->inputs->len, 1),
      "axis", clinfer_attr_new_int (axis));
  return TRUE;
}

/* special_zero true: 0 copies the input dim (ONNX allowzero 0); false: 0
 * is a real zero (allowzero 1). */
static gboolean
tr_reshape (IrReader *r, IrLayer *l, GError **error)
{
  gboolean special_zero;
  ClinferNode *n;

  if (!ir_attr_bool (r, l, "special_zero", FALSE, &special_zero, error))
    return FALSE;
  n = ir_add_node (r, l, "Reshape", 14, 2, 1, NULL);
  ir_sink (l, 0, n, 0);
  ir_sink_int_list (r, l, 1, n, 1, "shape");
  ir_output (r, l, 0, n, 0);
  clinfer_node_set_attr (n, "allowzero", clinfer_attr_new_int (!special_zero));
  return TRUE;
}

static gboolean
tr_transpose (IrReader *r, IrLayer *l, GError **error)
{
  g_autofree int64_t *order = NULL;
  gsize n;
  ClinferNode *t;

  if (!ir_const_ints (r, l, 1, "order", &order, &n, error))
    return FALSE;
  t = ir_add_node (r, l, "Transpose", 13, 1, 1, NULL);
  ir_sink (l, 0, t, 0);
  ir_output (r, l, 0, t, 0);
  if (n)                     /* empty order reverses, as ONNX's default */
    clinfer_node_set_attr (t, "perm", clinfer_attr_new_ints (order, n));
  return TRUE;
}

static gboolean
tr_squeeze_like (IrReader *r, IrLayer *l, GError **error)
{
  ClinferNode *n = ir_add_node (r, l, l->def->onnx_op, 13, l->inputs->len, 1,
      NULL);

  ir_sink (l, 0, n, 0);
  if (l->inputs->len > 1)
    ir_sink_int_list (r, l, 1, n, 1, "axes");
  ir_output (r, l, 0, n, 0);
  return TRUE;
}

static gboolean
tr_shape_of (IrReader *r, IrLayer *l, GError **error)
{
  ClinferElementType t = clinfer_ir_type_from_name (
      ir_attr_str (l, "output_type", "i64"));
  ClinferNode *n = ir_add_node (r, l, "Shape", 13, 1, 1, NULL);

  ir_sink (l, 0, n, 0);
  if (t != CLINFER_TYPE_I64 && t != CLINFER_TYPE_I32) {
    ir_set_error (r, l, error, CLINFER_ERROR_UNSUPPORTED_OP,
        "output_type '%s' is not supported (expected i64 or i32)",
        ir_attr_str (l, "output_type", ""));
    return FALSE;
  }
  if (t == CLINFER_TYPE_I32) {
    ClinferNode *cast = ir_cast (r, l, "i32", t);
    ir_connect (cast, 0, n);
    n = cast;
  }
  ir_output (r, l, 0, n, 0);
  return TRUE;
}

static gboolean
tr_convert (IrReader *r, IrLayer *l, GError **error)
{
  const char *name = ir_attr_str (l, "destination_type", NULL);
  gboolean like = g_ascii_strcasecmp (l->def->type, "ConvertLike") == 0;
  ClinferElementType t = like ? ir_input_type (l, 1)
      : clinfer_ir_type_from_name (name);
  ClinferNode *n;

  if (t == CLINFER_TYPE_UNDEFINED) {
    ir_set_error (r, l, error, CLINFER_ERROR_UNSUPPORTED_OP, like
        ? "the element type of input 1 is unknown"
        : "destination_type '%s' is not supported", name ? name : "(missing)");
    return FALSE;
  }
  n = ir_cast (r, l, NULL, t);
  ir_sink (l, 0, n, 0);
  ir_output (r, l, 0, n, 0);
  return TRUE;
}

static gboolean
tr_gather (IrReader *r, IrLayer *l, GError **error)
{
  g_autofree int64_t *axis = NULL;
  int64_t batch_dims = 0;
  gsize n;
  ClinferNode *g;

  if (!ir_const_ints (r, l, 2, "axis", &axis, &n, error)
      || !ir_attr_int (r, l, "batch_dims", FALSE, 0, &batch_dims, error))
    return FALSE;
  if (n != 1 || batch_dims != 0) {
    ir_set_error (r, l, error, CLINFER_ERROR_UNSUPPORTED_OP,
        n != 1 ? "the axis input must hold one value"
        : "batch_dims=%" G_GINT64_FORMAT " is not supported (expected 0)",
        batch_dims);
    return FALSE;
  }
  g = ir_simple (r, l, "Gather", 13, 2, 1);
  clinfer_node_set_attr (g, "axis", clinfer_attr_new_int (axis[0]));
  return TRUE;
}

/* Broadcast: numpy and bidirectional are Expand; explicit reshapes the
 * data to the target rank by axes_mapping first. */
static gboolean
tr_broadcast (IrReader *r, IrLayer *l, GError **error)
{
  static const char *const modes[] = { "numpy", "bidirectional", "explicit",
    "pdpd", NULL };
  ClinferNode *n = ir_add_node (r, l, "Expand", 13, 2, 1, NULL);
  int mode;

  if (!ir_attr_enum (r, l, "mode", modes, 0, &mode, error))
    return FALSE;
  ir_sink_int_list (r, l, 1, n, 1, "target_shape");
  ir_output (r, l, 0, n, 0);
  if (mode == 2) {
    g_autofree int64_t *map = NULL;
    gsize nm;
    ClinferShape ds = ir_input_shape (l, 0), ts = ir_input_shape (l, 1);
    int64_t dims[CLINFER_MAX_RANK];
    ClinferNode *reshape;

    if (!ir_const_ints (r, l, 2, "axes_mapping", &map, &nm, error))
      return FALSE;
    if (ts.rank != 1 || ts.dims[0] < 0 || ts.dims[0] > CLINFER_MAX_RANK
        || !clinfer_shape_is_static (&ds) || (gsize) ds.rank != nm) {
      ir_set_error (r, l, error, CLINFER_ERROR_UNSUPPORTED_OP,
          "explicit broadcast needs a static data shape and target rank");
      return FALSE;
    }
    for (int i = 0; i < ts.dims[0]; i++)
      dims[i] = 1;
    for (gsize i = 0; i < nm; i++) {
      if (map[i] < 0 || map[i] >= ts.dims[0]) {
        ir_set_error (r, l, error, CLINFER_ERROR_PARSE,
            "axes_mapping value %" G_GINT64_FORMAT " is out of range",
            map[i]);
        return FALSE;
      }
      dims[map[i]] = ds.dims[i];
    }
    reshape = ir_add_node (r, l, "Reshape", 14, 2, 1, "explicit");
    ir_sink (l, 0, reshape, 0);
    ir_connect (reshape, 1, ir_add_const_i64 (r, l, "explicit_shape", dims,
        (gsize) ts.dims[0], FALSE));
    ir_connect (n, 0, reshape);
  } else {
    ir_sink (l, 0, n, 0);
  }
  return TRUE;
}

/* Tile: repeats shorter than the rank are padded with leading 1s; longer
 * ones add leading unit dims to the data. */
static gboolean
tr_tile (IrReader *r, IrLayer *l, GError **error)
{
  ClinferShape ds = ir_input_shape (l, 0);
  ClinferTensor *t;
  ClinferNode *n;
  int64_t reps[CLINFER_MAX_RANK];
  int64_t k;

  if (!ir_try_const (r, l, 1, &t, error))
    return FALSE;
  n = ir_add_node (r, l, "Tile", 13, 2, 1, NULL);
  ir_output (r, l, 0, n, 0);
  k = t ? clinfer_tensor_get_n_elements (t) : -1;
  if (t == NULL || ds.rank < 0 || k == ds.rank || k > CLINFER_MAX_RANK) {
    ir_sink (l, 0, n, 0);
    ir_sink_int_list (r, l, 1, n, 1, "repeats");
    return TRUE;
  }
  for (int64_t i = 0; i < MAX (k, ds.rank); i++) {
    int64_t j = i - (MAX (k, ds.rank) - k);
    reps[i] = j >= 0 ? clinfer_tensor_get_as_int64 (t, j) : 1;
  }
  ir_connect (n, 1, ir_add_const_i64 (r, l, "repeats", reps,
      (gsize) MAX (k, ds.rank), FALSE));
  if (k > ds.rank) {
    int64_t axes[CLINFER_MAX_RANK];
    ClinferNode *u = ir_add_node (r, l, "Unsqueeze", 13, 2, 1, "rank");
    for (int64_t i = 0; i < k - ds.rank; i++)
      axes[i] = i;
    ir_sink (l, 0, u, 0);
    ir_connect (u, 1, ir_add_const_i64 (r, l, "rank_axes", axes,
        (gsize) (k - ds.rank), FALSE));
    ir_connect (n, 0, u);
  } else {
    ir_sink (l, 0, n, 0);
  }
  return TRUE;
}

/* Range-4 has an output_type; ONNX Range needs inputs of that type. */
static gboolean
tr_range (IrReader *r, IrLayer *l, GError **error)
{
  const char *ot = ir_attr_str (l, "output_type", NULL);
  ClinferElementType t = ot ? clinfer_ir_type_from_name (ot)
      : ir_input_type (l, 0);
  ClinferNode *n = ir_add_node (r, l, "Range", 11, 3, 1, NULL);

  if (t == CLINFER_TYPE_UNDEFINED) {
    ir_set_error (r, l, error, CLINFER_ERROR_UNSUPPORTED_OP,
        "output_type '%s' is not supported", ot ? ot : "(unknown)");
    return FALSE;
  }
  for (guint i = 0; i < 3; i++) {
    static const char *names[] = { "start", "stop", "step" };
    ClinferNode *c = ir_cast (r, l, names[i], t);
    ir_sink (l, i, c, 0);
    ir_connect (n, i, c);
  }
  ir_output (r, l, 0, n, 0);
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
      for (gsize j = 0; j < nl; j++) {
        if (j == i)
          continue;
        /* (checked before adding: no overflow) */
        if (lens[j] < 0 || lens[j] > ds.dims[a] - used) {
          ir_set_error (r, l, error, CLINFER_ERROR_PARSE,
              "split_lengths[%" G_GSIZE_FORMAT "] is %" G_GINT64_FORMAT
              ", expected one -1 and lengths that fit in the split axis "
              "(%" G_GINT64_FORMAT ")", j, lens[j], ds.dims[a]);
          return FALSE;
        }
        used += lens[j];
      }
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

/* ---------------------------------------------------------------- */
/* Table                                                             */

#define V G_MAXUINT

const IrOpDef clinfer_ir_ops_shape[] = {
  { "Concat", 1, 0, 1, V, 1, 1, tr_concat, NULL, 0 },
  { "Reshape", 1, 0, 2, 2, 1, 1, tr_reshape, NULL, 0 },
  { "Transpose", 1, 0, 2, 2, 1, 1, tr_transpose, NULL, 0 },
  { "Squeeze", 1, 0, 1, 2, 1, 1, tr_squeeze_like, "Squeeze", 13 },
  { "Unsqueeze", 1, 0, 2, 2, 1, 1, tr_squeeze_like, "Unsqueeze", 13 },
  { "ShapeOf", 1, 0, 1, 1, 1, 1, tr_shape_of, NULL, 0 },
  { "Convert", 1, 0, 1, 1, 1, 1, tr_convert, NULL, 0 },
  { "ConvertLike", 1, 0, 2, 2, 1, 1, tr_convert, NULL, 0 },
  { "Gather", 1, 0, 3, 3, 1, 1, tr_gather, NULL, 0 },
  { "Broadcast", 1, 0, 2, 3, 1, 1, tr_broadcast, NULL, 0 },
  { "Tile", 1, 0, 2, 2, 1, 1, tr_tile, NULL, 0 },
  { "Range", 1, 0, 3, 3, 1, 1, tr_range, NULL, 0 },
  { "Pad", 1, 0, 3, 4, 1, 1, tr_pad, NULL, 0 },
  { "Split", 1, 0, 2, 2, 1, V, tr_split, NULL, 0 },
  { "VariadicSplit", 1, 0, 3, 3, 1, V, tr_variadic_split, NULL, 0 },
  { "StridedSlice", 1, 0, 3, 4, 1, 1, tr_strided_slice, NULL, 0 },
  { "Slice", 8, 0, 4, 5, 1, 1, tr_slice, NULL, 0 },
  { "Reverse", 1, 0, 2, 2, 1, 1, tr_reverse, NULL, 0 },
  { NULL }
};
