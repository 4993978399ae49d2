/* clinfer — OpenCL programs: the embedded kernel sources, building with
 * the build log in errors, and the on-disk binary cache.
 *
 * Cache entries live in $CLINFER_CACHE_DIR (else <XDG cache>/clinfer/opencl)
 * as <sha256>.bin, keyed by device name, platform, driver and device
 * version, options and source. An entry is "CLINFERB" + u32 format + u32 0
 * + u64 payload size + sha256 (payload) + the program binary: an entry
 * that fails these checks, or that the driver rejects, is rebuilt from
 * source and overwritten. Writes go through a temporary file and rename. */
#include "devices/opencl/ocl-internal.h"
#include <glib/gstdio.h>
#include <errno.h>
#include <string.h>

#define CACHE_MAGIC "CLINFERB"
#define CACHE_FORMAT 1
#define CACHE_HEADER (8 + 4 + 4 + 8 + 32)

static guint stat_hits, stat_misses, stat_corrupt, stat_stores;

void
clinfer_ocl_cache_get_stats (OclCacheStats *stats)
{
  stats->hits = g_atomic_int_get (&stat_hits);
  stats->misses = g_atomic_int_get (&stat_misses);
  stats->corrupt = g_atomic_int_get (&stat_corrupt);
  stats->stores = g_atomic_int_get (&stat_stores);
}

const char *
clinfer_ocl_kernel_source (const char *family)
{
  for (guint i = 0; clinfer_ocl_kernel_sources[i].name; i++)
    if (strcmp (clinfer_ocl_kernel_sources[i].name, family) == 0)
      return clinfer_ocl_kernel_sources[i].source;
  return NULL;
}

char *
clinfer_ocl_cache_dir (void)
{
  const char *env = g_getenv ("CLINFER_CACHE_DIR");

  if (env && *env)
    return g_strdup (env);
  return g_build_filename (g_get_user_cache_dir (), "clinfer", "opencl", NULL);
}

static char *
cache_path (const OclCore *core, const char *source, const char *options)
{
  g_autoptr (GChecksum) sum = g_checksum_new (G_CHECKSUM_SHA256);
  const char *parts[] = { core->device_name, core->platform_name,
    core->driver_version, core->device_version, options, source };
  g_autofree char *dir = clinfer_ocl_cache_dir ();
  g_autofree char *file = NULL;

  for (guint i = 0; i < G_N_ELEMENTS (parts); i++)
    g_checksum_update (sum, (const guchar *) parts[i], strlen (parts[i]) + 1);
  file = g_strdup_printf ("%s.bin", g_checksum_get_string (sum));
  return g_build_filename (dir, file, NULL);
}

/* The payload of a valid entry (pointer into @data), or NULL. */
static const guint8 *
entry_payload (const guint8 *data, gsize size, gsize *payload_size)
{
  guint32 format;
  guint64 n;
  guint8 digest[32];
  gsize dlen = sizeof (digest);
  g_autoptr (GChecksum) sum = g_checksum_new (G_CHECKSUM_SHA256);

  if (size < CACHE_HEADER || memcmp (data, CACHE_MAGIC, 8) != 0)
    return NULL;
  memcpy (&format, data + 8, 4);
  memcpy (&n, data + 16, 8);
  if (format != CACHE_FORMAT || n == 0 || n != size - CACHE_HEADER)
    return NULL;
  g_checksum_update (sum, data + CACHE_HEADER, (gssize) n);
  g_checksum_get_digest (sum, digest, &dlen);
  if (memcmp (digest, data + 24, 32) != 0)
    return NULL;
  *payload_size = (gsize) n;
  return data + CACHE_HEADER;
}

/* A program from the cache entry at @path, built; NULL when absent or
 * unusable (*corrupt set for a present but bad entry). */
static cl_program
cache_load (OclCore *core, const char *path, const char *options,
    gboolean *corrupt)
{
  g_autofree guint8 *data = NULL;
  gsize size = 0, n = 0;
  const guint8 *payload;
  cl_int err = CL_SUCCESS, status = CL_SUCCESS;
  cl_program prog;

  *corrupt = FALSE;
  if (!g_file_get_contents (path, (char **) &data, &size, NULL))
    return NULL;
  payload = entry_payload (data, size, &n);
  if (payload == NULL) {
    *corrupt = TRUE;
    return NULL;
  }
  prog = clCreateProgramWithBinary (core->context, 1, &core->device, &n,
      &payload, &status, &err);
  if (err != CL_SUCCESS || status != CL_SUCCESS) {
    *corrupt = TRUE;
    return NULL;
  }
  if (clBuildProgram (prog, 1, &core->device, options, NULL, NULL)
      != CL_SUCCESS) {
    clReleaseProgram (prog);
    *corrupt = TRUE;
    return NULL;
  }
  return prog;
}

static void
cache_store (OclCore *core, cl_program prog, const char *path)
{
  size_t n = 0;
  g_autofree guint8 *entry = NULL;
  guint8 *payload;
  guint32 format = CACHE_FORMAT, zero = 0;
  guint64 n64;
  gsize dlen = 32;
  g_autoptr (GChecksum) sum = g_checksum_new (G_CHECKSUM_SHA256);
  g_autofree char *dir = g_path_get_dirname (path);
  g_autoptr (GError) err = NULL;

  if (clGetProgramInfo (prog, CL_PROGRAM_BINARY_SIZES, sizeof (n), &n, NULL)
      != CL_SUCCESS || n == 0)
    return;
  entry = g_malloc (CACHE_HEADER + n);
  payload = entry + CACHE_HEADER;
  if (clGetProgramInfo (prog, CL_PROGRAM_BINARIES, sizeof (payload), &payload,
          NULL) != CL_SUCCESS)
    return;
  n64 = n;
  memcpy (entry, CACHE_MAGIC, 8);
  memcpy (entry + 8, &format, 4);
  memcpy (entry + 12, &zero, 4);
  memcpy (entry + 16, &n64, 8);
  g_checksum_update (sum, payload, (gssize) n);
  g_checksum_get_digest (sum, entry + 24, &dlen);
  if (g_mkdir_with_parents (dir, 0755) != 0
      || !g_file_set_contents (path, (const char *) entry,
          (gssize) (CACHE_HEADER + n), &err)) {
    g_info ("OpenCL program cache: cannot write %s: %s", path,
        err ? err->message : g_strerror (errno));
    return;
  }
  g_atomic_int_inc (&stat_stores);
}

static char *
build_log (OclCore *core, cl_program prog)
{
  size_t n = 0;
  char *log;

  if (clGetProgramBuildInfo (prog, core->device, CL_PROGRAM_BUILD_LOG, 0, NULL,
          &n) != CL_SUCCESS || n == 0)
    return g_strdup ("(no build log)");
  log = g_malloc0 (n + 1);
  clGetProgramBuildInfo (prog, core->device, CL_PROGRAM_BUILD_LOG, n, log, NULL);
  return g_strstrip (log);
}

static cl_program
build_from_source (OclCore *core, const char *source, const char *options,
    const char *label, GError **error)
{
  cl_int err = CL_SUCCESS;
  cl_program prog = clCreateProgramWithSource (core->context, 1, &source, NULL,
      &err);

  if (!clinfer_ocl_check (err, "clCreateProgramWithSource", error)) {
    g_prefix_error (error, "%s: ", label);
    return NULL;
  }
  err = clBuildProgram (prog, 1, &core->device, options, NULL, NULL);
  if (err != CL_SUCCESS) {
    g_autofree char *log = build_log (core, prog);
    g_set_error (error, CLINFER_ERROR, CLINFER_ERROR_DEVICE,
        "%s: OpenCL build failed on %s (%s, options '%s'); build log:\n%s",
        label, core->name, clinfer_ocl_error_name (err), options, log);
    clReleaseProgram (prog);
    return NULL;
  }
  return prog;
}

cl_program
clinfer_ocl_program_build (OclCore *core, const char *source,
    const char *options, const char *label, GError **error)
{
  g_autofree char *path = cache_path (core, source, options);
  gboolean corrupt = FALSE;
  cl_program prog = cache_load (core, path, options, &corrupt);

  if (prog) {
    g_atomic_int_inc (&stat_hits);
    g_debug ("OpenCL program cache: %s from %s", label, path);
    return prog;
  }
  if (corrupt) {
    g_atomic_int_inc (&stat_corrupt);
    g_info ("OpenCL program cache: %s is unusable, rebuilding %s", path, label);
  }
  g_atomic_int_inc (&stat_misses);
  prog = build_from_source (core, source, options, label, error);
  if (prog)
    cache_store (core, prog, path);
  return prog;
}

cl_program
clinfer_ocl_program_get (OclCore *core, const char *family,
    const char *options, GError **error)
{
  g_autofree char *key = g_strdup_printf ("%s\n%s", family, options);
  const char *common = clinfer_ocl_kernel_source ("common");
  const char *src = clinfer_ocl_kernel_source (family);
  cl_program prog;

  if (src == NULL || common == NULL) {
    g_set_error (error, CLINFER_ERROR, CLINFER_ERROR_DEVICE,
        "no embedded OpenCL kernels named '%s'", family);
    return NULL;
  }
  g_mutex_lock (&core->lock);
  prog = g_hash_table_lookup (core->programs, key);
  if (prog == NULL) {
    g_autofree char *full = g_strconcat (common, "\n", src, NULL);
    g_autofree char *label = g_strdup_printf ("kernels/%s.cl", family);
    prog = clinfer_ocl_program_build (core, full, options, label, error);
    if (prog)
      g_hash_table_insert (core->programs, g_steal_pointer (&key), prog);
  }
  g_mutex_unlock (&core->lock);
  return prog;
}
