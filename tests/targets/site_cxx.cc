// SPDX-License-Identifier: GPL-2.0
/* Probe-ABI test target, C++: RAII scope through an exception, templates. */
#include <cstdio>
#include <cstdlib>
#include <stdexcept>

#include "featprof.h"

template <class T> static T scaled(T x)
{
	FP_SCOPE(tmpl_scale, "Templates");
	if (x > T(100))
		throw std::runtime_error("too large");
	return x * T(2);
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? std::atol(argv[1]) : 1;
	double acc = 0;

	for (long i = 0; i < n; i++) {
		try {
			acc += scaled<int>((int)(i % 200)) + scaled<double>(1.5);
		} catch (const std::exception &) {
			acc -= 1;
		}
	}
	std::printf("%f\n", acc);
	return 0;
}
