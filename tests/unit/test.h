/* SPDX-License-Identifier: GPL-2.0 */
/* Minimal assertions that say what differed. */
#ifndef FP_TEST_H
#define FP_TEST_H
#include <stdio.h>
#include <string.h>

static int test_failures, test_checks;

#define CHECK(cond, ...)                                                                   \
	do {                                                                               \
		test_checks++;                                                             \
		if (!(cond)) {                                                             \
			test_failures++;                                                   \
			fprintf(stderr, "  FAILED %s:%d: %s: ", __FILE__, __LINE__, #cond); \
			fprintf(stderr, __VA_ARGS__);                                      \
			fprintf(stderr, "\n");                                             \
		}                                                                          \
	} while (0)
#define CHECK_INT(a, b)                                                                    \
	CHECK((long long)(a) == (long long)(b), "%s = %lld, expected %lld", #a,             \
	      (long long)(a), (long long)(b))
#define CHECK_STR(a, b)                                                                    \
	CHECK((a) && !strcmp((a), (b)), "%s = '%s', expected '%s'", #a, (a) ? (a) : "(null)", \
	      (b))

#define TEST_DONE(name)                                                                    \
	do {                                                                               \
		printf("%s: %d checks, %d failed\n", name, test_checks, test_failures);    \
		return test_failures ? 1 : 0;                                              \
	} while (0)
#endif
