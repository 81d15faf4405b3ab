// SPDX-License-Identifier: GPL-2.0
/*
 * The request parser. json-c's strict mode (JSON_TOKENER_STRICT with UTF-8 validation)
 * refuses comments, trailing commas, leading zeros and bad UTF-8, but still takes single
 * quotes and NaN/Infinity, clamps integers beyond 64 bits, and turns \u0000 into a NUL
 * that cuts a key or a C string short ("status\u0000junk" would run status). A scan of
 * the raw text before json-c refuses those; json-c then parses, and the checks after it
 * hold the request's shape.
 */
#include <json-c/json.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "err.h"
#include "request.h"

int fp_utf8_valid(const char *s, size_t len)
{
	const unsigned char *p = (const unsigned char *)s, *end = p + len;

	while (p < end) {
		unsigned c = *p, need, min, cp;

		if (c < 0x80) {
			p++;
			continue;
		}
		if (c >= 0xc2 && c <= 0xdf)
			need = 1, min = 0x80, cp = c & 0x1f;
		else if (c >= 0xe0 && c <= 0xef)
			need = 2, min = 0x800, cp = c & 0x0f;
		else if (c >= 0xf0 && c <= 0xf4)
			need = 3, min = 0x10000, cp = c & 0x07;
		else
			return 0;
		if ((size_t)(end - p) <= need)
			return 0;
		for (unsigned k = 1; k <= need; k++) {
			if ((p[k] & 0xc0) != 0x80)
				return 0;
			cp = (cp << 6) | (p[k] & 0x3f);
		}
		if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
			return 0;
		p += need + 1;
	}
	return 1;
}

void fp_utf8_cut(char *out, size_t outlen, const char *s)
{
	size_t n = strlen(s);

	if (n > outlen - 1) {
		n = outlen - 1;
		/* back to the start of the character that would be cut */
		while (n > 0 && ((unsigned char)s[n] & 0xc0) == 0x80)
			n--;
	}
	memcpy(out, s, n);
	out[n] = 0;
}

/* What json-c's strict mode lets through: NULL, or why the text is not JSON. */
static const char *raw_check(const char *s, size_t n)
{
	static const char *const words[] = { "true", "false", "null" };
	size_t i, w;
	int in_str = 0;

	for (i = 0; i < n; i++) {
		char c = s[i];

		if (!c)
			return "a NUL byte in the request";
		if (in_str) {
			if (c == '"') {
				in_str = 0;
			} else if (c == '\\' && i + 1 < n) {
				if (s[i + 1] == 'u' && i + 5 < n && !memcmp(s + i + 2, "0000", 4))
					return "a NUL (\\u0000) in a string";
				i++;	/* the escaped character */
			}
			continue;
		}
		if (c == '"') {
			in_str = 1;
			continue;
		}
		if (strchr("{}[]:,-+.0123456789eE \t\r\n", c))
			continue;
		for (w = 0; w < 3; w++)
			if (n - i >= strlen(words[w]) && !memcmp(s + i, words[w], strlen(words[w])))
				break;
		if (w == 3)
			return "not JSON (single quotes, NaN or a bare word)";
		i += strlen(words[w]) - 1;
	}
	return NULL;
}

struct json_object *fp_request_parse(const char *line, size_t len, long long *id, int *id_ok,
				     struct fp_err *e)
{
	struct json_tokener *tok = NULL;
	struct json_object *o = NULL, *v;
	const char *why = raw_check(line, len);
	int64_t n;

	*id_ok = 0;
	if (!why && !fp_utf8_valid(line, len))	/* json-c's own check lets 0xf5.. through */
		why = "not valid UTF-8";
	if (why) {
		fp_fail(e, EINVAL, "malformed request: %s", why);
		return NULL;
	}
	tok = json_tokener_new();
	if (!tok) {
		fp_fail(e, ENOMEM, "out of memory");
		return NULL;
	}
	json_tokener_set_flags(tok, JSON_TOKENER_STRICT | JSON_TOKENER_VALIDATE_UTF8);
	o = json_tokener_parse_ex(tok, line, (int)len);
	if (!o || json_tokener_get_error(tok) != json_tokener_success ||
	    json_tokener_get_parse_end(tok) != len) {
		fp_fail(e, EINVAL, "malformed JSON%s",
			fp_utf8_valid(line, len) ? "" : " (not valid UTF-8)");
		goto bad;
	}
	if (!json_object_is_type(o, json_type_object)) {
		fp_fail(e, EINVAL, "a request is a JSON object");
		goto bad;
	}
	if (!json_object_object_get_ex(o, "id", &v) || !json_object_is_type(v, json_type_int) ||
	    (n = json_object_get_int64(v)) > FP_MAX_ID || n < -FP_MAX_ID ||
	    /* json-c keeps values past INT64_MAX as uint64; get_int64 then clamps */
	    (json_object_get_uint64(v) > (uint64_t)FP_MAX_ID && n >= 0)) {
		fp_fail(e, EINVAL, "'id' must be an integer of magnitude below 2^53");
		goto bad;
	}
	*id = n;
	*id_ok = 1;
	if (!json_object_object_get_ex(o, "verb", &v) ||
	    !json_object_is_type(v, json_type_string)) {
		fp_fail(e, EINVAL, "'verb' must be a string");
		goto bad;
	}
	json_tokener_free(tok);
	return o;
bad:
	json_object_put(o);
	json_tokener_free(tok);
	return NULL;
}
