"""Check that mutants mutmut counted killed are killed by a test, outside mutmut.

mutmut runs each mutant in a child forked from a parent that already ran the tests; a
child that fails for a reason of its own (a resource copied from the parent, a test
that is timing-bound under load) counts as a kill. This re-runs a random sample of the
killed mutants, each in a fresh ``pytest`` process inside mutants/ with
``MUTANT_UNDER_TEST`` set, on the tests mutmut's stats say reach the mutated function
(fastest first, stopping at the first failure), and prints the test that failed.

    scripts/mutation_verify.py var/mutmut-results.txt "runs.lifecycle*" [--sample 8] [--seed S]
    scripts/mutation_verify.py var/mutmut-results.txt "citations.issuance*" --all

One random sample is drawn (``--seed`` makes it repeatable) from the kills of every
pattern together; ``--all`` checks every kill instead. The tests are run as mutmut runs
them (``-m "not timing"``: the timing-bound tests are not in the selection). The summary
prints, per module, the verified kills of the sample and mutmut's caught / total, then the
score that can be defended: mutmut's caught × the verified fraction of the sample.

Exits non-zero if a sampled "killed" mutant passes every test: the score is not to be
trusted then. DATABASE_URL and REDIS_URL as for make mutation.
"""

import argparse
import json
import os
import random
import re
import subprocess
import sys
from collections import Counter
from fnmatch import fnmatch
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
MUTANTS = ROOT / "mutants"


CAUGHT = {"killed", "timeout", "segfault"}


def statuses(results: Path, patterns: list[str]) -> dict[str, str]:
    """mutmut's status of every mutant the patterns name."""
    found = {}
    for line in results.read_text(encoding="utf-8").splitlines():
        name, sep, status = line.strip().rpartition(": ")
        if sep and "__mutmut_" in name and any(fnmatch(name, p) for p in patterns):
            found[name] = status.strip()
    return found


def module_of(mutant: str) -> str:
    return mutant.split(".x_")[0].split(".x\u01c1")[0]


def verify(mutant: str, stats: dict) -> tuple[bool, str]:
    function = mutant.rsplit("__mutmut_", 1)[0]
    durations = stats["duration_by_test"]
    reached = stats["tests_by_mangled_function_name"].get(function)
    if not reached:
        return False, "no test reaches it in mutmut's stats"
    tests = sorted(reached, key=lambda t: durations.get(t, 0.0))
    env = {**os.environ, "MUTANT_UNDER_TEST": mutant, "SPARKTIDE_DB_POOL": "0"}
    pytest = [sys.executable, "-m", "pytest", "-x", "-q", "--reuse-db", "-p", "no:randomly"]
    done = subprocess.run(
        [*pytest, "-m", "not timing", *tests],
        cwd=MUTANTS,
        env=env,
        capture_output=True,
        text=True,
    )
    # A test that fails, or errors in its fixtures (a fixture that runs the mutated code).
    failed = re.findall(r"^(?:FAILED|ERROR) (\S+)", done.stdout, re.MULTILINE)
    return done.returncode == 1 and bool(failed), failed[0] if failed else done.stdout[-300:]


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("results", type=Path)
    parser.add_argument("patterns", nargs="+")
    parser.add_argument("--sample", type=int, default=8)
    parser.add_argument("--seed", type=int, default=None)
    parser.add_argument("--all", action="store_true", help="verify every kill, no sample")
    args = parser.parse_args()
    stats = json.loads((MUTANTS / "mutmut-stats.json").read_text(encoding="utf-8"))
    found = statuses(args.results, args.patterns)
    names = sorted(n for n, status in found.items() if status == "killed")
    seed = args.seed if args.seed is not None else random.randrange(1_000_000)
    if args.all:
        sample = names
    else:
        sample = random.Random(seed).sample(names, min(args.sample, len(names)))
    checked: Counter = Counter()
    confirmed: Counter = Counter()
    for mutant in sample:
        ok, detail = verify(mutant, stats)
        checked[module_of(mutant)] += 1
        confirmed[module_of(mutant)] += ok
        print(f"{'killed by' if ok else 'NOT KILLED:'} {mutant}: {detail}", flush=True)
    print(summary(found, checked, confirmed))
    how = "all" if args.all else f"seed {seed}"
    total = sum(checked.values())
    print(f"verified {sum(confirmed.values())}/{total} sampled kills of {len(names)} ({how})")
    return 0 if sum(confirmed.values()) == total else 1


def summary(found: dict[str, str], checked: Counter, confirmed: Counter) -> str:
    """Per module: verified / sampled kills, mutmut's caught / total; then the defended score."""
    caught: Counter = Counter()
    total: Counter = Counter()
    for name, status in found.items():
        total[module_of(name)] += 1
        caught[module_of(name)] += status in CAUGHT
    lines = []
    for module in sorted(total):
        lines.append(
            f"{module:<36} verified {confirmed[module]:>3}/{checked[module]:<3} "
            f"caught {caught[module]:>5}/{total[module]:<5}"
        )
    n, c = sum(total.values()), sum(caught.values())
    sampled = sum(checked.values())
    fraction = sum(confirmed.values()) / sampled if sampled else 0.0
    lines.append(
        f"{'ALL':<36} verified {sum(confirmed.values()):>3}/{sampled:<3} "
        f"caught {c:>5}/{n:<5} reported {c / n:6.1%}  "
        f"defended (caught × {fraction:.3f}) {c * fraction / n:6.1%}"
    )
    return "\n".join(lines)


if __name__ == "__main__":
    sys.exit(main())
