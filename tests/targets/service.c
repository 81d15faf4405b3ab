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
 *   threads T N       T threads, each does N service_work and exits; "threaded T"
 *   export N          N instances of export_fmt, begun in the library last dlopen'ed
 *                     (lib_begin_export) and ended here: one region across two objects
 *   dlclose           dlclose every handle dlopen gave; "dlclosed K, mapped" or
 *                     "dlclosed K, unmapped": whether the last library is still mapped
 * Or, with arguments "naps N MS": N instances of service_nap [Service], each a sleep of
 * MS ms, back to back (a worker always inside a region), then exit.
 */
#include <dlfcn.h>
#include <pthread.h>
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

static void *worker(void *arg)
{
	long n = (long)arg;

	for (long i = 0; i < n; i++)
		service_work();
	return NULL;
}

static void sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	nanosleep(&ts, NULL);
}

/* Always inside a region: the instance open when a process joins its own target. */
static void naps(long n, long ms)
{
	for (long i = 0; i < n; i++) {
		FP_BEGIN(service_nap, "Service");
		sleep_ms(ms);
		FP_END(service_nap);
	}
}

int main(int argc, char **argv)
{
	void (*begin_export)(void) = NULL;
	static void *handles[4096];
	char line[4096], last[2048] = "";
	int nhandles = 0;

	if (argc == 4 && !strcmp(argv[1], "naps")) {
		naps(atol(argv[2]), atol(argv[3]));
		return 0;
	}
	printf("ready %d\n", (int)getpid());
	fflush(stdout);
	while (fgets(line, sizeof(line), stdin)) {
		char path[2048];
		long n, k, ms;

		if (sscanf(line, "work %ld", &n) == 1) {
			for (long i = 0; i < n; i++)
				service_work();
			printf("worked\n");
		} else if (sscanf(line, "threads %ld %ld", &k, &n) == 2 && k > 0 && k <= 64) {
			pthread_t th[64];

			for (long c = 0; c < k; c++)
				pthread_create(&th[c], NULL, worker, (void *)n);
			for (long c = 0; c < k; c++)
				pthread_join(th[c], NULL);
			printf("threaded %ld\n", k);
		} else if (sscanf(line, "dlopen %2047s %ld %ld", path, &n, &ms) == 3) {
			void *h = dlopen(path, RTLD_NOW);
			int (*work)(int) = h ? (int (*)(int))dlsym(h, "lib_work") : NULL;

			if (!work) {
				printf("dlopen failed: %s\n", dlerror());
				fflush(stdout);
				continue;
			}
			begin_export = (void (*)(void))dlsym(h, "lib_begin_export");
			if (nhandles < 4096)
				handles[nhandles++] = h;
			snprintf(last, sizeof(last), "%s", path);
			for (long i = 0; i < n; i++) {
				sink += (unsigned long)work((int)i);
				sleep_ms(ms);
			}
			printf("dlopened %ld\n", n);
		} else if (!strcmp(line, "dlclose\n")) {
			int closed = nhandles;
			void *h;

			while (nhandles)
				dlclose(handles[--nhandles]);
			begin_export = NULL;
			h = last[0] ? dlopen(last, RTLD_NOW | RTLD_NOLOAD) : NULL;
			if (h)
				dlclose(h);
			printf("dlclosed %d, %s\n", closed, h ? "mapped" : "unmapped");
		} else if (sscanf(line, "export %ld", &n) == 1 && begin_export) {
			for (long i = 0; i < n; i++) {
				begin_export();
				FP_END(export_fmt);
			}
			printf("exported %ld\n", n);
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
