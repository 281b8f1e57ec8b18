"""The preview of a MANAGED citation: the excerpt for its owner, and every check
of the chain refusing with its documented code, in the documented order."""

from datetime import timedelta

import pytest
from django.db import connection
from django.db.models import F
from django.utils import timezone
from guardian.shortcuts import assign_perm, remove_perm

from citations.models import CitationReference
from knowledge.models import Chunk, KnowledgeVersion, Lease
from knowledge.text import snippet_digest
from tenancy.models import App, Membership
from tests.factories import client_for
from tests.preview.conftest import preview_url

# PostgreSQL reads the answer text that cites the excerpt inside the citation's query (an array
# subquery, publication/passages.py); SQLite, the embedded default, reads it in one more query.
PASSAGES_APART = 0 if connection.vendor == "postgresql" else 1

pytestmark = pytest.mark.django_db


def get(url, user):
    return client_for(user).get(url)


def assert_problem(response, status: int, code: str) -> dict:
    assert response.status_code == status, response.content
    assert response["Content-Type"] == "application/problem+json"
    assert response["Cache-Control"] == "no-store"
    body = response.json()
    assert (body["status"], body["code"]) == (status, code)
    return body


# --- success -------------------------------------------------------------------


def test_the_owner_gets_the_excerpt_exactly_as_the_model_was_given_it(cited, alice, knowledge):
    response = get(cited.url, alice)

    assert response.status_code == 200
    assert response["Cache-Control"] == "no-store"
    chunk = Chunk.objects.get(pk=cited.reference.chunk_id)
    assert response.json() == {
        "id": cited.reference.pk,
        "knowledgeId": "fund-reports",
        "knowledgeVersion": "2026-10",
        "documentId": "report-a",
        "chunkId": str(chunk.pk),
        "title": "北辰医药 2026 年三季度报告",
        "sourceRef": {
            "type": "document",
            "id": "report-a",
            "version": "v3",
            "page": chunk.page,
            "locator": {"start": chunk.start, "end": chunk.end},
        },
        "content": chunk.text,
        "scope": "RETRIEVED_EXCERPT",
        # The answer wrote "营收增长 12%": the figure as the excerpt states it.
        "highlights": [{"start": 16, "end": 19}],
        "location": {"page": 1, "paragraph": 1},
    }
    assert chunk.text[16:19] == "12%"
    assert snippet_digest(response.json()["content"]) == cited.reference.digest


def test_the_preview_body_matches_the_public_citation_event(cited, alice):
    event = cited.run.events.get(type="citation.created", data__id=cited.reference.pk).data
    body = get(cited.url, alice).json()
    assert {k: v for k, v in event.items() if k != "agentCallId"} == {
        k: v for k, v in body.items() if k not in {"content", "scope", "highlights", "location"}
    }


def test_a_successful_managed_preview_costs_four_queries(cited, alice, django_assert_num_queries):
    """Counted honestly, from the first request of a fresh token: 1 token lookup,
    1 last_used_at refresh, 1 run (app, tenant, owner, tenant membership joined, with
    the owner's membership + view_run_history now), 1 citation (version, knowledge,
    document, with the app's lease on the version now, the chunk re-read with its
    paragraph and the current answer text that cites it, for the highlights)."""
    client = client_for(alice)
    with django_assert_num_queries(4 + PASSAGES_APART):
        response = client.get(cited.url)
    assert response.status_code == 200
    assert response.json()["content"]


def test_a_repeated_preview_re_reads_the_source_each_time(cited, alice, django_assert_num_queries):
    """Token, run with the history permission, citation with the lease, the chunk and
    the answer text: every click, nothing kept between clicks."""
    client = client_for(alice)
    client.get(cited.url)  # the token's last_used_at is now fresh
    for _ in range(2):
        with django_assert_num_queries(3 + PASSAGES_APART):
            assert client.get(cited.url).status_code == 200


def test_a_restricted_document_the_owner_may_read_is_shown(cited_memo, alice):
    response = get(cited_memo.url, alice)
    assert response.status_code == 200
    assert response.json()["content"] == "内部投研纪要：北辰医药营收预测上调，仅限分析师阅读。"


def test_history_permission_through_a_group_is_enough(cited, alice, app):
    from django.contrib.auth.models import Group

    remove_perm("tenancy.view_run_history", alice, app)
    analysts = Group.objects.create(name="analysts")
    analysts.user_set.add(alice)
    assign_perm("tenancy.view_run_history", analysts, app)
    assert get(cited.url, alice).status_code == 200


# --- credentials ---------------------------------------------------------------


def test_no_token_is_authentication_required(cited):
    response = client_for().get(cited.url)
    assert_problem(response, 401, "AUTHENTICATION_REQUIRED")
    assert response["WWW-Authenticate"] == 'Bearer realm="sparktide"'


def test_a_revoked_token_is_authentication_required(cited, alice):
    from tenancy.models import ApiToken

    ApiToken.objects.get(user=alice).revoke()
    assert_problem(get(cited.url, alice), 401, "AUTHENTICATION_REQUIRED")


def test_a_deactivated_owner_is_authentication_required(cited, alice):
    type(alice).objects.filter(pk=alice.pk).update(is_active=False)
    assert_problem(get(cited.url, alice), 401, "AUTHENTICATION_REQUIRED")


# --- the app, retention, business permission, policy ---------------------------


@pytest.mark.parametrize("status", [App.Status.SUSPENDED, App.Status.DISABLED])
def test_an_app_that_is_not_active_is_app_not_active(cited, alice, app, status):
    App.objects.filter(pk=app.pk).update(status=status)
    body = assert_problem(get(cited.url, alice), 403, "APP_NOT_ACTIVE")
    assert "北辰" not in body["detail"]


def test_a_run_older_than_the_retention_window_is_expired(cited, alice, app):
    cited.run.__class__.objects.filter(pk=cited.run.pk).update(
        created_at=timezone.now() - timedelta(days=app.retention_days, minutes=1)
    )
    assert_problem(get(cited.url, alice), 410, "EVENT_CURSOR_EXPIRED")


def test_a_run_just_inside_the_retention_window_is_shown(cited, alice, app):
    cited.run.__class__.objects.filter(pk=cited.run.pk).update(
        created_at=timezone.now() - timedelta(days=app.retention_days, minutes=-5)
    )
    assert get(cited.url, alice).status_code == 200


def test_revoked_business_history_permission_is_business_permission_denied(cited, alice, app):
    remove_perm("tenancy.view_run_history", alice, app)
    assert_problem(get(cited.url, alice), 403, "BUSINESS_PERMISSION_DENIED")


def test_an_owner_who_left_the_app_is_business_permission_denied(cited, alice, app):
    Membership.objects.filter(app=app, user=alice).delete()
    assert_problem(get(cited.url, alice), 403, "BUSINESS_PERMISSION_DENIED")


def test_a_bumped_security_policy_epoch_is_security_policy_changed(cited, alice, app):
    App.objects.filter(pk=app.pk).update(security_policy_epoch=F("security_policy_epoch") + 1)
    assert_problem(get(cited.url, alice), 409, "SECURITY_POLICY_CHANGED")


def test_a_bumped_knowledge_access_epoch_is_knowledge_access_changed(cited, alice, app):
    App.objects.filter(pk=app.pk).update(knowledge_access_epoch=F("knowledge_access_epoch") + 1)
    assert_problem(get(cited.url, alice), 409, "KNOWLEDGE_ACCESS_CHANGED")


# --- the citation ID -----------------------------------------------------------


def test_a_forged_citation_id_is_not_available(cited, alice):
    forged = "cite_" + "a" * 24
    assert not CitationReference.objects.filter(pk=forged).exists()
    body = assert_problem(
        get(preview_url(cited.run.pk, forged), alice), 404, "CITATION_NOT_AVAILABLE"
    )
    assert forged not in str(body)


@pytest.mark.parametrize(
    "citation_id",
    ["cite_ab", "cite_" + "A" * 24, "num_" + "a" * 24, "1", "%5Bcite%3Ax%5D", "cite_" + "a" * 25],
)
def test_a_malformed_citation_id_is_not_available(cited, alice, citation_id):
    assert_problem(
        get(preview_url(cited.run.pk, citation_id), alice), 404, "CITATION_NOT_AVAILABLE"
    )


@pytest.mark.parametrize(
    "uri",
    [
        "https%3A%2F%2Fevil.example%2Fdoc",
        "https://evil.example/doc",
        "javascript:alert(1)",
        "..%2F..%2Fadmin",
    ],
)
def test_a_uri_given_as_citation_id_is_not_available(cited, alice, uri):
    assert_problem(get(preview_url(cited.run.pk, uri), alice), 404, "CITATION_NOT_AVAILABLE")


def test_a_citation_of_another_run_is_not_available(cited, make_run, alice):
    """A historical ID alice holds from her own earlier run does not open through
    a later run: a reference is known only to the run that issued it."""
    later = make_run(
        {"search": "现金流"}, {"answerPart": "现金流充裕 [[cite:{{c1}}]]"}, key="later"
    )
    response = get(preview_url(later.pk, cited.reference.pk), alice)
    body = assert_problem(response, 404, "CITATION_NOT_AVAILABLE")
    assert "北辰" not in str(body) and cited.reference.pk not in str(body)
    # …while through its own run it still opens.
    assert get(cited.url, alice).status_code == 200


def test_a_retrieved_but_uncited_reference_of_the_run_is_shown(make_run, alice):
    """The run's own retrieval issued it, so it is the run's evidence."""
    run = make_run({"search": "营收增长", "topK": 2}, {"answerPart": "无引用"})
    reference = CitationReference.objects.filter(run=run).order_by("ordinal").last()
    assert get(preview_url(run.pk, reference.pk), alice).status_code == 200


def test_a_reference_stored_without_digest_is_not_available(cited, alice):
    """A legacy run's reference (no digest) has nothing a re-fetch can be compared to."""
    CitationReference.objects.filter(pk=cited.reference.pk).update(digest=None)
    assert_problem(get(cited.url, alice), 404, "CITATION_NOT_AVAILABLE")


# --- the exact version, its lease, knowledge and document access ---------------


def test_a_revoked_knowledge_version_is_capability_unavailable_409(cited, alice, knowledge):
    knowledge.status = KnowledgeVersion.Status.REVOKED
    knowledge.save()
    assert_problem(get(cited.url, alice), 409, "CAPABILITY_UNAVAILABLE")


def test_an_expired_lease_is_capability_unavailable_503(cited, alice, app, knowledge):
    Lease.objects.filter(app=app, version=knowledge).update(
        expires_at=timezone.now() - timedelta(seconds=1)
    )
    assert_problem(get(cited.url, alice), 503, "CAPABILITY_UNAVAILABLE")


def test_a_revoked_lease_is_capability_unavailable_503(cited, alice, app, knowledge):
    Lease.objects.filter(app=app, version=knowledge).update(revoked_at=timezone.now())
    assert_problem(get(cited.url, alice), 503, "CAPABILITY_UNAVAILABLE")


def test_a_missing_lease_is_capability_unavailable_503(cited, alice, app, knowledge):
    Lease.objects.filter(app=app, version=knowledge).delete()
    assert_problem(get(cited.url, alice), 503, "CAPABILITY_UNAVAILABLE")


def test_a_lease_expiring_later_still_admits_the_preview(cited, alice, app, knowledge):
    Lease.objects.filter(app=app, version=knowledge).update(
        expires_at=timezone.now() + timedelta(minutes=5)
    )
    assert get(cited.url, alice).status_code == 200


def test_a_revoked_document_acl_is_knowledge_access_denied(cited_memo, alice, knowledge):
    remove_perm("knowledge.read_document", alice, knowledge.memo)
    body = assert_problem(get(cited_memo.url, alice), 403, "KNOWLEDGE_ACCESS_DENIED")
    assert "纪要" not in str(body) and "memo" not in str(body)


def test_a_document_restricted_after_the_run_is_knowledge_access_denied(cited, alice, knowledge):
    knowledge.report.restricted = True
    knowledge.report.save(update_fields=["restricted"])
    assert_problem(get(cited.url, alice), 403, "KNOWLEDGE_ACCESS_DENIED")


def test_an_owner_moved_to_another_tenant_is_knowledge_access_denied_or_not_found(cited, alice):
    """Leaving the tenant breaks the ownership match itself: the identical 404."""
    from tests import factories

    other = factories.make_tenant("elsewhere")
    alice.tenant_user.__class__.objects.filter(user=alice).update(tenant=other)
    assert_problem(get(cited.url, alice), 404, "RESOURCE_NOT_FOUND")


def test_knowledge_that_now_belongs_to_another_tenant_is_knowledge_access_denied(cited, alice):
    """The owner must share the knowledge's tenant *now*: a knowledge row handed to
    another tenant (or a tampered store) denies even a public document."""
    from knowledge.models import Knowledge
    from tests import factories

    other = factories.make_tenant("elsewhere")
    Knowledge.objects.filter(pk=cited.reference.version.knowledge_id).update(tenant=other)
    assert_problem(get(cited.url, alice), 403, "KNOWLEDGE_ACCESS_DENIED")


# --- re-fetch ------------------------------------------------------------------


def test_a_chunk_altered_behind_the_platforms_back_is_source_changed(cited, alice):
    """Published versions are immutable; a changed chunk row (tampered store) must
    not be shown as what the model saw."""
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute(
            f"UPDATE {Chunk._meta.db_table} SET text = %s WHERE id = %s",
            ["北辰医药营收下降", cited.reference.chunk_id],
        )
    body = assert_problem(get(cited.url, alice), 409, "CITATION_SOURCE_CHANGED")
    assert "下降" not in str(body)


def test_a_chunk_no_longer_in_its_document_is_not_available(cited, alice, knowledge):
    """The chunk is re-read only inside the reference's own document of its exact
    version: a chunk row moved to another document (a tampered store) is not shown."""
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute(
            f"UPDATE {Chunk._meta.db_table} SET document_id = %s, ordinal = 999 WHERE id = %s",
            [knowledge.memo.pk, cited.reference.chunk_id],
        )
    body = assert_problem(get(cited.url, alice), 404, "CITATION_NOT_AVAILABLE")
    assert "营收" not in str(body)


# --- the order of the checks ---------------------------------------------------


def test_the_checks_run_in_the_documented_order(cited_memo, alice, bob, app, knowledge):
    """Break the checks from the last to the first: each newly broken earlier
    check takes over the answer, so none is skipped or reordered."""
    run, url = cited_memo.run, cited_memo.url
    unknown = preview_url(run.pk, "cite_" + "z" * 24)

    remove_perm("knowledge.read_document", alice, knowledge.memo)
    assert_problem(get(url, alice), 403, "KNOWLEDGE_ACCESS_DENIED")
    Lease.objects.filter(app=app, version=knowledge).update(revoked_at=timezone.now())
    assert_problem(get(url, alice), 503, "CAPABILITY_UNAVAILABLE")
    knowledge.status = KnowledgeVersion.Status.REVOKED
    knowledge.save()
    assert_problem(get(url, alice), 409, "CAPABILITY_UNAVAILABLE")
    assert_problem(get(unknown, alice), 404, "CITATION_NOT_AVAILABLE")
    App.objects.filter(pk=app.pk).update(knowledge_access_epoch=9)
    assert_problem(get(unknown, alice), 409, "KNOWLEDGE_ACCESS_CHANGED")
    App.objects.filter(pk=app.pk).update(security_policy_epoch=9)
    assert_problem(get(unknown, alice), 409, "SECURITY_POLICY_CHANGED")
    remove_perm("tenancy.view_run_history", alice, app)
    assert_problem(get(unknown, alice), 403, "BUSINESS_PERMISSION_DENIED")
    run.__class__.objects.filter(pk=run.pk).update(archived_at=timezone.now())
    assert_problem(get(unknown, alice), 410, "EVENT_CURSOR_EXPIRED")
    App.objects.filter(pk=app.pk).update(status=App.Status.SUSPENDED)
    assert_problem(get(unknown, alice), 403, "APP_NOT_ACTIVE")
    assert_problem(get(unknown, bob), 404, "RESOURCE_NOT_FOUND")
    assert_problem(client_for().get(unknown), 401, "AUTHENTICATION_REQUIRED")


def test_a_restricted_document_adds_only_the_acl_check_queries(
    cited_memo, alice, django_assert_num_queries
):
    """guardian's checker: the user's and the groups' object permissions (two more
    than the three of a public document)."""
    client = client_for(alice)
    client.get(cited_memo.url)
    with django_assert_num_queries(5 + PASSAGES_APART):
        assert client.get(cited_memo.url).status_code == 200


@pytest.mark.parametrize("method", ["post", "put", "delete"])
def test_other_methods_are_refused_and_not_stored_either(cited, alice, method):
    response = getattr(client_for(alice), method)(cited.url)
    assert_problem(response, 405, "METHOD_NOT_ALLOWED")


# --- the checks read inside the run and citation queries are decided on every click ---


def test_a_permission_revoked_between_two_clicks_refuses_the_second(cited, alice, app):
    client = client_for(alice)
    assert client.get(cited.url).status_code == 200
    remove_perm("tenancy.view_run_history", alice, app)
    assert_problem(client.get(cited.url), 403, "BUSINESS_PERMISSION_DENIED")


def test_a_lease_revoked_between_two_clicks_refuses_the_second(cited, alice, app, knowledge):
    client = client_for(alice)
    assert client.get(cited.url).status_code == 200
    Lease.objects.filter(app=app, version=knowledge).update(revoked_at=timezone.now())
    assert_problem(client.get(cited.url), 503, "CAPABILITY_UNAVAILABLE")


def test_an_active_superuser_owner_needs_membership_but_not_the_permission_row(cited, alice, app):
    type(alice).objects.filter(pk=alice.pk).update(is_superuser=True)
    remove_perm("tenancy.view_run_history", alice, app)
    assert client_for(alice).get(cited.url).status_code == 200
    Membership.objects.filter(app=app, user=alice).delete()
    assert_problem(client_for(alice).get(cited.url), 403, "BUSINESS_PERMISSION_DENIED")
