from typing import Any

from django.db import connection
from django.dispatch import receiver
from django.tasks import TaskResult, task
from django.tasks.signals import task_enqueued

from runtime.engine import execute_run

# The PostgreSQL channel a worker LISTENs on (runtime/workers.py): one NOTIFY per
# enqueued run, delivered when the enqueuing transaction commits — so a worker woken by
# it always finds the task row.
RUNS_CHANNEL = "sparktide_runs"


@task()
def execute_run_task(run_id: str) -> str | None:
    """A run executes in a background task (django.tasks; see settings.TASKS)."""
    return execute_run(run_id)


@receiver(task_enqueued)
def notify_workers(sender: object, task_result: TaskResult[Any, Any], **kwargs: Any) -> None:
    """Wake idle workers at once when a run is enqueued (they still poll, so a lost
    notification only costs the poll interval)."""
    if task_result.task.module_path != execute_run_task.module_path:
        return
    if connection.vendor != "postgresql" or sender.__module__.split(".")[0] != "django_tasks_db":
        return
    with connection.cursor() as cursor:
        cursor.execute(f"NOTIFY {RUNS_CHANNEL}")
