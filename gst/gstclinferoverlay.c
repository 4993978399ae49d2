/* GStreamer
 * Copyright (C) 2025 the clinfer authors
 * SPDX-License-Identifier: Apache-2.0
 *
 * gstclinferoverlay.c: draws the regions of interest of a frame (boxes,
 * labels, confidences, key points) into its pixels
 */

/**
 * SECTION:element-clinferoverlay
 * @title: clinferoverlay
 *
 * Draws every #GstVideoRegionOfInterestMeta of a frame: the box outline,
 * a label with the confidence (from the "detection" or "classification"
 * parameter the clinfer element adds; the ROI type otherwise; preceded by
 * "#<object_id>" when clinfertrack numbered the region), and the key
 * points of a "keypoints" field (x0, y0, x1, y1, ... in frame pixels).
 * Text is rendered with cairo. Works in place on RGB-style, NV12, I420 and
 * GRAY8 frames.
 *
 * ## Example launch line
 * |[
 * gst-launch-1.0 filesrc location=face.png ! pngdec ! videoconvert ! \
 *     clinfer model=face_detection_front_128x128_barracuda.onnx decoder=blazeface ! \
 *     clinferoverlay line-width=3 ! videoconvert ! pngenc ! filesink location=out.png
 * ]|
 */

#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "gstclinferoverlay.h"

#include <cairo.h>
#include <math.h>
#include <string.h>

GST_DEBUG_CATEGORY_STATIC (gst_clinfer_overlay_debug);
#define GST_CAT_DEFAULT gst_clinfer_overlay_debug

enum
{
  PROP_0,
  PROP_LINE_WIDTH,
  PROP_BOX_COLOR,
  PROP_DRAW_LABELS,
  PROP_DRAW_KEYPOINTS,
  PROP_FONT_SIZE,
};

#define DEFAULT_PROP_LINE_WIDTH 2
#define DEFAULT_PROP_BOX_COLOR 0xff00ff00
#define DEFAULT_PROP_DRAW_LABELS TRUE
#define DEFAULT_PROP_DRAW_KEYPOINTS TRUE
#define DEFAULT_PROP_FONT_SIZE 14.0

#define OVERLAY_FORMATS \
  "{ RGB, BGR, RGBx, BGRx, xRGB, xBGR, RGBA, BGRA, ARGB, ABGR, NV12, I420, GRAY8 }"

static GstStaticPadTemplate gst_clinfer_overlay_sink_template =
GST_STATIC_PAD_TEMPLATE ("sink",
    GST_PAD_SINK,
    GST_PAD_ALWAYS,
    GST_STATIC_CAPS (GST_VIDEO_CAPS_MAKE (OVERLAY_FORMATS)));

static GstStaticPadTemplate gst_clinfer_overlay_src_template =
GST_STATIC_PAD_TEMPLATE ("src",
    GST_PAD_SRC,
    GST_PAD_ALWAYS,
    GST_STATIC_CAPS (GST_VIDEO_CAPS_MAKE (OVERLAY_FORMATS)));

#define gst_clinfer_overlay_parent_class parent_class
G_DEFINE_TYPE (GstClinferOverlay, gst_clinfer_overlay, GST_TYPE_VIDEO_FILTER);
GST_ELEMENT_REGISTER_DEFINE (clinferoverlay, "clinferoverlay", GST_RANK_NONE,
    GST_TYPE_CLINFER_OVERLAY);

static void gst_clinfer_overlay_set_property (GObject * object,
    guint prop_id, const GValue * value, GParamSpec * pspec);
static void gst_clinfer_overlay_get_property (GObject * object,
    guint prop_id, GValue * value, GParamSpec * pspec);
static GstFlowReturn gst_clinfer_overlay_transform_frame_ip (GstVideoFilter *
    filter, GstVideoFrame * frame);

static void
gst_clinfer_overlay_class_init (GstClinferOverlayClass * klass)
{
  GObjectClass *gobject_class = (GObjectClass *) klass;
  GstElementClass *element_class = (GstElementClass *) klass;
  GstVideoFilterClass *filter_class = (GstVideoFilterClass *) klass;

  GST_DEBUG_CATEGORY_INIT (gst_clinfer_overlay_debug, "clinferoverlay", 0,
      "clinfer region of interest overlay");

  gobject_class->set_property = gst_clinfer_overlay_set_property;
  gobject_class->get_property = gst_clinfer_overlay_get_property;

  g_object_class_install_property (gobject_class, PROP_LINE_WIDTH,
      g_param_spec_uint ("line-width", "Line width",
          "Width of box outlines and size of key points, in frame pixels", 1,
          64, DEFAULT_PROP_LINE_WIDTH,
          G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS |
          GST_PARAM_MUTABLE_PLAYING));
  g_object_class_install_property (gobject_class, PROP_BOX_COLOR,
      g_param_spec_uint ("box-color", "Box colour",
          "Colour of boxes, key points and label backgrounds as 0xAARRGGBB "
          "(alpha is ignored for boxes)", 0, G_MAXUINT32,
          DEFAULT_PROP_BOX_COLOR,
          G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS |
          GST_PARAM_MUTABLE_PLAYING));
  g_object_class_install_property (gobject_class, PROP_DRAW_LABELS,
      g_param_spec_boolean ("draw-labels", "Draw labels",
          "Write the label and confidence above each box",
          DEFAULT_PROP_DRAW_LABELS,
          G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS |
          GST_PARAM_MUTABLE_PLAYING));
  g_object_class_install_property (gobject_class, PROP_DRAW_KEYPOINTS,
      g_param_spec_boolean ("draw-keypoints", "Draw key points",
          "Mark the key points listed in a region's \"keypoints\" field",
          DEFAULT_PROP_DRAW_KEYPOINTS,
          G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS |
          GST_PARAM_MUTABLE_PLAYING));
  g_object_class_install_property (gobject_class, PROP_FONT_SIZE,
      g_param_spec_double ("font-size", "Font size",
          "Size of the label text in frame pixels", 4.0, 512.0,
          DEFAULT_PROP_FONT_SIZE,
          G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS |
          GST_PARAM_MUTABLE_PLAYING));

  gst_element_class_set_static_metadata (element_class,
      "clinfer overlay", "Filter/Editor/Video",
      "Draws regions of interest (boxes, labels, confidences, key points) on "
      "video frames", "the clinfer authors <https://github.com/clinfer>");
  gst_element_class_add_static_pad_template (element_class,
      &gst_clinfer_overlay_sink_template);
  gst_element_class_add_static_pad_template (element_class,
      &gst_clinfer_overlay_src_template);

  filter_class->transform_frame_ip =
      GST_DEBUG_FUNCPTR (gst_clinfer_overlay_transform_frame_ip);
}

static void
gst_clinfer_overlay_init (GstClinferOverlay * self)
{
  self->line_width = DEFAULT_PROP_LINE_WIDTH;
  self->box_color = DEFAULT_PROP_BOX_COLOR;
  self->draw_labels = DEFAULT_PROP_DRAW_LABELS;
  self->draw_keypoints = DEFAULT_PROP_DRAW_KEYPOINTS;
  self->font_size = DEFAULT_PROP_FONT_SIZE;
}

static void
gst_clinfer_overlay_set_property (GObject * object, guint prop_id,
    const GValue * value, GParamSpec * pspec)
{
  GstClinferOverlay *self = GST_CLINFER_OVERLAY (object);

  GST_OBJECT_LOCK (self);
  switch (prop_id) {
    case PROP_LINE_WIDTH:
      self->line_width = g_value_get_uint (value);
      break;
    case PROP_BOX_COLOR:
      self->box_color = g_value_get_uint (value);
      break;
    case PROP_DRAW_LABELS:
      self->draw_labels = g_value_get_boolean (value);
      break;
    case PROP_DRAW_KEYPOINTS:
      self->draw_keypoints = g_value_get_boolean (value);
      break;
    case PROP_FONT_SIZE:
      self->font_size = g_value_get_double (value);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
      break;
  }
  GST_OBJECT_UNLOCK (self);
}

static void
gst_clinfer_overlay_get_property (GObject * object, guint prop_id,
    GValue * value, GParamSpec * pspec)
{
  GstClinferOverlay *self = GST_CLINFER_OVERLAY (object);

  GST_OBJECT_LOCK (self);
  switch (prop_id) {
    case PROP_LINE_WIDTH:
      g_value_set_uint (value, self->line_width);
      break;
    case PROP_BOX_COLOR:
      g_value_set_uint (value, self->box_color);
      break;
    case PROP_DRAW_LABELS:
      g_value_set_boolean (value, self->draw_labels);
      break;
    case PROP_DRAW_KEYPOINTS:
      g_value_set_boolean (value, self->draw_keypoints);
      break;
    case PROP_FONT_SIZE:
      g_value_set_double (value, self->font_size);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
      break;
  }
  GST_OBJECT_UNLOCK (self);
}

/* Pixel access for the supported formats. */
typedef struct
{
  GstVideoFrame *frame;
  gint width, height;
  gboolean yuv, gray;
  gint comp_offset[3], pixel_stride;
  /* RGB to Y'CbCr of the frame's colorimetry */
  gdouble kr, kb, y_offset, y_range, c_range;
} Canvas;

static void
canvas_init (Canvas * c, GstVideoFrame * frame)
{
  const GstVideoInfo *info = &frame->info;
  const GstVideoColorimetry *cm = &GST_VIDEO_INFO_COLORIMETRY (info);
  gint k;

  memset (c, 0, sizeof (*c));
  c->frame = frame;
  c->width = GST_VIDEO_FRAME_WIDTH (frame);
  c->height = GST_VIDEO_FRAME_HEIGHT (frame);
  c->gray = GST_VIDEO_FRAME_FORMAT (frame) == GST_VIDEO_FORMAT_GRAY8;
  c->yuv = GST_VIDEO_INFO_IS_YUV (info) || c->gray;
  for (k = 0; k < 3; k++)
    c->comp_offset[k] = GST_VIDEO_INFO_COMP_POFFSET (info, k);
  c->pixel_stride = GST_VIDEO_INFO_COMP_PSTRIDE (info, 0);
  if (!gst_video_color_matrix_get_Kr_Kb (cm->matrix, &c->kr, &c->kb)) {
    c->kr = 0.299;
    c->kb = 0.114;
  }
  if (cm->range == GST_VIDEO_COLOR_RANGE_0_255 || c->gray) {
    c->y_offset = 0;
    c->y_range = 255;
    c->c_range = 255;
  } else {
    c->y_offset = 16;
    c->y_range = 219;
    c->c_range = 224;
  }
}

static inline guint8
mix (guint8 dst, gdouble src, guint alpha)
{
  gdouble v = (src * alpha + dst * (255.0 - alpha)) / 255.0;

  return (guint8) CLAMP (lround (v), 0, 255);
}

/* Blends colour (r, g, b) with opacity @a (0..255) onto pixel (x, y). */
static void
canvas_blend (const Canvas * c, gint x, gint y, guint8 r, guint8 g, guint8 b,
    guint a)
{
  GstVideoFrame *f = c->frame;
  guint8 *p;

  if (x < 0 || y < 0 || x >= c->width || y >= c->height || a == 0)
    return;
  if (!c->yuv) {
    p = (guint8 *) GST_VIDEO_FRAME_PLANE_DATA (f, 0)
        + (gsize) y * GST_VIDEO_FRAME_PLANE_STRIDE (f, 0)
        + (gsize) x * c->pixel_stride;
    p[c->comp_offset[0]] = mix (p[c->comp_offset[0]], r, a);
    p[c->comp_offset[1]] = mix (p[c->comp_offset[1]], g, a);
    p[c->comp_offset[2]] = mix (p[c->comp_offset[2]], b, a);
  } else {
    gdouble kg = 1.0 - c->kr - c->kb;
    gdouble yy = (c->kr * r + kg * g + c->kb * b) / 255.0;
    gdouble cb = (b / 255.0 - yy) / (2.0 * (1.0 - c->kb));
    gdouble cr = (r / 255.0 - yy) / (2.0 * (1.0 - c->kr));

    p = (guint8 *) GST_VIDEO_FRAME_PLANE_DATA (f, 0)
        + (gsize) y * GST_VIDEO_FRAME_PLANE_STRIDE (f, 0) + x;
    *p = mix (*p, c->y_offset + yy * c->y_range, a);
    /* One chroma sample per 2x2 block: written by its top-left pixel. */
    if (c->gray || (x & 1) || (y & 1))
      return;
    if (GST_VIDEO_FRAME_FORMAT (f) == GST_VIDEO_FORMAT_NV12) {
      p = (guint8 *) GST_VIDEO_FRAME_PLANE_DATA (f, 1)
          + (gsize) (y / 2) * GST_VIDEO_FRAME_PLANE_STRIDE (f, 1) + x;
      p[0] = mix (p[0], 128 + cb * c->c_range, a);
      p[1] = mix (p[1], 128 + cr * c->c_range, a);
    } else {
      p = (guint8 *) GST_VIDEO_FRAME_PLANE_DATA (f, 1)
          + (gsize) (y / 2) * GST_VIDEO_FRAME_PLANE_STRIDE (f, 1) + x / 2;
      *p = mix (*p, 128 + cb * c->c_range, a);
      p = (guint8 *) GST_VIDEO_FRAME_PLANE_DATA (f, 2)
          + (gsize) (y / 2) * GST_VIDEO_FRAME_PLANE_STRIDE (f, 2) + x / 2;
      *p = mix (*p, 128 + cr * c->c_range, a);
    }
  }
}

static void
canvas_fill (const Canvas * c, gint x0, gint y0, gint x1, gint y1,
    guint32 argb)
{
  gint x, y;

  x0 = MAX (x0, 0);
  y0 = MAX (y0, 0);
  x1 = MIN (x1, c->width);
  y1 = MIN (y1, c->height);
  for (y = y0; y < y1; y++)
    for (x = x0; x < x1; x++)
      canvas_blend (c, x, y, (argb >> 16) & 0xff, (argb >> 8) & 0xff,
          argb & 0xff, 255);
}

/* Box outline of @lw pixels inside the rectangle. */
static void
draw_box (const Canvas * c, gint x, gint y, gint w, gint h, gint lw,
    guint32 argb)
{
  gint t = MIN (lw, MIN (w, h));

  canvas_fill (c, x, y, x + w, y + t, argb);
  canvas_fill (c, x, y + h - t, x + w, y + h, argb);
  canvas_fill (c, x, y, x + t, y + h, argb);
  canvas_fill (c, x + w - t, y, x + w, y + h, argb);
}

/* Renders @text with cairo (dark text on the box colour) and blends it with
 * its bottom-left corner at (x, y), moved inside the frame. */
static void
draw_label (const Canvas * c, const gchar * text, gint x, gint y,
    gdouble font_size, guint32 argb)
{
  cairo_surface_t *surface;
  cairo_t *cr;
  cairo_text_extents_t ext;
  cairo_font_extents_t fext;
  gint w, h, pad = 2, i, j, stride;
  const guint8 *data;

  /* Measure on a 1x1 surface, then draw on one of the right size. */
  surface = cairo_image_surface_create (CAIRO_FORMAT_ARGB32, 1, 1);
  cr = cairo_create (surface);
  cairo_select_font_face (cr, "sans-serif", CAIRO_FONT_SLANT_NORMAL,
      CAIRO_FONT_WEIGHT_BOLD);
  cairo_set_font_size (cr, font_size);
  cairo_text_extents (cr, text, &ext);
  cairo_font_extents (cr, &fext);
  cairo_destroy (cr);
  cairo_surface_destroy (surface);

  w = (gint) ceil (ext.x_advance) + 2 * pad;
  h = (gint) ceil (fext.ascent + fext.descent) + 2 * pad;
  if (w <= 0 || h <= 0 || w > 4096 || h > 4096)
    return;
  surface = cairo_image_surface_create (CAIRO_FORMAT_ARGB32, w, h);
  if (cairo_surface_status (surface) != CAIRO_STATUS_SUCCESS) {
    cairo_surface_destroy (surface);
    return;
  }
  cr = cairo_create (surface);
  cairo_set_source_rgba (cr, ((argb >> 16) & 0xff) / 255.0,
      ((argb >> 8) & 0xff) / 255.0, (argb & 0xff) / 255.0,
      ((argb >> 24) & 0xff) / 255.0);
  cairo_paint (cr);
  cairo_select_font_face (cr, "sans-serif", CAIRO_FONT_SLANT_NORMAL,
      CAIRO_FONT_WEIGHT_BOLD);
  cairo_set_font_size (cr, font_size);
  cairo_set_source_rgb (cr, 0, 0, 0);
  cairo_move_to (cr, pad, pad + fext.ascent);
  cairo_show_text (cr, text);
  cairo_destroy (cr);
  cairo_surface_flush (surface);

  /* Above the box if there is room, else inside it. */
  y -= h;
  if (y < 0)
    y = 0;
  x = CLAMP (x, 0, MAX (c->width - w, 0));
  data = cairo_image_surface_get_data (surface);
  stride = cairo_image_surface_get_stride (surface);
  for (j = 0; j < h; j++) {
    const guint32 *row = (const guint32 *) (gconstpointer) (data + j * stride);

    for (i = 0; i < w; i++) {
      guint32 p = row[i];
      guint a = p >> 24;

      if (a == 0)
        continue;
      /* Cairo's ARGB32 is premultiplied. */
      canvas_blend (c, x + i, y + j, ((p >> 16) & 0xff) * 255 / a,
          ((p >> 8) & 0xff) * 255 / a, (p & 0xff) * 255 / a, a);
    }
  }
  cairo_surface_destroy (surface);
}

static void
draw_keypoints (const Canvas * c, const GstStructure * s, gint lw,
    guint32 argb)
{
  const GValue *kp = gst_structure_get_value (s, "keypoints");
  guint i, n;

  if (kp == NULL || !GST_VALUE_HOLDS_ARRAY (kp))
    return;
  n = gst_value_array_get_size (kp);
  for (i = 0; i + 1 < n; i += 2) {
    const GValue *vx = gst_value_array_get_value (kp, i);
    const GValue *vy = gst_value_array_get_value (kp, i + 1);
    gdouble x, y;

    if (!G_VALUE_HOLDS_DOUBLE (vx) || !G_VALUE_HOLDS_DOUBLE (vy))
      continue;
    x = g_value_get_double (vx);
    y = g_value_get_double (vy);
    if (!isfinite (x) || !isfinite (y) || fabs (x) > 1e6 || fabs (y) > 1e6)
      continue;
    canvas_fill (c, (gint) lround (x) - lw, (gint) lround (y) - lw,
        (gint) lround (x) + lw + 1, (gint) lround (y) + lw + 1, argb);
  }
}

static GstFlowReturn
gst_clinfer_overlay_transform_frame_ip (GstVideoFilter * filter,
    GstVideoFrame * frame)
{
  GstClinferOverlay *self = GST_CLINFER_OVERLAY (filter);
  GstVideoRegionOfInterestMeta *roi;
  gpointer state = NULL;
  Canvas canvas;
  guint line_width, color;
  gboolean labels, keypoints;
  gdouble font_size;

  GST_OBJECT_LOCK (self);
  line_width = self->line_width;
  color = self->box_color | 0xff000000;
  labels = self->draw_labels;
  keypoints = self->draw_keypoints;
  font_size = self->font_size;
  GST_OBJECT_UNLOCK (self);

  canvas_init (&canvas, frame);
  while ((roi = (GstVideoRegionOfInterestMeta *)
          gst_buffer_iterate_meta_filtered (frame->buffer, &state,
              GST_VIDEO_REGION_OF_INTEREST_META_API_TYPE))) {
    GstStructure *s;
    gint x = (gint) MIN (roi->x, (guint) G_MAXINT / 2);
    gint y = (gint) MIN (roi->y, (guint) G_MAXINT / 2);
    gint w = (gint) MIN (roi->w, (guint) G_MAXINT / 2);
    gint h = (gint) MIN (roi->h, (guint) G_MAXINT / 2);

    draw_box (&canvas, x, y, w, h, (gint) line_width, color);
    s = gst_video_region_of_interest_meta_get_param (roi, "detection");
    if (s == NULL)
      s = gst_video_region_of_interest_meta_get_param (roi, "classification");
    if (keypoints && s != NULL)
      draw_keypoints (&canvas, s, (gint) line_width, color);
    if (labels) {
      GstStructure *track = gst_video_region_of_interest_meta_get_param (roi,
          "tracking");
      g_autofree gchar *id = NULL;
      const gchar *label = NULL;
      gdouble confidence;
      g_autofree gchar *text = NULL;
      gint object_id;

      if (s != NULL)
        label = gst_structure_get_string (s, "label");
      if (label == NULL)
        label = g_quark_to_string (roi->roi_type);
      /* clinfertrack's object id first: "#3 person 0.91". */
      id = track != NULL && gst_structure_get_int (track, "object_id",
          &object_id) ? g_strdup_printf ("#%d ", object_id) : g_strdup ("");
      if (s != NULL && gst_structure_get_double (s, "confidence",
              &confidence))
        text = g_strdup_printf ("%s%s %.2f", id, label, confidence);
      else
        text = g_strdup_printf ("%s%s", id, label);
      draw_label (&canvas, text, x, y, font_size, color);
    }
  }
  return GST_FLOW_OK;
}
