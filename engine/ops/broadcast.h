/* clinfer — numpy-broadcast iteration shared by the element-wise op
 * families (eltwise.c, logic.c): the output is walked in tiles of at most
 * CLINFER_BCAST_TILE elements along the innermost (collapsed) dimension;
 * each input's innermost stride is 0 (broadcast) or 1, so inner loops are
 * plain vectorisable loops. */
#pragma once

#include "ops/op.h"
#include <string.h>

/* Opset < 7 binary ops (Add .. Div, Pow, the comparisons) broadcast B
 * only with broadcast=1, aligned at A's dim "axis" when given. */
typedef struct {
  gboolean enabled;          /* broadcast=1 with an explicit axis */
  int axis;                  /* may be negative (from the end) */
} ClinferLegacyBcast;

/* Reads the broadcast and axis attributes (ops/op-util.c). */
gboolean clinfer_legacy_bcast_parse (const ClinferNode *node,
    ClinferLegacyBcast *lb, GError **error);
/* The shape B broadcasts with: with @lb enabled, B padded with trailing
 * 1s so that numpy rules align it at the axis; else (or when a rank is
 * unknown) B itself. */
gboolean clinfer_legacy_bcast_shape (const ClinferNode *node,
    const ClinferLegacyBcast *lb, const ClinferShape *a, const ClinferShape *b,
    ClinferShape *eff, GError **error);

#define CLINFER_BCAST_TILE 16384
#define CLINFER_BCAST_MAX_INPUTS 3

typedef struct {
  int rank, n_in;
  int64_t dims[CLINFER_MAX_RANK];
  int64_t st[CLINFER_BCAST_MAX_INPUTS][CLINFER_MAX_RANK];
  int64_t n, inner, parts, tiles;
} ClinferBcast;

static inline void
clinfer_bcast_init (ClinferBcast *b, int n_in, const ClinferShape *const *ins,
    const ClinferShape *out)
{
  int64_t full[CLINFER_BCAST_MAX_INPUTS][CLINFER_MAX_RANK];

  memset (b, 0, sizeof (*b));
  b->n_in = n_in;
  for (int k = 0; k < n_in; k++) {
    int64_t st[CLINFER_MAX_RANK];
    clinfer_shape_elem_strides (ins[k], st);
    for (int d = 0; d < out->rank; d++) {
      int j = ins[k]->rank - out->rank + d;
      full[k][d] = (j >= 0 && ins[k]->dims[j] != 1) ? st[j] : 0;
    }
  }
  for (int d = 0; d < out->rank; d++) {
    gboolean merge = b->rank > 0;
    if (out->dims[d] == 1)
      continue;
    for (int k = 0; k < n_in && merge; k++)
      merge = b->st[k][b->rank - 1] == full[k][d] * out->dims[d];
    if (!merge)
      b->dims[b->rank++] = 1;
    b->dims[b->rank - 1] *= out->dims[d];
    for (int k = 0; k < n_in; k++)
      b->st[k][b->rank - 1] = full[k][d];
  }
  if (b->rank == 0) {
    b->rank = 1;
    b->dims[0] = 1;
  }
  b->n = clinfer_shape_n_elements (out);
  b->inner = b->dims[b->rank - 1];
  if (b->n <= 0)
    return;
  b->parts = (b->inner + CLINFER_BCAST_TILE - 1) / CLINFER_BCAST_TILE;
  b->tiles = b->n / b->inner * b->parts;
}

/* Offsets of tile @t in every input (off[0..n_in-1]) and in the output
 * (off[n_in]); returns the tile length. */
static inline int64_t
clinfer_bcast_tile (const ClinferBcast *b, int64_t t, int64_t *off)
{
  int64_t row = t / b->parts, i0 = (t % b->parts) * CLINFER_BCAST_TILE, r = row;

  for (int k = 0; k < b->n_in; k++)
    off[k] = i0 * b->st[k][b->rank - 1];
  for (int d = b->rank - 2; d >= 0; d--) {
    int64_t i = r % b->dims[d];
    r /= b->dims[d];
    for (int k = 0; k < b->n_in; k++)
      off[k] += i * b->st[k][d];
  }
  off[b->n_in] = row * b->inner + i0;
  return MIN (CLINFER_BCAST_TILE, b->inner - i0);
}
