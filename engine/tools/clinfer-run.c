/* clinfer-run — runs a model once on .npy inputs and prints one statistics
 * line per graph output (optionally writing the outputs as .npy files). */
#include "tool-common.h"
#include <glib/gstdio.h>
#include <errno.h>
#include <locale.h>
#include <math.h>
#include <stdio.h>

#define TOOL_NAME "clinfer-run"

typedef struct {
  double min, max, mean;
} Stats;

/* min/max/mean as doubles; NaN everywhere for an empty tensor or when any
 * element is NaN (as numpy). */
static Stats
compute_stats (const ClinferTensor *t)
{
  int64_t n = clinfer_tensor_get_n_elements (t);
  gboolean fast = clinfer_tensor_get_element_type (t) == CLINFER_TYPE_F32
      && clinfer_tensor_is_contiguous (t);
  const float *f = clinfer_tensor_get_const_data (t);
  Stats s = { INFINITY, -INFINITY, 0.0 };
  double sum = 0.0;

  if (n <= 0)
    return (Stats) { NAN, NAN, NAN };
  for (int64_t i = 0; i < n; i++) {
    double v = fast ? f[i] : clinfer_tensor_get_as_double (t, i);
    if (isnan (v))
      return (Stats) { NAN, NAN, NAN };
    s.min = MIN (s.min, v);
    s.max = MAX (s.max, v);
    sum += v;
  }
  s.mean = sum / (double) n;
  return s;
}

static void
print_output_line (guint index, const char *name, const ClinferTensor *t)
{
  Stats s = compute_stats (t);
  g_autofree char *shape = clinfer_shape_to_string (clinfer_tensor_get_shape (t));

  printf ("output %u name=%s type=%s shape=%s min=%.6g max=%.6g mean=%.6g\n",
      index, name, clinfer_element_type_name (clinfer_tensor_get_element_type (t)),
      shape, s.min, s.max, s.mean);
}

static gboolean
write_output (const char *dir, guint index, const ClinferTensor *t,
    GError **error)
{
  g_autofree char *file = g_strdup_printf ("output_%u.npy", index);
  g_autofree char *path = g_build_filename (dir, file, NULL);

  return clinfer_npy_write (path, t, error);
}

static gboolean
report_outputs (ToolSession *s, const char *output_dir, GError **error)
{
  guint n = clinfer_compiled_get_n_outputs (s->compiled);

  if (output_dir && g_mkdir_with_parents (output_dir, 0755) != 0) {
    int saved = errno;
    g_set_error (error, TOOL_ERROR, TOOL_ERROR_FAILED,
        "--output-dir: cannot create %s: %s", output_dir, g_strerror (saved));
    return FALSE;
  }
  for (guint i = 0; i < n; i++) {
    ClinferTensor *t = clinfer_request_get_output (s->request, i);
    ClinferPortInfo info;

    clinfer_compiled_get_output (s->compiled, i, &info);
    if (t == NULL) {
      g_set_error (error, TOOL_ERROR, TOOL_ERROR_FAILED,
          "output %u ('%s') was not produced", i, info.name);
      return FALSE;
    }
    print_output_line (i, info.name, t);
    if (output_dir && !write_output (output_dir, i, t, error))
      return FALSE;
  }
  return TRUE;
}

int
main (int argc, char **argv)
{
  g_autofree char *output_dir = NULL;
  const GOptionEntry entries[] = {
    { "output-dir", 0, 0, G_OPTION_ARG_FILENAME, &output_dir,
      "Write output i as DIR/output_<i>.npy in its own element type", "DIR" },
    G_OPTION_ENTRY_NULL
  };
  ToolOptions opts;
  ToolSession session = { 0 };
  g_autoptr(GError) err = NULL;
  int ret;

  setlocale (LC_ALL, "");
  setlocale (LC_NUMERIC, "C");
  g_set_prgname (TOOL_NAME);
  tool_options_init (&opts, TOOL_NAME);
  if (!tool_options_parse (&opts, "Runs MODEL (.onnx) once on the given "
          "inputs and prints, per output,\n  output <i> name=<name> "
          "type=<type> shape=<shape> min=<v> max=<v> mean=<v>", entries,
          &argc, &argv, &err))
    goto out;
  if (opts.list_devices) {
    tool_print_devices ();
    goto out;
  }
  if (opts.version) {
    printf ("%s %s\n", TOOL_NAME, CLINFER_VERSION);
    goto out;
  }
  if (tool_session_prepare (&session, &opts, TOOL_INPUTS_REQUIRED, FALSE, &err)
      && clinfer_request_infer (session.request, &err))
    report_outputs (&session, output_dir, &err);

out:
  ret = tool_fail (TOOL_NAME, err);
  tool_session_clear (&session);
  tool_options_clear (&opts);
  return ret;
}
