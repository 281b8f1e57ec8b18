"""The Java client (clients/java) and its Kotlin extension (clients/kotlin) are compiled with
javac and kotlinc, and their JUnit 5 tests run against a live daphne this test started and
against real local servers that count requests; the counts and the server's access log prove
what reached whom. JDK 17, JUnit, Kotlin and kotlinx-coroutines come from Debian
(scripts/ensure-java, run by `make test`)."""

import math
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest
from django.utils import timezone

from feedback.models import Feedback
from publication.models import AnswerBlock
from runs.models import Run, RunEvent
from tests import factories
from tests.clients.conftest import verified_citations, wait_for_terminal

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.slow]

ROOT = Path(__file__).resolve().parents[2]
JAVA_ROOT = ROOT / "clients" / "java"
KOTLIN_ROOT = ROOT / "clients" / "kotlin"
JUNIT = Path("/usr/share/java/junit-platform-console-standalone.jar")
COROUTINES = Path("/usr/share/java/kotlinx-coroutines-core.jar")
KOTLIN_STDLIB = Path("/usr/share/java/kotlin-stdlib.jar")
ATOMICFU = Path("/usr/share/java/atomicfu.jar")  # kotlinx-coroutines needs it at run time
CONFORMANCE = ROOT / "tests" / "conformance" / "citation_ids.json"


@pytest.fixture(scope="module")
def java_build(tmp_path_factory) -> Path:
    javac, java = shutil.which("javac"), shutil.which("java")
    factories.require(
        bool(javac and java and JUNIT.exists()),
        "the Java client needs JDK 17 and JUnit 5 (scripts/ensure-java)",
    )
    out = tmp_path_factory.mktemp("java-classes")
    sources = sorted(str(p) for p in JAVA_ROOT.glob("src/**/*.java"))
    compiled = subprocess.run(
        [javac, "--release", "17", "-Xlint:all", "-Werror", "-cp", str(JUNIT), "-d", str(out)]
        + sources,
        capture_output=True,
        text=True,
        timeout=240,
    )
    assert compiled.returncode == 0, compiled.stdout + compiled.stderr
    return out


@pytest.fixture(scope="module")
def kotlin_build(java_build, tmp_path_factory) -> Path:
    kotlinc = shutil.which("kotlinc")
    factories.require(
        bool(kotlinc and COROUTINES.exists() and KOTLIN_STDLIB.exists() and ATOMICFU.exists()),
        "the Kotlin extension needs Debian's kotlin, libkotlinx-coroutines-java and "
        "libkotlinx-atomicfu-java",
    )
    out = tmp_path_factory.mktemp("kotlin-classes")
    classpath = os.pathsep.join(str(p) for p in (java_build, COROUTINES, JUNIT))
    sources = sorted(str(p) for p in KOTLIN_ROOT.glob("src/**/*.kt"))
    compiled = subprocess.run(
        [kotlinc, "-jvm-target", "1.8", "-Werror", "-cp", classpath, "-d", str(out)] + sources,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert compiled.returncode == 0, compiled.stdout + compiled.stderr
    return out


def test_the_java_client_compiles_without_a_warning(java_build):
    classes = {p.name for p in java_build.rglob("*.class")}
    assert {"SparkTideClient.class", "CitationIds.class", "Json.class"} <= classes


def test_the_kotlin_extension_compiles_without_a_warning(kotlin_build):
    classes = {p.name for p in kotlin_build.rglob("*.class")}
    assert {"PreviewCitationAwaitKt.class", "SparkTideAwaitKt.class"} <= classes


def test_the_java_and_kotlin_clients_pass_their_junit_tests_against_a_live_server(
    java_build, kotlin_build, sparktide_server, agents, alice, bob, counting_servers
):
    from tests.clients.test_python_client import client_for, finished_run

    with client_for(sparktide_server, alice) as client:
        run = finished_run(client)
        archived = finished_run(client)
        rated = finished_run(client)  # FeedbackTest's
        kotlin_rated = finished_run(client)  # SparkTideAwaitTest's feedback
    Run.objects.filter(pk=archived["id"]).update(archived_at=timezone.now())
    rated_block = AnswerBlock.objects.filter(run_id=rated["id"]).order_by("delivery_ordinal")[0]
    unavailable = counting_servers()  # 503 problem+json
    slow = counting_servers(delay=3.0)
    before = len(sparktide_server.requests())

    env = {
        **os.environ,
        "SPARKTIDE_URL": sparktide_server.url,
        "SPARKTIDE_TOKEN": alice.raw_token,
        "SPARKTIDE_OTHER_TOKEN": bob.raw_token,
        "SPARKTIDE_RUN_ID": run["id"],
        "SPARKTIDE_ARCHIVED_RUN_ID": archived["id"],
        "SPARKTIDE_FEEDBACK_RUN_ID": rated["id"],
        "SPARKTIDE_FEEDBACK_BLOCK_ID": rated_block.pk,
        "SPARKTIDE_KOTLIN_FEEDBACK_RUN_ID": kotlin_rated["id"],
        "SPARKTIDE_CITATION_ID": verified_citations(run["id"])[0],
        "SPARKTIDE_COUNTING_URL": unavailable.url,
        "SPARKTIDE_SLOW_URL": slow.url,
        "SPARKTIDE_CONFORMANCE_FILE": str(CONFORMANCE),
    }
    result = subprocess.run(
        [
            shutil.which("java"),
            "-jar",
            str(JUNIT),
            "--class-path",
            os.pathsep.join(
                str(p) for p in (java_build, kotlin_build, KOTLIN_STDLIB, COROUTINES, ATOMICFU)
            ),
            "--scan-class-path",
            "--disable-banner",
            "--details=tree",
            "--disable-ansi-colors",
            "--config=junit.jupiter.execution.timeout.default=60s",
        ],
        capture_output=True,
        text=True,
        env=env,
        timeout=240,
    )
    output = result.stdout + result.stderr
    sleepy = Run.objects.get(agent_version__agent__key="sleepy", session_id="")
    assert wait_for_terminal(sleepy.pk).status == Run.Status.CANCELLED, output
    # SparkTideAwaitTest's run, created with its session and cancelled through cancelAwait.
    awaited = Run.objects.get(agent_version__agent__key="sleepy", session_id="kotlin-await")
    assert wait_for_terminal(awaited.pk).status == Run.Status.CANCELLED, output
    assert sleepy.events.filter(type="run.started").exists()  # cancelled while it ran
    assert not sleepy.events.filter(type="answer.published").exists()
    assert not Run.objects.exclude(status__in=Run.TERMINAL).exists()
    assert result.returncode == 0, output
    found = int(re.search(r"(\d+) tests found", output).group(1))
    successful = int(re.search(r"(\d+) tests successful", output).group(1))
    assert found == successful >= 50, output
    assert re.search(r"\b0 tests failed", output), output
    for name in (
        "theOwnerGetsTheExcerptAsPlainDataWithTextContent",
        "aUriIsRefusedBeforeAnyRequestReachesTheServer",
        "a503FailsOnceWithTheProblemAndIsNotRetried",
        "cancellingTheStageAbandonsTheCall",
        "refuses: a URI",
        "kotlinAwaitsTheOwnersExcerptAsText",
        "cancellingTheCoroutineCancelsTheCall",
        "listRunsPagesTheOwnersRunsNewestFirstWithItsFilters",
        "eventsResumeFromTheirCursorWithoutAGapOrARepeat",
        "theAnswerIsItsBlocksAsPlainData",
        "cancellingARunningRunIsAcceptedAndAFinishedOneIsRunAlreadyFinished",
        "aNegativeCursorIsRefusedBeforeAnyRequest",
        "aTicketOpensTheOwnersEventStreamAndIsRefusedToAnotherMember",
        "kotlinCreatesReadsListsAndCancelsARunOfItsSession",
        "kotlinReadsEventsFromItsCursor",
        "kotlinRefusesANegativeCursorBeforeAnyRequest",
        "kotlinReadsTheAnswerAsPlainData",
        "kotlinGetsATicketForTheOwnerAndTheTypedErrorForAnotherMember",
        "theOwnerRatesTheRunAndABlockAndASecondRatingReplacesTheFirst",
        "aRatingThatIsNeitherUpNorDownIsInvalidRequestNamingTheField",
        "anotherMemberCanNeitherRateNorReadTheOwnersRun",
        "kotlinSendsAndListsFeedbackAndAnotherMemberGetsNotFound",
    ):
        assert name in output, name

    # One request for the 503, none for any of the invalid IDs, no retry.
    assert unavailable.requests == [
        ("GET", f"/v1/apps/business/runs/run_x/citations/cite_{'z' * 24}/preview")
    ]
    assert sorted(path for _, path in slow.requests) == [
        f"/v1/apps/business/runs/{run}/citations/cite_{'z' * 24}/preview"
        for run in ("run_cancel", "run_kotlin_cancel", "run_timeout")
    ]
    # The live server saw exactly the calls that were allowed out: 5 Java and 2 Kotlin previews,
    # a getRun and a createRun, then RunsAndEventsTest's — the URIs and the negative cursor
    # never left the JVM, and nothing was sent twice.
    seen = sparktide_server.requests()[before:]
    assert len([line for line in seen if "/citations/" in line]) == 7, seen
    assert not [line for line in seen if "example.com" in line or "admin" in line], seen
    assert not [line for line in seen if "after=-" in line], seen

    def count(fragment: str) -> int:
        return len([line for line in seen if fragment in line])

    events = RunEvent.objects.filter(run_id=run["id"]).count()
    # Java: whole, middle, another member's, pages of 2; Kotlin: whole, one page of one.
    assert count("/events?after=") == 3 + math.ceil(events / 2) + 2, seen
    assert count("/cancel") == 3 + 2, seen  # Java: 202, 409, 404; Kotlin: 202, 409
    # RunsAndEventsTest reads the sleepy run until a worker has started it (at least once).
    waits = count(f'"GET /v1/apps/business/runs/{sleepy.pk}" ')
    assert waits >= 1, seen
    assert count(f'"GET /v1/apps/business/runs/{awaited.pk}" ') == 1, seen  # getRunAwait
    assert count("/answer") == 2 + 1, seen
    listed = count('"GET /v1/apps/business/runs?') + count('"GET /v1/apps/business/runs" ')
    assert listed == 6 + 1, seen
    # Java: an unknown agent, the sleepy run; Kotlin: its sleepy run with a session.
    assert count('"POST /v1/apps/business/runs" ') == 3, seen
    # Java: the owner's (then used once), another member's (404), an archived run's (410);
    # Kotlin: the owner's, another member's.
    assert count("/events/ticket") == 3 + 2, seen
    assert count('"WSCONNECT /ws/v1/apps/business/runs/') == 1, seen  # one socket, one ticket
    sockets = count("WSCONNECTING ") + count('"WSCONNECT ') + count("WSDISCONNECT ")
    assert sockets == 3, seen
    # Feedback — Java: 3 PUTs and a GET by the owner, a refused PUT, another member's PUT and
    # GET; Kotlin: a PUT, a GET, another member's PUT.
    assert count("/feedback") == 7 + 3, seen
    assert sorted(
        (item.block_id or "", item.rating, item.note)
        for item in Feedback.objects.filter(run_id__in=[rated["id"], kotlin_rated["id"]])
    ) == sorted([("", "down", ""), (rated_block.pk, "down", "第一段数字不对"), ("", "up", "好")])
    kotlin = 2 + 2 + 1 + 1 + 1 + 1 + 2 + 3
    java = 9 + 3 + math.ceil(events / 2) + 3 + 2 + 6 + 1 + waits + 3 + 7
    assert len(seen) == java + kotlin + sockets, seen
