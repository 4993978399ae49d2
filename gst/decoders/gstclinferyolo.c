/* YOLO detection outputs, the two layouts exporters write:
 *
 * - YOLOv5 / v7: [1, N, 5 + C], rows (cx, cy, w, h, objectness, C class
 *   scores); a box's score is objectness x its best class score;
 * - YOLOv8 / v11: [1, 4 + C, N], columns (cx, cy, w, h, C class scores),
 *   no objectness.
 *
 * Which one: the candidates outnumber the values per candidate (thousands
 * against 5 + C), so [1, A, B] with A > B is v5's, A < B v8's. Boxes are
 * centre and size in model pixels; those scoring at least threshold go
 * through non-maximum suppression per class (IoU above iou-threshold: the
 * lower score goes), at most MAX_CANDIDATES of the best beforehand.
 *
 * Copyright (C) 2025 the clinfer authors
 * SPDX-License-Identifier: Apache-2.0
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "gstclinferdecoder.h"

#include <math.h>

/* Candidates kept for NMS (the best scores): bounds its quadratic cost
 * when a low threshold lets thousands through. */
#define MAX_CANDIDATES 4096

typedef struct
{
  gdouble x0, y0, x1, y1;
  gdouble score;
  gint class_id;
  gboolean suppressed;
} Candidate;

/* The layout of a YOLO output of @shape: *@n candidates of *@values
 * values each, *@transposed for v8's [1, 4 + C, N]. */
static gboolean
yolo_layout (const ClinferShape * shape, gint64 * n, gint64 * values,
    gboolean * transposed, GError ** error)
{
  gint64 a, b;
  g_autofree gchar *text = NULL;

  if (shape->rank == 3 && shape->dims[0] == 1) {
    a = shape->dims[1];
    b = shape->dims[2];
  } else if (shape->rank == 2) {
    a = shape->dims[0];
    b = shape->dims[1];
  } else {
    goto bad_shape;
  }
  *transposed = a < b;
  *n = *transposed ? b : a;
  *values = *transposed ? a : b;
  /* v8: 4 box values and a class at least; v5: 5 and a class. */
  if (*values < (*transposed ? 5 : 6) || *n < 1)
    goto bad_shape;
  return TRUE;

bad_shape:
  text = clinfer_shape_to_string (shape);
  g_set_error (error, GST_LIBRARY_ERROR, GST_LIBRARY_ERROR_SETTINGS,
      "decoder 'yolo' needs a first output [1, N, 5 + classes] (YOLOv5/v7) "
      "or [1, 4 + classes, N] (YOLOv8/v11) with at least one class; got %s",
      text);
  return FALSE;
}

gboolean
gst_clinfer_yolo_check (ClinferCompiled * compiled, GError ** error)
{
  ClinferShape shape;
  gint64 n, values;
  gboolean transposed;

  return !gst_clinfer_decoder_static_output (compiled, &shape)
      || yolo_layout (&shape, &n, &values, &transposed, error);
}

static gint
compare_score (gconstpointer a, gconstpointer b)
{
  const Candidate *x = a, *y = b;

  return x->score < y->score ? 1 : x->score > y->score ? -1 : 0;
}

gboolean
gst_clinfer_yolo_decode (const GstClinferDecodeContext * ctx, GError ** error)
{
  const GstClinferTensor *t =
      gst_clinfer_tensor_meta_get_tensor (ctx->meta, 0);
  g_autoptr (GArray) cands = NULL;
  ClinferShape shape;
  gint64 n, values, i, c;
  gboolean transposed;
  const gfloat *f32 = NULL;
  guint a, b;

  if (t == NULL) {
    g_set_error (error, GST_STREAM_ERROR, GST_STREAM_ERROR_DECODE,
        "the model has no output to decode");
    return FALSE;
  }
  shape = gst_clinfer_decoder_tensor_shape (t);
  if (!yolo_layout (&shape, &n, &values, &transposed, error))
    return FALSE;

  if (gst_clinfer_tensor_get_n_elements (t) < (gsize) (n * values)) {
    g_set_error (error, GST_STREAM_ERROR, GST_STREAM_ERROR_DECODE,
        "decoder 'yolo': the output holds fewer values than its shape says");
    return FALSE;
  }
  if (t->data_type == GST_CLINFER_TENSOR_DATA_TYPE_F32
      && g_bytes_get_size (t->data) >= (gsize) (n * values) * sizeof (gfloat))
    f32 = g_bytes_get_data (t->data, NULL);
  cands = g_array_new (FALSE, FALSE, sizeof (Candidate));
  for (i = 0; i < n; i++) {
    /* Value k of candidate i (f32 read directly: v8's 8400 x 84). */
#define V(k) (f32 != NULL ? (gdouble) f32[transposed \
        ? (gint64) (k) * n + i : i * values + (k)] \
        : gst_clinfer_tensor_get_value (t, transposed \
        ? (gint64) (k) * n + i : i * values + (k)))
    gint64 first = transposed ? 4 : 5;
    gdouble obj = transposed ? 1.0 : V (4), best = -INFINITY, cx, cy, w, h;
    gint64 best_c = 0;
    Candidate cand;

    if (!transposed && !(obj >= ctx->threshold))
      continue;                 /* obj x score <= obj */
    for (c = first; c < values; c++) {
      gdouble s = V (c);

      if (s > best) {
        best = s;
        best_c = c - first;
      }
    }
    cand.score = obj * best;
    if (!(cand.score >= ctx->threshold))
      continue;
    cx = V (0);
    cy = V (1);
    w = V (2);
    h = V (3);
#undef V
    if (!isfinite (cx) || !isfinite (cy) || !isfinite (w) || !isfinite (h))
      continue;
    cand.x0 = cx - w / 2;
    cand.y0 = cy - h / 2;
    cand.x1 = cx + w / 2;
    cand.y1 = cy + h / 2;
    cand.class_id = (gint) MIN (best_c, G_MAXINT);
    cand.suppressed = FALSE;
    g_array_append_val (cands, cand);
  }
  g_array_sort (cands, compare_score);
  if (cands->len > MAX_CANDIDATES)
    g_array_set_size (cands, MAX_CANDIDATES);

  for (a = 0; a < cands->len; a++) {
    Candidate *ca = &g_array_index (cands, Candidate, a);
    g_autofree gchar *fallback = NULL;
    const gchar *label;
    GstStructure *s;

    if (ca->suppressed)
      continue;
    for (b = a + 1; b < cands->len; b++) {
      Candidate *cb = &g_array_index (cands, Candidate, b);

      if (!cb->suppressed && cb->class_id == ca->class_id
          && gst_clinfer_box_iou (ca->x0, ca->y0, ca->x1, ca->y1, cb->x0,
              cb->y0, cb->x1, cb->y1) > ctx->iou_threshold)
        cb->suppressed = TRUE;
    }
    label = gst_clinfer_decoder_get_label (ctx, ca->class_id);
    if (label == NULL)
      label = fallback = g_strdup_printf ("class%d", ca->class_id);
    s = gst_structure_new ("detection", "confidence", G_TYPE_DOUBLE,
        ca->score, "label_id", G_TYPE_INT, ca->class_id, "label",
        G_TYPE_STRING, label, NULL);
    gst_clinfer_decoder_add_roi (ctx, label, ca->x0, ca->y0, ca->x1, ca->y1,
        s);
  }
  return TRUE;
}
