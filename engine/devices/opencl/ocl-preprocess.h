/* clinfer — the OpenCL device's frame pre-processing (ocl-preprocess.c):
 * the class entry, and the import of a frame's planes as buffers the
 * kernel reads (also used by the OpenCL tests to check that host planes
 * are read in place). */
#pragma once

#include "devices/opencl/ocl-internal.h"

G_BEGIN_DECLS

/* A frame as the pre-processing kernel reads it: per plane a cl_mem
 * holding the plane at byte @offset, rows @stride bytes apart; @wrapped
 * when the buffer wraps host memory (owned, released by release). */
typedef struct {
  int n_planes;
  cl_mem mem[CLINFER_FRAME_MAX_PLANES];
  gboolean wrapped[CLINFER_FRAME_MAX_PLANES];
  gsize offset[CLINFER_FRAME_MAX_PLANES];
  int stride[CLINFER_FRAME_MAX_PLANES];
} OclPreprocessFrame;

/* Imports @frame (of @info) for @core's context: remote planes must be
 * u8 remote tensors of that context, large enough; host planes are
 * wrapped with CL_MEM_USE_HOST_PTR (their bytes added to *copied on
 * devices without unified memory). */
gboolean clinfer_ocl_preprocess_frame_import (OclPreprocessFrame *f,
    OclCore *core, const ClinferFrameInfo *info, const ClinferFrame *frame,
    guint64 *copied, GError **error);
void clinfer_ocl_preprocess_frame_release (OclPreprocessFrame *f);

/* The class table's preprocess_new. */
ClinferDevicePreprocess *clinfer_ocl_preprocess_new (ClinferRemoteContext *context,
    const ClinferPreprocessHost *tables, GError **error);

G_END_DECLS
