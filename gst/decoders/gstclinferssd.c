/* decoder=ssd: the [1, 1, N, 7] detection output of OpenVINO's
 * DetectionOutput and many SSD exports. Each row is (image_id, label,
 * confidence, x_min, y_min, x_max, y_max) with the box normalised to the
 * model input; a row with image_id < 0 ends the list. ROI type = the label
 * from labels-file, or "class<label>" without one.
 *
 * Copyright (C) 2025 the clinfer authors
 * SPDX-License-Identifier: Apache-2.0
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "gstclinferdecoder.h"

#include <math.h>

static gboolean
check_shape (const ClinferShape * s, GError ** error)
{
  g_autofree gchar *text = NULL;

  if (s->rank >= 2 && s->dims[s->rank - 1] == 7)
    return TRUE;
  text = clinfer_shape_to_string (s);
  g_set_error (error, GST_LIBRARY_ERROR, GST_LIBRARY_ERROR_SETTINGS,
      "decoder 'ssd' expects the first output to be [1, 1, N, 7] "
      "(image_id, label, confidence, x_min, y_min, x_max, y_max), got %s",
      text);
  return FALSE;
}

gboolean
gst_clinfer_ssd_check (ClinferCompiled * compiled, GError ** error)
{
  ClinferPortInfo info;

  if (!clinfer_compiled_get_output (compiled, 0, &info)
      || info.shape.rank < 0)
    return TRUE;
  if (info.shape.rank >= 1 && info.shape.dims[info.shape.rank - 1] < 0)
    return TRUE;
  return check_shape (&info.shape, error);
}

gboolean
gst_clinfer_ssd_decode (const GstClinferDecodeContext * ctx, GError ** error)
{
  const ClinferPreprocessGeometry *g = ctx->geometry;
  const GstClinferTensor *t =
      gst_clinfer_tensor_meta_get_tensor (ctx->meta, 0);
  ClinferShape shape;
  gint64 n_rows, r;

  if (t == NULL) {
    g_set_error (error, GST_STREAM_ERROR, GST_STREAM_ERROR_DECODE,
        "the model has no output to decode");
    return FALSE;
  }
  shape = gst_clinfer_decoder_tensor_shape (t);
  if (!check_shape (&shape, error))
    return FALSE;
  n_rows = (gint64) gst_clinfer_tensor_get_n_elements (t) / 7;
  for (r = 0; r < n_rows; r++) {
    gdouble v[7];
    const gchar *label;
    g_autofree gchar *fallback = NULL;
    gint label_id, k;
    GstStructure *s;

    for (k = 0; k < 7; k++)
      v[k] = gst_clinfer_tensor_get_value (t, r * 7 + k);
    if (v[0] < 0)
      break;
    if (!(v[2] >= ctx->threshold) || !isfinite (v[1]))
      continue;
    label_id = (gint) CLAMP (v[1], G_MININT, G_MAXINT);
    label = gst_clinfer_decoder_get_label (ctx, label_id);
    if (label == NULL)
      label = fallback = g_strdup_printf ("class%d", label_id);
    s = gst_structure_new ("detection", "confidence", G_TYPE_DOUBLE, v[2],
        "label_id", G_TYPE_INT, label_id, "label", G_TYPE_STRING, label, NULL);
    gst_clinfer_decoder_add_roi (ctx, label, v[3] * g->model_width,
        v[4] * g->model_height, v[5] * g->model_width, v[6] * g->model_height,
        s);
  }
  return TRUE;
}
