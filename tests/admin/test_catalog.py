"""Every string the admin translates has an English entry in the compiled catalog.

The admin's strings are written in Chinese in the product's models, admins and app configs
(app, model and field names, help texts, choice labels, actions and their messages); each is
read here from Python's own parse of the source, as makemessages would, and looked up in
locale/en the way Django looks it up (with its context, if any).
"""

import ast
import gettext
from pathlib import Path

from django.conf import settings

ROOT = Path(settings.BASE_DIR)
CATALOG = ROOT / "locale" / "en" / "LC_MESSAGES" / "django.mo"
PACKAGES = ("tenancy", "knowledge", "agents", "runs", "citations", "publication", "evaluation")
ADMIN_FILES = ("models.py", "admin.py", "apps.py", "admin_upload.py")
SHARED = (
    ROOT / "runtime" / "admin.py",
    ROOT / "runtime" / "apps.py",
    ROOT / "foundation" / "admin_mixins.py",
)
# Position of the message in each translation function's arguments (after a context).
FUNCTIONS = {"_": 0, "gettext": 0, "gettext_lazy": 0, "pgettext": 1, "pgettext_lazy": 1}


def admin_sources() -> list[Path]:
    files = [ROOT / pkg / name for pkg in PACKAGES for name in ADMIN_FILES]
    return [path for path in [*files, *SHARED] if path.exists()]


def msgids(path: Path) -> list[tuple[str | None, str, int]]:
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)):
            continue
        position = FUNCTIONS.get(node.func.id)
        if position is None or len(node.args) <= position:
            continue
        message = node.args[position]
        context = node.args[0] if position else None
        if isinstance(message, ast.Constant) and isinstance(message.value, str):
            ctx = context.value if isinstance(context, ast.Constant) else None
            found.append((ctx, message.value, node.lineno))
    return found


def test_the_scan_reads_the_admins_strings():
    found = {(ctx, msgid) for path in admin_sources() for ctx, msgid, _ in msgids(path)}
    assert ("model", "运行") in found and ("field", "创建时间") in found
    assert (None, "撤销所选租约") in found and ("app", "后台任务") in found


def test_every_admin_string_has_an_english_entry():
    with CATALOG.open("rb") as handle:
        catalog = gettext.GNUTranslations(handle)
    missing = []
    for path in admin_sources():
        for ctx, msgid, line in msgids(path):
            if msgid.isascii():
                continue  # "ID", "API": the same in both languages
            english = catalog.pgettext(ctx, msgid) if ctx else catalog.gettext(msgid)
            if english == msgid or not english.strip():
                missing.append(f"{path.relative_to(ROOT)}:{line} {ctx or ''}|{msgid}")
    assert missing == []
