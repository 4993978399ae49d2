/* clinfer — ONNX backend test-data conformance runner: loads every test's
 * model.onnx, feeds each data set's input_N.pb, compares every output with
 * output_N.pb, prints per-suite counts and enforces an expected-pass list. */
#include <clinfer/clinfer.h>
#include "frontend/onnx/onnx-reader.h"
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static const char *default_suites[] = { "node", "pytorch-converted",
  "pytorch-operator", "simple", NULL };

typedef struct {
  char *data_dir;
  char **suites;
  char *expected_file;
  char *write_list;
  char *filter;
  char *device;
  gboolean verbose;
  gboolean no_fork;
  int sample;                /* run every N-th test (N > 1: a sample) */
  int sample_offset;         /* ... starting at this one (0 to N - 1): shards */
  int timeout_s;
} Options;

/* g_ptr_array_sort () passes pointers to the elements: sorts the names
 * themselves (by their addresses, as g_strcmp0 on the pointers did, the
 * order changed from run to run, and so did what --sample picked). */
static gint
compare_paths (gconstpointer a, gconstpointer b)
{
  return strcmp (*(const char *const *) a, *(const char *const *) b);
}

/* ---- comparison ---- */

static gboolean
compare_tensors (const ClinferTensor *got, const ClinferTensor *exp,
    GString *why)
{
  ClinferElementType gt = clinfer_tensor_get_element_type (got);
  ClinferElementType et = clinfer_tensor_get_element_type (exp);
  int64_t n = clinfer_tensor_get_n_elements (exp);

  if (gt != et) {
    g_string_printf (why, "type %s, expected %s", clinfer_element_type_name (gt),
        clinfer_element_type_name (et));
    return FALSE;
  }
  if (!clinfer_shape_equal (clinfer_tensor_get_shape (got),
          clinfer_tensor_get_shape (exp))) {
    g_autofree char *a = clinfer_shape_to_string (clinfer_tensor_get_shape (got));
    g_autofree char *b = clinfer_shape_to_string (clinfer_tensor_get_shape (exp));
    g_string_printf (why, "shape %s, expected %s", a, b);
    return FALSE;
  }
  for (int64_t i = 0; i < n; i++) {
    if (et == CLINFER_TYPE_STRING) {
      const char *const *a = clinfer_tensor_get_const_data (got);
      const char *const *b = clinfer_tensor_get_const_data (exp);
      if (g_strcmp0 (a[i], b[i]) != 0) {
        g_string_printf (why, "element %" G_GINT64_FORMAT ": '%s', expected '%s'",
            i, a[i], b[i]);
        return FALSE;
      }
    } else if (clinfer_element_type_is_float (et)) {
      double a = clinfer_tensor_get_as_double (got, i);
      double b = clinfer_tensor_get_as_double (exp, i);
      if (isnan (a) && isnan (b))
        continue;
      if (isinf (b) && a == b)
        continue;
      if (!(fabs (a - b) <= 1e-5 + 1e-3 * fabs (b))) {
        g_string_printf (why, "element %" G_GINT64_FORMAT ": %.9g, expected %.9g",
            i, a, b);
        return FALSE;
      }
    } else if (clinfer_tensor_get_as_int64 (got, i)
        != clinfer_tensor_get_as_int64 (exp, i)) {
      g_string_printf (why, "element %" G_GINT64_FORMAT ": %" G_GINT64_FORMAT
          ", expected %" G_GINT64_FORMAT, i, clinfer_tensor_get_as_int64 (got, i),
          clinfer_tensor_get_as_int64 (exp, i));
      return FALSE;
    }
  }
  return TRUE;
}

/* ---- one test ---- */

static GPtrArray *
read_numbered (const char *dir, const char *prefix, GError **error)
{
  GPtrArray *list = g_ptr_array_new_with_free_func (
      (GDestroyNotify) clinfer_tensor_unref);

  for (int i = 0;; i++) {
    g_autofree char *name = g_strdup_printf ("%s_%d.pb", prefix, i);
    g_autofree char *path = g_build_filename (dir, name, NULL);
    ClinferTensor *t;
    if (!g_file_test (path, G_FILE_TEST_EXISTS))
      break;
    t = clinfer_onnx_read_tensor_file (path, NULL, error);
    if (t == NULL) {
      g_ptr_array_unref (list);
      return NULL;
    }
    g_ptr_array_add (list, t);
  }
  return list;
}

static gboolean
run_data_set (ClinferCompiled *compiled, const char *set_dir, GString *why)
{
  GError *err = NULL;
  g_autoptr (GPtrArray) inputs = read_numbered (set_dir, "input", &err);
  g_autoptr (GPtrArray) outputs = inputs ? read_numbered (set_dir, "output", &err) : NULL;
  g_autoptr (ClinferRequest) req = NULL;

  if (outputs == NULL)
    goto error;
  if (inputs->len != clinfer_compiled_get_n_inputs (compiled)) {
    g_string_printf (why, "%u input files for %u model inputs", inputs->len,
        clinfer_compiled_get_n_inputs (compiled));
    return FALSE;
  }
  req = clinfer_compiled_create_request (compiled, &err);
  if (req == NULL)
    goto error;
  for (guint i = 0; i < inputs->len; i++)
    if (!clinfer_request_set_input_by_index (req, i,
            g_ptr_array_index (inputs, i), &err))
      goto error;
  if (!clinfer_request_infer (req, &err))
    goto error;
  if (outputs->len > clinfer_compiled_get_n_outputs (compiled)) {
    g_string_printf (why, "%u output files for %u model outputs", outputs->len,
        clinfer_compiled_get_n_outputs (compiled));
    return FALSE;
  }
  for (guint i = 0; i < outputs->len; i++) {
    if (!compare_tensors (clinfer_request_get_output (req, i),
            g_ptr_array_index (outputs, i), why)) {
      g_string_prepend (why, g_strdup_printf ("output %u: ", i));
      return FALSE;
    }
  }
  return TRUE;
error:
  g_string_assign (why, err->message);
  g_error_free (err);
  return FALSE;
}

static gboolean
run_test (const Options *o, const char *test_dir, GString *why)
{
  g_autofree char *model_path = g_build_filename (test_dir, "model.onnx", NULL);
  g_autoptr (ClinferCompileConfig) cfg = clinfer_compile_config_new ();
  g_autoptr (ClinferModel) model = NULL;
  g_autoptr (ClinferCompiled) compiled = NULL;
  g_autoptr (GDir) dir = NULL;
  g_autoptr (GPtrArray) sets = g_ptr_array_new_with_free_func (g_free);
  GError *err = NULL;
  const char *name;

  clinfer_compile_config_set_device (cfg, o->device);
  clinfer_compile_config_set_allow_fallback (cfg, FALSE);
  clinfer_compile_config_set_threads (cfg, 1);
  model = clinfer_model_read (model_path, &err);
  if (model)
    compiled = clinfer_compile (model, cfg, &err);
  if (compiled == NULL) {
    g_string_assign (why, err->message);
    g_error_free (err);
    return FALSE;
  }
  dir = g_dir_open (test_dir, 0, NULL);
  while (dir && (name = g_dir_read_name (dir)))
    if (g_str_has_prefix (name, "test_data_set_"))
      g_ptr_array_add (sets, g_build_filename (test_dir, name, NULL));
  g_ptr_array_sort (sets, compare_paths);
  if (sets->len == 0) {
    g_string_assign (why, "no test_data_set_* folder");
    return FALSE;
  }
  for (guint i = 0; i < sets->len; i++)
    if (!run_data_set (compiled, g_ptr_array_index (sets, i), why))
      return FALSE;
  return TRUE;
}

/* Runs a test in a child process so a crash or hang fails only that test;
 * the reason travels back through a pipe. */
static gboolean
run_test_isolated (const Options *o, const char *test_dir, GString *why)
{
  int fds[2];
  pid_t pid;
  int status = 0;
  char buf[4096];
  ssize_t n;

  if (o->no_fork)
    return run_test (o, test_dir, why);
  if (pipe (fds) != 0) {
    g_string_assign (why, "pipe() failed");
    return FALSE;
  }
  fflush (stdout);
  pid = fork ();
  if (pid == 0) {
    g_autoptr (GString) child_why = g_string_new (NULL);
    gboolean ok;
    close (fds[0]);
    alarm ((unsigned) o->timeout_s);
    ok = run_test (o, test_dir, child_why);
    if (!ok && write (fds[1], child_why->str, MIN (child_why->len, sizeof buf - 1)) < 0)
      _exit (3);
    close (fds[1]);
    _exit (ok ? 0 : 1);
  }
  close (fds[1]);
  g_string_truncate (why, 0);
  while ((n = read (fds[0], buf, sizeof buf - 1)) > 0) {
    buf[n] = '\0';
    g_string_append (why, buf);
  }
  close (fds[0]);
  waitpid (pid, &status, 0);
  if (WIFSIGNALED (status)) {
    g_string_printf (why, "%s (signal %d)", WTERMSIG (status) == SIGALRM
        ? "timed out" : "crashed", WTERMSIG (status));
    return FALSE;
  }
  return WIFEXITED (status) && WEXITSTATUS (status) == 0;
}

/* ---- expected list ---- */

static GHashTable *
read_expected (const char *path, GError **error)
{
  g_autofree char *text = NULL;
  g_auto (GStrv) lines = NULL;
  GHashTable *set = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);

  if (path == NULL)
    return set;
  if (!g_file_get_contents (path, &text, NULL, error)) {
    g_hash_table_unref (set);
    return NULL;
  }
  lines = g_strsplit (text, "\n", -1);
  for (int i = 0; lines[i]; i++) {
    char *l = g_strstrip (lines[i]);
    if (*l && *l != '#')
      g_hash_table_add (set, g_strdup (l));
  }
  return set;
}

static GPtrArray *
list_tests (const char *suite_dir)
{
  GPtrArray *names = g_ptr_array_new_with_free_func (g_free);
  g_autoptr (GDir) dir = g_dir_open (suite_dir, 0, NULL);
  const char *name;

  while (dir && (name = g_dir_read_name (dir)))
    g_ptr_array_add (names, g_strdup (name));
  g_ptr_array_sort (names, compare_paths);
  return names;
}

static int
run_all (const Options *o, GHashTable *expected)
{
  int total_pass = 0, total_run = 0, regressions = 0, unlisted = 0, index = 0;
  g_autoptr (GString) passing = g_string_new (NULL);
  g_autoptr (GString) why = g_string_new (NULL);

  for (int s = 0; o->suites[s]; s++) {
    g_autofree char *suite_dir = g_build_filename (o->data_dir, o->suites[s], NULL);
    g_autoptr (GPtrArray) tests = list_tests (suite_dir);
    int pass = 0, run = 0;

    for (guint i = 0; i < tests->len; i++) {
      const char *t = g_ptr_array_index (tests, i);
      g_autofree char *id = g_strdup_printf ("%s/%s", o->suites[s], t);
      g_autofree char *test_dir = g_build_filename (suite_dir, t, NULL);
      gboolean listed = g_hash_table_contains (expected, id), ok;

      if (o->filter && !strstr (id, o->filter))
        continue;
      if (o->sample > 1 && (index++ % o->sample) != o->sample_offset)
        continue;
      run++;
      ok = run_test_isolated (o, test_dir, why);
      if (ok) {
        pass++;
        g_string_append_printf (passing, "%s\n", id);
        if (!listed && g_hash_table_size (expected) > 0) {
          unlisted++;
          printf ("PASS (not in expected list) %s\n", id);
        }
      } else if (listed) {
        regressions++;
        printf ("REGRESSION %s: %s\n", id, why->str);
      } else if (o->verbose) {
        printf ("FAIL %s: %s\n", id, why->str);
      }
    }
    printf ("suite %s: %d passed, %d failed (of %d run)\n", o->suites[s], pass,
        run - pass, run);
    total_pass += pass;
    total_run += run;
  }
  if (o->write_list)
    g_file_set_contents (o->write_list, passing->str, -1, NULL);
  printf ("conformance on %s: %d of %d passed; %d listed tests failed; %d "
      "passing tests not listed\n", o->device, total_pass, total_run,
      regressions, unlisted);
  return regressions > 0 || total_run == 0 ? 1 : 0;
}

int
main (int argc, char **argv)
{
  Options o = { .sample = 1, .timeout_s = 60 };
  g_autofree char *suites_csv = NULL;
  g_auto (GStrv) suites = NULL;
  GOptionEntry entries[] = {
    { "data", 0, 0, G_OPTION_ARG_FILENAME, &o.data_dir, "test data folder", "DIR" },
    { "suites", 0, 0, G_OPTION_ARG_STRING, &suites_csv, "comma-separated suites", "LIST" },
    { "expected", 0, 0, G_OPTION_ARG_FILENAME, &o.expected_file, "expected-pass list", "FILE" },
    { "write-list", 0, 0, G_OPTION_ARG_FILENAME, &o.write_list, "write the passing tests", "FILE" },
    { "filter", 0, 0, G_OPTION_ARG_STRING, &o.filter, "only tests containing TEXT", "TEXT" },
    { "device", 0, 0, G_OPTION_ARG_STRING, &o.device, "device (default CPU)", "NAME" },
    { "sample", 0, 0, G_OPTION_ARG_INT, &o.sample, "run every N-th test", "N" },
    { "sample-offset", 0, 0, G_OPTION_ARG_INT, &o.sample_offset,
        "with --sample N, start at test K (0 to N-1; N runs with K = 0..N-1 "
        "split the list into shards)", "K" },
    { "timeout", 0, 0, G_OPTION_ARG_INT, &o.timeout_s, "seconds per test", "S" },
    { "verbose", 'v', 0, G_OPTION_ARG_NONE, &o.verbose, "print each failure", NULL },
    { "no-fork", 0, 0, G_OPTION_ARG_NONE, &o.no_fork, "run tests in-process", NULL },
    { NULL }
  };
  g_autoptr (GOptionContext) ctx = g_option_context_new ("- ONNX backend conformance");
  g_autoptr (GHashTable) expected = NULL;
  GError *err = NULL;

  g_option_context_add_main_entries (ctx, entries, NULL);
  if (!g_option_context_parse (ctx, &argc, &argv, &err)) {
    fprintf (stderr, "conformance: %s\n", err->message);
    return 2;
  }
  if (o.sample_offset < 0 || o.sample_offset >= MAX (o.sample, 1)) {
    fprintf (stderr, "conformance: --sample-offset %d is outside 0 to %d "
        "(--sample %d)\n", o.sample_offset, MAX (o.sample, 1) - 1, o.sample);
    g_free (o.data_dir);
    g_free (o.device);
    g_free (o.expected_file);
    g_free (o.write_list);
    g_free (o.filter);
    return 2;
  }
  if (o.data_dir == NULL)
    o.data_dir = g_strdup ("/usr/share/libonnx-testdata/data");
  if (o.device == NULL)
    o.device = g_strdup ("CPU");
  if (!g_file_test (o.data_dir, G_FILE_TEST_IS_DIR)) {
    /* No data: skipped (77), never counted as passed. */
    fprintf (stderr, "conformance: %s not found (install libonnx-testdata)\n",
        o.data_dir);
    return 77;
  }
  suites = suites_csv ? g_strsplit (suites_csv, ",", -1) : g_strdupv ((char **) default_suites);
  o.suites = suites;
  expected = read_expected (o.expected_file, &err);
  if (expected == NULL) {
    fprintf (stderr, "conformance: %s\n", err->message);
    return 2;
  }
  {
    int rc = run_all (&o, expected);
    g_free (o.data_dir);
    g_free (o.device);
    g_free (o.expected_file);
    g_free (o.write_list);
    g_free (o.filter);
    return rc;
  }
}
