"""Rules of citations/access.py that the preview over HTTP cannot show: the bearer token's
authentication refuses an inactive user before the checks run, and what step 7 leaves
unread is not in the response."""

import pytest

from citations.access import access_citation_for_preview
from foundation.errors import ErrorCode, SparkTideError

pytestmark = pytest.mark.django_db


def _access(user, cited):
    return access_citation_for_preview(
        user, app_slug="business", run_id=cited.run.pk, citation_id=cited.reference.pk
    )


def test_an_inactive_owner_is_authentication_required_before_the_run_is_looked_up(cited, alice):
    """Step 1 refuses an inactive user itself (a session or a caller without the
    token's check), with 401, not the run lookup's 404."""
    alice.is_active = False

    with pytest.raises(SparkTideError) as refused:
        _access(alice, cited)

    assert refused.value.code == ErrorCode.AUTHENTICATION_REQUIRED


def test_an_active_owner_passes_every_check_and_gets_the_cited_reference(cited, alice):
    target = _access(alice, cited)

    assert (target.run.pk, target.reference.pk) == (cited.run.pk, cited.reference.pk)


def test_the_checked_reference_leaves_the_documents_full_text_unread(cited, alice):
    """Step 7 reads the document's ACL fields with the reference, never its text (a
    whole document per click); the excerpt is re-fetched from the chunk instead."""
    reference = _access(alice, cited).reference

    assert reference.document.key == "report-a"
    assert "text" in reference.document.get_deferred_fields()
