/* SPDX-License-Identifier: GPL-2.0 */
/* Probe catalog: stapsdt and featprof notes of ELF files and running processes. */
#ifndef FP_NOTES_H
#define FP_NOTES_H

#include <stddef.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "err.h"
#include "usdt/featprof_abi.h"	/* the probe ABI: note type, site kinds and shapes */

/* One stapsdt note, with featprof's catalog entry when it is a featprof site. */
struct fp_site {
	char *provider;
	char *name;
	char *args;
	uint64_t pc;		/* as written in the note */
	uint64_t base;
	uint64_t sem;
	uint64_t note_off;	/* file offset of the note header */
	uint64_t loc_off;	/* uprobe file offset of the note location */
	uint64_t opt_off;	/* file offset of the shielded nop5, 0 if none */
	uint64_t sem_off;	/* file offset of the semaphore, 0 if none */
	/* featprof catalog (provider "featprof" only) */
	int kind;		/* FP_KIND_*, 0 if not a featprof site */
	int shape;
	bool scope;		/* a site of an FP_SCOPE (FEATPROF_ABI_SITE_SCOPE) */
	uint32_t line;
	char *region;
	char *file;
	char **features;
	int nfeatures;
	int stepped;		/* a function's entry (common/catalog.c) whose first
				 * instruction the kernel single-steps (common/symbols.h) */
};

struct fp_object {
	char *path;		/* path as the target sees it */
	char *host_path;	/* path the daemon opens (through /proc/PID/root) */
	struct fp_site *sites;
	int nsites;
	int nfeatprof;		/* sites with provider featprof */
	int orphans;		/* catalog notes without a stapsdt note */
	/* the sampler's TLS ABI (FP_NOTE_TYPE_TLS), 0 when the object has none */
	uint32_t tls_version, tls_depth, tls_magic;
	/* featprof_tls's offset in the object's TLS block (notes of featprof.h 0.x with it:
	 * tls_dtpoff_known), for a library whose stack is its own */
	uint64_t tls_dtpoff;
	bool tls_dtpoff_known;
	/* in-process timing (FP_NOTE_TYPE_IP), version 0 when the object has none: the
	 * thread block's size and the control block's file offset */
	uint32_t ip_version, ip_thread_size;
	uint64_t ip_ctl, ip_base, ip_ctl_off;
	struct fp_site *cat;	/* catalog notes, merged into sites after reading */
	int ncat;
	/* a process's object: the file as mapped (host_path is then /proc/self/fd/N) */
	int fd;			/* held open while the object lives; -1: none */
	uint64_t dev, ino;	/* as /proc/PID/maps shows them (0 for a file read by path) */
	char *root;		/* where the target's files are seen ("/proc/PID/root"), or
				 * NULL: the host's */
	/* function regions (common/catalog.c): the file's functions, read on first use
	 * (syms_read; syms NULL and syms_err set when they could not be), and the entries
	 * of those that regions measure, as sites (provider "function", name the symbol) */
	struct fp_symbols *syms;
	char *syms_err;
	int syms_read;
	struct fp_site *funcs;
	int nfuncs;
};

/*
 * Reads the notes of one ELF file. Returns 0, or -errno with a one-line message in e
 * (naming the file and, for a corrupt note, its offset). -ENOEXEC: not an ELF file.
 */
int fp_object__read(const char *host_path, const char *path, struct fp_object **out,
		    struct fp_err *e);
/* The same from the file open at fd (not closed here). */
int fp_object__read_fd(int fd, const char *host_path, const char *path,
		       struct fp_object **out, struct fp_err *e);
/* The same on an ELF image in memory (fuzzing, tests). */
int fp_object__read_mem(const void *image, size_t size, const char *path,
			struct fp_object **out, struct fp_err *e);
void fp_object__free(struct fp_object *obj);

/* All executable file mappings of a process that carry stapsdt notes. */
struct fp_proc {
	pid_t pid;
	struct fp_object **objs;
	int nobjs;
	char **errors;		/* objects skipped because they could not be read */
	int nerrors;
	struct fp_file_id {
		uint64_t dev, ino;
	} *seen;		/* every file looked at (with notes or not), not read again */
	int nseen;
};

/*
 * Reads a process's executable mappings. Each file is opened through
 * /proc/PID/map_files/START-END (the mapped inode itself: no race with a rename, works
 * for a deleted file; needs CAP_SYS_ADMIN or CAP_CHECKPOINT_RESTORE), else through
 * /proc/PID/root/PATH when that is still the mapped inode; a file that is neither gets
 * a line in errors. The file stays open (obj->fd) and host_path names the descriptor.
 */
int fp_proc__read(pid_t pid, struct fp_proc **out, struct fp_err *e);
/* Reads the mappings again: files not seen before are appended to objs (existing ones
 * keep their indices). Returns the number of objects added or -errno. */
int fp_proc__refresh(struct fp_proc *proc, struct fp_err *e);
void fp_proc__free(struct fp_proc *proc);

/* Is s a gate (the sampling gate, a region's in-process gate, the in-process runtime's
 * thread site) rather than a site of a region? *region_len (if not NULL) gets the length
 * of an in-process gate's region. */
int fp_site_is_gate(const struct fp_site *s, size_t *region_len);

/* Appends a copy of s to the array *arr of *n strings. 0 or -ENOMEM. */
int fp_strv_add(char ***arr, int *n, const char *s);

/* Parses one note section's bytes; exposed for the fuzzer. */
int fp_notes_parse(struct fp_object *obj, const uint8_t *buf, size_t size, uint64_t sec_off,
		   int featprof_section, struct fp_err *e);

#endif
