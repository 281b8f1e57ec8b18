"""The task queue's results (django_tasks_db) as the admin shows them, in the admin's language.

django_tasks_db registers its own admin with English-only column and field names;
SparkTide re-registers it with translated ones. Its model and field names are translated
by locale/zh_Hans (the package ships no Chinese catalog); its app name in apps.py.
"""

from datetime import datetime
from typing import Any

from django.contrib import admin
from django.utils.translation import gettext_lazy as _
from django_tasks_db.admin import DBTaskResultAdmin
from django_tasks_db.models import DBTaskResult

admin.site.unregister(DBTaskResult)


@admin.register(DBTaskResult)
class TaskResultAdmin(DBTaskResultAdmin):
    list_display = (
        "id",
        "task",
        "status",
        "enqueued_at",
        "started_at",
        "finished_at",
        "priority",
        "queue_name",
    )

    @admin.display(description=_("任务"))
    def task(self, obj: DBTaskResult[Any, Any]) -> str:
        return obj.task_name

    @admin.display(description=_("回溯信息"))
    def formatted_traceback(self, obj: DBTaskResult[Any, Any]) -> str:
        return super().formatted_traceback(obj)

    @admin.display(description=_("最早执行时间"))
    def display_run_after(self, obj: DBTaskResult[Any, Any]) -> datetime | str:
        return super().display_run_after(obj)
