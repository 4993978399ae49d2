/* decoder=classification: the top-1 class of the first output (all its
 * elements are the classes' scores). A softmax is applied first unless the
 * scores already are a distribution (all in [0, 1], summing to 1 within
 * 1e-3). The result is a "classification" structure (label, label_id,
 * confidence) on an ROI meta covering the whole frame, whose type is the
 * label ("class<id>" without labels-file). threshold does not apply: the
 * top-1 class is always reported.
 *
 * Copyright (C) 2025 the clinfer authors
 * SPDX-License-Identifier: Apache-2.0
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "gstclinferdecoder.h"

#include <math.h>

gboolean
gst_clinfer_classification_check (ClinferCompiled * compiled, GError ** error)
{
  ClinferPortInfo info;

  if (clinfer_compiled_get_n_outputs (compiled) == 0
      || !clinfer_compiled_get_output (compiled, 0, &info))
    goto no_output;
  if (clinfer_shape_is_static (&info.shape)
      && clinfer_shape_n_elements (&info.shape) < 1)
    goto no_output;
  return TRUE;

no_output:
  g_set_error (error, GST_LIBRARY_ERROR, GST_LIBRARY_ERROR_SETTINGS,
      "decoder 'classification' needs a first output with at least one "
      "class score");
  return FALSE;
}

gboolean
gst_clinfer_classification_decode (const GstClinferDecodeContext * ctx,
    GError ** error)
{
  const GstClinferTensor *t =
      gst_clinfer_tensor_meta_get_tensor (ctx->meta, 0);
  gint64 n = t ? (gint64) gst_clinfer_tensor_get_n_elements (t) : 0, i;
  gint64 best = 0;
  gdouble max = -INFINITY, sum = 0, confidence;
  gboolean distribution = TRUE;
  g_autofree gchar *fallback = NULL;
  const gchar *label;
  GstStructure *s;

  if (n < 1) {
    g_set_error (error, GST_LIBRARY_ERROR, GST_LIBRARY_ERROR_SETTINGS,
        "decoder 'classification': the first output is empty");
    return FALSE;
  }
  for (i = 0; i < n; i++) {
    gdouble v = gst_clinfer_tensor_get_value (t, i);

    if (v > max || i == 0) {
      max = v;
      best = i;
    }
    if (!(v >= 0 && v <= 1))
      distribution = FALSE;
    sum += v;
  }
  if (distribution && fabs (sum - 1.0) <= 1e-3) {
    confidence = max;
  } else {
    /* softmax of the best = 1 / sum (exp (v - max)) */
    gdouble denom = 0;

    for (i = 0; i < n; i++)
      denom += exp (gst_clinfer_tensor_get_value (t, i) - max);
    confidence = denom > 0 && isfinite (denom) ? 1.0 / denom : 0.0;
  }

  label = gst_clinfer_decoder_get_label (ctx, (gint) best);
  if (label == NULL)
    label = fallback = g_strdup_printf ("class%" G_GINT64_FORMAT, best);
  s = gst_structure_new ("classification", "label", G_TYPE_STRING, label,
      "label_id", G_TYPE_INT, (gint) best, "confidence", G_TYPE_DOUBLE,
      confidence, NULL);
  /* On a whole frame: a region of the frame's size named after the
   * class; on a region: its result. */
  gst_clinfer_decoder_add_frame_result (ctx, label, s);
  return TRUE;
}
