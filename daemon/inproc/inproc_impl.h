/* SPDX-License-Identifier: GPL-2.0 */
/*
 * In-process timing's state of one target, shared by daemon/inproc/inproc.c (discovery, gates,
 * control blocks) and daemon/inproc/inproc_read.c (the arena, the figures, off-CPU time).
 */
#ifndef FP_INPROC_IMPL_H
#define FP_INPROC_IMPL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "bpf/featprof_bpf.h"
#include "common/maps.h"

/*
 * How far the runtime's compensated cost may be off, as a share of it. Its calibration
 * (daemon/inproc/ip_calibrate.c, in featprofd's own process) is steady within a start (sd ~1 ns)
 * but moves between starts (bias 12.6 to 27 ns, pair 31 to 73 ns here), and in a target
 * an instance measured up to ~20 ns more than the bias calibrated in that start
 * (t_ip_accuracy): the whole cost, not the trap mode's tenth (FP_GAP_DRIFT_UNC).
 */
#define FP_IP_COST_UNC 1.0

#define FP_IP_MAX_THREADS 4096	/* thread blocks followed per read */
/* a field's address in the control block at addr in the process */
#define CTL_FIELD(addr, field) ((addr) + offsetof(struct featprof_ip_ctl, field))

struct gate {
	int obj, site, region;	/* catalog object, its site, catalog region */
	uint64_t off, ref;	/* file offsets of the nop and of the semaphore */
	uint64_t desc;		/* the descriptor's address in the process (0: not found) */
	int fd;			/* the uprobe holding it up, -1: down */
	uint32_t gen;		/* written into the descriptor: the region's while it is up */
};

struct rt {
	int obj;
	uint64_t ctl;		/* its control block's address in the process */
	bool told;		/* the primary written into it */
	bool hooked;		/* its featprof:ip__thread sites attached */
};

/* Off-CPU time of one path entry of one thread block (bpf/featprof.bpf.c ip_switch). */
struct off {
	uint64_t block;
	uint32_t path;
	struct fp_ip_off v;
};

struct fp_inproc {
	pid_t pid;
	const struct fp_catalog *cat;	/* the target's, as of the last new or refresh */
	struct rt *rts;
	int nrts;
	struct gate *gates;
	int ngates;
	uint64_t primary;	/* the primary control block's address */
	uint32_t gen;		/* generations given to descriptors */
	int arena_fd;		/* the process's arena, -1: not yet seen */
	const uint8_t *arena;	/* mapped read-only, arena_size bytes */
	uint64_t arena_base, arena_size;	/* where the process maps it */
	struct fp_snapshot *base;	/* the figures at the last reset */
	const struct fp_calibration *cal;	/* the runtime's (fp_inproc__use) */
	bool zeroed;		/* the first gate rose: the figures then are the zero */
	bool gone;		/* the process exited (fp_inproc__gone) */
	bool run;		/* a run's process (fp_inproc__run_member) */
	/* off-CPU time: the target's BPF object (fp_inproc__use_bpf), the thread sites'
	 * uprobes, and what the last read found */
	int prog_fd, threads_fd, off_fd;
	bool multi;		/* prog_fd is a uprobe.multi program */
	volatile uint32_t *active;
	int *hooks, nhooks;
	struct off *offs;
	int noffs;
};

/* Off-CPU time: the threads' blocks made known to the scheduler programs. */
void fp_inproc_hook_threads(struct fp_inproc *ip);

#endif
