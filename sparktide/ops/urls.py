from django.urls import path

from sparktide.ops import apidocs, health, metrics

urlpatterns = [
    path("healthz", health.healthz, name="healthz"),
    path("readyz", health.readyz, name="readyz"),
    path("metrics", metrics.metrics, name="metrics"),
    path("v1/docs", apidocs.swagger_ui, name="api-docs"),
    path("v1/redoc", apidocs.redoc, name="api-redoc"),
]
