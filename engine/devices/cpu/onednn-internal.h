/* clinfer — private structures of the oneDNN fast path shared by the plan
 * and run code (onednn-plan.c) and the per-op primitive builders
 * (onednn-ops.c). */
#pragma once

#include "devices/cpu/onednn-cpu.h"
#include "plan/cpu-simd.h"
#include <oneapi/dnnl/dnnl.h>

G_BEGIN_DECLS

typedef enum {
  ONEDNN_OP_CONV,            /* Conv / FusedConv: convolution + post-ops */
  ONEDNN_OP_DECONV,          /* ConvTranspose: deconvolution + bias */
  ONEDNN_OP_POOL,            /* MaxPool: pooling */
  ONEDNN_OP_PAD_CHANNELS,    /* Concat (x, zeros) on channels: block copy,
                              * or zeros only when x lives in y (in_place) */
  ONEDNN_OP_ELTWISE,         /* unary, or arithmetic with a scalar constant */
  ONEDNN_OP_BINARY,          /* Add/Sub/Mul/Div with broadcast */
  ONEDNN_OP_AVG_POOL,        /* AveragePool, GlobalAveragePool/MaxPool */
  ONEDNN_OP_RESAMPLE,        /* nearest Resize by whole factors */
  ONEDNN_OP_MATMUL,          /* MatMul by constant weights, plain layouts */
  ONEDNN_OP_SOFTMAX,         /* Softmax on the plain layout */
  ONEDNN_OP_FUSED,           /* an eltwise run as a post-op of the conv before,
                              * or a depthwise run by the ONEDNN_OP_DWPW after */
  ONEDNN_OP_DWPW,            /* a 1x1 conv with the depthwise conv it reads
                              * (onednn-dwpw.c) */
  ONEDNN_OP_UPSAMPLE_ADD,    /* an Add with the nearest Resize by whole
                              * factors it reads (upsample_add ()) */
  ONEDNN_OP_TRANSPOSE,       /* Transpose NCHW <-> NHWC of 4-D f32: one
                              * reorder from or to the blocked slot */
  ONEDNN_OP_CONCAT,          /* Concat on channels of whole blocks: the
                              * inputs live in the output (aliases), no
                              * work */
} OnednnOpKind;

/* An eltwise step: alg (alpha, beta), then alg2 in place when not 0. */
typedef struct {
  dnnl_alg_kind_t alg, alg2;
  float alpha, beta, alpha2, beta2;
} OnednnEltwise;

/* Eltwise steps a conv absorbs as post-ops, at most. */
#define ONEDNN_MAX_POST_OPS 6

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
  dnnl_primitive_t prim2;    /* ONEDNN_OP_ELTWISE: second one, in place */
  guint src_input;           /* node input read as src (0 unless swapped) */
  guint z_input;             /* node input of z: 3 (residual) or binary src1 */
  int weights_arg;           /* argument of @weights (DNNL_ARG_WEIGHTS) */
  guint out_slot;            /* slot written: the last fused step's output */
  OnednnEltwise post[ONEDNN_MAX_POST_OPS];   /* fused eltwise steps, in order */
  guint n_post;
  OnednnOperand src, z, dst;
  gboolean z_as_sum;         /* residual copied into dst, sum post-op */
  gboolean z_as_weights;     /* MatMul of two activations: z is B */
  dnnl_memory_t weights, bias;   /* read-only, shared by every request */
  void *weights_data;
  void *bias_data;
  gsize scratchpad_offset;   /* the primitives' scratchpad in the scratch */
  dnnl_memory_desc_t scratchpad_md;
  gsize scratch_bytes;       /* everything this step uses of the scratch */
  /* ONEDNN_OP_PAD_CHANNELS, per image: bytes copied from x, bytes of y */
  int64_t batch;
  gsize copy_bytes, out_bytes;
  int64_t c_in, block, hw;   /* x's channels, the block size, H * W */
  gboolean in_place;         /* x is planned as y's first blocks: nothing
                              * to copy, only y's new channels to zero */
  gboolean x_lanes_zero;     /* x's padding lanes are zero already */
  /* ONEDNN_OP_POOL without @prim: clinfer's blocked max pool over
   * @n_blocks channel blocks per image (batch, block as above); also
   * ONEDNN_OP_UPSAMPLE_ADD's geometry (kh, kw: the factors) */
  const ClinferCpuSimd *simd;
  ClinferCpuConvGeom pool_geom;
  int64_t n_blocks;
  /* ONEDNN_OP_DWPW: the kernel's arguments (weights in @weights_data) */
  ClinferCpuDwPwArgs dwpw;
  /* ONEDNN_OP_DECONV without @prim: deconv_to_one ()'s arguments (weights
   * in @weights_data; batch, block, n_blocks as above) */
  ClinferCpuDeconvArgs deconv;
  /* ONEDNN_OP_CONV without @prim: conv_to_one ()'s arguments (weights in
   * @weights_data, segment tables in @aux_data; batch as above) */
  ClinferCpuConvOneArgs conv1;
  gpointer aux_data;
  /* ONEDNN_OP_SOFTMAX without @prim: clinfer's softmax of @sm_rows rows
   * of @sm_cols, the threads splitting each row (softmax_columns ()) */
  int64_t sm_rows, sm_cols;
  /* ONEDNN_OP_MATMUL without @prim: clinfer's GEMM (matmul_gemm ()) of
   * @mm_m rows of @mm_k by @mm_n columns, A in panels of @mm_mr rows
   * (clinfer_cpu_gemm_mr ()); @mm_b is B packed (pack_b),
   * @mm_zero mr-rounded zeros (the GEMM's per-row bias), @mm_bias the
   * fused Add's per-column bias or zeros when a Relu is fused without
   * one (gemm_rows () takes a Relu with z only), else NULL, all in
   * @weights_data; each thread packs A at scratch + mm_a_offset + thread
   * * mm_a_bytes. @mm_relu: a Relu step is fused (any MatMul; the
   * primitive has it as its post-op). */
  int mm_m, mm_mr, mm_k, mm_n;
  gboolean mm_relu;
  /* ONEDNN_OP_BINARY without @prim: clinfer's per-channel kernel
   * (binary_per_channel ()) of @bin_op (the simd table's per_channel op:
   * 0 +, 1 -, 2 *, 3 /) on @batch images of @n_blocks
   * channel blocks of @hw pixels (@block as above); the per-channel
   * operand is z (an activation, @bin_c_stride floats per image, 0 when
   * broadcast) or @weights_data (a constant) */
  int bin_op;                /* 4: x * a + b [then Relu], a chain of
                              * per-channel steps (weights_data: a, b) */
  gboolean bin_relu;
  int64_t bin_c_stride;
  const float *mm_b, *mm_zero, *mm_bias;
  gsize mm_a_offset, mm_a_bytes;
} OnednnStep;

struct _ClinferOnednnPlan {
  ClinferPlan *plan;
  dnnl_engine_t engine;
  int *step_index;           /* per plan step: index in @steps or -1 */
  int *fused_into;           /* per plan step: the conv step it is a
                              * post-op of, or -1 */
  GArray *steps;             /* OnednnStep */
  gboolean *blocked;         /* per slot: kept in the blocked layout */
  dnnl_format_tag_t block_tag;   /* nChw8c or nChw16c: choose_block () */
  ClinferCpuIsa isa;         /* clinfer's own blocked kernels: the device's,
                              * capped at AVX2 for nChw8c (whose
                              * clinfer_cpu_simd_get () is avx2x32 on
                              * AVX-512 machines) */
  gsize scratch_bytes;       /* max over the steps */
  int threads;               /* the device's thread count */
};

/* The process-wide CPU engine (created once), or NULL with @error. */
dnnl_engine_t clinfer_onednn_engine (GError **error);
/* New primitive attributes with the user-managed scratchpad (callers add
 * post-ops); onednn-ops.c. */
gboolean clinfer_onednn_make_attr (dnnl_primitive_attr_t *attr, GError **error);
/* clinfer_onednn_make_attr () with eltwise post-ops @post[0 .. n); on
 * failure nothing is left to destroy. */
gboolean clinfer_onednn_eltwise_attr (const OnednnEltwise *post, guint n,
    dnnl_primitive_attr_t *attr, GError **error);
/* FALSE with a CLINFER_ERROR_DEVICE error naming @what when @status is
 * not success. */
gboolean clinfer_onednn_check (dnnl_status_t status, const char *what,
    GError **error);

/* TRUE when @st's node is one the fast path takes (shapes, types and
 * constants checked; never sets an error). */
gboolean clinfer_onednn_accepts (const ClinferPlan *plan,
    const ClinferStep *st, OnednnOpKind *kind);

/* Binds src and dst in place (their slots' own layout @src_md, @dst_md:
 * no reorders), no z, the scratch as the primitive's scratchpad (none
 * when the step has no primitive). */
void clinfer_onednn_operands_in_place (OnednnStep *s, guint src_slot,
    const dnnl_memory_desc_t *src_md, guint dst_slot,
    const dnnl_memory_desc_t *dst_md);
/* Sets @o up for slot @slot as the plan lays it out, used by the
 * primitive as @want; appends its temporary (when a reorder is needed)
 * to *scratch_end. */
gboolean clinfer_onednn_operand_init (ClinferOnednnPlan *oplan,
    OnednnOperand *o, guint slot, const dnnl_memory_desc_t *want,
    gboolean is_output, gsize *scratch_end, GError **error);
/* The memory desc of slot @slot in the plan's layout. */
void clinfer_onednn_slot_md (const ClinferOnednnPlan *oplan, guint slot,
    dnnl_memory_desc_t *md);
/* Rounds @shape's channels up to whole blocks. */
void clinfer_onednn_pad_channels_shape (const ClinferOnednnPlan *oplan,
    ClinferShape *shape);
/* The blocked desc of @shape for an element-wise step reading or writing
 * slot @slot: channels rounded up to whole blocks when the slot is kept
 * blocked (the padding channels are then computed like real ones, so
 * functions with f (0) != 0 keep jit kernels; consumers never read them
 * as data: convs' padded weights are zero, pad_channels zeroes them). */
void clinfer_onednn_view_md (const ClinferOnednnPlan *oplan, guint slot,
    const ClinferShape *shape, dnnl_memory_desc_t *md);
/* Memory desc of 4-D f32 @shape with @tag. */
void clinfer_onednn_md_4d (const ClinferShape *shape, dnnl_format_tag_t tag,
    dnnl_memory_desc_t *md);

/* Builders: the primitive (and constants) of a claimed step. FALSE
 * without @error when oneDNN has no implementation for it. */
gboolean clinfer_onednn_conv_build (ClinferOnednnPlan *oplan, OnednnStep *s,
    const ClinferStep *st, GError **error);
gboolean clinfer_onednn_deconv_build (ClinferOnednnPlan *oplan, OnednnStep *s,
    const ClinferStep *st, GError **error);
/* TRUE when @pd is one of oneDNN's reference implementations. */
gboolean clinfer_onednn_pd_is_reference (const_dnnl_primitive_desc_t pd);
/* TRUE when conv step @st is one conv_to_one () may run (one output
 * channel, group 1, 2-D, no residual): its eltwise readers are then not
 * fused as post-ops. */
gboolean clinfer_onednn_conv_to_one_candidate (const ClinferStep *st);
/* Runs a conv step built without a primitive (conv_to_one ()). */
void clinfer_onednn_conv_to_one (const OnednnStep *s, const float *x,
    float *y);
/* Runs a pool step built without a primitive (see OnednnStep). */
void clinfer_onednn_max_pool_blocked (const OnednnStep *s, const float *src,
    float *dst);
gboolean clinfer_onednn_pool_build (ClinferOnednnPlan *oplan, OnednnStep *s,
    const ClinferStep *st, GError **error);
gboolean clinfer_onednn_pad_channels_build (ClinferOnednnPlan *oplan,
    OnednnStep *s, const ClinferStep *st, GError **error);
/* TRUE when @st is an element-wise, binary, average/global pooling or
 * Resize node onednn-eltwise.c takes. */
gboolean clinfer_onednn_eltwise_accepts (const ClinferPlan *plan,
    const ClinferStep *st, OnednnOpKind *kind);
gboolean clinfer_onednn_eltwise_build (ClinferOnednnPlan *oplan, OnednnStep *s,
    const ClinferStep *st, GError **error);
/* MatMul of a 2-D/3-D activation by constant 2-D weights. */
gboolean clinfer_onednn_matmul_accepts (const ClinferPlan *plan,
    const ClinferStep *st);
gboolean clinfer_onednn_matmul_build (ClinferOnednnPlan *oplan, OnednnStep *s,
    const ClinferStep *st, GError **error);
/* The Add and the Resize it reads as one step: builds @s from the Add
 * step @add and the Resize step @rs (onednn-eltwise.c), FALSE when the
 * layouts do not fit; runs it. */
gboolean clinfer_onednn_upsample_add_build (ClinferOnednnPlan *oplan,
    OnednnStep *s, const ClinferStep *add, const ClinferStep *rs,
    GError **error);
void clinfer_onednn_upsample_add (const OnednnStep *s, const float *x,
    const float *z, float *y);
/* The per-channel constant op of binary step @st: TRUE with *op (0 +,
 * 1 x - c, 2 *, 3 x / c), the constant *c (one value per channel of the
 * output) and the activation's input *x. */
gboolean clinfer_onednn_per_channel_const (const ClinferPlan *plan,
    const ClinferStep *st, int *op, const ClinferTensor **c, guint *x);
/* Runs a binary step built without a primitive (per-channel operand on
 * blocked layouts); @c is the per-channel operand. */
void clinfer_onednn_binary_per_channel (const OnednnStep *s, const float *x,
    const float *c, float *y);
/* Concat on channels: TRUE (and the step set up) when every input is a
 * blocked arena tensor of whole blocks that can live in the output;
 * clinfer_onednn_concat_alias () then makes them aliases of it. */
gboolean clinfer_onednn_concat_build (ClinferOnednnPlan *oplan, OnednnStep *s,
    const ClinferStep *st, GError **error);
void clinfer_onednn_concat_alias (ClinferOnednnPlan *oplan, const OnednnStep *s);
/* Transpose (0, 2, 3, 1) or (0, 3, 1, 2) of a 4-D f32 activation
 * (onednn-ops.c). */
gboolean clinfer_onednn_transpose_accepts (const ClinferPlan *plan,
    const ClinferStep *st);
gboolean clinfer_onednn_transpose_build (ClinferOnednnPlan *oplan,
    OnednnStep *s, const ClinferStep *st, GError **error);
/* Runs a ConvTranspose step built without a primitive (onednn-ops.c). */
void clinfer_onednn_deconv_to_one (const OnednnStep *s, const float *x,
    float *y);
/* Runs a MatMul step built without a primitive (clinfer's GEMM). */
void clinfer_onednn_matmul_gemm (const OnednnStep *s, const float *x,
    float *y, void *scratch);
/* Runs a com.clinfer Swish step (built without a primitive) over its
 * whole buffer (onednn-eltwise.c). */
void clinfer_onednn_swish (const OnednnStep *s, const float *x, float *y);
/* Softmax of an activation, on its plain layout (onednn-eltwise.c). */
gboolean clinfer_onednn_softmax_accepts (const ClinferPlan *plan,
    const ClinferStep *st);
gboolean clinfer_onednn_softmax_build (ClinferOnednnPlan *oplan, OnednnStep *s,
    const ClinferStep *st, GError **error);
/* Runs a softmax step built without a primitive (@x may be @y). */
void clinfer_onednn_softmax_columns (const OnednnStep *s, const float *x,
    float *y);
/* The eltwise algorithm(s) of @node and the input it reads, FALSE when
 * it is not a unary/scalar-constant element-wise op. */
gboolean clinfer_onednn_eltwise_spec (const ClinferNode *node,
    OnednnEltwise *e, guint *src_input);
/* Creates the step's primitive from @pd (freed) and names the kernel. */
gboolean clinfer_onednn_primitive_create (OnednnStep *s,
    dnnl_primitive_desc_t pd, const ClinferStep *st, GError **error);
/* Lays out the step's scratch (scratchpad, then the temporaries of the
 * src, z and dst operands' reorders). */
gboolean clinfer_onednn_place_operands (ClinferOnednnPlan *oplan,
    OnednnStep *s, const ClinferStep *st, const dnnl_memory_desc_t *src_md,
    const dnnl_memory_desc_t *z_md, const dnnl_memory_desc_t *dst_md,
    GError **error);
/* A copy of the constant @t (plain, @user_md) in layout @want. */
gboolean clinfer_onednn_constant_new (dnnl_engine_t engine,
    const ClinferTensor *t, const dnnl_memory_desc_t *user_md,
    const dnnl_memory_desc_t *want, void **data, dnnl_memory_t *mem,
    GError **error);
/* Depthwise + 1x1 fusion (onednn-dwpw.c): whether it is on for @isa and
 * the plan's @threads (CLINFER_CPU_DWPW=0/1 overrides), whether the pair fits the kernel, the
 * step's packed weights and operands, and running it. */
gboolean clinfer_onednn_dwpw_enabled (ClinferCpuIsa isa, int threads);
gboolean clinfer_onednn_dwpw_accepts (const ClinferOnednnPlan *oplan,
    const ClinferStep *dw, const ClinferStep *pw);
gboolean clinfer_onednn_dwpw_build (ClinferOnednnPlan *oplan, OnednnStep *s,
    const ClinferStep *pw, const ClinferStep *dw, GError **error);
void clinfer_onednn_dwpw_run (const OnednnStep *s, const float *x,
    const float *z, float *y);
/* The implementation name of @pd's primitive, for profiles. */
char *clinfer_onednn_impl_name (const_dnnl_primitive_desc_t pd);

G_END_DECLS
