/* clinfer OpenCL kernels — pre-processing of a video frame into a model
 * input (clinfer/preprocess.h on the GPU device,
 * engine/devices/opencl/ocl-preprocess.c):
 * colour conversion (packed RGB, GRAY8, NV12, I420), bilinear resize
 * through host-made tap tables (stretch, letterbox or crop), mean/scale,
 * channel order, NCHW/NHWC layout and f32/f16/u8 output in one pass. The
 * arithmetic follows the host rows (engine/plan/preprocess-host.c) step by
 * step so both give the same values.
 *
 * Built with -DOUT_TYPE=0 (f32), 1 (f16) or 2 (u8). */

#define FAMILY_PACKED_RGB 0
#define FAMILY_GRAY 1
#define FAMILY_NV12 2
#define FAMILY_I420 3

#if OUT_TYPE == 1
typedef half out_t;
#define OUT_STORE(p, i, v) vstore_half ((v), (i), (p))
#elif OUT_TYPE == 2
typedef uchar out_t;
#define OUT_STORE(p, i, v) ((p)[i] = convert_uchar_sat_rte (v))
#else
typedef float out_t;
#define OUT_STORE(p, i, v) ((p)[i] = (v))
#endif

/* R, G, B of packed RGB frames, the gray value three times for GRAY8, raw
 * Y, U, V for YUV frames (converted after interpolation). @off: byte
 * offsets of the planes in their buffers, @stride: their row strides. */
inline float3
fetch_samples (__global const uchar *p0, __global const uchar *p1,
    __global const uchar *p2, int4 off, int4 stride, int family,
    int pixel_stride, int4 comp, int x, int y)
{
  __global const uchar *p;
  int c;

  switch (family) {
    case FAMILY_PACKED_RGB:
      p = p0 + off.x + (long) y * stride.x + (long) x * pixel_stride;
      return (float3) (p[comp.x], p[comp.y], p[comp.z]);
    case FAMILY_GRAY:
      return (float3) (p0[off.x + (long) y * stride.x + x]);
    case FAMILY_NV12:
      p = p1 + off.y + (long) (y / 2) * stride.y + (x / 2) * 2;
      return (float3) (p0[off.x + (long) y * stride.x + x], p[0], p[1]);
    default:                   /* I420 */
      c = (x / 2);
      return (float3) (p0[off.x + (long) y * stride.x + x],
          p1[off.y + (long) (y / 2) * stride.y + c],
          p2[off.z + (long) (y / 2) * stride.z + c]);
  }
}

inline float
clamp_255 (float v)
{
  return v < 0.0f ? 0.0f : (v > 255.0f ? 255.0f : v);
}

/* One work item per model pixel (u, v): global size (width, height).
 * @xtaps/@ytaps: per model column/row (i0, i1, as_int (weight of i1), 0);
 * i0 < 0 marks padding. @yuv: y_offset, y_scale, c_scale, rv, gu, gv, bu.
 * @mean/@inv_scale/@chan: per R, G, B component (gray: component 0) the
 * model channel's mean, 1 / scale and element offset in the tensor. */
__kernel void
preprocess (__global const uchar *p0, __global const uchar *p1,
    __global const uchar *p2, int4 off, int4 stride, int family,
    int pixel_stride, int4 comp, __global const int4 *xtaps,
    __global const int4 *ytaps, float8 yuv, float4 mean, float4 inv_scale,
    int4 chan, int pixel_step, int channels, int width,
    __global out_t *out, long out_base, float4 pad)
{
  int u = get_global_id (0), v = get_global_id (1);
  int4 tx = xtaps[u], ty = ytaps[v];
  /* out_base: the first element of the item written (batched inputs). */
  long index = out_base + ((long) v * width + u) * pixel_step;
  /* Padding: black, or the mean (fit-height: 0 in the model input). */
  float3 px = pad.xyz;
  int yuv_frame = family == FAMILY_NV12 || family == FAMILY_I420;

  if (tx.x >= 0 && ty.x >= 0) {
    float fx = as_float (tx.z), fy = as_float (ty.z);
    float w00 = (1 - fx) * (1 - fy), w01 = fx * (1 - fy);
    float w10 = (1 - fx) * fy, w11 = fx * fy;
    float3 a = fetch_samples (p0, p1, p2, off, stride, family, pixel_stride,
        comp, tx.x, ty.x);
    float3 b = fetch_samples (p0, p1, p2, off, stride, family, pixel_stride,
        comp, tx.y, ty.x);
    float3 d = fetch_samples (p0, p1, p2, off, stride, family, pixel_stride,
        comp, tx.x, ty.y);
    float3 e = fetch_samples (p0, p1, p2, off, stride, family, pixel_stride,
        comp, tx.y, ty.y);

    if (channels == 1) {
      float g;

      if (family == FAMILY_PACKED_RGB) {
        a.x = 0.299f * a.x + 0.587f * a.y + 0.114f * a.z;
        b.x = 0.299f * b.x + 0.587f * b.y + 0.114f * b.z;
        d.x = 0.299f * d.x + 0.587f * d.y + 0.114f * d.z;
        e.x = 0.299f * e.x + 0.587f * e.y + 0.114f * e.z;
      }
      g = w00 * a.x + w01 * b.x + w10 * d.x + w11 * e.x;
      if (yuv_frame)
        g = clamp_255 ((g - yuv.s0) * yuv.s1);
      px.x = g;
    } else {
      px = w00 * a + w01 * b + w10 * d + w11 * e;
      if (yuv_frame) {
        float yy = (px.x - yuv.s0) * yuv.s1;
        float cu = (px.y - 128.0f) * yuv.s2;
        float cv = (px.z - 128.0f) * yuv.s2;

        px = (float3) (clamp_255 (yy + yuv.s3 * cv),
            clamp_255 (yy + yuv.s4 * cu + yuv.s5 * cv),
            clamp_255 (yy + yuv.s6 * cu));
      }
    }
  }
  /* else: padding */

  if (channels == 1) {
    OUT_STORE (out, index, (px.x - mean.x) * inv_scale.x);
  } else {
    OUT_STORE (out, index + chan.x, (px.x - mean.x) * inv_scale.x);
    OUT_STORE (out, index + chan.y, (px.y - mean.y) * inv_scale.y);
    OUT_STORE (out, index + chan.z, (px.z - mean.z) * inv_scale.z);
  }
}
