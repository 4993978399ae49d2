/* clinfer — fuzz target: models of the ops whose kernels index memory
 * with values from a tensor (tests/fuzz/run-models/, written by
 * make-run-models.py: Gather*, Scatter*, Slice, Resize, TopK, NonZero,
 * OneHot, Pad, Expand, Tile, Reshape, Range, Cast, Resize with a crop
 * box, Compress, Split, ...) run on fuzzed inputs.
 * A bad index, size or scale must be an error from the request, never an
 * out-of-bounds access (AddressSanitizer) or an allocation beyond the
 * memory limit.
 *
 * Input: byte 0 picks the model (modulo their number: models are only
 * ever appended, so a reproducer whose byte 0 is below their number keeps
 * its meaning; tests/data/fuzz/run/ uses such bytes); then each input's
 * elements in order. An integer element is one byte read as a signed
 * value (-128..127), or, after the byte 0x80, 8 bytes little-endian (any
 * int64). A float element is (byte - 64) / 16, or after 0x80 any 4-byte
 * float (NaN, infinities, 1e30). A bool element is a byte's lowest bit.
 * Missing bytes read as 0.
 *
 * The models are compiled once per process (a request is made per
 * input) for the CPU device, or for
 * CLINFER_FUZZ_DEVICE (GPU: the OpenCL kernels; PoCL does not catch
 * their out-of-bounds accesses, oclgrind does: tests/opencl/
 * with-oclgrind.py runs this target's seeds that way). */
#include "fuzz-common.h"
#include <stdlib.h>
#include <string.h>

#define MAX_MODELS 64

typedef struct {
  ClinferCompiled *compiled;
} RunModel;

static RunModel models[MAX_MODELS];
static guint n_models;

static int
compare_names (gconstpointer a, gconstpointer b)
{
  return strcmp (*(const char *const *) a, *(const char *const *) b);
}

static void
load_models (void)
{
  g_autoptr (GDir) dir = g_dir_open (FUZZ_RUN_MODELS, 0, NULL);
  g_autoptr (GPtrArray) names = g_ptr_array_new_with_free_func (g_free);
  const char *name;

  if (dir == NULL) {
    g_printerr ("fuzz-run: cannot open %s\n", FUZZ_RUN_MODELS);
    exit (1);
  }
  while ((name = g_dir_read_name (dir)))
    if (g_str_has_suffix (name, ".onnx"))
      g_ptr_array_add (names, g_strdup (name));
  g_ptr_array_sort (names, compare_names);
  for (guint i = 0; i < names->len && n_models < MAX_MODELS; i++) {
    g_autofree char *path = g_build_filename (FUZZ_RUN_MODELS,
        (const char *) g_ptr_array_index (names, i), NULL);
    g_autoptr (GError) err = NULL;
    g_autoptr (ClinferModel) model = clinfer_model_read (path, &err);
    RunModel *m = &models[n_models];

    if (model)
      m->compiled = fuzz_compile (model, g_getenv ("CLINFER_FUZZ_DEVICE"),
          &err);
    if (m->compiled == NULL) {
      g_printerr ("fuzz-run: cannot compile %s: %s\n", path,
          err ? err->message : "?");
      exit (1);
    }
    n_models++;
  }
}

static int64_t
take_int (FuzzInput *in)
{
  guint8 b = fuzz_u8 (in);
  guint64 v = 0;

  if (b != 0x80)
    return (gint8) b;
  for (int i = 0; i < 8; i++)
    v |= (guint64) fuzz_u8 (in) << (8 * i);
  return (int64_t) v;
}

static float
take_float (FuzzInput *in)
{
  guint8 b = fuzz_u8 (in);
  guint32 bits;
  float f;

  if (b != 0x80)
    return (b - 64) / 16.0f;
  bits = fuzz_u32 (in);
  memcpy (&f, &bits, sizeof (f));
  return f;
}

/* A tensor of input @index's type and shape, filled from @in. */
static ClinferTensor *
make_input (ClinferCompiled *compiled, guint index, FuzzInput *in)
{
  ClinferPortInfo info;
  ClinferTensor *t;
  int64_t n;

  if (!clinfer_compiled_get_input (compiled, index, &info))
    return NULL;
  t = clinfer_tensor_new (info.type, &info.shape, NULL);
  if (t == NULL)
    return NULL;
  n = clinfer_tensor_get_n_elements (t);
  for (int64_t i = 0; i < n; i++) {
    if (info.type == CLINFER_TYPE_I64)
      ((int64_t *) clinfer_tensor_get_data (t))[i] = take_int (in);
    else if (info.type == CLINFER_TYPE_F32)
      ((float *) clinfer_tensor_get_data (t))[i] = take_float (in);
    else if (info.type == CLINFER_TYPE_BOOL)
      ((guint8 *) clinfer_tensor_get_data (t))[i] = fuzz_u8 (in) & 1;
  }
  return t;
}

gboolean
fuzz_one (const guint8 *data, gsize size, GError **error)
{
  FuzzInput in = { data, size };
  g_autoptr (ClinferRequest) request = NULL;
  RunModel *m;

  if (n_models == 0) {
    /* Outputs of a few MB show every indexing bug a larger one would;
     * more only slows the fuzzer down (each is zeroed and read). */
    fuzz_memory_limit = 4 << 20;
    load_models ();
  }
  m = &models[fuzz_u8 (&in) % n_models];
  /* A request per input (the compiled model is shared), so a finding
   * reproduces from its input alone. */
  request = clinfer_compiled_create_request (m->compiled, error);
  if (request == NULL)
    return FALSE;
  for (guint i = 0; i < clinfer_compiled_get_n_inputs (m->compiled); i++) {
    g_autoptr (ClinferTensor) t = make_input (m->compiled, i, &in);
    if (t == NULL
        || !clinfer_request_set_input_by_index (request, i, t, error))
      return FALSE;
  }
  if (clinfer_request_infer (request, error)) {
    /* Every output is readable in full. */
    for (guint i = 0; i < clinfer_compiled_get_n_outputs (m->compiled); i++) {
      ClinferTensor *t = clinfer_request_get_output (request, i);
      const guint8 *p = t ? clinfer_tensor_get_const_data (t) : NULL;
      gsize bytes = t ? clinfer_tensor_get_byte_size (t) : 0;
            for (gsize k = 0; k < bytes; k++)
        fuzz_sink += p[k];
    }
    return TRUE;
  }
  return FALSE;
}
