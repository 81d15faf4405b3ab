# SPDX-License-Identifier: GPL-2.0
# Imports modules m0..mN-1 from the folder argv[1] (test_services.py t_python_import,
# against -X importtime): prints "ready", waits for a line, imports, prints "done".
import sys
sys.path.insert(0, sys.argv[1])
print("ready", flush=True)
sys.stdin.readline()
print("MARK", file=sys.stderr, flush=True)
for i in range(int(sys.argv[2])):
    __import__("m%d" % i)
print("done", flush=True)
sys.stdin.readline()
