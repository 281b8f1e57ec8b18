from django.urls import path

from runs import api

urlpatterns = [
    path("apps/<slug:app>/runs", api.RunListView.as_view(), name="run-list"),
    path("apps/<slug:app>/runs/<str:run_id>", api.RunDetailView.as_view(), name="run-detail"),
    path(
        "apps/<slug:app>/runs/<str:run_id>/events", api.RunEventsView.as_view(), name="run-events"
    ),
    path(
        "apps/<slug:app>/runs/<str:run_id>/events/ticket",
        api.EventTicketView.as_view(),
        name="run-events-ticket",
    ),
    path(
        "apps/<slug:app>/runs/<str:run_id>/answer", api.RunAnswerView.as_view(), name="run-answer"
    ),
    path(
        "apps/<slug:app>/runs/<str:run_id>/cancel", api.RunCancelView.as_view(), name="run-cancel"
    ),
]
