from django.urls import path

from api import citations, feedback, runs

urlpatterns = [
    path("apps/<slug:app>/runs", runs.RunListView.as_view(), name="run-list"),
    path("apps/<slug:app>/runs/<str:run_id>", runs.RunDetailView.as_view(), name="run-detail"),
    path(
        "apps/<slug:app>/runs/<str:run_id>/events", runs.RunEventsView.as_view(), name="run-events"
    ),
    path(
        "apps/<slug:app>/runs/<str:run_id>/events/ticket",
        runs.EventTicketView.as_view(),
        name="run-events-ticket",
    ),
    path(
        "apps/<slug:app>/runs/<str:run_id>/answer", runs.RunAnswerView.as_view(), name="run-answer"
    ),
    path(
        "apps/<slug:app>/runs/<str:run_id>/cancel", runs.RunCancelView.as_view(), name="run-cancel"
    ),
    path(
        "apps/<slug:app>/runs/<str:run_id>/feedback",
        feedback.RunFeedbackView.as_view(),
        name="run-feedback",
    ),
    # ``str`` for the app and ``path`` for the citation ID: every request reaches
    # the view, so a malformed slug gets the same problem+json 404 (and no-store)
    # as a missing app, and a URI given as an ID (even with %2F) is refused by
    # the view as CITATION_NOT_AVAILABLE instead of falling out of the router.
    path(
        "apps/<str:app>/runs/<str:run_id>/citations/<path:citation_id>/preview",
        citations.CitationPreviewView.as_view(),
        name="citation-preview",
    ),
]
