from django.contrib.auth import views as auth_views
from django.urls import path

from sparktide.console import views

app_name = "console"

urlpatterns = [
    path(
        "console/login/",
        auth_views.LoginView.as_view(template_name="console/login.html"),
        name="login",
    ),
    path("console/logout/", auth_views.LogoutView.as_view(), name="logout"),
    path("console/", views.home, name="home"),
    path("", views.root, name="root"),
]
