/* SPDX-License-Identifier: GPL-2.0 */
/* A task's run state on any kernel (CO-RE), for the BPF objects that need it. */
#ifndef FP_TASK_STATE_H
#define FP_TASK_STATE_H

/* Linux 5.14 renamed task_struct.state to __state. */
struct task_struct___pre514 {
	long state;
} __attribute__((preserve_access_index));

static __always_inline long task_run_state(struct task_struct *t)
{
	if (bpf_core_field_exists(t->__state))
		return BPF_CORE_READ(t, __state);
	return BPF_CORE_READ((struct task_struct___pre514 *)t, state);
}

#endif
