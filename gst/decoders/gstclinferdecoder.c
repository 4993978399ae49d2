/* Decoder table and the helpers decoders share (labels, ROI metas).
 *
 * Copyright (C) 2025 the clinfer authors
 * SPDX-License-Identifier: Apache-2.0
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "gstclinferdecoder.h"

#include <math.h>

#define NORM(m, s) {m, m, m}, {s, s, s}

static const GstClinferDecoder decoders[] = {
  {GST_CLINFER_DECODER_BLAZEFACE, "blazeface", TRUE, NORM (127.5f, 127.5f),
      NULL, gst_clinfer_blazeface_check, gst_clinfer_blazeface_decode},
  {GST_CLINFER_DECODER_SSD, "ssd", FALSE, NORM (0.f, 1.f), NULL,
      gst_clinfer_ssd_check, gst_clinfer_ssd_decode},
  {GST_CLINFER_DECODER_CLASSIFICATION, "classification", FALSE,
        NORM (0.f, 1.f), NULL, gst_clinfer_classification_check,
      gst_clinfer_classification_decode},
  /* Ultralytics exports take RGB in 0..1. */
  {GST_CLINFER_DECODER_YOLO, "yolo", TRUE, NORM (0.f, 255.f), NULL,
      gst_clinfer_yolo_check, gst_clinfer_yolo_decode},
  /* PP-OCR's recogniser: (x / 255 - 0.5) / 0.5. */
  {GST_CLINFER_DECODER_CTC, "ctc", TRUE, NORM (127.5f, 127.5f), NULL,
      gst_clinfer_ctc_check, gst_clinfer_ctc_decode},
  /* PP-OCR's detector: ImageNet's mean and deviation, times 255. */
  {GST_CLINFER_DECODER_TEXT_DETECTION, "text-detection", TRUE,
        {123.675f, 116.28f, 103.53f}, {58.395f, 57.12f, 57.375f},
        gst_clinfer_textdet_model_size, gst_clinfer_textdet_check,
      gst_clinfer_textdet_decode},
};

#undef NORM


const GstClinferDecoder *
gst_clinfer_decoder_get (GstClinferDecoderType type)
{
  guint i;

  for (i = 0; i < G_N_ELEMENTS (decoders); i++) {
    if (decoders[i].type == type)
      return &decoders[i];
  }
  return NULL;
}

ClinferShape
gst_clinfer_decoder_tensor_shape (const GstClinferTensor * tensor)
{
  return clinfer_shape_make ((int) MIN (tensor->n_dims, CLINFER_MAX_RANK),
      tensor->dims);
}

gboolean
gst_clinfer_decoder_static_output (ClinferCompiled * compiled,
    ClinferShape * shape)
{
  ClinferPortInfo info;

  if (!clinfer_compiled_get_output (compiled, 0, &info)
      || !clinfer_shape_is_static (&info.shape))
    return FALSE;
  *shape = info.shape;
  return TRUE;
}

const gchar *
gst_clinfer_decoder_get_label (const GstClinferDecodeContext * ctx,
    gint label_id)
{
  if (ctx->labels == NULL || label_id < 0
      || (guint) label_id >= ctx->labels->len)
    return NULL;
  return g_ptr_array_index (ctx->labels, label_id);
}

/* Rounds @v to a pixel edge in 0..@max; NaN (from a broken model) and
 * infinities are clipped rather than turned into garbage. */
static gint
clip_coord (gdouble v, gint max)
{
  if (isnan (v))
    v = 0;
  return (gint) lround (CLAMP (v, 0.0, (gdouble) max));
}

GstVideoRegionOfInterestMeta *
gst_clinfer_decoder_add_roi (const GstClinferDecodeContext * ctx,
    const gchar * roi_type, gdouble x0, gdouble y0, gdouble x1, gdouble y1,
    GstStructure * param)
{
  const ClinferPreprocessGeometry *g = ctx->geometry;
  GstVideoRegionOfInterestMeta *meta;
  gdouble fx0, fy0, fx1, fy1;
  gint ix0, iy0, ix1, iy1;

  clinfer_preprocess_geometry_model_to_frame (g, x0, y0, &fx0, &fy0);
  clinfer_preprocess_geometry_model_to_frame (g, x1, y1, &fx1, &fy1);
  ix0 = clip_coord (fx0, g->frame_width);
  iy0 = clip_coord (fy0, g->frame_height);
  ix1 = clip_coord (fx1, g->frame_width);
  iy1 = clip_coord (fy1, g->frame_height);
  if (ix1 <= ix0 || iy1 <= iy0) {
    if (param != NULL)
      gst_structure_free (param);
    return NULL;
  }
  meta = gst_buffer_add_video_region_of_interest_meta (ctx->buffer, roi_type,
      ix0 + ctx->origin_x, iy0 + ctx->origin_y, ix1 - ix0, iy1 - iy0);
  if (ctx->roi != NULL)
    meta->parent_id = ctx->roi->id;
  if (param != NULL)
    gst_video_region_of_interest_meta_add_param (meta, param);
  return meta;
}

void
gst_clinfer_decoder_add_frame_result (const GstClinferDecodeContext * ctx,
    const gchar * roi_type, GstStructure * param)
{
  const ClinferPreprocessGeometry *g = ctx->geometry;
  GstVideoRegionOfInterestMeta *roi = ctx->roi;

  if (roi == NULL)
    roi = gst_buffer_add_video_region_of_interest_meta (ctx->buffer, roi_type,
        0, 0, g->frame_width, g->frame_height);
  gst_video_region_of_interest_meta_add_param (roi, param);
}

gdouble
gst_clinfer_box_iou (gdouble ax0, gdouble ay0, gdouble ax1, gdouble ay1,
    gdouble bx0, gdouble by0, gdouble bx1, gdouble by1)
{
  gdouble w = MIN (ax1, bx1) - MAX (ax0, bx0);
  gdouble h = MIN (ay1, by1) - MAX (ay0, by0);
  gdouble inter, uni;

  if (w <= 0 || h <= 0)
    return 0;
  inter = w * h;
  uni = (ax1 - ax0) * (ay1 - ay0) + (bx1 - bx0) * (by1 - by0) - inter;
  return uni > 0 ? inter / uni : 0;
}

GPtrArray *
gst_clinfer_labels_read (const gchar * path, GError ** error)
{
  g_autofree gchar *contents = NULL;

  if (!g_file_get_contents (path, &contents, NULL, error))
    return NULL;
  return gst_clinfer_labels_parse (contents, path, error);
}

GPtrArray *
gst_clinfer_labels_parse (const gchar * text, const gchar * origin,
    GError ** error)
{
  g_auto (GStrv) lines = NULL;
  GPtrArray *labels;
  guint i, n;

  lines = g_strsplit (text, "\n", -1);
  n = g_strv_length (lines);
  /* A final newline does not make an empty last label. */
  if (n > 0 && lines[n - 1][0] == '\0')
    n--;
  /* Labels become strings of GstStructures, which must be UTF-8. */
  for (i = 0; i < n; i++)
    if (!g_utf8_validate (lines[i], -1, NULL)) {
      g_set_error (error, G_FILE_ERROR, G_FILE_ERROR_INVAL,
          "%s: line %u is not valid UTF-8 text", origin, i + 1);
      return NULL;
    }
  labels = g_ptr_array_new_full (n, g_free);
  for (i = 0; i < n; i++)
    g_ptr_array_add (labels, g_strdup (g_strchomp (lines[i])));
  return labels;
}

gboolean
gst_clinfer_roi_type_wanted (const GstVideoRegionOfInterestMeta * roi,
    gchar ** classes)
{
  const gchar *type = g_quark_to_string (roi->roi_type);
  guint i;

  if (classes == NULL)
    return TRUE;
  for (i = 0; classes[i] != NULL; i++)
    if (g_strcmp0 (g_strstrip (classes[i]), type) == 0)
      return TRUE;
  return FALSE;
}
