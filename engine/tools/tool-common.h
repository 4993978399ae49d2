/* clinfer tools — the option vocabulary and helpers shared by every CLI
 * (clinfer-run, clinfer-benchmark, later clinfer-convert). */
#pragma once

#include <clinfer/clinfer.h>

G_BEGIN_DECLS

/* Exit codes of every tool. */
typedef enum {
  TOOL_EXIT_OK = 0,
  TOOL_EXIT_ERROR = 1,    /* model, input or run error */
  TOOL_EXIT_USAGE = 2,    /* bad command line, or a feature not there yet */
} ToolExit;

#define TOOL_ERROR (tool_error_quark ())

/* Errors raised by the tools themselves. */
typedef enum {
  TOOL_ERROR_USAGE,             /* exit 2 */
  TOOL_ERROR_NOT_IMPLEMENTED,   /* exit 2 */
  TOOL_ERROR_FAILED,            /* exit 1 */
} ToolError;

GQuark tool_error_quark (void);

/* The shared options; filled by tool_options_parse(). */
typedef struct {
  const char *tool_name;  /* "clinfer-run", used in every message */
  char *model_path;       /* the MODEL argument */
  char *device;           /* NULL = "CPU" */
  int threads;            /* 0 = number of cores */
  int streams;            /* 0 = from the hint */
  int batch;              /* 0 = as the model says; else the first dim */
  char *hint;             /* --hint text, NULL = @default_hint */
  const char *default_hint;  /* the tool's: "none" unless it sets one */
  ClinferPerformanceHint hint_value;
  char **shapes;          /* NAME=SHAPE */
  char *config_file;
  char **custom_libs;
  char **disable_passes;
  gboolean no_fallback;
  char *memory_limit;     /* --memory-limit text, NULL = physical memory */
  guint64 memory_limit_bytes;
  char **inputs;          /* NAME=FILE.npy */
  gboolean version;
  gboolean list_devices;  /* --list-devices: no MODEL needed */
  gboolean list_passes;   /* --list-passes: printed and exit 0, as --help */
  char **args_;           /* positional arguments (internal) */
} ToolOptions;

void tool_options_init (ToolOptions *opts, const char *tool_name);
/* "512M", "2G", "1048576" (K M G T are powers of 1024; a trailing B or
 * iB is allowed) into *@bytes; FALSE when malformed, 0 or too large. */
gboolean tool_parse_byte_size (const char *text, guint64 *bytes);
void tool_options_clear (ToolOptions *opts);
/* Parses the shared options plus the tool's @extra entries (may be NULL;
 * G_OPTION_ENTRY_NULL-terminated). -h/--help print the help and exit 0.
 * With --version set, returns TRUE without requiring MODEL; otherwise
 * exactly one MODEL argument is required. Errors are TOOL_ERROR_USAGE. */
gboolean tool_options_parse (ToolOptions *opts, const char *summary,
    const GOptionEntry *extra, int *argc, char ***argv, GError **error);

/* Prints one line per device clinfer can use (the native CPU, then the
 * OpenCL devices as GPU.N):
 *   <name> index=<N|-> type=<CPU|GPU|...> fp16=<yes|no> platform="..."
 *   driver="..." device="..." */
void tool_print_devices (void);
/* Prints the compile passes in order, one "NAME  description" line each. */
void tool_print_passes (void);

/* Exit code for @error: 2 for usage errors and not-implemented features,
 * 1 otherwise. */
int tool_exit_code (const GError *error);
/* Prints "<tool>: <message>" as one line on stderr. */
void tool_print_error (const char *tool_name, const GError *error);
/* Prints the error (if any) and returns its exit code; 0 for NULL. */
int tool_fail (const char *tool_name, const GError *error);

/* Monotonic clock in nanoseconds. */
gint64 tool_now_ns (void);

/**
 * ToolSession:
 *
 * Everything between the command line and a request ready to infer:
 * compile config, model, inputs (one slot per model input, NULL when not
 * given), compiled model and request, plus read/compile timings.
 */
typedef struct {
  ClinferCompileConfig *config;
  ClinferModel *model;
  guint n_inputs;
  ClinferTensor **inputs;
  char **input_files;     /* file each input came from; NULL = generated */
  ClinferCompiled *compiled;
  ClinferRequest *request;
  gint64 read_ns;
  gint64 compile_ns;
} ToolSession;

typedef enum {
  TOOL_INPUTS_REQUIRED,   /* every model input must be given (clinfer-run) */
  TOOL_INPUTS_RANDOM,     /* missing inputs get random values (benchmark) */
} ToolInputPolicy;

/* Builds the compile config from @opts (usage errors only). */
ClinferCompileConfig *tool_compile_config_new (const ToolOptions *opts,
    GError **error);
/* Config, model read, --input files, --shape, missing inputs per @policy,
 * compile, request, inputs bound. @profiling enables per-node timing. */
gboolean tool_session_prepare (ToolSession *session, const ToolOptions *opts,
    ToolInputPolicy policy, gboolean profiling, GError **error);
void tool_session_clear (ToolSession *session);

/* (transfer full) A tensor of @type and static @shape filled from @rand:
 * uniform [-1, 1] for floats, 0..9 for integers, 0/1 for bool. */
ClinferTensor *tool_random_tensor (ClinferElementType type,
    const ClinferShape *shape, GRand *rand, GError **error);

G_END_DECLS
