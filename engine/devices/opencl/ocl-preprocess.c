/* clinfer — frame pre-processing on an OpenCL device (the class entry
 * preprocess_new; clinfer/preprocess.h): one kernel (kernels/preprocess.cl)
 * reads the frame's planes in place — remote tensors of the context as
 * they are, host planes wrapped with CL_MEM_USE_HOST_PTR — and writes the
 * model input, a remote tensor bound to the request, so inference reads
 * it without a copy. The resize taps, colour matrix and per-channel
 * constants are the host rows' own tables (plan/preprocess-host.c),
 * uploaded once, so both compute the same values.
 *
 * On a device that does not share host memory (a discrete GPU) a frame in
 * host memory would cross the bus whole for the kernel to read a few of
 * its lines (3.7 MB per 1280x720 BGRx frame: on an H200 the element took
 * 1.1-1.35 ms per frame over its source against 0.65 ms of BlazeFace 128
 * inference when the frame crossed whole): there the host rows
 * write the model input, and only that is copied (196 KB for BlazeFace
 * 128), queued without waiting. Frames in remote tensors still go to the
 * kernel.
 *
 * Copyright (C) 2025 the clinfer authors
 * SPDX-License-Identifier: Apache-2.0
 */
#include "devices/opencl/ocl-preprocess.h"

#include <string.h>

typedef struct {
  ClinferDevicePreprocess base;
  const ClinferPreprocessHost *tables;   /* not owned */
  OclCore *core;                         /* a reference */
  cl_kernel kernel;
  cl_mem xtaps, ytaps;
  size_t gws[2];
  /* What the last queued kernel reads, kept until it is done. */
  OclPreprocessFrame pending;
  gboolean has_pending;
  /* The host rows' output for a device without host memory: the last
   * queued copy reads it until done (has_pending). */
  gpointer staging;
} OclPreprocess;

/* The taps as the kernel reads them: (i0, i1, bits of the weight, 0). */
static cl_mem
upload_taps (cl_context ctx, const ClinferPreprocessTap *taps, gint n,
    GError **error)
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
  return clinfer_ocl_check (err, "pre-processing: clCreateBuffer (taps)",
      error) ? mem : NULL;
}

/* Arguments that stay the same for every frame (all but the planes and
 * the output). */
static gboolean
set_constant_args (OclPreprocess *self, GError **error)
{
  const ClinferPreprocessHost *t = self->tables;
  cl_int family = t->family, pixel_stride = t->pixel_stride;
  cl_int pixel_step = (cl_int) t->pixel_step, channels = t->config.channels;
  cl_int width = t->config.width;
  cl_int4 comp = { {t->comp_offset[0], t->comp_offset[1], t->comp_offset[2],
          0} };
  cl_float8 yuv = { {t->y_offset, t->y_scale, t->c_scale, t->rv, t->gu, t->gv,
          t->bu, 0} };
  cl_float4 mean = { {t->mean[0], t->mean[1], t->mean[2], 0} };
  cl_float4 pad = { {t->pad[0], t->pad[1], t->pad[2], 0} };
  cl_float4 inv_scale = { {t->inv_scale[0], t->inv_scale[1],
          t->inv_scale[2], 0} };
  cl_int4 chan = { {(cl_int) t->channel_offset[0],
          (cl_int) t->channel_offset[1], (cl_int) t->channel_offset[2], 0} };
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
  err |= clSetKernelArg (k, 19, sizeof (pad), &pad);
  return clinfer_ocl_check (err, "pre-processing: clSetKernelArg", error);
}

void
clinfer_ocl_preprocess_frame_release (OclPreprocessFrame *f)
{
  int i;

  for (i = 0; i < CLINFER_FRAME_MAX_PLANES; i++) {
    if (f->wrapped[i] && f->mem[i] != NULL)
      clReleaseMemObject (f->mem[i]);
    f->mem[i] = NULL;
    f->wrapped[i] = FALSE;
  }
  f->n_planes = 0;
}

gboolean
clinfer_ocl_preprocess_frame_import (OclPreprocessFrame *f, OclCore *core,
    const ClinferFrameInfo *info, const ClinferFrame *frame, guint64 *copied,
    GError **error)
{
  int n = clinfer_pixel_format_n_planes (info->format), p;

  memset (f, 0, sizeof (*f));
  if (!clinfer_frame_check (info, frame, FALSE, error))
    return FALSE;
  f->n_planes = n;
  for (p = 0; p < n; p++) {
    gsize size = clinfer_frame_plane_size (info, p, frame->stride[p]);
    cl_int err = CL_SUCCESS;

    f->stride[p] = frame->stride[p];
    if (frame->data[p] != NULL) {
      /* Host memory: wrapped, read in place where the device shares host
       * memory (the driver moves it over the bus otherwise). */
      f->mem[p] = clCreateBuffer (core->context, CL_MEM_READ_ONLY
          | CL_MEM_USE_HOST_PTR, size, (gpointer) frame->data[p], &err);
      if (!clinfer_ocl_check (err, "pre-processing: clCreateBuffer "
              "(CL_MEM_USE_HOST_PTR) of a frame plane", error))
        goto failed;
      f->wrapped[p] = TRUE;
      f->offset[p] = 0;
      if (!core->unified_memory && copied != NULL)
        *copied += size;
      continue;
    }
    if (frame->remote[p]->context->device->klass != &clinfer_opencl_device_class
        || ((OclDevice *) frame->remote[p]->context->device)->core->context
        != core->context) {
      g_set_error (error, CLINFER_ERROR, CLINFER_ERROR_INVALID_ARGUMENT,
          "frame plane %d: the remote tensor is not in the OpenCL context "
          "of the compiled model (%s)", p, core->name);
      goto failed;
    }
    if (frame->remote[p]->type != CLINFER_TYPE_U8
        || frame->offset[p] > frame->remote[p]->span
        || size > frame->remote[p]->span - frame->offset[p]) {
      g_set_error (error, CLINFER_ERROR, CLINFER_ERROR_INVALID_ARGUMENT,
          "frame plane %d: expected a u8 remote tensor of at least %"
          G_GSIZE_FORMAT " bytes from offset %" G_GSIZE_FORMAT ", got %s of %"
          G_GSIZE_FORMAT " bytes", p, size, frame->offset[p],
          clinfer_element_type_name (frame->remote[p]->type),
          frame->remote[p]->span);
      goto failed;
    }
    f->mem[p] = (cl_mem) clinfer_remote_tensor_get_cl_mem (frame->remote[p],
        error);
    if (f->mem[p] == NULL)
      goto failed;
    f->offset[p] = frame->offset[p];
  }
  return TRUE;

failed:
  clinfer_ocl_preprocess_frame_release (f);
  return FALSE;
}

static void
ocl_preprocess_done (ClinferDevicePreprocess *base)
{
  OclPreprocess *self = (OclPreprocess *) base;

  if (!self->has_pending)
    return;
  /* Returns at once when the inference has waited already. */
  clFinish (self->core->queue);
  clinfer_ocl_preprocess_frame_release (&self->pending);
  self->has_pending = FALSE;
}

/* TRUE when every plane @frame has is in host memory. */
static gboolean
host_planes_only (const ClinferFrame *frame)
{
  int p;

  for (p = 0; p < CLINFER_FRAME_MAX_PLANES; p++)
    if (frame->remote[p] != NULL)
      return FALSE;
  return TRUE;
}

/* The host rows into the staging buffer, then one queued copy of it into
 * item @item of @out. */
static gboolean
run_on_host (OclPreprocess *self, cl_mem out, guint item,
    const ClinferFrame *frame, guint64 *copied, GError **error)
{
  gsize bytes = clinfer_preprocess_item_bytes (&self->tables->config);
  cl_int err;

  if (!clinfer_frame_check (&self->tables->frame, frame, TRUE, error))
    return FALSE;
  if (self->staging == NULL) {
    self->staging = g_try_malloc (bytes);
    if (self->staging == NULL) {
      g_set_error (error, CLINFER_ERROR, CLINFER_ERROR_OUT_OF_MEMORY,
          "pre-processing: cannot allocate %" G_GSIZE_FORMAT " bytes for "
          "the model input on the host", bytes);
      return FALSE;
    }
  }
  clinfer_preprocess_host_run (self->tables, frame, self->staging);
  err = clEnqueueWriteBuffer (self->core->queue, out, CL_FALSE,
      (size_t) item * bytes, bytes, self->staging, 0, NULL, NULL);
  if (!clinfer_ocl_check (err, "pre-processing: clEnqueueWriteBuffer "
          "(the model input)", error))
    return FALSE;
  self->has_pending = TRUE;
  if (copied != NULL)
    *copied += bytes;
  return TRUE;
}

static gboolean
ocl_preprocess_run (ClinferDevicePreprocess *base, ClinferRemoteTensor *input,
    guint item, const ClinferFrame *frame, guint64 *copied, GError **error)
{
  OclPreprocess *self = (OclPreprocess *) base;
  OclPreprocessFrame *f = &self->pending;
  const ClinferPreprocessConfig *cfg = &self->tables->config;
  cl_int4 off = { {0} }, stride = { {0} };
  cl_long out_base = (cl_long) item * cfg->width * cfg->height
      * cfg->channels;
  cl_mem out;
  cl_int err = CL_SUCCESS;
  gint i;

  ocl_preprocess_done (base);
  out = (cl_mem) clinfer_remote_tensor_get_cl_mem (input, error);
  if (out != NULL && !self->core->unified_memory && host_planes_only (frame))
    return run_on_host (self, out, item, frame, copied, error);
  if (out == NULL || !clinfer_ocl_preprocess_frame_import (f, self->core,
          &self->tables->frame, frame, copied, error))
    return FALSE;
  self->has_pending = TRUE;
  if (f->offset[0] > G_MAXINT32 || f->offset[1] > G_MAXINT32
      || f->offset[2] > G_MAXINT32) {
    g_set_error (error, CLINFER_ERROR, CLINFER_ERROR_INVALID_ARGUMENT,
        "frame plane offsets beyond 2 GiB are not supported");
    ocl_preprocess_done (base);
    return FALSE;
  }
  for (i = 0; i < 3; i++) {
    gint p = MIN (i, f->n_planes - 1);

    off.s[i] = (cl_int) f->offset[p];
    stride.s[i] = f->stride[p];
    err |= clSetKernelArg (self->kernel, i, sizeof (cl_mem), &f->mem[p]);
  }
  err |= clSetKernelArg (self->kernel, 3, sizeof (off), &off);
  err |= clSetKernelArg (self->kernel, 4, sizeof (stride), &stride);
  err |= clSetKernelArg (self->kernel, 17, sizeof (cl_mem), &out);
  err |= clSetKernelArg (self->kernel, 18, sizeof (out_base), &out_base);
  /* Queued, not waited for: the inference after it on the same in-order
   * queue waits for both. The frame's wrappers stay until done. */
  if (err == CL_SUCCESS)
    err = clEnqueueNDRangeKernel (self->core->queue, self->kernel, 2, NULL,
        self->gws, NULL, 0, NULL, NULL);
  if (err != CL_SUCCESS)
    ocl_preprocess_done (base);
  return clinfer_ocl_check (err, "pre-processing kernel", error);
}

static void
ocl_preprocess_free (ClinferDevicePreprocess *base)
{
  OclPreprocess *self = (OclPreprocess *) base;

  ocl_preprocess_done (base);
  if (self->kernel != NULL)
    clReleaseKernel (self->kernel);
  if (self->xtaps != NULL)
    clReleaseMemObject (self->xtaps);
  if (self->ytaps != NULL)
    clReleaseMemObject (self->ytaps);
  if (self->core != NULL)
    clinfer_ocl_core_unref (self->core);
  g_free (self->staging);
  g_free (self);
}

ClinferDevicePreprocess *
clinfer_ocl_preprocess_new (ClinferRemoteContext *context,
    const ClinferPreprocessHost *tables, GError **error)
{
  OclPreprocess *self = g_new0 (OclPreprocess, 1);
  const ClinferPreprocessConfig *cfg = &tables->config;
  g_autofree char *options = NULL;
  cl_program program;
  cl_int err = CL_SUCCESS;

  self->base.run = ocl_preprocess_run;
  self->base.done = ocl_preprocess_done;
  self->base.free = ocl_preprocess_free;
  self->tables = tables;
  self->core = clinfer_ocl_core_ref (((OclDevice *) context->device)->core);

  options = g_strdup_printf ("-DOUT_TYPE=%d", cfg->type == CLINFER_TYPE_F16
      ? 1 : cfg->type == CLINFER_TYPE_U8 ? 2 : 0);
  program = clinfer_ocl_program_get (self->core, "preprocess", options, error);
  if (program == NULL)
    goto failed;
  self->kernel = clCreateKernel (program, "preprocess", &err);
  if (!clinfer_ocl_check (err, "pre-processing: clCreateKernel", error))
    goto failed;
  self->xtaps = upload_taps (self->core->context, tables->xtaps, cfg->width,
      error);
  if (self->xtaps == NULL)
    goto failed;
  self->ytaps = upload_taps (self->core->context, tables->ytaps, cfg->height,
      error);
  if (self->ytaps == NULL || !set_constant_args (self, error))
    goto failed;
  self->gws[0] = cfg->width;
  self->gws[1] = cfg->height;
  return &self->base;

failed:
  ocl_preprocess_free (&self->base);
  return NULL;
}
