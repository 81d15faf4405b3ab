# SPDX-License-Identifier: GPL-2.0
# CPython's collections timed by gc.callbacks, the truth of test_services.py t_python_gc:
# prints "ready", waits for a line, collects, prints "COUNT TOTAL_NS", waits for a line.
import gc, sys, time
n = 0; tot = 0; t0 = 0
def cb(phase, info):
    global n, tot, t0
    if phase == "start":
        t0 = time.perf_counter_ns()
    else:
        n += 1; tot += time.perf_counter_ns() - t0
gc.callbacks.append(cb)
print("ready", flush=True)
sys.stdin.readline()
junk = []
for i in range(300):
    for j in range(1000):
        a = []; a.append(a); junk.append(a)
    if i % 10 == 0:
        gc.collect(i % 3)
    junk = junk[-3000:]
print(n, tot, flush=True)
sys.stdin.readline()
