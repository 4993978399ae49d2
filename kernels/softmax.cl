/* clinfer OpenCL kernels — Softmax, LogSoftmax and Hardmax along rows of
 * [outer, n, inner]: one work-item per (outer, inner) row, max-shifted in
 * float. kind 0: softmax, 1: log-softmax, 2: hardmax (first maximum). */

__kernel void
softmax_rows (__global const data_t *x, __global data_t *y, int outer, int n,
    int inner, int kind)
{
  int i = get_global_id (0);
  if (i >= outer * inner)
    return;
  size_t base = (size_t) (i / inner) * n * inner + i % inner;
  float m = -INFINITY, sum = 0.0f;
  int at = 0;

  for (int k = 0; k < n; k++) {
    float v = LOAD (x, base + (size_t) k * inner);
    if (v > m) {
      m = v;
      at = k;
    }
  }
  if (kind == 2) {
    for (int k = 0; k < n; k++)
      STORE (y, base + (size_t) k * inner, k == at ? 1.0f : 0.0f);
    return;
  }
  for (int k = 0; k < n; k++)
    sum += exp (LOAD (x, base + (size_t) k * inner) - m);
  for (int k = 0; k < n; k++) {
    float v = LOAD (x, base + (size_t) k * inner) - m;
    STORE (y, base + (size_t) k * inner, kind == 1 ? v - log (sum)
        : exp (v) / sum);
  }
}
