#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# The tree's layers (scripts/layers.py: modules are daemon/'s folders, common/ and cli/,
# their ranks derived from their dependencies) hold, docs/ARCHITECTURE.md's map is the one
# the check derives, and the check can fail. Copies of the tree, each with one breach,
# must each be refused, naming the file:
#   call      one upward call (the registry calling the subscriptions' module): a cycle
#   include   one upward include (the client connection including the registry's header)
#   common    common/ including a daemon header: a cycle through common/
#   private   another module's private header (the registry including the target's)
#   method    a method of struct fp_target defined outside daemon/targets/
#   prefix    a free function whose prefix another folder owns (fp_wants_ in groups/)
set -e
scripts/layers.py .
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
scripts/layers.py --map . > "$T/map"
awk '/^<!-- layers.py --map -->$/ {on = 1; next} /^<!-- end -->$/ {on = 0} on' \
	docs/ARCHITECTURE.md > "$T/doc"
if ! diff -u "$T/doc" "$T/map"; then
	echo "layers: docs/ARCHITECTURE.md's map differs from scripts/layers.py --map (above)"
	exit 1
fi
for k in call include common private method prefix; do
	mkdir "$T/$k"
	cp -r daemon common cli "$T/$k/"
done
printf 'int upward(void);\nint upward(void)\n{\n\treturn fp_subs_count();\n}\n' \
	>>"$T/call/daemon/registry/registry.c"
sed -i 's|#include "client.h"|&\n#include "registry/registry.h"|' \
	"$T/include/daemon/clients/client.c"
sed -i 's|#include "err.h"|&\n#include "targets/target.h"|' "$T/common/common/notes.c"
sed -i 's|#include "registry.h"|&\n#include "targets/target_impl.h"|' \
	"$T/private/daemon/registry/registry.c"
printf 'int fp_target__bogus(void);\nint fp_target__bogus(void)\n{\n\treturn 0;\n}\n' \
	>>"$T/method/daemon/sample/sample.c"
printf 'int fp_wants_bogus(void);\nint fp_wants_bogus(void)\n{\n\treturn 0;\n}\n' \
	>>"$T/prefix/daemon/groups/groups.c"
for k in call include common private method prefix; do
	if out=$(scripts/layers.py "$T/$k" 2>&1); then
		echo "layers: the $k breach was not found"
		exit 1
	fi
	case $k in
	call) want="a cycle between modules.*registry/registry.c: calls fp_subs_count" ;;
	include) want="a cycle between modules.*clients/client.c: includes registry/registry.h" ;;
	common) want="a cycle between modules.*common/notes.c: includes targets/target.h" ;;
	private) want="registry/registry.c: includes targets/target_impl.h, private to" ;;
	method) want="sample/sample.c: defines fp_target__bogus, a method of struct fp_target" ;;
	prefix) want="groups/groups.c: defines fp_wants_..., a name of struct fp_wants" ;;
	esac
	echo "$out" | grep -q "$want" || { echo "missed ($k): $out"; exit 1; }
done
echo "layers: the map is current; the check refuses an upward call, an upward include," \
	"common/ including the daemon, another module's private header, a method outside its" \
	"struct's folder and a prefix another folder owns"
