// SPDX-License-Identifier: GPL-2.0
//! A Rust program without featprof.h (issue 45): a const-generic function whose two
//! instances take 2/3 and 1/3 of the time, called through trait objects, for Rust names
//! in sample --stacks, legacy and v0 mangled (tests/integration/test_names.py builds it
//! with Debian's rustc both ways). Builds with rustc 1.63 (Debian 12) and later.
//!
//!     shipped_rs SECONDS
//!
//! Prints "ready PID", works for SECONDS, then {"sum": N}.
use std::time::{Duration, Instant};

static SEED: u64 = 1;

trait Work {
    fn run(&self, n: u64) -> u64;
}

struct Heavy;
struct Light;

impl Work for Heavy {
    #[inline(never)]
    fn run(&self, n: u64) -> u64 {
        spin::<2>(n)
    }
}

impl Work for Light {
    #[inline(never)]
    fn run(&self, n: u64) -> u64 {
        spin::<1>(n)
    }
}

#[inline(never)]
fn spin<const K: u64>(n: u64) -> u64 {
    let mut x = unsafe { std::ptr::read_volatile(&SEED) } | 1;
    for _ in 0..n * K {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
    }
    x
}

fn main() {
    let secs: u64 = std::env::args().nth(1).and_then(|s| s.parse().ok()).unwrap_or(5);
    println!("ready {}", std::process::id());
    let end = Instant::now() + Duration::from_secs(secs);
    let jobs: Vec<Box<dyn Work>> = vec![Box::new(Heavy), Box::new(Light)];
    let mut s = 0u64;
    while Instant::now() < end {
        for j in &jobs {
            s = s.wrapping_add(j.run(20000));
        }
    }
    println!("{{\"sum\": {}}}", s % 7);
}
