/* clinfer OpenCL kernels — MatMul and Gemm: y[b][m][n] = alpha * sum_k
 * A[b][m][k] B[b][k][n] + beta * C[m][n], with A, B and C read through
 * element strides (transposes, 1-D operands and broadcast batches are
 * strides; batch dims decompose through @bdims with strides @ab / @bb).
 * One work-item per output element, f32/f16 in float. */

__kernel void
matmul (__global const data_t *a, __global const data_t *b,
    __global const data_t *c, __global data_t *y, int M, int N, int K,
    int a_sm, int a_sk, int b_sk, int b_sn, int c_sm, int c_sn, int has_c,
    float alpha, float beta, int brank, int8 bdims, int8 ab, int8 bb)
{
  int n = get_global_id (0), m = get_global_id (1), bi = get_global_id (2);
  if (n >= N || m >= M)
    return;
  int d[8], sa[8], sb[8];
  vstore8 (bdims, 0, d);
  vstore8 (ab, 0, sa);
  vstore8 (bb, 0, sb);
  __global const data_t *ap = a + strided_offset (bi, brank, d, sa)
      + (size_t) m * a_sm;
  __global const data_t *bp = b + strided_offset (bi, brank, d, sb)
      + (size_t) n * b_sn;
  float acc = 0.0f;

  for (int k = 0; k < K; k++)
    acc += LOAD (ap, (size_t) k * a_sk) * LOAD (bp, (size_t) k * b_sk);
  acc *= alpha;
  if (has_c)
    acc += beta * LOAD (c, (size_t) m * c_sm + (size_t) n * c_sn);
  STORE (y, ((size_t) bi * M + m) * N + n, acc);
}

#define TILE 16

/* matmul with 16x16 tiles of A and B in local memory (GPU shapes): a
 * work-group of 16 (n) x 16 (m) work-items computes one output each and
 * loads each tile element once for the group. Same arguments as matmul;
 * global size (N, M) rounded up to 16, the tails load zeros and store
 * nothing. */
__kernel __attribute__ ((reqd_work_group_size (TILE, TILE, 1))) void
matmul_tiled (__global const data_t *a, __global const data_t *b,
    __global const data_t *c, __global data_t *y, int M, int N, int K,
    int a_sm, int a_sk, int b_sk, int b_sn, int c_sm, int c_sn, int has_c,
    float alpha, float beta, int brank, int8 bdims, int8 ab, int8 bb)
{
  int tn = get_local_id (0), tm = get_local_id (1);
  int n = get_group_id (0) * TILE + tn, m = get_group_id (1) * TILE + tm;
  int bi = get_global_id (2);
  int d[8], sa[8], sb[8];
  vstore8 (bdims, 0, d);
  vstore8 (ab, 0, sa);
  vstore8 (bb, 0, sb);
  /* Rows and columns past the edge read row/column 0 (masked below). */
  __global const data_t *ap = a + strided_offset (bi, brank, d, sa)
      + (size_t) (m < M ? m : 0) * a_sm;
  __global const data_t *bp = b + strided_offset (bi, brank, d, sb)
      + (size_t) (n < N ? n : 0) * b_sn;
  __local float as[TILE][TILE + 1], bs[TILE][TILE + 1];
  float acc = 0.0f;

  for (int k0 = 0; k0 < K; k0 += TILE) {
    int ka = k0 + tn, kb = k0 + tm;
    as[tm][tn] = m < M && ka < K ? LOAD (ap, (size_t) ka * a_sk) : 0.0f;
    bs[tm][tn] = n < N && kb < K ? LOAD (bp, (size_t) kb * b_sk) : 0.0f;
    barrier (CLK_LOCAL_MEM_FENCE);
    for (int k = 0; k < TILE; k++)
      acc += as[tm][k] * bs[k][tn];
    barrier (CLK_LOCAL_MEM_FENCE);
  }
  if (n >= N || m >= M)
    return;
  acc *= alpha;
  if (has_c)
    acc += beta * LOAD (c, (size_t) m * c_sm + (size_t) n * c_sn);
  STORE (y, ((size_t) bi * M + m) * N + n, acc);
}
