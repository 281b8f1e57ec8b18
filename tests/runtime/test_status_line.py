"""The status line a real daphne server sends for SparkTide's statuses."""

import http.client
import json

import pytest
from django.db import connection

from tests import factories
from tests.realtime.processes import database_url, free_port, process_env, start_daphne

pytestmark = pytest.mark.django_db(transaction=True)


def test_daphne_sends_422_with_its_reason_phrase_not_unknown_status(app, alice, knowledge):
    factories.make_agent(
        app.tenant, "researcher", model=factories.scripted({"text": "好"}), pin_to=[app]
    )
    port = free_port()
    server = start_daphne(port, process_env(DATABASE_URL=database_url(connection.settings_dict)))
    try:
        client = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
        client.request(
            "POST",
            "/v1/apps/business/runs",
            body=json.dumps({"agent": "nobody", "input": "x"}),
            headers={
                "Authorization": f"Bearer {alice.raw_token}",
                "Content-Type": "application/json",
            },
        )
        response = client.getresponse()
        body = json.loads(response.read())
    finally:
        server.stop()
    assert (response.status, response.reason) == (422, "Unprocessable Content")
    assert response.getheader("Content-Type") == "application/problem+json"
    assert (body["code"], body["title"]) == ("AGENT_NOT_AVAILABLE", "Unprocessable Content")
