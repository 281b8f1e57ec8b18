from django.contrib import admin
from django.urls import include, path
from drf_spectacular.views import SpectacularAPIView

urlpatterns = [
    path("admin/", admin.site.urls),
    path("v1/", include("runs.urls")),
    path("v1/", include("citations.urls")),
    path(
        "v1/schema",
        SpectacularAPIView.as_view(authentication_classes=[], permission_classes=[]),
        name="schema",
    ),
    path("", include("sparktide.ops.urls")),
    path("", include("console.urls")),
]
