/* mkrt: the mkdsl host runtime's C API.
 *
 * Loads a megakernel built by `mkdsl build F.mk -o F.ptx` (the PTX, or a cubin, plus the metadata
 * sidecar F.meta.json), allocates its arenas on one GPU, loads weights from safetensors (repacked
 * to the layouts the .mk declares) and runs decode steps. The CUDA driver is loaded at run time
 * (dlopen "libcuda.so.1"), so a program linking mkrt runs, and reports a clear error, on a
 * machine without one.
 *
 *   char err[1024];
 *   mkrt_model* m = mkrt_open("tiny.ptx", "tiny.meta.json", 0, err, sizeof err);
 *   if (!m) { fprintf(stderr, "%s\n", err); return 1; }
 *   if (mkrt_load_weights(m, "model.safetensors") != MKRT_OK) { ... mkrt_last_error(m) ... }
 *   int32_t token = 1, pos = 0;
 *   mkrt_set_input(m, "token", MKRT_I32, 0, NULL, &token, sizeof token);   // a scalar: rank 0
 *   mkrt_set_input(m, "pos", MKRT_I32, 0, NULL, &pos, sizeof pos);
 *   if (mkrt_step(m) != MKRT_OK) { ... mkrt_last_error(m) ... }
 *   float logits[256];
 *   mkrt_read_output(m, "logits", logits, 256);
 *   mkrt_close(m);
 *
 * Every function returns a status (or NULL) instead of crashing on bad input: missing or
 * truncated files, malformed metadata, a weight missing or of the wrong dtype/shape (named with
 * its safetensors name and the .mk line that declares it), an input out of its bound, a PTX the
 * driver rejects (with the JIT's log), a kernel that does not fit the device, a step whose waits
 * timed out (the kernel's error record: task, SM, counter, expected and seen counts). The message
 * of the last failure is mkrt_last_error.
 *
 * A model is not thread-safe: call it from one thread at a time. Several models may be open at
 * once (each has its own CUDA context).
 *
 * A program of several steps (a decode step and a prefill step) is one kernel with an entry per
 * step, all over the same weights and state (KV cache): mkrt_select_step picks the step that the
 * per-step functions (inputs, outputs, mkrt_step, bounds, traces, steps run, timing) address.
 */
#ifndef MKRT_H
#define MKRT_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct mkrt_model mkrt_model;

typedef enum mkrt_status {
  MKRT_OK = 0,
  MKRT_ERR_ARGUMENT = 1, /* a null pointer, an unknown name, a wrong count, a value out of range */
  MKRT_ERR_FILE = 2,     /* a file missing, unreadable or malformed (PTX, metadata, safetensors) */
  MKRT_ERR_WEIGHTS = 3,  /* a weight missing from the checkpoint, or of the wrong dtype or shape */
  MKRT_ERR_DRIVER = 4,   /* no CUDA driver or device, or a CUDA call failed */
  MKRT_ERR_KERNEL = 5,   /* the driver rejected the kernel (JIT log in the message), or it does not
                            fit this device (architecture, shared memory, co-resident blocks), or it
                            faulted during a step */
  MKRT_ERR_TIMEOUT = 6,  /* a wait in the kernel timed out; the message names task, SM and counter */
  MKRT_ERR_STATE = 7     /* no weights loaded yet, or an earlier step failed (mkrt_reset first) */
} mkrt_status;

typedef enum mkrt_dtype { MKRT_BF16 = 0, MKRT_F16 = 1, MKRT_F32 = 2, MKRT_I32 = 3, MKRT_BOOL = 4 } mkrt_dtype;

/* What a step input or output is for, as the compiler found it in the program (never from its
 * name): the token (an i32 scalar indexing a weight's rows, the embedding), the position (an i32
 * scalar indexing state, the KV cache), the logits (the first f32 vector output) and the next token
 * (the first i32 scalar output); for a prefill step also the tokens (an i32 tensor whose elements
 * index a weight's rows: the chunk's tokens) and the row (an i32 scalar indexing activations' rows
 * only: the chunk's last real token). A decode loop feeds and reads these. */
typedef enum mkrt_role {
  MKRT_ROLE_NONE = 0,
  MKRT_ROLE_TOKEN = 1,
  MKRT_ROLE_POSITION = 2,
  MKRT_ROLE_LOGITS = 3,
  MKRT_ROLE_NEXT_TOKEN = 4,
  MKRT_ROLE_TOKENS = 5,
  MKRT_ROLE_ROW = 6
} mkrt_role;

/* A step input or output. Pointers stay valid while the model is open. */
typedef struct mkrt_tensor_info {
  const char* name;      /* the step's parameter or result name: "token", "logits" */
  const char* tensor;    /* the kernel tensor bound to it ("logits.13"); "" for a scalar input */
  mkrt_dtype dtype;
  int rank;              /* 0 for a scalar */
  const int64_t* shape;  /* rank entries */
  size_t elements;       /* product of the shape; 1 for a scalar */
  mkrt_role role;
} mkrt_tensor_info;

/* Opens a kernel on CUDA device `device`: reads and checks both files, loads the driver, creates a
 * context, loads the module (PTX is JIT-compiled by the driver), checks that the kernel fits the
 * device, allocates and zeroes the arenas, the sync counters and the error record. Returns NULL on
 * failure with the reason in `err` (truncated to errlen - 1 bytes; err may be NULL). */
mkrt_model* mkrt_open(const char* ptx_path, const char* metadata_path, int device, char* err, size_t errlen);
/* The same from memory: the PTX text (or cubin) and the metadata JSON as a compiler hands them
 * over (mk::compile's artifact.assembly and metadataJson), without temporary files. Neither needs a
 * terminating NUL; messages call them "the in-memory PTX" and "the in-memory metadata". */
mkrt_model* mkrt_open_data(const char* ptx, size_t ptx_len, const char* metadata_json, size_t meta_len, int device,
                           char* err, size_t errlen);
/* Whether a kernel could be opened on `device` at all: the driver loads (libcuda.so.1, or
 * $MKRT_CUDA_LIBRARY), initializes, and has that device. MKRT_OK, else the reason in `err`
 * ("no CUDA driver (libcuda.so.1) on this machine: ..."). Cheap: for failing before a long compile. */
mkrt_status mkrt_probe_device(int device, char* err, size_t errlen);
/* The status of this thread's last mkrt_open / mkrt_open_data (MKRT_OK when it returned a model). */
mkrt_status mkrt_open_status(void);
/* Frees everything; NULL is fine. */
void mkrt_close(mkrt_model* model);

/* Loads every weight from a .safetensors file, a directory with model.safetensors.index.json
 * (sharded, as Hugging Face ships them) or one with model.safetensors: assembled from its sources
 * (concatenated or interleaved), converted to the declared dtype (round to nearest even) and
 * repacked to the declared layout, exactly as the CPU interpreter assembles them. */
mkrt_status mkrt_load_weights(mkrt_model* model, const char* path);
/* Deterministic random weights, identical to `mkdsl run --device cpu --random-weights SEED`. */
mkrt_status mkrt_random_weights(mkrt_model* model, uint64_t seed);

/* Sets step input `name` for the following steps; it keeps its value until set again (mkrt_reset
 * keeps it too). `dtype`, `rank` and `shape` must be the input's (mkrt_input_info; a scalar has
 * rank 0 and `shape` may be NULL), and `data` holds its `bytes` = elements * element size bytes in
 * logical row-major order (i32 as int32_t, f32 as float; the runtime lays a tensor out as the
 * kernel stores it). A scalar outside its bound (mkrt_input_bound: a position past the KV cache, a
 * token past the embedding's rows) is refused with MKRT_ERR_ARGUMENT. */
mkrt_status mkrt_set_input(mkrt_model* model, const char* name, mkrt_dtype dtype, int rank, const int64_t* shape,
                           const void* data, size_t bytes);
/* Runs one step (one launch of the megakernel's selected entry) on the inputs set; every input
 * must have been set once. The first step is epoch 1; each step of a program of several has its
 * own sync counters and so its own epoch (its launches since open / reset). After a failed step
 * (MKRT_ERR_TIMEOUT, MKRT_ERR_KERNEL) the model refuses further steps, of every step, until
 * mkrt_reset: the sync counters no longer match the epoch, and the shared state may be
 * half-written. */
mkrt_status mkrt_step(mkrt_model* model);
/* Zeroes state (KV cache) and, for every step, its activations, sync counters and error record;
 * each step's next launch is epoch 1 again. Weights and input values stay. */
mkrt_status mkrt_reset(mkrt_model* model);

/* The program's steps. The model starts on the program's first step (entry mk_step); the others
 * (entries such as mk_step_prefill) share its weights and state but have their own inputs,
 * outputs, activations, counters, epoch and trace. Inputs keep their values per step across
 * selections. */
size_t mkrt_num_steps(const mkrt_model* model);                    /* 1 for a program of one step */
const char* mkrt_step_name(const mkrt_model* model, size_t index); /* "" when out of range or unnamed */
/* Selects the step named `name` ("prefill"); MKRT_ERR_ARGUMENT naming the steps there are when the
 * program has none of that name. */
mkrt_status mkrt_select_step(mkrt_model* model, const char* name);
/* The selected step's name ("" for metadata that names none). */
const char* mkrt_selected_step(const mkrt_model* model);

/* Copies a step output (after a step) as floats, in logical row-major order; n must equal its
 * element count. */
mkrt_status mkrt_read_output(mkrt_model* model, const char* name, float* out, size_t n);
/* The same for an i32 or bool output, exactly. */
mkrt_status mkrt_read_output_i32(mkrt_model* model, const char* name, int32_t* out, size_t n);

size_t mkrt_num_inputs(const mkrt_model* model);
size_t mkrt_num_outputs(const mkrt_model* model);
mkrt_status mkrt_input_info(const mkrt_model* model, size_t index, mkrt_tensor_info* info);
mkrt_status mkrt_output_info(const mkrt_model* model, size_t index, mkrt_tensor_info* info);

/* The exclusive upper bound of step input `index` from the metadata ("bound"): its values must lie
 * in [0, bound) or the kernel would index out of bounds (the token indexes the embedding's rows,
 * the position the KV cache). -1 when the kernel states none. */
mkrt_status mkrt_input_bound(const mkrt_model* model, size_t index, int64_t* bound);
/* MKRT_OK when `value` is in input `index`'s bound; else MKRT_ERR_ARGUMENT with mkrt_last_error
 * saying why, e.g. "pos 4096 is past the KV cache: positions 0 .. 4095 (max_seq = 4096)". */
mkrt_status mkrt_check_input(mkrt_model* model, size_t index, int64_t value);

/* The config the kernel was built for ("tiny", "llama_3_2_1b") and its evaluated fields
 * (metadata "config_values"; booleans as 0 and 1). Names stay valid while the model is open.
 * mkrt_config_value gives MKRT_ERR_ARGUMENT for a name the config does not have. */
const char* mkrt_config_name(const mkrt_model* model);
size_t mkrt_num_config_values(const mkrt_model* model);
mkrt_status mkrt_config_value_at(const mkrt_model* model, size_t index, const char** name, double* value);
mkrt_status mkrt_config_value(const mkrt_model* model, const char* name, double* value);
/* Where the .mk program declares a weight or state tensor ("examples/llama.mk:91:12"); "" when
 * unknown (no such tensor, or metadata without "declared_at"). */
const char* mkrt_tensor_declared_at(const mkrt_model* model, const char* tensor);

/* How long one wait in the kernel may spin before it records an error and the kernel exits
 * (default 2e9 ns = 2 s). Must be > 0. */
mkrt_status mkrt_set_timeout_ns(mkrt_model* model, uint64_t ns);

/* Tracing. A kernel built with `mkdsl build --trace` takes a 9th parameter, `trace`: on every step
 * each queue entry (a record, SM 0's entries first) gets MKRT_TRACE_RECORD_WORDS u64 words, times
 * from the GPU's nanosecond global timer: [0] start (before its waits), [1] ready (waits done),
 * [2] end (body done, signals issued), [3] (node << 32) | sm, [4] nanoseconds the compute threads
 * waited for the task's weight tiles in the ring, [5] and [6] when the loader warp issued the
 * task's first and last tile copy (0 for a task that streams no weights), [7] nanoseconds the
 * loader waited for free ring slots for them. The runtime allocates the records and zeroes them
 * before each step (a record still all zero was not reached). runtime/trace.h turns them into a
 * Chrome trace and a summary. */
#define MKRT_TRACE_RECORD_WORDS 8

/* A node of the op graph, as the records' node ids name it: "qkv_rope_append#1", its op
 * "qkv_rope_append", its task count and the bytes the compiler estimates its tasks move;
 * bytes_exact is 0 when they are an upper bound (a loop whose trip count is known only at run
 * time, counted over the whole region it may read), else 1. */
typedef struct mkrt_trace_node {
  const char* name;
  const char* op;
  int64_t tasks;
  int64_t bytes;
  int32_t bytes_exact;
} mkrt_trace_node;

/* 1 when the kernel was built with --trace, else 0. */
int mkrt_is_traced(const mkrt_model* model);
/* The number of trace records (0 for a kernel built without --trace). */
size_t mkrt_trace_records(const mkrt_model* model);
/* The nodes the records' node ids index (0 without --trace); pointers stay valid while the model
 * is open. */
size_t mkrt_num_trace_nodes(const mkrt_model* model);
mkrt_status mkrt_trace_node_info(const mkrt_model* model, size_t node, mkrt_trace_node* info);
/* Copies the last step's records (also of a step that timed out): `count` must be
 * mkrt_trace_records * MKRT_TRACE_RECORD_WORDS. MKRT_ERR_ARGUMENT for a kernel built without
 * --trace ("the kernel was built without --trace: rebuild it with mkdsl build --trace"),
 * MKRT_ERR_STATE before the first step (after open or mkrt_reset). */
mkrt_status mkrt_read_trace(mkrt_model* model, uint64_t* words, size_t count);

/* The message of the last failed call on this model ("" if none). Valid until the next call. */
const char* mkrt_last_error(const mkrt_model* model);
/* The selected step's launches since open / reset (its last epoch). */
uint64_t mkrt_steps_run(const mkrt_model* model);
/* GPU time of the selected step's last launch in milliseconds (CUDA events around cuLaunchKernel). */
double mkrt_last_step_ms(const mkrt_model* model);
/* "NVIDIA H200 (sm_90, 132 SMs)". */
const char* mkrt_device_description(const mkrt_model* model);

#ifdef __cplusplus
}  /* extern "C" */
#endif

#endif /* MKRT_H */
