// SPDX-License-Identifier: GPL-2.0
/*
 * What modules above read and set of a target (targets/target.h): its fields stay in
 * target_impl.h, private to daemon/targets/.
 */
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "target_impl.h"


pid_t fp_target__pid(const struct fp_target *t)
{
	return t->pid;
}

const char *fp_target__comm(const struct fp_target *t)
{
	return t->comm;
}

const struct fp_catalog *fp_target__catalog(const struct fp_target *t)
{
	return t->cat;
}

bool fp_target__exited(const struct fp_target *t)
{
	return t->exited;
}

uint64_t fp_target__exited_ns(const struct fp_target *t)
{
	return t->exited_ns;
}

unsigned long long fp_target__start_time(const struct fp_target *t)
{
	return t->start_time;
}

uint64_t fp_target__made_ns(const struct fp_target *t)
{
	return t->made_ns;
}

int fp_target__pidfd(const struct fp_target *t)
{
	return t->pidfd;
}

int fp_target__group(const struct fp_target *t)
{
	return t->group;
}

uid_t fp_target__owner(const struct fp_target *t)
{
	return t->owner;
}

void fp_target__set_owner(struct fp_target *t, uid_t owner)
{
	t->owner = owner;
}

int fp_target__attached_sites(const struct fp_target *t)
{
	return t->attached_sites;
}

int fp_target__ip_regions(const struct fp_target *t)
{
	return t->ip_regions;
}

const uint8_t *fp_target__enabled(const struct fp_target *t)
{
	return t->enabled;
}

uint64_t fp_target__unmatched_allowed(const struct fp_target *t)
{
	return t->unmatched_allowed;
}

uint64_t fp_target__enabled_at_ns(const struct fp_target *t)
{
	return t->enabled_at_ns;
}

bool fp_target__shielded(const struct fp_target *t)
{
	return t->use_opt;
}

struct fp_inproc *fp_target__inproc(const struct fp_target *t)
{
	return t->ip;
}

const struct fp_wants *fp_target__wants(const struct fp_target *t)
{
	return &t->wants;
}

int fp_target__update_wants(struct fp_target *t, const struct fp_wants *names, bool on)
{
	return fp_wants_update(&t->wants, names, on);
}

void fp_target__set_file_skips_ip(struct fp_target *t, bool skip)
{
	t->file_skips_ip = skip;
}

struct fp_proc *fp_target__proc(const struct fp_target *t)
{
	return t->proc;
}

struct featprof_bpf *fp_target__bpf(const struct fp_target *t)
{
	return t->skel;
}

int fp_target__slot(const struct fp_target *t)
{
	return t->slot;
}

int fp_target__rbase(const struct fp_target *t)
{
	return t->rbase;
}

bool fp_target__ts_map(const struct fp_target *t)
{
	return t->ts_map;
}

bool fp_target__multi(const struct fp_target *t)
{
	return t->multi;
}

const uint8_t *fp_target__ip_on(const struct fp_target *t)
{
	return t->ip_on;
}

const uint64_t *fp_target__region_mask(const struct fp_target *t)
{
	return t->region_mask;
}

void fp_target__set_shielded(struct fp_target *t, bool shielded)
{
	t->use_opt = shielded;
}

void fp_target__set_ext(struct fp_target *t, enum fp_target_ext_kind kind,
			const struct fp_target_ext *ops, void *data)
{
	t->ext_ops[kind] = ops;
	t->ext[kind] = data;
}

void *fp_target__ext(const struct fp_target *t, enum fp_target_ext_kind kind)
{
	return t->ext[kind];
}
