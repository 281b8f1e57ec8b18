"""The one error of provisioning: where in the manifest (its key path) and why."""


class ManifestError(Exception):
    """A manifest problem: where (the key path) and why."""

    def __init__(self, path: str, message: str) -> None:
        self.path = path or "(top level)"
        self.message = message
        super().__init__(f"{self.path}: {message}")
