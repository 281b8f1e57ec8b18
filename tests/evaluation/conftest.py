"""The evaluation runner's tests run against the demo manifest, applied as ``make demo``
applies it; questions are real runs (the engine, retrieval, Publication)."""

from io import StringIO
from pathlib import Path

import pytest
import yaml
from django.core.management import call_command

ROOT = Path(__file__).resolve().parents[2]
DEMO_MANIFEST = ROOT / "demo" / "manifest.yaml"


@pytest.fixture
def demo(db):
    call_command("apply_manifest", str(DEMO_MANIFEST), stdout=StringIO())
    from tenancy.models import App

    return App.objects.get(slug="research-desk")


@pytest.fixture
def write_set(tmp_path):
    """Write a set (a mapping) as YAML and return its path."""

    def write(data: dict, name: str = "set.yaml") -> Path:
        path = tmp_path / name
        path.write_text(yaml.safe_dump(data, allow_unicode=True), encoding="utf-8")
        return path

    return write
