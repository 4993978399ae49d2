/* clinfer — ClinferPreprocess (clinfer/preprocess.h): the choice of the
 * implementation, the device's own (the class entry preprocess_new: the
 * OpenCL kernel) or the host rows, and the input tensor it writes.
 *
 * Copyright (C) 2025 the clinfer authors
 * SPDX-License-Identifier: Apache-2.0
 */
#include "runtime/runtime.h"
#include "devices/device.h"

struct _ClinferPreprocess {
  ClinferPreprocessHost *host;          /* the tables */
  ClinferDevicePreprocess *device;      /* NULL: the host rows */
  ClinferRemoteContext *context;        /* the device's (a reference) */
  ClinferTensor *input;                 /* host rows: the bound input */
  ClinferRemoteTensor *remote_input;    /* device: the bound input */
  guint64 bytes_copied;
  char *description;
};

ClinferPreprocess *
clinfer_preprocess_new (ClinferCompiled *compiled,
    const ClinferFrameInfo *frame_info, const ClinferPreprocessConfig *config,
    GError **error)
{
  ClinferRemoteContext *context = compiled != NULL
      ? clinfer_compiled_get_remote_context (compiled) : NULL;
  const ClinferDeviceClass *klass = context != NULL
      ? context->device->klass : NULL;
  ClinferPreprocess *pp;

  g_return_val_if_fail (frame_info != NULL && config != NULL, NULL);
  pp = g_new0 (ClinferPreprocess, 1);
  pp->host = clinfer_preprocess_host_new (frame_info, config,
      clinfer_cpu_isa_detect (), error);
  if (pp->host == NULL)
    goto failed;
  if (klass != NULL && klass->preprocess_new != NULL) {
    pp->device = klass->preprocess_new (context, pp->host, error);
    if (pp->device == NULL)
      goto failed;
    pp->context = clinfer_remote_context_ref (context);
    pp->description = g_strdup_printf ("%s kernel on %s",
        klass->name, clinfer_remote_context_get_device_name (context));
  } else {
    pp->description = g_strdup_printf ("host (%s)",
        clinfer_cpu_isa_name (pp->host->isa));
  }
  return pp;

failed:
  clinfer_preprocess_free (pp);
  return NULL;
}

void
clinfer_preprocess_free (ClinferPreprocess *pp)
{
  if (pp == NULL)
    return;
  /* The device's state first: its kernel names the input's buffer and
   * it points to the tables. */
  if (pp->device != NULL)
    pp->device->free (pp->device);
  g_clear_pointer (&pp->remote_input, clinfer_remote_tensor_unref);
  g_clear_pointer (&pp->context, clinfer_remote_context_unref);
  g_clear_pointer (&pp->input, clinfer_tensor_unref);
  clinfer_preprocess_host_free (pp->host);
  g_free (pp->description);
  g_free (pp);
}

gboolean
clinfer_preprocess_bind (ClinferPreprocess *pp, ClinferRequest *request,
    guint index, GError **error)
{
  ClinferElementType type;
  ClinferShape shape;

  g_return_val_if_fail (pp != NULL, FALSE);
  type = pp->host->config.type;
  clinfer_preprocess_input_shape (&pp->host->config, &shape);
  if (pp->device != NULL) {
    /* A running kernel may still write the old input. */
    pp->device->done (pp->device);
    g_clear_pointer (&pp->remote_input, clinfer_remote_tensor_unref);
    pp->remote_input = clinfer_remote_context_create_tensor (pp->context,
        type, &shape, error);
    return pp->remote_input != NULL && (request == NULL
        || clinfer_request_set_remote_input_by_index (request, index,
            pp->remote_input, error));
  }
  g_clear_pointer (&pp->input, clinfer_tensor_unref);
  pp->input = clinfer_tensor_new (type, &shape, error);
  return pp->input != NULL && (request == NULL
      || clinfer_request_set_input_by_index (request, index, pp->input,
          error));
}

gboolean
clinfer_preprocess_run (ClinferPreprocess *pp, const ClinferFrame *frame,
    GError **error)
{
  g_return_val_if_fail (pp != NULL && frame != NULL, FALSE);
  pp->bytes_copied = 0;
  if (pp->input == NULL && pp->remote_input == NULL) {
    g_set_error (error, CLINFER_ERROR, CLINFER_ERROR_INVALID_ARGUMENT,
        "pre-processing ran before its input tensor was bound "
        "(clinfer_preprocess_bind)");
    return FALSE;
  }
  if (pp->device != NULL)
    return pp->device->run (pp->device, pp->remote_input, 0, frame,
        &pp->bytes_copied, error);
  if (!clinfer_frame_check (&pp->host->frame, frame, TRUE, error))
    return FALSE;
  clinfer_preprocess_host_run (pp->host, frame,
      clinfer_tensor_get_data (pp->input));
  return TRUE;
}

gboolean
clinfer_preprocess_new_batch_input (ClinferPreprocess *pp, guint batch,
    ClinferTensor **input, ClinferRemoteTensor **remote_input,
    GError **error)
{
  ClinferShape shape;

  g_return_val_if_fail (pp != NULL && input != NULL && remote_input != NULL,
      FALSE);
  *input = NULL;
  *remote_input = NULL;
  if (batch < 1 || batch > G_MAXINT32) {
    g_set_error (error, CLINFER_ERROR, CLINFER_ERROR_INVALID_ARGUMENT,
        "a batch of %u items: expected 1 to %d", batch, G_MAXINT32);
    return FALSE;
  }
  clinfer_preprocess_input_shape (&pp->host->config, &shape);
  shape.dims[0] = batch;
  if (pp->device != NULL) {
    *remote_input = clinfer_remote_context_create_tensor (pp->context,
        pp->host->config.type, &shape, error);
    return *remote_input != NULL;
  }
  *input = clinfer_tensor_new (pp->host->config.type, &shape, error);
  return *input != NULL;
}

/* Checks that @type and @shape are a batch of this pre-processing's
 * inputs with an item @item. */
static gboolean
check_batch_input (const ClinferPreprocess *pp, ClinferElementType type,
    const ClinferShape *shape, guint item, GError **error)
{
  g_autofree char *got = clinfer_shape_to_string (shape);
  g_autofree char *want = NULL;
  ClinferShape item_shape;
  int i;

  clinfer_preprocess_input_shape (&pp->host->config, &item_shape);
  for (i = 1; i < item_shape.rank && shape->rank == item_shape.rank; i++)
    if (shape->dims[i] != item_shape.dims[i])
      break;
  if (type != pp->host->config.type || shape->rank != item_shape.rank
      || i < item_shape.rank) {
    item_shape.dims[0] = CLINFER_DIM_DYNAMIC;
    want = clinfer_shape_to_string (&item_shape);
    g_set_error (error, CLINFER_ERROR, CLINFER_ERROR_INVALID_ARGUMENT,
        "batched input: expected %s of shape %s (any batch), got %s of "
        "shape %s", clinfer_element_type_name (pp->host->config.type), want,
        clinfer_element_type_name (type), got);
    return FALSE;
  }
  if ((gint64) item >= shape->dims[0]) {
    g_set_error (error, CLINFER_ERROR, CLINFER_ERROR_INVALID_ARGUMENT,
        "batched input: item %u of an input of shape %s (%" G_GINT64_FORMAT
        " items)", item, got, shape->dims[0]);
    return FALSE;
  }
  return TRUE;
}

gboolean
clinfer_preprocess_run_item (ClinferPreprocess *pp, const ClinferFrame *frame,
    ClinferTensor *input, ClinferRemoteTensor *remote_input, guint item,
    GError **error)
{
  const ClinferPreprocessConfig *cfg;
  gsize item_bytes;

  g_return_val_if_fail (pp != NULL && frame != NULL, FALSE);
  g_return_val_if_fail ((input == NULL) != (remote_input == NULL), FALSE);
  cfg = &pp->host->config;
  pp->bytes_copied = 0;
  if (remote_input != NULL) {
    if (pp->device == NULL) {
      g_set_error (error, CLINFER_ERROR, CLINFER_ERROR_INVALID_ARGUMENT,
          "batched input: a remote tensor, but this pre-processing runs on "
          "the host (%s): expected a host tensor", pp->description);
      return FALSE;
    }
    if (clinfer_remote_tensor_get_context (remote_input) != pp->context) {
      g_set_error (error, CLINFER_ERROR, CLINFER_ERROR_INVALID_ARGUMENT,
          "batched input: a remote tensor of another context than the "
          "compiled model's");
      return FALSE;
    }
    if (!check_batch_input (pp,
            clinfer_remote_tensor_get_element_type (remote_input),
            clinfer_remote_tensor_get_shape (remote_input), item, error))
      return FALSE;
    return pp->device->run (pp->device, remote_input, item, frame,
        &pp->bytes_copied, error);
  }
  if (!clinfer_tensor_is_contiguous (input)) {
    g_set_error (error, CLINFER_ERROR, CLINFER_ERROR_INVALID_ARGUMENT,
        "batched input: a strided view; expected a contiguous tensor");
    return FALSE;
  }
  if (!check_batch_input (pp, clinfer_tensor_get_element_type (input),
          clinfer_tensor_get_shape (input), item, error)
      || !clinfer_frame_check (&pp->host->frame, frame, TRUE, error))
    return FALSE;
  item_bytes = clinfer_preprocess_item_bytes (cfg);
  clinfer_preprocess_host_run (pp->host, frame,
      (guint8 *) clinfer_tensor_get_data (input) + item * item_bytes);
  return TRUE;
}

void
clinfer_preprocess_done (ClinferPreprocess *pp)
{
  if (pp != NULL && pp->device != NULL)
    pp->device->done (pp->device);
}

ClinferTensor *
clinfer_preprocess_get_tensor (ClinferPreprocess *pp)
{
  return pp->input;
}

ClinferRemoteTensor *
clinfer_preprocess_get_remote_tensor (ClinferPreprocess *pp)
{
  return pp->remote_input;
}

const ClinferPreprocessGeometry *
clinfer_preprocess_get_geometry (const ClinferPreprocess *pp)
{
  return &pp->host->geometry;
}

const char *
clinfer_preprocess_get_description (const ClinferPreprocess *pp)
{
  return pp->description;
}

guint64
clinfer_preprocess_get_bytes_copied (const ClinferPreprocess *pp)
{
  return pp->bytes_copied;
}
