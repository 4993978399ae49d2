/* clinfer — the CPU device's fast Pad: constant, reflect and edge modes
 * on a tensor of any rank and 1, 2, 4 or 8-byte elements, with pads
 * known at compile time (zero or positive). The trailing dims that are not padded merge into
 * their element (1x172x309x1 padded on dim 2: rows of 309 elements, not
 * 53,148 rows of one). The output is written row by row: a row outside
 * the input is the fill value, a row inside is the input row with the
 * fill on either side (reflect and edge: the input row an index map
 * picks, its ends through the last dim's map). Rows are split between
 * the threads. The
 * reference eval (engine/ops/layout.c) looks each element up through
 * per-dim index maps; the fold-pad pass removes the Pads a following
 * Conv/pool can take, this kernel runs the rest. */
#include "plan/cpu-kernels.h"
#include "ops/pad.h"
#include <omp.h>
#include <string.h>

typedef struct {
  ClinferShape in_shape;        /* the input as the node has it */
  ClinferShape x_shape, y_shape;  /* with unpadded trailing dims merged */
  int64_t begin[CLINFER_MAX_RANK];
  gsize es;
  guint8 fill[8];
  gboolean zero_fill;
  /* reflect and edge modes: per output dim, the input index it reads
   * (clinfer_pad_source ()); elements of es bytes are whole unpadded
   * trailing dims */
  int64_t *map[CLINFER_MAX_RANK];
} PadState;

static void
pad_state_free (gpointer p)
{
  PadState *st = p;

  for (int i = 0; i < CLINFER_MAX_RANK; i++)
    g_free (st->map[i]);
  g_free (st);
}

/* The maps of a reflect or edge Pad: unpadded trailing dims become part
 * of the element, so rows of short elements stay rows. */
static gboolean
prepare_maps (PadState *st, const ClinferPadParams *pp)
{
  int r = st->x_shape.rank;
  const int64_t *pads = pp->pads;

  while (r > 1 && pads[r - 1] == 0 && pads[2 * r - 1] == 0) {
    st->es *= st->x_shape.dims[r - 1];
    r--;
  }
  st->x_shape.rank = st->y_shape.rank = r;
  for (int i = 0; i < r; i++) {
    int64_t n = st->x_shape.dims[i];
    /* An empty dim cannot be padded: the reference eval says so. */
    if (n == 0)
      return FALSE;
    st->begin[i] = pads[i];
    st->map[i] = g_new (int64_t, MAX (st->y_shape.dims[i], 1));
    for (int64_t o = 0; o < st->y_shape.dims[i]; o++)
      st->map[i][o] = clinfer_pad_source (pp, o, pads[i], n);
  }
  return TRUE;
}

/* @n elements of @es bytes at @dst set to @fill. */
static void
fill_elems (guint8 *dst, int64_t n, gsize es, const guint8 *fill,
    gboolean zero)
{
  if (zero) {
    memset (dst, 0, (size_t) n * es);
    return;
  }
  for (int64_t i = 0; i < n; i++)
    memcpy (dst + i * es, fill, es);
}

/* Output values [o0, o1) of a row around its input row @src: the fill
 * (constant mode) or the values the last dim's map picks. */
static void
pad_edge (const PadState *st, guint8 *dst, const guint8 *src, int64_t o0,
    int64_t o1)
{
  const int64_t *map = st->map[st->y_shape.rank - 1];

  if (map == NULL) {
    fill_elems (dst + (size_t) o0 * st->es, o1 - o0, st->es, st->fill,
        st->zero_fill);
    return;
  }
  for (int64_t o = o0; o < o1; o++)
    memcpy (dst + (size_t) o * st->es, src + (size_t) map[o] * st->es, st->es);
}

/* Each output row: outside the input (constant mode) the fill; else its
 * input row (the outer dims' begins, or their maps in reflect and edge
 * modes) with pad_edge () on either side. */
static gboolean
pad_run (ClinferCpuKernel *kernel, const ClinferNode *node,
    ClinferTensor *const *inputs, ClinferTensor *const *outputs,
    GError **error)
{
  const PadState *st = kernel->state;
  const guint8 *x = clinfer_tensor_get_const_data (inputs[0]);
  guint8 *y = clinfer_tensor_get_data (outputs[0]);
  int r = st->y_shape.rank;
  int64_t ow = r ? st->y_shape.dims[r - 1] : 1;
  int64_t iw = r ? st->x_shape.dims[r - 1] : 1;
  int64_t b = r ? st->begin[r - 1] : 0;
  int64_t rows = 1;

  if (!clinfer_cpu_kernel_check_shape (kernel, node, "input", inputs[0],
          &st->in_shape, error))
    return FALSE;
  for (int i = 0; i < r - 1; i++)
    rows *= st->y_shape.dims[i];
#pragma omp parallel for schedule (static) \
    if (rows * ow * (int64_t) st->es > 262144)
  for (int64_t row = 0; row < rows; row++) {
    guint8 *dst = y + (size_t) (row * ow) * st->es;
    const guint8 *src;
    int64_t rest = row, src_row = 0, stride = 1;
    gboolean inside = TRUE;

    /* The input row of this output row, dim by dim from the last. */
    for (int i = r - 2; i >= 0; i--) {
      int64_t o = rest % st->y_shape.dims[i];
      int64_t s = st->map[i] ? st->map[i][o] : o - st->begin[i];
      rest /= st->y_shape.dims[i];
      if (s < 0 || s >= st->x_shape.dims[i]) {
        inside = FALSE;
        break;
      }
      src_row += s * stride;
      stride *= st->x_shape.dims[i];
    }
    if (!inside) {
      fill_elems (dst, ow, st->es, st->fill, st->zero_fill);
      continue;
    }
    src = x + (size_t) (src_row * iw) * st->es;
    pad_edge (st, dst, src, 0, b);
    memcpy (dst + (size_t) b * st->es, src, (size_t) iw * st->es);
    pad_edge (st, dst, src, b + iw, ow);
  }
  return TRUE;
}

gboolean
clinfer_cpu_pad_factory (const ClinferNode *node, ClinferCpuIsa isa,
    ClinferCpuKernel *kernel, GError **error)
{
  ClinferPortDesc *xd = clinfer_node_input_desc (node, 0);
  const ClinferPortDesc *yd = &node->outputs[0];
  ClinferPadParams pp;
  int64_t *pads = pp.pads;
  PadState *st;
  int r;

  if (xd == NULL || node->n_outputs != 1 || xd->shape.rank < 1
      || !clinfer_shape_is_static (&xd->shape)
      || !clinfer_shape_is_static (&yd->shape)
      || xd->type == CLINFER_TYPE_STRING || xd->type == CLINFER_TYPE_BOOL
      || !clinfer_pad_params (node, xd->shape.rank, &pp))
    return FALSE;
  r = xd->shape.rank;
  switch (clinfer_element_type_size (xd->type)) {
    case 1: case 2: case 4: case 8: break;
    default: return FALSE;
  }
  for (int i = 0; i < 2 * r; i++)
    if (pads[i] < 0)
      return FALSE;          /* cropping: the reference eval */
  st = g_new0 (PadState, 1);
  st->in_shape = st->x_shape = xd->shape;
  st->y_shape = yd->shape;
  st->es = clinfer_element_type_size (xd->type);
  if (!pp.constant) {
    if (!prepare_maps (st, &pp)) {
      pad_state_free (st);
      return FALSE;
    }
    kernel->name = g_strdup (pp.edge ? "pad_edge_rows" : "pad_reflect_rows");
    kernel->state = st;
    kernel->free_state = pad_state_free;
    kernel->run = pad_run;
    return TRUE;
  }
  memcpy (st->begin, pads, r * sizeof (int64_t));
  /* Unpadded trailing dims join the dim before them (its extents and its
   * begin scaled by their size): the same bytes, longer rows. */
  while (r > 1 && pads[r - 1] == 0 && pads[2 * r - 1] == 0) {
    int64_t inner = st->x_shape.dims[r - 1];
    st->x_shape.dims[r - 2] *= inner;
    st->y_shape.dims[r - 2] *= inner;
    st->begin[r - 2] *= inner;
    /* pads[] keeps begins then ends of the remaining dims. */
    memmove (pads + r - 1, pads + r, (r - 1) * sizeof (int64_t));
    r--;
    st->x_shape.rank = st->y_shape.rank = r;
  }
  {
    /* The fill in the tensor's type: one element through a tensor. */
    ClinferShape one = clinfer_shape_make (0, NULL);
    g_autoptr (ClinferTensor) t = clinfer_tensor_new (xd->type, &one, NULL);
    if (t == NULL) {
      g_free (st);
      return FALSE;
    }
    clinfer_op_store_double (t, 0, pp.value);
    memcpy (st->fill, clinfer_tensor_get_const_data (t), st->es);
  }
  st->zero_fill = TRUE;
  for (gsize i = 0; i < st->es; i++)
    st->zero_fill &= st->fill[i] == 0;
  kernel->name = g_strdup ("pad_rows");
  kernel->state = st;
  kernel->free_state = pad_state_free;
  kernel->run = pad_run;
  return TRUE;
}
