"""The manifest: one YAML file that provisions tenants, users, knowledge, agents and apps.

Format: docs/manifest.md (and the Manifest section of API.md). The work is split by
concern (docs/design.md "Layout"):

* ``provisioning.reading``: ``parse_manifest`` / ``read_manifest`` turn YAML into the
  typed specs of ``provisioning.specs``, checking shapes only (no database; the shape
  checks and the safe YAML loader are ``provisioning.shapes``).
* ``provisioning.planning``: what an apply would change — the differences between a
  stored version and its spec — and the summary of an apply.
* ``provisioning.writing``: ``apply_manifest`` makes the database match the specs in
  one transaction. Cross-references (users, ``key@version`` labels, agent keys) are
  resolved against the database as it is being written, so they may name rows the file
  creates or rows that already exist.

Rules the apply step implements:

* Entities the file names are created or updated; entities it does not name are
  left alone. Inside a declared app or document, the permission lists (members,
  history, readers, leases, pins) are authoritative: what the file omits is
  taken away.
* The content of a non-DRAFT knowledge or agent version is never rewritten:
  if the file differs from what is stored, that is an error naming the key.
  Statuses and permissions are applied as declared.
* Idempotent: nothing is written unless it differs, and every write is counted
  as a change, so a second run reports none.
* Every error is a ``ManifestError`` carrying the path of the offending key
  (``tenants[0].knowledge[1].versions[0].documents[2].pages``) and why; the
  caller's transaction then rolls everything back.

This module is the entry point the management commands and tests import.
"""

from foundation.strict_yaml import MAX_YAML_DEPTH
from provisioning.errors import ManifestError
from provisioning.planning import describe
from provisioning.reading import parse_manifest, read_manifest
from provisioning.shapes import MAX_MANIFEST_BYTES, load_yaml
from provisioning.specs import ApplyResult, Manifest
from provisioning.writing import apply_manifest

__all__ = [
    "MAX_MANIFEST_BYTES",
    "MAX_YAML_DEPTH",
    "ApplyResult",
    "Manifest",
    "ManifestError",
    "apply_manifest",
    "describe",
    "load_yaml",
    "parse_manifest",
    "read_manifest",
]
