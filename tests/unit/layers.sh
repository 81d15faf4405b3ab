#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# The daemon's layers (scripts/layers.py: modules are daemon/'s folders, their ranks
# derived from their dependencies) hold, and the check can fail: a copy of daemon/ with
# one upward call (the registry calling the subscriptions' module) and, in another copy,
# one upward include (the client connection including the registry's header) must each
# be refused as a cycle between modules, naming the file that closes it; a third copy
# whose registry includes the target's private header (its struct's fields) is refused
# too.
set -e
scripts/layers.py daemon
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
cp -r daemon "$T/call"
cp -r daemon "$T/include"
cp -r daemon "$T/private"
sed -i 's/#include "registry.h"/#include "registry.h"\n#include "target_impl.h"/' \
	"$T/private/registry/registry.c"
printf 'int upward(void);\nint upward(void)\n{\n\treturn fp_subs_count();\n}\n' \
	>>"$T/call/registry/registry.c"
sed -i 's/#include "client.h"/#include "client.h"\n#include "registry.h"/' \
	"$T/include/clients/client.c"
for k in call include; do
	if out=$(scripts/layers.py "$T/$k" 2>&1); then
		echo "layers: an upward $k was not found"
		exit 1
	fi
	case $k in
	call) want="registry/registry.c: calls fp_subs_count" ;;
	include) want="clients/client.c: includes registry.h" ;;
	esac
	echo "$out" | grep -q "a cycle between modules.*$want" || { echo "missed: $out"; exit 1; }
done
if out=$(scripts/layers.py "$T/private" 2>&1); then
	echo "layers: a module including another's private header was not found"
	exit 1
fi
echo "$out" | grep -q "registry/registry.c: includes target_impl.h, private to target/" ||
	{ echo "missed: $out"; exit 1; }
echo "layers: the check refuses an upward call and an upward include (each a cycle between modules), and another module's private header"
