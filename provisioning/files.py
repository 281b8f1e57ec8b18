"""``file:`` in the manifest: a document given as a file instead of ``pages``.

Before the manifest is parsed, every document entry with ``file: path``
(relative to the manifest) gets the pages read from that file
(knowledge/files.py: text, Markdown, PDF with a text layer, DOCX) and,
without a ``title``, the file's own title. Everything after that — validation,
idempotency, immutability — is the manifest's, as for pages written inline.
"""

from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from knowledge.files import UnreadableFile, read_file
from provisioning.errors import ManifestError


def inline_files(data: Any, base: Path) -> Any:
    for path, document in _documents(data):
        if not isinstance(document, dict) or "file" not in document:
            continue
        if "pages" in document:
            raise ManifestError(f"{path}.file", "give exactly one of pages or file")
        name = document.pop("file")
        if not isinstance(name, str) or not name.strip():
            raise ManifestError(f"{path}.file", "must be a path relative to the manifest")
        try:
            parsed = read_file(base / name)
        except UnreadableFile as exc:
            raise ManifestError(f"{path}.file", str(exc))
        document["pages"] = parsed.pages
        document.setdefault("title", parsed.title)
    return data


def _documents(data: Any) -> Iterator[tuple[str, Any]]:
    """(path, entry) of every document entry, wherever the shape allows one."""
    for t, tenant in _items(data, "tenants"):
        for k, knowledge in _items(tenant, "knowledge"):
            for v, version in _items(knowledge, "versions"):
                for d, document in _items(version, "documents"):
                    path = f"tenants[{t}].knowledge[{k}].versions[{v}].documents[{d}]"
                    yield path, document


def _items(parent: Any, key: str) -> Iterable[tuple[int, Any]]:
    value = parent.get(key) if isinstance(parent, dict) else None
    return enumerate(value) if isinstance(value, list) else ()
