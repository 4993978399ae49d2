/* clinfer OpenCL kernels — convolution (Conv and the fused conv + bias +
 * residual + activation of com.clinfer FusedConv), NCHW, 1 to 3 spatial
 * dims handled as (D, H, W). Work-item (spatial, output channel(s), batch).
 *
 * in/out/kernel/stride/dilation/pad: int4 (D, H, W, unused). */

/* Generic direct convolution: any group, stride, dilation and padding. */
__kernel void
conv_direct (__global const data_t *x, __global const data_t *w,
    __global const data_t *bias, __global const data_t *z,
    __global data_t *y, int cin_g, int cout, int cout_g, int4 in,
    int4 out, int4 k, int4 s, int4 dl, int4 pad, int has_bias, int has_z,
    int act, float act_a, float act_b)
{
  int sp = get_global_id (0);
  int oc = get_global_id (1);
  int n = get_global_id (2);
  int out_sp = out.x * out.y * out.z;
  if (sp >= out_sp)
    return;
  int ow = sp % out.z, oh = (sp / out.z) % out.y, od = sp / (out.z * out.y);
  int g = oc / cout_g;
  int in_sp = in.x * in.y * in.z;
  int ksz = k.x * k.y * k.z;
  __global const data_t *xg = x + ((size_t) n * cin_g * (cout / cout_g)
      + (size_t) g * cin_g) * in_sp;
  __global const data_t *wo = w + (size_t) oc * cin_g * ksz;
  float acc = has_bias ? LOAD (bias, oc) : 0.0f;

  for (int ic = 0; ic < cin_g; ic++) {
    __global const data_t *xi = xg + (size_t) ic * in_sp;
    __global const data_t *wi = wo + ic * ksz;
    for (int kd = 0; kd < k.x; kd++) {
      int id = od * s.x + kd * dl.x - pad.x;
      if (id < 0 || id >= in.x)
        continue;
      for (int kh = 0; kh < k.y; kh++) {
        int ih = oh * s.y + kh * dl.y - pad.y;
        if (ih < 0 || ih >= in.y)
          continue;
        for (int kw = 0; kw < k.z; kw++) {
          int iw = ow * s.z + kw * dl.z - pad.z;
          if (iw < 0 || iw >= in.z)
            continue;
          acc += LOAD (xi, (id * in.y + ih) * in.z + iw)
              * LOAD (wi, (kd * k.y + kh) * k.z + kw);
        }
      }
    }
  }
  size_t o = ((size_t) n * cout + oc) * out_sp + sp;
  if (has_z)
    acc += LOAD (z, o);
  STORE (y, o, apply_activation (acc, act, act_a, act_b));
}

/* conv_direct for groups of a multiple of 4 output channels: each
 * work-item computes 4 output channels of one pixel, so each input load
 * serves 4 multiply-adds. */
__kernel void
conv_direct4 (__global const data_t *x, __global const data_t *w,
    __global const data_t *bias, __global const data_t *z,
    __global data_t *y, int cin_g, int cout, int cout_g, int4 in,
    int4 out, int4 k, int4 s, int4 dl, int4 pad, int has_bias, int has_z,
    int act, float act_a, float act_b)
{
  int sp = get_global_id (0);
  int oc = get_global_id (1) * 4;
  int n = get_global_id (2);
  int out_sp = out.x * out.y * out.z;
  if (sp >= out_sp)
    return;
  int ow = sp % out.z, oh = (sp / out.z) % out.y, od = sp / (out.z * out.y);
  int g = oc / cout_g;
  int in_sp = in.x * in.y * in.z;
  int ksz = k.x * k.y * k.z, wstride = cin_g * ksz;
  __global const data_t *xg = x + ((size_t) n * cin_g * (cout / cout_g)
      + (size_t) g * cin_g) * in_sp;
  __global const data_t *wo = w + (size_t) oc * wstride;
  float4 acc = has_bias ? (float4) (LOAD (bias, oc), LOAD (bias, oc + 1),
      LOAD (bias, oc + 2), LOAD (bias, oc + 3)) : (float4) 0.0f;

  for (int ic = 0; ic < cin_g; ic++) {
    __global const data_t *xi = xg + (size_t) ic * in_sp;
    __global const data_t *wi = wo + ic * ksz;
    for (int kd = 0; kd < k.x; kd++) {
      int id = od * s.x + kd * dl.x - pad.x;
      if (id < 0 || id >= in.x)
        continue;
      for (int kh = 0; kh < k.y; kh++) {
        int ih = oh * s.y + kh * dl.y - pad.y;
        if (ih < 0 || ih >= in.y)
          continue;
        for (int kw = 0; kw < k.z; kw++) {
          int iw = ow * s.z + kw * dl.z - pad.z;
          if (iw < 0 || iw >= in.z)
            continue;
          int t = (kd * k.y + kh) * k.z + kw;
          float xv = LOAD (xi, (id * in.y + ih) * in.z + iw);
          acc += xv * (float4) (LOAD (wi, t), LOAD (wi, wstride + t),
              LOAD (wi, 2 * wstride + t), LOAD (wi, 3 * wstride + t));
        }
      }
    }
  }
  for (int j = 0; j < 4; j++) {
    size_t o = ((size_t) n * cout + oc + j) * out_sp + sp;
    float v = (j == 0 ? acc.s0 : j == 1 ? acc.s1 : j == 2 ? acc.s2 : acc.s3)
        + (has_z ? LOAD (z, o) : 0.0f);
    STORE (y, o, apply_activation (v, act, act_a, act_b));
  }
}

/* 1x1, stride 1, no padding, one group: a GEMM per image; each work-item
 * computes 4 output channels of one pixel so every input load is used 4
 * times. */
__kernel void
conv_1x1 (__global const data_t *x, __global const data_t *w,
    __global const data_t *bias, __global const data_t *z,
    __global data_t *y, int cin, int cout, int hw, int has_bias, int has_z,
    int act, float act_a, float act_b)
{
  int p = get_global_id (0);
  int oc0 = get_global_id (1) * 4;
  int n = get_global_id (2);
  if (p >= hw)
    return;
  __global const data_t *xn = x + (size_t) n * cin * hw + p;
  float acc[4];
  for (int j = 0; j < 4; j++)
    acc[j] = has_bias && oc0 + j < cout ? LOAD (bias, oc0 + j) : 0.0f;
  if (oc0 + 4 <= cout) {
    __global const data_t *w0 = w + (size_t) oc0 * cin;
    for (int c = 0; c < cin; c++) {
      float xv = LOAD (xn, (size_t) c * hw);
      acc[0] += xv * LOAD (w0, c);
      acc[1] += xv * LOAD (w0, cin + c);
      acc[2] += xv * LOAD (w0, 2 * cin + c);
      acc[3] += xv * LOAD (w0, 3 * cin + c);
    }
  } else {
    for (int c = 0; c < cin; c++) {
      float xv = LOAD (xn, (size_t) c * hw);
      for (int j = 0; j < 4 && oc0 + j < cout; j++)
        acc[j] += xv * LOAD (w, (size_t) (oc0 + j) * cin + c);
    }
  }
  for (int j = 0; j < 4 && oc0 + j < cout; j++) {
    size_t o = ((size_t) n * cout + oc0 + j) * hw + p;
    float v = acc[j] + (has_z ? LOAD (z, o) : 0.0f);
    STORE (y, o, apply_activation (v, act, act_a, act_b));
  }
}

/* conv_1x1 for images whose pixel count is a multiple of 4: each
 * work-item computes 4 pixels x 4 output channels with vector loads. */
__kernel void
conv_1x1_vec4 (__global const data_t *x, __global const data_t *w,
    __global const data_t *bias, __global const data_t *z,
    __global data_t *y, int cin, int cout, int hw, int has_bias, int has_z,
    int act, float act_a, float act_b)
{
  int p = get_global_id (0) * 4;
  int oc0 = get_global_id (1) * 4;
  int n = get_global_id (2);
  if (p >= hw)
    return;
  __global const data_t *xn = x + (size_t) n * cin * hw + p;
  int nj = min (4, cout - oc0);
  float4 acc[4];
  for (int j = 0; j < 4; j++)
    acc[j] = (float4) (has_bias && j < nj ? LOAD (bias, oc0 + j) : 0.0f);
  if (nj == 4) {
    __global const data_t *w0 = w + (size_t) oc0 * cin;
    for (int c = 0; c < cin; c++) {
      float4 xv = LOAD4 (xn, (size_t) c * hw);
      acc[0] += xv * LOAD (w0, c);
      acc[1] += xv * LOAD (w0, cin + c);
      acc[2] += xv * LOAD (w0, 2 * cin + c);
      acc[3] += xv * LOAD (w0, 3 * cin + c);
    }
  } else {
    for (int c = 0; c < cin; c++) {
      float4 xv = LOAD4 (xn, (size_t) c * hw);
      for (int j = 0; j < nj; j++)
        acc[j] += xv * LOAD (w, (size_t) (oc0 + j) * cin + c);
    }
  }
  for (int j = 0; j < nj; j++) {
    size_t o = ((size_t) n * cout + oc0 + j) * hw + p;
    float4 v = acc[j] + (has_z ? LOAD4 (z, o) : (float4) 0.0f);
    STORE4 (y, o, apply_activation4 (v, act, act_a, act_b));
  }
}

/* Depthwise 2-D (one input channel per group, cout == groups): the window
 * loops have no channel loop and skip the bounds tests inside the image. */
__kernel void
conv_depthwise (__global const data_t *x, __global const data_t *w,
    __global const data_t *bias, __global const data_t *z,
    __global data_t *y, int channels, int4 in, int4 out, int4 k, int4 s,
    int4 dl, int4 pad, int has_bias, int has_z, int act, float act_a,
    float act_b)
{
  int sp = get_global_id (0);
  int c = get_global_id (1);
  int n = get_global_id (2);
  int out_sp = out.y * out.z;
  if (sp >= out_sp)
    return;
  int ow = sp % out.z, oh = sp / out.z;
  __global const data_t *xi = x + ((size_t) n * channels + c) * in.y * in.z;
  __global const data_t *wc = w + (size_t) c * k.y * k.z;
  float acc = has_bias ? LOAD (bias, c) : 0.0f;
  int ih0 = oh * s.y - pad.y, iw0 = ow * s.z - pad.z;

  for (int kh = 0; kh < k.y; kh++) {
    int ih = ih0 + kh * dl.y;
    if (ih < 0 || ih >= in.y)
      continue;
    for (int kw = 0; kw < k.z; kw++) {
      int iw = iw0 + kw * dl.z;
      if (iw < 0 || iw >= in.z)
        continue;
      acc += LOAD (xi, ih * in.z + iw) * LOAD (wc, kh * k.z + kw);
    }
  }
  size_t o = ((size_t) n * channels + c) * out_sp + sp;
  if (has_z)
    acc += LOAD (z, o);
  STORE (y, o, apply_activation (acc, act, act_a, act_b));
}

/* conv_depthwise computing 4 consecutive outputs of a row per work-item
 * (output width a multiple of 4): the weight loads and index arithmetic
 * are shared by the 4. */
__kernel void
conv_depthwise4 (__global const data_t *x, __global const data_t *w,
    __global const data_t *bias, __global const data_t *z,
    __global data_t *y, int channels, int4 in, int4 out, int4 k, int4 s,
    int4 dl, int4 pad, int has_bias, int has_z, int act, float act_a,
    float act_b)
{
  int sp = get_global_id (0) * 4;
  int c = get_global_id (1);
  int n = get_global_id (2);
  int out_sp = out.y * out.z;
  if (sp >= out_sp)
    return;
  int ow = sp % out.z, oh = sp / out.z;
  __global const data_t *xi = x + ((size_t) n * channels + c) * in.y * in.z;
  __global const data_t *wc = w + (size_t) c * k.y * k.z;
  float4 acc = (float4) (has_bias ? LOAD (bias, c) : 0.0f);
  int ih0 = oh * s.y - pad.y, iw0 = ow * s.z - pad.z;

  for (int kh = 0; kh < k.y; kh++) {
    int ih = ih0 + kh * dl.y;
    if (ih < 0 || ih >= in.y)
      continue;
    __global const data_t *row = xi + ih * in.z;
    for (int kw = 0; kw < k.z; kw++) {
      int iw = iw0 + kw * dl.z;
      float wv = LOAD (wc, kh * k.z + kw);
      float4 xv;
      xv.s0 = iw >= 0 && iw < in.z ? LOAD (row, iw) : 0.0f;
      iw += s.z;
      xv.s1 = iw >= 0 && iw < in.z ? LOAD (row, iw) : 0.0f;
      iw += s.z;
      xv.s2 = iw >= 0 && iw < in.z ? LOAD (row, iw) : 0.0f;
      iw += s.z;
      xv.s3 = iw >= 0 && iw < in.z ? LOAD (row, iw) : 0.0f;
      acc += xv * wv;
    }
  }
  size_t o = ((size_t) n * channels + c) * out_sp + sp;
  if (has_z)
    acc += LOAD4 (z, o);
  STORE4 (y, o, apply_activation4 (acc, act, act_a, act_b));
}

/* ConvTranspose (1 to 3 spatial dims as D, H, W): each output gathers the
 * input positions whose stride grid lands on it. w is [cin, cout_g, k]. */
__kernel void
conv_transpose (__global const data_t *x, __global const data_t *w,
    __global const data_t *bias, __global data_t *y, int cin_g, int cout,
    int cout_g, int4 in, int4 out, int4 k, int4 s, int4 dl, int4 pad,
    int has_bias)
{
  int sp = get_global_id (0);
  int oc = get_global_id (1);
  int n = get_global_id (2);
  int out_sp = out.x * out.y * out.z;
  if (sp >= out_sp)
    return;
  int ow = sp % out.z, oh = (sp / out.z) % out.y, od = sp / (out.z * out.y);
  int g = oc / cout_g, ocg = oc % cout_g;
  int in_sp = in.x * in.y * in.z, ksz = k.x * k.y * k.z;
  int groups = cout / cout_g;
  float acc = has_bias ? LOAD (bias, oc) : 0.0f;

  for (int ic = 0; ic < cin_g; ic++) {
    int c = g * cin_g + ic;
    __global const data_t *xi = x + ((size_t) n * cin_g * groups + c) * in_sp;
    __global const data_t *wi = w + ((size_t) c * cout_g + ocg) * ksz;
    for (int kd = 0; kd < k.x; kd++) {
      int td = od + pad.x - kd * dl.x;
      if (td < 0 || td % s.x || td / s.x >= in.x)
        continue;
      for (int kh = 0; kh < k.y; kh++) {
        int th = oh + pad.y - kh * dl.y;
        if (th < 0 || th % s.y || th / s.y >= in.y)
          continue;
        for (int kw = 0; kw < k.z; kw++) {
          int tw = ow + pad.z - kw * dl.z;
          if (tw < 0 || tw % s.z || tw / s.z >= in.z)
            continue;
          acc += LOAD (xi, ((td / s.x) * in.y + th / s.y) * in.z + tw / s.z)
              * LOAD (wi, (kd * k.y + kh) * k.z + kw);
        }
      }
    }
  }
  STORE (y, ((size_t) n * cout + oc) * out_sp + sp, acc);
}

/* conv_1x1 for pixel counts a multiple of 8 and cout a multiple of 4:
 * each work-item computes 8 pixels x 4 output channels, one 8-wide load
 * per input channel (a full AVX register on CPU runtimes). */
__kernel void
conv_1x1_vec8 (__global const data_t *x, __global const data_t *w,
    __global const data_t *bias, __global const data_t *z,
    __global data_t *y, int cin, int cout, int hw, int has_bias, int has_z,
    int act, float act_a, float act_b)
{
  int p = get_global_id (0) * 8;
  int oc0 = get_global_id (1) * 4;
  int n = get_global_id (2);
  if (p >= hw)
    return;
  __global const data_t *xn = x + (size_t) n * cin * hw + p;
  __global const data_t *w0 = w + (size_t) oc0 * cin;
  float8 a0 = (float8) 0.0f, a1 = (float8) 0.0f;
  float8 a2 = (float8) 0.0f, a3 = (float8) 0.0f;

  for (int c = 0; c < cin; c++) {
    float8 xv = LOAD8 (xn, (size_t) c * hw);
    a0 += xv * LOAD (w0, c);
    a1 += xv * LOAD (w0, cin + c);
    a2 += xv * LOAD (w0, 2 * cin + c);
    a3 += xv * LOAD (w0, 3 * cin + c);
  }
  float8 acc[4] = { a0, a1, a2, a3 };
  for (int j = 0; j < 4; j++) {
    size_t o = ((size_t) n * cout + oc0 + j) * hw + p;
    float8 v = acc[j] + (has_bias ? LOAD (bias, oc0 + j) : 0.0f);
    if (has_z)
      v += LOAD8 (z, o);
    STORE8 (y, o, apply_activation8 (v, act, act_a, act_b));
  }
}

/* Depthwise 2-D, 8 consecutive outputs of a row per work-item (output
 * width a multiple of 8). */
__kernel void
conv_depthwise8 (__global const data_t *x, __global const data_t *w,
    __global const data_t *bias, __global const data_t *z,
    __global data_t *y, int channels, int4 in, int4 out, int4 k, int4 s,
    int4 dl, int4 pad, int has_bias, int has_z, int act, float act_a,
    float act_b)
{
  int sp = get_global_id (0) * 8;
  int c = get_global_id (1);
  int n = get_global_id (2);
  int out_sp = out.y * out.z;
  if (sp >= out_sp)
    return;
  int ow = sp % out.z, oh = sp / out.z;
  __global const data_t *xi = x + ((size_t) n * channels + c) * in.y * in.z;
  __global const data_t *wc = w + (size_t) c * k.y * k.z;
  float8 acc = (float8) (has_bias ? LOAD (bias, c) : 0.0f);
  float8 odd = (float8) 0.0f;  /* odd kernel columns: a second FMA chain */
  int ih0 = oh * s.y - pad.y, iw0 = ow * s.z - pad.z;
  long total = (long) get_global_size (2) * channels * in.y * in.z;

  for (int kh = 0; kh < k.y; kh++) {
    int ih = ih0 + kh * dl.y;
    if (ih < 0 || ih >= in.y)
      continue;
    __global const data_t *row = xi + ih * in.z;
    long before = row - x, after = total - before;
    for (int kw = 0; kw < k.z; kw++) {
      float8 xv = load_row8_masked (row, iw0 + kw * dl.z, s.z, in.z, before,
          after);
      if (kw & 1)
        odd += xv * LOAD (wc, kh * k.z + kw);
      else
        acc += xv * LOAD (wc, kh * k.z + kw);
    }
  }
  size_t o = ((size_t) n * channels + c) * out_sp + sp;
  acc += odd;
  if (has_z)
    acc += LOAD8 (z, o);
  STORE8 (y, o, apply_activation8 (acc, act, act_a, act_b));
}

/* 2-D direct convolution (one group or groups of a multiple of 4 output
 * channels): 8 consecutive outputs of a row x 4 output channels per
 * work-item (output width a multiple of 8). */
__kernel void
conv_direct4x8 (__global const data_t *x, __global const data_t *w,
    __global const data_t *bias, __global const data_t *z,
    __global data_t *y, int cin_g, int cout, int cout_g, int4 in,
    int4 out, int4 k, int4 s, int4 dl, int4 pad, int has_bias, int has_z,
    int act, float act_a, float act_b)
{
  int sp = get_global_id (0) * 8;
  int oc = get_global_id (1) * 4;
  int n = get_global_id (2);
  int out_sp = out.y * out.z;
  if (sp >= out_sp)
    return;
  int ow = sp % out.z, oh = sp / out.z;
  int g = oc / cout_g;
  int in_sp = in.y * in.z;
  int ksz = k.y * k.z, wstride = cin_g * ksz;
  __global const data_t *xg = x + ((size_t) n * cin_g * (cout / cout_g)
      + (size_t) g * cin_g) * in_sp;
  __global const data_t *wo = w + (size_t) oc * wstride;
  float8 a0 = (float8) (has_bias ? LOAD (bias, oc) : 0.0f);
  float8 a1 = (float8) (has_bias ? LOAD (bias, oc + 1) : 0.0f);
  float8 a2 = (float8) (has_bias ? LOAD (bias, oc + 2) : 0.0f);
  float8 a3 = (float8) (has_bias ? LOAD (bias, oc + 3) : 0.0f);
  int ih0 = oh * s.y - pad.y, iw0 = ow * s.z - pad.z;

  for (int ic = 0; ic < cin_g; ic++) {
    __global const data_t *xi = xg + (size_t) ic * in_sp;
    __global const data_t *wi = wo + ic * ksz;
    for (int kh = 0; kh < k.y; kh++) {
      int ih = ih0 + kh * dl.y;
      if (ih < 0 || ih >= in.y)
        continue;
      __global const data_t *row = xi + ih * in.z;
      for (int kw = 0; kw < k.z; kw++) {
        int t = kh * k.z + kw;
        float8 xv = load_row8 (row, iw0 + kw * dl.z, s.z, in.z);
        a0 += xv * LOAD (wi, t);
        a1 += xv * LOAD (wi, wstride + t);
        a2 += xv * LOAD (wi, 2 * wstride + t);
        a3 += xv * LOAD (wi, 3 * wstride + t);
      }
    }
  }
  float8 acc[4] = { a0, a1, a2, a3 };
  for (int j = 0; j < 4; j++) {
    size_t o = ((size_t) n * cout + oc + j) * out_sp + sp;
    float8 v = acc[j];
    if (has_z)
      v += LOAD8 (z, o);
    STORE8 (y, o, apply_activation8 (v, act, act_a, act_b));
  }
}

/* The kernels below are for CPU runtimes (PoCL), which run the work-items
 * of a work-group one after the other: a work-item's multiply-adds only
 * overlap when they go to independent accumulators, so each keeps 4 to 8
 * of them (an FMA's latency is 4-5 cycles, 2 issue per cycle). */

/* The epilogue of 8 outputs at @o of output channel @oc. */
inline void
conv_store8 (__global data_t *y, __global const data_t *z,
    __global const data_t *bias, size_t o, int oc, float8 v, int has_bias,
    int has_z, int act, float act_a, float act_b)
{
  if (has_bias)
    v += LOAD (bias, oc);
  if (has_z)
    v += LOAD8 (z, o);
  STORE8 (y, o, apply_activation8 (v, act, act_a, act_b));
}

/* conv_store8 of 16 outputs at @o (@lo, then @hi). */
inline void
conv_store16 (__global data_t *y, __global const data_t *z,
    __global const data_t *bias, size_t o, int oc, float8 lo, float8 hi,
    int has_bias, int has_z, int act, float act_a, float act_b)
{
  conv_store8 (y, z, bias, o, oc, lo, has_bias, has_z, act, act_a, act_b);
  conv_store8 (y, z, bias, o + 8, oc, hi, has_bias, has_z, act, act_a, act_b);
}

/* conv_1x1 for pixel counts a multiple of 16 (any cout): 16 pixels x 4
 * output channels per work-item (8 AVX accumulators; pairs of float8
 * rather than float16, which AVX2 has no registers for). */
__kernel void
conv_1x1_vec16 (__global const data_t *x, __global const data_t *w,
    __global const data_t *bias, __global const data_t *z,
    __global data_t *y, int cin, int cout, int hw, int has_bias, int has_z,
    int act, float act_a, float act_b)
{
  int p = get_global_id (0) * 16;
  int oc0 = get_global_id (1) * 4;
  int n = get_global_id (2);
  if (p >= hw)
    return;
  __global const data_t *xn = x + (size_t) n * cin * hw + p;
  /* Channels past cout (nj < 4) repeat the last one and are not stored. */
  int nj = min (4, cout - oc0);
  __global const data_t *w0 = w + (size_t) oc0 * cin;
  __global const data_t *w1 = w0 + (size_t) min (1, nj - 1) * cin;
  __global const data_t *w2 = w0 + (size_t) min (2, nj - 1) * cin;
  __global const data_t *w3 = w0 + (size_t) min (3, nj - 1) * cin;
  float8 a0 = (float8) 0.0f, a1 = a0, a2 = a0, a3 = a0;
  float8 b0 = a0, b1 = a0, b2 = a0, b3 = a0;

  /* Named accumulators: PoCL keeps an array of them in memory. */
  for (int c = 0; c < cin; c++) {
    float8 xl = LOAD8 (xn, (size_t) c * hw);
    float8 xh = LOAD8 (xn, (size_t) c * hw + 8);
    float w0v = LOAD (w0, c), w1v = LOAD (w1, c);
    float w2v = LOAD (w2, c), w3v = LOAD (w3, c);
    a0 += xl * w0v;
    b0 += xh * w0v;
    a1 += xl * w1v;
    b1 += xh * w1v;
    a2 += xl * w2v;
    b2 += xh * w2v;
    a3 += xl * w3v;
    b3 += xh * w3v;
  }
  size_t o = ((size_t) n * cout + oc0) * hw + p;
  conv_store16 (y, z, bias, o, oc0, a0, b0, has_bias, has_z, act, act_a,
      act_b);
  if (nj > 1)
    conv_store16 (y, z, bias, o + hw, oc0 + 1, a1, b1, has_bias, has_z, act,
        act_a, act_b);
  if (nj > 2)
    conv_store16 (y, z, bias, o + 2 * (size_t) hw, oc0 + 2, a2, b2, has_bias,
        has_z, act, act_a, act_b);
  if (nj > 3)
    conv_store16 (y, z, bias, o + 3 * (size_t) hw, oc0 + 3, a3, b3, has_bias,
        has_z, act, act_a, act_b);
}

/* Depthwise 2-D, 16 consecutive outputs of a row per work-item (output
 * width a multiple of 16); even and odd kernel columns go to separate
 * accumulators. */
__kernel void
conv_depthwise16 (__global const data_t *x, __global const data_t *w,
    __global const data_t *bias, __global const data_t *z,
    __global data_t *y, int channels, int4 in, int4 out, int4 k, int4 s,
    int4 dl, int4 pad, int has_bias, int has_z, int act, float act_a,
    float act_b)
{
  int sp = get_global_id (0) * 16;
  int c = get_global_id (1);
  int n = get_global_id (2);
  int out_sp = out.y * out.z;
  if (sp >= out_sp)
    return;
  int ow = sp % out.z, oh = sp / out.z;
  __global const data_t *xi = x + ((size_t) n * channels + c) * in.y * in.z;
  __global const data_t *wc = w + (size_t) c * k.y * k.z;
  float8 a0 = (float8) (has_bias ? LOAD (bias, c) : 0.0f), a1 = a0;
  float8 b0 = (float8) 0.0f, b1 = (float8) 0.0f;
  int ih0 = oh * s.y - pad.y, iw0 = ow * s.z - pad.z, next8 = 8 * s.z;

  /* Windows inside the row (most work-items on wide rows): plain vector
   * loads; the others go through load_row8_masked. */
  int interior = s.z <= 2 && iw0 >= 0
      && iw0 + 16 * s.z - 1 + (k.z - 1) * dl.z < in.z;
  /* Elements of x (the batch is the global size of dimension 2). */
  long total = (long) get_global_size (2) * channels * in.y * in.z;

  for (int kh = 0; kh < k.y; kh++) {
    int ih = ih0 + kh * dl.y;
    if (ih < 0 || ih >= in.y)
      continue;
    __global const data_t *row = xi + ih * in.z;
    __global const data_t *wr = wc + kh * k.z;
    if (interior && s.z == 1) {
      for (int kw = 0; kw < k.z; kw++) {
        int iw = iw0 + kw * dl.z;
        float wv = LOAD (wr, kw);
        if (kw & 1) {
          b0 += LOAD8 (row, iw) * wv;
          b1 += LOAD8 (row, iw + 8) * wv;
        } else {
          a0 += LOAD8 (row, iw) * wv;
          a1 += LOAD8 (row, iw + 8) * wv;
        }
      }
      continue;
    }
    if (interior) {
      for (int kw = 0; kw < k.z; kw++) {
        int iw = iw0 + kw * dl.z;
        float wv = LOAD (wr, kw);
        if (kw & 1) {
          b0 += load_even8 (row, iw) * wv;
          b1 += load_even8 (row, iw + 16) * wv;
        } else {
          a0 += load_even8 (row, iw) * wv;
          a1 += load_even8 (row, iw + 16) * wv;
        }
      }
      continue;
    }
    long before = row - x, after = total - before;
    int kw = 0;
    for (; kw + 1 < k.z; kw += 2) {
      int iw = iw0 + kw * dl.z, iw1 = iw + dl.z;
      float w0 = LOAD (wr, kw), w1 = LOAD (wr, kw + 1);
      a0 += load_row8_masked (row, iw, s.z, in.z, before, after) * w0;
      a1 += load_row8_masked (row, iw + next8, s.z, in.z, before, after) * w0;
      b0 += load_row8_masked (row, iw1, s.z, in.z, before, after) * w1;
      b1 += load_row8_masked (row, iw1 + next8, s.z, in.z, before, after) * w1;
    }
    if (kw < k.z) {
      int iw = iw0 + kw * dl.z;
      float w0 = LOAD (wr, kw);
      a0 += load_row8_masked (row, iw, s.z, in.z, before, after) * w0;
      a1 += load_row8_masked (row, iw + next8, s.z, in.z, before, after) * w0;
    }
  }
  size_t o = ((size_t) n * channels + c) * out_sp + sp;
  a0 += b0;
  a1 += b1;
  if (has_z) {
    a0 += LOAD8 (z, o);
    a1 += LOAD8 (z, o + 8);
  }
  STORE8 (y, o, apply_activation8 (a0, act, act_a, act_b));
  STORE8 (y, o + 8, apply_activation8 (a1, act, act_a, act_b));
}

/* conv_direct4x8 with groups of a multiple of 8 output channels: 8
 * consecutive outputs of a row x 8 output channels per work-item. */
__kernel void
conv_direct8x8 (__global const data_t *x, __global const data_t *w,
    __global const data_t *bias, __global const data_t *z,
    __global data_t *y, int cin_g, int cout, int cout_g, int4 in,
    int4 out, int4 k, int4 s, int4 dl, int4 pad, int has_bias, int has_z,
    int act, float act_a, float act_b)
{
  int sp = get_global_id (0) * 8;
  int oc = get_global_id (1) * 8;
  int n = get_global_id (2);
  int out_sp = out.y * out.z;
  if (sp >= out_sp)
    return;
  int ow = sp % out.z, oh = sp / out.z;
  int g = oc / cout_g;
  int in_sp = in.y * in.z;
  int ksz = k.y * k.z, wstride = cin_g * ksz;
  __global const data_t *xg = x + ((size_t) n * cin_g * (cout / cout_g)
      + (size_t) g * cin_g) * in_sp;
  __global const data_t *wo = w + (size_t) oc * wstride;
  float8 a0 = (float8) 0.0f, a1 = a0, a2 = a0, a3 = a0, a4 = a0, a5 = a0;
  float8 a6 = a0, a7 = a0;
  long total = (long) get_global_size (2) * cin_g * (cout / cout_g) * in_sp;
  int interior = s.z <= 2 && ow * s.z - pad.z >= 0
      && ow * s.z - pad.z + 8 * s.z - 1 + (k.z - 1) * dl.z < in.z;
  int ih0 = oh * s.y - pad.y, iw0 = ow * s.z - pad.z;

  for (int ic = 0; ic < cin_g; ic++) {
    __global const data_t *xi = xg + (size_t) ic * in_sp;
    __global const data_t *wi = wo + ic * ksz;
    for (int kh = 0; kh < k.y; kh++) {
      int ih = ih0 + kh * dl.y;
      if (ih < 0 || ih >= in.y)
        continue;
      __global const data_t *row = xi + ih * in.z;
      __global const data_t *wr = wi + kh * k.z;
      long before = row - x, after = total - before;
      for (int kw = 0; kw < k.z; kw++) {
        int iw = iw0 + kw * dl.z;
        float8 xv = !interior ? load_row8_masked (row, iw, s.z, in.z, before,
            after) : s.z == 1 ? LOAD8 (row, iw) : load_even8 (row, iw);
        a0 += xv * LOAD (wr, kw);
        a1 += xv * LOAD (wr, wstride + kw);
        a2 += xv * LOAD (wr, 2 * wstride + kw);
        a3 += xv * LOAD (wr, 3 * wstride + kw);
        a4 += xv * LOAD (wr, 4 * wstride + kw);
        a5 += xv * LOAD (wr, 5 * wstride + kw);
        a6 += xv * LOAD (wr, 6 * wstride + kw);
        a7 += xv * LOAD (wr, 7 * wstride + kw);
      }
    }
  }
  size_t o = ((size_t) n * cout + oc) * out_sp + sp;
  conv_store8 (y, z, bias, o, oc, a0, has_bias, has_z, act, act_a, act_b);
  conv_store8 (y, z, bias, o + out_sp, oc + 1, a1, has_bias, has_z, act,
      act_a, act_b);
  conv_store8 (y, z, bias, o + 2 * out_sp, oc + 2, a2, has_bias, has_z, act,
      act_a, act_b);
  conv_store8 (y, z, bias, o + 3 * out_sp, oc + 3, a3, has_bias, has_z, act,
      act_a, act_b);
  conv_store8 (y, z, bias, o + 4 * out_sp, oc + 4, a4, has_bias, has_z, act,
      act_a, act_b);
  conv_store8 (y, z, bias, o + 5 * out_sp, oc + 5, a5, has_bias, has_z, act,
      act_a, act_b);
  conv_store8 (y, z, bias, o + 6 * out_sp, oc + 6, a6, has_bias, has_z, act,
      act_a, act_b);
  conv_store8 (y, z, bias, o + 7 * out_sp, oc + 7, a7, has_bias, has_z, act,
      act_a, act_b);
}

/* Depthwise 2-D with vertical stride and dilation 1: 16 outputs of two
 * consecutive rows per work-item (output width a multiple of 16); each
 * input row is loaded once for both output rows. */
__kernel void
conv_depthwise16x2 (__global const data_t *x, __global const data_t *w,
    __global const data_t *bias, __global const data_t *z,
    __global data_t *y, int channels, int4 in, int4 out, int4 k, int4 s,
    int4 dl, int4 pad, int has_bias, int has_z, int act, float act_a,
    float act_b)
{
  /* (16-output tile, row pair, channel x batch): the channel is the same
   * for a whole work-group (local size 1 in dimension 2), so the work-item
   * loop PoCL makes can keep the per-channel set-up out of its body. */
  int ow = get_global_id (0) * 16, oh = get_global_id (1) * 2;
  int c = get_global_id (2) % channels, n = get_global_id (2) / channels;
  if (ow >= out.z || oh >= out.y)
    return;
  int two = oh + 1 < out.y;
  __global const data_t *xi = x + ((size_t) n * channels + c) * in.y * in.z;
  __global const data_t *wc = w + (size_t) c * k.y * k.z;
  float8 a0 = (float8) (has_bias ? LOAD (bias, c) : 0.0f), a1 = a0;
  float8 c0 = a0, c1 = a0;
  int ih0 = oh - pad.y, iw0 = ow * s.z - pad.z;
  int interior = s.z <= 2 && iw0 >= 0
      && iw0 + 16 * s.z - 1 + (k.z - 1) * dl.z < in.z;
  long total = (long) get_global_size (2) * in.y * in.z;

  /* Input row ih0 + r feeds output row 0 through kernel row r and output
   * row 1 through kernel row r - 1. */
  for (int r = 0; r <= k.y; r++) {
    int ih = ih0 + r;
    if (ih < 0 || ih >= in.y)
      continue;
    __global const data_t *row = xi + ih * in.z;
    __global const data_t *w0r = wc + min (r, k.y - 1) * k.z;
    __global const data_t *w1r = wc + max (r - 1, 0) * k.z;
    long before = row - x, after = total - before;
    int row0 = r < k.y, row1 = two && r > 0;
    /* In the kernel itself: PoCL did not inline a helper taking the
     * accumulators by pointer, and kept them in memory. */
    for (int kw = 0; kw < k.z; kw++) {
      int iw = iw0 + kw * dl.z;
      float8 lo, hi;
      if (interior && s.z == 1) {
        lo = LOAD8 (row, iw);
        hi = LOAD8 (row, iw + 8);
      } else if (interior) {
        lo = load_even8 (row, iw);
        hi = load_even8 (row, iw + 16);
      } else {
        lo = load_row8_masked (row, iw, s.z, in.z, before, after);
        hi = load_row8_masked (row, iw + 8 * s.z, s.z, in.z, before, after);
      }
      if (row0) {
        float wv = LOAD (w0r, kw);
        a0 += lo * wv;
        a1 += hi * wv;
      }
      if (row1) {
        float wv = LOAD (w1r, kw);
        c0 += lo * wv;
        c1 += hi * wv;
      }
    }
  }
  size_t o = ((size_t) n * channels + c) * out.y * out.z + oh * out.z + ow;
  if (has_z) {
    a0 += LOAD8 (z, o);
    a1 += LOAD8 (z, o + 8);
  }
  STORE8 (y, o, apply_activation8 (a0, act, act_a, act_b));
  STORE8 (y, o + 8, apply_activation8 (a1, act, act_a, act_b));
  if (!two)
    return;
  o += out.z;
  if (has_z) {
    c0 += LOAD8 (z, o);
    c1 += LOAD8 (z, o + 8);
  }
  STORE8 (y, o, apply_activation8 (c0, act, act_a, act_b));
  STORE8 (y, o + 8, apply_activation8 (c1, act, act_a, act_b));
}

/* ---- GPU shapes (OclCore.gpu_shaped) ---- */

#define TILE 16

/* 1x1, stride 1, no padding, one group, as a GEMM per image with
 * 16x16 tiles in local memory: y[oc][p] = sum_c w[oc][c] x[c][p]. A
 * work-group of 16 (pixels) x 16 (output channels) computes one output
 * each; each step loads a 16x16 tile of x (consecutive pixels: coalesced)
 * and of w (consecutive input channels) once for the 256 work-items.
 * Global size: pixels and output channels rounded up to 16; the tails
 * load zeros and store nothing. */
__kernel __attribute__ ((reqd_work_group_size (TILE, TILE, 1))) void
conv_1x1_tiled (__global const data_t *x, __global const data_t *w,
    __global const data_t *bias, __global const data_t *z,
    __global data_t *y, int cin, int cout, int hw, int has_bias, int has_z,
    int act, float act_a, float act_b)
{
  int lp = get_local_id (0), lo = get_local_id (1);
  int p = get_group_id (0) * TILE + lp;
  int oc = get_group_id (1) * TILE + lo;
  int n = get_global_id (2);
  __local float xs[TILE][TILE + 1], ws[TILE][TILE + 1];
  __global const data_t *xn = x + (size_t) n * cin * hw;
  float acc = 0.0f;

  for (int c0 = 0; c0 < cin; c0 += TILE) {
    int cx = c0 + lo, cw = c0 + lp;
    xs[lo][lp] = p < hw && cx < cin ? LOAD (xn, (size_t) cx * hw + p) : 0.0f;
    /* Row lo of the w tile is output channel oc: consecutive input
     * channels along lp. */
    ws[lo][lp] = oc < cout && cw < cin ? LOAD (w, (size_t) oc * cin + cw)
        : 0.0f;
    barrier (CLK_LOCAL_MEM_FENCE);
    for (int c = 0; c < TILE; c++)
      acc += ws[lo][c] * xs[c][lp];
    barrier (CLK_LOCAL_MEM_FENCE);
  }
  if (p >= hw || oc >= cout)
    return;
  size_t o = ((size_t) n * cout + oc) * hw + p;
  acc += has_bias ? LOAD (bias, oc) : 0.0f;
  if (has_z)
    acc += LOAD (z, o);
  STORE (y, o, apply_activation (acc, act, act_a, act_b));
}
