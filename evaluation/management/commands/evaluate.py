"""python manage.py evaluate SET... --app APP --as USER [--agent KEY[@VERSION] ...]
[--json FILE] [--fail-under METRIC=VALUE ...] [--jobs N] — docs/evaluation.md."""

import json
import logging
from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from evaluation.report import report, side_by_side
from evaluation.runner import (
    EvaluationError,
    as_json,
    concurrency,
    evaluate,
    missed_thresholds,
    parse_threshold,
    resolve,
    summarize,
)
from evaluation.service import EvaluationAbandoned, fail, finish, record_command, run_all
from evaluation.sets import EvaluationSetError, load_sets


class Command(BaseCommand):
    help = (
        "Run evaluation sets: every question a normal run as the user, every answer and "
        "cited excerpt read back as the business app reads them, measured."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("sets", nargs="+", metavar="SET", help="evaluation set files")
        parser.add_argument("--app", required=True, help="the app's slug")
        parser.add_argument("--as", dest="username", required=True, help="the asking user")
        parser.add_argument(
            "--agent",
            action="append",
            default=[],
            metavar="KEY[@VERSION]",
            help="the agent (its pinned version) or a published version of it; twice to "
            "compare two versions (the app's pin never changes)",
        )
        parser.add_argument("--json", dest="json_file", help="write every result to this file")
        parser.add_argument(
            "--fail-under",
            action="append",
            default=[],
            metavar="METRIC=VALUE",
            help="exit non-zero when a rate is under VALUE (0.9 or 90%%)",
        )
        parser.add_argument(
            "--jobs", type=int, default=1, help="questions at once (PostgreSQL only)"
        )

    def handle(
        self,
        *args: Any,
        sets: list[str],
        app: str,
        username: str,
        agent: list[str],
        json_file: str | None,
        fail_under: list[str],
        jobs: int,
        **options: Any,
    ) -> None:
        if len(agent) > 2:
            raise CommandError("--agent: at most two versions are compared at once")
        if jobs < 1:
            raise CommandError("--jobs: at least 1")
        try:
            loaded = load_sets(Path(s) for s in sets)
            thresholds = [parse_threshold(spec) for spec in fail_under]
            app_obj, user, targets = resolve(app, username, agent)
        except (EvaluationSetError, EvaluationError) as exc:
            raise CommandError(str(exc))
        effective, why = concurrency(jobs)
        if why:
            self.stderr.write(f"--jobs {jobs}: {why}.")
        # One INFO line per run, publication and preview would drown the progress lines
        # (-v 2 keeps them).
        events = logging.getLogger("sparktide.events")
        level = events.level
        if options["verbosity"] < 2:
            events.setLevel(logging.WARNING)
        # Kept like an evaluation started in the console (listed on its 评测 page).
        kept = record_command(app=app_obj, owner=user, sets=loaded, chosen=targets)
        try:
            if effective == 1:
                evaluations = run_all(kept, loaded, targets, say=self.stderr.write)
            else:  # progress is counted at the end (threads share no connection)
                evaluations = [
                    evaluate(
                        loaded,
                        app=app_obj,
                        user=user,
                        target=target,
                        jobs=effective,
                        progress=self.stderr.write,  # one line per question
                    )
                    for target in targets
                ]
                finish(kept.pk, evaluations)
        except EvaluationAbandoned:
            raise CommandError(f"evaluation {kept.pk} was ended by someone else")
        except BaseException as exc:
            fail(kept.pk, f"{type(exc).__name__}: {exc}")
            raise
        finally:
            events.setLevel(level)
        self.stdout.write(f"Kept as evaluation {kept.pk} (the app's 评测 page lists it).")
        for evaluation in evaluations:
            self.stdout.write("\n".join(["", *report(evaluation, loaded)]))
        if len(evaluations) == 2:
            self.stdout.write("\n".join(["", *side_by_side(evaluations[0], evaluations[1])]))
        if json_file:
            data = {"evaluations": [as_json(e, loaded) for e in evaluations]}
            Path(json_file).write_text(json.dumps(data, ensure_ascii=False, indent=2))
        missed = [
            f"{e.target.label}: {line}"
            for e in evaluations
            for line in missed_thresholds(summarize(e.results), thresholds)
        ]
        if missed:
            raise CommandError("--fail-under missed:\n  " + "\n  ".join(missed))
