/* The CPU pre-processing driven without the element (see
 * preprocess-direct.h). */
#include "preprocess-direct.h"

GstClinferPreprocessCpu *
test_preprocess_cpu_new (const GstVideoInfo * vinfo, gint width, gint height,
    gboolean nhwc, GstClinferResizeMethod resize, gfloat mean, gfloat scale,
    gboolean reverse_channels, GError ** error)
{
  GstClinferPreprocessConfig cfg = { 0 };
  GstClinferPreprocess *pp;
  GstClinferPreprocessCpu *self;
  ClinferShape shape = { 0 };
  gint c;

  cfg.vinfo = *vinfo;
  cfg.resize_method = resize;
  cfg.layout = nhwc ? GST_CLINFER_LAYOUT_NHWC : GST_CLINFER_LAYOUT_NCHW;
  cfg.type = CLINFER_TYPE_F32;
  cfg.width = width;
  cfg.height = height;
  cfg.channels = 3;
  for (c = 0; c < 3; c++) {
    cfg.mean[c] = mean;
    cfg.scale[c] = scale;
  }
  cfg.reverse_channels = reverse_channels;
  cfg.n_threads = 1;
  pp = gst_clinfer_preprocess_cpu_new (&cfg, error);
  if (pp == NULL)
    return NULL;
  self = (GstClinferPreprocessCpu *) pp;
  /* What bind() does, without a request. */
  shape.rank = 4;
  shape.dims[0] = 1;
  shape.dims[1] = nhwc ? height : 3;
  shape.dims[2] = nhwc ? width : height;
  shape.dims[3] = nhwc ? 3 : width;
  self->input = clinfer_tensor_new (CLINFER_TYPE_F32, &shape, error);
  if (self->input == NULL) {
    gst_clinfer_preprocess_free (pp);
    return NULL;
  }
  return self;
}
