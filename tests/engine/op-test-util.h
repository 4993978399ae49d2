/* clinfer — helpers shared by the op tests: graphs built in memory, random
 * and literal tensors, a small graph interpreter on the reference evals,
 * compiling and running such graphs, and the f32 closeness check of the
 * design brief. */
#pragma once

#include <clinfer/clinfer.h>
#include "runtime/runtime.h"
#include "ops/op.h"
#include "passes/passes.h"

/* Graph importing the default domain at @opset. */
ClinferGraph *op_test_graph (int opset);
/* Tensor of @type holding @values (NULL: zeros). */
ClinferTensor *op_test_tensor (ClinferElementType type, int rank,
    const int64_t *dims, gconstpointer values);
ClinferTensor *op_test_f32 (int rank, const int64_t *dims, const float *values);
ClinferTensor *op_test_i64 (int rank, const int64_t *dims, const int64_t *values);
/* Uniform values in [-1, 1). */
ClinferTensor *op_test_random (GRand *rand, int rank, const int64_t *dims);
/* Constant node @name holding a new tensor of @type with @values. */
ClinferNode *op_test_constant (ClinferGraph *g, const char *name,
    ClinferElementType type, int rank, const int64_t *dims,
    gconstpointer values);
/* Graph input @name with @t's type and shape. */
ClinferNode *op_test_input_like (ClinferGraph *g, const char *name,
    const ClinferTensor *t);
/* Node whose output i is named "<name>:i"; @inputs (n_in entries, NULL =
 * absent) are read from their output 0. */
ClinferNode *op_test_node (ClinferGraph *g, const char *op_type,
    const char *domain, const char *name, guint n_in, ClinferNode **inputs,
    guint n_out);
/* @g (taken over; one output) compiled for the CPU device without
 * oneDNN, 2 threads, and run on @inputs: its output equals, value for
 * value (NaN where it has NaN), that of @ref (taken over; NULL: @g) on
 * the reference evals, and
 * its last step ran on kernel @kernel (the profile's name). */
void op_test_check_cpu_kernel (ClinferGraph *g, ClinferGraph *ref, int opset,
    ClinferTensor *const *inputs, guint n_in, const char *kernel,
    const char *what);
/* The same within @max_ulps units in the last place (f32 outputs; NaN
 * where the reference has NaN, infinities equal). */
void op_test_check_cpu_kernel_ulps (ClinferGraph *g, ClinferGraph *ref,
    int opset, ClinferTensor *const *inputs, guint n_in, const char *kernel,
    const char *what, int max_ulps);
/* Units in the last place between two f32 values of one sign (the
 * distance of their bit patterns); G_MAXINT64 across signs. */
int64_t op_test_ulps_apart (float a, float b);
/* Nodes of @g whose op type is @op_type. */
guint op_test_count_ops (const ClinferGraph *g, const char *op_type);
/* Resolves every node and infers shapes in topological order. */
gboolean op_test_prepare (ClinferGraph *g, GError **error);
/* Runs @node's reference eval on @inputs (n_inputs entries); returns the
 * outputs (n_outputs, allocated with the inferred shapes) or NULL. */
ClinferTensor **op_test_eval (ClinferNode *node, ClinferTensor *const *inputs,
    GError **error);
void op_test_free_outputs (ClinferNode *node, ClinferTensor **outputs);
/* op_test_eval () asserting success; returns output 0 (transfer full). */
ClinferTensor *op_test_eval_output (ClinferNode *node,
    ClinferTensor *const *inputs);
/* Runs the whole graph on the reference evals; @inputs follow g->inputs.
 * Returns graph output 0 (transfer full). */
ClinferTensor *op_test_run_graph (ClinferGraph *g, ClinferTensor *const *inputs,
    GError **error);
/* Expects resolving or inferring @g to fail with @code, the message naming
 * node @name. */
void op_test_assert_node_error (ClinferGraph *g, const char *name, int code);

/* Wraps @g (taken over) as a model at @opset (every node at that opset)
 * and resolves its ops; NULL with @error (and @g freed) on failure. */
ClinferModel *op_test_model (ClinferGraph *g, int opset, GError **error);
/* op_test_model () compiled; NULL with @error on failure. */
ClinferCompiled *op_test_compile (ClinferGraph *g, int opset, GError **error);
/* Compiles @g (taken over) at @opset, binds @inputs in graph-input order
 * and runs it once, asserting that every step succeeds. */
ClinferRequest *op_test_run_compiled (ClinferGraph *g, int opset,
    ClinferTensor *const *inputs, guint n_inputs);
/* The same, returning a copy of output 0. */
ClinferTensor *op_test_run_compiled_output (ClinferGraph *g, int opset,
    ClinferTensor *const *inputs, guint n_inputs);

/* @g (taken over; its one input named "x") compiled for @device, run on
 * @x: a copy of output 0, or NULL when a device other than the CPU does
 * not open (GPU without OpenCL; said in a test message). */
ClinferTensor *op_test_run_on (ClinferGraph *g, int opset, const char *device,
    ClinferTensor *x);

/* A pass test's graph of form @form (its own enum) built from @rand. */
typedef ClinferGraph *(*OpTestBuild) (int form, GRand *rand);
/* @build (@form, a GRand seeded with @seed) compiled at @opset with every
 * pass, run on @x on the CPU device and on the GPU device when one opens:
 * each output close to @ref (op_test_assert_close ()). */
void op_test_check_devices (OpTestBuild build, int form, guint32 seed,
    int opset, ClinferTensor *x, const ClinferTensor *ref);
/* Pass @name is in the pass list, compile only (skipped by
 * clinfer-convert) when @device_only. */
void op_test_assert_pass_registered (const char *name, gboolean device_only);

/* Attributes of a 2-D Conv / FusedConv test node: kernel, strides,
 * dilations, group, and either auto_pad or the 4 pads; @act (may be NULL)
 * sets FusedConv's activation (Clip -0.25..0.5, LeakyRelu alpha 0.2). */
void op_test_set_conv_attrs (ClinferNode *n, int kh, int kw, int sh, int sw,
    int dh, int dw, int group, const char *auto_pad, const int64_t *pads,
    const char *act);

/* @t has shape @dims (@rank of them). */
void op_test_assert_shape (const ClinferTensor *t, int rank,
    const int64_t *dims);
/* max |got - ref| <= 1e-4 * max (1, max |ref|), same shape. */
void op_test_assert_close (const ClinferTensor *got, const ClinferTensor *ref,
    const char *what);
