/* Batched inference shared by clinfer elements (see gstclinferbatcher.h).
 *
 * A batch goes FREE -> FILLING (elements take items and pre-process into
 * them, several at once) -> RUNNING (closed: full, or its time up, and
 * every item written; started on the compiled model's stream workers) ->
 * FINISHED (the callback came) -> COLLECTED (the first waiter read the
 * outputs) -> FREE once every item is released. One batch fills at a
 * time; more are made when every batch is busy, so an element never waits
 * for a free batch behind frames other elements have yet to release. A
 * timer thread closes the filling batch at its deadline.
 *
 * Copyright (C) 2025 the clinfer authors
 * SPDX-License-Identifier: Apache-2.0
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "gstclinferbatcher.h"

#include <string.h>

GST_DEBUG_CATEGORY_EXTERN (gst_clinfer_debug);
#define GST_CAT_DEFAULT gst_clinfer_debug

typedef enum
{
  BATCH_FREE,
  BATCH_FILLING,
  BATCH_RUNNING,
  BATCH_FINISHED,
  BATCH_COLLECTED,
} BatchState;

struct _GstClinferBatch
{
  GstClinferBatcher *batcher;
  ClinferRequest *request;
  /* The input items are written into: one of them. */
  ClinferTensor *input;
  ClinferRemoteTensor *remote_input;
  BatchState state;
  guint n_items;                /* places taken */
  guint n_writing;              /* of them, still being pre-processed */
  guint n_held;                 /* of them, not yet released */
  gboolean closed;              /* no more places: full or time up */
  gint64 deadline;              /* monotonic µs: closes then */
  gboolean ok;
  GError *error;
  GBytes **outputs;             /* per output, the whole batch's */
  ClinferShape *shapes;         /* per output, one item's */
  ClinferElementType *types;
};

struct _GstClinferBatcher
{
  ClinferCompiled *compiled;
  guint input_index;
  guint batch_size;
  gint64 timeout_us;
  guint n_outputs;

  GMutex lock;
  GCond cond;                   /* any batch changed state; timer: deadline */
  GPtrArray *batches;           /* GstClinferBatch*, owned */
  GstClinferBatch *filling;     /* the one taking items, or NULL */
  GThread *timer;
  gboolean quit;
};

static void
batch_free (GstClinferBatch * batch)
{
  guint i;

  if (batch->request != NULL)
    clinfer_request_free (batch->request);
  g_clear_pointer (&batch->input, clinfer_tensor_unref);
  g_clear_pointer (&batch->remote_input, clinfer_remote_tensor_unref);
  for (i = 0; batch->outputs != NULL && i < batch->batcher->n_outputs; i++)
    g_clear_pointer (&batch->outputs[i], g_bytes_unref);
  g_free (batch->outputs);
  g_free (batch->shapes);
  g_free (batch->types);
  g_clear_error (&batch->error);
  g_free (batch);
}

/* Zeros for the inputs other than the frames' (dynamic dims: the batch
 * size first, 1 elsewhere). */
static gboolean
bind_other_inputs (GstClinferBatcher * batcher, ClinferRequest * request,
    GError ** error)
{
  guint i, n = clinfer_compiled_get_n_inputs (batcher->compiled);

  for (i = 0; i < n; i++) {
    g_autoptr (ClinferTensor) t = NULL;
    ClinferPortInfo info;
    gint k;

    if (i == batcher->input_index
        || !clinfer_compiled_get_input (batcher->compiled, i, &info))
      continue;
    for (k = 0; k < info.shape.rank; k++)
      if (info.shape.dims[k] < 0)
        info.shape.dims[k] = k == 0 ? (int64_t) batcher->batch_size : 1;
    t = clinfer_tensor_new (info.type, &info.shape, error);
    if (t == NULL || !clinfer_request_set_input_by_index (request, i, t,
            error))
      return FALSE;
  }
  return TRUE;
}

/* A new batch with its request and an input made by @pp. */
static GstClinferBatch *
batch_new (GstClinferBatcher * batcher, ClinferPreprocess * pp,
    GError ** error)
{
  GstClinferBatch *batch = g_new0 (GstClinferBatch, 1);
  gboolean ok;

  batch->batcher = batcher;
  batch->outputs = g_new0 (GBytes *, batcher->n_outputs);
  batch->shapes = g_new0 (ClinferShape, batcher->n_outputs);
  batch->types = g_new0 (ClinferElementType, batcher->n_outputs);
  batch->request = clinfer_compiled_create_request (batcher->compiled, error);
  if (batch->request == NULL
      || !clinfer_preprocess_new_batch_input (pp, batcher->batch_size,
          &batch->input, &batch->remote_input, error))
    goto failed;
  if (batch->input != NULL)
    ok = clinfer_request_set_input_by_index (batch->request,
        batcher->input_index, batch->input, error);
  else
    ok = clinfer_request_set_remote_input_by_index (batch->request,
        batcher->input_index, batch->remote_input, error);
  if (!ok || !bind_other_inputs (batcher, batch->request, error))
    goto failed;
  return batch;

failed:
  batch_free (batch);
  return NULL;
}

static void
batch_finished (ClinferRequest * request, const GError * error,
    gpointer user_data)
{
  GstClinferBatch *batch = user_data;
  GstClinferBatcher *batcher = batch->batcher;

  g_mutex_lock (&batcher->lock);
  batch->state = BATCH_FINISHED;
  g_cond_broadcast (&batcher->cond);
  g_mutex_unlock (&batcher->lock);
}

/* With the lock: starts @batch if it is closed and every item written.
 * The lock is let go around the start. */
static void
maybe_start (GstClinferBatcher * batcher, GstClinferBatch * batch)
{
  GError *err = NULL;

  if (batch->state != BATCH_FILLING || !batch->closed
      || batch->n_writing > 0)
    return;
  batch->state = BATCH_RUNNING;
  GST_LOG ("batch %p: starting with %u of %u frames", batch, batch->n_items,
      batcher->batch_size);
  g_mutex_unlock (&batcher->lock);
  if (!clinfer_request_start_async (batch->request, batch_finished, batch,
          &err)) {
    g_mutex_lock (&batcher->lock);
    batch->state = BATCH_COLLECTED;
    batch->ok = FALSE;
    batch->error = err;
    g_cond_broadcast (&batcher->cond);
    return;
  }
  g_mutex_lock (&batcher->lock);
}

/* With the lock: no more items into @batch. */
static void
close_batch (GstClinferBatcher * batcher, GstClinferBatch * batch)
{
  batch->closed = TRUE;
  if (batcher->filling == batch)
    batcher->filling = NULL;
  maybe_start (batcher, batch);
}

/* Closes the filling batch at its deadline. */
static gpointer
timer_thread (gpointer data)
{
  GstClinferBatcher *batcher = data;

  g_mutex_lock (&batcher->lock);
  while (!batcher->quit) {
    GstClinferBatch *batch = batcher->filling;

    if (batch == NULL) {
      g_cond_wait (&batcher->cond, &batcher->lock);
    } else if (g_get_monotonic_time () >= batch->deadline) {
      GST_DEBUG ("batch %p: %u of %u frames after %" G_GINT64_FORMAT
          " µs (batch-timeout)", batch, batch->n_items, batcher->batch_size,
          batcher->timeout_us);
      close_batch (batcher, batch);
    } else {
      g_cond_wait_until (&batcher->cond, &batcher->lock, batch->deadline);
    }
  }
  g_mutex_unlock (&batcher->lock);
  return NULL;
}

GstClinferBatcher *
gst_clinfer_batcher_new (ClinferCompiled * compiled, guint input_index,
    guint batch_size, guint64 timeout_us, GError ** error)
{
  GstClinferBatcher *batcher;
  ClinferPortInfo info;
  g_autofree gchar *shape = NULL;

  if (!clinfer_compiled_get_input (compiled, input_index, &info)) {
    g_set_error (error, CLINFER_ERROR, CLINFER_ERROR_INVALID_ARGUMENT,
        "the model has no input %u", input_index);
    return NULL;
  }
  if (info.shape.rank < 1 || (info.shape.dims[0] != CLINFER_DIM_DYNAMIC
          && info.shape.dims[0] != (int64_t) batch_size)) {
    shape = clinfer_shape_to_string (&info.shape);
    g_set_error (error, CLINFER_ERROR, CLINFER_ERROR_INVALID_ARGUMENT,
        "batches of %u frames need a model input whose first (batch) "
        "dimension is dynamic or %u; input \"%s\" has shape %s", batch_size,
        batch_size, info.name, shape);
    return NULL;
  }
  batcher = g_new0 (GstClinferBatcher, 1);
  batcher->compiled = clinfer_compiled_ref (compiled);
  batcher->input_index = input_index;
  batcher->batch_size = batch_size;
  batcher->timeout_us = (gint64) MIN (timeout_us, (guint64) G_MAXINT64 / 4);
  batcher->n_outputs = clinfer_compiled_get_n_outputs (compiled);
  g_mutex_init (&batcher->lock);
  g_cond_init (&batcher->cond);
  batcher->batches = g_ptr_array_new_with_free_func ((GDestroyNotify)
      batch_free);
  batcher->timer = g_thread_new ("clinfer-batch", timer_thread, batcher);
  return batcher;
}

guint
gst_clinfer_batcher_get_input_index (GstClinferBatcher * batcher)
{
  return batcher->input_index;
}

void
gst_clinfer_batcher_free (GstClinferBatcher * batcher)
{
  guint i;

  if (batcher == NULL)
    return;
  g_mutex_lock (&batcher->lock);
  batcher->quit = TRUE;
  g_cond_broadcast (&batcher->cond);
  g_mutex_unlock (&batcher->lock);
  g_thread_join (batcher->timer);
  for (i = 0; i < batcher->batches->len; i++) {
    GstClinferBatch *batch = g_ptr_array_index (batcher->batches, i);

    /* Released items only; a batch closed by the timer may still run. */
    g_warn_if_fail (batch->n_held == 0);
    clinfer_request_wait (batch->request, NULL);
  }
  g_ptr_array_unref (batcher->batches);
  g_mutex_clear (&batcher->lock);
  g_cond_clear (&batcher->cond);
  clinfer_compiled_unref (batcher->compiled);
  g_free (batcher);
}

/* With the lock: the batch to put a new item in (a free one made the
 * filling one, or a new one), NULL with @error. */
static GstClinferBatch *
filling_batch (GstClinferBatcher * batcher, ClinferPreprocess * pp,
    GError ** error)
{
  GstClinferBatch *batch = NULL;
  guint i;

  if (batcher->filling != NULL)
    return batcher->filling;
  for (i = 0; i < batcher->batches->len && batch == NULL; i++) {
    GstClinferBatch *b = g_ptr_array_index (batcher->batches, i);

    /* Also one that ran without holders (its only frames failed to
     * pre-process): nobody waits for it. */
    if (b->state == BATCH_FREE || (b->state >= BATCH_FINISHED
            && b->n_held == 0)) {
      batch = b;
      clinfer_request_wait (batch->request, NULL);
    }
  }
  if (batch == NULL) {
    batch = batch_new (batcher, pp, error);
    if (batch == NULL)
      return NULL;
    g_ptr_array_add (batcher->batches, batch);
    GST_DEBUG ("batch %p: new (%u batches)", batch, batcher->batches->len);
  }
  batch->state = BATCH_FILLING;
  batch->n_items = batch->n_writing = batch->n_held = 0;
  batch->closed = FALSE;
  batch->ok = FALSE;
  g_clear_error (&batch->error);
  batch->deadline = g_get_monotonic_time () + batcher->timeout_us;
  batcher->filling = batch;
  /* The timer sleeps until the new deadline. */
  g_cond_broadcast (&batcher->cond);
  return batch;
}

gboolean
gst_clinfer_batcher_submit (GstClinferBatcher * batcher,
    ClinferPreprocess * pp, const ClinferFrame * frame,
    GstClinferBatchItem * item, GError ** error)
{
  GstClinferBatch *batch;
  gboolean ok;

  g_mutex_lock (&batcher->lock);
  batch = filling_batch (batcher, pp, error);
  if (batch == NULL) {
    g_mutex_unlock (&batcher->lock);
    return FALSE;
  }
  item->batch = batch;
  item->item = batch->n_items++;
  batch->n_writing++;
  batch->n_held++;
  if (batch->n_items == batcher->batch_size) {
    batch->closed = TRUE;
    batcher->filling = NULL;
  }
  g_mutex_unlock (&batcher->lock);

  /* Outside the lock: elements write their items at once. */
  ok = clinfer_preprocess_run_item (pp, frame, batch->input,
      batch->remote_input, item->item, error);

  g_mutex_lock (&batcher->lock);
  batch->n_writing--;
  if (!ok) {
    /* The place stays taken (other items may be written after it); its
     * stale data goes through the inference and is not read. */
    batch->n_held--;
    item->batch = NULL;
  }
  maybe_start (batcher, batch);
  g_mutex_unlock (&batcher->lock);
  return ok;
}

gboolean
gst_clinfer_batcher_is_finished (GstClinferBatcher * batcher,
    const GstClinferBatchItem * item)
{
  gboolean finished;

  g_mutex_lock (&batcher->lock);
  finished = item->batch->state >= BATCH_FINISHED;
  g_mutex_unlock (&batcher->lock);
  return finished;
}

/* With the lock, once the request has ended: keeps the outputs (one copy
 * per batch, each item's a slice of it). */
static void
collect (GstClinferBatcher * batcher, GstClinferBatch * batch)
{
  GError *err = NULL;
  guint i;

  batch->ok = clinfer_request_wait (batch->request, &err);
  for (i = 0; batch->ok && i < batcher->n_outputs; i++) {
    ClinferTensor *t = clinfer_request_get_output (batch->request, i);
    const ClinferShape *shape = clinfer_tensor_get_shape (t);
    g_autofree gchar *text = NULL;
    ClinferPortInfo info;

    if (shape->rank < 1 || shape->dims[0] != (int64_t) batcher->batch_size) {
      clinfer_compiled_get_output (batcher->compiled, i, &info);
      text = clinfer_shape_to_string (shape);
      g_set_error (&err, CLINFER_ERROR, CLINFER_ERROR_INVALID_ARGUMENT,
          "output \"%s\" of a batch of %u frames has shape %s: expected the "
          "batch size first, to split it per frame", info.name,
          batcher->batch_size, text);
      batch->ok = FALSE;
      break;
    }
    g_clear_pointer (&batch->outputs[i], g_bytes_unref);
    batch->outputs[i] = g_bytes_new (clinfer_tensor_get_const_data (t),
        clinfer_tensor_get_byte_size (t));
    batch->shapes[i] = *shape;
    batch->shapes[i].dims[0] = 1;
    batch->types[i] = clinfer_tensor_get_element_type (t);
  }
  batch->error = err;
  batch->state = BATCH_COLLECTED;
}

gboolean
gst_clinfer_batcher_wait (GstClinferBatcher * batcher,
    const GstClinferBatchItem * item, GError ** error)
{
  GstClinferBatch *batch = item->batch;
  gboolean ok;

  g_mutex_lock (&batcher->lock);
  while (batch->state < BATCH_FINISHED)
    g_cond_wait (&batcher->cond, &batcher->lock);
  if (batch->state == BATCH_FINISHED)
    collect (batcher, batch);
  ok = batch->ok;
  if (!ok && error != NULL)
    *error = g_error_copy (batch->error);
  g_mutex_unlock (&batcher->lock);
  return ok;
}

GBytes *
gst_clinfer_batcher_get_output (GstClinferBatcher * batcher,
    const GstClinferBatchItem * item, guint index, ClinferShape * shape,
    ClinferElementType * type)
{
  GstClinferBatch *batch = item->batch;
  gsize size;

  g_return_val_if_fail (index < batcher->n_outputs, NULL);
  /* Set once collected, read-only until every item is released. */
  size = g_bytes_get_size (batch->outputs[index]) / batcher->batch_size;
  *shape = batch->shapes[index];
  *type = batch->types[index];
  return g_bytes_new_from_bytes (batch->outputs[index], item->item * size,
      size);
}

void
gst_clinfer_batcher_release (GstClinferBatcher * batcher,
    GstClinferBatchItem * item)
{
  GstClinferBatch *batch = item->batch;

  if (batch == NULL)
    return;
  /* No wait: the item was written at submit (the caller's
   * clinfer_preprocess_done() waits for a queued kernel), and its outputs
   * are not wanted; a batch that ends without holders is taken again by
   * filling_batch(). */
  g_mutex_lock (&batcher->lock);
  if (--batch->n_held == 0 && batch->state == BATCH_COLLECTED) {
    GST_LOG ("batch %p: free", batch);
    batch->state = BATCH_FREE;
  }
  g_mutex_unlock (&batcher->lock);
  item->batch = NULL;
}
