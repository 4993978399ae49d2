/* Times the engine's host pre-processing (clinfer/preprocess.h; what the
 * clinfer element runs on the CPU device), without a pipeline: 1280x720 (or --width x --height) BGRx frames into the
 * BlazeFace input (NHWC f32 [1, 128, 128, 3], stretch, mean and scale
 * 127.5, one thread), thread CPU time per frame, the general AVX2 rows
 * (row_family()) against the packed RGB to NHWC rows, rounds alternating,
 * minimum per path (many short rounds: the minimum sheds other
 * processes' noise on a loaded machine). With --model (the benchmark's
 * default: BlazeFace) each frame is then inferred, one thread, as in the
 * element, and a third path infers without pre-processing: the inference
 * time after each path, minus that one, is what the frame lines pulled
 * through the caches cost the inference. Without a model a buffer larger
 * than L2 is written between frames (untimed) instead. Fails when the two
 * paths' outputs differ. --nchw pre-processes into NCHW f32 [1, 3, 128,
 * 128] (the general rows' planar stores; no packed rows) instead.
 * --lines adds the memory floor: only the reads of the cache lines the
 * taps read, with the rows' prefetches and no arithmetic (with --ring,
 * what reading the rows from memory costs whatever the code does), and
 * as many lines read in one run from the frame's start (what the same
 * bytes would cost laid out in the order the taps need them).
 * --overlap US asks whether those reads can hide under arithmetic on the
 * same core, as pre-processing fused with the first conv would need:
 * US microseconds of multiply-adds (8 independent chains) alone, the
 * lines (as --lines reads them) then the arithmetic, and the two in 16
 * bands of model rows, each band's arithmetic asking for the next band's
 * lines (prefetches spread evenly through its loop) before reading them.
 * --huge backs the frames with transparent huge pages (madvise), to see
 * the page walks' share.
 *
 *   preprocess-bench [--frames N] [--rounds R] [--model M] [--evict-kb K]
 *       [--width W] [--height H] [--ring K] [--nchw] [--lines]
 *       [--overlap US] [--huge]
 *
 * Registered as a meson benchmark: meson test -C build --benchmark
 * --suite preprocess. */
#include "plan/preprocess-host.h"

#include <stdio.h>
#include <string.h>
#include <time.h>
#ifdef __linux__
#include <sys/mman.h>
#endif

static gdouble
thread_cpu_us (void)
{
  struct timespec ts;

  clock_gettime (CLOCK_THREAD_CPUTIME_ID, &ts);
  return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

typedef struct
{
  ClinferPreprocessHost *pp;
  ClinferTensor *input;
  ClinferRequest *request;      /* NULL: no model */
  ClinferFrame frame;
  guint8 **ring;                /* --ring: frames taken in turn */
  gint n_ring;
  guint next_frame;
  guint8 *evict;
  gsize evict_size;
  guint64 lines_sum;            /* keeps the lines path's reads */
  gint64 arith_steps;           /* --overlap: steps of arithmetic */
  const guint8 **band;          /* --overlap: one band's line addresses */
} Bench;

/* Paths timed: inference alone (with a model), the general rows, the
 * packed NHWC rows. */
enum
{ PATH_NONE, PATH_GENERAL, PATH_PACKED, PATH_LINES, PATH_RUN, PATH_ARITH,
  PATH_SERIAL, PATH_BANDED, N_PATHS
};
static const gchar *path_names[N_PATHS] = {
  "no pre-processing", "general rows", "packed rows", "lines only",
  "lines in one run", "arithmetic only", "lines, arithmetic",
  "lines under arith."
};

/* The memory floor of the rows (--lines): one 4-byte read from every
 * cache line of the frame rows the bilinear taps read (the two rows of
 * each model row, from the first column's tap to the last's), the next
 * model row's lines asked for into L2 a row ahead as the rows do, and no
 * arithmetic. */
/* Frame row @k (0: the top tap, 1: the bottom one) of model row @v. */
static const guint8 *
tap_row (const ClinferPreprocessHost * pp, const ClinferFrame * frame,
    gint v, gint k)
{
  const ClinferPreprocessTap *t = &pp->ytaps[v];

  return frame->data[0] + (gsize) MAX (k ? t->i1 : t->i0, 0)
      * frame->stride[0];
}

/* In a frame row, the offset of the first cache line the taps read and
 * the end of the last tap's pixel (the lines: first, first + 64, ... up
 * to last). */
static void
tap_span (const ClinferPreprocessHost * pp, gsize * first, gsize * last)
{
  *first = ((gsize) MAX (pp->xtaps[0].i0, 0) * 4) & ~(gsize) 63;
  *last = (gsize) MAX (pp->xtaps[pp->config.width - 1].i1, 0) * 4 + 4;
}

/* With @run, as many lines read from the frame's start in one run. */
static guint64
touch_lines (const ClinferPreprocessHost * pp, const ClinferFrame * frame,
    gboolean run)
{
  const gint h = pp->config.height;
  guint64 sum = 0;
  guint32 x;                    /* one pixel: never past a row's end */
  gint v, k;
  gsize first, last, off;

  tap_span (pp, &first, &last);

  if (run) {
    /* Never past the frame (a small frame upscaled has fewer lines). */
    const gsize n = MIN (2 * (gsize) h * ((last - first + 63) / 64) * 64,
        (gsize) pp->frame.height * frame->stride[0]);

    for (off = 0; off < n; off += 64) {
      memcpy (&x, frame->data[0] + off, sizeof (x));
      sum += x;
    }
    return sum;
  }
  for (v = 0; v < h; v++) {
    for (k = 0; k < 2; k++) {
      const guint8 *row = tap_row (pp, frame, v, k);
      const guint8 *next = v + 1 < h ? tap_row (pp, frame, v + 1, k) : row;

      for (off = first; off < last; off += 64) {
        __builtin_prefetch (next + off, 0, 2);
        memcpy (&x, row + off, sizeof (x));
        sum += x;
      }
    }
  }
  return sum;
}

/* --overlap: the lines of model rows @v0 .. @v1 - 1 (addresses into
 * @lines when it is not NULL, else read once each; their count). */
static gsize
band_lines (const ClinferPreprocessHost * pp, const ClinferFrame * frame,
    gint v0, gint v1, const guint8 ** lines, guint64 * sum)
{
  gsize n = 0, first, last, off;
  guint32 x;
  gint v, k;

  tap_span (pp, &first, &last);

  for (v = v0; v < v1; v++)
    for (k = 0; k < 2; k++)
      for (off = first; off < last; off += 64, n++) {
        const guint8 *p = tap_row (pp, frame, v, k) + off;
        if (lines != NULL) {
          lines[n] = p;
        } else {
          memcpy (&x, p, sizeof (x));
          *sum += x;
        }
      }
  return n;
}

typedef float Vec8 __attribute__ ((vector_size (32)));
static Vec8 arith_state[8];

/* @steps of 8 independent multiply-add chains, asking for one of the
 * @n_lines @lines every steps / n_lines steps. */
static void
arithmetic (gint64 steps, const guint8 ** lines, gsize n_lines)
{
  const Vec8 m = { 0.999f, 0.999f, 0.999f, 0.999f, 0.999f, 0.999f, 0.999f,
    0.999f
  }, c = { 1e-3f, 1e-3f, 1e-3f, 1e-3f, 1e-3f, 1e-3f, 1e-3f, 1e-3f };
  const gint64 every = n_lines > 0 ? MAX (steps / (gint64) n_lines, 1) : 0;
  Vec8 a[8];
  gsize next = 0;
  gint64 i;
  gint j;

  memcpy (a, arith_state, sizeof (a));
  for (i = 0; i < steps; i++) {
    for (j = 0; j < 8; j++)
      a[j] = a[j] * m + c;
    if (next < n_lines && i % every == 0)
      __builtin_prefetch (lines[next++], 0, 3);
  }
  while (next < n_lines)
    __builtin_prefetch (lines[next++], 0, 3);
  memcpy (arith_state, a, sizeof (a));
}

#define OVERLAP_BANDS 16

/* One frame of an --overlap path: @steps of arithmetic and the lines. */
static guint64
overlap_frame (const ClinferPreprocessHost * pp, const ClinferFrame * frame,
    gint path, gint64 steps, const guint8 ** lines)
{
  const gint h = pp->config.height;
  guint64 sum = 0;
  gint b;

  if (path == PATH_ARITH) {
    arithmetic (steps, NULL, 0);
  } else if (path == PATH_SERIAL) {
    sum = touch_lines (pp, frame, FALSE);
    arithmetic (steps, NULL, 0);
  } else {
    band_lines (pp, frame, 0, h / OVERLAP_BANDS, NULL, &sum);
    for (b = 0; b < OVERLAP_BANDS; b++) {
      gint v0 = (b + 1) * h / OVERLAP_BANDS, v1 = (b + 2) * h / OVERLAP_BANDS;
      gsize n = b + 1 < OVERLAP_BANDS ? band_lines (pp, frame, v0, v1, lines,
          NULL) : 0;

      arithmetic (steps / OVERLAP_BANDS, lines, n);
      if (n > 0)
        band_lines (pp, frame, v0, v1, NULL, &sum);
    }
  }
  return sum;
}

/* @n_frames frames through @path; CPU microseconds per frame of the
 * pre-processing in @pre and of the inference in @infer. */
static void
time_frames (Bench * b, gint path, gint n_frames, gdouble * pre,
    gdouble * infer)
{
  GError *error = NULL;
  gint i;

  *pre = *infer = 0;
  b->pp->packed_nhwc = path == PATH_PACKED;
  b->lines_sum = 0;
  for (i = 0; i < n_frames; i++) {
    gdouble t0, t1;

    if (b->evict_size > 0)
      memset (b->evict, i, b->evict_size);
    b->frame.data[0] = b->ring[(b->next_frame++) % b->n_ring];
    t0 = thread_cpu_us ();
    if (path == PATH_LINES || path == PATH_RUN)
      b->lines_sum += touch_lines (b->pp, &b->frame, path == PATH_RUN);
    else if (path >= PATH_ARITH)
      b->lines_sum += overlap_frame (b->pp, &b->frame, path, b->arith_steps,
          b->band);
    else if (path != PATH_NONE)
      clinfer_preprocess_host_run (b->pp, &b->frame,
          clinfer_tensor_get_data (b->input));
    t1 = thread_cpu_us ();
    if (b->request != NULL && !clinfer_request_infer (b->request, &error))
      goto failed;
    *pre += t1 - t0;
    *infer += thread_cpu_us () - t1;
  }
  *pre /= n_frames;
  *infer /= n_frames;
  return;

failed:
  g_printerr ("frame %d: %s\n", i, error->message);
  exit (1);
}

/* A one-thread CPU request for the model at @path, its input bound to
 * @input. */
static ClinferRequest *
make_request (const gchar * path, ClinferTensor * input, GError ** error)
{
  g_autoptr (ClinferModel) model = NULL;
  g_autoptr (ClinferCompileConfig) cfg = NULL;
  g_autoptr (ClinferCompiled) compiled = NULL;
  ClinferRequest *request;

  model = clinfer_model_read (path, error);
  if (model == NULL)
    return NULL;
  cfg = clinfer_compile_config_new ();
  clinfer_compile_config_set_device (cfg, "CPU");
  clinfer_compile_config_set_threads (cfg, 1);
  compiled = clinfer_compile (model, cfg, error);
  if (compiled == NULL)
    return NULL;
  request = clinfer_compiled_create_request (compiled, error);
  if (request != NULL
      && !clinfer_request_set_input_by_index (request, 0, input, error))
    g_clear_pointer (&request, clinfer_request_free);
  return request;
}

int
main (int argc, char **argv)
{
  gint n_frames = 200, n_rounds = 25, evict_kb = -1, n_ring = 1, r, path;
  gint width = 1280, height = 720;
  gboolean nchw = FALSE, lines = FALSE, huge = FALSE;
  gint overlap_us = 0;
  guint8 *region = NULL;
  g_autofree gchar *model = NULL;
  GOptionEntry entries[] = {
    {"frames", 'n', 0, G_OPTION_ARG_INT, &n_frames, "frames per round", "N"},
    {"rounds", 'r', 0, G_OPTION_ARG_INT, &n_rounds, "rounds per path", "R"},
    {"model", 'm', 0, G_OPTION_ARG_FILENAME, &model,
        "infer each frame with this model (input: NHWC f32 128x128x3)", "M"},
    {"width", 'w', 0, G_OPTION_ARG_INT, &width,
        "frame width (default 1280; a small frame stays in cache: the "
        "rows' own cost)", "W"},
    {"height", 'h', 0, G_OPTION_ARG_INT, &height, "frame height (720)", "H"},
    {"ring", 0, 0, G_OPTION_ARG_INT, &n_ring,
        "frames taken in turn (default 1; 64 at 1280x720 is 236 MB: each "
        "frame read from memory, as a capture driver's DMA leaves it)", "K"},
    {"nchw", 0, 0, G_OPTION_ARG_NONE, &nchw,
        "NCHW f32 [1, 3, 128, 128] (planes) instead of NHWC", NULL},
    {"lines", 0, 0, G_OPTION_ARG_NONE, &lines,
        "also time the memory floor: only the reads of the cache lines the "
        "taps read, no arithmetic; and as many lines in one run", NULL},
    {"overlap", 0, 0, G_OPTION_ARG_INT, &overlap_us,
        "also time US microseconds of arithmetic alone, after the lines, and "
        "in bands with the next band's lines prefetched inside it", "US"},
    {"huge", 0, 0, G_OPTION_ARG_NONE, &huge,
        "back the frames with transparent huge pages (madvise)", NULL},
    {"evict-kb", 'e', 0, G_OPTION_ARG_INT, &evict_kb,
        "KiB written between frames (default: 4096 without a model, else 0)",
        "K"},
    {NULL}
  };
  g_autoptr (GOptionContext) ctx = NULL;
  GError *error = NULL;
  ClinferFrameInfo info = { CLINFER_PIXEL_FORMAT_BGRX };
  ClinferPreprocessConfig cfg = { CLINFER_RESIZE_STRETCH, CLINFER_LAYOUT_NHWC,
    CLINFER_TYPE_F32, 128, 128, 3, {127.5f, 127.5f, 127.5f},
    {127.5f, 127.5f, 127.5f}, FALSE, 1
  };
  ClinferShape shape = { 4, {1, 128, 128, 3} };
  g_autofree guint8 *frame_data = NULL;
  Bench b = { 0 };
  gsize size, i;
  gboolean want[N_PATHS] = { FALSE, TRUE, FALSE, FALSE, FALSE };
  gdouble pre[N_PATHS], infer[N_PATHS];
  g_autofree guint8 *general_out = NULL;

  ctx = g_option_context_new ("- time the clinfer CPU pre-processing");
  g_option_context_add_main_entries (ctx, entries, NULL);
  if (!g_option_context_parse (ctx, &argc, &argv, &error)) {
    g_printerr ("%s\n", error->message);
    return 2;
  }
  if (n_frames < 1 || n_rounds < 1 || width < 1 || height < 1
      || n_ring < 1 || overlap_us < 0) {
    g_printerr ("--frames, --rounds, --ring, --width and --height must be "
        "positive, --overlap not negative\n");
    return 2;
  }

  if (nchw) {
    cfg.layout = CLINFER_LAYOUT_NCHW;
    shape = (ClinferShape) { 4, {1, 3, 128, 128} };
  }
  info.width = width;
  info.height = height;
  size = (gsize) width * height * 4;
  frame_data = g_malloc (size);
  for (i = 0; i < size; i++)
    frame_data[i] = (guint8) ((i * 2654435761u) >> 13);
  b.n_ring = n_ring;
  b.ring = g_new (guint8 *, n_ring);
  if (huge) {
    const gsize page = 2 * 1024 * 1024;
    const gsize total = (size * n_ring + page - 1) / page * page;

    region = g_aligned_alloc (total, 1, page);
#ifdef __linux__
    if (madvise (region, total, MADV_HUGEPAGE) != 0)
      g_printerr ("madvise (MADV_HUGEPAGE) failed: frames in small pages\n");
#endif
    for (r = 0; r < n_ring; r++)
      b.ring[r] = memcpy (region + (gsize) r * size, frame_data, size);
  } else {
    b.ring[0] = frame_data;
    for (r = 1; r < n_ring; r++)
      b.ring[r] = g_memdup2 (frame_data, size);
  }
  b.frame.data[0] = b.ring[0];
  b.frame.stride[0] = width * 4;

  b.pp = clinfer_preprocess_host_new (&info, &cfg, clinfer_cpu_isa_detect (),
      &error);
  if (b.pp == NULL)
    goto failed;
  b.input = clinfer_tensor_new (CLINFER_TYPE_F32, &shape, &error);
  if (b.input == NULL)
    goto failed;
  if (model != NULL) {
    b.request = make_request (model, b.input, &error);
    if (b.request == NULL)
      goto failed;
    want[PATH_NONE] = TRUE;
  }
  want[PATH_PACKED] = b.pp->packed_nhwc;
  want[PATH_LINES] = want[PATH_RUN] = lines;
  if (overlap_us > 0) {
    gsize first, last;
    gint64 steps = 200000;
    gdouble t, best = G_MAXDOUBLE;

    /* Steps per microsecond: the faster of three tries. */
    for (r = 0; r < 3; r++) {
      t = thread_cpu_us ();
      arithmetic (steps, NULL, 0);
      best = MIN (best, thread_cpu_us () - t);
    }
    b.arith_steps = (gint64) (steps * overlap_us / MAX (best, 1.0));
    tap_span (b.pp, &first, &last);
    b.band = g_new (const guint8 *, 2 * (gsize) cfg.height
        * ((last - first + 63) / 64));
    want[PATH_ARITH] = want[PATH_SERIAL] = want[PATH_BANDED] = TRUE;
  }
  if (evict_kb < 0)
    evict_kb = model != NULL ? 0 : 4096;
  b.evict_size = (gsize) evict_kb * 1024;
  b.evict = g_malloc (MAX (b.evict_size, 1));
  size = (gsize) 128 * 128 * 3 * sizeof (gfloat);

  for (path = 0; path < N_PATHS; path++)
    pre[path] = infer[path] = G_MAXDOUBLE;
  for (r = 0; r < n_rounds; r++) {
    for (path = 0; path < N_PATHS; path++) {
      gdouble p, t;

      if (!want[path])
        continue;
      time_frames (&b, path, n_frames, &p, &t);
      pre[path] = MIN (pre[path], p);
      infer[path] = MIN (infer[path], t);
      if (path == PATH_GENERAL && general_out == NULL)
        general_out = g_memdup2 (clinfer_tensor_get_data (b.input), size);
      if (path == PATH_PACKED && memcmp (general_out,
              clinfer_tensor_get_data (b.input), size) != 0) {
        g_printerr ("packed NHWC rows differ from the general rows\n");
        return 1;
      }
    }
  }

  printf ("%dx%d BGRx -> %s f32 128x128, %d frames x %d rounds, %s, "
      "%d KiB evicted between frames, %d frame(s) in turn; thread CPU us "
      "per frame, min over rounds\n", width, height, nchw ? "NCHW" : "NHWC",
      n_frames, n_rounds,
      model != NULL ? model : "no model", evict_kb, n_ring);
  for (path = 0; path < N_PATHS; path++) {
    if (!want[path])
      continue;
    printf ("%-18s pre-processing %6.2f", path_names[path],
        path == PATH_NONE ? 0.0 : pre[path]);
    if (model != NULL)
      printf ("  inference %7.2f  overhead %6.2f", infer[path],
          (path == PATH_NONE ? 0.0 : pre[path]) + infer[path]
          - infer[PATH_NONE]);
    printf ("\n");
  }
  if (!want[PATH_PACKED])
    printf ("packed rows: not available (no AVX2 + FMA, or "
        "CLINFER_CPU_ISA=generic)\n");

  g_clear_pointer (&b.request, clinfer_request_free);
  clinfer_preprocess_host_free (b.pp);
  clinfer_tensor_unref (b.input);
  g_free (b.evict);
  if (region != NULL)
    g_aligned_free (region);
  else
    for (r = 1; r < n_ring; r++)
      g_free (b.ring[r]);
  g_free (b.ring);
  g_free (b.band);
  return 0;

failed:
  g_printerr ("%s\n", error->message);
  return 1;
}
