#!/usr/bin/python3
"""Metadata of 10,000 partitions (2,000 topics of 5), against the real broker:
meson suite `slow` (creating 10,000 partitions takes a minute or more).

    test_metadata_scale.py SAMSA_BROKER [-k CASE]

- partitions_10000: 2,000 topics of 5 partitions; an all-topics Metadata v1
  lists every partition with its leader, as do kcat -L and DescribeLogDirs.
  Prints the response sizes and times.

The broker inherits the soft descriptor limit raised to the hard one.
"""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from broker import eq, main  # noqa: E402
import test_metadata_limits as limits  # noqa: E402


def case_partitions_10000(t):
    limits.raise_fd_limit()
    b = t.broker()
    names = ["scale-%04d" % i for i in range(2000)]
    took = limits.create_topics(b.port, names, partitions=5, batch=50)
    print("  created 2,000 topics of 5 partitions in %.1f s" % took)
    for _ in range(3):
        size, took, _, _, parsed = limits.metadata(b.port, None, timeout=60.0)
        print("  all-topics Metadata v1: %d topics, %d partitions, %d bytes in %.3f s"
              % (len(parsed), sum(len(p) for _, p in parsed.values()), size, took))
    eq(sorted(parsed), names, "all-topics Metadata")
    for n in names:
        limits.check_partitions(parsed, n, 5)
    topics, took = limits.kcat_metadata(b)
    print("  kcat -L: %d topics, %d partitions in %.2f s"
          % (len(topics), sum(topics.values()), took))
    eq(topics, {n: 5 for n in names}, "kcat -L")
    sizes = limits.log_dir_partitions(b)
    eq(len(sizes), 10000, "DescribeLogDirs partitions")
    b.stop()


if __name__ == "__main__":
    sys.exit(main([case_partitions_10000]))
