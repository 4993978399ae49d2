/* Text detection (DB, "Differentiable Binarization": PP-OCR's detector):
 * the first output is a [1, 1, H, W] map of text probability over the
 * model input. Pixels above 0.3 form the text mask, dilated by a 2x2
 * square; each 8-connected piece of it becomes the smallest rotated
 * rectangle around it, kept when its shorter side is at least 3 pixels and
 * the mean probability inside it at least threshold, then grown by
 * area x 1.6 / perimeter on every side (the "unclip" that gives the text
 * back the margin the map shrank) and kept when its shorter side is then
 * at least 5. The values are PaddleOCR's and RapidOCR's defaults.
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

#define BITMAP_THRESHOLD 0.3
#define UNCLIP_RATIO 1.6
#define MIN_SIDE 3.0
#define MAX_CANDIDATES 1000
/* Dynamic model sizes: the short side at least this (PP-OCR's
 * limit_side_len, limit_type "min"), each side a multiple of 32. */
#define LIMIT_SIDE 736

typedef struct
{
  gdouble x, y;
} Point;

/* A rotated rectangle: its corners, top-left, top-right, bottom-right,
 * bottom-left as PaddleOCR orders them, and its sides. */
typedef struct
{
  Point p[4];
  gdouble w, h;
} Box;

static gboolean
textdet_layout (const ClinferShape * shape, gint64 * h, gint64 * w,
    GError ** error)
{
  g_autofree gchar *text = NULL;

  if (shape->rank == 4 && shape->dims[0] == 1 && shape->dims[1] == 1) {
    *h = shape->dims[2];
    *w = shape->dims[3];
  } else if (shape->rank == 3 && shape->dims[0] == 1) {
    *h = shape->dims[1];
    *w = shape->dims[2];
  } else {
    *h = *w = 0;
  }
  if (*h >= 1 && *w >= 1)
    return TRUE;
  text = clinfer_shape_to_string (shape);
  g_set_error (error, GST_LIBRARY_ERROR, GST_LIBRARY_ERROR_SETTINGS,
      "decoder 'text-detection' needs a first output [1, 1, H, W] (a text "
      "probability map); got %s", text);
  return FALSE;
}

gboolean
gst_clinfer_textdet_check (ClinferCompiled * compiled, GError ** error)
{
  ClinferShape shape;
  gint64 h, w;

  return !gst_clinfer_decoder_static_output (compiled, &shape)
      || textdet_layout (&shape, &h, &w, error);
}

void
gst_clinfer_textdet_model_size (gint frame_width, gint frame_height,
    gint64 * width, gint64 * height)
{
  gdouble ratio = 1.0;
  gint m = MIN (frame_width, frame_height);

  if (m < LIMIT_SIDE)
    ratio = (gdouble) LIMIT_SIDE / MAX (m, 1);
  *width = MAX ((gint64) lround ((gint64) (frame_width * ratio) / 32.0) * 32,
      32);
  *height = MAX ((gint64) lround ((gint64) (frame_height * ratio) / 32.0)
      * 32, 32);
}

static gint64
cross (const Point * o, const Point * a, const Point * b)
{
  return (gint64) ((a->x - o->x) * (b->y - o->y) - (a->y - o->y) * (b->x
          - o->x));
}

static gint
compare_points (gconstpointer a, gconstpointer b)
{
  const Point *p = a, *q = b;

  if (p->x != q->x)
    return p->x < q->x ? -1 : 1;
  return p->y < q->y ? -1 : p->y > q->y;
}

/* Convex hull of @pts (sorted in place), counter-clockwise, into @hull
 * (room for n + 1); returns its size. */
static guint
convex_hull (Point * pts, guint n, Point * hull)
{
  guint k = 0, i, t;

  qsort (pts, n, sizeof (Point), compare_points);
  if (n < 3) {
    memcpy (hull, pts, n * sizeof (Point));
    return n;
  }
  for (i = 0; i < n; i++) {
    while (k >= 2 && cross (&hull[k - 2], &hull[k - 1], &pts[i]) <= 0)
      k--;
    hull[k++] = pts[i];
  }
  for (i = n - 1, t = k + 1; i-- > 0;) {
    while (k >= t && cross (&hull[k - 2], &hull[k - 1], &pts[i]) <= 0)
      k--;
    hull[k++] = pts[i];
  }
  return k - 1;
}

/* The smallest rectangle around @hull (rotating calipers: one of its
 * sides lies on a hull edge), corners in PaddleOCR's order. */
static void
min_area_box (const Point * hull, guint n, Box * box)
{
  gdouble best = INFINITY;
  Point c[4];
  guint e, i;

  /* A single point (or all at one place): an empty box there. */
  for (i = 0; i < 4; i++)
    c[i] = hull[0];
  box->w = box->h = 0;
  for (e = 0; e < n && n > 1; e++) {
    const Point *a = &hull[e], *b = &hull[(e + 1) % n];
    gdouble dx = b->x - a->x, dy = b->y - a->y, len = hypot (dx, dy);
    gdouble ux, uy, umin = INFINITY, umax = -INFINITY, vmin = INFINITY,
        vmax = -INFINITY, area;

    if (len == 0)
      continue;
    ux = dx / len;
    uy = dy / len;
    for (i = 0; i < n; i++) {
      gdouble u = (hull[i].x - a->x) * ux + (hull[i].y - a->y) * uy;
      gdouble v = -(hull[i].x - a->x) * uy + (hull[i].y - a->y) * ux;

      umin = MIN (umin, u);
      umax = MAX (umax, u);
      vmin = MIN (vmin, v);
      vmax = MAX (vmax, v);
    }
    area = (umax - umin) * (vmax - vmin);
    if (area < best) {
      best = area;
      box->w = umax - umin;
      box->h = vmax - vmin;
      c[0].x = a->x + umin * ux - vmin * uy;
      c[0].y = a->y + umin * uy + vmin * ux;
      c[1].x = a->x + umax * ux - vmin * uy;
      c[1].y = a->y + umax * uy + vmin * ux;
      c[2].x = a->x + umax * ux - vmax * uy;
      c[2].y = a->y + umax * uy + vmax * ux;
      c[3].x = a->x + umin * ux - vmax * uy;
      c[3].y = a->y + umin * uy + vmax * ux;
    }
  }
  /* PaddleOCR's order: by x, then the upper of the two left points first,
   * the upper right next, the lower right, the lower left. */
  qsort (c, 4, sizeof (Point), compare_points);
  {
    Point l0 = c[0], l1 = c[1], r0 = c[2], r1 = c[3];

    box->p[0] = l1.y > l0.y ? l0 : l1;
    box->p[3] = l1.y > l0.y ? l1 : l0;
    box->p[1] = r1.y > r0.y ? r0 : r1;
    box->p[2] = r1.y > r0.y ? r1 : r0;
  }
}

/* Grows @box by @d on every side (same centre and angle). */
static void
grow_box (Box * box, gdouble d)
{
  Point centre = { 0, 0 };
  guint i;

  for (i = 0; i < 4; i++) {
    centre.x += box->p[i].x / 4;
    centre.y += box->p[i].y / 4;
  }
  /* Each corner's offset from the centre, in the basis of the two edges
   * from p[0] (to p[1] and to p[3]), grows along each so that both sides
   * gain 2d. */
  {
    gdouble ax = box->p[1].x - box->p[0].x, ay = box->p[1].y - box->p[0].y;
    gdouble bx = box->p[3].x - box->p[0].x, by = box->p[3].y - box->p[0].y;
    gdouble la = hypot (ax, ay), lb = hypot (bx, by);
    gdouble ga = la > 0 ? (la + 2 * d) / la : 1, gb = lb > 0 ? (lb + 2 * d)
        / lb : 1;

    for (i = 0; i < 4; i++) {
      gdouble ox = box->p[i].x - centre.x, oy = box->p[i].y - centre.y;
      /* Offset in the (a, b) basis. */
      gdouble det = ax * by - ay * bx;
      gdouble s = det != 0 ? (ox * by - oy * bx) / det : 0;
      gdouble t = det != 0 ? (ax * oy - ay * ox) / det : 0;

      box->p[i].x = centre.x + s * ga * ax + t * gb * bx;
      box->p[i].y = centre.y + s * ga * ay + t * gb * by;
    }
    box->w = la + 2 * d;
    box->h = lb + 2 * d;
  }
}

/* Mean of @map (@mw x @mh) over the pixels of @box's bounding box whose
 * centres lie inside it (PaddleOCR's "fast" score). */
static gdouble
box_score (const gfloat * map, gint64 mw, gint64 mh, const Box * box)
{
  gdouble x0 = INFINITY, y0 = INFINITY, x1 = -INFINITY, y1 = -INFINITY;
  gdouble sum = 0;
  gint64 x, y, xa, xb, ya, yb, n = 0;
  guint i;

  for (i = 0; i < 4; i++) {
    x0 = MIN (x0, box->p[i].x);
    y0 = MIN (y0, box->p[i].y);
    x1 = MAX (x1, box->p[i].x);
    y1 = MAX (y1, box->p[i].y);
  }
  xa = CLAMP ((gint64) floor (x0), 0, mw - 1);
  xb = CLAMP ((gint64) ceil (x1), 0, mw - 1);
  ya = CLAMP ((gint64) floor (y0), 0, mh - 1);
  yb = CLAMP ((gint64) ceil (y1), 0, mh - 1);
  for (y = ya; y <= yb; y++)
    for (x = xa; x <= xb; x++) {
      gboolean inside = TRUE;

      /* Inside a convex quadrilateral: on one side of every edge (a
       * half-pixel tolerance keeps the boundary pixels fillPoly keeps). */
      for (i = 0; i < 4 && inside; i++) {
        const Point *a = &box->p[i], *b = &box->p[(i + 1) % 4];
        gdouble len = hypot (b->x - a->x, b->y - a->y);
        gdouble c = (b->x - a->x) * (y - a->y) - (b->y - a->y) * (x - a->x);

        inside = len == 0 || c >= -0.5 * len;
      }
      if (inside) {
        sum += map[y * mw + x];
        n++;
      }
    }
  return n > 0 ? sum / n : 0;
}

gboolean
gst_clinfer_textdet_decode (const GstClinferDecodeContext * ctx,
    GError ** error)
{
  const GstClinferTensor *t =
      gst_clinfer_tensor_meta_get_tensor (ctx->meta, 0);
  const ClinferPreprocessGeometry *g = ctx->geometry;
  g_autofree gfloat *converted = NULL;
  const gfloat *map;
  g_autofree guint8 *mask = NULL;
  g_autofree gint32 *label = NULL;
  g_autoptr (GArray) stack = NULL, pts = NULL;
  g_autofree Point *hull = NULL;
  ClinferShape shape;
  gint64 mh, mw, x, y, i, n_found = 0;

  if (t == NULL) {
    g_set_error (error, GST_STREAM_ERROR, GST_STREAM_ERROR_DECODE,
        "the model has no output to decode");
    return FALSE;
  }
  shape = gst_clinfer_decoder_tensor_shape (t);
  if (!textdet_layout (&shape, &mh, &mw, error))
    return FALSE;
  if (gst_clinfer_tensor_get_n_elements (t) < (gsize) (mh * mw)
      || mh > 16384 || mw > 16384) {
    g_set_error (error, GST_STREAM_ERROR, GST_STREAM_ERROR_DECODE,
        "decoder 'text-detection': a map of %" G_GINT64_FORMAT "x%"
        G_GINT64_FORMAT " it does not hold or too large", mw, mh);
    return FALSE;
  }
  /* An f32 map is read in place; other types converted once. */
  if (t->data_type == GST_CLINFER_TENSOR_DATA_TYPE_F32) {
    map = g_bytes_get_data (t->data, NULL);
  } else {
    converted = g_try_new (gfloat, mh * mw);
    for (i = 0; converted != NULL && i < mh * mw; i++)
      converted[i] = (gfloat) gst_clinfer_tensor_get_value (t, i);
    map = converted;
  }
  mask = g_try_new0 (guint8, mh * mw);
  label = g_try_new0 (gint32, mh * mw);
  if (map == NULL || mask == NULL || label == NULL) {
    g_set_error (error, GST_STREAM_ERROR, GST_STREAM_ERROR_DECODE,
        "decoder 'text-detection': no memory for a %" G_GINT64_FORMAT "x%"
        G_GINT64_FORMAT " map", mw, mh);
    return FALSE;
  }
  /* Threshold, then dilate by 2x2 (a pixel is set when it or its left,
   * upper or upper-left neighbour is). */
  for (y = 0; y < mh; y++)
    for (x = 0; x < mw; x++) {
      gboolean on = FALSE;
      gint64 dy, dx;

      for (dy = 0; dy < 2 && !on; dy++)
        for (dx = 0; dx < 2 && !on; dx++)
          on = y - dy >= 0 && x - dx >= 0
              && map[(y - dy) * mw + x - dx] > BITMAP_THRESHOLD;
      mask[y * mw + x] = on;
    }

  stack = g_array_new (FALSE, FALSE, sizeof (gint64));
  pts = g_array_new (FALSE, FALSE, sizeof (Point));
  for (i = 0; i < mh * mw && n_found < MAX_CANDIDATES; i++) {
    Box box;
    guint n_hull;
    gdouble score, d;
    GstStructure *s;
    GValue points = G_VALUE_INIT, v = G_VALUE_INIT;
    gdouble fx[4], fy[4], bx0 = INFINITY, by0 = INFINITY, bx1 = -INFINITY,
        by1 = -INFINITY;
    guint k;

    if (!mask[i] || label[i] != 0)
      continue;
    /* One 8-connected piece of the mask. */
    n_found++;
    g_array_set_size (pts, 0);
    g_array_append_val (stack, i);
    label[i] = (gint32) n_found;
    while (stack->len > 0) {
      gint64 p = g_array_index (stack, gint64, stack->len - 1);
      gint64 py = p / mw, px = p % mw, dy, dx;
      Point pt = { (gdouble) px, (gdouble) py };

      g_array_set_size (stack, stack->len - 1);
      g_array_append_val (pts, pt);
      for (dy = -1; dy <= 1; dy++)
        for (dx = -1; dx <= 1; dx++) {
          gint64 qy = py + dy, qx = px + dx, q;

          if (qy < 0 || qy >= mh || qx < 0 || qx >= mw)
            continue;
          q = qy * mw + qx;
          if (mask[q] && label[q] == 0) {
            label[q] = (gint32) n_found;
            g_array_append_val (stack, q);
          }
        }
    }
    hull = g_renew (Point, hull, pts->len + 1);
    n_hull = convex_hull ((Point *) pts->data, pts->len, hull);
    min_area_box (hull, n_hull, &box);
    if (MIN (box.w, box.h) < MIN_SIDE)
      continue;
    score = box_score (map, mw, mh, &box);
    if (!(score >= ctx->threshold))
      continue;
    d = box.w * box.h * UNCLIP_RATIO / (2 * (box.w + box.h));
    grow_box (&box, d);
    if (MIN (box.w, box.h) < MIN_SIDE + 2)
      continue;

    /* Into the frame (the map is the model input's size). */
    for (k = 0; k < 4; k++) {
      clinfer_preprocess_geometry_model_to_frame (g,
          box.p[k].x * g->model_width / mw,
          box.p[k].y * g->model_height / mh, &fx[k], &fy[k]);
      fx[k] = CLAMP (round (fx[k]), 0, g->frame_width) + ctx->origin_x;
      fy[k] = CLAMP (round (fy[k]), 0, g->frame_height) + ctx->origin_y;
      bx0 = MIN (bx0, fx[k]);
      by0 = MIN (by0, fy[k]);
      bx1 = MAX (bx1, fx[k]);
      by1 = MAX (by1, fy[k]);
    }
    gst_value_array_init (&points, 8);
    g_value_init (&v, G_TYPE_DOUBLE);
    for (k = 0; k < 4; k++) {
      g_value_set_double (&v, fx[k]);
      gst_value_array_append_value (&points, &v);
      g_value_set_double (&v, fy[k]);
      gst_value_array_append_value (&points, &v);
    }
    g_value_unset (&v);
    s = gst_structure_new ("detection", "confidence", G_TYPE_DOUBLE, score,
        "label_id", G_TYPE_INT, 0, "label", G_TYPE_STRING, "text", NULL);
    gst_structure_take_value (s, "points", &points);
    if (bx1 > bx0 && by1 > by0) {
      GstVideoRegionOfInterestMeta *roi =
          gst_buffer_add_video_region_of_interest_meta (ctx->buffer, "text",
          (guint) bx0, (guint) by0, (guint) (bx1 - bx0),
          (guint) (by1 - by0));

      if (ctx->roi != NULL)
        roi->parent_id = ctx->roi->id;
      gst_video_region_of_interest_meta_add_param (roi, s);
    } else {
      gst_structure_free (s);
    }
  }
  return TRUE;
}
