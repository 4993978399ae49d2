/* clinfer tools — shared option parsing, error reporting and the
 * read → inputs → compile → request sequence every CLI goes through. */
#include "tool-common.h"
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

G_DEFINE_QUARK (clinfer-tool-error-quark, tool_error)

void
tool_options_init (ToolOptions *opts, const char *tool_name)
{
  memset (opts, 0, sizeof (*opts));
  opts->tool_name = tool_name;
  opts->default_hint = "none";
  /* GLib writes info and debug lines (G_MESSAGES_DEBUG=clinfer) to
   * stdout by default, among the lines the tools document there: stderr
   * instead. */
  g_log_writer_default_set_use_stderr (TRUE);
}

void
tool_options_clear (ToolOptions *opts)
{
  g_clear_pointer (&opts->model_path, g_free);
  g_clear_pointer (&opts->device, g_free);
  g_clear_pointer (&opts->hint, g_free);
  g_clear_pointer (&opts->shapes, g_strfreev);
  g_clear_pointer (&opts->config_file, g_free);
  g_clear_pointer (&opts->memory_limit, g_free);
  g_clear_pointer (&opts->custom_libs, g_strfreev);
  g_clear_pointer (&opts->disable_passes, g_strfreev);
  g_clear_pointer (&opts->inputs, g_strfreev);
  g_clear_pointer (&opts->args_, g_strfreev);
}

/* Splits "NAME=VALUE" at the first (or, with @at_last, the last) '='. */
static gboolean
split_assignment (const char *arg, gboolean at_last, char **name,
    char **value)
{
  const char *eq = at_last ? strrchr (arg, '=') : strchr (arg, '=');

  if (eq == NULL || eq == arg || eq[1] == '\0')
    return FALSE;
  *name = g_strndup (arg, eq - arg);
  *value = g_strdup (eq + 1);
  return TRUE;
}

/* Syntax of --shape and --input values, checked before anything is read. */
static gboolean
check_assignments (const ToolOptions *opts, GError **error)
{
  for (guint i = 0; opts->shapes && opts->shapes[i]; i++) {
    g_autofree char *name = NULL, *text = NULL;
    g_autoptr(GError) err = NULL;
    ClinferShape shape;
    if (!split_assignment (opts->shapes[i], TRUE, &name, &text)) {
      g_set_error (error, TOOL_ERROR, TOOL_ERROR_USAGE,
          "--shape expects NAME=SHAPE (e.g. data=1x3x224x224), got '%s'",
          opts->shapes[i]);
      return FALSE;
    }
    if (!clinfer_shape_parse (text, &shape, &err)) {
      g_set_error (error, TOOL_ERROR, TOOL_ERROR_USAGE,
          "--shape %s: %s", opts->shapes[i], err->message);
      return FALSE;
    }
  }
  for (guint i = 0; opts->inputs && opts->inputs[i]; i++) {
    g_autofree char *name = NULL, *file = NULL;
    if (!split_assignment (opts->inputs[i], FALSE, &name, &file)) {
      g_set_error (error, TOOL_ERROR, TOOL_ERROR_USAGE,
          "--input expects NAME=FILE.npy, got '%s'", opts->inputs[i]);
      return FALSE;
    }
  }
  return TRUE;
}

static char *
help_description (void)
{
  const char *const *passes = clinfer_pass_get_names ();
  g_autofree char *names = g_strjoinv (", ", (char **) passes);

  return g_strdup_printf ("Inputs are NumPy .npy files (format 1-3, "
      "little-endian, C order) of the input's element type.\n"
      "Compile passes (for --disable-pass): %s\n"
      "Exit status: 0 ok, 1 model/input/run error, 2 usage error.", names);
}

/* Positional arguments and value ranges once GOption is done. */
static gboolean
check_parsed (ToolOptions *opts, GError **error)
{
  guint n_args = opts->args_ ? g_strv_length (opts->args_) : 0;

  if (opts->version || opts->list_devices)
    return TRUE;
  if (n_args == 0) {
    g_set_error (error, TOOL_ERROR, TOOL_ERROR_USAGE,
        "missing MODEL argument (see --help)");
    return FALSE;
  }
  if (n_args > 1) {
    g_set_error (error, TOOL_ERROR, TOOL_ERROR_USAGE,
        "unexpected argument '%s' (only one MODEL is accepted)",
        opts->args_[1]);
    return FALSE;
  }
  opts->model_path = g_strdup (opts->args_[0]);
  if (opts->threads < 0) {
    g_set_error (error, TOOL_ERROR, TOOL_ERROR_USAGE,
        "--threads must be 0 (all cores) or more, got %d", opts->threads);
    return FALSE;
  }
  if (opts->streams < 0) {
    g_set_error (error, TOOL_ERROR, TOOL_ERROR_USAGE,
        "--streams must be 0 (from --hint) or more, got %d", opts->streams);
    return FALSE;
  }
  if (!clinfer_performance_hint_from_string (opts->hint ? opts->hint
          : opts->default_hint, &opts->hint_value, NULL)) {
    g_set_error (error, TOOL_ERROR, TOOL_ERROR_USAGE,
        "--hint: '%s' is not latency, throughput or none", opts->hint);
    return FALSE;
  }
  if (opts->memory_limit
      && !tool_parse_byte_size (opts->memory_limit, &opts->memory_limit_bytes)) {
    g_set_error (error, TOOL_ERROR, TOOL_ERROR_USAGE,
        "--memory-limit: '%s' is not a size (expected bytes, optionally "
        "with K, M, G or T: 512M, 2G)", opts->memory_limit);
    return FALSE;
  }
  return check_assignments (opts, error);
}

gboolean
tool_parse_byte_size (const char *text, guint64 *bytes)
{
  char *end = NULL;
  guint64 v, unit = 1;

  if (text == NULL || !g_ascii_isdigit (*text))
    return FALSE;
  errno = 0;
  v = g_ascii_strtoull (text, &end, 10);
  if (errno)
    return FALSE;
  switch (g_ascii_toupper (*end)) {
    case '\0': break;
    case 'K': unit = G_GUINT64_CONSTANT (1) << 10; end++; break;
    case 'M': unit = G_GUINT64_CONSTANT (1) << 20; end++; break;
    case 'G': unit = G_GUINT64_CONSTANT (1) << 30; end++; break;
    case 'T': unit = G_GUINT64_CONSTANT (1) << 40; end++; break;
    default: return FALSE;
  }
  if (g_ascii_toupper (*end) == 'B' || (*end == 'i' && end[1] == 'B'))
    end += *end == 'i' ? 2 : 1;
  return *end == '\0' && v > 0 && g_uint64_checked_mul (bytes, v, unit);
}

gboolean
tool_options_parse (ToolOptions *opts, const char *summary,
    const GOptionEntry *extra, int *argc, char ***argv, GError **error)
{
  const GOptionEntry shared[] = {
    { "device", 0, 0, G_OPTION_ARG_STRING, &opts->device,
      "Device: CPU (default), GPU, GPU.N or AUTO", "DEVICE" },
    { "threads", 0, 0, G_OPTION_ARG_INT, &opts->threads,
      "CPU threads, per stream (default: from --hint; without one, the "
      "number of cores)", "N" },
    { "hint", 0, 0, G_OPTION_ARG_STRING, &opts->hint,
      "Performance hint: latency (one inference as fast as possible; "
      "threads measured at compile time), throughput (cores split into "
      "streams) or none", "HINT" },
    { "streams", 0, 0, G_OPTION_ARG_INT, &opts->streams,
      "Streams: groups of threads each running its own requests "
      "(default: from --hint)", "N" },
    { "shape", 0, 0, G_OPTION_ARG_FILENAME_ARRAY, &opts->shapes,
      "Fix the dynamic dims of input NAME before compiling, e.g. "
      "data=1x3x224x224 (repeatable)", "NAME=SHAPE" },
    { "config-file", 0, 0, G_OPTION_ARG_FILENAME, &opts->config_file,
      "Custom OpenCL layer XML for the GPU device", "XML" },
    { "custom-lib", 0, 0, G_OPTION_ARG_FILENAME_ARRAY, &opts->custom_libs,
      "Shared library of custom CPU ops (repeatable)", "PATH" },
    { "disable-pass", 0, 0, G_OPTION_ARG_STRING_ARRAY, &opts->disable_passes,
      "Skip compile pass NAME (repeatable)", "NAME" },
    { "memory-limit", 0, 0, G_OPTION_ARG_STRING, &opts->memory_limit,
      "Refuse a model whose tensors need more than SIZE bytes (K, M, G, T "
      "suffixes; default: the machine's physical memory)", "SIZE" },
    { "no-fallback", 0, 0, G_OPTION_ARG_NONE, &opts->no_fallback,
      "Fail instead of running nodes the device cannot run on the CPU", NULL },
    { "input", 0, 0, G_OPTION_ARG_FILENAME_ARRAY, &opts->inputs,
      "Input NAME from a NumPy .npy file (repeatable)", "NAME=FILE.npy" },
    { "version", 0, 0, G_OPTION_ARG_NONE, &opts->version,
      "Print the version and exit", NULL },
    { "list-devices", 0, 0, G_OPTION_ARG_NONE, &opts->list_devices,
      "List the devices (CPU, GPU.N) and exit", NULL },
    { "list-passes", 0, 0, G_OPTION_ARG_NONE, &opts->list_passes,
      "List the compile passes (names for --disable-pass) and exit", NULL },
    { G_OPTION_REMAINING, 0, 0, G_OPTION_ARG_FILENAME_ARRAY, &opts->args_,
      NULL, "MODEL" },
    G_OPTION_ENTRY_NULL
  };
  g_autoptr(GOptionContext) ctx = g_option_context_new (NULL);
  g_autofree char *description = help_description ();
  g_autoptr(GError) err = NULL;

  g_option_context_set_summary (ctx, summary);
  g_option_context_set_description (ctx, description);
  g_option_context_add_main_entries (ctx, shared, NULL);
  if (extra)
    g_option_context_add_main_entries (ctx, extra, NULL);
  if (!g_option_context_parse (ctx, argc, argv, &err)) {
    g_set_error (error, TOOL_ERROR, TOOL_ERROR_USAGE, "%s (see --help)",
        err->message);
    return FALSE;
  }
  if (opts->list_passes) {
    tool_print_passes ();
    exit (TOOL_EXIT_OK);
  }
  return check_parsed (opts, error);
}

void
tool_print_passes (void)
{
  const char *const *names = clinfer_pass_get_names ();

  for (guint i = 0; names[i]; i++)
    printf ("%-22s %s\n", names[i], clinfer_pass_get_description (names[i]));
  fflush (stdout);
}

void
tool_print_devices (void)
{
  g_autoptr (GPtrArray) devices = clinfer_device_list ();

  for (guint i = 0; i < devices->len; i++) {
    const ClinferDeviceInfo *d = g_ptr_array_index (devices, i);
    g_autofree char *index = d->index >= 0 ? g_strdup_printf ("%d", d->index)
        : g_strdup ("-");
    printf ("%s index=%s type=%s fp16=%s platform=\"%s\" driver=\"%s\" "
        "device=\"%s\"\n", d->name, index, d->type, d->fp16 ? "yes" : "no",
        d->platform, d->driver_version, d->device_name);
  }
}

int
tool_exit_code (const GError *error)
{
  if (error == NULL)
    return TOOL_EXIT_OK;
  if (g_error_matches (error, TOOL_ERROR, TOOL_ERROR_USAGE)
      || g_error_matches (error, TOOL_ERROR, TOOL_ERROR_NOT_IMPLEMENTED)
      || error->domain == G_OPTION_ERROR)
    return TOOL_EXIT_USAGE;
  return TOOL_EXIT_ERROR;
}

void
tool_print_error (const char *tool_name, const GError *error)
{
  g_autofree char *msg = g_strdup (error ? error->message : "unknown error");

  /* One line, whatever the message holds. */
  for (char *p = msg; *p; p++)
    if (*p == '\n' || *p == '\r' || *p == '\t')
      *p = ' ';
  g_strchomp (msg);
  fflush (stdout);
  fprintf (stderr, "%s: %s\n", tool_name, msg);
}

int
tool_fail (const char *tool_name, const GError *error)
{
  if (error == NULL)
    return TOOL_EXIT_OK;
  tool_print_error (tool_name, error);
  return tool_exit_code (error);
}

gint64
tool_now_ns (void)
{
  struct timespec ts;

  clock_gettime (CLOCK_MONOTONIC, &ts);
  return (gint64) ts.tv_sec * G_GINT64_CONSTANT (1000000000) + ts.tv_nsec;
}

/* CPU, GPU, GPU.<digits> or AUTO (case-insensitive, as the engine). */
static gboolean
device_name_valid (const char *device)
{
  if (g_ascii_strcasecmp (device, "CPU") == 0
      || g_ascii_strcasecmp (device, "GPU") == 0
      || g_ascii_strcasecmp (device, "AUTO") == 0)
    return TRUE;
  if (g_ascii_strncasecmp (device, "GPU.", 4) != 0 || device[4] == '\0')
    return FALSE;
  for (const char *p = device + 4; *p; p++)
    if (!g_ascii_isdigit (*p))
      return FALSE;
  return TRUE;
}

ClinferCompileConfig *
tool_compile_config_new (const ToolOptions *opts, GError **error)
{
  g_autoptr(ClinferCompileConfig) config = clinfer_compile_config_new ();

  if (opts->device && !device_name_valid (opts->device)) {
    g_set_error (error, TOOL_ERROR, TOOL_ERROR_USAGE,
        "unknown device '%s' (expected CPU, GPU, GPU.N or AUTO)", opts->device);
    return NULL;
  }
  for (guint i = 0; opts->custom_libs && opts->custom_libs[i]; i++)
    if (!clinfer_compile_config_add_custom_lib (config, opts->custom_libs[i],
            error)) {
      g_prefix_error (error, "--custom-lib: ");
      return NULL;
    }
  if (opts->device)
    clinfer_compile_config_set_device (config, opts->device);
  if (opts->config_file)
    clinfer_compile_config_set_config_file (config, opts->config_file);
  clinfer_compile_config_set_threads (config, opts->threads);
  clinfer_compile_config_set_streams (config, opts->streams);
  clinfer_compile_config_set_performance_hint (config, opts->hint_value);
  clinfer_compile_config_set_allow_fallback (config, !opts->no_fallback);
  clinfer_compile_config_set_memory_limit (config, opts->memory_limit_bytes);
  for (guint i = 0; opts->disable_passes && opts->disable_passes[i]; i++) {
    g_autoptr(GError) err = NULL;
    if (!clinfer_compile_config_disable_pass (config, opts->disable_passes[i],
            &err)) {
      g_set_error (error, TOOL_ERROR, TOOL_ERROR_USAGE, "--disable-pass: %s",
          err->message);
      return NULL;
    }
  }
  return g_steal_pointer (&config);
}

/* Engine errors for features that are not there yet become usage errors
 * (exit 2) that say so. */
static void
propagate_engine_error (GError **dest, GError *src)
{
  if (g_error_matches (src, CLINFER_ERROR, CLINFER_ERROR_NOT_IMPLEMENTED)) {
    g_set_error (dest, TOOL_ERROR, TOOL_ERROR_NOT_IMPLEMENTED, "%s%s",
        src->message, strstr (src->message, "not implemented yet") ? ""
        : " (not implemented yet)");
    g_error_free (src);
  } else {
    g_propagate_error (dest, src);
  }
}

/* "'a' (f32 1x3x128x128), 'b' (i64 1)" */
static char *
describe_inputs (ClinferModel *model, ClinferTensor **given)
{
  GString *s = g_string_new (NULL);

  for (guint i = 0; i < clinfer_model_get_n_inputs (model); i++) {
    ClinferPortInfo info;
    g_autofree char *shape = NULL;
    if (given && given[i])
      continue;
    clinfer_model_get_input (model, i, &info);
    shape = clinfer_shape_to_string (&info.shape);
    g_string_append_printf (s, "%s'%s' (%s %s)", s->len ? ", " : "",
        info.name, clinfer_element_type_name (info.type), shape);
  }
  return g_string_free (s, FALSE);
}

static gboolean
find_input (ClinferModel *model, const char *name, const char *option,
    int *index, GError **error)
{
  *index = clinfer_model_find_input (model, name);
  if (*index < 0) {
    g_autofree char *all = describe_inputs (model, NULL);
    g_set_error (error, TOOL_ERROR, TOOL_ERROR_FAILED,
        "%s: the model has no input named '%s' (inputs: %s)", option, name,
        all[0] ? all : "none");
    return FALSE;
  }
  return TRUE;
}

/* Reads every --input file and checks its name and element type. */
static gboolean
load_inputs (ToolSession *s, const ToolOptions *opts, GError **error)
{
  for (guint i = 0; opts->inputs && opts->inputs[i]; i++) {
    g_autofree char *name = NULL, *file = NULL;
    ClinferTensor *t;
    ClinferPortInfo info;
    int idx;

    split_assignment (opts->inputs[i], FALSE, &name, &file);
    if (!find_input (s->model, name, "--input", &idx, error))
      return FALSE;
    if (s->inputs[idx]) {
      g_set_error (error, TOOL_ERROR, TOOL_ERROR_USAGE,
          "--input: input '%s' is given more than once", name);
      return FALSE;
    }
    if (!(t = clinfer_npy_read (file, error))) {
      g_prefix_error (error, "input '%s': ", name);
      return FALSE;
    }
    s->inputs[idx] = t;
    s->input_files[idx] = g_steal_pointer (&file);
    clinfer_model_get_input (s->model, idx, &info);
    if (clinfer_tensor_get_element_type (t) != info.type) {
      g_set_error (error, TOOL_ERROR, TOOL_ERROR_FAILED,
          "input '%s': %s holds %s data but the model expects %s", name,
          s->input_files[idx],
          clinfer_element_type_name (clinfer_tensor_get_element_type (t)),
          clinfer_element_type_name (info.type));
      return FALSE;
    }
  }
  return TRUE;
}

static gboolean
shape_fits (const ClinferShape *want, const ClinferShape *got)
{
  if (want->rank < 0)
    return TRUE;
  if (want->rank != got->rank)
    return FALSE;
  for (int i = 0; i < want->rank; i++)
    if (want->dims[i] >= 0 && want->dims[i] != got->dims[i])
      return FALSE;
  return TRUE;
}

/* --shape first, then the shapes of the given input files. */
static gboolean
apply_shapes (ToolSession *s, const ToolOptions *opts, GError **error)
{
  for (guint i = 0; opts->shapes && opts->shapes[i]; i++) {
    g_autofree char *name = NULL, *text = NULL;
    ClinferShape shape;
    int idx;

    split_assignment (opts->shapes[i], TRUE, &name, &text);
    clinfer_shape_parse (text, &shape, NULL);
    if (!find_input (s->model, name, "--shape", &idx, error)
        || !clinfer_model_reshape (s->model, name, &shape, error))
      return FALSE;
  }
  /* Every input whose batch is 1 or dynamic gets --batch; a fixed batch
   * of 1 is followed through the model (clinfer_model_set_batch ()). */
  if (opts->batch > 0 && !clinfer_model_set_batch (s->model, opts->batch,
          error)) {
    g_prefix_error (error, "--batch %d: ", opts->batch);
    return FALSE;
  }
  for (guint i = 0; i < s->n_inputs; i++) {
    const ClinferShape *got;
    ClinferPortInfo info;

    if (s->inputs[i] == NULL)
      continue;
    clinfer_model_get_input (s->model, i, &info);
    got = clinfer_tensor_get_shape (s->inputs[i]);
    if (!shape_fits (&info.shape, got)) {
      g_autofree char *w = clinfer_shape_to_string (&info.shape);
      g_autofree char *g = clinfer_shape_to_string (got);
      g_set_error (error, TOOL_ERROR, TOOL_ERROR_FAILED,
          "input '%s': %s has shape %s but the model expects %s", info.name,
          s->input_files[i], g, w);
      return FALSE;
    }
    if (!clinfer_shape_is_static (&info.shape)
        && !clinfer_model_reshape (s->model, info.name, got, error))
      return FALSE;
  }
  return TRUE;
}

/* Missing inputs: an error, or random data for static shapes. */
static gboolean
complete_inputs (ToolSession *s, ToolInputPolicy policy, GError **error)
{
  g_autoptr(GRand) rand = g_rand_new_with_seed (42);
  g_autofree char *missing = describe_inputs (s->model, s->inputs);

  if (missing[0] == '\0')
    return TRUE;
  if (policy == TOOL_INPUTS_REQUIRED) {
    g_set_error (error, TOOL_ERROR, TOOL_ERROR_FAILED,
        "missing input%s %s: give %s with --input NAME=FILE.npy",
        strchr (missing, ',') ? "s" : "", missing,
        strchr (missing, ',') ? "each" : "it");
    return FALSE;
  }
  for (guint i = 0; i < s->n_inputs; i++) {
    ClinferPortInfo info;

    if (s->inputs[i])
      continue;
    clinfer_model_get_input (s->model, i, &info);
    if (!clinfer_shape_is_static (&info.shape)) {
      g_autofree char *shape = clinfer_shape_to_string (&info.shape);
      g_set_error (error, TOOL_ERROR, TOOL_ERROR_FAILED,
          "input '%s' has dynamic shape %s: fix it with --shape %s=... or "
          "give it with --input %s=FILE.npy", info.name, shape, info.name,
          info.name);
      return FALSE;
    }
    s->inputs[i] = tool_random_tensor (info.type, &info.shape, rand, error);
    if (s->inputs[i] == NULL) {
      g_prefix_error (error, "input '%s': ", info.name);
      return FALSE;
    }
  }
  return TRUE;
}

static gboolean
compile_and_bind (ToolSession *s, GError **error)
{
  GError *err = NULL;
  gint64 t0 = tool_now_ns ();

  s->compiled = clinfer_compile (s->model, s->config, &err);
  s->compile_ns = tool_now_ns () - t0;
  if (s->compiled == NULL) {
    propagate_engine_error (error, err);
    return FALSE;
  }
  s->request = clinfer_compiled_create_request (s->compiled, error);
  if (s->request == NULL)
    return FALSE;
  for (guint i = 0; i < s->n_inputs; i++)
    if (!clinfer_request_set_input_by_index (s->request, i, s->inputs[i],
            error))
      return FALSE;
  return TRUE;
}

gboolean
tool_session_prepare (ToolSession *s, const ToolOptions *opts,
    ToolInputPolicy policy, gboolean profiling, GError **error)
{
  GError *err = NULL;
  gint64 t0;

  memset (s, 0, sizeof (*s));
  s->config = tool_compile_config_new (opts, error);
  if (s->config == NULL)
    return FALSE;
  clinfer_compile_config_set_profiling (s->config, profiling);
  t0 = tool_now_ns ();
  s->model = clinfer_model_read_with_config (opts->model_path, s->config, &err);
  s->read_ns = tool_now_ns () - t0;
  if (s->model == NULL) {
    propagate_engine_error (error, err);
    return FALSE;
  }
  s->n_inputs = clinfer_model_get_n_inputs (s->model);
  s->inputs = g_new0 (ClinferTensor *, s->n_inputs + 1);
  s->input_files = g_new0 (char *, s->n_inputs + 1);
  return load_inputs (s, opts, error) && apply_shapes (s, opts, error)
      && complete_inputs (s, policy, error) && compile_and_bind (s, error);
}

void
tool_session_clear (ToolSession *s)
{
  g_clear_pointer (&s->request, clinfer_request_free);
  g_clear_pointer (&s->compiled, clinfer_compiled_unref);
  for (guint i = 0; s->inputs && i < s->n_inputs; i++)
    g_clear_pointer (&s->inputs[i], clinfer_tensor_unref);
  g_clear_pointer (&s->inputs, g_free);
  g_clear_pointer (&s->input_files, g_strfreev);
  g_clear_pointer (&s->model, clinfer_model_unref);
  g_clear_pointer (&s->config, clinfer_compile_config_free);
}

static void
fill_random (guint8 *p, ClinferElementType type, gsize n, GRand *rand)
{
  for (gsize i = 0; i < n; i++) {
    double f = g_rand_double_range (rand, -1.0, 1.0);
    gint32 k = g_rand_int_range (rand, 0, 10);
    switch (type) {
      case CLINFER_TYPE_F32: ((float *) p)[i] = (float) f; break;
      case CLINFER_TYPE_F64: ((double *) p)[i] = f; break;
      case CLINFER_TYPE_F16: ((guint16 *) p)[i] = clinfer_float_to_half (f); break;
      case CLINFER_TYPE_BF16:
        ((guint16 *) p)[i] = clinfer_float_to_bfloat16 (f); break;
      case CLINFER_TYPE_BOOL: p[i] = k & 1; break;
      case CLINFER_TYPE_U8: case CLINFER_TYPE_I8: p[i] = (guint8) k; break;
      case CLINFER_TYPE_U16: case CLINFER_TYPE_I16: ((guint16 *) p)[i] = k; break;
      case CLINFER_TYPE_U32: case CLINFER_TYPE_I32: ((guint32 *) p)[i] = k; break;
      case CLINFER_TYPE_U64: case CLINFER_TYPE_I64: ((guint64 *) p)[i] = k; break;
      default: break;
    }
  }
}

ClinferTensor *
tool_random_tensor (ClinferElementType type, const ClinferShape *shape,
    GRand *rand, GError **error)
{
  ClinferTensor *t;

  if (type == CLINFER_TYPE_STRING || clinfer_element_type_size (type) == 0) {
    g_set_error (error, TOOL_ERROR, TOOL_ERROR_FAILED,
        "cannot generate random data of element type %s",
        clinfer_element_type_name (type));
    return NULL;
  }
  t = clinfer_tensor_new (type, shape, error);
  if (t)
    fill_random (clinfer_tensor_get_data (t), type,
        (gsize) clinfer_tensor_get_n_elements (t), rand);
  return t;
}
