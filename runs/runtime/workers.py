"""The embedded default's task worker: a thread inside the ASGI process.

With SPARKTIDE_INPROCESS_WORKER on (the demo), runs execute in a daemon thread
beside the server, so one process is the whole product and the in-memory
channel layer can wake WebSocket consumers. Scaled out, workers are separate
``manage.py run_worker`` processes and wake-ups go through Redis instead.
"""

import logging
import os
import threading

from django.db import connections
from django_tasks_db.management.commands.db_worker import Worker

from runs.runtime.recovery import recover_runs

logger = logging.getLogger(__name__)


def start_worker(*, interval: float = 0.2) -> threading.Thread:
    def work() -> None:
        try:
            for recovered in recover_runs():
                logger.warning("recovered %s: %s", recovered.run_id, recovered.status)
            Worker(
                queue_names=["*"],
                excluded_queue_names=[],
                interval=interval,
                batch=False,
                backend_name="default",
                startup_delay=False,
                max_tasks=None,
                worker_id=f"inprocess-{os.getpid()}",
            ).run()
        except Exception:
            logger.exception("the in-process task worker stopped")
        finally:
            connections.close_all()

    thread = threading.Thread(target=work, name="sparktide-task-worker", daemon=True)
    thread.start()
    logger.info("in-process task worker started")
    return thread
