/* The pre-processing check shared by the CPU and GPU element tests: a
 * frame of each format through clinfer with an identity model, every model
 * input value compared with a naive reference written from the
 * definitions (bilinear half-pixel resize, BT.601/709 YUV, mean/scale). */
#pragma once

#include "test-util.h"
#include <clinfer/clinfer.h>

G_BEGIN_DECLS

typedef struct
{
  GstVideoFormat format;
  const gchar *colorimetry;     /* NULL: the default */
  gdouble kr, kb;               /* YUV matrix */
  gboolean full_range;
} TestFrameCase;

typedef struct
{
  const gchar *model;
  gboolean nchw;
  gint channels, height, width; /* height/width 0: the frame's */
  ClinferElementType type;
  const gchar *resize;
  const gchar *mean, *scale;    /* properties */
  gdouble mean_v[3], scale_v[3];
  gboolean reverse;
} TestModelCase;

extern const TestFrameCase test_frame_cases[];
extern const guint test_n_frame_cases;
extern const TestModelCase test_model_cases[];
extern const guint test_n_model_cases;
extern const TestModelCase test_nhwc_model_cases[];
extern const guint test_n_nhwc_model_cases;

/* Pushes a pseudo-random @width x @height frame of @fc through a clinfer
 * element with @mc's model and properties (and @device, NULL: the
 * default) and fails unless every value of the model input (the identity
 * model's output tensor) matches the reference. */
void test_check_preprocess (const TestFrameCase * fc, const TestModelCase * mc,
    gint width, gint height, const gchar * device);

G_END_DECLS
