"""The manifest's ``vocabulary:`` key: a tenant's and a knowledge's entries are stored,
re-applying is idempotent, and an empty, over-long or cyclic entry is a ManifestError at
its key path; retrieval expands a question with what was declared."""

import pytest

from knowledge.models import Knowledge
from knowledge.models import Vocabulary as DeclaredVocabulary
from knowledge.retrieval import search_managed
from tests.factories import make_user
from tests.foundations.test_manifest import (  # noqa: F401  (fixtures)
    apply,
    apply_error,
    base_manifest,
    manifest_file,
    tenant0,
)

pytestmark = pytest.mark.django_db


def test_the_tenants_and_a_knowledges_vocabulary_are_stored(apply):  # noqa: F811
    data = base_manifest()
    tenant0(data)["vocabulary"] = {"NIM": ["净息差"]}
    tenant0(data)["knowledge"][0]["vocabulary"] = {"拨备": "拨备覆盖率"}

    out = apply(data)

    assert "vocabulary" in out
    wide = DeclaredVocabulary.objects.get(knowledge=None)
    assert wide.entries == {"nim": ["净息差"]}
    knowledge = Knowledge.objects.get(key=tenant0(data)["knowledge"][0]["key"])
    assert DeclaredVocabulary.objects.get(knowledge=knowledge).entries == {"拨备": ["拨备覆盖率"]}
    assert "vocabulary" not in apply(data)


@pytest.mark.parametrize(
    ("entries", "where", "reason"),
    [
        ({"EPS": []}, "vocabulary.EPS", "non-empty list"),
        ({"EPS": [""]}, "vocabulary.EPS[0]", "non-empty text"),
        ({"": ["净息差"]}, "vocabulary:", "non-empty text"),
        ({"EPS": ["每" * 1_000_000]}, "vocabulary.EPS[0]", "at most 64 characters"),
        ({"甲": ["乙"], "乙": ["丙"], "丙": ["甲"]}, "vocabulary.", "cyclic"),
        ({"甲": ["甲"]}, "vocabulary.甲", "cyclic"),
        (["EPS"], "vocabulary", "mapping"),
    ],
    ids=["empty-list", "empty-term", "empty-key", "1mb", "cycle", "self", "not-a-mapping"],
)
def test_a_bad_vocabulary_is_a_manifest_error_at_its_key(apply_error, entries, where, reason):  # noqa: F811, E501
    data = base_manifest()
    tenant0(data)["vocabulary"] = entries

    message = apply_error(data)

    assert f"tenants[0].{where}" in message
    assert reason in message
    assert len(message) < 2_000
    assert not DeclaredVocabulary.objects.exists()


def test_retrieval_expands_a_question_with_the_declared_vocabulary(apply):  # noqa: F811
    data = base_manifest()
    tenant0(data)["vocabulary"] = {"拨备": ["拨备覆盖率"]}
    apply(data)
    knowledge = Knowledge.objects.get(key=tenant0(data)["knowledge"][0]["key"])
    version = knowledge.versions.filter(status="PUBLISHED").first()
    owner = make_user(knowledge.tenant, "vocab-reader")
    assert version is not None
    items = search_managed([version], query="拨备", top_k=3, owner=owner)
    plan = items.plan
    assert plan.expansions == {"拨备": ("拨备覆盖率",)}
