/* clinfer — fuzz target for the OpenVINO IR reader. The input is the
 * .xml text, optionally followed by a line "--clinfer-bin--" and the .bin
 * bytes; without one, a fixed 4 KiB weights blob is used so that Const
 * offsets hit real data. Every graph that reads also has its ops resolved
 * (attribute checks). Built with meson -Dfuzzing=true: with clang it is a
 * libFuzzer target (CLINFER_LIBFUZZER); with gcc the main() below replays
 * the seed files and then mutates them at random for -max_total_time
 * seconds under AddressSanitizer. */
#include "frontend/ir/ir-reader.h"
#include "ops/op.h"
#include <stdio.h>
#include <string.h>

#define SEPARATOR "\n--clinfer-bin--\n"

static void
quiet_log (const gchar *domain, GLogLevelFlags level, const gchar *message,
    gpointer data)
{
}

int LLVMFuzzerTestOneInput (const guint8 *data, size_t size);

int
LLVMFuzzerTestOneInput (const guint8 *data, size_t size)
{
  static guint8 pattern[4096];
  const guint8 *sep = size >= strlen (SEPARATOR)
      ? memmem (data, size, SEPARATOR, strlen (SEPARATOR)) : NULL;
  gsize xml_size = sep ? (gsize) (sep - data) : size;
  g_autoptr (GBytes) weights = NULL;
  g_autoptr (GError) err = NULL;
  ClinferGraph *g;

  if (pattern[1] == 0) {
    for (gsize i = 0; i < sizeof (pattern); i++)
      pattern[i] = (guint8) (i * 131 + 7);
    g_log_set_default_handler (quiet_log, NULL);
  }
  if (sep)
    weights = g_bytes_new (sep + strlen (SEPARATOR),
        size - xml_size - strlen (SEPARATOR));
  else
    weights = g_bytes_new_static (pattern, sizeof (pattern));
  g = clinfer_ir_read_from_data ((const char *) data, xml_size, weights,
      "fuzz.xml", &err);
  if (g) {
    g_clear_error (&err);
    clinfer_graph_resolve_ops (g, &err);
    clinfer_graph_free (g);
  }
  return 0;
}

#ifndef CLINFER_LIBFUZZER
/* ---- stand-alone driver (no libFuzzer) ---- */

void __sanitizer_set_death_callback (void (*callback) (void)) __attribute__ ((weak));

static GByteArray *current;

/* On a crash, keep the input that caused it. */
static void
save_current (void)
{
  if (current == NULL)
    return;
  g_file_set_contents ("fuzz-ir-reader-crash.xml", (const char *) current->data,
      current->len, NULL);
  fprintf (stderr, "fuzz-ir-reader: input saved as fuzz-ir-reader-crash.xml\n");
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
    if (g_file_test (file, G_FILE_TEST_IS_REGULAR))
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

/* One random edit: flip, insert, delete, duplicate or an interesting
 * token. */
static void
mutate (GByteArray *b, GRand *rand)
{
  static const char *const tokens[] = { "-1", "?", "...", "0", "1..3",
    "99999999999", "\"", "<", "/>", ",", "opset99", "-2147483648", "1e39" };
  guint len = b->len, pos = len ? (guint) g_rand_int_range (rand, 0, (gint32) len) : 0;
  guint span = MIN (len - pos, (guint) g_rand_int_range (rand, 1, 16));

  switch (g_rand_int_range (rand, 0, 5)) {
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
  double seconds = 10;
  guint32 seed = 1;
  guint64 runs = 0;
  gint64 end;

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
  printf ("fuzz-ir-reader: %u seeds, %" G_GUINT64_FORMAT " mutated inputs in "
      "%.0f s, no crash\n", seeds->len, runs, seconds);
  return 0;
}
#endif
