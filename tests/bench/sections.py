# SPDX-License-Identifier: GPL-2.0
"""What the benchmarks that write a section of docs/BENCHMARKS.md share: the section put
in place of an earlier one, and the interval of a median they give."""
import math
import os


def write_section(path, header, text):
    """text (starting with header, "## ...\\n") into the file at path, in place of the
    section of that header if there is one (up to the next "## "), else at its end."""
    doc = open(path).read() if os.path.exists(path) else ""
    head, _, rest = doc.partition(header)
    tail = rest[rest.index("\n## ") + 1:] if "\n## " in rest else ""
    doc = head.rstrip("\n") + "\n\n" + text + ("\n" + tail if tail else "")
    open(path, "w").write(doc)


def sign_interval(xs):
    """The 95% interval of the median of xs from their order statistics (a sign-test
    interval: no assumption on their spread): the k-th smallest and largest, k the largest
    with P(Binomial(n, 1/2) < k) <= 2.5%."""
    s, n = sorted(xs), len(xs)
    k, acc = 0, 0.0
    while True:
        p = math.comb(n, k) / 2 ** n
        if acc + p > 0.025:
            break
        acc += p
        k += 1
    return s[max(k - 1, 0)], s[min(n - k, n - 1)]
