"""The rules of agent versions that every caller shares: which version may run, and
which may be retired. One home each; the run entry (runtime/services.py), the
sub-agent tool (runtime/tools.py), the admin and the manifest call them."""

from agents.models import AgentVersion


class PinnedVersionError(Exception):
    """A version an app pins cannot be retired: pin another version first."""

    def __init__(self, version: AgentVersion, apps: list[str]) -> None:
        super().__init__(
            f"agent version {version} is pinned by {', '.join(apps)}; pin another version first"
        )
        self.version, self.apps = version, apps


def is_runnable(version: AgentVersion | None, *, agent_id: int, tenant_id: int) -> bool:
    """A version may run — as a run's root agent or as a sub-agent — only if it is
    PUBLISHED, a version of the agent the app pins, of the app's tenant."""
    return (
        version is not None
        and version.status == AgentVersion.Status.PUBLISHED
        and version.agent_id == agent_id
        and version.agent.tenant_id == tenant_id
    )


def refuse_retiring_pinned(version: AgentVersion) -> None:
    """``PinnedVersionError`` when an app pins ``version`` (a retired version would stop
    every run of that app: AGENT_NOT_AVAILABLE)."""
    apps = sorted(version.pins.values_list("app__slug", flat=True))
    if apps:
        raise PinnedVersionError(version, apps)


def retire_version(version: AgentVersion) -> None:
    """Retire a PUBLISHED version, unless an app pins it (``PinnedVersionError``)."""
    refuse_retiring_pinned(version)
    version.status = AgentVersion.Status.RETIRED
    version.save()
