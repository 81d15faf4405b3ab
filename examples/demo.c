// SPDX-License-Identifier: GPL-2.0
/*
 * featprof-demo: a small multi-threaded "block store" with configurable features, the
 * built-in target of `make demo`. Worker threads take blocks of generated data and,
 * depending on the configuration:
 *   Cache        look the block up in a hash cache first (a hit skips the rest; three
 *                blocks in four come from a working set that the cache keeps: 71% of
 *                lookups hit, and 2 threads do 3.6x the blocks with it than without:
 *                featprof run -- featprof-demo -s 2; featprof-demo -s 3 [-C])
 *   Compression  run-length + delta encode it (level 1-9: passes over the block)
 *   Checksum     CRC-32 of the output; inside compression it checksums each pass,
 *                an interaction region FR(Compression, Checksum)
 *   Encryption   xorshift keystream over the output; nested inside Compression when
 *                both are on (the region "seal" is FR(Compression, Encryption))
 *
 * usage: featprof-demo [-t THREADS] [-s SECONDS] [-c LEVEL] [-k] [-e] [-C] [-q]
 *   -t threads (default: one per CPU, 2 to 64),
 *   -c compression level (0 = off), -k checksum, -e encryption, -C cache,
 *   -s 0 runs until killed, -q prints nothing.
 */
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "featprof.h"

FP_SCOPE_DEFINE(cache_lookup);
FP_SCOPE_DEFINE(crc);

#define BLOCK 4096
#define CACHE_SLOTS 4096	/* a power of two: slots by the key's top hash bits */
#define WORKING_SET 300		/* blocks each thread sees again and again */

static int level = 3, use_crc = 1, use_enc = 1, use_cache = 1, quiet;
static volatile sig_atomic_t stop;
static uint32_t crc_table[256];

struct cache_slot {
	pthread_mutex_t lock;
	uint64_t key;
	uint32_t crc;
};
static struct cache_slot cache[CACHE_SLOTS];

static void crc_init(void)
{
	for (uint32_t i = 0; i < 256; i++) {
		uint32_t c = i;

		for (int k = 0; k < 8; k++)
			c = c & 1 ? 0xedb88320u ^ (c >> 1) : c >> 1;
		crc_table[i] = c;
	}
}

static uint32_t crc32_block(const uint8_t *p, size_t n)
{
	FP_SCOPE(crc, "Checksum");
	uint32_t c = 0xffffffffu;

	for (size_t i = 0; i < n; i++)
		c = crc_table[(c ^ p[i]) & 0xff] ^ (c >> 8);
	return c ^ 0xffffffffu;
}

/* A key's slot: Fibonacci hashing, so that the threads' keys spread over the slots. */
static size_t slot_of(uint64_t key)
{
	return (size_t)((key * 0x9e3779b97f4a7c15ull) >> 52) & (CACHE_SLOTS - 1);
}

static int cache_lookup(uint64_t key, uint32_t *crc_out)
{
	FP_SCOPE(cache_lookup, "Cache");
	struct cache_slot *s = &cache[slot_of(key)];
	int hit;

	pthread_mutex_lock(&s->lock);
	hit = s->key == key;
	if (hit)
		*crc_out = s->crc;
	pthread_mutex_unlock(&s->lock);
	return hit;
}

static void cache_store(uint64_t key, uint32_t crc)
{
	struct cache_slot *s = &cache[slot_of(key)];

	FP_BEGIN(cache_store, "Cache");
	pthread_mutex_lock(&s->lock);
	s->key = key;
	s->crc = crc;
	pthread_mutex_unlock(&s->lock);
	FP_END(cache_store);
}

static void encrypt(uint8_t *p, size_t n, uint64_t key)
{
	uint64_t x = key | 1;

	for (size_t i = 0; i < n; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		p[i] ^= (uint8_t)x;
	}
}

/* Delta + run-length passes; returns the output length. */
static size_t compress_block(const uint8_t *in, size_t n, uint8_t *out, uint64_t key)
{
	static __thread uint8_t tmp[2 * BLOCK + 16];
	size_t len = n;

	FP_BEGIN(compress, "Compression");
	memcpy(tmp, in, n);
	for (int pass = 0; pass < level; pass++) {
		size_t o = 0;

		for (size_t i = 0; i < len;) {
			size_t run = 1;

			while (i + run < len && run < 255 && tmp[i + run] == tmp[i])
				run++;
			out[o++] = (uint8_t)run;
			out[o++] = (uint8_t)(tmp[i] - (i ? tmp[i - 1] : 0));
			i += run;
		}
		len = o < 2 * BLOCK ? o : 2 * BLOCK;
		memcpy(tmp, out, len);
		if (use_crc) {
			FP_BEGIN(compress_verify, "Compression", "Checksum");
			(void)crc32_block(out, len);
			FP_END(compress_verify);
		}
	}
	if (use_enc) {
		FP_BEGIN(seal, "Compression", "Encryption");
		encrypt(out, len, key);
		FP_END(seal);
	}
	FP_END(compress);
	return len;
}

static void make_block(uint8_t *b, uint64_t seed)
{
	uint64_t x = seed * 0x9e3779b97f4a7c15ULL + 1;

	for (size_t i = 0; i < BLOCK; i++) {
		if ((i & 63) == 0) {
			x ^= x << 13;
			x ^= x >> 7;
			x ^= x << 17;
		}
		b[i] = (uint8_t)(x >> ((i & 7) * 8)) & 0xf0; /* compressible runs */
	}
}

static void *worker(void *arg)
{
	uint64_t id = (uint64_t)(uintptr_t)arg, n = 0;
	static __thread uint8_t in[BLOCK], out[2 * BLOCK + 16];
	unsigned long *done = malloc(sizeof(*done));

	while (!stop) {
		/* three blocks in four come from the thread's working set, which the cache
		 * keeps (most of those lookups hit: the Cache saves their time); the fourth
		 * is new each time */
		uint64_t key = n % 4 == 3 ? (id << 32) | (1ull << 31) | (n & 0x7fffffff)
					  : (id << 32) | (n % WORKING_SET);
		uint32_t c;
		size_t len = BLOCK;

		n++;
		if (use_cache && cache_lookup(key, &c))
			continue;
		make_block(in, key);
		if (level > 0) {
			len = compress_block(in, BLOCK, out, key);
		} else {
			memcpy(out, in, BLOCK);
			if (use_enc) {
				FP_BEGIN(encrypt_raw, "Encryption");
				encrypt(out, len, key);
				FP_END(encrypt_raw);
			}
		}
		c = use_crc ? crc32_block(out, len) : 0;
		if (use_cache)
			cache_store(key, c);
	}
	*done = (unsigned long)n;
	return done;
}

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

int main(int argc, char **argv)
{
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	/* one thread per CPU by default (2 to 64) */
	int threads = cpus < 2 ? 2 : cpus > 64 ? 64 : (int)cpus, seconds = 0, opt;
	unsigned long total = 0;
	pthread_t tid[64];

	while ((opt = getopt(argc, argv, "t:s:c:keCq")) != -1) {
		switch (opt) {
		case 't': threads = atoi(optarg); break;
		case 's': seconds = atoi(optarg); break;
		case 'c': level = atoi(optarg); break;
		case 'k': use_crc = !use_crc; break;
		case 'e': use_enc = !use_enc; break;
		case 'C': use_cache = !use_cache; break;
		case 'q': quiet = 1; break;
		default:
			fprintf(stderr, "usage: featprof-demo [-t THREADS] [-s SECONDS] [-c LEVEL] "
				"[-k] [-e] [-C] [-q]\n");
			return 2;
		}
	}
	if (threads < 1 || threads > 64 || level < 0 || level > 9) {
		fprintf(stderr, "featprof-demo: threads 1-64, level 0-9\n");
		return 2;
	}
	crc_init();
	for (int i = 0; i < CACHE_SLOTS; i++) {
		pthread_mutex_init(&cache[i].lock, NULL);
		cache[i].key = UINT64_MAX;
	}
	signal(SIGTERM, on_signal);
	signal(SIGINT, on_signal);
	if (!quiet)
		printf("featprof-demo: pid %d, %d threads, compression %d, checksum %s, "
		       "encryption %s, cache %s\n", (int)getpid(), threads, level,
		       use_crc ? "on" : "off", use_enc ? "on" : "off", use_cache ? "on" : "off");
	fflush(stdout);
	for (int i = 0; i < threads; i++)
		pthread_create(&tid[i], NULL, worker, (void *)(uintptr_t)i);
	if (seconds > 0) {
		sleep((unsigned)seconds);
		stop = 1;
	}
	for (int i = 0; i < threads; i++) {
		void *r;

		pthread_join(tid[i], &r);
		total += *(unsigned long *)r;
		free(r);
	}
	if (!quiet)
		printf("featprof-demo: %lu blocks\n", total);
	return 0;
}
