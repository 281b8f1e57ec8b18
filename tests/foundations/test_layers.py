"""The layers of docs/design.md are checked by import-linter contracts that name whole
top-level packages, so every file of a package is checked, a new one included. These tests
fail when a product package is left out of them."""

import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
NOT_PRODUCT = {"tests", "bench", "scripts"}


def _config() -> dict:
    return tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["importlinter"]


def _product_packages(root: Path = ROOT) -> set[str]:
    return {
        path.parent.name
        for path in root.glob("*/__init__.py")
        if path.parent.name not in NOT_PRODUCT and not path.parent.name.startswith(".")
    }


def _contracted(contract: dict) -> set[str]:
    names: set[str] = set()
    for layer in contract.get("layers", []):
        names.update(part.strip() for part in layer.replace(":", "|").split("|"))
    names.update(contract.get("source_modules", []))
    return names


def test_every_product_package_is_a_root_package_of_the_contracts():
    assert _product_packages() - set(_config()["root_packages"]) == set()


def test_every_product_package_sits_in_a_layer_or_is_fenced_by_a_contract():
    """A package the layers contract does not place (provisioning) must be the source of
    its own contract, so its imports are checked too."""
    contracted = set().union(*(_contracted(c) for c in _config()["contracts"]))
    assert _product_packages() - contracted == set()


def test_the_layers_name_packages_not_modules():
    """A layer that names single modules leaves the rest of its package unchecked."""
    (layers,) = [c for c in _config()["contracts"] if c["type"] == "layers"]
    named = _contracted(layers)
    assert all("." not in name for name in named), named
    assert named <= _product_packages()


def test_a_new_top_level_package_is_found_by_the_scan(tmp_path):
    """The scan the checks above rely on sees a package the moment it has an __init__."""
    for name in ("runs", "newcomer", "tests"):
        (tmp_path / name).mkdir()
        (tmp_path / name / "__init__.py").write_text("")
    (tmp_path / "docs").mkdir()
    assert _product_packages(tmp_path) == {"runs", "newcomer"}
    assert "newcomer" not in set(_config()["root_packages"])
