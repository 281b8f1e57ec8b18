"""Every string the console templates translate has a non-empty English entry in the compiled catalog."""

import gettext
from collections.abc import Iterator
from pathlib import Path

from django.conf import settings
from django.template import Node, Variable, engines
from django.template.base import FilterExpression
from django.templatetags.i18n import BlockTranslateNode, TranslateNode

TEMPLATES = Path(settings.BASE_DIR) / "templates" / "console"
CATALOG = Path(settings.BASE_DIR) / "locale" / "en" / "LC_MESSAGES" / "django.mo"


def _nodes(nodelist: list[Node]) -> Iterator[Node]:
    for node in nodelist:
        yield node
        for attr in node.child_nodelists:
            yield from _nodes(getattr(node, attr, None) or [])


def _literal(expression: FilterExpression | None) -> str | None:
    if expression is None:
        return None
    value = expression.var
    return str(value.literal if isinstance(value, Variable) else value)


def template_msgids(text: str) -> set[str]:
    """The catalog keys the template looks up at render time, read from Django's own parse of it."""
    template = engines["django"].from_string(text).template  # type: ignore[attr-defined]
    keys: set[str] = set()
    for node in _nodes(template.nodelist):
        if isinstance(node, TranslateNode) and not node.noop:
            msgid = node.filter_expression.var.literal
            context = _literal(node.message_context)
        elif isinstance(node, BlockTranslateNode):
            msgid = node.render_token_list(node.singular)[0]
            context = _literal(node.message_context)
        else:
            continue
        keys.add(f"{context}\x04{msgid}" if context else msgid)
    return keys


def test_the_reader_finds_every_kind_of_tag() -> None:
    text = (
        "{% load i18n %}{% if x %}{% translate '甲' %}{% endif %}"
        "{% blocktranslate with n=x %}乙 {{ n }}{% endblocktranslate %}"
        "{% blocktranslate count counter=x %}丙 {{ counter }}{% plural %}丙们 {{ counter }}{% endblocktranslate %}"
        '{% translate "丁 %(n)s" context "菜单" %}'
    )
    assert template_msgids(text) == {"甲", "乙 %(n)s", "丙 %(counter)s", "菜单\x04丁 %(n)s"}


def test_every_console_msgid_has_an_english_translation() -> None:
    with CATALOG.open("rb") as handle:
        catalog = gettext.GNUTranslations(handle)._catalog  # type: ignore[attr-defined]
    missing: dict[str, list[str]] = {}
    seen = 0
    for path in sorted(TEMPLATES.glob("*.html")):
        for msgid in template_msgids(path.read_text(encoding="utf-8")):
            seen += 1
            translated = catalog.get(msgid, catalog.get((msgid, 0)))
            if not translated:
                missing.setdefault(path.name, []).append(msgid)
    assert seen > 100, "the reader found too few strings: the tag syntax changed"
    assert not missing, f"console strings without an English entry: {missing}"
