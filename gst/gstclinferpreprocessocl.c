/* Pre-processing on an OpenCL device: the frame is imported as remote
 * tensors of the compiled model's context (no copy), and one kernel
 * (kernels/preprocess.cl) writes the model input, an engine-allocated
 * remote tensor bound to the request, so inference reads it in place.
 * The resize taps, colour matrix and per-channel constants are the CPU
 * path's own tables, uploaded once.
 *
 * Copyright (C) 2025 the clinfer authors
 * SPDX-License-Identifier: Apache-2.0
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "gstclinferclmemory.h"
#include "gstclinferpreprocesscpu.h"

#include <string.h>

typedef struct
{
  GstClinferPreprocess parent;
  GstClinferPreprocessCpu *tables;      /* taps and constants */
  ClinferRemoteContext *context;
  cl_command_queue queue;
  cl_kernel kernel;
  cl_mem xtaps, ytaps;
  gboolean unified_memory;      /* CL_DEVICE_HOST_UNIFIED_MEMORY */
  ClinferRemoteTensor *input;   /* the model input */
  size_t gws[2];
  /* The frame the last queued kernel reads, kept until it is done. */
  GstClinferClFrame pending;
  gboolean has_pending;
} GstClinferPreprocessOcl;

static gboolean gst_clinfer_preprocess_ocl_bind (GstClinferPreprocess * pp,
    ClinferRequest * request, guint index, GError ** error);
static gboolean gst_clinfer_preprocess_ocl_run (GstClinferPreprocess * pp,
    GstBuffer * buffer, GError ** error);
static void gst_clinfer_preprocess_ocl_free (GstClinferPreprocess * pp);
static void gst_clinfer_preprocess_ocl_done (GstClinferPreprocess * pp);

static const GstClinferPreprocessFuncs ocl_funcs = {
  "opencl",
  gst_clinfer_preprocess_ocl_bind,
  gst_clinfer_preprocess_ocl_run,
  gst_clinfer_preprocess_ocl_free,
  gst_clinfer_preprocess_ocl_done,
};

static gboolean
cl_check (cl_int err, const gchar * what, GError ** error)
{
  if (err == CL_SUCCESS)
    return TRUE;
  g_set_error (error, GST_LIBRARY_ERROR, GST_LIBRARY_ERROR_FAILED,
      "OpenCL pre-processing: %s failed (error %d)", what, err);
  return FALSE;
}

/* The taps as the kernel reads them: (i0, i1, bits of the weight, 0). */
static cl_mem
upload_taps (cl_context ctx, const Tap * taps, gint n, GError ** error)
{
  g_autofree cl_int4 *data = g_new0 (cl_int4, n);
  cl_int err = CL_SUCCESS;
  cl_mem mem;
  gint i;

  for (i = 0; i < n; i++) {
    data[i].s[0] = taps[i].i0;
    data[i].s[1] = taps[i].i1;
    memcpy (&data[i].s[2], &taps[i].f, sizeof (gfloat));
  }
  mem = clCreateBuffer (ctx, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR,
      sizeof (cl_int4) * n, data, &err);
  return cl_check (err, "clCreateBuffer (taps)", error) ? mem : NULL;
}

static gpointer
context_handle (ClinferRemoteContext * context, const gchar * key)
{
  GVariant *v = clinfer_remote_context_get_property (context, key);

  return v ? (gpointer) (guintptr) g_variant_get_uint64 (v) : NULL;
}

/* Whether the device works on host memory (CPU devices such as PoCL,
 * integrated GPUs): then a wrapped frame is read in place; a discrete GPU
 * has the driver move it over the bus. */
static gboolean
device_has_unified_memory (cl_command_queue queue)
{
  cl_device_id device = NULL;
  cl_bool unified = CL_FALSE;

  if (clGetCommandQueueInfo (queue, CL_QUEUE_DEVICE, sizeof (device), &device,
          NULL) != CL_SUCCESS
      || clGetDeviceInfo (device, CL_DEVICE_HOST_UNIFIED_MEMORY,
          sizeof (unified), &unified, NULL) != CL_SUCCESS)
    return FALSE;
  return unified == CL_TRUE;
}

/* Arguments that stay the same for every frame (all but the planes). */
static gboolean
set_constant_args (GstClinferPreprocessOcl * self, GError ** error)
{
  const GstClinferPreprocessCpu *t = self->tables;
  const GstClinferPreprocessConfig *cfg = &self->parent.config;
  cl_int family = t->family, pixel_stride = t->pixel_stride;
  cl_int pixel_step = (cl_int) t->pixel_step, channels = cfg->channels;
  cl_int width = cfg->width;
  cl_int4 comp = { {t->comp_offset[0], t->comp_offset[1], t->comp_offset[2],
          0}
  };
  cl_float8 yuv = { {t->y_offset, t->y_scale, t->c_scale, t->rv, t->gu, t->gv,
          t->bu, 0}
  };
  cl_float4 mean = { {t->mean[0], t->mean[1], t->mean[2], 0} };
  cl_float4 inv_scale = { {t->inv_scale[0], t->inv_scale[1],
          t->inv_scale[2], 0}
  };
  cl_int4 chan = { {(cl_int) t->channel_offset[0],
          (cl_int) t->channel_offset[1], (cl_int) t->channel_offset[2], 0}
  };
  cl_kernel k = self->kernel;
  cl_int err = CL_SUCCESS;

  err |= clSetKernelArg (k, 5, sizeof (family), &family);
  err |= clSetKernelArg (k, 6, sizeof (pixel_stride), &pixel_stride);
  err |= clSetKernelArg (k, 7, sizeof (comp), &comp);
  err |= clSetKernelArg (k, 8, sizeof (cl_mem), &self->xtaps);
  err |= clSetKernelArg (k, 9, sizeof (cl_mem), &self->ytaps);
  err |= clSetKernelArg (k, 10, sizeof (yuv), &yuv);
  err |= clSetKernelArg (k, 11, sizeof (mean), &mean);
  err |= clSetKernelArg (k, 12, sizeof (inv_scale), &inv_scale);
  err |= clSetKernelArg (k, 13, sizeof (chan), &chan);
  err |= clSetKernelArg (k, 14, sizeof (pixel_step), &pixel_step);
  err |= clSetKernelArg (k, 15, sizeof (channels), &channels);
  err |= clSetKernelArg (k, 16, sizeof (width), &width);
  return cl_check (err, "clSetKernelArg", error);
}

GstClinferPreprocess *
gst_clinfer_preprocess_ocl_new (ClinferRemoteContext * context,
    const GstClinferPreprocessConfig * config, GError ** error)
{
  GstClinferPreprocessOcl *self;
  cl_context ctx = context_handle (context, CLINFER_REMOTE_PROP_OCL_CONTEXT);
  g_autofree gchar *options = NULL;
  cl_program program;
  cl_int err = CL_SUCCESS;

  self = g_new0 (GstClinferPreprocessOcl, 1);
  self->parent.funcs = &ocl_funcs;
  self->parent.config = *config;
  self->context = clinfer_remote_context_ref (context);
  self->queue = context_handle (context, CLINFER_REMOTE_PROP_OCL_QUEUE);
  self->tables = (GstClinferPreprocessCpu *)
      gst_clinfer_preprocess_cpu_new (config, error);
  if (self->tables == NULL)
    goto failed;
  self->parent.geometry = self->tables->parent.geometry;

  options = g_strdup_printf ("-DOUT_TYPE=%d",
      config->type == CLINFER_TYPE_F16 ? 1 : config->type == CLINFER_TYPE_U8
      ? 2 : 0);
  program = clinfer_remote_context_get_program (context, "preprocess",
      options, error);
  if (program == NULL)
    goto failed;
  self->kernel = clCreateKernel (program, "preprocess", &err);
  if (!cl_check (err, "clCreateKernel (preprocess)", error))
    goto failed;
  self->xtaps = upload_taps (ctx, self->tables->xtaps, config->width, error);
  if (self->xtaps == NULL)
    goto failed;
  self->ytaps = upload_taps (ctx, self->tables->ytaps, config->height, error);
  if (self->ytaps == NULL || !set_constant_args (self, error))
    goto failed;
  self->unified_memory = device_has_unified_memory (self->queue);
  self->gws[0] = config->width;
  self->gws[1] = config->height;
  return &self->parent;

failed:
  gst_clinfer_preprocess_ocl_free (&self->parent);
  return NULL;
}

static gboolean
gst_clinfer_preprocess_ocl_bind (GstClinferPreprocess * pp,
    ClinferRequest * request, guint index, GError ** error)
{
  GstClinferPreprocessOcl *self = (GstClinferPreprocessOcl *) pp;
  const GstClinferPreprocessConfig *cfg = &pp->config;
  ClinferShape shape = { 4, {1, cfg->channels, cfg->height, cfg->width} };
  cl_mem out;

  if (cfg->layout == GST_CLINFER_LAYOUT_NHWC) {
    shape.dims[1] = cfg->height;
    shape.dims[2] = cfg->width;
    shape.dims[3] = cfg->channels;
  }
  g_clear_pointer (&self->input, clinfer_remote_tensor_unref);
  self->input = clinfer_remote_context_create_tensor (self->context, cfg->type,
      &shape, error);
  if (self->input == NULL)
    return FALSE;
  out = clinfer_remote_tensor_get_cl_mem (self->input, error);
  if (out == NULL || !cl_check (clSetKernelArg (self->kernel, 17,
              sizeof (cl_mem), &out), "clSetKernelArg (output)", error))
    return FALSE;
  return clinfer_request_set_remote_input_by_index (request, index,
      self->input, error);
}

static gboolean
gst_clinfer_preprocess_ocl_run (GstClinferPreprocess * pp, GstBuffer * buffer,
    GError ** error)
{
  GstClinferPreprocessOcl *self = (GstClinferPreprocessOcl *) pp;
  GstClinferClFrame frame;
  cl_int4 off = { {0} }, stride = { {0} };
  cl_int err = CL_SUCCESS;
  gint i;

  if (self->input == NULL) {
    g_set_error (error, GST_CORE_ERROR, GST_CORE_ERROR_FAILED,
        "pre-processing ran before its input tensor was bound");
    return FALSE;
  }
  gst_clinfer_preprocess_ocl_done (pp);
  if (!gst_clinfer_cl_frame_import (&frame, self->context, buffer,
          &pp->config.vinfo, error))
    return FALSE;
  for (i = 0; i < 3; i++) {
    gint p = MIN (i, frame.n_planes - 1);

    off.s[i] = (cl_int) frame.offset[p];
    stride.s[i] = frame.stride[p];
    err |= clSetKernelArg (self->kernel, i, sizeof (cl_mem), &frame.mem[p]);
  }
  err |= clSetKernelArg (self->kernel, 3, sizeof (off), &off);
  err |= clSetKernelArg (self->kernel, 4, sizeof (stride), &stride);
  if (err == CL_SUCCESS)
    err = clEnqueueNDRangeKernel (self->queue, self->kernel, 2, NULL,
        self->gws, NULL, 0, NULL, NULL);
  pp->bytes_copied = frame.wrapped && !self->unified_memory
      ? gst_buffer_get_size (buffer) : 0;
  /* Queued, not waited for: the inference after it on the same in-order
   * queue waits for both. The frame's wrappers and mapping stay until
   * done (). */
  self->pending = frame;
  self->has_pending = TRUE;
  if (err != CL_SUCCESS)
    gst_clinfer_preprocess_ocl_done (pp);
  return cl_check (err, "preprocess kernel", error);
}

static void
gst_clinfer_preprocess_ocl_done (GstClinferPreprocess * pp)
{
  GstClinferPreprocessOcl *self = (GstClinferPreprocessOcl *) pp;

  if (!self->has_pending)
    return;
  /* Returns at once when the inference has waited already. */
  clFinish (self->queue);
  gst_clinfer_cl_frame_release (&self->pending);
  self->has_pending = FALSE;
}

static void
gst_clinfer_preprocess_ocl_free (GstClinferPreprocess * pp)
{
  GstClinferPreprocessOcl *self = (GstClinferPreprocessOcl *) pp;

  gst_clinfer_preprocess_ocl_done (pp);
  /* The kernel first: its arguments name the input tensor's buffer and
   * the taps. */
  if (self->kernel != NULL)
    clReleaseKernel (self->kernel);
  g_clear_pointer (&self->input, clinfer_remote_tensor_unref);
  if (self->xtaps != NULL)
    clReleaseMemObject (self->xtaps);
  if (self->ytaps != NULL)
    clReleaseMemObject (self->ytaps);
  if (self->tables != NULL)
    gst_clinfer_preprocess_free (&self->tables->parent);
  clinfer_remote_context_unref (self->context);
  g_free (self);
}
