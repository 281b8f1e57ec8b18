"""Finding a run in the console's runs list: each filter (question text, app, agent and version,
owner, status, days) narrows to exactly the runs it names, and the signed (createdAt, id) cursor
pages through every run exactly once while new runs arrive. The REST list takes the same
question / agent / version filters."""

import re
from datetime import timedelta

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from runs.models import Run
from tests import factories
from tests.factories import client_for

pytestmark = pytest.mark.django_db

RUN_LINK = re.compile(r'<a class="run-link" href="/console/runs/(run_[a-z0-9]+)/">')
NEXT = re.compile(r'rel="next" href="\?([^"]+)"')


@pytest.fixture
def versions(app):
    """researcher@1 (pinned) and researcher@2, both published; helper@1 pinned beside them."""
    model = factories.scripted({"answerPart": "x"})
    one = factories.make_agent(app.tenant, "researcher", model=model, pin_to=[app])
    two = factories.make_agent(app.tenant, "researcher", model=model, version="2")
    helper = factories.make_agent(app.tenant, "helper", model=model, pin_to=[app])
    return {"r1": one, "r2": two, "h1": helper}


def make_run(app, owner, version, text, *, ago=timedelta(0), status="COMPLETED") -> Run:
    return Run.objects.create(
        tenant=app.tenant,
        app=app,
        owner=owner,
        agent_version=version,
        input=text,
        status=status,
        security_policy_epoch=app.security_policy_epoch,
        knowledge_access_epoch=app.knowledge_access_epoch,
        created_at=timezone.now() - ago,
    )


@pytest.fixture
def runs(app, alice, bob, versions):
    other_app = factories.make_app(app.tenant, "research", members=[alice])
    return {
        "revenue": make_run(app, alice, versions["r1"], "北辰医药 Revenue 三季度如何？"),
        "margin": make_run(app, bob, versions["r2"], "毛利率为何下降？", status="FAILED"),
        "lower": make_run(app, alice, versions["h1"], "what about revenue growth?"),
        "old": make_run(app, bob, versions["r1"], "去年的营收", ago=timedelta(days=3)),
        "elsewhere": make_run(other_app, alice, versions["r1"], "北辰医药 另一个应用"),
        "percent": make_run(app, alice, versions["r2"], "增长 100% 了吗"),
    }


def listed(staff_client, url: str) -> list[str]:
    response = staff_client.get(url)
    assert response.status_code == 200, response.content[:500]
    return RUN_LINK.findall(response.content.decode())


def ids(runs, *names) -> set[str]:
    return {runs[name].pk for name in names}


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("q=revenue", {"revenue", "lower"}),  # any case
        ("q=REVENUE", {"revenue", "lower"}),
        ("q=北辰医药", {"revenue"}),  # this app only
        ("q=100%25", {"percent"}),  # % is a character, not a wildcard
        ("q=_", set()),
        ("agent=researcher", {"revenue", "margin", "old", "percent"}),
        ("agent=researcher&version=2", {"margin", "percent"}),
        ("agent=helper", {"lower"}),
        ("version=2", {"revenue", "margin", "lower", "old", "percent"}),  # no agent: ignored
        ("owner=bob", {"margin", "old"}),
        ("status=FAILED", {"margin"}),
        ("owner=alice&q=revenue&agent=researcher", {"revenue"}),
    ],
)
def test_each_filter_narrows_the_apps_runs_to_the_ones_it_names(
    staff_client, runs, query, expected
):
    shown = listed(staff_client, f"/console/apps/business/runs/?{query}")
    assert set(shown) == ids(runs, *expected)
    assert len(shown) == len(expected)


def test_the_question_filter_across_apps_and_the_app_scope(staff_client, runs):
    assert set(listed(staff_client, "/console/runs/?q=北辰医药")) == ids(
        runs, "revenue", "elsewhere"
    )
    assert set(listed(staff_client, "/console/apps/research/runs/?q=北辰医药")) == ids(
        runs, "elsewhere"
    )


def test_the_day_range_reads_days_on_the_console_clock(staff_client, runs, settings):
    with timezone.override(settings.SPARKTIDE_DISPLAY_TIME_ZONE):
        old_day = timezone.localtime(runs["old"].created_at).date()
    query = f"since={old_day}&until={old_day}"
    assert listed(staff_client, f"/console/apps/business/runs/?{query}") == [runs["old"].pk]
    later = listed(staff_client, f"/console/apps/business/runs/?since={old_day + timedelta(1)}")
    assert runs["old"].pk not in later and runs["revenue"].pk in later


def test_a_question_too_long_is_refused_as_a_filter_not_an_error_page(staff_client, runs):
    response = staff_client.get("/console/apps/business/runs/?q=" + "长" * 201)
    assert response.status_code == 200
    assert "部分筛选条件无效，已忽略。" in response.content.decode()
    response = staff_client.get("/console/apps/business/runs/?q=a%00b")
    assert response.status_code == 200  # NUL never reaches the database


# --- cursor paging ------------------------------------------------------------------------


def test_paging_shows_every_run_exactly_once_while_new_runs_arrive(
    staff_client, app, alice, versions
):
    older = []
    for i in range(23):  # seven share a timestamp with another: the id breaks the tie
        older.append(make_run(app, alice, versions["r1"], f"问题 {i}", ago=timedelta(hours=i // 2)))
    url, seen, pages = "/console/apps/business/runs/?per=10", [], 0
    while url:
        response = staff_client.get(url)
        assert response.status_code == 200
        page = response.content.decode()
        seen += RUN_LINK.findall(page)
        pages += 1
        # New runs arrive between two pages: they are newer than any page, so never shift one.
        make_run(app, alice, versions["r1"], f"新问题 {pages}")
        found = NEXT.search(page)
        url = (
            "/console/apps/business/runs/?" + found.group(1).replace("&amp;", "&") if found else ""
        )
        assert pages < 10
    assert pages == 3
    assert len(seen) == len(set(seen)) == 23
    assert set(seen) == {run.pk for run in older}
    assert seen == [r.pk for r in sorted(older, key=lambda r: (r.created_at, r.pk), reverse=True)]


def test_the_next_page_keeps_the_filters(staff_client, app, alice, bob, versions):
    for i in range(12):
        make_run(app, alice if i % 2 else bob, versions["r1"], f"营收 {i}", ago=timedelta(hours=i))
    first = staff_client.get("/console/apps/business/runs/?per=10&owner=bob").content.decode()
    assert len(RUN_LINK.findall(first)) == 6 and not NEXT.search(first)
    first = staff_client.get("/console/apps/business/runs/?per=10&q=营收").content.decode()
    query = NEXT.search(first).group(1).replace("&amp;", "&")
    assert "q=" in query and "per=10" in query
    second = listed(staff_client, f"/console/apps/business/runs/?{query}")
    assert len(second) == 2


@pytest.mark.parametrize(
    "cursor",
    ["garbage", "", "%00", None],  # None: a real cursor with its last character changed
)
def test_a_tampered_cursor_is_a_clear_400_on_the_page(staff_client, app, alice, versions, cursor):
    for i in range(12):
        make_run(app, alice, versions["r1"], f"问题 {i}", ago=timedelta(hours=i))
    if cursor is None:
        page = staff_client.get("/console/apps/business/runs/?per=10").content.decode()
        real = NEXT.search(page).group(1).split("cursor=")[1]
        cursor = real[:-1] + ("A" if real[-1] != "A" else "B")
    elif cursor == "":
        return  # an empty cursor is the first page
    response = staff_client.get(f"/console/apps/business/runs/?per=10&cursor={cursor}")
    assert response.status_code == 400
    page = response.content.decode()
    assert "翻页链接无效或已被改动，请从第一页重新查看。" in page
    assert 'href="?per=10">第一页</a>' in page
    assert not RUN_LINK.findall(page)


def count_queries(client, url) -> int:
    with CaptureQueriesContext(connection) as queries:
        assert client.get(url).status_code == 200
    return len(queries)


def test_every_page_costs_the_same_queries(staff_client, app, alice, versions):
    for i in range(60):
        make_run(app, alice, versions["r1" if i % 2 else "r2"], f"问题 {i}", ago=timedelta(hours=i))
    for scope in ("/console/apps/business/runs/", "/console/runs/", "/console/tenants/acme/runs/"):
        first = staff_client.get(f"{scope}?per=10&q=问题").content.decode()
        second = "?" + NEXT.search(first).group(1).replace("&amp;", "&")
        small = count_queries(staff_client, f"{scope}?per=10")
        assert count_queries(staff_client, f"{scope}?per=100") == small, scope
        assert count_queries(staff_client, f"{scope}{second}") == small, scope
        assert count_queries(staff_client, f"{scope}?agent=researcher&version=2&q=1") == small


@pytest.mark.postgres(reason="the trigram index is PostgreSQL's")
def test_the_question_search_can_use_its_trigram_index(app, alice, versions):
    make_run(app, alice, versions["r1"], "北辰医药 revenue")
    from api.selectors import match_runs

    sql, params = match_runs(Run.objects.all(), question="revenue").query.sql_with_params()
    with connection.cursor() as cursor:
        cursor.execute("SET LOCAL enable_seqscan = off")
        cursor.execute("EXPLAIN " + sql, params)
        plan = "\n".join(row[0] for row in cursor.fetchall())
    assert "run_input_upper_trgm" in plan, plan


# --- the REST list takes the same filters ---------------------------------------------------


def test_the_rest_list_filters_by_question_agent_and_version(runs, alice):
    client = client_for(alice)

    def listed_ids(query):
        response = client.get(f"/v1/apps/business/runs?{query}")
        assert response.status_code == 200, response.content
        return {run["id"] for run in response.json()["runs"]}

    assert listed_ids("q=REVENUE") == ids(runs, "revenue", "lower")  # alice's own only
    assert listed_ids("agent=researcher") == ids(runs, "revenue", "percent")
    assert listed_ids("agent=researcher&agentVersion=2") == ids(runs, "percent")
    assert listed_ids("q=100%25&agent=researcher&agentVersion=2") == ids(runs, "percent")
    assert listed_ids("q=北辰医药") == ids(runs, "revenue")  # not the other app's run


@pytest.mark.parametrize(
    ("query", "field"),
    [("agentVersion=2", "agentVersion"), ("q=" + "x" * 201, "q"), ("q=a%00b", "q")],
)
def test_the_rest_list_refuses_a_bad_filter_with_invalid_request(runs, alice, query, field):
    response = client_for(alice).get(f"/v1/apps/business/runs?{query}")
    assert response.status_code == 400
    assert response["Content-Type"].startswith("application/problem+json")
    assert response.json()["code"] == "INVALID_REQUEST"
    assert field in str(response.json())


def test_a_page_holds_50_runs_unless_asked_otherwise(staff_client, app, alice, versions):
    for i in range(53):
        make_run(app, alice, versions["r1"], f"问题 {i}", ago=timedelta(minutes=i))
    first = staff_client.get("/console/apps/business/runs/").content.decode()
    assert len(RUN_LINK.findall(first)) == 50
    second = "?" + NEXT.search(first).group(1).replace("&amp;", "&")
    assert len(listed(staff_client, f"/console/apps/business/runs/{second}")) == 3
