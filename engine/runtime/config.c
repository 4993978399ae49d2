/* clinfer — ClinferCompileConfig: the options of clinfer_compile(). */
#include "runtime/runtime.h"
#include "devices/device.h"
#include "passes/passes.h"
#include <unistd.h>
#include <string.h>

guint64
clinfer_physical_memory_size (void)
{
  long pages = sysconf (_SC_PHYS_PAGES), page = sysconf (_SC_PAGESIZE);
  guint64 bytes;

  if (pages <= 0 || page <= 0
      || !g_uint64_checked_mul (&bytes, (guint64) pages, (guint64) page))
    return G_GUINT64_CONSTANT (1) << 40;
  return bytes;
}

ClinferCompileConfig *
clinfer_compile_config_new (void)
{
  ClinferCompileConfig *c = g_new0 (ClinferCompileConfig, 1);

  c->device = g_strdup ("CPU");
  c->allow_fallback = TRUE;
  c->disabled_passes = g_ptr_array_new_with_free_func (g_free);
  c->custom_libs = g_ptr_array_new_with_free_func (g_free);
  c->custom_ops = clinfer_op_set_new ();
  return c;
}

ClinferCompileConfig *
clinfer_compile_config_copy (const ClinferCompileConfig *src)
{
  ClinferCompileConfig *c = clinfer_compile_config_new ();

  g_free (c->device);
  c->device = g_strdup (src->device);
  c->threads = src->threads;
  c->streams = src->streams;
  c->hint = src->hint;
  c->allow_fallback = src->allow_fallback;
  c->profiling = src->profiling;
  c->memory_limit = src->memory_limit;
  c->config_file = g_strdup (src->config_file);
  for (guint i = 0; i < src->disabled_passes->len; i++)
    g_ptr_array_add (c->disabled_passes,
        g_strdup (g_ptr_array_index (src->disabled_passes, i)));
  for (guint i = 0; i < src->custom_libs->len; i++)
    g_ptr_array_add (c->custom_libs,
        g_strdup (g_ptr_array_index (src->custom_libs, i)));
  clinfer_op_set_unref (c->custom_ops);
  c->custom_ops = clinfer_op_set_copy (src->custom_ops);
  if (src->remote_context)
    c->remote_context = clinfer_remote_context_ref (src->remote_context);
  return c;
}

void
clinfer_compile_config_free (ClinferCompileConfig *config)
{
  if (config == NULL)
    return;
  g_free (config->device);
  g_free (config->config_file);
  g_ptr_array_unref (config->disabled_passes);
  g_ptr_array_unref (config->custom_libs);
  clinfer_op_set_unref (config->custom_ops);
  if (config->remote_context)
    clinfer_remote_context_unref (config->remote_context);
  g_free (config);
}

void
clinfer_compile_config_set_device (ClinferCompileConfig *config,
    const char *device)
{
  g_free (config->device);
  config->device = g_strdup (device ? device : "CPU");
}

const char *
clinfer_compile_config_get_device (const ClinferCompileConfig *config)
{
  return config->device;
}

void
clinfer_compile_config_set_threads (ClinferCompileConfig *config, int threads)
{
  config->threads = MAX (threads, 0);
}

int
clinfer_compile_config_get_threads (const ClinferCompileConfig *config)
{
  return config->threads;
}

void
clinfer_compile_config_set_performance_hint (ClinferCompileConfig *config,
    ClinferPerformanceHint hint)
{
  config->hint = hint <= CLINFER_HINT_THROUGHPUT ? hint : CLINFER_HINT_NONE;
}

ClinferPerformanceHint
clinfer_compile_config_get_performance_hint (const ClinferCompileConfig *config)
{
  return config->hint;
}

static const char *const hint_names[] = { "none", "latency", "throughput" };

gboolean
clinfer_performance_hint_from_string (const char *text,
    ClinferPerformanceHint *hint, GError **error)
{
  for (guint i = 0; text != NULL && i < G_N_ELEMENTS (hint_names); i++) {
    if (g_ascii_strcasecmp (text, hint_names[i]) == 0) {
      *hint = (ClinferPerformanceHint) i;
      return TRUE;
    }
  }
  g_set_error (error, CLINFER_ERROR, CLINFER_ERROR_INVALID_ARGUMENT,
      "performance hint '%s': expected latency, throughput or none",
      text ? text : "(null)");
  return FALSE;
}

const char *
clinfer_performance_hint_to_string (ClinferPerformanceHint hint)
{
  return hint <= CLINFER_HINT_THROUGHPUT ? hint_names[hint] : "none";
}

void
clinfer_compile_config_set_streams (ClinferCompileConfig *config, int streams)
{
  config->streams = MAX (streams, 0);
}

int
clinfer_compile_config_get_streams (const ClinferCompileConfig *config)
{
  return config->streams;
}

gboolean
clinfer_compile_config_disable_pass (ClinferCompileConfig *config,
    const char *name, GError **error)
{
  const ClinferPass *p = clinfer_pass_lookup (name);

  if (p == NULL) {
    g_autofree char *all = g_strjoinv (", ", (char **) clinfer_pass_get_names ());
    g_set_error (error, CLINFER_ERROR, CLINFER_ERROR_INVALID_ARGUMENT,
        "unknown pass '%s' (passes: %s)", name, all);
    return FALSE;
  }
  if (p->required) {
    g_set_error (error, CLINFER_ERROR, CLINFER_ERROR_INVALID_ARGUMENT,
        "pass '%s' is required and cannot be disabled", name);
    return FALSE;
  }
  if (!clinfer_compile_config_is_pass_disabled (config, name))
    g_ptr_array_add (config->disabled_passes, g_strdup (name));
  return TRUE;
}

gboolean
clinfer_compile_config_is_pass_disabled (const ClinferCompileConfig *config,
    const char *name)
{
  for (guint i = 0; i < config->disabled_passes->len; i++)
    if (g_strcmp0 (g_ptr_array_index (config->disabled_passes, i), name) == 0)
      return TRUE;
  return FALSE;
}

void
clinfer_compile_config_set_allow_fallback (ClinferCompileConfig *config,
    gboolean allow)
{
  config->allow_fallback = allow;
}

gboolean
clinfer_compile_config_get_allow_fallback (const ClinferCompileConfig *config)
{
  return config->allow_fallback;
}

void
clinfer_compile_config_set_config_file (ClinferCompileConfig *config,
    const char *path)
{
  g_free (config->config_file);
  config->config_file = g_strdup (path);
}

const char *
clinfer_compile_config_get_config_file (const ClinferCompileConfig *config)
{
  return config->config_file;
}

gboolean
clinfer_compile_config_add_custom_lib (ClinferCompileConfig *config,
    const char *path, GError **error)
{
  g_autofree char *abs = path && *path ? g_canonicalize_filename (path, NULL)
      : NULL;

  /* The same file again (--custom-lib given twice, or as ./x.so and x.so)
   * is loaded once. */
  for (guint i = 0; abs && i < config->custom_libs->len; i++) {
    g_autofree char *had = g_canonicalize_filename (
        g_ptr_array_index (config->custom_libs, i), NULL);
    if (strcmp (had, abs) == 0)
      return TRUE;
  }
  if (!clinfer_op_set_add_library (config->custom_ops, path, error))
    return FALSE;
  g_ptr_array_add (config->custom_libs, g_strdup (path));
  return TRUE;
}

gboolean
clinfer_compile_config_add_custom_ops (ClinferCompileConfig *config,
    const ClinferCustomOp *const *ops, guint n_ops, GError **error)
{
  guint before = clinfer_op_set_get_size (config->custom_ops);

  for (guint i = 0; i < n_ops; i++)
    if (!clinfer_op_set_add_custom_op (config->custom_ops, ops[i],
            "clinfer_compile_config_add_custom_ops()", error)) {
      clinfer_op_set_truncate (config->custom_ops, before);
      return FALSE;
    }
  return TRUE;
}

guint
clinfer_compile_config_get_n_custom_ops (const ClinferCompileConfig *config)
{
  return clinfer_op_set_get_size (config->custom_ops);
}

void
clinfer_compile_config_set_profiling (ClinferCompileConfig *config,
    gboolean enable)
{
  config->profiling = enable;
}

void
clinfer_compile_config_set_memory_limit (ClinferCompileConfig *config,
    guint64 bytes)
{
  config->memory_limit = bytes;
}

guint64
clinfer_compile_config_get_memory_limit (const ClinferCompileConfig *config)
{
  return config->memory_limit ? config->memory_limit
      : clinfer_physical_memory_size ();
}

void
clinfer_compile_config_set_remote_context (ClinferCompileConfig *config,
    ClinferRemoteContext *context)
{
  if (context)
    clinfer_remote_context_ref (context);
  if (config->remote_context)
    clinfer_remote_context_unref (config->remote_context);
  config->remote_context = context;
}
