from django.urls import path

from evaluation import api

urlpatterns = [
    path("apps/<slug:app>/evaluations", api.EvaluationListView.as_view(), name="evaluation-list"),
    path(
        "apps/<slug:app>/evaluations/<str:evaluation_id>",
        api.EvaluationDetailView.as_view(),
        name="evaluation-detail",
    ),
]
