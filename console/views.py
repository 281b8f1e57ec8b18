"""Console views: parse, call one selector or service, render. No rules live here."""

from collections.abc import Callable
from functools import wraps
from typing import Any, cast

from django.conf import settings
from django.contrib.admin.views.decorators import staff_member_required
from django.contrib.auth.models import User
from django.http import Http404, HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.utils import timezone
from django.utils.translation import gettext as _
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from api.selectors import public_run
from console import detail, labels, selectors
from console.forms import EvaluationForm, RerunForm, RunFilterForm, TryVersionForm
from console.reruns import rerun_panel, start_rerun
from evaluation import service as evaluations
from evaluation.models import Evaluation
from foundation.errors import ErrorCode, SparkTideError
from runs.retention import require_within_retention
from runtime.services import start_run
from tenancy.models import App, Tenant

View = Callable[..., HttpResponse]


def in_display_time_zone(view: View) -> View:
    """One clock: every time a console page renders, and every date a filter reads, is in
    SPARKTIDE_DISPLAY_TIME_ZONE, the zone the page scripts use and the pages name."""

    @wraps(view)
    def wrapped(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        with timezone.override(settings.SPARKTIDE_DISPLAY_TIME_ZONE):
            return view(request, *args, **kwargs)

    return wrapped


def staff_only(view: View) -> View:
    """Staff session required; pages with run data are never cached by the browser."""
    return wraps(view)(
        never_cache(staff_member_required(in_display_time_zone(view), login_url="console:login"))
    )


def _staff_member(request: HttpRequest) -> User:
    """The user of a ``staff_only`` view: an authenticated staff member."""
    return cast(User, request.user)


def root(request: HttpRequest) -> HttpResponse:
    return redirect("console:home")


@require_GET
@staff_only
def home(request: HttpRequest) -> HttpResponse:
    return render(
        request,
        "console/home.html",
        {"tenants": selectors.app_overview(), "section": "home"},
    )


@require_GET
@staff_only
def runs(request: HttpRequest, tenant_key: str = "", app_slug: str = "") -> HttpResponse:
    tenant = get_object_or_404(Tenant, key=tenant_key) if tenant_key else None
    app = (
        get_object_or_404(App.objects.select_related("tenant"), slug=app_slug) if app_slug else None
    )
    data = request.GET.copy()
    data.setdefault("per", str(selectors.DEFAULT_PAGE_SIZE))
    form = RunFilterForm(data, choices=selectors.filter_choices(app))
    filters = form.filters(tenant=tenant.key if tenant else "", app=app.slug if app else "")
    query = request.GET.copy()
    query.pop("cursor", None)
    context = {
        "form": form,
        "app": app,
        "tenant": tenant or (app.tenant if app else None),
        "query": query.urlencode(),
        "cursor": request.GET.get("cursor", ""),
        "section": "runs",
    }
    try:
        page = selectors.runs_page(
            filters, cursor=request.GET.get("cursor") or None, per_page=form.per_page()
        )
    except SparkTideError:  # a cursor SparkTide did not sign (edited, or cut short)
        context["cursor_error"] = _("翻页链接无效或已被改动，请从第一页重新查看。")
        return render(request, "console/runs.html", context, status=400)
    return render(request, "console/runs.html", {**context, "page": page})


@require_GET
@staff_only
def app_home(request: HttpRequest, app_slug: str) -> HttpResponse:
    return redirect("console:app-runs", app_slug=app_slug)


@require_GET
@staff_only
def debug(request: HttpRequest, app_slug: str) -> HttpResponse:
    app = get_object_or_404(App.objects.select_related("tenant"), slug=app_slug)
    return render(
        request,
        "console/debug.html",
        {
            "app": app,
            "tenant": app.tenant,
            "setup": selectors.debug_setup(app),
            "strings": labels.client_strings(),
            "section": "debug",
        },
    )


@require_POST
@staff_only
def debug_try_version(request: HttpRequest, app_slug: str) -> HttpResponse:
    """Create a run of another published version as the owner of the pasted token
    (verified here, see TryVersionForm); start_run checks the rest."""
    app = get_object_or_404(App.objects.select_related("tenant"), slug=app_slug)
    form = TryVersionForm(request.POST)
    if not form.is_valid():
        detail = " ".join(str(e) for errors in form.errors.values() for e in errors)
        return _problem(SparkTideError(ErrorCode.INVALID_REQUEST, detail))
    data = form.cleaned_data
    try:
        run = start_run(
            user=data["owner_user"],
            app=app,
            agent_key=data["agent"],
            input=data["input"],
            agent_version=data["version"],
        )
    except SparkTideError as error:
        return _problem(error)
    return JsonResponse(public_run(run), status=201)


def _problem(error: SparkTideError) -> JsonResponse:
    return JsonResponse(
        error.problem(), status=error.status, content_type="application/problem+json"
    )


@require_GET
@staff_only
def run_detail(request: HttpRequest, run_id: str) -> HttpResponse:
    run = detail.console_run(run_id)
    if run is None:
        raise Http404
    try:
        # The console's socket refuses such a run (410 EVENT_CURSOR_EXPIRED): so does its page.
        require_within_retention(run)
    except SparkTideError as expired:
        return render(
            request,
            "console/run_expired.html",
            {"error": expired, "run_id": run.pk, "app": run.app, "tenant": run.app.tenant},
            status=expired.status,
        )
    return render(
        request,
        "console/run_detail.html",
        {
            "detail": detail.run_detail(run),
            "run": run,
            "app": run.app,
            "tenant": run.app.tenant,
            "strings": labels.client_strings(),
            "rerun": rerun_panel(run),
            "section": "run",
        },
    )


@require_GET
@staff_only
def run_searches(request: HttpRequest, run_id: str) -> HttpResponse:
    """检索记录 of one run as a fragment: what 运行调试 shows of the run it watches, from the
    same template and rows as 运行详情 (console.detail.search_panels)."""
    run = detail.console_run(run_id)
    if run is None:
        raise Http404
    return render(request, "console/_searches.html", {"searches": detail.search_panels(run)})


@require_POST
@staff_only
def run_rerun(request: HttpRequest, run_id: str) -> HttpResponse:
    """用其他版本重跑: the run's question again with another published version of its agent,
    as its owner — the owner of the pasted token, verified (RerunForm), who must be the
    run's own owner (start_rerun). 201 with the new run and its 运行详情 address."""
    run = detail.console_run(run_id)
    if run is None:
        raise Http404
    try:
        require_within_retention(run)  # its question is gone with the rest of it
    except SparkTideError as expired:
        return _problem(expired)
    form = RerunForm(request.POST)
    if not form.is_valid():
        # Named per field, as the API's INVALID_REQUEST details are ("token: …").
        message = " ".join(f"{field}: {e}" for field, errors in form.errors.items() for e in errors)
        return _problem(SparkTideError(ErrorCode.INVALID_REQUEST, message))
    try:
        new = start_rerun(
            original=run,
            owner=form.cleaned_data["owner_user"],
            version=form.cleaned_data["version"],
            started_by=_staff_member(request),
        )
    except SparkTideError as error:
        return _problem(error)
    return JsonResponse(
        {**public_run(new), "url": reverse("console:run", args=[new.pk]), "rerunOf": run.pk},
        status=201,
    )


@require_http_methods(["GET", "POST"])
@staff_only
def evaluations_page(request: HttpRequest, app_slug: str) -> HttpResponse:
    """评测: start an evaluation as a member (their token), and the app's past ones."""
    app = get_object_or_404(App.objects.select_related("tenant"), slug=app_slug)
    versions = selectors.evaluation_versions(app)
    shipped = evaluations.shipped_sets(app)
    form = EvaluationForm(
        request.POST if request.method == "POST" else None,
        request.FILES if request.method == "POST" else None,
        versions=versions,
        shipped=shipped,
    )
    error = ""
    if request.method == "POST" and form.is_valid():
        try:
            evaluation = _start_evaluation(request, app, form)
        except SparkTideError as exc:
            error = _evaluation_error(exc)
        else:
            return redirect("console:evaluation", evaluation_id=evaluation.pk)
    return render(
        request,
        "console/evaluations.html",
        {
            "app": app,
            "tenant": app.tenant,
            "form": form,
            "error": error,
            "versions": versions,
            "past": selectors.past_evaluations(app),
            "trend": labels.EVALUATION_TREND,
            "measures": {k: labels.EVALUATION_MEASURES[k] for k in labels.EVALUATION_TREND},
            "section": "evaluations",
        },
        status=400 if request.method == "POST" else 200,
    )


def _start_evaluation(request: HttpRequest, app: App, form: EvaluationForm) -> Evaluation:
    data = form.cleaned_data
    if data.get("shipped"):
        checked = evaluations.load_shipped_set(app, data["shipped"])
    else:
        try:
            text, name = form.set_text()
        except Exception as exc:  # forms.ValidationError: the file is not UTF-8
            raise SparkTideError(ErrorCode.INVALID_REQUEST, " ".join(getattr(exc, "messages", [])))
        checked = evaluations.check_set(evaluations.read_set_file(text, name), name)
    return evaluations.create_evaluation(
        app=app,
        owner=data["owner_user"],
        evaluation_set=checked,
        agents=data["agents"],
        started_by=_staff_member(request),
        origin=Evaluation.Origin.CONSOLE,
        where=_("版本"),
    )


def _evaluation_error(exc: SparkTideError) -> str:
    if exc.code == ErrorCode.RESOURCE_NOT_FOUND:  # require_member: the token's owner
        return _("令牌的所有者不是此应用的有效成员：问题只能以成员的身份运行。")
    return str(exc.detail)


@require_GET
@staff_only
def evaluation_detail(request: HttpRequest, evaluation_id: str) -> HttpResponse:
    evaluation = selectors.console_evaluation(evaluation_id)
    if evaluation is None:
        raise Http404
    return render(
        request,
        "console/evaluation.html",
        {
            "evaluation": evaluation,
            "app": evaluation.app,
            "tenant": evaluation.app.tenant,
            "summary": selectors.evaluation_summary(evaluation, labels.EVALUATION_MEASURES),
            "status_label": labels.EVALUATION_STATUS.get(evaluation.status, evaluation.status),
            "section": "evaluations",
        },
    )
