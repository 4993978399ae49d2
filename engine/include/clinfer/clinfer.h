/* clinfer — umbrella header of the inference engine.
 *
 * How the pieces fit:
 *
 *   ClinferModel     clinfer_model_read("face.onnx")  — a graph of nodes read
 *                    from a file. Frontends only translate; nothing runs yet.
 *                    clinfer_model_reshape() fixes dynamic input dims.
 *   ClinferCompileConfig  device ("CPU", "GPU", "GPU.N", "AUTO"), threads, disabled
 *                    passes, fallback policy, custom kernels/ops.
 *   ClinferCompiled  clinfer_compile(model, config) — shape inference,
 *                    constant folding, dead-node removal, fusions, kernel
 *                    selection per node and memory planning (intermediate
 *                    buffers reused by liveness). Immutable, shareable.
 *   ClinferRequest   clinfer_compiled_create_request() — binds input
 *                    tensors, runs the plan, hands out output tensors.
 *   ClinferTensor    refcounted host memory with element type, shape and
 *                    byte strides; owns or wraps memory.
 *   ClinferRemoteContext / ClinferRemoteTensor  device memory (an OpenCL
 *                    buffer, or host memory presented the same way) bound
 *                    to requests without copies (remote-tensor.h).
 *
 * Every call that can fail on user input returns FALSE/NULL and sets a
 * GError in the CLINFER_ERROR domain whose message names the file, node or
 * input concerned. Nothing in the library aborts on bad input.
 *
 *   g_autoptr(ClinferModel) m = clinfer_model_read (path, &err);
 *   g_autoptr(ClinferCompileConfig) cfg = clinfer_compile_config_new ();
 *   g_autoptr(ClinferCompiled) c = clinfer_compile (m, cfg, &err);
 *   g_autoptr(ClinferRequest) r = clinfer_compiled_create_request (c, &err);
 *   clinfer_request_set_input (r, "input:0", tensor, &err);
 *   clinfer_request_infer (r, &err);
 *   ClinferTensor *out = clinfer_request_get_output (r, 0);
 */
#pragma once

#include <clinfer/error.h>
#include <clinfer/types.h>
#include <clinfer/tensor.h>
#include <clinfer/model.h>
#include <clinfer/config.h>
#include <clinfer/compiled.h>
#include <clinfer/request.h>
#include <clinfer/device.h>
#include <clinfer/remote-tensor.h>
#include <clinfer/preprocess.h>
#include <clinfer/npy.h>
#include <clinfer/version.h>
