// SPDX-License-Identifier: GPL-2.0
/*
 * The running kernel's mechanisms, by probing its BTF rather than its version number:
 * an enumerator in enum bpf_func_id, bpf_map_type or bpf_attach_type exists exactly when
 * the kernel implements that helper, map or attach type; a btf_trace_<event> typedef,
 * when a tp_btf program can attach to the event, and its function prototype lists the
 * event's arguments. What featprofd uses for each part of its work, and for a part the
 * kernel lacks, what is missing and from which kernel on.
 *
 * One probe is not in BTF: whether a ring buffer may be an array of maps' inner map, tried
 * once by creating one.
 */
#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "common/err.h"
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

/* The number of parameters of the tracepoint's BTF prototype (its first is the
 * tracepoint's own data pointer), -1 if the kernel has no such typedef. */
static int tp_params(const struct btf *btf, const char *event)
{
	char name[128];
	const struct btf_type *t;
	int id;

	snprintf(name, sizeof(name), "btf_trace_%s", event);
	id = btf__find_by_name_kind(btf, name, BTF_KIND_TYPEDEF);
	if (id <= 0)
		return -1;
	t = btf__type_by_id(btf, (__u32)id);	/* typedef -> pointer -> prototype */
	t = t ? btf__type_by_id(btf, t->type) : NULL;
	t = t && btf_is_ptr(t) ? btf__type_by_id(btf, t->type) : NULL;
	return t && btf_is_func_proto(t) ? btf_vlen(t) : -1;
}

/* Can a ring buffer be the inner map of an array of maps? */
static bool probe_ringbuf_inner(void)
{
	int inner = bpf_map_create(BPF_MAP_TYPE_RINGBUF, "fp_probe_rb", 0, 0, 4096, NULL);
	LIBBPF_OPTS(bpf_map_create_opts, o, .inner_map_fd = (__u32)inner);
	int outer;

	if (inner < 0)
		return false;
	outer = bpf_map_create(BPF_MAP_TYPE_ARRAY_OF_MAPS, "fp_probe_aom", 4, 4, 1, &o);
	close(inner);
	if (outer < 0)
		return false;
	close(outer);
	return true;
}

/* Is name in the comma-separated list? "all" lists what Linux 5.10 lacks (not_510). */
static bool listed(const char *list, const char *name, bool not_510)
{
	size_t n = strlen(name);
	const char *p;

	if (not_510 && !strcmp(list, "all"))
		return true;
	for (p = list; (p = strstr(p, name)); p += n)
		if ((p == list || p[-1] == ',') && (p[n] == ',' || !p[n]))
			return true;
	return false;
}

const struct fp_kernel_caps *fp_kernel_caps(void)
{
	static struct fp_kernel_caps k;
	static bool done;
	const char *without = getenv("FEATPROF_KERNEL_WITHOUT");
	struct btf *btf;

	if (done)
		return &k;
	done = true;
	btf = btf__load_vmlinux_btf();
	k.btf = btf != NULL;
	if (btf) {
		k.ringbuf = has_enum_value(btf, "bpf_map_type", "BPF_MAP_TYPE_RINGBUF");
		k.tp_btf_sched = tp_params(btf, "sched_switch") >= 4 &&
				 tp_params(btf, "sched_wakeup") >= 2 &&
				 tp_params(btf, "sched_process_exit") >= 2;
		k.task_storage = has_enum_value(btf, "bpf_map_type", "BPF_MAP_TYPE_TASK_STORAGE") &&
				 has_enum_value(btf, "bpf_func_id",
						"BPF_FUNC_get_current_task_btf");
		k.bpf_loop = has_enum_value(btf, "bpf_func_id", "BPF_FUNC_loop");
		k.switch_state = tp_params(btf, "sched_switch") >= 5;
		k.cookie = has_enum_value(btf, "bpf_func_id", "BPF_FUNC_get_attach_cookie");
		k.uprobe_multi = btf__find_by_name_kind(btf, "bpf_uprobe_multi_link",
							BTF_KIND_STRUCT) > 0;
		k.uprobe_session = has_enum_value(btf, "bpf_attach_type",
						  "BPF_TRACE_UPROBE_SESSION") &&
				   btf__find_by_name_kind(btf, "bpf_session_is_return",
							  BTF_KIND_FUNC) > 0;
		k.copy_from_user_task = has_enum_value(btf, "bpf_func_id",
						       "BPF_FUNC_copy_from_user_task");
		k.task_pt_regs = has_enum_value(btf, "bpf_func_id", "BPF_FUNC_task_pt_regs") &&
				 has_enum_value(btf, "bpf_func_id",
						"BPF_FUNC_get_current_task_btf");
		btf__free(btf);
	}
	k.ringbuf_inner = k.ringbuf && probe_ringbuf_inner();
	if (without && *without) {
		snprintf(k.without, sizeof(k.without), "%s", without);
		k.task_storage &= !listed(without, "task_storage", true);
		k.bpf_loop &= !listed(without, "bpf_loop", true);
		k.switch_state &= !listed(without, "switch_state", true);
		k.cookie &= !listed(without, "cookie", true);
		k.uprobe_multi &= !listed(without, "uprobe_multi", true);
		k.uprobe_session &= !listed(without, "uprobe_session", true) && k.uprobe_multi;
		k.copy_from_user_task &= !listed(without, "copy_from_user_task", true);
		k.task_pt_regs &= !listed(without, "task_pt_regs", true);
		k.ringbuf_inner &= !listed(without, "ringbuf_inner", false);
	}
	return &k;
}

bool fp_kernel_task_storage(void)
{
	const struct fp_kernel_caps *k = fp_kernel_caps();

	return k->task_storage && k->bpf_loop;
}

static void part(struct json_object *use, struct json_object *lack, const char *key, int ok,
		 const char *what, const char *why)
{
	json_object_object_add(ok ? use : lack, key, json_object_new_string(ok ? what : why));
}

int fp_kernel_missing(struct fp_err *e)
{
	const struct fp_kernel_caps *k = fp_kernel_caps();
	const struct {
		bool have;
		const char *what;
	} need[] = {
		{ k->ringbuf, "the BPF ring buffer (Linux 5.8)" },
		{ k->tp_btf_sched, "BTF-typed scheduler tracepoints (Linux 5.5)" },
	};
	char msg[FP_ERR_MSG];
	size_t i, n = 0, off;

	if (!k->btf)
		return fp_fail(e, EOPNOTSUPP, "this kernel has no BTF (/sys/kernel/btf/vmlinux, "
			       "CONFIG_DEBUG_INFO_BTF): featprofd's CO-RE programs cannot load");
	off = (size_t)snprintf(msg, sizeof(msg), "this kernel lacks");
	for (i = 0; i < sizeof(need) / sizeof(need[0]); i++)
		if (!need[i].have && off < sizeof(msg))
			off += (size_t)snprintf(msg + off, sizeof(msg) - off, "%s %s",
						n++ ? "," : "", need[i].what);
	if (!n)
		return 0;
	return fp_fail(e, EOPNOTSUPP, "%s; featprofd needs %s", msg, n > 1 ? "them" : "it");
}

struct json_object *fp_kernel_mechanisms(int nop5_optimized)
{
	static struct json_object *cached;
	const struct fp_kernel_caps *k = fp_kernel_caps();
	struct json_object *o, *use, *lack;
	char why[256];
	struct utsname u;

	if (cached)
		return json_object_get(cached);
	o = json_object_new_object();
	use = json_object_new_object();
	lack = json_object_new_object();
	if (!uname(&u))
		json_object_object_add(o, "release", json_object_new_string(u.release));
	if (k->without[0])
		json_object_object_add(o, "pretend_without", json_object_new_string(k->without));
	if (!k->btf) {
		json_object_object_add(lack, "btf", json_object_new_string(
					       "no kernel BTF (/sys/kernel/btf/vmlinux): CO-RE "
					       "programs cannot load"));
		goto out;
	}
	/* a fallback is a mechanism too: always in "mechanisms" */
	json_object_object_add(use, "attach", json_object_new_string(
		k->uprobe_multi && fp_kernel_task_storage()
			? "one multi-uprobe link per object (all its sites at once)"
			: "one uprobe link per site (no multi-uprobe link before 6.6)"));
	json_object_object_add(use, "function_regions", json_object_new_string(
		k->uprobe_session && fp_kernel_task_storage()
			? "per object one uprobe session link: one program at entry and return "
			  "(6.13)"
		: k->uprobe_multi && fp_kernel_task_storage()
			? "per object one multi-uprobe link of the entries and one of return "
			  "probes (BPF_F_UPROBE_MULTI_RETURN; no uprobe sessions before 6.13)"
			: "per function a uprobe link at the entry and a uretprobe link (no "
			  "multi-uprobe link before 6.6)"));
	json_object_object_add(use, "site_identity", json_object_new_string(
		k->cookie ? "the attach cookie"
			  : "a trampoline per region begin and end that tail-calls the site "
			    "program with its cookie (no attach cookie for uprobes before 5.15)"));
	snprintf(why, sizeof(why), "a hash map keyed by thread id, emptied at thread exit "
		 "(no %s)", !k->task_storage ? "task storage for tracing programs before 5.11"
					     : "bpf_loop before 5.17");
	json_object_object_add(use, "thread_state", json_object_new_string(
		fp_kernel_task_storage() ? "task storage, freed with the thread" : why));
	json_object_object_add(use, "off_cpu", json_object_new_string(
		k->switch_state ? "tp_btf/sched_switch (its prev_state) and sched_wakeup"
				: "tp_btf/sched_switch (the task's state field: no prev_state "
				  "argument before 5.18) and sched_wakeup"));
	part(use, lack, "record", k->ringbuf && k->ringbuf_inner,
	     "a BPF ring buffer swapped in per recording",
	     !k->ringbuf ? "no BPF ring buffer (Linux 5.8): no record"
			 : "no ring buffer inside an array of maps: no record");
	part(use, lack, "sample", 1, "perf_event cpu-clock, one per thread, reading the "
	     "region stack in the target's TLS", "");
	part(use, lack, "sample_probe_time", k->task_pt_regs,
	     "samples in the kernel at a probe site (bpf_task_pt_regs) counted apart",
	     "no bpf_task_pt_regs (Linux 5.15): samples during a traced region's probe "
	     "handling are charged to the regions open then");
	part(use, lack, "sample_remote", k->copy_from_user_task,
	     "the task iterator and bpf_copy_from_user_task, from featprofd's thread",
	     "no bpf_copy_from_user_task (Linux 5.18): sample --remote refused");
	json_object_object_add(use, "attach_point", json_object_new_string(
		nop5_optimized ? "the shielded nop5 (the kernel turns the trap into a call)"
			       : "the nop1, the int3 trap (why: status attach.why)"));
out:
	json_object_object_add(o, "mechanisms", use);
	json_object_object_add(o, "unavailable", lack);
	cached = o;
	return json_object_get(cached);
}
