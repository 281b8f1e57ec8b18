from django.conf import settings


def display_time_zone(request) -> dict:
    """The console's display time zone for its templates (data-time-zone)."""
    return {"display_time_zone": settings.SPARKTIDE_DISPLAY_TIME_ZONE}
