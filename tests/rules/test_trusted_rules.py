"""The trusted-source rule (citations/trusted.py) on the malformed checks the shared
conformance cases do not spell out: what a reference that is not an object, an ID that is not a
string, a references field that is not a list or an empty chunk turn into."""

from citations.trusted import trusted_sources

ROOT = "call_1"
CITE = "cite_" + "a" * 24
OTHER = "cite_" + "b" * 24


def _created(ref_id: str, **overrides: object) -> dict:
    data = {"id": ref_id, "knowledgeVersion": "2026-10", "chunkId": "chk_1"}
    data.update(overrides)
    return data


def _check(*references: object) -> dict:
    return {ROOT: {"agentCallId": ROOT, "references": list(references)}}


def test_references_that_are_not_a_list_trust_nothing_and_list_nothing():
    for references in (None, "cite_x", {"id": CITE, "status": "VERIFIED"}, 3):
        trusted = trusted_sources(ROOT, {ROOT: {"references": references}}, {CITE: _created(CITE)})
        assert trusted.checked is True
        assert trusted.verified == []
        assert trusted.unverified == []


def test_a_reference_that_is_not_an_object_is_an_unverified_empty_entry_and_the_rest_go_on():
    trusted = trusted_sources(
        ROOT,
        _check("junk", {"id": CITE, "status": "VERIFIED"}),
        {CITE: _created(CITE)},
    )
    assert trusted.unverified == [""]
    assert [ref_id for ref_id, _ in trusted.verified] == [CITE]


def test_an_id_that_is_not_a_string_is_unverified_under_its_text():
    trusted = trusted_sources(
        ROOT, _check({"id": [CITE], "status": "VERIFIED"}), {CITE: _created(CITE)}
    )
    assert trusted.verified == []
    assert trusted.unverified == [str([CITE])]


def test_a_reference_without_an_id_is_an_unverified_empty_entry():
    trusted = trusted_sources(ROOT, _check({"status": "VERIFIED"}), {})
    assert trusted.unverified == [""]


def test_an_announcement_without_its_own_id_field_still_counts_as_that_id():
    created = _created(CITE)
    del created["id"]
    trusted = trusted_sources(ROOT, _check({"id": CITE, "status": "VERIFIED"}), {CITE: created})
    assert trusted.verified == [(CITE, created)]
    assert trusted.unverified == []


def test_an_announcement_filed_under_another_id_is_not_trusted():
    trusted = trusted_sources(
        ROOT, _check({"id": CITE, "status": "VERIFIED"}), {CITE: _created(OTHER)}
    )
    assert trusted.verified == []
    assert trusted.unverified == [CITE]


def test_an_empty_or_missing_chunk_or_version_is_not_an_exact_source():
    for overrides in ({"chunkId": ""}, {"chunkId": None}, {"knowledgeVersion": ""}):
        trusted = trusted_sources(
            ROOT, _check({"id": CITE, "status": "VERIFIED"}), {CITE: _created(CITE, **overrides)}
        )
        assert trusted.verified == [], overrides
        assert trusted.unverified == [CITE], overrides
