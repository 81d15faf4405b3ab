#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# The daemon's layers (scripts/layers.py) hold, and the check can fail: a copy of daemon/
# with one upward call (the registry calling the subscriptions room) and one upward
# include (the client connection including the registry's header) must be refused.
set -e
scripts/layers.py daemon
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
cp daemon/*.c daemon/*.h "$T"/
printf 'int upward(void);\nint upward(void)\n{\n\treturn fp_subs_count();\n}\n' >>"$T/registry.c"
sed -i 's/#include "client.h"/#include "client.h"\n#include "registry.h"/' "$T/client.c"
if out=$(scripts/layers.py "$T" 2>&1); then
	echo "layers: an upward call and include were not found"
	exit 1
fi
echo "$out" | grep -q "registry.c: calls fp_subs_count" || { echo "missed: $out"; exit 1; }
echo "$out" | grep -q "client.c: includes registry.h" || { echo "missed: $out"; exit 1; }
echo "layers: the check refuses an upward call and an upward include"
