/* clinfer — pass fold-space-to-depth: YOLOv5's and YOLOX's "Focus"
 * stem takes every s-th row and column of the image at each of the s * s
 * offsets (Slices), concatenates the s * s pieces on the channels and
 * convolves the result at stride 1. That Conv reads image pixel
 *   x[c, s * Y + dy, s * X + dx]   as channel (i, c) of the concatenation,
 * piece i being the one at offset (dy, dx), so it is one Conv on the
 * image itself with an s-times larger kernel at stride s:
 *   W'[m, c, s * ky + dy, s * kx + dx] = W[m, i * C + c, ky, kx],
 * pads times s, the same bias. The Slices and the Concat (ddddocr-det:
 * 1.8 ms of 65 ms, two copies of the image) go, and the Conv runs on the
 * device's fast path instead of on 12 channels of strided copies. Folded
 * when:
 *   - the Conv is the built-in op on rank-4 f32 data with constant
 *     weights, group 1, strides and dilations 1, auto_pad NOTSET;
 *   - its data input is a Concat on axis 1 read only by it, of s * s
 *     pieces at distinct offsets (dy, dx) of one tensor x [N, C, H, W]
 *     with H and W multiples of s (s >= 2, H / s and W / s >= 2);
 *   - each piece is a chain of one or more Slices with constant
 *     parameters, each read only by the next (a Slice read by several
 *     pieces, or by other nodes, is the sliced tensor), that together keep every
 *     batch and channel and take rows dy, dy + s, ... and columns dx,
 *     dx + s, ... to the end.
 * Compile only: the new Conv computes the same sums in another order. */
#include "passes/conv-affine.h"
#include "ops/conv.h"
#include "ops/slice.h"
#include <string.h>

/* Largest s folded: the new kernel has s * s times the old one's taps per
 * input channel, the same work. */
#define MAX_STEP 8

typedef struct {
  int64_t start[4], step[4], len[4];
} Piece;

/* The composed slice of the chain of Slices ending at @ref over its root
 * tensor (*@root), each Slice read only by the next (or the Concat); the
 * walk stops below a Slice that other nodes read too. */
static gboolean
trace_piece (const ClinferGraph *graph, ClinferPortRef ref, Piece *p,
    ClinferPortRef *root, GPtrArray *chain)
{
  gboolean any = FALSE;

  for (int d = 0; d < 4; d++) {
    p->start[d] = 0;
    p->step[d] = 1;
    p->len[d] = -1;          /* not set yet */
  }
  /* Walk up from the Concat: each Slice maps the composed slice below it
   * through its own one. */
  while (clinfer_pass_is_op (ref.node, "Slice") && ref.port == 0) {
    ClinferNode *s = ref.node;
    ClinferPortDesc *x = clinfer_node_input_desc (s, 0);
    const ClinferTensor *vals[5] = { NULL };
    ClinferSliceParams sp;
    gboolean known = FALSE;

    /* A Slice that other nodes read too is the tensor sliced. */
    if (any && clinfer_graph_count_uses (graph, ref) != 1)
      break;
    if (x == NULL || x->shape.rank != 4 || !clinfer_shape_is_static (&x->shape)
        || clinfer_graph_count_uses (graph, ref) != 1)
      return FALSE;
    for (guint i = 1; i < MIN (s->n_inputs, 5); i++) {
      ClinferPortDesc *d = clinfer_node_input_desc (s, i);
      if (d && d->value == NULL)
        return FALSE;
      vals[i] = d ? d->value : NULL;
    }
    if (!clinfer_slice_params (s, &x->shape, vals, &sp, &known, NULL)
        || !known)
      return FALSE;
    /* Index j of this Slice's output is sp.start + sp.step * j of its
     * input (sp.step is 1 where a dim keeps one element; dims within
     * G_MAXINT32 and steps within MAX_STEP keep the products in range). */
    for (int d = 0; d < 4; d++) {
      if (sp.len[d] < 1 || x->shape.dims[d] > G_MAXINT32 || sp.step[d] < 1
          || sp.step[d] > MAX_STEP)
        return FALSE;
      if (p->len[d] < 0)
        p->len[d] = sp.len[d];
      p->start[d] = sp.start[d] + sp.step[d] * p->start[d];
      p->step[d] *= sp.step[d];
      if (p->step[d] > MAX_STEP)
        return FALSE;
    }
    g_ptr_array_add (chain, s);
    any = TRUE;
    ref = s->inputs[0];
  }
  *root = ref;
  return any && ref.node != NULL;
}

/* The Concat @cat's pieces as offsets @dy / @dx (s * s of them) of one
 * tensor *@root with step *@s; @chain is emptied, then holds the Slices. */
static gboolean
match_pieces (const ClinferGraph *graph, const ClinferNode *cat,
    ClinferPortRef *root, int64_t *s, int64_t *dy, int64_t *dx,
    GPtrArray *chain)
{
  gboolean seen[MAX_STEP * MAX_STEP] = { FALSE };
  ClinferPortDesc *xd;

  g_ptr_array_set_size (chain, 0);

  for (guint i = 0; i < cat->n_inputs; i++) {
    ClinferPortRef r;
    Piece p;

    if (!trace_piece (graph, cat->inputs[i], &p, &r, chain)
        || (i > 0 && !clinfer_pass_same_port (r, *root)))
      return FALSE;
    *root = r;
    xd = r.node ? &r.node->outputs[r.port] : NULL;
    if (xd == NULL || xd->type != CLINFER_TYPE_F32 || xd->shape.rank != 4)
      return FALSE;
    if (i == 0)
      *s = p.step[2];
    /* Every batch and channel; rows and columns at step s to the end. */
    for (int d = 0; d < 2; d++)
      if (p.start[d] != 0 || p.len[d] != xd->shape.dims[d]
          || (p.len[d] > 1 && p.step[d] != 1))
        return FALSE;
    for (int d = 2; d < 4; d++)
      if (p.step[d] != *s || *s < 2 || xd->shape.dims[d] % *s != 0
          || p.len[d] != xd->shape.dims[d] / *s || p.len[d] < 2
          || p.start[d] < 0 || p.start[d] >= *s)
        return FALSE;
    dy[i] = p.start[2];
    dx[i] = p.start[3];
    if (seen[dy[i] * *s + dx[i]])
      return FALSE;
    seen[dy[i] * *s + dx[i]] = TRUE;
  }
  return cat->n_inputs == (guint) (*s * *s);
}

/* @conv's window attributes when it is a plain stride-1 Conv. */
static gboolean
plain_conv (const ClinferNode *conv, ClinferWindowAttrs *a)
{
  int64_t group = 0;

  if (!clinfer_window_attrs_parse (conv, FALSE, a, NULL)
      || a->auto_pad != CLINFER_AUTO_PAD_NOTSET
      || (a->n_pads != 0 && a->n_pads != 4)
      || !clinfer_conv_group_attr (conv, &group, NULL) || group != 1)
    return FALSE;
  for (gsize i = 0; i < a->n_strides; i++)
    if (a->strides[i] != 1)
      return FALSE;
  for (gsize i = 0; i < a->n_dilations; i++)
    if (a->dilations[i] != 1)
      return FALSE;
  return TRUE;
}

static gboolean
fold (ClinferGraph *graph, ClinferNode *conv, ClinferNode *cat,
    ClinferPortRef root, int64_t s, const int64_t *dy, const int64_t *dx,
    const ClinferWindowAttrs *a, GPtrArray *nodes, GHashTable *removed,
    GError **error)
{
  const ClinferTensor *w = clinfer_conv_affine_const_f32 (conv, 1, -1);
  const ClinferShape *ws = clinfer_tensor_get_shape (w);
  int64_t m = ws->dims[0], kh = ws->dims[2], kw = ws->dims[3];
  int64_t c = root.node->outputs[root.port].shape.dims[1];
  int64_t nd[4] = { m, c, s * kh, s * kw };
  ClinferShape ns = clinfer_shape_make (4, nd);
  g_autoptr (ClinferTensor) w2 = clinfer_tensor_new (CLINFER_TYPE_F32, &ns,
      error);
  g_autofree char *wname = g_strdup_printf ("%s/space_to_depth_w",
      conv->outputs[0].name);
  const float *src = clinfer_tensor_get_const_data (w);
  int64_t pads[4] = { 0 }, strides[2] = { s, s }, ones[2] = { 1, 1 };
  int64_t kernel[2] = { s * kh, s * kw };
  ClinferNode *f, *wn;
  float *dst;

  if (w2 == NULL)
    return FALSE;
  /* The s * s distinct offsets write every weight once. */
  dst = clinfer_tensor_get_data (w2);
  for (int64_t o = 0; o < m; o++)
    for (guint i = 0; i < cat->n_inputs; i++)
      for (int64_t ch = 0; ch < c; ch++)
        for (int64_t ky = 0; ky < kh; ky++)
          for (int64_t kx = 0; kx < kw; kx++)
            dst[((o * c + ch) * s * kh + s * ky + dy[i]) * s * kw
                + s * kx + dx[i]] =
                src[((o * ws->dims[1] + i * c + ch) * kh + ky) * kw + kx];
  for (int i = 0; i < 4 && a->n_pads == 4; i++)
    pads[i] = s * a->pads[i];
  wn = clinfer_graph_add_constant (graph, wname, w2);
  f = clinfer_graph_add_node (graph, "Conv", "", conv->name, conv->n_inputs,
      1);
  f->opset = conv->opset;
  clinfer_node_copy_attrs (conv, f);
  clinfer_node_set_attr (f, "kernel_shape", clinfer_attr_new_ints (kernel, 2));
  clinfer_node_set_attr (f, "strides", clinfer_attr_new_ints (strides, 2));
  clinfer_node_set_attr (f, "dilations", clinfer_attr_new_ints (ones, 2));
  clinfer_node_set_attr (f, "pads", clinfer_attr_new_ints (pads, 4));
  for (guint i = 0; i < conv->n_inputs; i++)
    f->inputs[i] = conv->inputs[i];
  f->inputs[0] = root;
  f->inputs[1] = (ClinferPortRef) { wn, 0 };
  g_ptr_array_add (nodes, conv);
  g_ptr_array_add (nodes, cat);
  return clinfer_pass_replace_pattern (graph, conv, f, nodes, removed, error);
}

gboolean
clinfer_pass_fold_space_to_depth (ClinferGraph *graph,
    const ClinferPassContext *ctx, gboolean *changed, GError **error)
{
  g_autoptr (GPtrArray) order = clinfer_graph_topological_order (graph, error);
  g_autoptr (GHashTable) removed = g_hash_table_new (NULL, NULL);
  g_autoptr (GPtrArray) chain = g_ptr_array_new ();

  (void) ctx;
  if (order == NULL)
    return FALSE;
  for (guint i = 0; i < order->len; i++) {
    ClinferNode *conv = g_ptr_array_index (order, i), *cat;
    int64_t dy[MAX_STEP * MAX_STEP], dx[MAX_STEP * MAX_STEP], s = 0, axis = 0;
    ClinferPortDesc *cd, *wd;
    ClinferPortRef root = { NULL, 0 };
    ClinferWindowAttrs a;

    if (g_hash_table_contains (removed, conv)
        || !clinfer_pass_is_op (conv, "Conv") || conv->n_outputs != 1
        || conv->n_inputs < 2 || (cat = conv->inputs[0].node) == NULL
        || !clinfer_pass_is_op (cat, "Concat") || cat->n_inputs < 4
        || cat->n_inputs > MAX_STEP * MAX_STEP
        || (cd = &cat->outputs[0])->type != CLINFER_TYPE_F32
        || cd->shape.rank != 4 || !clinfer_shape_is_static (&cd->shape)
        || clinfer_graph_count_uses (graph, conv->inputs[0]) != 1
        || !clinfer_node_attr_int (cat, "axis", 0, &axis, NULL)
        || (axis != 1 && axis != -3)
        || clinfer_conv_affine_const_f32 (conv, 1, -1) == NULL
        || (wd = clinfer_node_input_desc (conv, 1))->shape.rank != 4
        || wd->shape.dims[1] != cd->shape.dims[1]
        || !plain_conv (conv, &a)
        || !match_pieces (graph, cat, &root, &s, dy, dx, chain))
      continue;
    if (!fold (graph, conv, cat, root, s, dy, dx, &a, chain, removed, error))
      return FALSE;
    *changed = TRUE;
  }
  return TRUE;
}
