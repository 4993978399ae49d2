/* Greedy CTC decoding of a text recogniser's output (PP-OCR rec and the
 * CRNN family): [1, T, C] (or [T, C]) scores over T steps of C classes,
 * class 0 the CTC blank; per step the best class, repeats collapsed,
 * blanks dropped; class i >= 1 is line i - 1 of labels-file, and the one
 * after the last line a space (PaddleOCR's use_space_char). The text's
 * confidence is the mean best score of the characters kept (a softmax
 * first when the scores are not probabilities); a text below threshold
 * is dropped.
 *
 * Copyright (C) 2025 the clinfer authors
 * SPDX-License-Identifier: Apache-2.0
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "gstclinferdecoder.h"

#include <math.h>

/* T steps of C classes from @shape. */
static gboolean
ctc_layout (const ClinferShape * shape, gint64 * steps, gint64 * classes,
    GError ** error)
{
  g_autofree gchar *text = NULL;

  if (shape->rank == 3 && shape->dims[0] == 1) {
    *steps = shape->dims[1];
    *classes = shape->dims[2];
  } else if (shape->rank == 2) {
    *steps = shape->dims[0];
    *classes = shape->dims[1];
  } else {
    *classes = 0;
  }
  if (*classes >= 2 && *steps >= 1)
    return TRUE;
  text = clinfer_shape_to_string (shape);
  g_set_error (error, GST_LIBRARY_ERROR, GST_LIBRARY_ERROR_SETTINGS,
      "decoder 'ctc' needs a first output [1, T, C] (T steps of C classes, "
      "class 0 the blank); got %s", text);
  return FALSE;
}

gboolean
gst_clinfer_ctc_check (ClinferCompiled * compiled, GError ** error)
{
  ClinferShape shape;
  gint64 steps, classes;

  return !gst_clinfer_decoder_static_output (compiled, &shape)
      || ctc_layout (&shape, &steps, &classes, error);
}

gboolean
gst_clinfer_ctc_decode (const GstClinferDecodeContext * ctx, GError ** error)
{
  const GstClinferTensor *t =
      gst_clinfer_tensor_meta_get_tensor (ctx->meta, 0);
  g_autoptr (GString) text = g_string_new (NULL);
  ClinferShape shape;
  gint64 steps, classes, s, c, previous = 0;
  gdouble sum = 0, confidence;
  guint kept = 0;
  GstStructure *result;

  if (t == NULL) {
    g_set_error (error, GST_STREAM_ERROR, GST_STREAM_ERROR_DECODE,
        "the model has no output to decode");
    return FALSE;
  }
  if (ctx->labels == NULL) {
    g_set_error (error, GST_LIBRARY_ERROR, GST_LIBRARY_ERROR_SETTINGS,
        "decoder 'ctc' needs labels-file: the characters, one per line "
        "(class i is line i - 1; class 0 is the blank)");
    return FALSE;
  }
  shape = gst_clinfer_decoder_tensor_shape (t);
  if (!ctc_layout (&shape, &steps, &classes, error))
    return FALSE;
  if (gst_clinfer_tensor_get_n_elements (t) < (gsize) (steps * classes)) {
    g_set_error (error, GST_STREAM_ERROR, GST_STREAM_ERROR_DECODE,
        "decoder 'ctc': the output holds fewer values than its shape says");
    return FALSE;
  }
  for (s = 0; s < steps; s++) {
    gdouble best = -INFINITY, score, denom = 0;
    gboolean probabilities = TRUE;
    gint64 best_c = 0;

    for (c = 0; c < classes; c++) {
      gdouble v = gst_clinfer_tensor_get_value (t, s * classes + c);

      if (v > best) {
        best = v;
        best_c = c;
      }
      if (!(v >= 0 && v <= 1))
        probabilities = FALSE;
    }
    if (best_c != 0 && best_c != previous) {
      guint label = (guint) (best_c - 1);

      if (probabilities) {
        score = best;
      } else {
        for (c = 0; c < classes; c++)
          denom += exp (gst_clinfer_tensor_get_value (t, s * classes + c)
              - best);
        score = denom > 0 && isfinite (denom) ? 1.0 / denom : 0.0;
      }
      if (label < ctx->labels->len)
        g_string_append (text, g_ptr_array_index (ctx->labels, label));
      else if (label == ctx->labels->len)
        g_string_append_c (text, ' ');
      else
        g_string_append_c (text, '?');
      sum += score;
      kept++;
    }
    previous = best_c;
  }
  confidence = kept > 0 ? sum / kept : 0.0;
  if (kept == 0 || !(confidence >= ctx->threshold))
    return TRUE;
  result = gst_structure_new ("text", "text", G_TYPE_STRING, text->str,
      "confidence", G_TYPE_DOUBLE, confidence, NULL);
  gst_clinfer_decoder_add_frame_result (ctx, "text", result);
  return TRUE;
}
