/* Read and compiled models, shared between clinfer elements that set the
 * same model-instance-id (in one or several pipelines of the process).
 *
 * Copyright (C) 2025 the clinfer authors
 * SPDX-License-Identifier: Apache-2.0
 */
#pragma once

#include <gst/gst.h>
#include <clinfer/clinfer.h>
#include "gstclinferbatcher.h"

G_BEGIN_DECLS

typedef struct
{
  gchar *model_path;
  gchar *config_file;
  gchar *device;
  gint threads;
  ClinferPerformanceHint hint;
  guint64 memory_limit;         /* bytes, 0: the machine's memory */
  gchar *custom_lib;            /* ';'-separated library paths, or NULL */
  gchar *input_shape;           /* the video input's dims, or NULL */
  gchar *input_name;            /* which input input_shape is for */
  guint batch_size;             /* 1: no batches */
  guint64 batch_timeout;        /* µs */
} GstClinferModelSettings;

/* A read and compiled model. Immutable once made, so elements on different
 * streaming threads use it at the same time; each creates its own request. */
typedef struct
{
  gint ref_count;
  gchar *instance_id;           /* NULL: private to one element */
  GstClinferModelSettings settings;
  ClinferModel *model;
  ClinferCompiled *compiled;
  /* batch-size above 1: the batches of its users, made by the first
   * (gst_clinfer_model_cache_get_batcher()); under the cache's lock. */
  GstClinferBatcher *batcher;
} GstClinferSharedModel;

/* (transfer full) Loads the custom op libraries, reads the model with them
 * and compiles it, or returns the one already made for @instance_id with
 * the same settings (libraries included). *@conflict is set to TRUE when
 * @instance_id is in use with other settings: the model is then made
 * privately (not shared). NULL with @error (CLINFER_ERROR) on failure;
 * when a custom library failed to load, *@failed_lib gets its path
 * (transfer full). */
GstClinferSharedModel *gst_clinfer_model_cache_acquire (const gchar * instance_id,
    const GstClinferModelSettings * settings, gboolean * conflict,
    gchar ** failed_lib, GError ** error);
void gst_clinfer_model_cache_release (GstClinferSharedModel * shared);
/* (transfer none) The batcher of @shared (settings.batch_size above 1),
 * made at the first call, for frames into input @input_index; NULL with
 * @error when it cannot batch, or when another user feeds another
 * input. */
GstClinferBatcher *gst_clinfer_model_cache_get_batcher (GstClinferSharedModel
    * shared, guint input_index, GError ** error);

void gst_clinfer_model_settings_clear (GstClinferModelSettings * settings);

G_END_DECLS
