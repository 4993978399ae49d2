/* Model cache: one read + compile per model-instance-id.
 *
 * Copyright (C) 2025 the clinfer authors
 * SPDX-License-Identifier: Apache-2.0
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "gstclinfermodelcache.h"

GST_DEBUG_CATEGORY_EXTERN (gst_clinfer_debug);
#define GST_CAT_DEFAULT gst_clinfer_debug

/* instance id -> GstClinferSharedModel (not owned: entries remove
 * themselves when their last user releases them). */
static GMutex cache_lock;
static GHashTable *cache;

void
gst_clinfer_model_settings_clear (GstClinferModelSettings * settings)
{
  g_clear_pointer (&settings->model_path, g_free);
  g_clear_pointer (&settings->config_file, g_free);
  g_clear_pointer (&settings->device, g_free);
  g_clear_pointer (&settings->custom_lib, g_free);
  g_clear_pointer (&settings->input_shape, g_free);
  g_clear_pointer (&settings->input_name, g_free);
}

static gboolean
settings_equal (const GstClinferModelSettings * a,
    const GstClinferModelSettings * b)
{
  return g_strcmp0 (a->model_path, b->model_path) == 0
      && g_strcmp0 (a->config_file, b->config_file) == 0
      && g_strcmp0 (a->device, b->device) == 0 && a->threads == b->threads
      && a->hint == b->hint
      && a->memory_limit == b->memory_limit
      && g_strcmp0 (a->custom_lib, b->custom_lib) == 0
      && g_strcmp0 (a->input_shape, b->input_shape) == 0
      && g_strcmp0 (a->input_name, b->input_name) == 0
      && a->batch_size == b->batch_size
      && a->batch_timeout == b->batch_timeout;
}

/* Loads each library of the ';'-separated @libs into @config. */
static gboolean
add_custom_libs (ClinferCompileConfig * config, const gchar * libs,
    gchar ** failed_lib, GError ** error)
{
  g_auto (GStrv) paths = NULL;
  guint i;

  if (libs == NULL)
    return TRUE;
  paths = g_strsplit (libs, ";", -1);
  for (i = 0; paths[i] != NULL; i++) {
    gchar *path = g_strstrip (paths[i]);

    if (*path == '\0')
      continue;
    if (!clinfer_compile_config_add_custom_lib (config, path, error)) {
      *failed_lib = g_strdup (path);
      return FALSE;
    }
  }
  return TRUE;
}

/* The video input's name: input-name, else the first input of rank 4,
 * else the first; NULL when the model has no input. */
static const gchar *
video_input_name (ClinferModel * model,
    const GstClinferModelSettings * settings)
{
  guint i, n = clinfer_model_get_n_inputs (model);
  ClinferPortInfo info;

  if (settings->input_name != NULL)
    return settings->input_name;
  for (i = 0; i < n; i++)
    if (clinfer_model_get_input (model, i, &info) && info.shape.rank == 4)
      return info.name;
  return n > 0 && clinfer_model_get_input (model, 0, &info) ? info.name : NULL;
}

/* input-shape: the video input takes the dims given ("?" keeps one
 * dynamic). */
static gboolean
reshape_video_input (ClinferModel * model,
    const GstClinferModelSettings * settings, GError ** error)
{
  const gchar *name = video_input_name (model, settings);
  ClinferShape shape;

  if (!clinfer_shape_parse (settings->input_shape, &shape, error)) {
    g_prefix_error (error, "input-shape \"%s\": ", settings->input_shape);
    return FALSE;
  }
  if (name == NULL) {
    g_set_error (error, CLINFER_ERROR, CLINFER_ERROR_INVALID_ARGUMENT,
        "input-shape: the model has no input");
    return FALSE;
  }
  return clinfer_model_reshape (model, name, &shape, error);
}

/* batch-size above 1 on a model whose video input has a fixed batch of
 * 1 and static other dims: the model is made to run batch-size frames
 * per request (a dynamic batch is left to each request; other dynamic
 * dims are only known at caps, where a batch of 1 is then refused). */
static gboolean
batch_video_input (ClinferModel * model,
    const GstClinferModelSettings * settings, GError ** error)
{
  const gchar *name = video_input_name (model, settings);
  int idx = name ? clinfer_model_find_input (model, name) : -1;
  ClinferPortInfo info;

  if (idx < 0 || !clinfer_model_get_input (model, idx, &info)
      || info.shape.rank < 1 || info.shape.dims[0] != 1
      || !clinfer_shape_is_static (&info.shape))
    return TRUE;
  if (!clinfer_model_set_batch (model, settings->batch_size, error)) {
    g_prefix_error (error, "batch-size %u: ", settings->batch_size);
    return FALSE;
  }
  return TRUE;
}

static GstClinferSharedModel *
load (const gchar * instance_id, const GstClinferModelSettings * settings,
    gchar ** failed_lib, GError ** error)
{
  g_autoptr (ClinferModel) model = NULL;
  g_autoptr (ClinferCompileConfig) config = NULL;
  ClinferCompiled *compiled;
  GstClinferSharedModel *shared;

  /* The config first: custom ops must be known when the model is read. */
  config = clinfer_compile_config_new ();
  clinfer_compile_config_set_device (config, settings->device);
  clinfer_compile_config_set_threads (config, settings->threads);
  clinfer_compile_config_set_performance_hint (config, settings->hint);
  clinfer_compile_config_set_memory_limit (config, settings->memory_limit);
  if (settings->config_file != NULL)
    clinfer_compile_config_set_config_file (config, settings->config_file);
  if (!add_custom_libs (config, settings->custom_lib, failed_lib, error))
    return NULL;
  model = clinfer_model_read_with_config (settings->model_path, config, error);
  if (model == NULL)
    return NULL;
  if (settings->input_shape != NULL
      && !reshape_video_input (model, settings, error))
    return NULL;
  if (settings->batch_size > 1 && !batch_video_input (model, settings, error))
    return NULL;
  compiled = clinfer_compile (model, config, error);
  if (compiled == NULL)
    return NULL;

  shared = g_new0 (GstClinferSharedModel, 1);
  shared->ref_count = 1;
  shared->instance_id = g_strdup (instance_id);
  shared->settings.model_path = g_strdup (settings->model_path);
  shared->settings.config_file = g_strdup (settings->config_file);
  shared->settings.device = g_strdup (settings->device);
  shared->settings.threads = settings->threads;
  shared->settings.hint = settings->hint;
  shared->settings.memory_limit = settings->memory_limit;
  shared->settings.custom_lib = g_strdup (settings->custom_lib);
  shared->settings.input_shape = g_strdup (settings->input_shape);
  shared->settings.input_name = g_strdup (settings->input_name);
  shared->settings.batch_size = settings->batch_size;
  shared->settings.batch_timeout = settings->batch_timeout;
  shared->model = g_steal_pointer (&model);
  shared->compiled = compiled;
  GST_INFO ("compiled %s for device %s (instance id %s)",
      settings->model_path, clinfer_compiled_get_device_name (compiled),
      GST_STR_NULL (instance_id));
  return shared;
}

GstClinferSharedModel *
gst_clinfer_model_cache_acquire (const gchar * instance_id,
    const GstClinferModelSettings * settings, gboolean * conflict,
    gchar ** failed_lib, GError ** error)
{
  GstClinferSharedModel *shared;

  *conflict = FALSE;
  if (instance_id == NULL || *instance_id == '\0')
    return load (NULL, settings, failed_lib, error);

  /* Compiling under the lock keeps two elements with the same id from
   * compiling the model twice; other ids wait, which only happens while
   * pipelines start. */
  g_mutex_lock (&cache_lock);
  if (cache == NULL)
    cache = g_hash_table_new (g_str_hash, g_str_equal);
  shared = g_hash_table_lookup (cache, instance_id);
  if (shared != NULL && settings_equal (&shared->settings, settings)) {
    shared->ref_count++;
    GST_INFO ("sharing the compiled model of instance id %s (%d users)",
        instance_id, shared->ref_count);
  } else if (shared != NULL) {
    *conflict = TRUE;
    shared = load (NULL, settings, failed_lib, error);
  } else {
    shared = load (instance_id, settings, failed_lib, error);
    if (shared != NULL)
      g_hash_table_insert (cache, shared->instance_id, shared);
  }
  g_mutex_unlock (&cache_lock);
  return shared;
}

GstClinferBatcher *
gst_clinfer_model_cache_get_batcher (GstClinferSharedModel * shared,
    guint input_index, GError ** error)
{
  GstClinferBatcher *batcher;
  ClinferPortInfo info;

  g_mutex_lock (&cache_lock);
  if (shared->batcher != NULL && shared->instance_id == NULL
      && gst_clinfer_batcher_get_input_index (shared->batcher)
      != input_index) {
    /* A private model: its one user changed input-name (its frames in
     * flight were drained first). */
    g_clear_pointer (&shared->batcher, gst_clinfer_batcher_free);
  }
  if (shared->batcher == NULL) {
    shared->batcher = gst_clinfer_batcher_new (shared->compiled, input_index,
        shared->settings.batch_size, shared->settings.batch_timeout, error);
  } else if (gst_clinfer_batcher_get_input_index (shared->batcher)
      != input_index) {
    clinfer_compiled_get_input (shared->compiled,
        gst_clinfer_batcher_get_input_index (shared->batcher), &info);
    g_set_error (error, CLINFER_ERROR, CLINFER_ERROR_INVALID_ARGUMENT,
        "another element of model-instance-id \"%s\" feeds its batches "
        "into input \"%s\" (see input-name)", shared->instance_id,
        info.name);
    g_mutex_unlock (&cache_lock);
    return NULL;
  }
  batcher = shared->batcher;
  g_mutex_unlock (&cache_lock);
  return batcher;
}

static void
shared_free (GstClinferSharedModel * shared)
{
  /* Every user has released its items: the batches end first. */
  gst_clinfer_batcher_free (shared->batcher);
  clinfer_compiled_unref (shared->compiled);
  clinfer_model_unref (shared->model);
  gst_clinfer_model_settings_clear (&shared->settings);
  g_free (shared->instance_id);
  g_free (shared);
}

void
gst_clinfer_model_cache_release (GstClinferSharedModel * shared)
{
  if (shared == NULL)
    return;
  if (shared->instance_id == NULL) {
    shared_free (shared);
    return;
  }
  g_mutex_lock (&cache_lock);
  if (--shared->ref_count == 0) {
    g_hash_table_remove (cache, shared->instance_id);
    if (g_hash_table_size (cache) == 0)
      g_clear_pointer (&cache, g_hash_table_unref);
    shared_free (shared);
  }
  g_mutex_unlock (&cache_lock);
}
