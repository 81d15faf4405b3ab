// SPDX-License-Identifier: GPL-2.0
/*
 * A configurable program with known performance influences, for featprof model
 * (docs/MODELS.md, tests/integration/test_model.py).
 *
 *	configurable [A=0|1,B=0|1,...] [UNIT_US [nofork]]
 *
 * Options A, B, C, D, E (0 or 1, default 0); times in units of UNIT_US microseconds
 * (default 1000), spent spinning on the clock, so they hold under load, in this order;
 * each region instance is a tenth of a unit (regions of 100 us at the default, where
 * featprof's stated uncertainty holds: docs/COVERAGE.md):
 *	region load (feature Core)       20 units, always (200 instances)
 *	region compress (feature A)      30 units when A (300)
 *	region seal (features A, B)      10 units when A and B: the interaction (100)
 *	region cache (feature C)         20 units when C (200)
 *	region encrypt (feature B)       15 units when B, in a forked child the program
 *	                                  waits for (150; in the program itself with nofork)
 *	outside every region              5 units, and 12 more when D: an option that
 *	                                  influences only code outside regions
 *	E                                 no influence
 * So the run's time is 25 + 30 A + 15 B + 10 A B + 20 C + 12 D units plus start-up.
 * A spin ends at the first clock read past its deadline, later if an interrupt or the
 * hypervisor takes the CPU then: with $CONFIGURABLE_TRUTH set, each process appends to
 * that file a JSON line of the time it measured inside each region (its own clock reads
 * just inside the sites), the influences as they happened, and what one clock read
 * costs ("read_ns": each instance's own figure may miss up to two of them).
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "featprof.h"

static long unit_ns = 1000000;
static const char *const names[] = { "load", "compress", "seal", "cache", "encrypt" };
static long long truth[5];	/* ns measured inside each region */

static long long now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static void spin(long tenths)	/* of a unit */
{
	long long end = now() + tenths * unit_ns / 10;

	while (now() < end)
		;
}

/* One region instance's body: a tenth of a unit, its time added to truth[k]. */
static void body(int k)
{
	long long t = now();

	spin(1);
	truth[k] += now() - t;
}

static void report_truth(void)
{
	const char *path = getenv("CONFIGURABLE_TRUTH");
	char line[512];
	int fd, n, k;

	if (!path || (fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644)) < 0)
		return;
	long long t0 = now(), t1;

	for (k = 0; k < 1000; k++)
		t1 = now();
	n = snprintf(line, sizeof(line), "{\"pid\": %d, \"read_ns\": %lld", (int)getpid(),
		     (t1 - t0) / 1000);
	for (k = 0; k < 5; k++)
		n += snprintf(line + n, sizeof(line) - (size_t)n, ", \"%s\": %lld", names[k],
			      truth[k]);
	n += snprintf(line + n, sizeof(line) - (size_t)n, "}\n");
	if (write(fd, line, (size_t)n) != n)
		perror("configurable: truth");
	close(fd);
}

int main(int argc, char **argv)
{
	int opt[5] = { 0 }, i;	/* A B C D E */
	char *s = argc > 1 ? strdup(argv[1]) : NULL, *save = NULL, *kv;

	for (kv = s ? strtok_r(s, ",", &save) : NULL; kv; kv = strtok_r(NULL, ",", &save)) {
		if (strlen(kv) != 3 || kv[0] < 'A' || kv[0] > 'E' || kv[1] != '=' ||
		    (kv[2] != '0' && kv[2] != '1')) {
			fprintf(stderr, "configurable: options are A..E=0|1: '%s'\n", kv);
			return 2;
		}
		opt[kv[0] - 'A'] = kv[2] == '1';
	}
	free(s);
	if (argc > 2)
		unit_ns = atol(argv[2]) * 1000;
	spin(50);	/* outside regions */
	for (i = 0; i < 200; i++) {
		FP_BEGIN(load, "Core");
		body(0);
		FP_END(load);
	}
	for (i = 0; opt[0] && i < 300; i++) {
		FP_BEGIN(compress, "A");
		body(1);
		FP_END(compress);
	}
	for (i = 0; opt[0] && opt[1] && i < 100; i++) {
		FP_BEGIN(seal, "A", "B");
		body(2);
		FP_END(seal);
	}
	for (i = 0; opt[2] && i < 200; i++) {
		FP_BEGIN(cache, "C");
		body(3);
		FP_END(cache);
	}
	if (opt[1]) {
		pid_t pid = argc > 3 && !strcmp(argv[3], "nofork") ? 0 : fork();
		int child = pid == 0 && !(argc > 3 && !strcmp(argv[3], "nofork"));

		if (pid == 0) {
			for (i = 0; i < 150; i++) {
				FP_BEGIN(encrypt, "B");
				body(4);
				FP_END(encrypt);
			}
			if (child) {
				memset(truth, 0, 4 * sizeof(truth[0]));	/* the parent's */
				report_truth();
				_exit(0);
			}
		}
		if (pid < 0 || (pid > 0 && waitpid(pid, NULL, 0) != pid))
			return 1;
	}
	if (opt[3])
		spin(120);
	if (!(argc > 3 && !strcmp(argv[3], "nofork")))
		truth[4] = 0;	/* encrypt: the child's */
	report_truth();
	return 0;
}
