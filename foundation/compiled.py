"""Hot-path queries compiled by the ORM once per process, then re-bound per call.

Building and compiling a QuerySet (``add_q``, ``setup_joins``, ``as_sql``) costs more
CPU than running it on the local PostgreSQL (docs/performance.md "Citation preview"). The
SQL text of a query whose *shape* is fixed depends only on the models, never on the
values it is asked about, so it is compiled once with placeholder values and the
real values are put in the placeholders' positions on every call.

The query is still written with the ORM (its rule keeps its one home: the lease
``Exists`` of knowledge, the evidence view's SQL of ``citations.evidence``); only its
compilation is remembered. Nothing read by a query is kept: every call runs it.
"""

from __future__ import annotations

import dataclasses
import functools
import re
from collections.abc import Callable, Hashable, Iterable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from django.db import DEFAULT_DB_ALIAS, connection, connections
from django.db.backends.base.base import BaseDatabaseWrapper
from django.db.models import Model, QuerySet
from django.db.models.query import get_related_populators  # ModelIterable's own helper
from django.db.models.sql.compiler import SQLCompiler

# Values no caller ever asks about, each of the type its column expects: a compiled
# parameter equal to one of them is that placeholder's position.
PLACEHOLDER_INT = -917_263_541
# For a column that holds no negatives (a PositiveIntegerField): Django compiles a
# lookup outside the column's range to an empty or a dropped condition, not a parameter.
PLACEHOLDER_POSITIVE_INT = 2_117_263_541
PLACEHOLDER_TIME = datetime(1901, 2, 3, 4, 5, 6, 789_123, tzinfo=UTC)


def placeholder_text(name: str) -> str:
    return f"\x00placeholder:{name}\x00"


@dataclass(frozen=True)
class Compiled:
    """A query's SQL and its parameters, with the positions that take call values."""

    sql: str
    params: tuple[Any, ...]
    slots: tuple[tuple[int, str], ...]
    # The compiler that made the SQL: it knows the columns' converters and how the
    # rows of a model query (select_related, annotations) become instances.
    compiler: SQLCompiler
    fetch_mode: Any

    def bind(self, values: Mapping[str, Any]) -> list[Any]:
        params = list(self.params)
        for position, name in self.slots:
            value = values[name]
            compiled = type(params[position])
            # The ORM's typed integer (psycopg's Int4) is kept: the prepared text's type.
            if compiled not in (int, bool) and issubclass(compiled, int) and type(value) is int:
                value = compiled(value)
            params[position] = value
        return params

    def rows(self, values: Mapping[str, Any]) -> list[tuple[Any, ...]]:
        with connection.cursor() as cursor:
            cursor.execute(self.sql, self.bind(values))
            rows: list[tuple[Any, ...]] = cursor.fetchall()
            return rows

    def values(self, values: Mapping[str, Any]) -> list[Any]:
        """The rows of a ``values_list()`` query as its QuerySet gives them: each
        column through its converters (none on PostgreSQL for most types; SQLite's
        datetimes, for one, are text until converted)."""
        rows: Iterable[Any] = self.rows(values)
        if self._converters:
            rows = self.compiler.apply_converters(rows, self._converters)
        return list(rows)

    @functools.cached_property
    def _converters(self) -> dict[int, tuple[list[Any], Any]]:
        compiler = self.compiler
        return compiler.get_converters([s[0] for s in compiler.select[0 : compiler.col_count]])

    def instances(self, values: Mapping[str, Any]) -> list[Any]:
        """The rows of a model query as Django's ``ModelIterable`` makes them (the
        model, its ``select_related`` relations, its annotations)."""
        compiler = self.compiler
        select, klass_info = compiler.select, compiler.klass_info
        annotation_col_map = compiler.annotation_col_map or {}
        assert klass_info is not None  # a model query, not values()
        model_cls = klass_info["model"]
        fields = klass_info["select_fields"]
        start, end = fields[0], fields[-1] + 1
        init_list = [f[0].target.attname for f in select[start:end]]
        db = connection.alias
        populators = get_related_populators(klass_info, select, db, self.fetch_mode)
        found = []
        rows: list[Any] = [self.rows(values)]  # one chunk, as execute_sql(MULTI) gives
        for row in compiler.results_iter(rows):
            obj = model_cls.from_db(db, init_list, row[start:end], fetch_mode=self.fetch_mode)
            for populator in populators:
                populator.populate(row, obj)
            for name, position in annotation_col_map.items():
                setattr(obj, name, row[position])
            found.append(obj)
        return found


_compiled: dict[Hashable, Compiled | None] = {}


def cache() -> list[tuple[Hashable, Compiled | None]]:
    """What this process compiled so far (key, or None where it fell back)."""
    return list(_compiled.items())


def _matches(param: Any, placeholder: Any) -> bool:
    if isinstance(placeholder, list):
        return param is placeholder  # an array parameter is passed through as it is
    if type(placeholder) is int and isinstance(param, int) and not isinstance(param, bool):
        return bool(param == placeholder)  # the ORM may type it (psycopg's Int4)
    return type(param) is type(placeholder) and bool(param == placeholder)


def compiled_once(
    key: Hashable,
    build: Callable[..., QuerySet[Any]],
    placeholders: Mapping[str, Any],
    *,
    fixed: tuple[str, ...] = (),
) -> Compiled | None:
    """The compilation of ``build(**placeholders)``, made once per process and key.

    None when a placeholder is not found among the compiled parameters (the ORM
    transformed it): the caller then runs its QuerySet as usual.
    """
    key = (connection.vendor, key)
    if key not in _compiled:
        queryset = build(**placeholders)
        compiler = queryset.query.get_compiler(connection.alias)
        sql, params = compiler.as_sql()
        slots: list[tuple[int, str]] = []
        for name, placeholder in placeholders.items():
            if name in fixed:  # part of the shape (named by the key), not a value
                continue
            found = [i for i, param in enumerate(params) if _matches(param, placeholder)]
            if not found:
                _compiled[key] = None
                return None
            slots += [(i, name) for i in found]
        _compiled[key] = Compiled(
            sql=sql,
            params=tuple(params),
            slots=tuple(sorted(slots)),
            compiler=compiler,
            fetch_mode=queryset._fetch_mode,  # type: ignore[attr-defined]
        )
    return _compiled[key]


# --- Prepared on the server (PostgreSQL) ----------------------------------------------
#
# The project's connections bind parameters on the client (psycopg's ClientCursor), so
# PostgreSQL parses and plans every statement it is sent; for a statement of many joins
# and subqueries planning costs more than running it (docs/performance.md "Citation
# preview"). A statement compiled once here has a fixed text, so it can also be prepared
# once per connection and PostgreSQL stops re-planning it. Every call still runs it with
# its own values; only the plan is kept, per connection, and PostgreSQL re-plans by
# itself when a table it reads changes (DDL, ANALYZE).
#
# Django turns psycopg's preparing off (``prepare_threshold`` None) unless
# ``OPTIONS["prepare_threshold"]`` is set. Only server-binding cursors ever prepare
# (psycopg's ClientCursor never does), and the only ones the project opens are these, so
# without that option the connection's threshold is set to prepare them on first use;
# an explicit ``OPTIONS["prepare_threshold"]`` (None behind PgBouncer in transaction
# mode) is kept as it is.
PREPARE_THRESHOLD = 0


@dataclass(frozen=True)
class Prepared(Compiled):
    """A ``Compiled`` whose rows are read with server-side binding, so the fixed text is
    prepared on each connection. Same SQL, same parameters, same instances; through
    Django's cursor wrapper, so query logs and counts see it.

    What turns its rows into instances depends only on the compiled select, so it is
    worked out once too (``_plan``: the columns' converters, the related populators)
    instead of on every call as ``Compiled.instances`` does through ``results_iter``."""

    @functools.cached_property
    def _plan(self) -> _InstancePlan:
        compiler = self.compiler
        select, klass_info = compiler.select, compiler.klass_info
        assert klass_info is not None  # a model query, not values()
        fields = klass_info["select_fields"]
        start, end = fields[0], fields[-1] + 1
        expressions = [s[0] for s in select[0 : compiler.col_count]]
        return _InstancePlan(
            model=klass_info["model"],
            start=start,
            end=end,
            init_list=[f[0].target.attname for f in select[start:end]],
            populators=get_related_populators(
                klass_info, select, connection.alias, self.fetch_mode
            ),
            converters=compiler.get_converters(expressions),
            composite=compiler.has_composite_fields(expressions),
            annotations=tuple((compiler.annotation_col_map or {}).items()),
        )

    def instances(self, values: Mapping[str, Any]) -> list[Any]:
        if getattr(self.fetch_mode, "track_peers", False):
            # Populators that collect the peers of one query must not outlive it.
            return super().instances(values)
        plan, compiler = self._plan, self.compiler
        if plan.composite:  # composite primary keys: the general path
            return super().instances(values)
        db = connections[DEFAULT_DB_ALIAS]  # once: each ``connection.x`` looks it up
        rows: Iterable[Any] = self._rows(db, values)
        if plan.converters:
            rows = compiler.apply_converters(rows, plan.converters)
        found = []
        for row in rows:
            obj = plan.model.from_db(
                db.alias, plan.init_list, row[plan.start : plan.end], fetch_mode=self.fetch_mode
            )
            for populator in plan.populators:
                populator.populate(row, obj)
            for name, position in plan.annotations:
                setattr(obj, name, row[position])
            found.append(obj)
        return found

    def rows(self, values: Mapping[str, Any]) -> list[tuple[Any, ...]]:
        return self._rows(connections[DEFAULT_DB_ALIAS], values)

    def _rows(self, db: BaseDatabaseWrapper, values: Mapping[str, Any]) -> list[tuple[Any, ...]]:
        with server_binding_cursor(db) as cursor:
            cursor.execute(self.sql, self.bind(values))
            rows: list[tuple[Any, ...]] = cursor.fetchall()
            return rows


@dataclass(frozen=True)
class _InstancePlan:
    model: type[Any]
    start: int
    end: int
    init_list: list[str]
    populators: list[Any]
    converters: dict[int, tuple[list[Any], Any]]
    composite: bool
    annotations: tuple[tuple[str, int], ...]


@functools.cache
def _psycopg3_backend() -> Any:
    """Django's PostgreSQL backend module when it runs on psycopg 3, else None."""
    from django.db.backends.postgresql import base

    return base if base.is_psycopg3 else None  # type: ignore[attr-defined]


def _server_binding_cursor(db: BaseDatabaseWrapper, postgresql: Any) -> Any:
    """``db.cursor()``, but over psycopg's server-binding ``Cursor`` (Django's own
    ``ServerBindingCursor``, with the connection's time zone as Django sets it)."""
    db.close_if_health_check_failed()
    db.ensure_connection()
    raw_connection = db.connection
    if "prepare_threshold" not in db.settings_dict["OPTIONS"]:
        raw_connection.prepare_threshold = PREPARE_THRESHOLD
    with db.wrap_database_errors:
        raw = postgresql.ServerBindingCursor(raw_connection)
        loader = raw_connection.adapters.get_loader(
            postgresql.TIMESTAMPTZ_OID, postgresql.Format.TEXT
        )
        timezone = db.timezone  # type: ignore[attr-defined]
        if timezone != loader.timezone:
            postgresql.register_tzloader(timezone, raw)
        return db._prepare_cursor(raw)  # type: ignore[attr-defined]


def server_binding_cursor(db: BaseDatabaseWrapper | None = None) -> Any:
    """``connection.cursor()``, with server-side binding on PostgreSQL (psycopg 3): for
    the writer of a statement whose text is fixed (built once per process), so that it
    is prepared once per connection as ``Prepared`` reads are, and its parameters are
    sent as they are instead of quoted into the text in Python. Untyped parameters need
    explicit casts where PostgreSQL cannot infer them (a ``SELECT %s`` list). Django's
    own cursor on SQLite and psycopg 2; through Django's wrapper either way, so query
    logs, counts and execute wrappers see every statement. ``db``: the default
    connection unless given."""
    db = db or connections[DEFAULT_DB_ALIAS]
    postgresql = _psycopg3_backend() if db.vendor == "postgresql" else None
    if postgresql is None:  # SQLite, or psycopg 2 (binds on the client only)
        return db.cursor()
    return _server_binding_cursor(db, postgresql)


_prepared: dict[Hashable, Prepared] = {}


def prepared_once(
    key: Hashable,
    build: Callable[..., QuerySet[Any]],
    placeholders: Mapping[str, Any],
    *,
    fixed: tuple[str, ...] = (),
) -> Compiled | None:
    """``compiled_once(...)``, read as a statement prepared on the server (``Prepared``).
    None where ``compiled_once`` falls back."""
    compiled = compiled_once(key, build, placeholders, fixed=fixed)
    if compiled is None:
        return None
    cache_key = (connection.vendor, key)
    found = _prepared.get(cache_key)
    if found is None or found.sql != compiled.sql:
        found = _prepared[cache_key] = Prepared(
            **{f.name: getattr(compiled, f.name) for f in dataclasses.fields(compiled)}
        )
    return found


def instances_once(
    key: Hashable,
    build: Callable[..., QuerySet[Any]],
    placeholders: Mapping[str, Any],
    values: Mapping[str, Any],
    *,
    fixed: tuple[str, ...] = (),
    prepare: bool = False,
) -> list[Any]:
    """The instances ``build`` reads for ``values``: through its statement compiled once
    (``compiled_once``; with ``prepare``, also prepared once per connection:
    ``prepared_once``), or — where compiling fell back — its QuerySet as written, with
    the ``fixed`` arguments as ``placeholders`` gives them. Every call runs it."""
    compiled = (prepared_once if prepare else compiled_once)(key, build, placeholders, fixed=fixed)
    if compiled is None:
        return list(build(**values, **{name: placeholders[name] for name in fixed}))
    return compiled.instances(values)


# --- Raw statements built once from the models (PostgreSQL writers) ---------------------
#
# A write the ORM cannot say in one statement (a chain of data-modifying CTEs) is written
# as SQL text; that text depends only on the models, so it is built once per process and
# vendor (``statement_once``), and its rows are laid out exactly as the ORM's INSERT would
# (``row_values``). Run through ``server_binding_cursor``, it is also prepared once per
# connection.

# Field types whose Python value is what psycopg is given (the ORM's preparation is
# the identity for them); any other field is prepared by the ORM, as save() would.
_PASSED_AS_IS = frozenset(
    {
        "AutoField",
        "BigAutoField",
        "BooleanField",
        "CharField",
        "DateTimeField",
        "ForeignKey",
        "IntegerField",
        "OneToOneField",
        "PositiveIntegerField",
        "TextField",
    }
)
_LENGTH = re.compile(r"\(.*?\)")
_columns: dict[tuple[str, type[Model], tuple[str, ...]], tuple[Any, ...]] = {}
_statements: dict[tuple[str, Hashable], str] = {}


def statement_once(key: Hashable, build: Callable[[], str]) -> str:
    """The text of a raw statement, built once per process and vendor from the models."""
    cache_key = (connection.vendor, key)
    sql = _statements.get(cache_key)
    if sql is None:
        sql = _statements[cache_key] = build()
    return sql


def inserted_columns(model: type[Model], skip: tuple[str, ...] = ()) -> tuple[Any, ...]:
    """(attname, field, prepared by the ORM?, quoted column) of each column the ORM's
    INSERT of ``model`` writes, in its order: the models' shape, read once."""
    key = (connection.vendor, model, skip)
    fields = _columns.get(key)
    if fields is None:
        fields = tuple(
            (
                f.attname,
                f,
                f.get_internal_type() not in _PASSED_AS_IS,
                connection.ops.quote_name(str(f.column)),
            )
            for f in model._meta.concrete_fields
            if not (f.primary_key and f.db_returning) and f.attname not in skip
        )
        _columns[key] = fields
    return fields


def row_values(
    model: type[Model], values: Mapping[str, Any], skip: tuple[str, ...] = ()
) -> list[Any]:
    """The database values of one row: ``values`` by attname, a column not given takes
    its field's default, exactly as the ORM's INSERT would."""
    row = []
    for attname, f, prepared, _ in inserted_columns(model, skip):
        value = values[attname] if attname in values else f.get_default()
        row.append(f.get_db_prep_save(value, connection) if prepared else value)
    return row


def column_list(model: type[Model], skip: tuple[str, ...] = ()) -> list[str]:
    return [column for *_, column in inserted_columns(model, skip)]


def table(model: type[Model]) -> str:
    return connection.ops.quote_name(model._meta.db_table)


def marks(n: int) -> str:
    return ", ".join(["%s"] * n)


def typed_marks(model: type[Model], skip: tuple[str, ...] = ()) -> str:
    """The placeholders of one row of ``model`` in a ``SELECT`` list, each cast to its
    column's type: bound on the server, a parameter PostgreSQL cannot infer (a NULL, a
    text) would be taken for ``text`` there, which a column of another type refuses.
    The type without its length (``varchar``, not ``varchar(32)``): an explicit cast
    to a length truncates, and an overlong value must fail as the ORM's INSERT does."""
    return ", ".join(
        f"%s::{_LENGTH.sub('', str(f.db_type(connection)))}"
        for _, f, *_ in inserted_columns(model, skip)
    )
