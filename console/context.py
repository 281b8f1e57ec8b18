from typing import Any

from django.conf import settings
from django.http import HttpRequest


def display_time_zone(request: HttpRequest) -> dict[str, Any]:
    """The console's display time zone for its templates (data-time-zone)."""
    return {"display_time_zone": settings.SPARKTIDE_DISPLAY_TIME_ZONE}
