/* Output blocks of the clinfer element: one aligned allocation holding
 * every output of one inference, with a tensor view per output made once.
 * A frame's meta holds a GBytes per output over its block; when the last
 * of them goes, the block returns to the free list (or is freed when the
 * element has gone), under a lock, since metas die in any thread.
 *
 * Copyright (C) 2025 the clinfer authors
 * SPDX-License-Identifier: Apache-2.0
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "gstclinferoutputs.h"

#define BLOCK_ALIGN 64
/* Free blocks kept beyond this are freed (a burst of queued frames). */
#define MAX_FREE_BLOCKS 8

typedef struct
{
  GstClinferOutputs *owner;
  guint8 *data;
  ClinferTensor **tensors;      /* per output, views into @data */
} Block;

struct _GstClinferOutputs
{
  GMutex lock;
  gboolean closed;              /* the element has let go */
  guint n_outputs;
  gsize *offset, *size;         /* per output, in a block */
  gsize block_size;
  GstClinferTensorDataType *types;
  ClinferShape *shapes;
  GPtrArray *free_blocks;       /* Block * */
  guint n_live;                 /* blocks not freed (free list or out) */
  Block *current;               /* bound for the next inference */
};

static void
block_free (Block * b, guint n_outputs)
{
  guint i;

  for (i = 0; i < n_outputs; i++)
    g_clear_pointer (&b->tensors[i], clinfer_tensor_unref);
  g_free (b->tensors);
  g_aligned_free (b->data);
  g_free (b);
}

static void
outputs_destroy (GstClinferOutputs * o)
{
  g_ptr_array_unref (o->free_blocks);
  g_mutex_clear (&o->lock);
  g_free (o->offset);
  g_free (o->size);
  g_free (o->types);
  g_free (o->shapes);
  g_free (o);
}

GstClinferOutputs *
gst_clinfer_outputs_new (ClinferCompiled * compiled)
{
  guint i, n = clinfer_compiled_get_n_outputs (compiled);
  GstClinferOutputs *o;

  /* With dynamic inputs the output shapes are the model's declarations,
   * not yet those of the frames' plan. */
  for (i = 0; i < clinfer_compiled_get_n_inputs (compiled); i++) {
    ClinferPortInfo info;

    clinfer_compiled_get_input (compiled, i, &info);
    if (!clinfer_shape_is_static (&info.shape))
      return NULL;
  }
  for (i = 0; i < n; i++) {
    ClinferPortInfo info;

    clinfer_compiled_get_output (compiled, i, &info);
    if (!clinfer_shape_is_static (&info.shape)
        || info.type == CLINFER_TYPE_STRING
        || clinfer_element_type_size (info.type) == 0)
      return NULL;
  }
  if (n == 0)
    return NULL;
  o = g_new0 (GstClinferOutputs, 1);
  g_mutex_init (&o->lock);
  o->n_outputs = n;
  o->offset = g_new0 (gsize, n);
  o->size = g_new0 (gsize, n);
  o->types = g_new0 (GstClinferTensorDataType, n);
  o->shapes = g_new0 (ClinferShape, n);
  o->free_blocks = g_ptr_array_new ();
  for (i = 0; i < n; i++) {
    ClinferPortInfo info;

    clinfer_compiled_get_output (compiled, i, &info);
    o->shapes[i] = info.shape;
    /* Both follow ONNX's TensorProto.DataType numbering. */
    o->types[i] = (GstClinferTensorDataType) info.type;
    o->size[i] = (gsize) clinfer_shape_n_elements (&info.shape)
        * clinfer_element_type_size (info.type);
    o->offset[i] = o->block_size;
    o->block_size += (o->size[i] + BLOCK_ALIGN - 1)
        & ~(gsize) (BLOCK_ALIGN - 1);
  }
  return o;
}

static Block *
block_new (GstClinferOutputs * o, GError ** error)
{
  Block *b = g_new0 (Block, 1);
  guint i;

  b->owner = o;
  b->data = g_aligned_alloc (1, MAX (o->block_size, 1), BLOCK_ALIGN);
  b->tensors = g_new0 (ClinferTensor *, o->n_outputs);
  for (i = 0; i < o->n_outputs; i++) {
    b->tensors[i] = clinfer_tensor_new_wrapped ((ClinferElementType)
        o->types[i], &o->shapes[i], NULL, b->data + o->offset[i], NULL, NULL,
        error);
    if (b->tensors[i] == NULL) {
      block_free (b, o->n_outputs);
      return NULL;
    }
  }
  return b;
}

/* The last GBytes of a block's meta went. */
static void
block_returned (gpointer data)
{
  Block *b = data;
  GstClinferOutputs *o = b->owner;
  gboolean destroy = FALSE;

  g_mutex_lock (&o->lock);
  if (o->closed || o->free_blocks->len >= MAX_FREE_BLOCKS) {
    block_free (b, o->n_outputs);
    destroy = --o->n_live == 0 && o->closed;
  } else {
    g_ptr_array_add (o->free_blocks, b);
  }
  g_mutex_unlock (&o->lock);
  if (destroy)
    outputs_destroy (o);
}

gboolean
gst_clinfer_outputs_bind (GstClinferOutputs * o, ClinferRequest * request,
    GError ** error)
{
  guint i;

  if (o->current == NULL) {
    g_mutex_lock (&o->lock);
    if (o->free_blocks->len > 0)
      o->current = g_ptr_array_steal_index_fast (o->free_blocks,
          o->free_blocks->len - 1);
    g_mutex_unlock (&o->lock);
  }
  if (o->current == NULL) {
    o->current = block_new (o, error);
    if (o->current == NULL)
      return FALSE;
    g_mutex_lock (&o->lock);
    o->n_live++;
    g_mutex_unlock (&o->lock);
  }
  for (i = 0; i < o->n_outputs; i++)
    if (!clinfer_request_set_output (request, i, o->current->tensors[i],
            error))
      return FALSE;
  return TRUE;
}

void
gst_clinfer_outputs_attach (GstClinferOutputs * o, ClinferCompiled * compiled,
    GstClinferTensorMeta * meta)
{
  Block *b = o->current;
  GBytes *block_bytes;
  guint i;

  if (b == NULL)
    return;
  o->current = NULL;
  block_bytes = g_bytes_new_with_free_func (b->data, o->block_size,
      block_returned, b);
  for (i = 0; i < o->n_outputs; i++) {
    g_autoptr (GBytes) bytes = g_bytes_new_from_bytes (block_bytes,
        o->offset[i], o->size[i]);
    ClinferPortInfo info;

    clinfer_compiled_get_output (compiled, i, &info);
    if (!gst_clinfer_tensor_meta_add_tensor (meta, info.name, o->types[i],
            (guint) MAX (o->shapes[i].rank, 0), o->shapes[i].dims, bytes))
      GST_WARNING ("output %u (%s) cannot be put in the tensor meta", i,
          info.name);
  }
  g_bytes_unref (block_bytes);
}

void
gst_clinfer_outputs_free (GstClinferOutputs * o)
{
  gboolean destroy;
  guint i;

  if (o == NULL)
    return;
  g_mutex_lock (&o->lock);
  o->closed = TRUE;
  if (o->current != NULL) {
    block_free (o->current, o->n_outputs);
    o->current = NULL;
    o->n_live--;
  }
  for (i = 0; i < o->free_blocks->len; i++) {
    block_free (g_ptr_array_index (o->free_blocks, i), o->n_outputs);
    o->n_live--;
  }
  g_ptr_array_set_size (o->free_blocks, 0);
  destroy = o->n_live == 0;
  g_mutex_unlock (&o->lock);
  if (destroy)
    outputs_destroy (o);
}
