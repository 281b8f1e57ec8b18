"""python manage.py export_manifest [FILE] [--include-secrets] — docs/manifest.md "Export"."""

from pathlib import Path
from typing import Any

import yaml
from django.core.management.base import BaseCommand, CommandParser

from provisioning.export import export_manifest


class _Dumper(yaml.SafeDumper):
    pass


def _text(dumper: yaml.SafeDumper, value: str) -> yaml.ScalarNode:
    style = "|" if "\n" in value else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)


_Dumper.add_representer(str, _text)


def dump(data: dict[str, Any]) -> str:
    return yaml.dump(data, Dumper=_Dumper, allow_unicode=True, sort_keys=False, width=100)


class Command(BaseCommand):
    help = "Write the current tenants, knowledge, agents and apps as a manifest apply_manifest accepts."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("file", nargs="?", help="where to write it (default: standard output)")
        parser.add_argument(
            "--include-secrets",
            action="store_true",
            help="write REMOTE signing secrets inline instead of as secretEnv names",
        )

    def handle(self, *args: Any, file: str | None, include_secrets: bool, **options: Any) -> None:
        text = dump(export_manifest(include_secrets=include_secrets))
        if file:
            Path(file).write_text(text, encoding="utf-8")
            self.stderr.write(f"Wrote {file}")
        else:
            self.stdout.write(text, ending="")
