"""The evaluation sets of tests/answers/sets/, over their seven fixtures, in a fresh database.

    .venv/bin/python bench/evalsets.py [--only FIXTURE ...] [--json DIR] [--agent KEY@VERSION ...]
        [--tuned-only]
        [--database-url postgres://…/DB --jobs N]

It builds the embedded default (SQLite under a temporary directory, like bench/answers.py),
applies the seven fixtures — demo/manifest.yaml, tests/answers/second_manifest.yaml, the
two written by tests/answers/file_fixtures.py (a PDF with a table; a DOCX and a Markdown
file with tables), harbor (tests/answers/harbor_fixture.py: PDFs, a DOCX, a Markdown
note), ledger (tests/answers/ledger_fixture.py: a bank's PDF, a fund's DOCX, a board
resolution as text, a Markdown note) and quarry (tests/answers/quarry_fixture.py: an
insurer's PDF, a dividend notice as DOCX, a profit forecast as text, an incentive plan in
Markdown) — and runs ``manage.py evaluate`` once per fixture with its tuned set and its
held-out set side by side as separate columns (never mixed: the held-out half is never used
for tuning). Then one table over all fixtures: each fixture's
tuned and held-out columns, the tuned total and the held-out total — for the first sets
(NAME), the second ones (NAME_b, written later over the same fixtures), the third hand's
(harbor, ledger, quarry), the fourth hand's (NAME_d, over the third hand's fixtures), the
fifth hand's (NAME_e, over all seven), the sixth hand's (NAME_f) and the seventh hand's
(NAME_g, both over all seven) apart. Timings are printed, never asserted.

The held-out half is reported in aggregate only: the lines naming a held-out question (its
progress line, its failure with the start of its answer) are left out of what is printed
and counted instead — so that reading the output never tunes the reader to them.
``--show-heldout`` prints them (and the JSON files always hold everything).

``--database-url`` evaluates in that database instead (migrated, the fixtures applied:
applying is idempotent, and every evaluation asks in conversations of its own, so a
database may be reused); on PostgreSQL ``--jobs N`` asks N questions at once.
"""

from __future__ import annotations

import argparse
import io
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import TextIO

ROOT = Path(__file__).resolve().parent.parent
SETS = ROOT / "tests" / "answers" / "sets"
sys.path.insert(0, str(ROOT))

from tests.answers.file_fixtures import SET_FIXTURES as FIXTURES  # noqa: E402


class HeldOutFilter(io.TextIOBase):
    """A text stream that passes lines on to ``target`` except those naming a question
    of a held-out set (``<set>_heldout/<key>``), which it counts."""

    def __init__(self, target: TextIO, names: list[str]) -> None:
        self.target = target
        self.marks = tuple(f"{name}_heldout/" for name in names)
        self.hidden = 0
        self._pending = ""

    def writable(self) -> bool:
        return True

    def write(self, text: str) -> int:
        lines = (self._pending + text).split("\n")
        self._pending = lines.pop()
        for line in lines:
            if any(mark in line for mark in self.marks):
                self.hidden += 1
            else:
                self.target.write(line + "\n")
        return len(text)

    def flush(self) -> None:
        if self._pending:
            self.write("\n")
        self.target.flush()


def setup(var_dir: str, database_url: str = "") -> None:
    os.environ.update(
        {
            "DEBUG": "1",
            "SPARKTIDE_VAR_DIR": var_dir,
            "DATABASE_URL": database_url or f"sqlite:///{var_dir}/evalsets.sqlite3",
            "DJANGO_SETTINGS_MODULE": "sparktide.settings",
            "SPARKTIDE_TASK_BACKEND": "django.tasks.backends.dummy.DummyBackend",
        }
    )
    os.environ.pop("REDIS_URL", None)
    import django

    django.setup()
    from django.core.management import call_command

    call_command("migrate", verbosity=0)


def apply_fixture(name: str, var_dir: str) -> None:
    from io import StringIO

    from django.core.management import call_command

    from tests.answers.file_fixtures import fixture_manifest

    path = fixture_manifest(name, Path(var_dir) / "fixtures")
    call_command("apply_manifest", str(path), stdout=StringIO())


# Fixtures written, with their sets, by a third hand after the first two generations.
THIRD_HAND = {"harbor", "ledger", "quarry"}


def generation(name: str) -> str:
    """The set a name belongs to: "" for the first sets (demo, pine…), " b" for the second
    ones (demo_b, pine_b…), " c" for the third hand's fixtures (harbor, ledger, quarry),
    " d" for the fourth hand's sets over them (harbor_d…), " e" for the fifth hand's over all
    seven (demo_e…), " f" for the sixth hand's (demo_f…), " g" for the seventh hand's (demo_g…) — totalled apart, so each half of each is seen on its own."""
    if name in THIRD_HAND:
        return " c"
    _, _, suffix = name.partition("_")
    return f" {suffix}" if suffix else ""


def overall(names: list[str], json_dir: Path) -> None:
    """Every fixture's tuned and held-out halves, and the two totals, per agent version."""
    import json

    from evaluation.report import table
    from evaluation.runner import result_from_json, summarize

    loaded = {
        name: json.loads((json_dir / f"{name}.json").read_text())["evaluations"]
        for name in names
        if (json_dir / f"{name}.json").exists()
    }
    if not loaded:
        return
    for index, first in enumerate(next(iter(loaded.values()))):
        columns, everything = [], []
        tuned: dict[str, list] = {}
        held_out: dict[str, list] = {}
        for name, evaluations in loaded.items():
            results = [result_from_json(q) for q in evaluations[index]["questions"]]
            mine = [r for r in results if r.set == name]
            theirs = [r for r in results if r.set == f"{name}_heldout"]
            columns += [(name, summarize(mine)), (f"{name} held-out", summarize(theirs))]
            tuned.setdefault(generation(name), []).extend(mine)
            held_out.setdefault(generation(name), []).extend(theirs)
            everything += mine + theirs
        for suffix in tuned:
            columns += [
                (f"TUNED{suffix}", summarize(tuned[suffix])),
                (f"HELD-OUT{suffix}", summarize(held_out[suffix])),
            ]
        columns.append(("all", summarize(everything)))
        print(f"\n## all fixtures, {first['agent']}\n")
        print("\n".join(table(columns)))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--only", action="append", choices=sorted(FIXTURES), default=[])
    parser.add_argument("--json", dest="json_dir", help="write one JSON file per fixture here")
    parser.add_argument("--agent", action="append", default=[])
    parser.add_argument("--database-url", default="", help="default: a fresh SQLite database")
    parser.add_argument("--jobs", type=int, default=1)
    parser.add_argument(
        "--show-heldout", action="store_true", help="also print the held-out questions' lines"
    )
    parser.add_argument(
        "--tuned-only", action="store_true", help="ask the tuned sets only (while tuning)"
    )
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="sparktide-evalsets-") as var_dir:
        started = time.perf_counter()
        setup(var_dir, args.database_url)
        from django.core.management import call_command
        from django.core.management.base import CommandError

        json_dir = Path(args.json_dir or Path(var_dir) / "results")
        names = args.only or list(FIXTURES)
        for name in dict((FIXTURES[n][0], n) for n in names).values():
            apply_fixture(name, var_dir)  # once per manifest: NAME and NAME_b share one
        print(f"fixtures applied in {time.perf_counter() - started:.1f} s", file=sys.stderr)
        failed = False
        for name in names:
            _, app, user = FIXTURES[name]
            options = ["--app", app, "--as", user, "--jobs", str(args.jobs)]
            for agent in args.agent:
                options += ["--agent", agent]
            json_dir.mkdir(parents=True, exist_ok=True)
            options += ["--json", str(json_dir / f"{name}.json")]
            print(f"\n## {name}")
            sets = [str(SETS / f"{name}.yaml")]
            if not args.tuned_only:
                sets.append(str(SETS / f"{name}_heldout.yaml"))
            out, err = sys.stdout, sys.stderr
            if not args.show_heldout:
                out, err = HeldOutFilter(sys.stdout, [name]), HeldOutFilter(sys.stderr, [name])
            try:
                call_command("evaluate", *sets, *options, stdout=out, stderr=err)
            except CommandError as exc:
                failed = True
                print(exc, file=sys.stderr)
            if isinstance(out, HeldOutFilter) and isinstance(err, HeldOutFilter):
                out.flush()
                err.flush()
                print(
                    f"({out.hidden + err.hidden} lines naming held-out questions not shown; "
                    "--show-heldout prints them)"
                )
        print(f"\nall fixtures: {time.perf_counter() - started:.1f} s", file=sys.stderr)
        overall(names, json_dir)
        sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
