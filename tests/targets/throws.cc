// SPDX-License-Identifier: GPL-2.0
/*
 * C++ that throws through a plain function (tests/integration/test_functions.py
 * t_function_cxx): function regions refuse it, because an exception that unwinds
 * through a return probe's trampoline ends in std::terminate. "ready PID", a line on
 * stdin, then "caught N".
 */
#include <cstdio>
#include <stdexcept>
#include <unistd.h>

extern "C" __attribute__((noinline)) void thrower(int i)
{
	if (i % 2)
		throw std::runtime_error("odd");
}

extern "C" __attribute__((noinline)) void middle(int i)
{
	thrower(i);
	asm volatile("");
}

int main()
{
	char line[16];
	int caught = 0;

	printf("ready %d\n", (int)getpid());
	fflush(stdout);
	if (!fgets(line, sizeof(line), stdin))
		return 1;
	for (int i = 0; i < 10; i++) {
		try {
			middle(i);
		} catch (const std::exception &) {
			caught++;
		}
	}
	printf("caught %d\n", caught);
	fflush(stdout);
	return 0;
}
