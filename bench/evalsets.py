"""The evaluation sets of tests/answers/sets/, over their four fixtures, in a fresh database.

    .venv/bin/python bench/evalsets.py [--only FIXTURE ...] [--json DIR] [--agent KEY@VERSION ...]

It builds the embedded default (SQLite under a temporary directory, like bench/answers.py),
applies the four fixtures — demo/manifest.yaml, tests/answers/second_manifest.yaml and the
two written by tests/answers/file_fixtures.py (a PDF with a table; a DOCX and a Markdown
file with tables) — and runs ``manage.py evaluate`` once per fixture with its tuned set and
its held-out set side by side as separate columns (never mixed: the held-out half is
never used for tuning). Timings are printed, never asserted.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SETS = ROOT / "tests" / "answers" / "sets"

# fixture → (manifest or file fixture, app, user)
FIXTURES: dict[str, tuple[str, str, str]] = {
    "demo": ("demo/manifest.yaml", "research-desk", "analyst"),
    "pine": ("tests/answers/second_manifest.yaml", "pine-desk", "reader"),
    "coldchain": ("file:coldchain", "cold-desk", "yc-analyst"),
    "chenghu": ("file:chenghu", "chenghu-desk", "pm"),
}


def setup(var_dir: str) -> None:
    os.environ.update(
        {
            "DEBUG": "1",
            "SPARKTIDE_VAR_DIR": var_dir,
            "DATABASE_URL": f"sqlite:///{var_dir}/evalsets.sqlite3",
            "DJANGO_SETTINGS_MODULE": "sparktide.settings",
            "SPARKTIDE_TASK_BACKEND": "django.tasks.backends.dummy.DummyBackend",
        }
    )
    os.environ.pop("REDIS_URL", None)
    sys.path.insert(0, str(ROOT))
    import django

    django.setup()
    from django.core.management import call_command

    call_command("migrate", verbosity=0)


def apply_fixture(name: str, var_dir: str) -> None:
    from io import StringIO

    from django.core.management import call_command

    source = FIXTURES[name][0]
    if source.startswith("file:"):
        from tests.answers.file_fixtures import write_fixture

        path = write_fixture(source.removeprefix("file:"), Path(var_dir) / "fixtures" / name)
    else:
        path = ROOT / source
    call_command("apply_manifest", str(path), stdout=StringIO())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--only", action="append", choices=sorted(FIXTURES), default=[])
    parser.add_argument("--json", dest="json_dir", help="write one JSON file per fixture here")
    parser.add_argument("--agent", action="append", default=[])
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="sparktide-evalsets-") as var_dir:
        started = time.perf_counter()
        setup(var_dir)
        from django.core.management import call_command
        from django.core.management.base import CommandError

        names = args.only or list(FIXTURES)
        for name in names:
            apply_fixture(name, var_dir)
        print(f"fixtures applied in {time.perf_counter() - started:.1f} s", file=sys.stderr)
        failed = False
        for name in names:
            _, app, user = FIXTURES[name]
            options = ["--app", app, "--as", user]
            for agent in args.agent:
                options += ["--agent", agent]
            if args.json_dir:
                Path(args.json_dir).mkdir(parents=True, exist_ok=True)
                options += ["--json", str(Path(args.json_dir) / f"{name}.json")]
            print(f"\n## {name}")
            sets = [str(SETS / f"{name}.yaml"), str(SETS / f"{name}_heldout.yaml")]
            try:
                call_command("evaluate", *sets, *options)
            except CommandError as exc:
                failed = True
                print(exc, file=sys.stderr)
        print(f"\nall fixtures: {time.perf_counter() - started:.1f} s", file=sys.stderr)
        sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
