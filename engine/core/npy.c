/* clinfer — NumPy .npy reading (format 1.0-3.0, little-endian, C order) and
 * writing (format 1.0). Parsing never reads past the given buffer. */
#include <clinfer/npy.h>
#include <clinfer/error.h>
#include <glib/gstdio.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#define NPY_MAGIC "\x93NUMPY"
#define NPY_MAGIC_LEN 6
#define NPY_PRELUDE_MAX 12            /* magic, version, u32 header length */
#define NPY_MAX_HEADER_LEN (1 << 20)  /* numpy itself refuses > 10000 */
#define NPY_ALIGN 64

typedef struct {
  ClinferElementType type;
  ClinferShape shape;
  gboolean swap;          /* file byte order differs from the host's */
  gsize data_offset;      /* first data byte */
  gsize data_size;        /* n_elements * element size */
} NpyHeader;

static const struct {
  char kind;
  int size;
  ClinferElementType type;
} npy_types[] = {
  { 'f', 2, CLINFER_TYPE_F16 }, { 'f', 4, CLINFER_TYPE_F32 },
  { 'f', 8, CLINFER_TYPE_F64 },
  { 'i', 1, CLINFER_TYPE_I8 }, { 'i', 2, CLINFER_TYPE_I16 },
  { 'i', 4, CLINFER_TYPE_I32 }, { 'i', 8, CLINFER_TYPE_I64 },
  { 'u', 1, CLINFER_TYPE_U8 }, { 'u', 2, CLINFER_TYPE_U16 },
  { 'u', 4, CLINFER_TYPE_U32 }, { 'u', 8, CLINFER_TYPE_U64 },
  { 'b', 1, CLINFER_TYPE_BOOL },
};

static void
swap_bytes (guint8 *data, gsize n_elements, gsize esize)
{
  for (gsize i = 0; i < n_elements; i++, data += esize)
    for (gsize a = 0, b = esize - 1; a < b; a++, b--) {
      guint8 t = data[a];
      data[a] = data[b];
      data[b] = t;
    }
}

/* Maps a descr such as "<f4" or "|b1" to an element type. */
static gboolean
descr_to_type (const char *descr, const char *origin, NpyHeader *hdr,
    GError **error)
{
  const char *p = descr;
  char order = '=';
  char *end = NULL;
  gint64 size;

  if (*p == '<' || *p == '>' || *p == '|' || *p == '=')
    order = *p++;
  if (*p != '\0' && g_ascii_isdigit (p[1])) {
    size = g_ascii_strtoll (p + 1, &end, 10);
    for (gsize i = 0; end && *end == '\0' && i < G_N_ELEMENTS (npy_types); i++) {
      if (npy_types[i].kind != *p || npy_types[i].size != size)
        continue;
      if (order == '>' && size > 1) {
        g_set_error (error, CLINFER_ERROR, CLINFER_ERROR_PARSE,
            "%s: big-endian data (dtype '%s') is not supported; save it "
            "little-endian, e.g. arr.astype('<%c%d')", origin, descr, *p,
            (int) size);
        return FALSE;
      }
      hdr->type = npy_types[i].type;
      hdr->swap = size > 1 && order == '<' && G_BYTE_ORDER != G_LITTLE_ENDIAN;
      return TRUE;
    }
  }
  g_set_error (error, CLINFER_ERROR, CLINFER_ERROR_PARSE,
      "%s: unsupported dtype '%s' (expected float16/32/64, int8/16/32/64, "
      "uint8/16/32/64 or bool)", origin, descr);
  return FALSE;
}

/* A tiny cursor over the Python-literal header dict. */
typedef struct {
  const char *p, *end;
} Cursor;

static void
skip_ws (Cursor *c)
{
  while (c->p < c->end && (*c->p == ' ' || *c->p == '\t' || *c->p == '\n'
          || *c->p == '\r'))
    c->p++;
}

static gboolean
accept_char (Cursor *c, char ch)
{
  skip_ws (c);
  if (c->p < c->end && *c->p == ch) {
    c->p++;
    return TRUE;
  }
  return FALSE;
}

static gboolean
accept_word (Cursor *c, const char *word)
{
  gsize n = strlen (word);

  skip_ws (c);
  if ((gsize) (c->end - c->p) >= n && memcmp (c->p, word, n) == 0
      && ((gsize) (c->end - c->p) == n || !g_ascii_isalnum (c->p[n]))) {
    c->p += n;
    return TRUE;
  }
  return FALSE;
}

/* A quoted string without escapes; NULL when there is none. */
static char *
parse_string (Cursor *c)
{
  const char *start;
  char quote;

  skip_ws (c);
  if (c->p >= c->end || (*c->p != '\'' && *c->p != '"'))
    return NULL;
  quote = *c->p++;
  start = c->p;
  while (c->p < c->end && *c->p != quote) {
    if (*c->p == '\\' || *c->p == '\n' || *c->p == '\0')
      return NULL;
    c->p++;
  }
  if (c->p >= c->end)
    return NULL;
  c->p++;
  return g_strndup (start, c->p - start - 1);
}

/* A non-negative integer (Python 2 may append 'L'), overflow-checked. */
static gboolean
parse_dim (Cursor *c, int64_t *value)
{
  int64_t v = 0;

  skip_ws (c);
  if (c->p >= c->end || !g_ascii_isdigit (*c->p))
    return FALSE;
  while (c->p < c->end && g_ascii_isdigit (*c->p)) {
    int digit = *c->p++ - '0';
    if (v > (G_MAXINT64 - digit) / 10)
      return FALSE;
    v = v * 10 + digit;
  }
  if (c->p < c->end && *c->p == 'L')
    c->p++;
  *value = v;
  return TRUE;
}

/* "()", "(5,)", "(2, 3)" or "(2, 3,)". */
static gboolean
parse_shape (Cursor *c, const char *origin, ClinferShape *shape,
    GError **error)
{
  shape->rank = 0;
  if (!accept_char (c, '('))
    goto bad;
  while (!accept_char (c, ')')) {
    int64_t dim;
    if (!parse_dim (c, &dim))
      goto bad;
    if (shape->rank == CLINFER_MAX_RANK) {
      g_set_error (error, CLINFER_ERROR, CLINFER_ERROR_PARSE,
          "%s: arrays of more than %d dimensions are not supported", origin,
          CLINFER_MAX_RANK);
      return FALSE;
    }
    shape->dims[shape->rank++] = dim;
    if (!accept_char (c, ',')) {
      if (!accept_char (c, ')'))
        goto bad;
      break;
    }
  }
  return TRUE;

bad:
  g_set_error (error, CLINFER_ERROR, CLINFER_ERROR_PARSE,
      "%s: malformed 'shape' in the .npy header (expected a tuple of "
      "non-negative integers)", origin);
  return FALSE;
}

static gboolean
parse_entry (Cursor *c, const char *key, const char *origin, NpyHeader *hdr,
    guint *seen, GError **error)
{
  if (strcmp (key, "descr") == 0) {
    g_autofree char *descr = parse_string (c);
    skip_ws (c);
    if (descr == NULL) {
      g_set_error (error, CLINFER_ERROR, CLINFER_ERROR_PARSE,
          "%s: unsupported 'descr' in the .npy header (structured dtypes "
          "are not supported)", origin);
      return FALSE;
    }
    *seen |= 1;
    return descr_to_type (descr, origin, hdr, error);
  } else if (strcmp (key, "fortran_order") == 0) {
    *seen |= 2;
    if (accept_word (c, "False"))
      return TRUE;
    if (accept_word (c, "True"))
      g_set_error (error, CLINFER_ERROR, CLINFER_ERROR_PARSE,
          "%s: Fortran order not supported; save a C-order array "
          "(numpy.ascontiguousarray)", origin);
    else
      g_set_error (error, CLINFER_ERROR, CLINFER_ERROR_PARSE,
          "%s: malformed 'fortran_order' in the .npy header", origin);
    return FALSE;
  } else if (strcmp (key, "shape") == 0) {
    *seen |= 4;
    return parse_shape (c, origin, &hdr->shape, error);
  }
  g_set_error (error, CLINFER_ERROR, CLINFER_ERROR_PARSE,
      "%s: unexpected key '%s' in the .npy header", origin, key);
  return FALSE;
}

/* Parses "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }". */
static gboolean
parse_dict (const char *text, gsize len, const char *origin, NpyHeader *hdr,
    GError **error)
{
  Cursor c = { text, text + len };
  guint seen = 0;

  if (!accept_char (&c, '{'))
    goto bad;
  while (!accept_char (&c, '}')) {
    g_autofree char *key = parse_string (&c);
    if (key == NULL || !accept_char (&c, ':'))
      goto bad;
    if (!parse_entry (&c, key, origin, hdr, &seen, error))
      return FALSE;
    if (!accept_char (&c, ',')) {
      if (!accept_char (&c, '}'))
        goto bad;
      break;
    }
  }
  skip_ws (&c);
  if (c.p != c.end)
    goto bad;
  if (seen != 7) {
    g_set_error (error, CLINFER_ERROR, CLINFER_ERROR_PARSE,
        "%s: the .npy header lacks '%s'", origin,
        !(seen & 1) ? "descr" : !(seen & 2) ? "fortran_order" : "shape");
    return FALSE;
  }
  return TRUE;

bad:
  g_set_error (error, CLINFER_ERROR, CLINFER_ERROR_PARSE,
      "%s: malformed .npy header (expected a Python dict literal)", origin);
  return FALSE;
}

/* Checks magic and version in @buf (@buf_len bytes of a @total byte file)
 * and finds where the header text and the data start. */
static gboolean
parse_prelude (const guint8 *buf, gsize buf_len, guint64 total,
    const char *origin, gsize *header_len, NpyHeader *hdr, GError **error)
{
  gsize prelude;
  guint64 len;

  if (buf_len < NPY_MAGIC_LEN || memcmp (buf, NPY_MAGIC, NPY_MAGIC_LEN) != 0) {
    g_set_error (error, CLINFER_ERROR, CLINFER_ERROR_PARSE,
        "%s: not a NumPy .npy file (bad magic)", origin);
    return FALSE;
  }
  if (buf_len < 8)
    goto truncated;
  if ((buf[6] != 1 && buf[6] != 2 && buf[6] != 3) || buf[7] != 0) {
    g_set_error (error, CLINFER_ERROR, CLINFER_ERROR_UNSUPPORTED_VERSION,
        "%s: unsupported .npy format version %u.%u (supported: 1.0, 2.0, "
        "3.0)", origin, buf[6], buf[7]);
    return FALSE;
  }
  prelude = buf[6] == 1 ? 10 : 12;
  if (buf_len < prelude)
    goto truncated;
  len = buf[8] | ((guint) buf[9] << 8);
  if (prelude == 12)
    len |= ((guint64) buf[10] << 16) | ((guint64) buf[11] << 24);
  if (len > NPY_MAX_HEADER_LEN) {
    g_set_error (error, CLINFER_ERROR, CLINFER_ERROR_PARSE,
        "%s: .npy header of %" G_GUINT64_FORMAT " bytes is too large", origin,
        len);
    return FALSE;
  }
  if (len > total - prelude)
    goto truncated;
  *header_len = len;
  hdr->data_offset = prelude + len;
  return TRUE;

truncated:
  g_set_error (error, CLINFER_ERROR, CLINFER_ERROR_PARSE,
      "%s: truncated .npy file (incomplete header)", origin);
  return FALSE;
}

/* Computes the data size from the header and checks it against the
 * @available bytes after the header. */
static gboolean
check_data_size (NpyHeader *hdr, guint64 available, const char *origin,
    GError **error)
{
  gsize esize = clinfer_element_type_size (hdr->type);
  guint64 n = 1;
  gboolean overflow = FALSE;

  for (int i = 0; i < hdr->shape.rank; i++) {
    guint64 d = (guint64) hdr->shape.dims[i];
    if (d == 0) {
      n = 0;
      overflow = FALSE;
      break;
    }
    if (n > G_MAXINT64 / d)
      overflow = TRUE;
    else
      n *= d;
  }
  if (overflow || n > G_MAXSIZE / esize || n * esize > (guint64) G_MAXINT64) {
    g_set_error (error, CLINFER_ERROR, CLINFER_ERROR_PARSE,
        "%s: the array in the .npy header is too large", origin);
    return FALSE;
  }
  hdr->data_size = (gsize) (n * esize);
  if (available != hdr->data_size) {
    g_autofree char *s = clinfer_shape_to_string (&hdr->shape);
    g_set_error (error, CLINFER_ERROR, CLINFER_ERROR_PARSE,
        "%s: %s .npy file: shape %s of %s needs %" G_GSIZE_FORMAT
        " data bytes, found %" G_GUINT64_FORMAT, origin,
        available < hdr->data_size ? "truncated" : "size mismatch in", s,
        clinfer_element_type_name (hdr->type), hdr->data_size, available);
    return FALSE;
  }
  return TRUE;
}

/* Byte-order and bool normalisation of freshly loaded data. */
static void
fixup_data (ClinferTensor *tensor, const NpyHeader *hdr)
{
  guint8 *data = clinfer_tensor_get_data (tensor);
  gsize esize = clinfer_element_type_size (hdr->type);
  gsize n = hdr->data_size / esize;

  if (hdr->swap)
    swap_bytes (data, n, esize);
  if (hdr->type == CLINFER_TYPE_BOOL)
    for (gsize i = 0; i < n; i++)
      data[i] = data[i] != 0;
}

/* Parses prelude and header out of @data (@buf_len bytes present, @total
 * in the whole file). */
static gboolean
parse_header (const guint8 *data, gsize buf_len, guint64 total,
    const char *origin, NpyHeader *hdr, GError **error)
{
  gsize header_len = 0;

  memset (hdr, 0, sizeof (*hdr));
  if (!parse_prelude (data, buf_len, total, origin, &header_len, hdr, error))
    return FALSE;
  if (!parse_dict ((const char *) data + hdr->data_offset - header_len,
          header_len, origin, hdr, error))
    return FALSE;
  return check_data_size (hdr, total - hdr->data_offset, origin, error);
}

ClinferTensor *
clinfer_npy_parse (const guint8 *data, gsize size, const char *origin,
    GError **error)
{
  NpyHeader hdr;
  ClinferTensor *tensor;

  g_return_val_if_fail (data != NULL || size == 0, NULL);
  if (origin == NULL)
    origin = "<buffer>";
  if (!parse_header (data, size, size, origin, &hdr, error))
    return NULL;
  tensor = clinfer_tensor_new (hdr.type, &hdr.shape, error);
  if (tensor == NULL)
    return NULL;
  if (hdr.data_size > 0)
    memcpy (clinfer_tensor_get_data (tensor), data + hdr.data_offset,
        hdr.data_size);
  fixup_data (tensor, &hdr);
  return tensor;
}

/* Reads exactly @size bytes; FALSE with an error naming @path otherwise. */
static gboolean
read_exact (FILE *f, void *buf, gsize size, const char *path, GError **error)
{
  if (size > 0 && fread (buf, 1, size, f) != size) {
    int saved = errno;
    g_set_error (error, CLINFER_ERROR, CLINFER_ERROR_IO, "%s: %s", path,
        ferror (f) ? g_strerror (saved) : "unexpected end of file");
    return FALSE;
  }
  return TRUE;
}

/* Non-regular files (pipes, /dev/stdin): slurp and parse. */
static ClinferTensor *
read_whole (const char *path, GError **error)
{
  g_autoptr(GError) err = NULL;
  g_autofree char *contents = NULL;
  gsize len = 0;

  if (!g_file_get_contents (path, &contents, &len, &err)) {
    g_set_error (error, CLINFER_ERROR, CLINFER_ERROR_IO, "%s", err->message);
    return NULL;
  }
  return clinfer_npy_parse ((const guint8 *) contents, len, path, error);
}

static ClinferTensor *
read_file (FILE *f, guint64 total, const char *path, GError **error)
{
  guint8 prelude[NPY_PRELUDE_MAX];
  gsize n = (gsize) MIN (total, (guint64) NPY_PRELUDE_MAX);
  g_autofree guint8 *head = NULL;
  g_autoptr(ClinferTensor) tensor = NULL;
  NpyHeader hdr = { 0 };
  gsize header_len = 0;

  if (!read_exact (f, prelude, n, path, error)
      || !parse_prelude (prelude, n, total, path, &header_len, &hdr, error))
    return NULL;
  /* Re-read from the start so parse_header sees prelude + header. */
  head = g_malloc (hdr.data_offset);
  if (fseek (f, 0, SEEK_SET) != 0
      || !read_exact (f, head, hdr.data_offset, path, error))
    return NULL;
  if (!parse_header (head, hdr.data_offset, total, path, &hdr, error))
    return NULL;
  tensor = clinfer_tensor_new (hdr.type, &hdr.shape, error);
  if (tensor == NULL
      || !read_exact (f, clinfer_tensor_get_data (tensor), hdr.data_size, path,
          error))
    return NULL;
  fixup_data (tensor, &hdr);
  return g_steal_pointer (&tensor);
}

ClinferTensor *
clinfer_npy_read (const char *path, GError **error)
{
  FILE *f;
  GStatBuf st;
  ClinferTensor *tensor;

  g_return_val_if_fail (path != NULL, NULL);
  f = g_fopen (path, "rb");
  if (f == NULL) {
    int saved = errno;
    g_set_error (error, CLINFER_ERROR, CLINFER_ERROR_IO,
        "cannot open %s: %s", path, g_strerror (saved));
    return NULL;
  }
  if (fstat (fileno (f), &st) != 0 || !S_ISREG (st.st_mode)) {
    fclose (f);
    return read_whole (path, error);
  }
  tensor = read_file (f, (guint64) st.st_size, path, error);
  fclose (f);
  return tensor;
}

/* The header text, padded with spaces so the data starts at a multiple of
 * NPY_ALIGN bytes, ending with '\n' (as numpy writes it). */
static GString *
build_header (const ClinferTensor *tensor, GError **error)
{
  ClinferElementType type = clinfer_tensor_get_element_type (tensor);
  const ClinferShape *shape = clinfer_tensor_get_shape (tensor);
  GString *h;
  gsize total;
  char kind = 0;
  int size = 0;

  for (gsize i = 0; i < G_N_ELEMENTS (npy_types); i++)
    if (npy_types[i].type == type) {
      kind = npy_types[i].kind;
      size = npy_types[i].size;
    }
  if (kind == 0) {
    g_set_error (error, CLINFER_ERROR, CLINFER_ERROR_TYPE_MISMATCH,
        "NumPy .npy has no element type %s",
        clinfer_element_type_name (type));
    return NULL;
  }
  h = g_string_new (NULL);
  g_string_append_printf (h, "{'descr': '%c%c%d', 'fortran_order': False, "
      "'shape': (", size == 1 ? '|' : '<', kind, size);
  for (int i = 0; i < shape->rank; i++)
    g_string_append_printf (h, "%s%" G_GINT64_FORMAT, i ? ", " : "",
        shape->dims[i]);
  g_string_append (h, shape->rank == 1 ? ",), }" : "), }");
  total = 10 + h->len + 1;
  while (total % NPY_ALIGN != 0) {
    g_string_append_c (h, ' ');
    total++;
  }
  g_string_append_c (h, '\n');
  return h;
}

static gboolean
write_all (FILE *f, const void *data, gsize size, const char *path,
    GError **error)
{
  if (size > 0 && fwrite (data, 1, size, f) != size) {
    int saved = errno;
    g_set_error (error, CLINFER_ERROR, CLINFER_ERROR_IO,
        "cannot write %s: %s", path, g_strerror (saved));
    return FALSE;
  }
  return TRUE;
}

/* Contiguous, little-endian data of @tensor: @tensor itself or a copy. */
static ClinferTensor *
host_data (const ClinferTensor *tensor, GError **error)
{
  ClinferTensor *data;
  gsize esize = clinfer_element_type_size (
      clinfer_tensor_get_element_type (tensor));

  if (clinfer_tensor_is_contiguous (tensor)
      && (G_BYTE_ORDER == G_LITTLE_ENDIAN || esize == 1))
    return clinfer_tensor_ref ((ClinferTensor *) tensor);
  data = clinfer_tensor_copy (tensor, error);
  if (data != NULL && G_BYTE_ORDER != G_LITTLE_ENDIAN && esize > 1)
    swap_bytes (clinfer_tensor_get_data (data),
        (gsize) clinfer_tensor_get_n_elements (data), esize);
  return data;
}

gboolean
clinfer_npy_write (const char *path, const ClinferTensor *tensor,
    GError **error)
{
  g_autoptr(GString) header = NULL;
  g_autoptr(ClinferTensor) data = NULL;
  guint8 prelude[10] = { 0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0, 0, 0 };
  gboolean ok;
  FILE *f;

  g_return_val_if_fail (path != NULL && tensor != NULL, FALSE);
  header = build_header (tensor, error);
  if (header == NULL) {
    g_prefix_error (error, "cannot write %s: ", path);
    return FALSE;
  }
  data = host_data (tensor, error);
  if (data == NULL)
    return FALSE;
  prelude[8] = header->len & 0xff;
  prelude[9] = (header->len >> 8) & 0xff;
  f = g_fopen (path, "wb");
  if (f == NULL) {
    int saved = errno;
    g_set_error (error, CLINFER_ERROR, CLINFER_ERROR_IO,
        "cannot create %s: %s", path, g_strerror (saved));
    return FALSE;
  }
  ok = write_all (f, prelude, sizeof (prelude), path, error)
      && write_all (f, header->str, header->len, path, error)
      && write_all (f, clinfer_tensor_get_const_data (data),
          clinfer_tensor_get_byte_size (data), path, error);
  if (fclose (f) != 0 && ok) {
    int saved = errno;
    g_set_error (error, CLINFER_ERROR, CLINFER_ERROR_IO,
        "cannot write %s: %s", path, g_strerror (saved));
    ok = FALSE;
  }
  if (!ok)
    g_unlink (path);
  return ok;
}
