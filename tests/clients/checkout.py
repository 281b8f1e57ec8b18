"""The clients' tests test the Python client of THIS checkout (clients/python/src), whatever copy
an editable install in the virtualenv points at."""

import sys
from pathlib import Path

CLIENT_SRC = Path(__file__).resolve().parents[2] / "clients" / "python" / "src"


def use_this_checkouts_client() -> None:
    if str(CLIENT_SRC) not in sys.path:
        sys.path.insert(0, str(CLIENT_SRC))
    import sparktide_client

    where = Path(sparktide_client.__file__).resolve()
    assert where.is_relative_to(CLIENT_SRC), (
        f"sparktide_client was imported from {where} before this checkout's {CLIENT_SRC}"
    )
