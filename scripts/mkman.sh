#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The man pages, from the texts the programs and the header carry (one source each):
# featprof(1) from featprof's command table (featprof --commands, --summary VERB, help
# VERB), featprofd(8) from featprofd --help, featprof.h(3) from the header's leading
# comment. Usage: mkman.sh BUILD_DIR OUT_DIR VERSION
set -eu
B=$1 OUT=$2 VERSION=$3
mkdir -p "$OUT"
date=$(date -u -d "@${SOURCE_DATE_EPOCH:-$(git log -1 --format=%ct 2>/dev/null || date +%s)}" +%Y-%m-%d)

# roff-safe verbatim text: backslashes escaped, a leading . or ' neutralized
verbatim() {
	echo ".nf"
	sed -e 's/\\/\\e/g' -e "s/^\([.']\)/\\\\\&\1/"
	echo ".fi"
}

{
	echo ".TH FEATPROF 1 \"$date\" \"featprof $VERSION\" \"User Commands\""
	echo ".SH NAME"
	echo "featprof \\- how much time each feature of a running program costs"
	echo ".SH SYNOPSIS"
	echo ".B featprof"
	echo "[\\fB\\-\\-socket\\fR \\fIPATH\\fR] \\fICOMMAND\\fR [\\fIARGS\\fR]"
	echo ".br"
	echo ".B featprof help"
	echo "[\\fICOMMAND\\fR]"
	echo ".SH DESCRIPTION"
	echo "featprof asks featprofd(8) to measure the feature regions a program marks with"
	echo "featprof.h(3) (or its functions, or other providers' USDT probes), live, in a"
	echo "running process or over a whole run, and reads the figures back: tables, JSON,"
	echo "pprof, folded stacks, Prometheus, traces, models of what each option costs."
	echo "A command may be abbreviated to any unique prefix."
	echo ".SH COMMANDS"
	for verb in $("$B/featprof" --commands); do
		echo ".SS $verb"
		"$B/featprof" --summary "$verb" | verbatim
		echo ".PP"
		"$B/featprof" help "$verb" 2>&1 | verbatim
	done
	cat <<'EOF'
.SH UNITS AND MARKS
.TP
.B \-\-duration
whole seconds: a number, or with a unit: 30s, 5m, 1h.
.TP
.B \-\-interval
milliseconds: a number, or with a unit: 500ms, 2s.
.TP
.B \(+-
about one standard error of the figure beside it (the sampling error, or the probes'
cost removed from a traced time).
.TP
.B "<X ?"
the time is not above its uncertainty X: only that bound is known (the probes cost more
than the region); time it in the process (FEATPROF_INPROCESS) or sample it.
.TP
.B SHARE
of the time of the process's threads over the window (a feature's regions nest and
overlap, so shares need not add up to 100%).
.SH ENVIRONMENT
.TP
.B FEATPROF_SOCKET
featprofd's socket, where \-\-socket is not given.
.SH EXIT STATUS
0 on success, 1 when the command failed (one line on standard error says why), 2 on a
usage error; diff exits 1 when it finds a regression.
.SH SEE ALSO
featprofd(8), featprof.h(3), perf(1), bpftrace(8); the documents under docs/ of the
source (docs/ARCHITECTURE.md first).
EOF
} > "$OUT/featprof.1"

{
	echo ".TH FEATPROFD 8 \"$date\" \"featprof $VERSION\" \"System Administration\""
	echo ".SH NAME"
	echo "featprofd \\- the featprof daemon: attaches eBPF programs to feature regions"
	echo ".SH SYNOPSIS"
	"$B/featprofd" --help 2>&1 | sed -n '1,2p' | verbatim
	echo ".SH DESCRIPTION"
	echo "featprofd reads a process's ELF notes, attaches uprobes and eBPF programs to the"
	echo "probe sites of the regions its clients enable, aggregates their times in kernel"
	echo "maps and answers featprof(1) over a Unix socket. It needs root (or CAP_BPF,"
	echo "CAP_PERFMON, CAP_SYS_PTRACE and the rest its systemd unit keeps). A client may"
	echo "measure only processes it could ptrace. What a client enables or starts for the"
	echo "time of its connection (featprof drill, sample) is undone when the connection"
	echo "closes. Debug files of stripped objects come from a debuginfod server where"
	echo "DEBUGINFOD_URLS names one (cached under DEBUGINFOD_CACHE_PATH)."
	echo ".SH OPTIONS"
	"$B/featprofd" --help 2>&1 | sed '1,2d' | verbatim
	cat <<'EOF'
.SH FILES
.TP
.I /run/featprof/featprofd.sock
the socket (root:GROUP 0660 with \-\-group, else root only). Under systemd the
socket unit featprofd.socket makes it, with its SocketGroup (Debian's package: the
group featprof; add a user with \fBadduser\fR \fIUSER\fR \fBfeatprof\fR), and starts
featprofd on the first connection; \-\-group is then not used.
.TP
.I /run/featprof/state
the attach journal: breakpoints a killed featprofd left are removed at the next start.
.SH SIGNALS
SIGTERM and SIGINT detach every target and exit.
.SH SEE ALSO
featprof(1), featprof.h(3)
EOF
} > "$OUT/featprofd.8"

{
	echo ".TH FEATPROF.H 3 \"$date\" \"featprof $VERSION\" \"Library Functions Manual\""
	echo ".SH NAME"
	echo "featprof.h \\- FP_BEGIN, FP_END, FP_SCOPE: mark feature regions for featprof"
	echo ".SH SYNOPSIS"
	echo ".nf"
	echo ".B #include <featprof.h>"
	echo ".PP"
	echo ".BI \"FP_BEGIN(\" region \", \" \\(dqFeature\\(dq \", ...);\""
	echo ".BI \"FP_END(\" region \");\""
	echo ".BI \"FP_SCOPE(\" region \", \" \\(dqFeature\\(dq \", ...);\""
	echo ".BI \"FP_SCOPE_DEFINE(\" region \");\""
	echo ".fi"
	echo ".PP"
	echo "Compile with \\fBpkg\\-config \\-\\-cflags featprof\\fR; nothing to link in the"
	echo "default build."
	echo ".SH DESCRIPTION"
	# the header's leading comment, as it stands (the rest of it are its internals)
	awk 'NR > 1 && /^ \*\// { exit } NR > 2 { sub(/^ \* ?/, ""); print }' \
		"$(dirname "$0")/../usdt/featprof.h" | verbatim
	echo ".SH SEE ALSO"
	echo "featprof(1), featprofd(8)"
} > "$OUT/featprof.h.3"
