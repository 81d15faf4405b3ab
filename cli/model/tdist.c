// SPDX-License-Identifier: GPL-2.0
/*
 * Student's t distribution, for the diff's Welch test (save.c) and the models' 95%
 * intervals (model.c): P(|T| > t) through the regularized incomplete beta function,
 * and its quantile by bisection.
 */
#include <math.h>

#include "model.h"

/* The continued fraction of the regularized incomplete beta function I_x(a, b), by the
 * modified Lentz method (converges fast for x < (a+1)/(a+b+2)). */
static double beta_cf(double a, double b, double x)
{
	const double tiny = 1e-300;
	double c = 1, d = 1 - (a + b) * x / (a + 1), h, num;
	int m;

	d = 1 / (fabs(d) < tiny ? tiny : d);
	h = d;
	for (m = 1; m <= 300; m++) {
		/* even step: m(b-m)x / ((a+2m-1)(a+2m)) */
		num = m * (b - m) * x / ((a + 2 * m - 1) * (a + 2 * m));
		d = 1 + num * d;
		c = 1 + num / c;
		d = 1 / (fabs(d) < tiny ? tiny : d);
		c = fabs(c) < tiny ? tiny : c;
		h *= d * c;
		/* odd step: -(a+m)(a+b+m)x / ((a+2m)(a+2m+1)) */
		num = -(a + m) * (a + b + m) * x / ((a + 2 * m) * (a + 2 * m + 1));
		d = 1 + num * d;
		c = 1 + num / c;
		d = 1 / (fabs(d) < tiny ? tiny : d);
		c = fabs(c) < tiny ? tiny : c;
		h *= d * c;
		if (fabs(d * c - 1) < 1e-14)
			break;
	}
	return h;
}

static double ibeta(double a, double b, double x)
{
	double front;

	if (x <= 0)
		return 0;
	if (x >= 1)
		return 1;
	front = exp(lgamma(a + b) - lgamma(a) - lgamma(b) + a * log(x) + b * log1p(-x));
	if (x < (a + 1) / (a + b + 2))
		return front * beta_cf(a, b, x) / a;
	return 1 - front * beta_cf(b, a, 1 - x) / b;	/* I_x(a,b) = 1 - I_{1-x}(b,a) */
}

/* P(|T| > t) for Student's t with df degrees of freedom. */
double fpm_t_two_sided(double t, double df)
{
	return ibeta(df / 2, 0.5, df / (df + t * t));
}

/* The t with P(|T| > t) = p, by bisection. */
double fpm_t_quantile(double p, double df)
{
	double lo = 0, hi = 1000;
	int i;

	for (i = 0; i < 200; i++) {
		double mid = (lo + hi) / 2;

		if (fpm_t_two_sided(mid, df) > p)
			lo = mid;
		else
			hi = mid;
	}
	return (lo + hi) / 2;
}

double fpm_t975(int dof)
{
	/* no residual: the stated uncertainty, taken as normal */
	return dof <= 0 ? 1.959964 : fpm_t_quantile(0.05, dof);
}
