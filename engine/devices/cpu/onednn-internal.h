/* clinfer — private structures of the oneDNN fast path shared by the plan
 * and run code (onednn-plan.c) and the per-op primitive builders
 * (onednn-ops.c). */
#pragma once

#include "devices/cpu/onednn-cpu.h"
#include <oneapi/dnnl/dnnl.h>

G_BEGIN_DECLS

typedef enum {
  ONEDNN_OP_CONV,            /* Conv / FusedConv: convolution + post-ops */
  ONEDNN_OP_POOL,            /* MaxPool: pooling */
  ONEDNN_OP_PAD_CHANNELS,    /* Concat (x, zeros) on channels: block copy */
} OnednnOpKind;

/* One activation a step reads or writes: the slot's own layout and the
 * layout the primitive uses; when they differ a reorder goes through a
 * temporary in the scratch. */
typedef struct {
  guint slot;                /* plan slot; G_MAXUINT when unused */
  dnnl_memory_desc_t slot_md;
  dnnl_memory_desc_t md;
  dnnl_primitive_t reorder;  /* slot_md -> md (inputs), md -> slot_md (output) */
  gsize temp_offset;         /* of md's temporary in the scratch */
} OnednnOperand;

typedef struct {
  OnednnOpKind kind;
  guint step;
  dnnl_primitive_t prim;
  OnednnOperand src, z, dst;
  gboolean z_as_sum;         /* residual copied into dst, sum post-op */
  dnnl_memory_t weights, bias;   /* read-only, shared by every request */
  void *weights_data;
  void *bias_data;
  gsize scratchpad_offset;   /* the primitives' scratchpad in the scratch */
  dnnl_memory_desc_t scratchpad_md;
  gsize scratch_bytes;       /* everything this step uses of the scratch */
  /* ONEDNN_OP_PAD_CHANNELS, per image: bytes copied from x, bytes of y */
  int64_t batch;
  gsize copy_bytes, out_bytes;
} OnednnStep;

struct _ClinferOnednnPlan {
  ClinferPlan *plan;
  dnnl_engine_t engine;
  int *step_index;           /* per plan step: index in @steps or -1 */
  GArray *steps;             /* OnednnStep */
  gboolean *blocked;         /* per slot: kept in the blocked layout */
  dnnl_format_tag_t block_tag;   /* nChw8c (AVX2) or nChw16c (AVX-512) */
  gsize scratch_bytes;       /* max over the steps */
};

/* The process-wide CPU engine (created once), or NULL with @error. */
dnnl_engine_t clinfer_onednn_engine (GError **error);
/* FALSE with a CLINFER_ERROR_DEVICE error naming @what when @status is
 * not success. */
gboolean clinfer_onednn_check (dnnl_status_t status, const char *what,
    GError **error);

/* TRUE when @st's node is one the fast path takes (shapes, types and
 * constants checked; never sets an error). */
gboolean clinfer_onednn_accepts (const ClinferPlan *plan,
    const ClinferStep *st, OnednnOpKind *kind);

/* Sets @o up for slot @slot as the plan lays it out, used by the
 * primitive as @want; appends its temporary (when a reorder is needed)
 * to *scratch_end. */
gboolean clinfer_onednn_operand_init (ClinferOnednnPlan *oplan,
    OnednnOperand *o, guint slot, const dnnl_memory_desc_t *want,
    gboolean is_output, gsize *scratch_end, GError **error);
/* The memory desc of slot @slot in the plan's layout. */
void clinfer_onednn_slot_md (const ClinferOnednnPlan *oplan, guint slot,
    dnnl_memory_desc_t *md);
/* Memory desc of 4-D f32 @shape with @tag. */
void clinfer_onednn_md_4d (const ClinferShape *shape, dnnl_format_tag_t tag,
    dnnl_memory_desc_t *md);

/* Builders: the primitive (and constants) of a claimed step. FALSE
 * without @error when oneDNN has no implementation for it. */
gboolean clinfer_onednn_conv_build (ClinferOnednnPlan *oplan, OnednnStep *s,
    const ClinferStep *st, GError **error);
gboolean clinfer_onednn_pool_build (ClinferOnednnPlan *oplan, OnednnStep *s,
    const ClinferStep *st, GError **error);
gboolean clinfer_onednn_pad_channels_build (ClinferOnednnPlan *oplan,
    OnednnStep *s, const ClinferStep *st, GError **error);
/* The implementation name of @pd's primitive, for profiles. */
char *clinfer_onednn_impl_name (const_dnnl_primitive_desc_t pd);

G_END_DECLS
