/* Tests of the .npy reader/writer: round trips, fixtures written by real
 * numpy (scripts/make-npy-fixtures.py) and malformed input. */
#include <clinfer/clinfer.h>
#include <glib/gstdio.h>
#include <string.h>

static const ClinferElementType all_types[] = {
  CLINFER_TYPE_F16, CLINFER_TYPE_F32, CLINFER_TYPE_F64,
  CLINFER_TYPE_I8, CLINFER_TYPE_I16, CLINFER_TYPE_I32, CLINFER_TYPE_I64,
  CLINFER_TYPE_U8, CLINFER_TYPE_U16, CLINFER_TYPE_U32, CLINFER_TYPE_U64,
  CLINFER_TYPE_BOOL,
};

/* Fixture codes in the order of all_types. */
static const char *const fixture_codes[] = {
  "f2", "f4", "f8", "i1", "i2", "i4", "i8", "u1", "u2", "u4", "u8", "b1",
};

/* Fixtures: $CLINFER_SOURCE_ROOT/tests/data/npy (set by meson), else
 * relative to G_TEST_SRCDIR (tests/engine). */
static char *
fixture_path (const char *name)
{
  const char *root = g_getenv ("CLINFER_SOURCE_ROOT");

  if (root && *root)
    return g_build_filename (root, "tests", "data", "npy", name, NULL);
  return g_test_build_filename (G_TEST_DIST, "..", "data", "npy", name, NULL);
}

static gboolean
have_fixtures (void)
{
  g_autofree char *p = fixture_path ("type_f4.npy");

  if (g_file_test (p, G_FILE_TEST_EXISTS))
    return TRUE;
  g_test_skip ("fixtures not found (set CLINFER_SOURCE_ROOT)");
  return FALSE;
}

static char *
tmp_file (const char *name)
{
  g_autoptr(GError) err = NULL;
  g_autofree char *dir = g_dir_make_tmp ("clinfer-npy-XXXXXX", &err);

  g_assert_no_error (err);
  return g_build_filename (dir, name, NULL);
}

static void
remove_tmp (const char *path)
{
  g_autofree char *dir = g_path_get_dirname (path);

  g_unlink (path);
  g_rmdir (dir);
}

/* Fills @t with a byte pattern that is valid for every type (bool: 0/1). */
static void
fill_pattern (ClinferTensor *t)
{
  guint8 *d = clinfer_tensor_get_data (t);
  gsize n = clinfer_tensor_get_byte_size (t);
  gboolean is_bool = clinfer_tensor_get_element_type (t) == CLINFER_TYPE_BOOL;

  for (gsize i = 0; i < n; i++)
    d[i] = is_bool ? (i % 3 == 0) : (guint8) (i * 37 + 11);
}

static ClinferTensor *
round_trip (ClinferTensor *t)
{
  g_autoptr(GError) err = NULL;
  g_autofree char *path = tmp_file ("t.npy");
  g_autofree char *contents = NULL;
  ClinferTensor *back;
  gsize len = 0;
  guint hlen;

  g_assert_true (clinfer_npy_write (path, t, &err));
  g_assert_no_error (err);
  /* numpy layout: v1.0, data 64-byte aligned, header ends with '\n'. */
  g_assert_true (g_file_get_contents (path, &contents, &len, NULL));
  g_assert_cmpuint (len, >=, 64);
  g_assert_cmpmem (contents, 8, "\x93NUMPY\x01\x00", 8);
  hlen = (guint8) contents[8] | ((guint8) contents[9] << 8);
  g_assert_cmpuint ((10 + hlen) % 64, ==, 0);
  g_assert_cmpint (contents[10 + hlen - 1], ==, '\n');
  back = clinfer_npy_read (path, &err);
  g_assert_no_error (err);
  g_assert_nonnull (back);
  remove_tmp (path);
  return back;
}

static void
assert_same (ClinferTensor *a, ClinferTensor *b)
{
  g_assert_cmpint (clinfer_tensor_get_element_type (a), ==,
      clinfer_tensor_get_element_type (b));
  g_assert_true (clinfer_shape_equal (clinfer_tensor_get_shape (a),
          clinfer_tensor_get_shape (b)));
  g_assert_cmpmem (clinfer_tensor_get_const_data (a),
      clinfer_tensor_get_byte_size (a), clinfer_tensor_get_const_data (b),
      clinfer_tensor_get_byte_size (b));
}

static void
test_round_trip_types (void)
{
  int64_t dims[] = { 2, 3, 4 };
  ClinferShape shape = clinfer_shape_make (3, dims);

  for (gsize i = 0; i < G_N_ELEMENTS (all_types); i++) {
    g_autoptr(GError) err = NULL;
    g_autoptr(ClinferTensor) t = clinfer_tensor_new (all_types[i], &shape, &err);
    g_autoptr(ClinferTensor) back = NULL;

    g_assert_no_error (err);
    fill_pattern (t);
    back = round_trip (t);
    assert_same (t, back);
  }
}

static void
test_round_trip_shapes (void)
{
  static const char *const shapes[] = {
    "scalar", "0", "5", "3x0x2", "1x1x1x1x1x1x1x1", "7x1",
  };

  for (gsize i = 0; i < G_N_ELEMENTS (shapes); i++) {
    g_autoptr(GError) err = NULL;
    g_autoptr(ClinferTensor) t = NULL, back = NULL;
    ClinferShape shape;

    g_assert_true (clinfer_shape_parse (shapes[i], &shape, &err));
    t = clinfer_tensor_new (CLINFER_TYPE_F32, &shape, &err);
    g_assert_no_error (err);
    fill_pattern (t);
    back = round_trip (t);
    assert_same (t, back);
  }
}

/* A transposed (strided) view is written in its logical row-major order. */
static void
test_write_strided (void)
{
  g_autoptr(GError) err = NULL;
  gint32 data[6] = { 0, 1, 2, 3, 4, 5 };   /* 2x3 row-major */
  int64_t dims[] = { 3, 2 };
  int64_t strides[] = { 4, 12 };            /* its 3x2 transpose */
  ClinferShape shape = clinfer_shape_make (2, dims);
  g_autoptr(ClinferTensor) view = NULL, back = NULL;
  static const gint32 expect[6] = { 0, 3, 1, 4, 2, 5 };

  view = clinfer_tensor_new_wrapped (CLINFER_TYPE_I32, &shape, strides, data,
      NULL, NULL, &err);
  g_assert_no_error (err);
  back = round_trip (view);
  g_assert_true (clinfer_shape_equal (&shape, clinfer_tensor_get_shape (back)));
  g_assert_cmpmem (clinfer_tensor_get_const_data (back), 24, expect, 24);
}

static void
test_write_unsupported_type (void)
{
  g_autoptr(GError) err = NULL;
  g_autofree char *path = tmp_file ("bf16.npy");
  ClinferShape shape = clinfer_shape_make (0, NULL);
  g_autoptr(ClinferTensor) t = clinfer_tensor_new (CLINFER_TYPE_BF16, &shape,
      NULL);

  g_assert_false (clinfer_npy_write (path, t, &err));
  g_assert_nonnull (err);
  g_assert_nonnull (strstr (err->message, path));
  g_assert_false (g_file_test (path, G_FILE_TEST_EXISTS));
  remove_tmp (path);
}

/* Values written by make-npy-fixtures.py: values(code).reshape(2, 3). */
static void
check_fixture_values (ClinferTensor *t, ClinferElementType type)
{
  if (clinfer_element_type_is_float (type)) {
    static const double v[] = { 0.0, -1.5, 2.25, 1000.0, -0.125, 65504.0 };
    for (int i = 0; i < 6; i++)
      g_assert_cmpfloat (clinfer_tensor_get_as_double (t, i), ==, v[i]);
  } else if (type == CLINFER_TYPE_BOOL) {
    static const int v[] = { 1, 0, 1, 1, 0, 0 };
    for (int i = 0; i < 6; i++)
      g_assert_cmpint (clinfer_tensor_get_as_int64 (t, i), ==, v[i]);
  } else if (type == CLINFER_TYPE_U64) {
    const guint64 *d = clinfer_tensor_get_const_data (t);
    g_assert_cmpuint (d[2], ==, G_MAXUINT64);
    g_assert_cmpuint (d[5], ==, G_MAXUINT64 - 1);
    g_assert_cmpuint (d[4], ==, 7);
  } else {
    gsize bits = clinfer_element_type_size (type) * 8;
    gboolean is_signed = type == CLINFER_TYPE_I8 || type == CLINFER_TYPE_I16
        || type == CLINFER_TYPE_I32 || type == CLINFER_TYPE_I64;
    int64_t max = is_signed
        ? (int64_t) (G_MAXUINT64 >> (65 - bits))
        : (int64_t) ((G_GUINT64_CONSTANT (1) << bits) - 1);
    int64_t min = is_signed ? -max - 1 : 0;
    g_assert_cmpint (clinfer_tensor_get_as_int64 (t, 0), ==, 0);
    g_assert_cmpint (clinfer_tensor_get_as_int64 (t, 1), ==, 1);
    g_assert_cmpint (clinfer_tensor_get_as_int64 (t, 2), ==, max);
    g_assert_cmpint (clinfer_tensor_get_as_int64 (t, 3), ==, min);
    g_assert_cmpint (clinfer_tensor_get_as_int64 (t, 4), ==, 7);
    g_assert_cmpint (clinfer_tensor_get_as_int64 (t, 5), ==, max - 1);
  }
}

static void
test_fixture_types (void)
{
  if (!have_fixtures ())
    return;
  for (gsize i = 0; i < G_N_ELEMENTS (all_types); i++) {
    g_autoptr(GError) err = NULL;
    g_autofree char *name = g_strdup_printf ("type_%s.npy", fixture_codes[i]);
    g_autofree char *path = fixture_path (name);
    g_autoptr(ClinferTensor) t = clinfer_npy_read (path, &err);
    const ClinferShape *s;

    g_assert_no_error (err);
    g_assert_cmpint (clinfer_tensor_get_element_type (t), ==, all_types[i]);
    s = clinfer_tensor_get_shape (t);
    g_assert_cmpint (s->rank, ==, 2);
    g_assert_cmpint (s->dims[0], ==, 2);
    g_assert_cmpint (s->dims[1], ==, 3);
    check_fixture_values (t, all_types[i]);
  }
}

static ClinferTensor *
read_fixture (const char *name, ClinferElementType type, const char *shape)
{
  g_autoptr(GError) err = NULL;
  g_autofree char *path = fixture_path (name);
  g_autofree char *s = NULL;
  ClinferTensor *t = clinfer_npy_read (path, &err);

  g_assert_no_error (err);
  g_assert_cmpint (clinfer_tensor_get_element_type (t), ==, type);
  s = clinfer_shape_to_string (clinfer_tensor_get_shape (t));
  g_assert_cmpstr (s, ==, shape);
  return t;
}

static void
test_fixture_shapes_versions (void)
{
  g_autoptr(ClinferTensor) scalar = NULL, vec = NULL, empty = NULL;
  g_autoptr(ClinferTensor) v2 = NULL, v3 = NULL;

  if (!have_fixtures ())
    return;
  scalar = read_fixture ("scalar_f8.npy", CLINFER_TYPE_F64, "scalar");
  g_assert_cmpfloat (clinfer_tensor_get_as_double (scalar, 0), ==, 3.5);
  vec = read_fixture ("vector_i4.npy", CLINFER_TYPE_I32, "5");
  g_assert_cmpint (clinfer_tensor_get_as_int64 (vec, 4), ==, 4);
  empty = read_fixture ("empty_f4.npy", CLINFER_TYPE_F32, "0x3");
  g_assert_cmpint (clinfer_tensor_get_n_elements (empty), ==, 0);
  v2 = read_fixture ("v2_i2.npy", CLINFER_TYPE_I16, "3x2");
  g_assert_cmpint (clinfer_tensor_get_as_int64 (v2, 5), ==, 5);
  v3 = read_fixture ("v3_u2.npy", CLINFER_TYPE_U16, "1x4");
  g_assert_cmpint (clinfer_tensor_get_as_int64 (v3, 3), ==, 3);
}

static void
test_fixture_errors (void)
{
  static const struct {
    const char *name, *needle;
  } cases[] = {
    { "bad_bigendian.npy", "big-endian" },
    { "bad_fortran.npy", "Fortran order not supported" },
    { "bad_complex.npy", "unsupported dtype '<c8'" },
    { "bad_truncated.npy", "truncated" },
    { "bad_extra.npy", "size mismatch" },
    { "bad_magic.npy", "bad magic" },
    { "does-not-exist.npy", "cannot open" },
  };

  if (!have_fixtures ())
    return;
  for (gsize i = 0; i < G_N_ELEMENTS (cases); i++) {
    g_autoptr(GError) err = NULL;
    g_autofree char *path = fixture_path (cases[i].name);
    ClinferTensor *t = clinfer_npy_read (path, &err);

    g_assert_null (t);
    g_assert_error (err, CLINFER_ERROR, err->code);
    g_test_message ("%s", err->message);
    g_assert_nonnull (strstr (err->message, path));
    g_assert_nonnull (strstr (err->message, cases[i].needle));
  }
}

/* A small valid v1 file in memory. */
static GBytes *
valid_bytes (void)
{
  static const char head[] = "{'descr': '<i2', 'fortran_order': False, "
      "'shape': (2,), }";
  GByteArray *a = g_byte_array_new ();
  guint8 prelude[10] = { 0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0, 0, 0 };
  guint8 data[4] = { 1, 0, 2, 0 };

  prelude[8] = sizeof (head);   /* text + '\n' */
  g_byte_array_append (a, prelude, 10);
  g_byte_array_append (a, (const guint8 *) head, sizeof (head) - 1);
  g_byte_array_append (a, (const guint8 *) "\n", 1);
  g_byte_array_append (a, data, 4);
  return g_byte_array_free_to_bytes (a);
}

/* Every prefix of a valid file fails cleanly; so do single-byte changes
 * of the header (run under valgrind/ASan to check bounds). */
static void
test_parse_truncations_and_corruptions (void)
{
  g_autoptr(GBytes) bytes = valid_bytes ();
  gsize size;
  const guint8 *data = g_bytes_get_data (bytes, &size);
  g_autoptr(ClinferTensor) ok = clinfer_npy_parse (data, size, "mem", NULL);
  static const guint8 subst[] = { 0, '\'', '(', ')', ',', '}', '9', 0xff, ' ' };

  g_assert_nonnull (ok);
  g_assert_cmpint (clinfer_tensor_get_as_int64 (ok, 1), ==, 2);
  for (gsize len = 0; len < size; len++) {
    g_autoptr(GError) err = NULL;
    g_autofree guint8 *copy = g_memdup2 (data, len ? len : 1);
    g_assert_null (clinfer_npy_parse (len ? copy : NULL, len, "mem", &err));
    g_assert_nonnull (strstr (err->message, "mem"));
  }
  for (gsize pos = 0; pos < size - 4; pos++)
    for (gsize k = 0; k < G_N_ELEMENTS (subst); k++) {
      g_autoptr(GError) err = NULL;
      g_autofree guint8 *copy = g_memdup2 (data, size);
      ClinferTensor *t;
      copy[pos] = subst[k];
      t = clinfer_npy_parse (copy, size, "mem", &err);
      g_assert_true ((t == NULL) == (err != NULL));
      if (t)
        clinfer_tensor_unref (t);
    }
}

static void
test_parse_headers (void)
{
  static const struct {
    const char *header;
    gboolean ok;
  } cases[] = {
    { "{'descr': '<i2', 'fortran_order': False, 'shape': (1, 2), }", TRUE },
    { "{\"descr\": \"=i2\", \"shape\": (2,), \"fortran_order\": False}", TRUE },
    { "{'descr': 'i2', 'fortran_order': False, 'shape': (2L,)}", TRUE },
    { "{'descr': '<i2', 'fortran_order': False}", FALSE },
    { "{'descr': '<i2', 'fortran_order': False, 'shape': (-2,)}", FALSE },
    { "{'descr': '<i2', 'fortran_order': 0, 'shape': (2,)}", FALSE },
    { "{'descr': [('a', '<i2')], 'fortran_order': False, 'shape': (2,)}", FALSE },
    { "{'descr': '<i2', 'fortran_order': False, 'shape': (2,), 'x': 1}", FALSE },
    { "{'descr': '<i2', 'fortran_order': False, 'shape': (99999999999999999999,)}", FALSE },
    { "{'descr': '<i2', 'fortran_order': False, 'shape': (4294967296, 4294967296)}", FALSE },
    { "{'descr': '<i2', 'fortran_order': False, 'shape': (2,)} junk", FALSE },
    { "{'descr': '<i2', 'fortran_order': False, 'shape': (1,1,1,1,1,1,1,1,2)}", FALSE },
    { "{'descr': '>i2', 'fortran_order': False, 'shape': (2,)}", FALSE },
  };

  for (gsize i = 0; i < G_N_ELEMENTS (cases); i++) {
    g_autoptr(GError) err = NULL;
    g_autoptr(GByteArray) a = g_byte_array_new ();
    guint8 prelude[10] = { 0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0, 0, 0 };
    guint8 data[4] = { 1, 0, 2, 0 };
    g_autoptr(ClinferTensor) t = NULL;

    prelude[8] = strlen (cases[i].header);
    g_byte_array_append (a, prelude, 10);
    g_byte_array_append (a, (const guint8 *) cases[i].header,
        strlen (cases[i].header));
    g_byte_array_append (a, data, 4);
    t = clinfer_npy_parse (a->data, a->len, "hdr", &err);
    g_test_message ("%s -> %s", cases[i].header, err ? err->message : "ok");
    g_assert_true ((t != NULL) == cases[i].ok);
    if (!cases[i].ok)
      g_assert_nonnull (strstr (err->message, "hdr"));
  }
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/npy/round-trip/types", test_round_trip_types);
  g_test_add_func ("/npy/round-trip/shapes", test_round_trip_shapes);
  g_test_add_func ("/npy/write/strided", test_write_strided);
  g_test_add_func ("/npy/write/unsupported-type", test_write_unsupported_type);
  g_test_add_func ("/npy/fixtures/types", test_fixture_types);
  g_test_add_func ("/npy/fixtures/shapes-versions", test_fixture_shapes_versions);
  g_test_add_func ("/npy/fixtures/errors", test_fixture_errors);
  g_test_add_func ("/npy/parse/truncations", test_parse_truncations_and_corruptions);
  g_test_add_func ("/npy/parse/headers", test_parse_headers);
  return g_test_run ();
}
