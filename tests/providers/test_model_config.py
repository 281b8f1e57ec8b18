"""One model-config validator: the manifest, the admin form and the engine accept
and refuse the same configs (issue 10, defect 7)."""

import json

import pytest
from django.urls import reverse

from agents.models import AgentVersion
from agents.providers import ModelConfigError, ProviderError, get_provider
from agents.providers import validate_model_config as validate
from tests import factories

REFUSED = {
    "scripted sleep above 30 s": (
        {"provider": "scripted", "steps": [{"sleep": 31}]},
        "steps[0].sleep",
    ),
    "scripted step key of another kind": (
        {"provider": "scripted", "steps": [{"text": "a", "topK": 1}]},
        "steps[0].topK",
    ),
    "scripted callAgent without task": (
        {"provider": "scripted", "steps": [{"callAgent": "helper"}]},
        "steps[0].task",
    ),
    "scripted setting that is not one": (
        {"provider": "scripted", "steps": [{"text": "a"}], "speed": 2},
        "speed",
    ),
    "openai key the provider does not know": (
        {
            "provider": "openai",
            "baseUrl": "http://h/v1",
            "model": "m",
            "apiKeyEnv": "K",
            "stream": 1,
        },
        "stream",
    ),
    "extractive topK above 20": ({"provider": "extractive", "topK": 50}, "topK"),
}


@pytest.mark.parametrize(("config", "path"), REFUSED.values(), ids=REFUSED.keys())
def test_the_validator_names_the_key_path_it_refuses(config, path):
    with pytest.raises(ModelConfigError) as caught:
        validate(config)
    assert caught.value.path == path


@pytest.mark.parametrize(("config", "path"), REFUSED.values(), ids=REFUSED.keys())
def test_the_engine_refuses_what_the_validator_refuses(config, path):
    with pytest.raises(ProviderError, match=path.replace("[", r"\[").replace("]", r"\]")):
        get_provider(config)


@pytest.mark.django_db
def test_the_admin_form_refuses_what_the_provider_refuses(client, admin_user, tenant):
    client.force_login(admin_user)
    agent = factories.make_agent(tenant, "researcher", model={"provider": "extractive"}).agent
    draft = AgentVersion.objects.create(agent=agent, version="2", model={"provider": "extractive"})
    url = reverse("admin:agents_agentversion_change", args=[draft.pk])
    form = {
        "version": "2",
        "instructions": "",
        "routing": "[]",
        "max_steps": "20",
        "model": json.dumps({"provider": "scripted", "steps": [{"sleep": 31}]}),
    }
    response = client.post(url, form)
    assert response.status_code == 200  # the form again, with its error
    assert "steps[0].sleep" in response.content.decode()
    draft.refresh_from_db()
    assert draft.model == {"provider": "extractive"}

    form["model"] = json.dumps({"provider": "scripted", "steps": [{"sleep": 30}]})
    assert client.post(url, form).status_code == 302
    draft.refresh_from_db()
    assert draft.model == {"provider": "scripted", "steps": [{"sleep": 30}]}
