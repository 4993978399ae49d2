/* clinfer — memory planning: intermediate tensors share one arena; a
 * region is reused once the last step reading its tensor has run. */
#include "core/internal.h"

#define ARENA_ALIGN 64

typedef struct {
  guint slot;
  gsize bytes;
} SlotSize;

static int
by_size_desc (gconstpointer a, gconstpointer b)
{
  const SlotSize *x = a, *y = b;
  if (x->bytes != y->bytes)
    return x->bytes < y->bytes ? 1 : -1;
  return x->slot < y->slot ? -1 : (x->slot > y->slot);
}

static gboolean
overlaps_in_time (const ClinferSlot *a, const ClinferSlot *b)
{
  return a->first_step <= b->last_step && b->first_step <= a->last_step;
}

/* Greedy by size (largest first), each slot at the lowest offset where it
 * does not overlap in space any already placed slot that is alive at the
 * same time. Simple and within a few percent of optimal on CNNs. */
void
clinfer_plan_assign_memory (ClinferPlan *plan)
{
  g_autoptr (GArray) order = g_array_new (FALSE, FALSE, sizeof (SlotSize));
  g_autoptr (GArray) placed = g_array_new (FALSE, FALSE, sizeof (guint));
  /* Devices may need more (OpenCL sub-buffers: the base address
   * alignment); a power of two. */
  gsize align = MAX (plan->arena_align, ARENA_ALIGN);

  plan->arena_size = 0;
  plan->unplanned_size = 0;
  for (guint i = 0; i < plan->slots->len; i++) {
    ClinferSlot *s = &g_array_index (plan->slots, ClinferSlot, i);
    SlotSize e = { i, (s->bytes + align - 1) & ~(gsize) (align - 1) };
    if (s->kind != CLINFER_SLOT_ARENA)
      continue;
    if (e.bytes == 0)
      e.bytes = align;
    plan->unplanned_size += e.bytes;
    g_array_append_val (order, e);
  }
  g_array_sort (order, by_size_desc);
  for (guint k = 0; k < order->len; k++) {
    SlotSize *e = &g_array_index (order, SlotSize, k);
    ClinferSlot *s = &g_array_index (plan->slots, ClinferSlot, e->slot);
    gsize offset = 0;
    gboolean moved = TRUE;

    /* Bump past every live conflicting region until none overlaps. */
    while (moved) {
      moved = FALSE;
      for (guint j = 0; j < placed->len; j++) {
        ClinferSlot *o = &g_array_index (plan->slots, ClinferSlot,
            g_array_index (placed, guint, j));
        gsize obytes = (o->bytes + align - 1) & ~(gsize) (align - 1);
        if (obytes == 0)
          obytes = align;
        if (!overlaps_in_time (s, o))
          continue;
        if (offset < o->offset + obytes && o->offset < offset + e->bytes) {
          offset = o->offset + obytes;
          moved = TRUE;
        }
      }
    }
    s->offset = offset;
    plan->arena_size = MAX (plan->arena_size, offset + e->bytes);
    g_array_append_val (placed, e->slot);
  }
}
