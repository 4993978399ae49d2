/* clinfer-benchmark — times reading, compiling and running a model (random
 * inputs unless given) and prints latency statistics; the last line is
 * always "median_ms=<value>". */
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
} BenchOptions;

typedef struct {
  double first_ms;
  double *latency_ms;     /* sorted after the run */
  double loop_ms;
  Profile profile;
} BenchResult;

static gboolean
run_benchmark (ToolSession *s, const BenchOptions *b, BenchResult *r,
    GError **error)
{
  gint64 t0;

  r->latency_ms = g_try_new0 (double, b->iterations);
  if (r->latency_ms == NULL) {
    g_set_error (error, TOOL_ERROR, TOOL_ERROR_USAGE,
        "--iterations %d: too many to record", b->iterations);
    return FALSE;
  }
  if (!infer_timed (s->request, &r->first_ms, error))
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

static void
print_summary (ToolSession *s, const BenchOptions *b, const BenchResult *r)
{
  int k = b->iterations;
  double median = k % 2 ? r->latency_ms[k / 2]
      : (r->latency_ms[k / 2 - 1] + r->latency_ms[k / 2]) / 2.0;
  int threads = clinfer_compile_config_get_threads (s->config);

  if (b->profile)
    profile_print (&r->profile, s->request);
  printf ("device=%s\n", clinfer_compiled_get_device_name (s->compiled));
  printf ("threads=%d\n", threads > 0 ? threads : (int) g_get_num_processors ());
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
  printf ("throughput_fps=%.2f\n",
      r->loop_ms > 0.0 ? k * 1000.0 / r->loop_ms : 0.0);
  printf ("median_ms=%.3f\n", median);
}

static gboolean
check_bench_options (const BenchOptions *b, GError **error)
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
  return TRUE;
}

int
main (int argc, char **argv)
{
  BenchOptions b = { 100, 10, FALSE };
  const GOptionEntry entries[] = {
    { "iterations", 0, 0, G_OPTION_ARG_INT, &b.iterations,
      "Timed iterations (default 100)", "K" },
    { "warmup", 0, 0, G_OPTION_ARG_INT, &b.warmup,
      "Untimed iterations after the first inference (default 10)", "W" },
    { "profile", 0, 0, G_OPTION_ARG_NONE, &b.profile,
      "Print a per-node timing table before the summary", NULL },
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
  if (!tool_options_parse (&opts, "Times reading, compiling and running "
          "MODEL (.onnx); inputs not given get random values.\nThe last "
          "line is median_ms=<value>.", entries, &argc, &argv, &err))
    goto out;
  if (opts.list_devices) {
    tool_print_devices ();
    goto out;
  }
  if (opts.version) {
    printf ("%s %s\n", TOOL_NAME, CLINFER_VERSION);
    goto out;
  }
  if (check_bench_options (&b, &err)
      && tool_session_prepare (&session, &opts, TOOL_INPUTS_RANDOM, b.profile,
          &err)
      && run_benchmark (&session, &b, &result, &err))
    print_summary (&session, &b, &result);

out:
  ret = tool_fail (TOOL_NAME, err);
  g_free (result.latency_ms);
  g_free (result.profile.sum_ns);
  tool_session_clear (&session);
  tool_options_clear (&opts);
  return ret;
}
