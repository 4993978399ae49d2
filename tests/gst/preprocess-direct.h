/* The CPU pre-processing driven directly, without the element (the
 * benchmark and the packed-rows test compile gst/'s pre-processing
 * sources in): a frame of @vinfo into a model input of @width x @height x 3,
 * f32, one thread. */
#pragma once

#include "../../gst/gstclinferpreprocesscpu.h"

G_BEGIN_DECLS

/* (transfer full) The CPU pre-processing of @vinfo frames into a
 * [1, @height, @width, 3] (@nhwc) or [1, 3, @height, @width] f32 tensor
 * with @resize, mean/scale @mean and @scale for every channel and
 * @reverse_channels, its input tensor bound; NULL with @error set on
 * failure. */
GstClinferPreprocessCpu *test_preprocess_cpu_new (const GstVideoInfo * vinfo,
    gint width, gint height, gboolean nhwc, GstClinferResizeMethod resize,
    gfloat mean, gfloat scale, gboolean reverse_channels, GError ** error);

G_END_DECLS
