/* clinfer — helpers of the fuzz targets, and (without libFuzzer) the
 * stand-alone driver: it runs every seed file given on the command line
 * (files or folders), then mutates random seeds for -max_total_time
 * seconds; on a crash under AddressSanitizer the input is saved as
 * <target>-crash. */
#include "fuzz-common.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

volatile guint8 fuzz_sink;
guint64 fuzz_memory_limit = FUZZ_MEMORY_LIMIT;

/* Quiet, except that a critical (a GLib or GStreamer precondition that
 * failed: g_return_if_fail, a non-UTF-8 string in a GstStructure) is a
 * bug the fuzzer must report, so it aborts. */
static void
quiet_log (const gchar *domain, GLogLevelFlags level, const gchar *message,
    gpointer data)
{
  if (level & (G_LOG_LEVEL_CRITICAL | G_LOG_LEVEL_ERROR)) {
    g_printerr ("%s-CRITICAL: %s\n", domain ? domain : "", message);
    abort ();
  }
}

void
fuzz_init (void)
{
  static gsize done;

  if (g_once_init_enter (&done)) {
    g_log_set_default_handler (quiet_log, NULL);
    g_once_init_leave (&done, 1);
  }
}

int
LLVMFuzzerTestOneInput (const guint8 *data, size_t size)
{
  g_autoptr (GError) err = NULL;

  fuzz_init ();
  fuzz_one (data, size, &err);
  return 0;
}

ClinferCompiled *
fuzz_compile (ClinferModel *model, const char *device, GError **error)
{
  g_autoptr (ClinferCompileConfig) config = clinfer_compile_config_new ();

  for (guint i = 0; i < clinfer_model_get_n_inputs (model); i++) {
    ClinferPortInfo info;
    ClinferShape shape;
    if (!clinfer_model_get_input (model, i, &info) || info.shape.rank < 0)
      continue;
    shape = info.shape;
    for (int d = 0; d < shape.rank; d++)
      if (shape.dims[d] < 0)
        shape.dims[d] = 2;
    if (!clinfer_model_reshape (model, info.name, &shape, error))
      return NULL;
  }
  clinfer_compile_config_set_device (config, device ? device : "CPU");
  clinfer_compile_config_set_threads (config, 1);
  clinfer_compile_config_set_memory_limit (config, fuzz_memory_limit);
  return clinfer_compile (model, config, error);
}

guint8
fuzz_u8 (FuzzInput *in)
{
  guint8 v = 0;

  if (in->size > 0) {
    v = in->data[0];
    in->data++;
    in->size--;
  }
  return v;
}

guint32
fuzz_u32 (FuzzInput *in)
{
  guint32 v = 0;

  for (int i = 0; i < 4; i++)
    v |= (guint32) fuzz_u8 (in) << (8 * i);
  return v;
}

const guint8 *
fuzz_bytes (FuzzInput *in, gsize max, gsize *n)
{
  const guint8 *p = in->data;

  *n = MIN (max, in->size);
  in->data += *n;
  in->size -= *n;
  return p;
}

#if !defined (CLINFER_LIBFUZZER) && !defined (FUZZ_REPLAY)
/* ---- stand-alone driver (no libFuzzer) ---- */

void __sanitizer_set_death_callback (void (*callback) (void)) __attribute__ ((weak));

static GByteArray *current;
static char *crash_path;

/* On a crash, keep the input that caused it. */
static void
save_current (void)
{
  if (current == NULL)
    return;
  g_file_set_contents (crash_path, (const char *) current->data, current->len,
      NULL);
  fprintf (stderr, "input saved as %s\n", crash_path);
}

static void
load_seeds (const char *path, GPtrArray *seeds)
{
  GDir *dir = g_dir_open (path, 0, NULL);
  const char *name;
  char *data;
  gsize len;

  if (dir == NULL) {
    if (g_file_get_contents (path, &data, &len, NULL))
      g_ptr_array_add (seeds, g_byte_array_new_take ((guint8 *) data, len));
    return;
  }
  while ((name = g_dir_read_name (dir))) {
    g_autofree char *file = g_build_filename (path, name, NULL);
    if (g_file_test (file, G_FILE_TEST_IS_REGULAR | G_FILE_TEST_IS_DIR))
      load_seeds (file, seeds);
  }
  g_dir_close (dir);
}

static void
insert_bytes (GByteArray *b, guint pos, const guint8 *data, guint n)
{
  guint old = b->len;

  g_byte_array_set_size (b, old + n);
  memmove (b->data + pos + n, b->data + pos, old - pos);
  memcpy (b->data + pos, data, n);
}

/* One random edit: flip, insert, delete, duplicate, an interesting
 * integer or an interesting token. */
static void
mutate (GByteArray *b, GRand *rand)
{
  static const char *const tokens[] = { "-1", "?", "...", "0", "1..3",
    "99999999999", "\"", "<", "/>", ",", "-2147483648", "1e39", "nan" };
  static const guint64 ints[] = { 0, 1, 0x7f, 0x80, 0xff, 0xffff,
    0x7fffffff, 0x80000000, 0xffffffff, G_GUINT64_CONSTANT (0x7fffffffffffffff),
    G_MAXUINT64 };
  guint len = b->len, pos = len ? (guint) g_rand_int_range (rand, 0, (gint32) len) : 0;
  guint span = MIN (len - pos, (guint) g_rand_int_range (rand, 1, 16));

  switch (g_rand_int_range (rand, 0, 6)) {
    case 0:
      if (len)
        b->data[pos] ^= (guint8) (1u << g_rand_int_range (rand, 0, 8));
      break;
    case 1: {
      guint8 c = (guint8) g_rand_int_range (rand, 0, 256);
      insert_bytes (b, pos, &c, 1);
      break;
    }
    case 2:
      if (span)
        g_byte_array_remove_range (b, pos, span);
      break;
    case 3:
      if (span) {
        g_autofree guint8 *copy = g_memdup2 (b->data + pos, span);
        insert_bytes (b, (guint) g_rand_int_range (rand, 0, (gint32) len), copy, span);
      }
      break;
    case 4: {
      guint64 v = ints[g_rand_int_range (rand, 0, G_N_ELEMENTS (ints))];
      guint n = MIN (len - pos, (guint) (1u << g_rand_int_range (rand, 0, 4)));
      for (guint k = 0; k < n; k++)
        b->data[pos + k] = (guint8) (v >> (8 * k));
      break;
    }
    default: {
      const char *t = tokens[g_rand_int_range (rand, 0, G_N_ELEMENTS (tokens))];
      insert_bytes (b, pos, (const guint8 *) t, (guint) strlen (t));
      break;
    }
  }
}

int
main (int argc, char **argv)
{
  g_autoptr (GPtrArray) seeds = g_ptr_array_new_with_free_func (
      (GDestroyNotify) g_byte_array_unref);
  g_autoptr (GRand) rand = NULL;
  g_autofree char *name = g_path_get_basename (argv[0]);
  double seconds = 10;
  guint32 seed = 1;
  guint64 runs = 0;
  gint64 end;

  crash_path = g_strdup_printf ("%s-crash", name);
  for (int i = 1; i < argc; i++) {
    if (g_str_has_prefix (argv[i], "-max_total_time="))
      seconds = g_ascii_strtod (argv[i] + 16, NULL);
    else if (g_str_has_prefix (argv[i], "-seed="))
      seed = (guint32) g_ascii_strtoull (argv[i] + 6, NULL, 10);
    else if (argv[i][0] != '-')
      load_seeds (argv[i], seeds);
  }
  if (__sanitizer_set_death_callback)
    __sanitizer_set_death_callback (save_current);
  for (guint i = 0; i < seeds->len; i++) {
    current = g_ptr_array_index (seeds, i);
    LLVMFuzzerTestOneInput (current->data, current->len);
  }
  rand = g_rand_new_with_seed (seed);
  end = g_get_monotonic_time () + (gint64) (seconds * G_USEC_PER_SEC);
  while (seeds->len && g_get_monotonic_time () < end) {
    GByteArray *base = g_ptr_array_index (seeds,
        g_rand_int_range (rand, 0, (gint32) seeds->len));
    g_autoptr (GByteArray) b = g_byte_array_sized_new (base->len + 64);
    g_byte_array_append (b, base->data, base->len);
    for (int k = g_rand_int_range (rand, 1, 9); k > 0; k--)
      mutate (b, rand);
    current = b;
    LLVMFuzzerTestOneInput (b->data, b->len);
    current = NULL;
    runs++;
  }
  current = NULL;
  printf ("%s: %u seeds, %" G_GUINT64_FORMAT " mutated inputs in %.0f s, "
      "no crash\n", name, seeds->len, runs, seconds);
  g_free (crash_path);
  return 0;
}
#endif
