from django.contrib.admin.forms import AdminAuthenticationForm
from django.contrib.auth import views as auth_views
from django.urls import include, path

from console import views

app_name = "console"

urlpatterns = [
    path(
        "console/login/",
        auth_views.LoginView.as_view(
            template_name="console/login.html",
            # Only active staff may sign in to the console.
            authentication_form=AdminAuthenticationForm,
        ),
        name="login",
    ),
    path("console/logout/", auth_views.LogoutView.as_view(), name="logout"),
    path("console/", views.home, name="home"),
    path("console/runs/", views.runs, name="runs"),
    path("console/runs/<str:run_id>/", views.run_detail, name="run"),
    path("console/runs/<str:run_id>/searches/", views.run_searches, name="run-searches"),
    path("console/runs/<str:run_id>/reruns", views.run_rerun, name="run-rerun"),
    path("console/tenants/<slug:tenant_key>/runs/", views.runs, name="tenant-runs"),
    path("console/apps/<slug:app_slug>/", views.app_home, name="app"),
    path("console/apps/<slug:app_slug>/runs/", views.runs, name="app-runs"),
    path("console/apps/<slug:app_slug>/debug/", views.debug, name="debug"),
    path(
        "console/apps/<slug:app_slug>/debug/runs",
        views.debug_try_version,
        name="debug-try-version",
    ),
    path(
        "console/apps/<slug:app_slug>/evaluations/",
        views.evaluations_page,
        name="evaluations",
    ),
    path(
        "console/evaluations/<str:evaluation_id>/",
        views.evaluation_detail,
        name="evaluation",
    ),
    path("i18n/", include("django.conf.urls.i18n")),
    path("", views.root, name="root"),
]
