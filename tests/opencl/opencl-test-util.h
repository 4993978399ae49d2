/* clinfer OpenCL tests — shared helpers: skipping without an OpenCL
 * device, test model paths, compiling and running BlazeFace, comparing
 * outputs with the CPU device. */
#pragma once

#include <clinfer/clinfer.h>

G_BEGIN_DECLS

/* Exit status meson reads as "skipped". */
#define TEST_SKIP_STATUS 77

/* TRUE when clinfer lists an OpenCL device (GPU.N). */
gboolean test_have_opencl (void);
/* Path under the source tree ($CLINFER_SOURCE_ROOT or the compile-time
 * source root). Free with g_free(). */
char *test_source_path (const char *relative);
/* The 128x128 BlazeFace model and its astronaut input. */
char *test_blazeface_path (void);
ClinferTensor *test_blazeface_input (void);
/* Compiles @path for @device (fallback as given); asserts success. */
ClinferCompiled *test_compile (const char *path, const char *device,
    gboolean allow_fallback);
/* Compiles a copy of the in-memory graph @graph (shapes inferred; a
 * core/graph.h ClinferGraph) as model @label for @device, fallback as
 * given; NULL with @error set on failure. */
typedef struct _ClinferGraph ClinferGraph;
ClinferCompiled *test_compile_graph (ClinferGraph *graph, const char *label,
    const char *device, gboolean allow_fallback, GError **error);
/* Runs @compiled on @input (input 0) and returns a copy of every output. */
GPtrArray *test_run_host (ClinferCompiled *compiled, ClinferTensor *input);
/* Asserts max|a - b| <= tol * max (1, max|b|) for f32 tensors. */
void test_assert_close (const ClinferTensor *a, const ClinferTensor *b,
    double tol);
/* A model of the ONNX backend test data (conformance-data option), or
 * NULL when the data is not installed. */
char *test_onnx_node_model (const char *test_name);

G_END_DECLS
