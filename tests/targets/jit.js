// SPDX-License-Identifier: GPL-2.0
// JIT frames (issue 45): two functions V8 compiles, hotLoop doing twice coldLoop's
// iterations, for sample --stacks of `node --perf-basic-prof` (V8 writes
// /tmp/perf-PID.map; tests/integration/test_names.py).
//     node --perf-basic-prof jit.js SECONDS
// Prints "ready PID", works for SECONDS, then {"done": true}.
"use strict";

function hotLoop(n) {
    let x = 1;
    for (let i = 0; i < n; i++)
        x = (x * 1103515245 + 12345) % 2147483648;
    return x;
}

function coldLoop(n) {
    let x = 7;
    for (let i = 0; i < n; i++)
        x = (x * 1103515245 + 12345) % 2147483648;
    return x;
}

console.log("ready " + process.pid);
const end = Date.now() + parseFloat(process.argv[2] || "5") * 1000;
let s = 0;
while (Date.now() < end) {
    s += hotLoop(2000000);
    s += coldLoop(1000000);
}
console.log(JSON.stringify({ done: s > 0 }));
