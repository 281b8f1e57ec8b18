"""The suite's PostgreSQL backend (tests/postgresql/base.py): after a transactional test it
empties the database by deleting rows instead of truncating tables — every table, whatever
references what."""

import pytest
from django.core.management import call_command
from django.core.management.color import no_style
from django.db import connection

from tests.factories import add_document, make_app, make_knowledge, make_tenant, make_user

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.postgres(reason="the suite's PostgreSQL backend"),
]

# Refilled by the flush itself (post_migrate), as after Django's TRUNCATE.
REFILLED = {"django_content_type", "auth_permission"}


def _rows() -> dict[str, int]:
    tables = connection.introspection.django_table_names(only_existing=True)
    with connection.cursor() as cursor:
        counts = {}
        for table in tables:
            cursor.execute(f"SELECT count(*) FROM {connection.ops.quote_name(table)}")
            counts[table] = cursor.fetchone()[0]
    return counts


def test_the_flush_deletes_the_rows_of_every_table_in_one_transaction():
    assert connection.ops.sql_flush(no_style(), ["a_table"]) == ['DELETE FROM "a_table";']
    tenant = make_tenant()
    user = make_user(tenant)
    make_app(tenant, members=[user])
    add_document(make_knowledge(tenant), ["营业收入 12.5 亿元。"], readers=[user])
    filled = {table for table, count in _rows().items() if count}
    # (rows that reference one another: users, tenants, apps, documents and their chunks)
    assert {"auth_user", "tenancy_app", "knowledge_document", "knowledge_chunk"} <= filled

    call_command("flush", interactive=False, verbosity=0)

    left = {table: count for table, count in _rows().items() if count and table not in REFILLED}
    assert left == {}
