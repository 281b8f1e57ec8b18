from django.contrib import admin
from django.urls import include, path
from drf_spectacular.views import SpectacularAPIView

# A request refused before any middleware of /v1 ran (a Host outside ALLOWED_HOSTS).
handler400 = "sparktide.middleware.bad_request"

urlpatterns = [
    path("admin/", admin.site.urls),
    path("v1/", include("api.urls")),
    path("v1/", include("evaluation.urls")),
    path(
        "v1/schema",
        SpectacularAPIView.as_view(authentication_classes=[], permission_classes=[]),
        name="schema",
    ),
    path("", include("sparktide.ops.urls")),
    path("", include("console.urls")),
]
