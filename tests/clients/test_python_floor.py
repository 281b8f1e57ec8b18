"""sparktide-client on the Pythons a business app runs: its floor (requires-python) is 3.9, not
the server's 3.12. The oldest supported interpreter on this machine gets a fresh venv, the client
is installed into it the way docs/sdk.md says (``pip install ./clients/python``), and the client's
own unit tests (clients/python/tests: shared conformance cases, typed errors and no retry against
a counting local server) run there. The install leaves nothing behind in the checkout, and an
interpreter below the floor is refused by pip with a message that names the floor.

Interpreters looked at: pyenv's (/root/.pyenv/versions/*) and the system's (/usr/bin/python3.*).
Without an interpreter older than the one running pytest the test has nothing to prove and skips,
saying so — except under SPARKTIDE_TEST_STRICT, where it runs on the oldest one found."""

import os
import re
import subprocess
import sys
from glob import glob
from pathlib import Path

import pytest

from foundation.env import env_bool

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]
CLIENT = ROOT / "clients" / "python"


def floor() -> tuple[int, int]:
    text = (CLIENT / "pyproject.toml").read_text()
    major, minor = re.search(r'requires-python = ">=(\d+)\.(\d+)"', text).groups()
    return int(major), int(minor)


def interpreters() -> dict[tuple[int, int], str]:
    """Version → one interpreter of it, for every Python 3 found."""
    found: dict[tuple[int, int], str] = {}
    candidates = glob("/root/.pyenv/versions/*/bin/python3") + glob("/usr/bin/python3.[0-9]*")
    for path in sorted(candidates):
        if not re.fullmatch(r".*python3(\.\d+)?", path) or not os.access(path, os.X_OK):
            continue
        try:
            out = subprocess.run(
                [path, "-c", "import sys; print('%d %d' % sys.version_info[:2])"],
                capture_output=True,
                text=True,
                timeout=30,
            )
        except (OSError, subprocess.TimeoutExpired):
            continue
        if out.returncode == 0:
            major, minor = map(int, out.stdout.split())
            found.setdefault((major, minor), path)
    return found


def run(args, **kwargs) -> subprocess.CompletedProcess:
    return subprocess.run(args, capture_output=True, text=True, timeout=600, **kwargs)


def litter() -> set[str]:
    """Untracked and ignored paths under clients/python (git's view of the checkout)."""
    out = run(
        ["git", "status", "--porcelain", "--ignored", "--untracked-files=all", "."], cwd=CLIENT
    )
    assert out.returncode == 0, out.stderr
    return {line[3:] for line in out.stdout.splitlines() if line[:2] in ("??", "!!")}


def make_venv(python: str, where: Path) -> Path:
    made = run([python, "-m", "venv", str(where)])
    assert made.returncode == 0, made.stdout + made.stderr
    return where / "bin" / "python"


def test_the_client_installs_and_passes_its_unit_tests_on_the_oldest_supported_python(tmp_path):
    supported = {v: p for v, p in interpreters().items() if v >= floor()}
    running = sys.version_info[:2]
    older = {v: p for v, p in supported.items() if v < running}
    if not older and not env_bool("SPARKTIDE_TEST_STRICT"):
        pytest.skip(f"no Python from {floor()} up to older than {running} on this machine")
    version, python = min((older or supported or {running: sys.executable}).items())

    before = litter()
    venv_python = make_venv(python, tmp_path / "venv")
    installed = run(
        [str(venv_python), "-m", "pip", "install", "--quiet", str(CLIENT)], cwd=tmp_path
    )
    assert installed.returncode == 0, installed.stdout + installed.stderr
    # No build/ or *.egg-info left in the checkout (flit_core builds the wheel from src/).
    assert litter() - before == set(), litter() - before
    assert not (CLIENT / "build").exists()

    where = run(
        [str(venv_python), "-c", "import sparktide_client, sys; print(sparktide_client.__file__)"],
        cwd=tmp_path,
    )
    assert where.returncode == 0, where.stderr
    assert where.stdout.strip().startswith(str(tmp_path / "venv")), (
        where.stdout
    )  # the installed copy

    tests = run(
        [
            str(venv_python),
            "-m",
            "unittest",
            "discover",
            "-v",
            "-s",
            str(CLIENT / "tests"),
            "-t",
            str(CLIENT),
        ],
        cwd=tmp_path,
    )
    output = tests.stdout + tests.stderr
    assert tests.returncode == 0, f"Python {version}:\n{output}"
    ran = int(re.search(r"Ran (\d+) tests", output).group(1))
    assert ran >= 12 and output.rstrip().endswith("OK"), output
    for name in ("test_answer_segments", "test_a_malformed_citation_id_never_leaves_the_process"):
        assert f"{name} " in output, name


def test_a_python_below_the_floor_is_refused_with_a_message_naming_it(tmp_path):
    below = {v: p for v, p in interpreters().items() if (3, 6) <= v < floor()}
    if not below:
        pytest.skip(f"no Python 3 below {floor()} on this machine")
    version, python = max(below.items())
    venv_python = make_venv(python, tmp_path / "venv")
    before = litter()
    refused = run([str(venv_python), "-m", "pip", "install", str(CLIENT)], cwd=tmp_path)
    output = refused.stdout + refused.stderr
    assert refused.returncode != 0, output
    assert ">={}.{}".format(*floor()) in output, (
        output
    )  # "Requires-Python >=3.9", not a SyntaxError
    assert "SyntaxError" not in output, output
    assert litter() - before == set()
