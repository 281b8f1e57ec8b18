"""Create or refresh the console admin: a staff superuser whose login is printed.

Arguments win over the environment (SPARKTIDE_ADMIN_USERNAME, SPARKTIDE_ADMIN_PASSWORD,
SPARKTIDE_ADMIN_EMAIL). Without a password one is generated and set on every run:
the stored one is a hash and cannot be shown again — unless ``--password-file`` names
a file to keep it in (``make demo``: ``var/admin_password``, mode 0600): the first run
writes the generated password there and every later run uses it again, so the demo's
admin login survives restarts.
"""

import os
import secrets
from pathlib import Path
from typing import Any

from django.contrib.auth import get_user_model
from django.contrib.auth.password_validation import validate_password
from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.db import transaction


class Command(BaseCommand):
    help = "Create or refresh a staff superuser for the console and Django admin; prints the login."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--username", default=os.environ.get("SPARKTIDE_ADMIN_USERNAME", "admin")
        )
        parser.add_argument("--password", default=os.environ.get("SPARKTIDE_ADMIN_PASSWORD", ""))
        parser.add_argument("--email", default=os.environ.get("SPARKTIDE_ADMIN_EMAIL", ""))
        parser.add_argument(
            "--password-file",
            default="",
            help="keep the generated password in this file and reuse it on later runs",
        )

    def handle(self, *args: Any, username: str, password: str, email: str, **options: Any) -> None:
        if not username.strip():
            raise CommandError("--username must not be empty")
        generated = not password
        kept = Path(options["password_file"]) if options["password_file"] and generated else None
        if kept is not None and kept.exists():
            password = kept.read_text(encoding="utf-8").strip()
        password = password or secrets.token_urlsafe(12)
        User = get_user_model()
        with transaction.atomic():
            user = User.objects.filter(username=username).first()
            created = user is None
            user = user or User(username=username)
            try:
                validate_password(password, user)
            except ValidationError as exc:
                raise CommandError(f"--password: {' '.join(exc.messages)}")
            user.is_staff = user.is_superuser = user.is_active = True
            if email:
                user.email = email
            # The same password is not set again: a new hash (a new salt) would end every
            # session of this admin (Django binds sessions to the hash), so each demo restart
            # would log the console out.
            if created or not user.check_password(password):
                user.set_password(password)
            user.save()
        if kept is not None and not kept.exists():
            kept.parent.mkdir(parents=True, exist_ok=True)
            kept.touch(mode=0o600)
            kept.chmod(0o600)
            kept.write_text(password + "\n", encoding="utf-8")
        shown = password if generated else "(as given)"
        self.stdout.write(
            f"Console admin {'created' if created else 'refreshed'}: "
            f"username={username} password={shown}"
        )
