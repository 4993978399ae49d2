/* Batched inference for clinfer elements that share a model-instance-id
 * (batch-size above 1): each element pre-processes its frame into one
 * item of a shared [N, ...] input; the batch runs once N items are in or
 * batch-timeout after its first item, whichever comes first, and every
 * element takes its item of the outputs.
 *
 * Copyright (C) 2025 the clinfer authors
 * SPDX-License-Identifier: Apache-2.0
 */
#pragma once

#include <gst/gst.h>
#include <clinfer/clinfer.h>

G_BEGIN_DECLS

typedef struct _GstClinferBatcher GstClinferBatcher;
typedef struct _GstClinferBatch GstClinferBatch;

/* One frame's place in a batch, from submit to release. */
typedef struct
{
  GstClinferBatch *batch;       /* NULL: none held */
  guint item;
} GstClinferBatchItem;

/* (transfer full) Batches of @batch_size frames for input @input_index of
 * @compiled, whose batch dimension must be dynamic or @batch_size (NULL
 * with @error naming the input otherwise); a partial batch runs
 * @timeout_us after its first frame came. */
GstClinferBatcher *gst_clinfer_batcher_new (ClinferCompiled * compiled,
    guint input_index, guint batch_size, guint64 timeout_us, GError ** error);
guint gst_clinfer_batcher_get_input_index (GstClinferBatcher * batcher);
/* Every item must have been released. */
void gst_clinfer_batcher_free (GstClinferBatcher * batcher);

/* Takes a place in the batch being filled and pre-processes @frame into
 * it with @pp (clinfer_preprocess_run_item()); the batch starts when it
 * is full or its time is up. @pp's run is ended (done) by the caller
 * once the item's batch has finished. FALSE with @error: nothing held. */
gboolean gst_clinfer_batcher_submit (GstClinferBatcher * batcher,
    ClinferPreprocess * pp, const ClinferFrame * frame,
    GstClinferBatchItem * item, GError ** error);
/* Whether @item's batch has finished (never blocks). */
gboolean gst_clinfer_batcher_is_finished (GstClinferBatcher * batcher,
    const GstClinferBatchItem * item);
/* Waits for @item's batch. FALSE with @error when its inference failed. */
gboolean gst_clinfer_batcher_wait (GstClinferBatcher * batcher,
    const GstClinferBatchItem * item, GError ** error);
/* After a successful wait: (transfer full) @item's part of output @index
 * (no copy: a slice of the batch's), its shape (batch 1) and type. */
GBytes *gst_clinfer_batcher_get_output (GstClinferBatcher * batcher,
    const GstClinferBatchItem * item, guint index, ClinferShape * shape,
    ClinferElementType * type);
/* Lets go of @item, at once: a batch still filling or running goes on
 * without it (its outputs for @item are not kept). */
void gst_clinfer_batcher_release (GstClinferBatcher * batcher,
    GstClinferBatchItem * item);

G_END_DECLS
