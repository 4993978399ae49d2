/* clinfer — replays a fuzz target's reproducers and seeds as a test (in
 * every build, not only -Dfuzzing=true): one test case per file of the
 * folders given on the command line. A file that crashed the product
 * once must not crash it again (the sanitizer builds check for memory
 * errors and leaks too); where a reproducer has a <file>.expect beside it,
 * its first line says what must happen: "ok" (the product accepts the
 * input) or a piece of the error message the product must give. */
#include "fuzz-common.h"
#include <string.h>

static void
replay (gconstpointer data)
{
  const char *path = data;
  g_autofree char *bytes = NULL, *expect_path = g_strconcat (path, ".expect", NULL);
  g_autofree char *expect = NULL;
  g_autoptr (GError) err = NULL;
  gsize size;
  gboolean ok;

  g_assert_true (g_file_get_contents (path, &bytes, &size, NULL));
  ok = fuzz_one ((const guint8 *) bytes, size, &err);
  g_test_message ("%s: %s", path, err ? err->message : "ok");
  if (!g_file_get_contents (expect_path, &expect, NULL, NULL))
    return;                   /* a seed: not crashing is all it asks */
  if (strchr (expect, '\n'))
    *strchr (expect, '\n') = '\0';
  g_strchomp (expect);
  if (strcmp (expect, "ok") == 0) {
    g_assert_no_error (err);
    g_assert_true (ok);
    return;
  }
  g_assert_false (ok);
  g_assert_nonnull (err);
  if (strstr (err->message, expect) == NULL)
    g_error ("%s: expected an error containing \"%s\", got \"%s\"", path,
        expect, err->message);
}

static int
compare_names (gconstpointer a, gconstpointer b)
{
  return strcmp (*(const char *const *) a, *(const char *const *) b);
}

static guint every = 1;

static void
add_path (const char *path, const char *prefix)
{
  g_autoptr (GDir) dir = g_dir_open (path, 0, NULL);
  g_autoptr (GPtrArray) names = g_ptr_array_new_with_free_func (g_free);
  const char *name;

  if (!g_file_test (path, G_FILE_TEST_EXISTS))
    return;                   /* no reproducer for this target yet */
  if (dir == NULL) {
    g_autofree char *base = g_path_get_basename (path);
    g_autofree char *test = g_strdup_printf ("/%s/%s", prefix, base);
    g_test_add_data_func_full (test, g_strdup (path), replay, g_free);
    return;
  }
  while ((name = g_dir_read_name (dir)))
    if (!g_str_has_suffix (name, ".expect") && strcmp (name, "README.md") != 0
        && strcmp (name, "LICENSE") != 0)
      g_ptr_array_add (names, g_strdup (name));
  g_ptr_array_sort (names, compare_names);
  for (guint i = 0; i < names->len; i++) {
    /* FUZZ_REPLAY_EVERY=N: every N-th file of a folder of seeds (slow
     * devices such as oclgrind); reproducers (with .expect) always. */
    g_autofree char *expect = g_strconcat (path, G_DIR_SEPARATOR_S,
        (const char *) g_ptr_array_index (names, i), ".expect", NULL);
    if (every > 1 && i % every != 0 && !g_file_test (expect, G_FILE_TEST_EXISTS))
      continue;
    g_autofree char *file = g_build_filename (path,
        (const char *) g_ptr_array_index (names, i), NULL);
    add_path (file, prefix);
  }
}

int
main (int argc, char **argv)
{
  g_autofree char *prefix = NULL;

  g_test_init (&argc, &argv, NULL);
  fuzz_init ();
  prefix = g_path_get_basename (argv[0]);
  if (g_getenv ("FUZZ_REPLAY_EVERY"))
    every = MAX (1, (guint) g_ascii_strtoull (g_getenv ("FUZZ_REPLAY_EVERY"),
            NULL, 10));
  for (int i = 1; i < argc; i++)
    add_path (argv[i], prefix);
  return g_test_run ();
}
