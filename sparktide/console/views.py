from django.contrib.admin.views.decorators import staff_member_required
from django.shortcuts import redirect, render

from sparktide.tenancy.models import App


def root(request):
    return redirect("console:home")


@staff_member_required(login_url="console:login")
def home(request):
    apps = App.objects.select_related("tenant").order_by("tenant__key", "slug")
    return render(request, "console/home.html", {"apps": apps})
