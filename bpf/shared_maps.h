/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The maps of a target's object (bpf/featprof.bpf.c) that the sampler's object
 * (bpf/sample.bpf.c) reads too, defined once: the daemon gives the sampler the target's
 * own by descriptor (bpf_map__reuse_fd), so both objects must declare them alike.
 *  - tstate: a thread's regions open and its figures (task storage, from 5.11);
 *  - tstate_map: the same keyed by thread id where there is no task storage (TS_MAP: a
 *    hash map allocated at run time, which no perf_event program may read before 6.1);
 *  - region_enabled: per region entry its enable generation, 0 while disabled;
 *  - ip_threads: per thread id the block of its in-process runtime.
 */
#ifndef FP_SHARED_MAPS_H
#define FP_SHARED_MAPS_H

struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct fp_tstate);
} tstate SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, 16384);
	__type(key, __u32);
	__type(value, struct fp_tstate);
} tstate_map SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u32);
} region_enabled SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, 16384);
	__type(key, __u32);
	__type(value, struct fp_ip_thread);
} ip_threads SEC(".maps");

#endif
