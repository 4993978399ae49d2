/* clinfer — pre-processing of video frames into a model input: colour
 * conversion, resize (stretch, letterbox or crop, bilinear), mean/scale,
 * channel order, NCHW/NHWC layout and f32/f16/u8 output in one pass, on
 * the device the compiled model runs on (host rows on the CPU device,
 * one OpenCL kernel reading the frame in place on the GPU device).
 *
 * Typical use (the GStreamer element does this per negotiated format):
 *
 *   pp = clinfer_preprocess_new (compiled, &frame_info, &config, &error);
 *   clinfer_preprocess_bind (pp, request, input_index, &error);
 *   per frame:
 *     clinfer_preprocess_run (pp, &frame, &error);
 *     clinfer_request_infer (request, &error);
 *     clinfer_preprocess_done (pp);   (the frame's memory may go now)
 */
#pragma once

#include <clinfer/export.h>
#include <clinfer/compiled.h>
#include <clinfer/request.h>
#include <clinfer/remote-tensor.h>

G_BEGIN_DECLS

/**
 * ClinferPixelFormat:
 *
 * Frame layouts clinfer_preprocess_run() reads, 8 bits per sample. Packed
 * RGB formats are named by their bytes in memory (RGBx: R, G, B, unused);
 * NV12 is a Y plane and an interleaved U/V plane at half resolution in
 * both directions; I420 a Y, a U and a V plane, U and V at half
 * resolution.
 */
typedef enum {
  CLINFER_PIXEL_FORMAT_RGB,
  CLINFER_PIXEL_FORMAT_BGR,
  CLINFER_PIXEL_FORMAT_RGBX,
  CLINFER_PIXEL_FORMAT_BGRX,
  CLINFER_PIXEL_FORMAT_XRGB,
  CLINFER_PIXEL_FORMAT_XBGR,
  CLINFER_PIXEL_FORMAT_RGBA,
  CLINFER_PIXEL_FORMAT_BGRA,
  CLINFER_PIXEL_FORMAT_ARGB,
  CLINFER_PIXEL_FORMAT_ABGR,
  CLINFER_PIXEL_FORMAT_GRAY8,
  CLINFER_PIXEL_FORMAT_NV12,
  CLINFER_PIXEL_FORMAT_I420,
} ClinferPixelFormat;

/* The YUV to RGB matrix of YUV frames (ignored for RGB and gray ones). */
typedef enum {
  CLINFER_COLOR_MATRIX_BT601,
  CLINFER_COLOR_MATRIX_BT709,
  CLINFER_COLOR_MATRIX_BT2020,
  CLINFER_COLOR_MATRIX_SMPTE240M,
  CLINFER_COLOR_MATRIX_FCC,
} ClinferColorMatrix;

/**
 * ClinferResizeMethod:
 * @CLINFER_RESIZE_STRETCH: scale the whole frame to the model size,
 *   ignoring the aspect ratio
 * @CLINFER_RESIZE_LETTERBOX: scale the whole frame keeping its aspect
 *   ratio, centred, and pad the rest with black
 * @CLINFER_RESIZE_CROP: scale keeping the aspect ratio so the model input
 *   is filled, cutting the frame's centre out
 * @CLINFER_RESIZE_FIT_HEIGHT: scale to the model's height keeping the
 *   aspect ratio, from the left edge (width ceil (height x frame width /
 *   frame height), squeezed to the model's width when wider); the rest of
 *   the width is 0 in the model input (the mean, normalised): what text
 *   recognisers (PP-OCR, CRNN) are trained with
 */
typedef enum {
  CLINFER_RESIZE_STRETCH,
  CLINFER_RESIZE_LETTERBOX,
  CLINFER_RESIZE_CROP,
  CLINFER_RESIZE_FIT_HEIGHT,
} ClinferResizeMethod;

typedef enum {
  CLINFER_LAYOUT_NCHW,
  CLINFER_LAYOUT_NHWC,
} ClinferLayout;

/* The frames a pre-processing reads: format and size; for YUV formats
 * the matrix and whether luma is full range (0..255) rather than video
 * range (16..235). */
typedef struct {
  ClinferPixelFormat format;
  int width, height;
  ClinferColorMatrix matrix;
  gboolean full_range;
} ClinferFrameInfo;

#define CLINFER_FRAME_MAX_PLANES 3

/**
 * ClinferFrame:
 *
 * One frame's planes (1 for packed RGB and GRAY8, 2 for NV12, 3 for
 * I420). Per plane either host memory (@data) or a remote tensor of the
 * compiled model's context (@remote: a u8 remote tensor, e.g. from
 * clinfer_remote_tensor_new_from_cl_mem(), holding the plane at byte
 * @offset); @stride is the bytes between rows. On the GPU device host
 * planes are wrapped (CL_MEM_USE_HOST_PTR), not copied, where the device
 * shares host memory; elsewhere (a discrete GPU) the host rows write the
 * model input and only it is copied. The CPU device reads host planes
 * only.
 */
typedef struct {
  const guint8 *data[CLINFER_FRAME_MAX_PLANES];
  ClinferRemoteTensor *remote[CLINFER_FRAME_MAX_PLANES];
  gsize offset[CLINFER_FRAME_MAX_PLANES];
  int stride[CLINFER_FRAME_MAX_PLANES];
} ClinferFrame;

/* What the model input wants. @channels is 1 (gray: BT.601 luma of RGB
 * frames, Y of YUV frames) or 3; @mean and @scale apply per model
 * channel, value = (pixel - mean) / scale with pixels in 0..255;
 * @reverse_channels makes model channel 0 blue. @threads: host threads
 * (0: OpenMP's default). */
typedef struct {
  ClinferResizeMethod resize;
  ClinferLayout layout;
  ClinferElementType type;     /* F32, F16 or U8 */
  int width, height, channels;
  float mean[3], scale[3];
  gboolean reverse_channels;
  int threads;
  /* The frame turned half a turn first (a text line a direction
   * classifier found upside down). */
  gboolean rotate_180;
} ClinferPreprocessConfig;

/* Where the frame lands in the model input: the rectangle (src_x, src_y,
 * src_w, src_h) of the frame, in frame pixels, is scaled onto the
 * rectangle (dst_x, dst_y, dst_w, dst_h) of the model input, in model
 * pixels; model pixels outside it are padding (letterbox). */
typedef struct {
  int frame_width, frame_height;
  int model_width, model_height;
  double src_x, src_y, src_w, src_h;
  int dst_x, dst_y, dst_w, dst_h;
} ClinferPreprocessGeometry;

CLINFER_API void clinfer_preprocess_geometry_init (ClinferPreprocessGeometry *geometry,
    int frame_width, int frame_height, int model_width, int model_height,
    ClinferResizeMethod method);
/* The width a @frame_width x @frame_height picture takes at
 * @model_height keeping its aspect ratio: ceil (model_height x
 * frame_width / frame_height), at least 1 (CLINFER_RESIZE_FIT_HEIGHT's
 * width before the model's width bounds it; also the size to give a
 * dynamic model width). */
CLINFER_API gint64 clinfer_preprocess_fit_height_width (gint64 frame_width,
    gint64 frame_height, gint64 model_height);
/* Maps a point in model pixels (continuous) to frame pixels, undoing the
 * letterbox or crop: what decoders use to place boxes on the frame. */
CLINFER_API void clinfer_preprocess_geometry_model_to_frame (const ClinferPreprocessGeometry *geometry,
    double mx, double my, double *fx, double *fy);

typedef struct _ClinferPreprocess ClinferPreprocess;

/* (transfer full) Pre-processing of @frame_info frames into inputs of
 * @config on the device @compiled runs on (the OpenCL kernel when its
 * remote context is an OpenCL one, else the host rows, with the widest
 * instruction set the machine and CLINFER_CPU_ISA allow); @compiled NULL:
 * the host rows. NULL with CLINFER_ERROR_INVALID_ARGUMENT naming the
 * field for a size, channel count, type or format it cannot do. */
CLINFER_API ClinferPreprocess *clinfer_preprocess_new (ClinferCompiled *compiled,
    const ClinferFrameInfo *frame_info, const ClinferPreprocessConfig *config,
    GError **error);
CLINFER_API void clinfer_preprocess_free (ClinferPreprocess *pp);
/* Creates the model input tensor the pre-processing writes ([1, C, H, W]
 * or [1, H, W, C]: a host tensor on the host rows, a remote tensor of the
 * compiled model's context on OpenCL) and binds it as input @index of
 * @request (@request NULL: creates it only; see get_tensor). Again after
 * a new request. */
CLINFER_API gboolean clinfer_preprocess_bind (ClinferPreprocess *pp,
    ClinferRequest *request, guint index, GError **error);
/* Fills the bound input from @frame. On OpenCL the kernel is queued on
 * the context's queue, before the inference that reads it, and the frame
 * must stay valid until clinfer_preprocess_done(); on the host it is done
 * on return. */
CLINFER_API gboolean clinfer_preprocess_run (ClinferPreprocess *pp,
    const ClinferFrame *frame, GError **error);
/* Ends the last run (waits for its kernel and drops what it held of the
 * frame): call it once the inference that reads the input has finished.
 * A later run, and free, end a run that was not ended. */
CLINFER_API void clinfer_preprocess_done (ClinferPreprocess *pp);
/* Batched requests fed by several pre-processings (one per camera, say),
 * each writing one item of a shared [N, ...] input:
 *
 * clinfer_preprocess_new_batch_input() makes an input of @batch items of
 * this pre-processing's input shape ([N, C, H, W] or [N, H, W, C]): a host
 * tensor (*@input) on the host rows, a remote tensor of the compiled
 * model's context (*@remote_input) with a device kernel; exactly one is
 * set, the caller binds it to its request.
 *
 * clinfer_preprocess_run_item() fills item @item of such an input (pass
 * one of @input and @remote_input) from @frame, like a run: queued on
 * OpenCL, ended by clinfer_preprocess_done() once the inference has
 * read it. CLINFER_ERROR_INVALID_ARGUMENT when the input's type or item
 * shape differs from this pre-processing's, @item is out of range, or a
 * remote input is given to host rows. */
CLINFER_API gboolean clinfer_preprocess_new_batch_input (ClinferPreprocess *pp,
    guint batch, ClinferTensor **input, ClinferRemoteTensor **remote_input,
    GError **error);
CLINFER_API gboolean clinfer_preprocess_run_item (ClinferPreprocess *pp,
    const ClinferFrame *frame, ClinferTensor *input,
    ClinferRemoteTensor *remote_input, guint item, GError **error);
/* (transfer none) The bound input: the host tensor (NULL on OpenCL). */
CLINFER_API ClinferTensor *clinfer_preprocess_get_tensor (ClinferPreprocess *pp);
/* (transfer none) The bound input on OpenCL (NULL on the host). */
CLINFER_API ClinferRemoteTensor *clinfer_preprocess_get_remote_tensor (ClinferPreprocess *pp);
CLINFER_API const ClinferPreprocessGeometry *clinfer_preprocess_get_geometry (const ClinferPreprocess *pp);
/* Where it runs, for logs: "host (generic)", "host (avx2)" (the rows'
 * instruction set) or "GPU kernel on GPU.0". */
CLINFER_API const char *clinfer_preprocess_get_description (const ClinferPreprocess *pp);
/* Frame bytes the last run moved to reach the device (0 when the frame
 * was read in place). */
CLINFER_API guint64 clinfer_preprocess_get_bytes_copied (const ClinferPreprocess *pp);

G_END_DECLS
