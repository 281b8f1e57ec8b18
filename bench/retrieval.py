"""Benchmark: managed retrieval at 1k, 10k and 100k chunks in one version, against floors.

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/sparktide .venv/bin/python bench/retrieval.py \
        [--sizes 1000,10000,100000] [--searches 300] [--explain] [--keep-db] [--reuse-db]
        [--no-floor] [--slowest N]

It (re)creates ``sparktide_bench_retrieval`` (suffix ``BENCH_DB_SUFFIX``) on the server of
DATABASE_URL, migrates it and, for each size, ingests one MANAGED version of that many
chunks (documents of 100 one-page chunks of Chinese text drawn from a Zipf-distributed
vocabulary, so some bigrams are everywhere and most are rare) with ``ingest_document``,
then publishes it. It prints:

  ingest   chunks/s through ``ingest_document``, ten documents per transaction (chunking,
           tokens, digests, ORM bulk insert, the generated vector, GIN maintenance) against a floor: the same chunk rows written with
           psycopg COPY into another version's documents;
  search   p50/p99 of ``search_managed`` (the ACL subquery, the PUBLISHED filter, rank,
           top 8 with their documents) over a fixed mix of questions, against a floor:
           the bare indexed tsvector query (the stored, GIN-indexed vector; same tsquery,
           same rank, same version, top 8 ids, no ACL, no ORM) sent with psycopg.

  index    per size, ms per 1,000 chunks to ingest and to publish (the statistics); for the
           bench DB, the bytes of what search adds (search_text, the stored vector, the GIN
           index, VersionTerm, VersionIndex) against the bytes of the chunks' text;
  slowest  the ``--slowest N`` (5) slowest questions at each size: the p99's.

``--period TEXT`` appends a report period to every question (a question naming one leaves
out the documents titled with another period: knowledge.retrieval.other_period_documents).
``--no-floor`` skips both floors (at 1,000,000 chunks the bare ts_rank query takes seconds).
``--explain`` prints the statements of the slowest question at the largest size and
EXPLAIN (ANALYZE, BUFFERS) of the slowest of them (the candidates'). It drops the bench database at the end unless --keep-db;
``--reuse-db`` searches the versions a ``--keep-db`` run left (no ingest, no ingest figures),
to iterate on the search alone.

Relevance mode (``--relevance``) measures what comes back instead of how fast:

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/ BENCH_DB_SUFFIX=… .venv/bin/python \
        bench/retrieval.py --relevance [--sqlite] [--show-misses] [--keep-db]

It ingests the labeled corpus of ``bench/relevance/corpus.py`` (168 documents of 28
invented companies: periodic reports, announcements, broker notes; one chunk per page)
as ONE published MANAGED version with ``ingest_document``, into ``sparktide_relevance``
(suffix ``BENCH_DB_SUFFIX``) on the server of DATABASE_URL, or with ``--sqlite`` into a
temporary SQLite file (the embedded default's engine and settings). Each hand-written
query of ``bench/relevance/queries.json`` (tuning) and ``queries_heldout.json`` (held
out: never tune against it) goes through ``sparktide_search``: the call path of the
runtime's ``search_knowledge`` tool (``select_versions`` then ``retrieve``, top 5), and
through two baselines over the same pages (character-bigram overlap; jieba search mode +
BM25). It prints recall@1, recall@5 and MRR@5 per kind and overall, for each file
separately, and how many queries each system gets right that the others miss.
``--show-misses`` lists SparkTide's misses with what it returned.
"""

from __future__ import annotations

import argparse
import itertools
import os
import random
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[0] = str(ROOT)

from bench import publication as pub  # noqa: E402

# BENCH_DB names the database outright (parallel benches on one server).
pub.BENCH_DB = os.environ.get("BENCH_DB") or "sparktide_bench_retrieval" + os.environ.get(
    "BENCH_DB_SUFFIX", ""
)
CHUNKS_PER_DOCUMENT = 100
TOP_K = 8

_rng = random.Random(20261201)
# 3,000 common CJK characters; words of 2–4 of them, drawn by a Zipf law.
_CHARS = [chr(0x4E00 + i * 7) for i in range(3000)]
_WORDS = [
    "".join(_rng.choice(_CHARS) for _ in range(_rng.choice((2, 2, 3, 4)))) for _ in range(8000)
]
_CUMULATIVE = list(itertools.accumulate(1 / (rank + 1) for rank in range(len(_WORDS))))


def _sentence(rng: random.Random, words: int) -> str:
    return "".join(rng.choices(_WORDS, cum_weights=_CUMULATIVE, k=words)) + "。"


def _pages(rng: random.Random) -> list[str]:
    # One page is one chunk: ingest_document never merges across pages.
    return [
        "".join(_sentence(rng, rng.randint(6, 10)) for _ in range(4))
        for _ in range(CHUNKS_PER_DOCUMENT)
    ]


QUESTIONS = [_sentence(random.Random(i), 4)[:-1] for i in range(40)]


def _percentile(samples: list[float], q: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, int(len(ordered) * q))]


def ingest(tenant, size: int, label: str):
    from django.db import transaction

    from knowledge.ingest import ingest_document
    from tests import factories

    version = factories.make_knowledge(tenant, f"kb-{label}", version="1")
    rng = random.Random(size)
    documents = size // CHUNKS_PER_DOCUMENT
    started = time.perf_counter()
    # As a bulk import would: ten documents per transaction (one commit each, not two
    # per document), so the figure is the ingest's work, not the fsyncs.
    for first in range(0, documents, 10):
        with transaction.atomic():
            for d in range(first, min(first + 10, documents)):
                ingest_document(version, key=f"doc-{d}", title=f"报告{d}", pages=_pages(rng))
    elapsed = time.perf_counter() - started
    started = time.perf_counter()
    factories.publish(version)  # the statistics: frequencies, impacts, entity aliases
    return version, elapsed, time.perf_counter() - started


def ingest_floor(bench_url: str, tenant, version, label: str) -> float:
    """The same chunk rows, COPYed by psycopg into a scratch version's documents."""
    import psycopg

    from knowledge.models import Chunk, Document
    from tests import factories

    scratch = factories.make_knowledge(tenant, f"kb-{label}-floor", version="1")
    documents = {
        d.pk: Document.objects.create(
            version=scratch, key=d.key, title=d.title, text=d.text, page_count=d.page_count
        ).pk
        for d in Document.objects.filter(version=version)
    }
    columns = [
        "document_id",
        "ordinal",
        "page",
        "paragraph",
        "start",
        "end",
        "text",
        "digest",
        "search_text",
        "search_marks",
    ]
    rows = [
        (documents[r[0]], scratch.pk, *r[1:])
        for r in Chunk.objects.filter(document__version=version).values_list(*columns)
    ]
    quoted = ", ".join(f'"{c}"' for c in ["document_id", "version_id", *columns[1:]])
    with psycopg.connect(bench_url.replace("postgres://", "postgresql://", 1)) as conn:
        started = time.perf_counter()
        with conn.cursor() as cur, cur.copy(f"COPY knowledge_chunk ({quoted}) FROM STDIN") as copy:
            for row in rows:
                copy.write_row(row)
        conn.commit()
        return time.perf_counter() - started


def search(version, owner, searches: int) -> tuple[list[float], dict[str, float]]:
    from knowledge.retrieval import search_managed

    for question in QUESTIONS[:5]:
        search_managed([version], query=question, top_k=TOP_K, owner=owner)
    samples, by_question = [], {}
    for i in range(searches):
        question = QUESTIONS[i % len(QUESTIONS)]
        started = time.perf_counter()
        items = search_managed([version], query=question, top_k=TOP_K, owner=owner)
        ms = (time.perf_counter() - started) * 1000
        assert items, question
        samples.append(ms)
        by_question[question] = max(ms, by_question.get(question, 0.0))
    return samples, by_question


def search_floor(bench_url: str, version, searches: int) -> list[float]:
    import psycopg

    from knowledge.ranking import MAX_QUERY_TOKENS
    from knowledge.text import search_tokens
    from knowledge.token_queries import tsquery_literal

    sql = (
        "SELECT c.id FROM knowledge_chunk c JOIN knowledge_document d ON d.id = c.document_id"
        " WHERE d.version_id = %s AND c.search_vector @@ to_tsquery('simple', %s)"
        " ORDER BY ts_rank(c.search_vector, to_tsquery('simple', %s)) DESC LIMIT %s"
    )
    samples = []
    with psycopg.connect(bench_url.replace("postgres://", "postgresql://", 1)) as conn:
        for i in range(searches + 5):
            question = QUESTIONS[i % len(QUESTIONS)]
            tokens = list(dict.fromkeys(search_tokens(question)))[:MAX_QUERY_TOKENS]
            tsquery = " | ".join(tsquery_literal(t) for t in tokens)
            started = time.perf_counter()
            conn.execute(sql, [version.pk, tsquery, tsquery, TOP_K]).fetchall()
            if i >= 5:
                samples.append((time.perf_counter() - started) * 1000)
    return samples


def index_sizes() -> dict[str, int]:
    """Bytes on disk of what search adds to the chunks, and of the chunks' text: every
    version of the bench DB (the floors' copies too: the GIN index holds them)."""
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT sum(octet_length(text)), sum(pg_column_size(search_text)),"
            " sum(pg_column_size(search_marks)), sum(pg_column_size(search_vector)),"
            " pg_relation_size('knowledge_chunk_search_vector_gin'),"
            " pg_total_relation_size('knowledge_versionterm'),"
            " pg_total_relation_size('knowledge_versionindex') FROM knowledge_chunk"
        )
        text, search_text, marks, vector, gin, terms, index = cursor.fetchone()
    return {
        "chunk text": text,
        "search_text column (tokens)": search_text,
        "search_marks column (tokens held twice)": marks,
        "search_vector column (stored tsvector)": vector,
        "GIN index on (version, search_vector)": gin,
        "VersionTerm (frequencies, impacts) + indexes": terms,
        "VersionIndex": index,
        "total": search_text + marks + vector + gin + terms + index,
    }


def _mb(size: int) -> str:
    return f"{size / 1e6:.1f} MB"


def explain(version, owner, question: str) -> None:
    """EXPLAIN ANALYZE of the slowest statement of one search (the candidates')."""
    from django.db import connection

    from knowledge import retrieval

    captured = []

    def keep(execute, sql, params, many, context):
        started = time.perf_counter()
        result = execute(sql, params, many, context)
        captured.append((time.perf_counter() - started, sql, params))
        return result

    with connection.execute_wrapper(keep):
        retrieval.search_managed([version], query=question, top_k=TOP_K, owner=owner)
    print(f"\n{len(captured)} statements for {question!r}, ms:", end=" ")
    print(", ".join(f"{seconds * 1000:.1f}" for seconds, _, _ in captured))
    _, sql, params = max(captured, key=lambda statement: statement[0])
    with connection.cursor() as cursor:
        cursor.execute("EXPLAIN (ANALYZE, BUFFERS) " + sql, params)
        print("EXPLAIN ANALYZE of its slowest statement:")
        for (line,) in cursor.fetchall():
            print("  " + line)


# --- relevance mode ---------------------------------------------------------------------

RELEVANCE_DB = "sparktide_relevance"


class RelevanceSetup:
    """A tenant, its owner, an app leased to the corpus version, and an agent that may
    search it: what a run's ``search_knowledge`` call has in hand."""

    def __init__(self, documents) -> None:
        from django.db import transaction

        from knowledge.context import TrustedContext
        from knowledge.ingest import ingest_document
        from knowledge.models import Chunk
        from tests import factories

        tenant = factories.make_tenant("relevance", "Relevance")
        self.owner = factories.make_user(tenant, "analyst")
        self.app = factories.make_app(tenant, "research", members=[self.owner])
        self.version = factories.make_knowledge(tenant, "reports", version="1")
        started = time.perf_counter()
        for first in range(0, len(documents), 10):
            with transaction.atomic():
                for d in documents[first : first + 10]:
                    ingest_document(self.version, key=d.key, title=d.title, pages=list(d.pages))
        self.ingest_s = time.perf_counter() - started
        factories.publish(self.version)
        factories.lease(self.app, self.version)
        self.agent_version = factories.make_agent(
            tenant,
            "analyst",
            model=factories.scripted(),
            knowledge=[self.version],
            pin_to=[self.app],
        )
        self.context = TrustedContext(
            tenant=tenant.key,
            app=self.app.slug,
            user=self.owner.get_username(),
            business_session_id="relevance-bench",
        )
        chunks = Chunk.objects.filter(document__version=self.version)
        self.chunks = chunks.count()
        self.pages = chunks.values("document_id", "page").distinct().count()


def sparktide_search(setup: RelevanceSetup, query: str, top_k: int) -> list[tuple[str, int]]:
    """SparkTide's answer to one query, as (document key, page) best first.

    The runtime's ``search_knowledge`` tool (runtime/tools.py) does exactly this
    before it issues citations: the agent version's routing picks the versions, then
    ``retrieve`` searches those the app may use, as the run's owner. Re-point this
    function, and only it, if those modules move."""
    from knowledge.retrieval import retrieve, select_versions

    versions = select_versions(setup.agent_version, query)
    items = retrieve(
        versions=versions,
        query=query,
        top_k=top_k,
        owner=setup.owner,
        app=setup.app,
        context=setup.context,
    )
    return [(item.source_ref["id"], item.source_ref["page"]) for item in items]


def relevance(args) -> None:
    import shutil
    import tempfile

    from bench.relevance import corpus
    from bench.relevance import evaluate as ev

    documents = corpus.build_corpus()
    by_key = {d.key: d for d in documents}
    files = {
        f"{which} ({corpus.QUERY_FILES[which].name})": corpus.load_queries(which)
        for which in corpus.QUERY_FILES
    }
    problems = [p for qs in files.values() for q in qs for p in corpus.query_problems(q, by_key)]
    if problems:
        sys.exit("the queries do not match the corpus:\n  " + "\n  ".join(problems))
    order = ev.ingest_order(documents)
    pages = ev.pages_of(order)
    started = time.perf_counter()
    bigram, bm25 = ev.BigramOverlap(pages), ev.JiebaBM25(pages)
    baseline_s = time.perf_counter() - started

    scratch = admin_url = None
    if args.sqlite:
        scratch = tempfile.mkdtemp(prefix="sparktide-relevance-")
        bench_url = f"sqlite:///{scratch}/relevance.sqlite3"
    else:
        pub.BENCH_DB = RELEVANCE_DB + os.environ.get("BENCH_DB_SUFFIX", "")
        admin_url, bench_url = pub._urls()
        pub._recreate(admin_url)
    try:
        pub._setup_django(bench_url)
        from django.db import connection, connections

        setup = RelevanceSetup(order)
        if connection.vendor == "postgresql":
            with connection.cursor() as cursor:
                cursor.execute("ANALYZE knowledge_chunk")
                cursor.execute("ANALYZE knowledge_document")
                cursor.execute("SHOW server_version")
                engine = f"PostgreSQL {cursor.fetchone()[0].split()[0]} ({pub.BENCH_DB})"
        else:
            import sqlite3

            engine = f"SQLite {sqlite3.sqlite_version} (temporary file)"
        title = (
            f"Relevance of managed retrieval — {engine}\n"
            f"corpus: {len(documents)} documents, {len(pages)} pages, {setup.chunks} chunks "
            f"({setup.pages} distinct pages) in one published MANAGED version; "
            f"ingested in {setup.ingest_s:.1f} s; baselines indexed in {baseline_s:.1f} s"
        )
        ev.report(
            title,
            files,
            {
                "SparkTide": lambda q: sparktide_search(setup, q, ev.TOP_K),
                bigram.name: bigram.search,
                bm25.name: bm25.search,
            },
            show_misses="SparkTide" if args.show_misses else None,
        )
        connections.close_all()
    finally:
        if scratch:
            shutil.rmtree(scratch, ignore_errors=True)
        elif not args.keep_db:
            pub._drop(admin_url)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="1000,10000,100000")
    parser.add_argument("--searches", type=int, default=300)
    parser.add_argument("--explain", action="store_true")
    parser.add_argument("--keep-db", action="store_true")
    parser.add_argument("--reuse-db", action="store_true")
    parser.add_argument(
        "--no-floor", action="store_true", help="skip both floors (1M chunks: hours otherwise)"
    )
    parser.add_argument("--slowest", type=int, default=5, help="list the N slowest questions")
    parser.add_argument(
        "--relevance", action="store_true", help="measure relevance instead of speed"
    )
    parser.add_argument("--sqlite", action="store_true", help="relevance on a temporary SQLite")
    parser.add_argument("--show-misses", action="store_true", help="list SparkTide's misses")
    parser.add_argument(
        "--period",
        default="",
        help="append this report period to every question (e.g. 2026年第三季度), to measure "
        "what reading the question's period costs",
    )
    args = parser.parse_args()
    if args.period:
        QUESTIONS[:] = [question + args.period for question in QUESTIONS]
    if args.relevance:
        relevance(args)
        return
    sizes = [int(s) for s in args.sizes.split(",")]
    admin_url, bench_url = pub._urls()
    if args.reuse_db:
        args.keep_db = True
    else:
        pub._recreate(admin_url)
    rows: list = []
    publish_times: list = []
    slowest: dict = {}
    try:
        pub._setup_django(bench_url)
        from django.db import connection

        from tests import factories

        if args.reuse_db:
            from django.contrib.auth import get_user_model

            from knowledge.models import KnowledgeVersion

            owner = get_user_model().objects.get(username="owner")
        else:
            tenant = factories.make_tenant("bench", "Bench")
            owner = factories.make_user(tenant, "owner")
        for size in sizes:
            if args.reuse_db:
                version = KnowledgeVersion.objects.get(knowledge__key=f"kb-{size}")
                ingest_s = floor_s = publish_s = float("nan")
            else:
                version, ingest_s, publish_s = ingest(tenant, size, str(size))
                floor_s = (
                    float("nan")
                    if args.no_floor
                    else ingest_floor(bench_url, tenant, version, str(size))
                )
            publish_times.append((size, ingest_s, publish_s))
            with connection.cursor() as cursor:
                cursor.execute("ANALYZE knowledge_chunk")
                cursor.execute("ANALYZE knowledge_document")
            samples, by_question = search(version, owner, args.searches)
            floor = (
                [float("nan")] if args.no_floor else search_floor(bench_url, version, args.searches)
            )
            rows.append((size, ingest_s, floor_s, samples, floor))
            slowest[size] = sorted(by_question.items(), key=lambda item: -item[1])[: args.slowest]
            if args.explain and size == sizes[-1]:
                explain(version, owner, max(by_question, key=by_question.get))
        sizes_on_disk = index_sizes()
        from django.db import connections

        connections.close_all()
    finally:
        if not args.keep_db:
            pub._drop(admin_url)

    print(
        f"\nManaged retrieval, one version, top {TOP_K}, {args.searches} searches per size over "
        f"{len(QUESTIONS)} questions (PostgreSQL, {os.cpu_count()} CPUs)"
    )
    header = (
        f"{'chunks':>8} | {'ingest ch/s':>11} {'floor ch/s':>11} {'ratio':>6} | "
        f"{'p50 ms':>7} {'p99 ms':>7} | {'floor p50':>9} {'floor p99':>9} | {'p99 ratio':>9}"
    )
    print(header)
    print("-" * len(header))
    for size, ingest_s, floor_s, samples, floor in rows:
        p50, p99 = statistics.median(samples), _percentile(samples, 0.99)
        f50, f99 = statistics.median(floor), _percentile(floor, 0.99)
        print(
            f"{size:>8} | {size / ingest_s:>11.0f} {size / floor_s:>11.0f} "
            f"{floor_s / ingest_s:>6.2f} | {p50:>7.2f} {p99:>7.2f} | {f50:>9.2f} {f99:>9.2f} | "
            f"{f99 / p99:>9.2f}"
        )
    print("ratio: floor time / SparkTide time (1.00 = at the floor)")
    print("\nIndex time per 1,000 chunks (ingest: chunking, tokens, the stored vector, GIN;")
    print("publish: document frequencies, term impacts, entity aliases)")
    for size, ingest_s, publish_s in publish_times:
        print(
            f"{size:>8} chunks | ingest {ingest_s * 1e6 / size:>8.0f} ms | "
            f"publish {publish_s * 1e6 / size:>6.0f} ms"
        )
    text_bytes = sizes_on_disk.pop("chunk text")
    print(f"\nIndex size vs the chunks' text ({_mb(text_bytes)}, every chunk of the bench DB):")
    for name, size in sizes_on_disk.items():
        print(f"  {name:<44} {_mb(size):>10}  {size / text_bytes:>5.2f}x text")
    for size, questions in slowest.items():
        print(f"\nSlowest questions at {size} chunks (max ms of their searches):")
        for question, ms in questions:
            print(f"  {ms:>8.1f}  {question}")


if __name__ == "__main__":
    main()
