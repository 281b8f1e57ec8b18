"""Feedback on the console's pages: a run's feedback (运行详情) and 👍/👎 per agent version
(运行记录). Each tag is one query, whatever the number of items; the rules are feedback's."""

from collections.abc import Iterable
from typing import Any

from django import template

from feedback.models import Feedback
from feedback.service import counts_by_agent_version, run_feedback
from runs.models import Run

register = template.Library()


@register.simple_tag
def feedback_of(run: Run) -> list[Feedback]:
    """The run's feedback, oldest first, each with its block loaded (one query)."""
    return run_feedback(run)


@register.simple_tag
def feedback_counts(runs: Iterable[Run]) -> list[dict[str, Any]]:
    """👍/👎 given on runs of each agent version the listed runs use (one query).

    ``runs`` come with ``agent_version__agent`` loaded (console.selectors.runs_queryset)."""
    versions = {run.agent_version_id: run.agent_version for run in runs}
    counts = counts_by_agent_version(versions)
    rows = [
        {
            "agent": version.agent.key,
            "version": version.version,
            "up": counts.get(pk, (0, 0))[0],
            "down": counts.get(pk, (0, 0))[1],
        }
        for pk, version in versions.items()
    ]
    return sorted(rows, key=lambda row: (row["agent"], row["version"]))
