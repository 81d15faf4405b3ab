// SPDX-License-Identifier: GPL-2.0
/*
 * A C++ program without featprof.h, as a distribution ships one (issue 45): a class
 * template's static member function, a lambda and an exception thrown and caught, each
 * kept out of line, for sample --stacks, list --functions and --function on C++ names
 * (tests/integration/test_names.py).
 *
 *	shipped SECONDS
 *
 * Prints "ready PID", works for SECONDS, then {"run_calls": N, "lambda_calls": N,
 * "throws": N} (JSON): the calls it made itself.
 */
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <stdexcept>
#include <unistd.h>

static volatile unsigned long sink;

namespace shipped {
template <int N> struct Kernel {
	__attribute__((noinline)) static void run(unsigned long n)
	{
		unsigned long x = sink | 1;

		for (unsigned long i = 0; i < n * N; i++) {
			x ^= x << 13;
			x ^= x >> 7;
			x ^= x << 17;
		}
		sink = x;
	}
};

__attribute__((noinline)) void fail(unsigned long i)
{
	if (i % 64 == 0)
		throw std::runtime_error("every 64th");
}
} // namespace shipped

int main(int argc, char **argv)
{
	long secs = argc > 1 ? atol(argv[1]) : 5, calls = 0, lcalls = 0, throws = 0;
	auto lambda = [&lcalls](unsigned long n) __attribute__((noinline)) {
		lcalls++;
		shipped::Kernel<1>::run(n);
	};
	void (*volatile kernel2)(unsigned long) = &shipped::Kernel<2>::run;
	struct timespec ts;
	time_t end;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	end = ts.tv_sec + secs;
	printf("ready %d\n", (int)getpid());
	fflush(stdout);
	for (unsigned long i = 0;; i++) {
		kernel2(20000);	/* two thirds of the time */
		calls++;
		lambda(20000);	/* one third */
		try {
			shipped::fail(i);
		} catch (const std::exception &) {
			throws++;
		}
		clock_gettime(CLOCK_MONOTONIC, &ts);
		if (ts.tv_sec >= end)
			break;
	}
	printf("{\"run_calls\": %ld, \"lambda_calls\": %ld, \"throws\": %ld}\n", calls, lcalls,
	       throws);
	return 0;
}
