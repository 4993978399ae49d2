/* clinfer — helpers shared by the op tests: graphs built in memory, random
 * and literal tensors, a small graph interpreter on the reference evals and
 * the f32 closeness check of the design brief. */
#pragma once

#include <clinfer/clinfer.h>
#include "ops/op.h"
#include "passes/passes.h"

/* Graph importing the default domain at @opset. */
ClinferGraph *op_test_graph (int opset);
ClinferTensor *op_test_f32 (int rank, const int64_t *dims, const float *values);
ClinferTensor *op_test_i64 (int rank, const int64_t *dims, const int64_t *values);
/* Uniform values in [-1, 1). */
ClinferTensor *op_test_random (GRand *rand, int rank, const int64_t *dims);
/* Node whose output i is named "<name>:i"; @inputs (n_in entries, NULL =
 * absent) are read from their output 0. */
ClinferNode *op_test_node (ClinferGraph *g, const char *op_type,
    const char *domain, const char *name, guint n_in, ClinferNode **inputs,
    guint n_out);
/* Resolves every node and infers shapes in topological order. */
gboolean op_test_prepare (ClinferGraph *g, GError **error);
/* Runs @node's reference eval on @inputs (n_inputs entries); returns the
 * outputs (n_outputs, allocated with the inferred shapes) or NULL. */
ClinferTensor **op_test_eval (ClinferNode *node, ClinferTensor *const *inputs,
    GError **error);
void op_test_free_outputs (ClinferNode *node, ClinferTensor **outputs);
/* Runs the whole graph on the reference evals; @inputs follow g->inputs.
 * Returns graph output 0 (transfer full). */
ClinferTensor *op_test_run_graph (ClinferGraph *g, ClinferTensor *const *inputs,
    GError **error);
/* max |got - ref| <= 1e-4 * max (1, max |ref|), same shape. */
void op_test_assert_close (const ClinferTensor *got, const ClinferTensor *ref,
    const char *what);
