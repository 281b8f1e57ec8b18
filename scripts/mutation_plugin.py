"""pytest plugin for mutation runs only (``-p scripts.mutation_plugin`` in [tool.mutmut]).

mutmut runs each mutant's tests in a child forked from a process that already ran the
tests, so the child starts with that process's per-process caches. Two of them are wrong
there:

- Django's ContentType cache: every flush of a transactional test re-creates the content
  types with new ids, and earlier children have flushed the shared test database since the
  fork. A stale id makes guardian's permission lookups fail (``Permission.DoesNotExist``)
  in the child's first tests, which mutmut counts as a kill.
- the statements of foundation/compiled.py, compiled once per process: inherited, they were
  compiled without the mutant, so a mutant in a query they compile would never run; and
  compiled once, their builders are reached by the first test only, so mutmut's stats would
  give a mutant there that one test.

- the project's ``functools.cache`` functions (``citations.preview._read_with``, the
  expressions read with a preview's reference): a result inherited from the parent was
  built without the mutant, so a mutant in what they call (``_managed_excerpt``,
  ``passage_annotations``) never ran in a child, and survived however wrong.

All are emptied before every test, as in a fresh process (the statements are compiled
again by each test that needs them: slower, only in mutation runs).
"""

import functools
import sys

# The project's packages: their modules' functools caches are emptied before each test.
_PROJECT = ("citations", "console", "publication", "runs", "sparktide")


def _clear_function_caches() -> None:
    for name, module in list(sys.modules.items()):
        if module is None or name.split(".", 1)[0] not in _PROJECT:
            continue
        for value in list(vars(module).values()):
            if isinstance(value, functools._lru_cache_wrapper):
                value.cache_clear()


def pytest_runtest_setup(item):  # noqa: ARG001 - pytest's hook signature
    from django.apps import apps

    if not apps.ready:
        return
    from django.contrib.contenttypes.models import ContentType

    from foundation import compiled

    ContentType.objects.clear_cache()
    compiled._compiled.clear()
    compiled._statements.clear()
    _clear_function_caches()
