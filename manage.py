#!/usr/bin/env python
import os
import sys


def main() -> None:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "sparktide.settings")
    # A developer's shell (neither SECRET_KEY nor DEBUG set) gets the development
    # settings `make demo` uses, so `manage.py apply_manifest …` works on the embedded
    # default. A deployment sets SECRET_KEY, and DEBUG then stays off unless asked for.
    if "SECRET_KEY" not in os.environ and "DEBUG" not in os.environ:
        os.environ["DEBUG"] = "1"
    from django.core.management import execute_from_command_line

    execute_from_command_line(sys.argv)


if __name__ == "__main__":
    main()
