// SPDX-License-Identifier: GPL-2.0
/*
 * A small service for the whole-service tests (tests/integration/test_services.py):
 * commands on stdin, one line of answer each.
 *   work N            N instances of service_work [Service]
 *   dlopen PATH N MS  dlopen PATH, then call its lib_work N times, one every MS ms
 *   fork K N [MS]     K children (fork, no exec), each waits MS ms (a worker's life),
 *                     does N service_work, then exits; "forked K", or "forked K, D died"
 *                     when D children did not exit 0 (a probe harmed them)
 *   exec PATH ARG...  exec PATH (the test's next program)
 */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "featprof.h"

static volatile unsigned long sink;

static void service_work(void)
{
	FP_BEGIN(service_work, "Service");
	for (int i = 0; i < 2000; i++)
		sink += (unsigned long)i * 3;
	FP_END(service_work);
}

static void sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	nanosleep(&ts, NULL);
}

int main(void)
{
	char line[4096];

	printf("ready %d\n", (int)getpid());
	fflush(stdout);
	while (fgets(line, sizeof(line), stdin)) {
		char path[2048];
		long n, k, ms;

		if (sscanf(line, "work %ld", &n) == 1) {
			for (long i = 0; i < n; i++)
				service_work();
			printf("worked\n");
		} else if (sscanf(line, "dlopen %2047s %ld %ld", path, &n, &ms) == 3) {
			void *h = dlopen(path, RTLD_NOW);
			int (*work)(int) = h ? (int (*)(int))dlsym(h, "lib_work") : NULL;

			if (!work) {
				printf("dlopen failed: %s\n", dlerror());
				fflush(stdout);
				continue;
			}
			for (long i = 0; i < n; i++) {
				sink += (unsigned long)work((int)i);
				sleep_ms(ms);
			}
			printf("dlopened %ld\n", n);
		} else if (sscanf(line, "fork %ld %ld", &k, &n) == 2) {
			ms = 0;
			sscanf(line, "fork %*d %*d %ld", &ms);
			for (long c = 0; c < k; c++) {
				pid_t p = fork();

				if (p == 0) {
					sleep_ms(ms);
					for (long i = 0; i < n; i++)
						service_work();
					_exit(0);
				}
			}
			int st, died = 0;

			while (wait(&st) > 0)
				died += !WIFEXITED(st) || WEXITSTATUS(st);
			if (died)	/* a probe must never harm the target */
				printf("forked %ld, %d died\n", k, died);
			else
				printf("forked %ld\n", k);
		} else if (!strncmp(line, "exec ", 5)) {
			char *argv[16], *save = NULL, *t;
			int a = 0;

			for (t = strtok_r(line + 5, " \n", &save); t && a < 15;
			     t = strtok_r(NULL, " \n", &save))
				argv[a++] = t;
			argv[a] = NULL;
			fflush(stdout);
			if (a)
				execv(argv[0], argv);
			printf("exec failed\n");
		} else {
			printf("unknown command\n");
		}
		fflush(stdout);
	}
	return 0;
}
