/* SPDX-License-Identifier: GPL-2.0 */
/*
 * One request line of the control protocol, parsed strictly (common/request.c): client
 * input, fuzzed (tests/unit/fuzz_request.c). Also the UTF-8 rule for what goes out.
 */
#ifndef FP_REQUEST_H
#define FP_REQUEST_H

#include <stddef.h>

#include "err.h"

struct json_object;

/* Ids are integers of magnitude below 2^53: exact in every JSON implementation. */
#define FP_MAX_ID ((1LL << 53) - 1)

/*
 * Parses line (len bytes, no newline) as a request: strict JSON (RFC 8259: no comments,
 * single quotes, trailing commas, leading zeros, NaN), valid UTF-8, no NUL in any string
 * or key, an object whose "id" is an integer within FP_MAX_ID and whose "verb" is a
 * string. Returns the object; NULL with a one-line message in msg (*id_ok: whether the
 * message may be answered with the request's id, which *id then holds).
 */
struct json_object *fp_request_parse(const char *line, size_t len, long long *id, int *id_ok,
				     struct fp_err *e);

/* 1 when s[0..len) is valid UTF-8 (no overlongs, no surrogates, at most U+10FFFF). */
int fp_utf8_valid(const char *s, size_t len);
/* Copies s into out (outlen > 0) cut to at most outlen - 1 bytes at a character
 * boundary, so that an echo of client input stays valid UTF-8. */
void fp_utf8_cut(char *out, size_t outlen, const char *s);

#endif
