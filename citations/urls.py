from django.urls import path

from citations import api

urlpatterns = [
    # ``str`` for the app and ``path`` for the citation ID: every request reaches
    # the view, so a malformed slug gets the same problem+json 404 (and no-store)
    # as a missing app, and a URI given as an ID (even with %2F) is refused by
    # the view as CITATION_NOT_AVAILABLE instead of falling out of the router.
    path(
        "apps/<str:app>/runs/<str:run_id>/citations/<path:citation_id>/preview",
        api.CitationPreviewView.as_view(),
        name="citation-preview",
    ),
]
