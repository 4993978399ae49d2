/* Helpers shared by the element tests: test data paths, synthetic and
 * decoded frames, running a pipeline to its end. */
#pragma once

#include <gst/check/gstcheck.h>
#include <gst/check/gstharness.h>
#include <gst/video/video.h>
#include <gst/clinfer/clinfer-tensor-meta.h>

G_BEGIN_DECLS

/* (transfer full) tests/data/<rel> and models/<rel> in the source tree. */
gchar *test_data_path (const gchar * rel);
gchar *test_models_path (const gchar * rel);

/* (transfer full) A frame of @info filled with pseudo-random bytes from
 * @seed (every plane, padding included). */
GstBuffer *test_make_frame (const GstVideoInfo * info, guint32 seed);

/* (transfer full) tests/data/astronaut.png decoded by pngdec + videoconvert
 * into @format; @info receives its video info. */
GstBuffer *test_load_astronaut (GstVideoFormat format, GstVideoInfo * info);

/* A harness around @element (transfer full), which must have its
 * properties set: filters start when added. */
GstHarness *test_harness_for (GstElement * element);

/* Runs the pipeline @description to EOS or the first ERROR; returns that
 * message (transfer full), or NULL after @timeout_s seconds. */
GstMessage *test_run_pipeline (const gchar * description, guint timeout_s);

/* (transfer container) The ROI metas on @buf, highest confidence first
 * (the "confidence" of their "detection" or "classification" param). */
GPtrArray *test_get_rois (GstBuffer * buf);
gdouble test_roi_confidence (GstVideoRegionOfInterestMeta * roi);

/* A clinfer element with model tests/data/gst/@model (or @model itself
 * when it is absolute) and the properties in @args ("name=value ...",
 * parsed as gst-launch-1.0 does; may be NULL). (transfer floating) */
GstElement *test_make_clinfer (const gchar * model, const gchar * args);
void test_set_video_caps (GstHarness * h, const GstVideoInfo * info);
/* Sets @info's caps on @h (around a clinfer element), pushes a frame
 * that must fail and returns the message of the ERROR the element posted
 * (transfer full), its bus dropped after. */
gchar *test_push_expect_error (GstHarness * h, const GstVideoInfo * info);
/* Takes @e (transfer full) to PAUSED, which must fail, and returns the
 * message of the ERROR it posted (transfer full); @e is freed. */
gchar *test_start_expect_error (GstElement * e);
/* (transfer container) The ROI metas of @buf in the order they were
 * added. */
GPtrArray *test_list_rois (GstBuffer * buf);
/* Whether the engine finds a GPU device (an OpenCL one: PoCL counts). */
gboolean test_have_gpu (void);
/* The tensor called @name in the tensor meta of @buf (which must have
 * one), or NULL. */
const GstClinferTensor *test_get_tensor (GstBuffer * buf, const gchar * name);
/* Sets RGB caps of @width x @height and pushes and pulls one
 * pseudo-random frame; (transfer full) the output. */
GstBuffer *test_push_frame (GstHarness * h, gint width, gint height);

G_END_DECLS
