"""Check that mutants mutmut counted killed are killed by a test, outside mutmut.

mutmut runs each mutant in a child forked from a parent that already ran the tests; a
child that fails for a reason of its own (a resource copied from the parent, a test
that is timing-bound under load) counts as a kill. This re-runs a random sample of the
killed mutants, each in a fresh ``pytest`` process inside mutants/ with
``MUTANT_UNDER_TEST`` set, on the tests mutmut's stats say reach the mutated function
(fastest first, stopping at the first failure), and prints the test that failed.

    scripts/mutation_verify.py var/mutmut-results.txt "runs.lifecycle*" [--sample 8]

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
from fnmatch import fnmatch
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
MUTANTS = ROOT / "mutants"


def killed(results: Path, patterns: list[str]) -> list[str]:
    names = []
    for line in results.read_text(encoding="utf-8").splitlines():
        name, sep, status = line.strip().rpartition(": ")
        if sep and status == "killed" and any(fnmatch(name, p) for p in patterns):
            names.append(name)
    return names


def verify(mutant: str, stats: dict) -> tuple[bool, str]:
    function = mutant.rsplit("__mutmut_", 1)[0]
    durations = stats["duration_by_test"]
    tests = sorted(stats["tests_by_mangled_function_name"][function], key=durations.get)
    env = {**os.environ, "MUTANT_UNDER_TEST": mutant, "SPARKTIDE_DB_POOL": "0"}
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-x", "-q", "--reuse-db", "-p", "no:randomly", *tests],
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
    args = parser.parse_args()
    stats = json.loads((MUTANTS / "mutmut-stats.json").read_text(encoding="utf-8"))
    names = killed(args.results, args.patterns)
    seed = args.seed if args.seed is not None else random.randrange(1_000_000)
    sample = random.Random(seed).sample(names, min(args.sample, len(names)))
    confirmed = 0
    for mutant in sample:
        ok, detail = verify(mutant, stats)
        confirmed += ok
        print(f"{'killed by' if ok else 'NOT KILLED:'} {mutant}: {detail}", flush=True)
    print(f"verified {confirmed}/{len(sample)} sampled kills of {len(names)} (seed {seed})")
    return 0 if confirmed == len(sample) else 1


if __name__ == "__main__":
    sys.exit(main())
