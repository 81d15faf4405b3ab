// SPDX-License-Identifier: GPL-2.0
/*
 * The running kernel's mechanisms, by probing its BTF rather than its version number:
 * an enumerator in enum bpf_func_id, bpf_map_type or bpf_attach_type exists exactly when
 * the kernel implements that helper, map or attach type; a btf_trace_<event> typedef,
 * when a tp_btf program can attach to the event. What featprofd uses for each part of its
 * work, and for a part the kernel lacks, what is missing and from which kernel on.
 */
#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include <json-c/json.h>
#include <stdio.h>
#include <string.h>
#include <sys/utsname.h>

#include "kernel.h"

/* Whether the enum named en has an enumerator named name. */
static int has_enum_value(const struct btf *btf, const char *en, const char *name)
{
	int id = btf__find_by_name_kind(btf, en, BTF_KIND_ENUM), i;
	const struct btf_type *t;
	const struct btf_enum *e;

	if (id <= 0)
		return 0;
	t = btf__type_by_id(btf, (__u32)id);
	e = btf_enum(t);
	for (i = 0; i < btf_vlen(t); i++)
		if (!strcmp(btf__name_by_offset(btf, e[i].name_off), name))
			return 1;
	return 0;
}

static void part(struct json_object *use, struct json_object *lack, const char *key, int ok,
		 const char *what, const char *why)
{
	json_object_object_add(ok ? use : lack, key, json_object_new_string(ok ? what : why));
}

int fp_kernel_missing(char *msg, size_t msglen)
{
	static const struct {
		const char *en, *name, *what;
	} need[] = {
		{ "bpf_map_type", "BPF_MAP_TYPE_TASK_STORAGE",
		  "task storage for tracing programs (Linux 5.11)" },
		{ "bpf_func_id", "BPF_FUNC_get_attach_cookie",
		  "the attach cookie for uprobes (Linux 5.15)" },
		{ "bpf_map_type", "BPF_MAP_TYPE_RINGBUF", "the BPF ring buffer (Linux 5.8)" },
	};
	struct btf *btf = btf__load_vmlinux_btf();
	size_t i, n = 0, off;

	if (!btf) {
		snprintf(msg, msglen, "this kernel has no BTF (/sys/kernel/btf/vmlinux, "
			 "CONFIG_DEBUG_INFO_BTF): featprofd's CO-RE programs cannot load");
		return 1;
	}
	off = (size_t)snprintf(msg, msglen, "this kernel lacks");
	for (i = 0; i < sizeof(need) / sizeof(need[0]); i++)
		if (!has_enum_value(btf, need[i].en, need[i].name) && off < msglen)
			off += (size_t)snprintf(msg + off, msglen - off, "%s %s", n++ ? "," : "",
						need[i].what);
	if (n && off < msglen)
		snprintf(msg + off, msglen - off, "; featprofd needs %s", n > 1 ? "them" : "it");
	btf__free(btf);
	return (int)n;
}

struct json_object *fp_kernel_mechanisms(int nop5_optimized)
{
	static struct json_object *cached;
	struct json_object *o, *use, *lack;
	struct utsname u;
	struct btf *btf;

	if (cached)
		return json_object_get(cached);
	btf = btf__load_vmlinux_btf();
	o = json_object_new_object();
	use = json_object_new_object();
	lack = json_object_new_object();
	if (!uname(&u))
		json_object_object_add(o, "release", json_object_new_string(u.release));
	if (!btf) {
		json_object_object_add(lack, "btf", json_object_new_string(
					       "no kernel BTF (/sys/kernel/btf/vmlinux): CO-RE "
					       "programs cannot load"));
	} else {
		/* a fallback is a mechanism too: always in "mechanisms" */
		json_object_object_add(use, "attach", json_object_new_string(
			has_enum_value(btf, "bpf_attach_type", "BPF_TRACE_UPROBE_MULTI")
				? "one multi-uprobe link per object (all its sites at once)"
				: "one uprobe link per site (no multi-uprobe link before 6.6)"));
		part(use, lack, "site_identity", has_enum_value(btf, "bpf_func_id",
								"BPF_FUNC_get_attach_cookie"),
		     "the attach cookie",
		     "no attach cookie for uprobes (Linux 5.15): featprofd cannot run here");
		part(use, lack, "thread_state", has_enum_value(btf, "bpf_map_type",
							       "BPF_MAP_TYPE_TASK_STORAGE"),
		     "task storage, freed with the thread",
		     "no task storage for tracing programs (Linux 5.11): featprofd cannot "
		     "run here");
		part(use, lack, "off_cpu", btf__find_by_name_kind(btf, "btf_trace_sched_switch",
								  BTF_KIND_TYPEDEF) > 0,
		     "tp_btf/sched_switch and sched_wakeup",
		     "no BTF-typed sched_switch tracepoint: no off-CPU time");
		part(use, lack, "record", has_enum_value(btf, "bpf_map_type",
							 "BPF_MAP_TYPE_RINGBUF"),
		     "a BPF ring buffer swapped in per recording",
		     "no BPF ring buffer (Linux 5.8): no record");
		part(use, lack, "sample", 1, "perf_event cpu-clock, one per CPU, reading the "
		     "region stack in the target's TLS", "");
		part(use, lack, "sample_remote", has_enum_value(btf, "bpf_func_id",
								"BPF_FUNC_copy_from_user_task"),
		     "the task iterator and bpf_copy_from_user_task, from featprofd's thread",
		     "no bpf_copy_from_user_task (Linux 5.18): sample --remote refused");
		json_object_object_add(use, "attach_point", json_object_new_string(
			nop5_optimized ? "the shielded nop5 (the kernel turns the trap into a call)"
				       : "the nop1, the int3 trap (why: status attach.why)"));
		btf__free(btf);
	}
	json_object_object_add(o, "mechanisms", use);
	json_object_object_add(o, "unavailable", lack);
	cached = o;
	return json_object_get(cached);
}
