/* kiln's C API: load an ONNX model, query its inputs and outputs, run it.
 *
 * Every function that can fail returns a kiln_status*: NULL on success, or
 * an error object to inspect with kiln_status_code / kiln_status_message and
 * release with kiln_status_free. No C++ exception escapes this API.
 *
 *   kiln_session* s = NULL;
 *   kiln_status* st = kiln_session_create("model.onnx", NULL, &s);
 *   if (st) { fprintf(stderr, "%s\n", kiln_status_message(st)); kiln_status_free(st); return 1; }
 *   int64_t shape[4] = {1, 3, 40, 40};
 *   kiln_tensor_view in = {"x", KILN_DTYPE_FLOAT32, shape, 4, pixels, sizeof(pixels)};
 *   kiln_outputs* out = NULL;
 *   st = kiln_session_run(s, &in, 1, &out);
 *   ... kiln_outputs_data(out, 0) ...
 *   kiln_outputs_free(out);
 *   kiln_session_free(s);
 *
 * Pointers returned by kiln_session_* info functions stay valid for the
 * session's lifetime; those of kiln_outputs_* until kiln_outputs_free. A
 * session may be run from several threads at once.
 */
#ifndef KILN_KILN_H_
#define KILN_KILN_H_

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Values equal kiln::StatusCode. */
typedef enum kiln_status_code {
  KILN_OK = 0,
  KILN_INVALID_ARGUMENT = 1,
  KILN_INVALID_MODEL = 2,
  KILN_NOT_FOUND = 3,
  KILN_UNIMPLEMENTED = 4,
  KILN_IO_ERROR = 5,
  KILN_OUT_OF_RANGE = 6,
  KILN_INTERNAL = 7,
  KILN_RESOURCE_EXHAUSTED = 8
} kiln_status_code;

/* Values equal ONNX TensorProto.DataType. */
typedef enum kiln_dtype {
  KILN_DTYPE_UNDEFINED = 0,
  KILN_DTYPE_FLOAT32 = 1,
  KILN_DTYPE_UINT8 = 2,
  KILN_DTYPE_INT8 = 3,
  KILN_DTYPE_UINT16 = 4,
  KILN_DTYPE_INT16 = 5,
  KILN_DTYPE_INT32 = 6,
  KILN_DTYPE_INT64 = 7,
  KILN_DTYPE_BOOL = 9, /* one byte per element, 0 or 1 */
  KILN_DTYPE_FLOAT16 = 10,
  KILN_DTYPE_FLOAT64 = 11,
  KILN_DTYPE_UINT32 = 12,
  KILN_DTYPE_UINT64 = 13,
  KILN_DTYPE_BFLOAT16 = 16
} kiln_dtype;

typedef struct kiln_status kiln_status;
typedef struct kiln_session kiln_session;
typedef struct kiln_outputs kiln_outputs;

kiln_status_code kiln_status_code_of(const kiln_status* status); /* KILN_OK for NULL */
const char* kiln_status_message(const kiln_status* status);     /* "" for NULL */
void kiln_status_free(kiln_status* status);                     /* NULL is fine */

/* Size in bytes of one element (0 for undefined/unknown), and a name ("float32"). */
size_t kiln_dtype_size(kiln_dtype dtype);
const char* kiln_dtype_name(kiln_dtype dtype);

typedef struct kiln_session_options {
  const char* provider;  /* NULL = "reference" */
  const char* opt_level; /* NULL = "all"; or "disable", "basic", "extended" */
  int threads;           /* 0 = the cores available */
  const char* cache_dir; /* plan cache folder; NULL = $KILN_CACHE_DIR, else $XDG_CACHE_HOME/kiln, else ~/.cache/kiln */
  int no_cache;          /* nonzero: neither read nor write the plan cache */
} kiln_session_options;

/* options may be NULL (defaults). On success *out holds a new session. */
kiln_status* kiln_session_create(const char* model_path, const kiln_session_options* options, kiln_session** out);
/* From serialized ModelProto bytes (external data is not allowed). */
kiln_status* kiln_session_create_from_bytes(const void* data, size_t size, const kiln_session_options* options,
                                            kiln_session** out);
void kiln_session_free(kiln_session* session); /* NULL is fine */

/* Metadata of one graph input or output. shape has rank entries, -1 for a
 * dynamic dim; has_shape is 0 when the rank is unknown. kind is "tensor",
 * "sequence", "optional" or "unknown". optional (inputs) is 1 when the input
 * has an initializer default and need not be fed. */
typedef struct kiln_io_info {
  const char* name;
  const char* kind;
  kiln_dtype dtype;
  int has_shape;
  size_t rank;
  const int64_t* shape;
  int optional;
} kiln_io_info;

size_t kiln_session_input_count(const kiln_session* session);
size_t kiln_session_output_count(const kiln_session* session);
kiln_status* kiln_session_input_info(const kiln_session* session, size_t index, kiln_io_info* out);
kiln_status* kiln_session_output_info(const kiln_session* session, size_t index, kiln_io_info* out);

/* An input buffer: dense row-major data of `dtype` and `shape`. data_bytes
 * must equal the element count times kiln_dtype_size(dtype); the data is
 * copied before the run. */
typedef struct kiln_tensor_view {
  const char* name;
  kiln_dtype dtype;
  const int64_t* shape;
  size_t rank;
  const void* data;
  size_t data_bytes;
} kiln_tensor_view;

/* Runs the model on the given inputs and returns every graph output, in
 * graph order, in *out (free with kiln_outputs_free). */
kiln_status* kiln_session_run(const kiln_session* session, const kiln_tensor_view* inputs, size_t num_inputs,
                              kiln_outputs** out);
/* Convenience for the common one-float32-input case. */
kiln_status* kiln_session_run_f32(const kiln_session* session, const char* input_name, const float* data,
                                  const int64_t* shape, size_t rank, kiln_outputs** out);

size_t kiln_outputs_count(const kiln_outputs* outputs);
const char* kiln_outputs_name(const kiln_outputs* outputs, size_t index);     /* NULL when out of range */
kiln_dtype kiln_outputs_dtype(const kiln_outputs* outputs, size_t index);
size_t kiln_outputs_rank(const kiln_outputs* outputs, size_t index);
const int64_t* kiln_outputs_shape(const kiln_outputs* outputs, size_t index); /* rank entries */
int64_t kiln_outputs_element_count(const kiln_outputs* outputs, size_t index);
const void* kiln_outputs_data(const kiln_outputs* outputs, size_t index);    /* dense row-major */
size_t kiln_outputs_data_bytes(const kiln_outputs* outputs, size_t index);
/* Copies output `index` converted to float32 into dst (capacity elements). */
kiln_status* kiln_outputs_copy_f32(const kiln_outputs* outputs, size_t index, float* dst, size_t capacity);
void kiln_outputs_free(kiln_outputs* outputs); /* NULL is fine */

#ifdef __cplusplus
}
#endif

#endif /* KILN_KILN_H_ */
