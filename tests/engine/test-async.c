/* Asynchronous requests, streams and the performance hint: several
 * requests of one compiled model in flight give exactly what each gives
 * run synchronously; the callback runs once per inference; a running
 * request refuses a second start and a synchronous infer; an error
 * reaches the callback and wait; free waits for a running request; the
 * hint resolves streams and threads as documented; a compile leaves no
 * OpenMP threads behind on the calling thread. With --device GPU
 * (exit 77 without one) the same on the OpenCL device. */
#include <clinfer/clinfer.h>

#include <math.h>
#include <string.h>

static const char *device = "CPU";

static ClinferModel *
read_blazeface (void)
{
  GError *err = NULL;
  g_autofree char *path = g_build_filename (g_getenv ("CLINFER_SOURCE_ROOT"),
      "models", "blazeface", "face_detection_front_128x128_barracuda.onnx",
      NULL);
  ClinferModel *m = clinfer_model_read (path, &err);

  g_assert_no_error (err);
  return m;
}

static ClinferCompiled *
compile_with (ClinferPerformanceHint hint, int threads, int streams)
{
  GError *err = NULL;
  g_autoptr (ClinferModel) m = read_blazeface ();
  g_autoptr (ClinferCompileConfig) cfg = clinfer_compile_config_new ();
  ClinferCompiled *c;

  clinfer_compile_config_set_device (cfg, device);
  clinfer_compile_config_set_performance_hint (cfg, hint);
  clinfer_compile_config_set_threads (cfg, threads);
  clinfer_compile_config_set_streams (cfg, streams);
  c = clinfer_compile (m, cfg, &err);
  g_assert_no_error (err);
  return c;
}

/* The model input filled from @seed. */
static ClinferTensor *
make_input (ClinferCompiled *c, guint32 seed)
{
  ClinferPortInfo info;
  GError *err = NULL;
  ClinferTensor *t;
  float *v;
  gsize n;

  g_assert_true (clinfer_compiled_get_input (c, 0, &info));
  t = clinfer_tensor_new (info.type, &info.shape, &err);
  g_assert_no_error (err);
  v = clinfer_tensor_get_data (t);
  n = clinfer_tensor_get_n_elements (t);
  for (gsize i = 0; i < n; i++) {
    seed = seed * 1664525u + 1013904223u;
    v[i] = (float) (seed >> 8) / (float) (1u << 24) * 2.f - 1.f;
  }
  return t;
}

/* Copies of every output of @r's last inference. */
static GPtrArray *
copy_outputs (ClinferRequest *r, ClinferCompiled *c)
{
  GPtrArray *out = g_ptr_array_new_with_free_func ((GDestroyNotify)
      clinfer_tensor_unref);

  for (guint i = 0; i < clinfer_compiled_get_n_outputs (c); i++) {
    ClinferTensor *t = clinfer_request_get_output (r, i);

    g_assert_nonnull (t);
    g_ptr_array_add (out, clinfer_tensor_copy (t, NULL));
  }
  return out;
}

static void
assert_same_outputs (GPtrArray *a, GPtrArray *b)
{
  g_assert_cmpuint (a->len, ==, b->len);
  for (guint i = 0; i < a->len; i++) {
    ClinferTensor *x = g_ptr_array_index (a, i), *y = g_ptr_array_index (b, i);
    gsize bytes = clinfer_tensor_get_n_elements (x) * sizeof (float);

    g_assert_cmpuint (clinfer_tensor_get_n_elements (x), ==,
        clinfer_tensor_get_n_elements (y));
    g_assert_cmpint (memcmp (clinfer_tensor_get_data (x),
            clinfer_tensor_get_data (y), bytes), ==, 0);
  }
}

typedef struct {
  gint calls;
  gint errors;
} Counter;

static void
count_done (ClinferRequest *request, const GError *error, gpointer user_data)
{
  Counter *c = user_data;

  g_atomic_int_inc (&c->calls);
  if (error != NULL)
    g_atomic_int_inc (&c->errors);
}

/* Six requests, three rounds, on 2 streams: every result equals the same
 * request's synchronous inference on the same input. */
static void
test_many_in_flight (void)
{
  enum { N = 6, ROUNDS = 3 };
  g_autoptr (ClinferCompiled) c = compile_with (CLINFER_HINT_THROUGHPUT, 1, 2);
  ClinferRequest *r[N];
  ClinferTensor *in[N];
  GPtrArray *want[N];
  Counter count = { 0 };
  GError *err = NULL;

  g_assert_cmpint (clinfer_compiled_get_streams (c), ==, 2);
  for (int i = 0; i < N; i++) {
    r[i] = clinfer_compiled_create_request (c, &err);
    g_assert_no_error (err);
    in[i] = make_input (c, 17 + i);
    g_assert_true (clinfer_request_set_input_by_index (r[i], 0, in[i], &err));
    g_assert_true (clinfer_request_infer (r[i], &err));
    want[i] = copy_outputs (r[i], c);
  }
  for (int round = 0; round < ROUNDS; round++) {
    for (int i = 0; i < N; i++)
      g_assert_true (clinfer_request_start_async (r[i], count_done, &count,
              &err));
    for (int i = N - 1; i >= 0; i--) {
      g_autoptr (GPtrArray) got = NULL;

      g_assert_true (clinfer_request_wait (r[i], &err));
      g_assert_no_error (err);
      got = copy_outputs (r[i], c);
      assert_same_outputs (want[i], got);
    }
  }
  g_assert_cmpint (g_atomic_int_get (&count.calls), ==, N * ROUNDS);
  g_assert_cmpint (g_atomic_int_get (&count.errors), ==, 0);
  /* Nothing running: wait returns at once. */
  g_assert_true (clinfer_request_wait (r[0], &err));
  for (int i = 0; i < N; i++) {
    clinfer_request_free (r[i]);
    clinfer_tensor_unref (in[i]);
    g_ptr_array_unref (want[i]);
  }
}

/* A callback that holds the request running until released. */
typedef struct {
  GMutex lock;
  GCond cond;
  gboolean entered, release;
} Gate;

static void
gate_done (ClinferRequest *request, const GError *error, gpointer user_data)
{
  Gate *g = user_data;

  g_mutex_lock (&g->lock);
  g->entered = TRUE;
  g_cond_broadcast (&g->cond);
  while (!g->release)
    g_cond_wait (&g->cond, &g->lock);
  g_mutex_unlock (&g->lock);
}

static void
test_busy_refused (void)
{
  g_autoptr (ClinferCompiled) c = compile_with (CLINFER_HINT_NONE, 1, 0);
  g_autoptr (ClinferRequest) r = clinfer_compiled_create_request (c, NULL);
  g_autoptr (ClinferTensor) in = make_input (c, 3);
  Gate g = { 0 };
  GError *err = NULL;

  g_mutex_init (&g.lock);
  g_cond_init (&g.cond);
  g_assert_true (clinfer_request_set_input_by_index (r, 0, in, &err));
  g_assert_true (clinfer_request_start_async (r, gate_done, &g, &err));
  g_mutex_lock (&g.lock);
  while (!g.entered)
    g_cond_wait (&g.cond, &g.lock);
  g_mutex_unlock (&g.lock);

  g_assert_false (clinfer_request_start_async (r, NULL, NULL, &err));
  g_assert_error (err, CLINFER_ERROR, CLINFER_ERROR_INVALID_ARGUMENT);
  g_assert_nonnull (strstr (err->message, "already running"));
  g_clear_error (&err);
  g_assert_false (clinfer_request_infer (r, &err));
  g_assert_error (err, CLINFER_ERROR, CLINFER_ERROR_INVALID_ARGUMENT);
  g_assert_nonnull (strstr (err->message, "clinfer_request_wait"));
  g_clear_error (&err);

  g_mutex_lock (&g.lock);
  g.release = TRUE;
  g_cond_broadcast (&g.cond);
  g_mutex_unlock (&g.lock);
  g_assert_true (clinfer_request_wait (r, &err));
  g_assert_no_error (err);
  g_assert_nonnull (clinfer_request_get_output (r, 0));
  /* Runs synchronously again. */
  g_assert_true (clinfer_request_infer (r, &err));
  g_mutex_clear (&g.lock);
  g_cond_clear (&g.cond);
}

/* An inference that fails (no input bound) reports through the callback
 * and wait; the request then runs normally. */
static void
test_error_reported (void)
{
  g_autoptr (ClinferCompiled) c = compile_with (CLINFER_HINT_NONE, 1, 0);
  g_autoptr (ClinferRequest) r = clinfer_compiled_create_request (c, NULL);
  g_autoptr (ClinferTensor) in = make_input (c, 5);
  Counter count = { 0 };
  GError *err = NULL;

  g_assert_true (clinfer_request_start_async (r, count_done, &count, &err));
  g_assert_false (clinfer_request_wait (r, &err));
  g_assert_nonnull (err);
  g_assert_nonnull (strstr (err->message, "input"));
  g_clear_error (&err);
  g_assert_cmpint (count.calls, ==, 1);
  g_assert_cmpint (count.errors, ==, 1);
  /* The error was taken: a second wait succeeds. */
  g_assert_true (clinfer_request_wait (r, &err));
  g_assert_true (clinfer_request_set_input_by_index (r, 0, in, &err));
  g_assert_true (clinfer_request_start_async (r, count_done, &count, &err));
  g_assert_true (clinfer_request_wait (r, &err));
  g_assert_no_error (err);
  g_assert_cmpint (count.errors, ==, 1);
}

/* Freeing a running request waits for it (ASan and valgrind check that
 * nothing is used after). */
static void
test_free_while_running (void)
{
  g_autoptr (ClinferCompiled) c = compile_with (CLINFER_HINT_THROUGHPUT, 1, 2);

  for (int i = 0; i < 4; i++) {
    ClinferRequest *r = clinfer_compiled_create_request (c, NULL);
    g_autoptr (ClinferTensor) in = make_input (c, 9);

    g_assert_true (clinfer_request_set_input_by_index (r, 0, in, NULL));
    g_assert_true (clinfer_request_start_async (r, NULL, NULL, NULL));
    clinfer_request_free (r);
  }
}

/* What the hint resolves to on this machine. */
static void
test_hint_resolution (void)
{
  int cores = (int) g_get_num_processors ();
  ClinferPerformanceHint h = CLINFER_HINT_NONE;
  GError *err = NULL;

  {
    g_autoptr (ClinferCompiled) c = compile_with (CLINFER_HINT_NONE, 0, 0);

    g_assert_cmpint (clinfer_compiled_get_streams (c), ==, 1);
    g_assert_cmpuint (clinfer_compiled_get_optimal_requests (c), ==, 1);
  }
  if (strcmp (device, "CPU") == 0) {
    g_autoptr (ClinferCompiled) none = compile_with (CLINFER_HINT_NONE, 0, 0);
    g_autoptr (ClinferCompiled) tput = compile_with (CLINFER_HINT_THROUGHPUT,
        0, 0);
    g_autoptr (ClinferCompiled) tput2 = compile_with (CLINFER_HINT_THROUGHPUT,
        2, 0);
    g_autoptr (ClinferCompiled) lat = compile_with (CLINFER_HINT_LATENCY, 0, 0);
    g_autoptr (ClinferCompiled) lat_fixed = compile_with (CLINFER_HINT_LATENCY,
        2, 0);
    g_autoptr (ClinferCompiled) split = compile_with (CLINFER_HINT_NONE, 0, 2);

    g_assert_cmpint (clinfer_compiled_get_threads (none), ==, cores);
    g_assert_cmpint (clinfer_compiled_get_streams (tput), ==, cores);
    g_assert_cmpint (clinfer_compiled_get_threads (tput), ==, 1);
    g_assert_cmpuint (clinfer_compiled_get_optimal_requests (tput), ==,
        cores > 1 ? (guint) cores : 1);
    g_assert_cmpint (clinfer_compiled_get_threads (tput2), ==, 2);
    g_assert_cmpint (clinfer_compiled_get_streams (tput2), ==,
        MAX (1, cores / 2));
    /* Latency: one stream, one thread or all cores (measured). */
    g_assert_cmpint (clinfer_compiled_get_streams (lat), ==, 1);
    g_assert_true (clinfer_compiled_get_threads (lat) == 1
        || clinfer_compiled_get_threads (lat) == cores);
    g_assert_cmpint (clinfer_compiled_get_performance_hint (lat), ==,
        CLINFER_HINT_LATENCY);
    /* Explicit threads are kept. */
    g_assert_cmpint (clinfer_compiled_get_threads (lat_fixed), ==, 2);
    g_assert_cmpint (clinfer_compiled_get_streams (split), ==, 2);
    g_assert_cmpint (clinfer_compiled_get_threads (split), ==,
        MAX (1, cores / 2));
  } else {
    g_autoptr (ClinferCompiled) tput = compile_with (CLINFER_HINT_THROUGHPUT,
        0, 0);

    g_assert_cmpint (clinfer_compiled_get_streams (tput), ==, 2);
    g_assert_cmpuint (clinfer_compiled_get_optimal_requests (tput), ==, 2);
  }

  g_assert_true (clinfer_performance_hint_from_string ("Throughput", &h, &err));
  g_assert_cmpint (h, ==, CLINFER_HINT_THROUGHPUT);
  g_assert_cmpstr (clinfer_performance_hint_to_string (h), ==, "throughput");
  g_assert_false (clinfer_performance_hint_from_string ("fast", &h, &err));
  g_assert_error (err, CLINFER_ERROR, CLINFER_ERROR_INVALID_ARGUMENT);
  g_assert_nonnull (strstr (err->message, "'fast'"));
  g_clear_error (&err);
}

/* tests/data/dynamic/conv-batch.onnx with N = 5 in one request, against
 * five requests of one frame (also run asynchronously at once). */
static void
test_batch_equals_singles (void)
{
  enum { N = 5, FRAME = 3 * 16 * 16, OUT = 8 * 8 * 8 };
  GError *err = NULL;
  g_autofree char *path = g_build_filename (g_getenv ("CLINFER_SOURCE_ROOT"),
      "tests", "data", "dynamic", "conv-batch.onnx", NULL);
  g_autoptr (ClinferModel) m = clinfer_model_read (path, &err);
  g_autoptr (ClinferCompileConfig) cfg = clinfer_compile_config_new ();
  g_autoptr (ClinferCompiled) c = NULL;
  g_autoptr (ClinferRequest) batch = NULL;
  g_autoptr (ClinferTensor) in = NULL;
  ClinferRequest *single[N];
  ClinferTensor *one[N];
  ClinferShape shape = { 4, {N, 3, 16, 16} };
  const float *got;
  float *v;

  g_assert_no_error (err);
  clinfer_compile_config_set_device (cfg, device);
  clinfer_compile_config_set_performance_hint (cfg, CLINFER_HINT_THROUGHPUT);
  c = clinfer_compile (m, cfg, &err);
  g_assert_no_error (err);
  in = clinfer_tensor_new (CLINFER_TYPE_F32, &shape, &err);
  v = clinfer_tensor_get_data (in);
  for (int i = 0; i < N * FRAME; i++)
    v[i] = (float) ((i * 37) % 101) / 50.f - 1.f;
  batch = clinfer_compiled_create_request (c, &err);
  g_assert_true (clinfer_request_set_input_by_index (batch, 0, in, &err));
  g_assert_true (clinfer_request_infer (batch, &err));
  g_assert_no_error (err);
  got = clinfer_tensor_get_data (clinfer_request_get_output (batch, 0));
  g_assert_cmpint (clinfer_tensor_get_shape (clinfer_request_get_output (batch,
              0))->dims[0], ==, N);

  shape.dims[0] = 1;
  for (int k = 0; k < N; k++) {
    one[k] = clinfer_tensor_new_wrapped (CLINFER_TYPE_F32, &shape, NULL,
        v + k * FRAME, NULL, NULL, &err);
    single[k] = clinfer_compiled_create_request (c, &err);
    g_assert_true (clinfer_request_set_input_by_index (single[k], 0, one[k],
            &err));
    g_assert_true (clinfer_request_start_async (single[k], NULL, NULL, &err));
  }
  for (int k = 0; k < N; k++) {
    const float *want;

    g_assert_true (clinfer_request_wait (single[k], &err));
    g_assert_no_error (err);
    want = clinfer_tensor_get_data (clinfer_request_get_output (single[k], 0));
    for (int i = 0; i < OUT; i++)
      if (fabsf (want[i] - got[k * OUT + i]) > 1e-5f * (1.f + fabsf (want[i])))
        g_error ("frame %d value %d: batch %g, single %g", k, i,
            got[k * OUT + i], want[i]);
    clinfer_request_free (single[k]);
    clinfer_tensor_unref (one[k]);
  }
}

#ifdef __linux__
static guint
count_threads (void)
{
  g_autoptr (GDir) dir = g_dir_open ("/proc/self/task", 0, NULL);
  guint n = 0;

  g_assert_nonnull (dir);
  while (g_dir_read_name (dir) != NULL)
    n++;
  return n;
}

/* On a thread that has no OpenMP threads of its own yet: compiling with
 * two threads, whose set-up opens parallel regions, leaves none behind
 * (they would throttle the OpenMP threads of the thread that infers). */
static gpointer
compile_leaves_no_threads (gpointer data)
{
  guint before = count_threads ();
  gint64 deadline;
  ClinferCompiled *c;

  c = compile_with (CLINFER_HINT_LATENCY, 0, 1);
  clinfer_compiled_unref (c);
  c = compile_with (CLINFER_HINT_NONE, 2, 1);
  clinfer_compiled_unref (c);
  /* The compile's OpenMP threads end with its thread, a little after. */
  deadline = g_get_monotonic_time () + 10 * G_USEC_PER_SEC;
  while (count_threads () > before && g_get_monotonic_time () < deadline)
    g_usleep (10000);
  /* Not more: a thread of an earlier test may have ended meanwhile. */
  g_assert_cmpuint (count_threads (), <=, before);
  return NULL;
}
#endif

static void
test_compile_leaves_no_threads (void)
{
#ifdef __linux__
  if (strcmp (device, "CPU") != 0) {
    g_test_skip ("the CPU device's OpenMP threads");
    return;
  }
  g_thread_join (g_thread_new ("compiler", compile_leaves_no_threads, NULL));
#else
  g_test_skip ("counts threads in /proc/self/task");
#endif
}

int
main (int argc, char **argv)
{
  for (int i = 1; i < argc; i++)
    if (strcmp (argv[i], "--device") == 0 && i + 1 < argc)
      device = argv[++i];
  g_test_init (&argc, &argv, NULL);
  if (strcmp (device, "CPU") != 0) {
    g_autoptr (ClinferRemoteContext) ctx = clinfer_remote_context_new (device,
        NULL);

    if (ctx == NULL) {
      g_printerr ("no %s device: skipped\n", device);
      return 77;
    }
  }
  /* First: no thread of another test around yet. */
  g_test_add_func ("/async/compile-leaves-no-threads",
      test_compile_leaves_no_threads);
  g_test_add_func ("/async/many-in-flight", test_many_in_flight);
  g_test_add_func ("/async/busy-refused", test_busy_refused);
  g_test_add_func ("/async/error-reported", test_error_reported);
  g_test_add_func ("/async/free-while-running", test_free_while_running);
  g_test_add_func ("/async/hint-resolution", test_hint_resolution);
  g_test_add_func ("/async/batch-equals-singles", test_batch_equals_singles);
  return g_test_run ();
}
