from django.tasks import task

from evaluation.service import execute_evaluation


@task()
def execute_evaluation_task(evaluation_id: str) -> str | None:
    """An evaluation executes in a background task, as runs do (settings.TASKS): the
    worker that claims it asks every question as a normal run of the owner."""
    return execute_evaluation(evaluation_id)
