/*
 * telamalloc: memory planning for ML compilers, from C and C++.
 *
 * Install with `capi/install.sh PREFIX` from the repository root (the header, the shared and
 * static libraries, a pkg-config file and a CMake package), then build with
 * `pkg-config --cflags --libs telamalloc` or CMake's `find_package(telamalloc)` and the
 * target telamalloc::telamalloc. The static library needs -lpthread -ldl -lm besides.
 *
 * A problem is a list of buffers: buffer i is live over the time steps [lower[i], upper[i]) and
 * needs size[i] bytes. tm_solve gives every buffer an offset so that buffers live at the same
 * time never share an address and every offset + size fits the capacity (or, with minimize,
 * the smallest peak it can reach). Every layout returned has passed telamalloc's validator.
 *
 * Errors: functions that can fail return a tm_error code; tm_last_error() gives the message of
 * the last failure on the calling thread. No function aborts on bad input.
 */
#ifndef TELAMALLOC_H
#define TELAMALLOC_H

#include <stddef.h>
#include <stdint.h>

/* The version of this header; tm_version() gives the library's. The ABI of 0.MINOR releases is
 * kept within the same MINOR (from 1.0: within the same MAJOR), see CHANGELOG.md. */
#define TELAMALLOC_VERSION_MAJOR 0
#define TELAMALLOC_VERSION_MINOR 1
#define TELAMALLOC_VERSION_PATCH 0
#define TELAMALLOC_VERSION_STRING "0.1.0"
/* One number for #if: MAJOR * 10000 + MINOR * 100 + PATCH. */
#define TELAMALLOC_VERSION \
    (TELAMALLOC_VERSION_MAJOR * 10000 + TELAMALLOC_VERSION_MINOR * 100 + TELAMALLOC_VERSION_PATCH)

#ifdef __cplusplus
extern "C" {
#endif

/* The library's version, "MAJOR.MINOR.PATCH" (TELAMALLOC_VERSION_STRING of the header it was
 * built with); a static string, never freed. */
const char *tm_version(void);

/* Error codes. */
typedef enum tm_error {
    TM_OK = 0,
    TM_ERROR_NULL_ARGUMENT = 1,    /* a required pointer was NULL */
    TM_ERROR_INVALID_PROBLEM = 2,  /* the buffers break a rule (message names buffer and field) */
    TM_ERROR_INVALID_OPTION = 3,   /* an unknown policy or algorithm, a bad limit */
    TM_ERROR_INTERNAL = 4          /* a bug in telamalloc (a caught panic); please report it */
} tm_error;

/* How a solve ended. */
typedef enum tm_status {
    TM_SOLVED = 0,              /* offsets available, validated */
    TM_INFEASIBLE = 1,          /* proven: no layout fits the capacity */
    TM_LIMIT_REACHED = 2,       /* the time or node limit (or cancellation) came first */
    TM_HEURISTIC_EXCEEDED = 3   /* a heuristic's layout needs more than the capacity */
} tm_status;

typedef struct tm_problem tm_problem;
typedef struct tm_result tm_result;

/* A timeout_seconds that asks for no time limit (any negative value does, as poll's -1 does):
 * a fit then runs until it decides, which on a hard problem may take very long. Minimise, spill
 * and memories improve their answer until a limit stops them, so they take it only with a
 * node_limit (TM_ERROR_INVALID_OPTION without one). 0, as tm_options_default and a
 * zero-initialised tm_options leave it, is the library's default limit instead. */
#define TELAMALLOC_NO_TIME_LIMIT (-1.0)

/* Options of a solve; start from tm_options_default. */
typedef struct tm_options {
    uint64_t capacity;        /* bytes; required unless minimize is set */
    int minimize;             /* nonzero: find the smallest peak instead of fitting capacity */
    double timeout_seconds;   /* wall-clock limit, at most 1e9; 0: the library's default
                                 (a fit 60 s, minimise 60 s, spill and memories 9 s);
                                 negative (TELAMALLOC_NO_TIME_LIMIT): none; NaN: an error */
    uint64_t node_limit;      /* search nodes over all restarts and minimise's probes, never
                                 exceeded; 0 means none (minimise with a node limit and no
                                 timeout has no clock: the same answer on any machine) */
    const char *algorithm;    /* NULL or "search" (the hybrid search), or a baseline name:
                                 "tflite", "tflite-micro", "xla", "tvm-greedy-size",
                                 "tvm-greedy-conflicts", "tvm-hill-climb", "start-order",
                                 "contention" */
    const char *policy;       /* NULL or "portfolio" (default), "fixed", "learned" (the built-in model), "WAT", "TWA+", ..., or a model file "PATH.json" */
    uint32_t threads;         /* search threads (0 counts as 1, at most 1024); the answer does not depend on it */
    uint64_t seed;            /* the same seed gives the same answer */
} tm_options;

/* Fills *options with the defaults: no capacity, fit, the library's default limits, the
 * default search. */
void tm_options_default(tm_options *options);

/* A problem of n buffers from arrays of n values each. alignment may be NULL (all 1; otherwise
 * powers of two); fixed_offset may be NULL (all free; otherwise a value of UINT64_MAX marks a
 * free buffer and any other value an offset the allocator must keep). Returns NULL on error
 * (see tm_last_error). Buffers are named b0, b1, ... in messages. */
tm_problem *tm_problem_new(size_t n, const uint64_t *lower, const uint64_t *upper,
                           const uint64_t *size, const uint64_t *alignment,
                           const uint64_t *fixed_offset);

/* Gives problem m memories (named m0, m1, ... in messages, at most 64) of capacity[k] bytes at
 * cost[k] per byte (cost may be NULL: all 0), and buffer i the memories whose bits are set in
 * allowed[i] (bit k: memory k; 0, or allowed NULL: any). tm_solve then places every buffer in
 * one of its memories at the least total cost (size x cost per byte); m = 0 removes them.
 * Returns TM_ERROR_INVALID_PROBLEM (message naming the field) for a capacity of 0, a bit
 * beyond m, or a buffer too large for all its memories. */
tm_error tm_problem_set_memories(tm_problem *problem, size_t m, const uint64_t *capacity,
                                 const uint64_t *cost, const uint64_t *allowed);

/* Sets what keeping buffer i on chip is worth to tm_solve_spill (benefit NULL: its size). */
tm_error tm_problem_set_benefit(tm_problem *problem, const uint64_t *benefit);

/* Frees a problem (NULL is allowed). */
void tm_problem_free(tm_problem *problem);

/* Solves problem under options; on TM_OK, *result holds the outcome (free it with
 * tm_result_free), whatever its status. */
tm_error tm_solve(const tm_problem *problem, const tm_options *options, tm_result **result);

/* When not everything fits options->capacity: keeps the largest total benefit (bytes, unless
 * tm_problem_set_benefit) and moves the rest out; tm_result_memories says which. Never
 * worse than greedy admission; proven best when the assignment search exhausts its tree
 * within the limits (tm_result_proven_best). With memories, the same as tm_solve. */
tm_error tm_solve_spill(const tm_problem *problem, const tm_options *options, tm_result **result);

/* Copies each buffer's memory into out (room for capacity values): its index among the
 * memories (0 for the spill goal's one capacity), or -1 when moved out. Returns how many there
 * are (0 without memories or spill goal, or when not solved); copies nothing if capacity is
 * too small. Offsets (tm_result_offsets) are inside each buffer's memory. */
size_t tm_result_memories(const tm_result *result, int64_t *out, size_t capacity);

/* Nonzero when no better assignment exists (every better one was shown not to fit). */
int tm_result_proven_best(const tm_result *result);

/* The status of a result. */
tm_status tm_result_status(const tm_result *result);

/* The peak (highest offset + size) of the layout, or 0 when there is none. */
uint64_t tm_result_peak(const tm_result *result);

/* LOAD: the most bytes live at one time, a lower bound on any peak. */
uint64_t tm_result_load(const tm_result *result);

/* The best proven lower bound on any peak: LOAD, or more when minimise proved it. */
uint64_t tm_result_lower_bound(const tm_result *result);

/* Where minimise's lower bound comes from ("LOAD", or e.g. "window [0,5) of 7 buffers infeasible
 * at 4"); "" for the other goals. Owned by the result. */
const char *tm_result_lower_bound_source(const tm_result *result);

/* Search nodes the solve expanded (0 for a heuristic). */
uint64_t tm_result_nodes(const tm_result *result);

/* Copies the offsets (one per buffer, in buffer order) into out, which holds capacity values.
 * Returns how many there are (0 when not solved); copies nothing if capacity is too small. */
size_t tm_result_offsets(const tm_result *result, uint64_t *out, size_t capacity);

/* A one-line description of the result ("solved", "not solved: limit reached", ...), valid
 * until the result is freed. */
const char *tm_result_message(const tm_result *result);

/* Frees a result (NULL is allowed). */
void tm_result_free(tm_result *result);

/* The message of the last error on this thread, or "" if none; valid until the next call that
 * fails on this thread. */
const char *tm_last_error(void);

#ifdef __cplusplus
}
#endif

#endif /* TELAMALLOC_H */
