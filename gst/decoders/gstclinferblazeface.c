/* decoder=blazeface: MediaPipe BlazeFace (short and full range) outputs to
 * "face" regions of interest with six key points.
 *
 * Outputs: raw scores [1, A, 1] and regressions [1, A, 16] for the anchors
 * of a 2-anchors-per-cell grid and of a 6-anchors-per-cell grid of half its
 * size (16x16x2 + 8x8x6 = 896 for both the 128 and the 256 model), either
 * as two score/regression pairs or as one concatenated pair. Anchors have
 * width = height = 1 (MediaPipe's fixed_anchor_size) and sit at cell
 * centres. The 16 regression values are, in model input pixels, the box
 * centre offset (x, y) from the anchor centre, its width and height, then
 * six key points as (x, y) offsets. Scores go through a sigmoid (logits
 * clipped to +-100) and boxes overlapping by IoU > 0.3 are merged by
 * MediaPipe's weighted non-maximum suppression (coordinates averaged with
 * the scores as weights; the merged box keeps the best score).
 *
 * Copyright (C) 2025 the clinfer authors
 * SPDX-License-Identifier: Apache-2.0
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "gstclinferdecoder.h"

#include <math.h>
#include <string.h>

#define N_COORDS 16
#define N_KEYPOINTS 6
#define SCORE_CLIP 100.0
#define MIN_SUPPRESSION_IOU 0.3

typedef struct
{
  gdouble score;
  gdouble box[4];               /* xmin, ymin, xmax, ymax, normalised */
  gdouble keypoints[2 * N_KEYPOINTS];   /* x, y normalised */
} Detection;

/* The score and regression outputs, paired by anchor count. */
typedef struct
{
  guint n_pairs;
  guint score_index[2], box_index[2];
  gint64 n_anchors[2];
  /* Anchor layers: grid size and anchors per cell. */
  gint grid[2], per_cell[2];
  gint64 layer_anchors[2];
} Layout;

static gboolean
find_layout (guint n_outputs, const ClinferShape * shapes, Layout * lay,
    GError ** error)
{
  guint i, n_scores = 0, n_boxes = 0;
  gint64 total;

  memset (lay, 0, sizeof (*lay));
  for (i = 0; i < n_outputs; i++) {
    const ClinferShape *s = &shapes[i];
    gint64 last;

    if (s->rank < 2)
      continue;
    last = s->dims[s->rank - 1];
    if (last == 1 && n_scores < 2) {
      lay->score_index[n_scores] = i;
      lay->n_anchors[n_scores++] = clinfer_shape_n_elements (s);
    } else if (last == N_COORDS && n_boxes < 2) {
      lay->box_index[n_boxes++] = i;
    }
  }
  if (n_scores == 0 || n_scores != n_boxes)
    goto bad_outputs;
  lay->n_pairs = n_scores;
  for (i = 0; i < lay->n_pairs; i++) {
    gint64 nb = clinfer_shape_n_elements (&shapes[lay->box_index[i]]);

    if (lay->n_anchors[i] <= 0 || nb != lay->n_anchors[i] * N_COORDS)
      goto bad_outputs;
  }

  if (lay->n_pairs == 2) {
    lay->grid[0] = (gint) lround (sqrt (lay->n_anchors[0] / 2.0));
    lay->grid[1] = (gint) lround (sqrt (lay->n_anchors[1] / 6.0));
  } else {
    /* One concatenated output: 2 g^2 + 6 (g / 2)^2 = 3.5 g^2 anchors. */
    lay->grid[0] = (gint) lround (sqrt (lay->n_anchors[0] / 3.5));
    lay->grid[1] = lay->grid[0] / 2;
  }
  lay->per_cell[0] = 2;
  lay->per_cell[1] = 6;
  total = 0;
  for (i = 0; i < 2; i++) {
    lay->layer_anchors[i] = (gint64) lay->grid[i] * lay->grid[i]
        * lay->per_cell[i];
    total += lay->layer_anchors[i];
  }
  if (total != lay->n_anchors[0] + lay->n_anchors[1] || lay->grid[0] <= 0
      || (lay->n_pairs == 2 && lay->layer_anchors[0] != lay->n_anchors[0]))
    goto bad_anchors;
  return TRUE;

bad_outputs:
  g_set_error (error, GST_LIBRARY_ERROR, GST_LIBRARY_ERROR_SETTINGS,
      "decoder 'blazeface' expects score outputs [1, A, 1] and box outputs "
      "[1, A, 16] in pairs (BlazeFace), the model has %u outputs that do not "
      "fit", n_outputs);
  return FALSE;

bad_anchors:
  g_set_error (error, GST_LIBRARY_ERROR, GST_LIBRARY_ERROR_SETTINGS,
      "decoder 'blazeface': %" G_GINT64_FORMAT " + %" G_GINT64_FORMAT
      " anchors do not form a g x g x 2 grid followed by a (g/2) x (g/2) x 6 "
      "grid", lay->n_anchors[0], lay->n_anchors[1]);
  return FALSE;
}

gboolean
gst_clinfer_blazeface_check (ClinferCompiled * compiled, GError ** error)
{
  guint i, n = clinfer_compiled_get_n_outputs (compiled);
  g_autofree ClinferShape *shapes = g_new0 (ClinferShape, MAX (n, 1));
  Layout lay;

  for (i = 0; i < n; i++) {
    ClinferPortInfo info;

    clinfer_compiled_get_output (compiled, i, &info);
    if (!clinfer_shape_is_static (&info.shape))
      return TRUE;              /* checked on the first frame */
    shapes[i] = info.shape;
  }
  return find_layout (n, shapes, &lay, error);
}

static void
anchor_centre (const Layout * lay, gint64 a, gdouble * cx, gdouble * cy)
{
  gint layer = a < lay->layer_anchors[0] ? 0 : 1;
  gint64 cell;
  gint g = lay->grid[layer];

  if (layer == 1)
    a -= lay->layer_anchors[0];
  cell = a / lay->per_cell[layer];
  *cx = ((cell % g) + 0.5) / g;
  *cy = ((cell / g) + 0.5) / g;
}

/* The score logit of global anchor @a: straight from the f32 data when
 * @f32 (per pair of outputs, NULL where not f32) has it, the common case,
 * which keeps the per-anchor scan free of calls. */
static inline gdouble
read_score (const GstClinferDecodeContext * ctx, const Layout * lay,
    const gfloat * const *f32, gint64 a)
{
  guint pair = 0;

  if (lay->n_pairs == 2 && a >= lay->n_anchors[0]) {
    a -= lay->n_anchors[0];
    pair = 1;
  }
  if (f32[pair] != NULL)
    return f32[pair][a];
  return gst_clinfer_tensor_get_value (gst_clinfer_tensor_meta_get_tensor
      (ctx->meta, lay->score_index[pair]), a);
}

/* Element @i of the score (@box FALSE) or box data of global anchor @a. */
static gdouble
read_value (const GstClinferDecodeContext * ctx, const Layout * lay,
    gboolean box, gint64 a, gint k)
{
  guint pair = 0;
  const GstClinferTensor *t;

  if (lay->n_pairs == 2 && a >= lay->n_anchors[0]) {
    a -= lay->n_anchors[0];
    pair = 1;
  }
  t = gst_clinfer_tensor_meta_get_tensor (ctx->meta,
      box ? lay->box_index[pair] : lay->score_index[pair]);
  return gst_clinfer_tensor_get_value (t, box ? a * N_COORDS + k : a);
}

static gdouble
iou (const gdouble * a, const gdouble * b)
{
  gdouble ix = MIN (a[2], b[2]) - MAX (a[0], b[0]);
  gdouble iy = MIN (a[3], b[3]) - MAX (a[1], b[1]);
  gdouble inter, uni;

  if (ix <= 0 || iy <= 0)
    return 0;
  inter = ix * iy;
  uni = (a[2] - a[0]) * (a[3] - a[1]) + (b[2] - b[0]) * (b[3] - b[1]) - inter;
  return uni > 0 ? inter / uni : 0;
}

static gint
compare_score (gconstpointer a, gconstpointer b)
{
  gdouble sa = ((const Detection *) a)->score;
  gdouble sb = ((const Detection *) b)->score;

  return sa < sb ? 1 : (sa > sb ? -1 : 0);
}

/* MediaPipe's WEIGHTED non-maximum suppression, in place on the sorted
 * @dets; returns the number kept. */
static guint
weighted_nms (Detection * dets, guint n)
{
  g_autofree gboolean *used = g_new0 (gboolean, MAX (n, 1));
  guint i, j, k, n_out = 0;

  for (i = 0; i < n; i++) {
    Detection merged;
    gdouble total = 0;

    if (used[i])
      continue;
    memset (&merged, 0, sizeof (merged));
    for (j = i; j < n; j++) {
      gdouble s;

      if (used[j] || iou (dets[i].box, dets[j].box) <= MIN_SUPPRESSION_IOU)
        continue;
      used[j] = TRUE;
      s = dets[j].score;
      total += s;
      for (k = 0; k < 4; k++)
        merged.box[k] += dets[j].box[k] * s;
      for (k = 0; k < 2 * N_KEYPOINTS; k++)
        merged.keypoints[k] += dets[j].keypoints[k] * s;
    }
    /* dets[i] overlaps itself unless its box is empty. */
    if (total > 0) {
      for (k = 0; k < 4; k++)
        merged.box[k] /= total;
      for (k = 0; k < 2 * N_KEYPOINTS; k++)
        merged.keypoints[k] /= total;
    } else {
      merged = dets[i];
    }
    used[i] = TRUE;
    merged.score = dets[i].score;
    dets[n_out++] = merged;
  }
  return n_out;
}

static void
attach (const GstClinferDecodeContext * ctx, const Detection * d)
{
  const ClinferPreprocessGeometry *g = ctx->geometry;
  GValue array = G_VALUE_INIT, v = G_VALUE_INIT;
  GstStructure *s;
  const gchar *label = gst_clinfer_decoder_get_label (ctx, 0);
  gint k;

  g_value_init (&array, GST_TYPE_ARRAY);
  g_value_init (&v, G_TYPE_DOUBLE);
  for (k = 0; k < N_KEYPOINTS; k++) {
    gdouble fx, fy;

    clinfer_preprocess_geometry_model_to_frame (g,
        d->keypoints[2 * k] * g->model_width,
        d->keypoints[2 * k + 1] * g->model_height, &fx, &fy);
    g_value_set_double (&v, fx);
    gst_value_array_append_value (&array, &v);
    g_value_set_double (&v, fy);
    gst_value_array_append_value (&array, &v);
  }
  g_value_unset (&v);

  s = gst_structure_new ("detection", "confidence", G_TYPE_DOUBLE, d->score,
      "label_id", G_TYPE_INT, 0, "label", G_TYPE_STRING,
      label != NULL ? label : "face", NULL);
  gst_structure_take_value (s, "keypoints", &array);
  gst_clinfer_decoder_add_roi (ctx, "face", d->box[0] * g->model_width,
      d->box[1] * g->model_height, d->box[2] * g->model_width,
      d->box[3] * g->model_height, s);
}

gboolean
gst_clinfer_blazeface_decode (const GstClinferDecodeContext * ctx,
    GError ** error)
{
  const ClinferPreprocessGeometry *g = ctx->geometry;
  guint n_outputs = gst_clinfer_tensor_meta_get_n_tensors (ctx->meta);
  g_autofree ClinferShape *shapes = g_new0 (ClinferShape, MAX (n_outputs, 1));
  g_autoptr (GArray) dets = NULL;
  Layout lay;
  const gfloat *scores_f32[2];
  gint64 a, n_anchors;
  guint i, n_kept;
  gdouble min_raw;

  for (i = 0; i < n_outputs; i++)
    shapes[i] = gst_clinfer_decoder_tensor_shape
        (gst_clinfer_tensor_meta_get_tensor (ctx->meta, i));
  if (!find_layout (n_outputs, shapes, &lay, error))
    return FALSE;

  for (i = 0; i < 2; i++) {
    const GstClinferTensor *t = i < lay.n_pairs
        ? gst_clinfer_tensor_meta_get_tensor (ctx->meta, lay.score_index[i])
        : NULL;

    scores_f32[i] = t != NULL
        && t->data_type == GST_CLINFER_TENSOR_DATA_TYPE_F32
        ? gst_clinfer_tensor_get_data (t, NULL) : NULL;
  }
  dets = g_array_new (FALSE, TRUE, sizeof (Detection));
  n_anchors = lay.n_anchors[0] + lay.n_anchors[1];
  /* Most anchors score far below the threshold: comparing the logit with
   * the threshold's (with a margin for rounding) skips their exp(). */
  min_raw = ctx->threshold > 0 && ctx->threshold < 1
      ? log (ctx->threshold / (1.0 - ctx->threshold)) - 1e-6 : -G_MAXDOUBLE;
  for (a = 0; a < n_anchors; a++) {
    gdouble raw = read_score (ctx, &lay, scores_f32, a);
    gdouble score, acx, acy, cx, cy, w, h;
    Detection d;
    gint k;

    if (raw < min_raw)
      continue;
    raw = CLAMP (raw, -SCORE_CLIP, SCORE_CLIP);
    score = 1.0 / (1.0 + exp (-raw));
    if (!(score >= ctx->threshold))
      continue;
    anchor_centre (&lay, a, &acx, &acy);
    cx = acx + read_value (ctx, &lay, TRUE, a, 0) / g->model_width;
    cy = acy + read_value (ctx, &lay, TRUE, a, 1) / g->model_height;
    w = read_value (ctx, &lay, TRUE, a, 2) / g->model_width;
    h = read_value (ctx, &lay, TRUE, a, 3) / g->model_height;
    d.score = score;
    d.box[0] = cx - w / 2;
    d.box[1] = cy - h / 2;
    d.box[2] = cx + w / 2;
    d.box[3] = cy + h / 2;
    for (k = 0; k < N_KEYPOINTS; k++) {
      d.keypoints[2 * k] = acx
          + read_value (ctx, &lay, TRUE, a, 4 + 2 * k) / g->model_width;
      d.keypoints[2 * k + 1] = acy
          + read_value (ctx, &lay, TRUE, a, 5 + 2 * k) / g->model_height;
    }
    g_array_append_val (dets, d);
  }

  g_array_sort (dets, compare_score);
  n_kept = weighted_nms ((Detection *) (gpointer) dets->data, dets->len);
  for (i = 0; i < n_kept; i++)
    attach (ctx, &g_array_index (dets, Detection, i));
  return TRUE;
}
