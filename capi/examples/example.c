/* Plans the five buffers of datasets/examples/tiny.12.csv at capacity 12 through the C ABI,
 * prints the offsets, and checks the answers a C++ compiler would rely on. Exit code 0 when
 * everything holds. */
#include <stdio.h>
#include <string.h>
#include "telamalloc.h"

static int fail(const char *what) {
    fprintf(stderr, "example: %s: %s\n", what, tm_last_error());
    return 1;
}

int main(void) {
    /* The library loaded is the one this header describes. */
    if (strcmp(tm_version(), TELAMALLOC_VERSION_STRING) != 0) {
        fprintf(stderr, "example: header %s, library %s\n", TELAMALLOC_VERSION_STRING, tm_version());
        return 1;
    }
    printf("telamalloc %s\n", tm_version());

    const uint64_t lower[] = {0, 3, 0, 9, 0};
    const uint64_t upper[] = {3, 9, 9, 21, 21};
    const uint64_t size[] = {4, 4, 4, 4, 4};
    tm_problem *problem = tm_problem_new(5, lower, upper, size, NULL, NULL);
    if (!problem) return fail("tm_problem_new");

    tm_options options;
    tm_options_default(&options);
    options.capacity = 12;
    options.timeout_seconds = 10.0;
    tm_result *result = NULL;
    if (tm_solve(problem, &options, &result) != TM_OK) return fail("tm_solve");
    if (tm_result_status(result) != TM_SOLVED) return fail("not solved at 12");
    uint64_t offsets[5];
    if (tm_result_offsets(result, offsets, 5) != 5) return fail("offsets");
    printf("solved: peak %llu, LOAD %llu, offsets", (unsigned long long)tm_result_peak(result),
           (unsigned long long)tm_result_load(result));
    for (int i = 0; i < 5; i++) printf(" %llu", (unsigned long long)offsets[i]);
    printf("\n");
    tm_result_free(result);

    /* One byte below the optimum is proven infeasible. */
    options.capacity = 11;
    if (tm_solve(problem, &options, &result) != TM_OK) return fail("tm_solve at 11");
    if (tm_result_status(result) != TM_INFEASIBLE) return fail("11 not proven infeasible");
    printf("at 11: %s\n", tm_result_message(result));
    tm_result_free(result);

    /* A production heuristic, minimising the peak. */
    options.minimize = 1;
    options.algorithm = "tflite";
    if (tm_solve(problem, &options, &result) != TM_OK) return fail("tm_solve tflite");
    printf("tflite: peak %llu\n", (unsigned long long)tm_result_peak(result));
    tm_result_free(result);

    /* Bad input is an error code with a message, never a crash. */
    options.algorithm = "nonsense";
    if (tm_solve(problem, &options, &result) != TM_ERROR_INVALID_OPTION) return fail("bad algorithm");
    printf("bad algorithm: %s\n", tm_last_error());
    const uint64_t bad_upper[] = {3, 2, 9, 21, 21}; /* b1: lower 3 >= upper 2 */
    if (tm_problem_new(5, lower, bad_upper, size, NULL, NULL) != NULL) return fail("bad problem");
    printf("bad problem: %s\n", tm_last_error());
    if (strstr(tm_last_error(), "buffers[1]") == NULL) return fail("message names the buffer");

    tm_problem_free(problem);
    return 0;
}
