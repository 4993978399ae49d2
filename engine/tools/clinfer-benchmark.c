/* clinfer-benchmark — times reading, compiling and running a model (random
 * inputs unless given) and prints latency statistics. Latency mode (one
 * request, one inference at a time) ends with "median_ms=<value>";
 * throughput mode (--hint throughput, or --nireq above 1: several
 * asynchronous requests in flight on the compiled model's streams) ends
 * with "fps=<value>", inferences per second across all requests. */
#include "tool-common.h"
#include <locale.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TOOL_NAME "clinfer-benchmark"
#define PROGRESS_MIN_RUNS 50

/* Per-step time sums over the timed iterations (--profile). */
typedef struct {
  guint n_steps;
  gint64 *sum_ns;
  guint runs;
} Profile;

static void
profile_add (Profile *p, ClinferRequest *request)
{
  guint n = 0;
  const ClinferProfileEntry *e = clinfer_request_get_profile (request, &n);

  if (p->sum_ns == NULL) {
    p->n_steps = n;
    p->sum_ns = g_new0 (gint64, MAX (n, 1));
  }
  if (n != p->n_steps)
    return;   /* a different plan (dynamic shapes): not comparable */
  for (guint i = 0; i < n; i++)
    p->sum_ns[i] += e[i].time_ns;
  p->runs++;
}

static int
width (int current, const char *text)
{
  return MAX (current, (int) strlen (text ? text : ""));
}

static int
by_time_desc (gconstpointer a, gconstpointer b, gpointer data)
{
  const Profile *p = data;
  gint64 x = p->sum_ns[*(const guint *) a], y = p->sum_ns[*(const guint *) b];

  return (x < y) - (x > y);
}

/* The steps on the engine's reference kernels (the portable eval every
 * op has; no device or fast kernel took them): where a model loses time
 * to missing kernels. Listed slowest first, then two key lines. */
static void
profile_print_reference (const Profile *p, const ClinferProfileEntry *e,
    guint n, double total)
{
  g_autoptr (GArray) idx = g_array_new (FALSE, FALSE, sizeof (guint));
  double ms = 0.0;

  for (guint i = 0; i < n; i++)
    if (g_strcmp0 (e[i].kernel, "reference") == 0) {
      g_array_append_val (idx, i);
      ms += (double) p->sum_ns[i] / p->runs / 1e6;
    }
  g_array_sort_with_data (idx, by_time_desc, (gpointer) p);
  if (idx->len > 0) {
    printf ("on reference kernels: %u of %u steps, %.4f ms (%.1f%%):\n",
        idx->len, n, ms, total > 0.0 ? 100.0 * ms / total : 0.0);
    for (guint k = 0; k < idx->len; k++) {
      guint i = g_array_index (idx, guint, k);
      printf ("  %s '%s' %s  %.4f ms\n", e[i].op_type ? e[i].op_type : "",
          e[i].node_name ? e[i].node_name : "", e[i].shape ? e[i].shape : "",
          (double) p->sum_ns[i] / p->runs / 1e6);
    }
  }
  printf ("reference_steps=%u\nreference_ms=%.4f\n", idx->len, ms);
}

/* The per-node table, in execution order, from the last run's entries. */
static void
profile_print (const Profile *p, ClinferRequest *request)
{
  guint n = 0;
  const ClinferProfileEntry *e = clinfer_request_get_profile (request, &n);
  int wn = 4, wo = 2, wk = 6, ws = 5;
  double total = 0.0;

  if (n == 0 || n != p->n_steps || p->runs == 0) {
    printf ("profile: no per-node timings available\n");
    return;
  }
  for (guint i = 0; i < n; i++) {
    wn = width (wn, e[i].node_name);
    wo = width (wo, e[i].op_type);
    wk = width (wk, e[i].kernel);
    ws = width (ws, e[i].shape);
    total += (double) p->sum_ns[i] / p->runs / 1e6;
  }
  printf ("profile (average over %u iterations, execution order):\n", p->runs);
  printf ("%-*s  %-*s  %-*s  %-*s  %10s  %6s\n", wn, "node", wo, "op", wk,
      "kernel", ws, "shape", "avg_ms", "%");
  for (guint i = 0; i < n; i++) {
    double ms = (double) p->sum_ns[i] / p->runs / 1e6;
    printf ("%-*s  %-*s  %-*s  %-*s  %10.4f  %6.2f\n", wn,
        e[i].node_name ? e[i].node_name : "", wo,
        e[i].op_type ? e[i].op_type : "", wk, e[i].kernel ? e[i].kernel : "",
        ws, e[i].shape ? e[i].shape : "", ms,
        total > 0.0 ? 100.0 * ms / total : 0.0);
  }
  printf ("%-*s  %10.4f  %6.2f\n", wn + wo + wk + ws + 6, "total", total,
      100.0);
  profile_print_reference (p, e, n, total);
}

static int
compare_double (const void *a, const void *b)
{
  double x = *(const double *) a, y = *(const double *) b;

  return (x > y) - (x < y);
}

static gboolean
infer_timed (ClinferRequest *request, double *ms, GError **error)
{
  gint64 t0 = tool_now_ns ();

  if (!clinfer_request_infer (request, error))
    return FALSE;
  if (ms)
    *ms = (double) (tool_now_ns () - t0) / 1e6;
  return TRUE;
}

typedef struct {
  int iterations, warmup;
  gboolean profile;
  int nireq;              /* 0: from the compiled model (throughput) */
  int batch;              /* frames per inference (--batch), 0: 1 */
} BenchOptions;

typedef struct {
  double first_ms;
  double *latency_ms;     /* sorted after the run */
  double loop_ms;
  Profile profile;
} BenchResult;

/* The latency array of @r, and the first inference, timed. */
static gboolean
start_result (ToolSession *s, const BenchOptions *b, BenchResult *r,
    GError **error)
{
  r->latency_ms = g_try_new0 (double, b->iterations);
  if (r->latency_ms == NULL) {
    g_set_error (error, TOOL_ERROR, TOOL_ERROR_USAGE,
        "--iterations %d: too many to record", b->iterations);
    return FALSE;
  }
  return infer_timed (s->request, &r->first_ms, error);
}

static gboolean
run_benchmark (ToolSession *s, const BenchOptions *b, BenchResult *r,
    GError **error)
{
  gint64 t0;

  if (!start_result (s, b, r, error))
    return FALSE;
  if (b->iterations + b->warmup >= PROGRESS_MIN_RUNS) {
    fprintf (stderr, "%s: running %d warmup and %d timed iterations...\n",
        TOOL_NAME, b->warmup, b->iterations);
    fflush (stderr);
  }
  for (int i = 0; i < b->warmup; i++)
    if (!infer_timed (s->request, NULL, error))
      return FALSE;
  t0 = tool_now_ns ();
  for (int i = 0; i < b->iterations; i++) {
    if (!infer_timed (s->request, &r->latency_ms[i], error))
      return FALSE;
    if (b->profile)
      profile_add (&r->profile, s->request);
  }
  r->loop_ms = (double) (tool_now_ns () - t0) / 1e6;
  qsort (r->latency_ms, b->iterations, sizeof (double), compare_double);
  return TRUE;
}

/* ---- throughput mode ---- */

/* One request of the throughput loop; its callback hands it back to the
 * main thread through @done. */
typedef struct {
  ClinferRequest *request;
  GAsyncQueue *done;
  gint64 start_ns;
} Slot;

static void
slot_done (ClinferRequest *request, const GError *error, gpointer user_data)
{
  Slot *slot = user_data;

  g_async_queue_push (slot->done, slot);
}

static gboolean
slot_start (Slot *slot, GError **error)
{
  slot->start_ns = tool_now_ns ();
  return clinfer_request_start_async (slot->request, slot_done, slot, error);
}

/* The next finished slot: waited for (its result checked). */
static Slot *
slot_next (GAsyncQueue *done, GError **error)
{
  Slot *slot = g_async_queue_pop (done);

  return clinfer_request_wait (slot->request, error) ? slot : NULL;
}

static int
bench_nireq (ToolSession *s, const BenchOptions *b)
{
  return b->nireq > 0 ? b->nireq
      : (int) clinfer_compiled_get_optimal_requests (s->compiled);
}

/* @nireq requests kept in flight until b->iterations inferences have
 * ended after the warmup; latency per inference, from its start to its
 * completion reaching this thread. */
static gboolean
run_throughput (ToolSession *s, const BenchOptions *b, BenchResult *r,
    GError **error)
{
  int nireq = bench_nireq (s, b), started = 0, ended = 0;
  int total = b->warmup + b->iterations;
  g_autoptr (GAsyncQueue) done = g_async_queue_new ();
  g_autofree Slot *slots = g_new0 (Slot, nireq);
  gboolean ok = FALSE;
  gint64 t0 = 0;

  /* The session's request is the first; the others share its inputs. */
  if (!start_result (s, b, r, error))
    return FALSE;
  for (int i = 0; i < nireq; i++) {
    slots[i].done = done;
    slots[i].request = i == 0 ? s->request
        : clinfer_compiled_create_request (s->compiled, error);
    if (slots[i].request == NULL)
      goto out;
    for (guint k = 0; i > 0 && k < s->n_inputs; k++)
      if (!clinfer_request_set_input_by_index (slots[i].request, k,
              s->inputs[k], error))
        goto out;
  }
  if (b->iterations + b->warmup >= PROGRESS_MIN_RUNS) {
    fprintf (stderr, "%s: running %d warmup and %d timed inferences, %d "
        "requests in flight on %d streams...\n", TOOL_NAME, b->warmup,
        b->iterations, nireq, clinfer_compiled_get_streams (s->compiled));
    fflush (stderr);
  }
  /* Each ended inference is counted (warmup first, then timed) and its
   * request started again while more are wanted. */
  t0 = tool_now_ns ();
  for (int i = 0; i < nireq && started < total; i++) {
    if (!slot_start (&slots[i], error))
      goto drain;
    started++;
  }
  while (ended < started) {
    Slot *slot = slot_next (done, error);

    if (slot == NULL)
      goto drain;
    ended++;
    if (ended == b->warmup)
      t0 = tool_now_ns ();
    else if (ended > b->warmup)
      r->latency_ms[ended - b->warmup - 1] =
          (double) (tool_now_ns () - slot->start_ns) / 1e6;
    if (started < total) {
      if (!slot_start (slot, error))
        goto drain;
      started++;
    }
  }
  r->loop_ms = (double) (tool_now_ns () - t0) / 1e6;
  qsort (r->latency_ms, b->iterations, sizeof (double), compare_double);
  ok = TRUE;
  goto out;

drain:
  /* Let the others end before their requests go. */
  for (int i = 0; i < nireq; i++)
    if (slots[i].request)
      clinfer_request_wait (slots[i].request, NULL);
out:
  for (int i = 1; i < nireq; i++)
    clinfer_request_free (slots[i].request);
  return ok;
}

static double
percentile (const double *sorted, int n, double p)
{
  int i = (int) (p * (n - 1) + 0.5);

  return sorted[CLAMP (i, 0, n - 1)];
}

static void
print_common (ToolSession *s)
{
  printf ("device=%s\n", clinfer_compiled_get_device_name (s->compiled));
  printf ("hint=%s\n", clinfer_performance_hint_to_string
      (clinfer_compiled_get_performance_hint (s->compiled)));
  printf ("streams=%d\n", clinfer_compiled_get_streams (s->compiled));
  printf ("threads=%d\n", clinfer_compiled_get_threads (s->compiled));
}

/* Frames per inference: --batch, else 1. */
static int
frames_per_inference (const BenchOptions *b)
{
  return b->batch > 0 ? b->batch : 1;
}

static void
print_throughput (ToolSession *s, const BenchOptions *b, const BenchResult *r)
{
  int k = b->iterations;

  print_common (s);
  printf ("nireq=%d\n", bench_nireq (s, b));
  printf ("batch=%d\n", frames_per_inference (b));
  printf ("read_ms=%.3f\n", (double) s->read_ns / 1e6);
  printf ("compile_ms=%.3f\n", (double) s->compile_ns / 1e6);
  printf ("first_inference_ms=%.3f\n", r->first_ms);
  printf ("latency_ms min=%.3f median=%.3f p90=%.3f p99=%.3f max=%.3f\n",
      r->latency_ms[0], percentile (r->latency_ms, k, 0.5),
      percentile (r->latency_ms, k, 0.9), percentile (r->latency_ms, k, 0.99),
      r->latency_ms[k - 1]);
  printf ("inferences=%d\n", k);
  printf ("fps=%.2f\n", r->loop_ms > 0.0
      ? (double) k * frames_per_inference (b) * 1000.0 / r->loop_ms : 0.0);
}

/* Several requests in flight: --nireq above 1 or --hint throughput. */
static gboolean
throughput_mode (const BenchOptions *b, const ToolOptions *opts)
{
  return b->nireq > 1 || opts->hint_value == CLINFER_HINT_THROUGHPUT;
}

static void
print_summary (ToolSession *s, const BenchOptions *b, const BenchResult *r)
{
  int k = b->iterations;
  double median = k % 2 ? r->latency_ms[k / 2]
      : (r->latency_ms[k / 2 - 1] + r->latency_ms[k / 2]) / 2.0;

  if (b->profile)
    profile_print (&r->profile, s->request);
  print_common (s);
  printf ("read_ms=%.3f\n", (double) s->read_ns / 1e6);
  printf ("compile_ms=%.3f\n", (double) s->compile_ns / 1e6);
  printf ("first_inference_ms=%.3f\n", r->first_ms);
  /* Intermediate tensors of the plan, after and before reuse by liveness. */
  printf ("arena_bytes=%" G_GSIZE_FORMAT " unplanned_bytes=%" G_GSIZE_FORMAT
      " steps=%u\n", clinfer_compiled_get_arena_size (s->compiled),
      clinfer_compiled_get_unplanned_size (s->compiled),
      clinfer_compiled_get_n_steps (s->compiled));
  printf ("latency_ms min=%.3f median=%.3f max=%.3f\n", r->latency_ms[0],
      median, r->latency_ms[k - 1]);
  printf ("batch=%d\n", frames_per_inference (b));
  printf ("throughput_fps=%.2f\n", r->loop_ms > 0.0
      ? (double) k * frames_per_inference (b) * 1000.0 / r->loop_ms : 0.0);
  printf ("median_ms=%.3f\n", median);
}

static gboolean
check_bench_options (const BenchOptions *b, const ToolOptions *opts,
    GError **error)
{
  if (b->iterations < 1) {
    g_set_error (error, TOOL_ERROR, TOOL_ERROR_USAGE,
        "--iterations must be at least 1, got %d", b->iterations);
    return FALSE;
  }
  if (b->warmup < 0) {
    g_set_error (error, TOOL_ERROR, TOOL_ERROR_USAGE,
        "--warmup must be 0 or more, got %d", b->warmup);
    return FALSE;
  }
  if (b->nireq < 0 || b->nireq > 1024) {
    g_set_error (error, TOOL_ERROR, TOOL_ERROR_USAGE,
        "--nireq must be 0 (from the compiled model) to 1024, got %d",
        b->nireq);
    return FALSE;
  }
  if (b->batch < 0 || b->batch > 4096) {
    g_set_error (error, TOOL_ERROR, TOOL_ERROR_USAGE,
        "--batch must be 1 to 4096 (0: the model's), got %d", b->batch);
    return FALSE;
  }
  if (b->profile && throughput_mode (b, opts)) {
    g_set_error (error, TOOL_ERROR, TOOL_ERROR_USAGE,
        "--profile times one request at a time: not in throughput mode "
        "(--nireq above 1, --hint throughput)");
    return FALSE;
  }
  return TRUE;
}

int
main (int argc, char **argv)
{
  BenchOptions b = { 100, 10, FALSE, 0, 0 };
  const GOptionEntry entries[] = {
    { "iterations", 0, 0, G_OPTION_ARG_INT, &b.iterations,
      "Timed iterations (default 100)", "K" },
    { "warmup", 0, 0, G_OPTION_ARG_INT, &b.warmup,
      "Untimed iterations after the first inference (default 10)", "W" },
    { "profile", 0, 0, G_OPTION_ARG_NONE, &b.profile,
      "Print a per-node timing table before the summary", NULL },
    { "nireq", 0, 0, G_OPTION_ARG_INT, &b.nireq,
      "Requests in flight (throughput mode when above 1; default: 1, with "
      "--hint throughput one per stream)", "N" },
    { "batch", 0, 0, G_OPTION_ARG_INT, &b.batch,
      "Frames per inference: the first dimension of every input not given "
      "with --input (it must be dynamic); fps then counts frames", "N" },
    G_OPTION_ENTRY_NULL
  };
  ToolOptions opts;
  ToolSession session = { 0 };
  BenchResult result = { 0 };
  g_autoptr(GError) err = NULL;
  int ret;

  setlocale (LC_ALL, "");
  setlocale (LC_NUMERIC, "C");
  g_set_prgname (TOOL_NAME);
  tool_options_init (&opts, TOOL_NAME);
  /* A new user's run: threads that never make the model slower. */
  opts.default_hint = "latency";
  if (!tool_options_parse (&opts, "Times reading, compiling and running "
          "MODEL (.onnx); inputs not given get random values.\nThe last "
          "line is median_ms=<value>; in throughput mode (--hint throughput "
          "or --nireq above 1) fps=<value>.", entries, &argc, &argv, &err))
    goto out;
  if (opts.list_devices) {
    tool_print_devices ();
    goto out;
  }
  if (opts.version) {
    printf ("%s %s\n", TOOL_NAME, CLINFER_VERSION);
    goto out;
  }
  opts.batch = b.batch;
  if (check_bench_options (&b, &opts, &err)
      && tool_session_prepare (&session, &opts, TOOL_INPUTS_RANDOM, b.profile,
          &err)) {
    if (throughput_mode (&b, &opts)) {
      if (run_throughput (&session, &b, &result, &err))
        print_throughput (&session, &b, &result);
    } else if (run_benchmark (&session, &b, &result, &err)) {
      print_summary (&session, &b, &result);
    }
  }

out:
  ret = tool_fail (TOOL_NAME, err);
  g_free (result.latency_ms);
  g_free (result.profile.sum_ns);
  tool_session_clear (&session);
  tool_options_clear (&opts);
  return ret;
}
