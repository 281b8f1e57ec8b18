from django.tasks import task

from runs.runtime.engine import execute_run


@task()
def execute_run_task(run_id: str) -> str | None:
    """A run executes in a background task (django.tasks; see settings.TASKS)."""
    return execute_run(run_id)
