"""Print the mutation score per module from `mutmut results --all true` output.

Each line of that output reads `    package.module.x__function__mutmut_N: status`. Killed
and timed-out mutants count as caught; survivors and mutants no test reached do not.
Optional arguments are mutmut's mutant-name patterns (``"citations.markers*"``): only the
mutants they name are counted, so a run of one module prints that module's score. Without
them every mutant counts, and one left unchecked counts as not caught.
Exits non-zero when nothing was mutated (a broken run must not look like a score).
"""

import sys
from collections import Counter, defaultdict
from fnmatch import fnmatch

CAUGHT = {"killed", "timeout", "segfault"}


def main(path: str, patterns: list[str]) -> int:
    per_module: dict[str, Counter] = defaultdict(Counter)
    with open(path, encoding="utf-8") as results:
        lines = results.readlines()
    for line in lines:
        name, sep, status = line.strip().rpartition(": ")
        if not sep or "__mutmut_" not in name:
            continue
        if patterns and not any(name == p or fnmatch(name, p) for p in patterns):
            continue
        module = name.split(".x_")[0].split(".x\u01c1")[0]
        per_module[module][status.strip()] += 1
    if not per_module:
        print("no mutants were run: see var/mutmut-run.log", file=sys.stderr)
        return 1
    total: Counter = Counter()
    for module in sorted(per_module):
        counts = per_module[module]
        total.update(counts)
        print(_line(module, counts))
    print(_line("ALL", total))
    return 0


def _line(label: str, counts: Counter) -> str:
    caught = sum(counts[s] for s in CAUGHT)
    n = sum(counts.values())
    survivors = n - caught
    return f"{label:<36} {caught:>5}/{n:<5} caught  {survivors:>5} not caught  {caught / n:6.1%}"


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], sys.argv[2:]))
