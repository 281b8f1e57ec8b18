"""Wake-ups come back after Redis restarts: the subscription joins its group again."""

import asyncio
import shutil
import subprocess
import tempfile
import time

import pytest
from channels_redis.core import RedisChannelLayer

from delivery.shared import RunWakeups
from delivery.wakeups import run_group
from tests.realtime.processes import free_port

REDIS_SERVER = shutil.which("redis-server")


class OwnRedis:
    """A redis-server of this test's own (the shared one must not be restarted)."""

    def __init__(self) -> None:
        self.port = free_port()
        self.dir = tempfile.mkdtemp(prefix="sparktide-redis-")
        self.process: subprocess.Popen | None = None

    def start(self) -> None:
        self.process = subprocess.Popen(
            [
                REDIS_SERVER,
                "--port",
                str(self.port),
                "--save",
                "",
                "--appendonly",
                "no",
                "--dir",
                self.dir,
            ],
            stdout=subprocess.DEVNULL,
        )
        deadline = time.monotonic() + 10
        while (
            subprocess.run(
                ["redis-cli", "-p", str(self.port), "ping"], capture_output=True, text=True
            ).stdout.strip()
            != "PONG"
        ):
            assert time.monotonic() < deadline, "redis-server did not start"
            time.sleep(0.05)

    def stop(self) -> None:
        if self.process is not None:
            self.process.kill()
            self.process.wait(10)
            self.process = None


class Socket:
    def __init__(self) -> None:
        self.woken: list = []

    def wake_up(self, message) -> None:
        self.woken.append(message.get("seq"))

    def stream_wake(self) -> None:
        self.woken.append("stream")


@pytest.fixture
def own_redis():
    server = OwnRedis()
    server.start()
    yield server
    server.stop()


async def until(predicate, timeout: float) -> float:
    started = time.monotonic()
    while not predicate():
        assert time.monotonic() - started < timeout, "gave up waiting"
        await asyncio.sleep(0.05)
    return time.monotonic() - started


async def test_wake_ups_reach_the_sockets_again_after_a_redis_restart(own_redis):
    """Before: wake-ups arrive. After Redis restarts (forgetting every group), a wake-up sent
    once the process is subscribed again arrives too, and every socket is woken once at the
    rejoin to read what was announced meanwhile."""
    layer = RedisChannelLayer(hosts=[f"redis://127.0.0.1:{own_redis.port}"], prefix="wk")
    sender = RedisChannelLayer(hosts=[f"redis://127.0.0.1:{own_redis.port}"], prefix="wk")
    hub, socket = RunWakeups("run_restart"), Socket()
    assert await hub.join(socket, layer, retry_seconds=0.5)
    try:
        await sender.group_send(run_group("run_restart"), {"type": "run.wakeup", "seq": 1})
        await until(lambda: 1 in socket.woken, 5)

        own_redis.stop()
        await asyncio.sleep(0.5)
        own_redis.start()
        restarted = time.monotonic()
        # The rejoin wakes the socket once (no seq) …
        await until(lambda: None in socket.woken, 10)
        # … and wake-ups sent from now on arrive.
        sender = RedisChannelLayer(hosts=[f"redis://127.0.0.1:{own_redis.port}"], prefix="wk")
        await sender.group_send(run_group("run_restart"), {"type": "run.wakeup", "seq": 2})
        await until(lambda: 2 in socket.woken, 5)
        print(f"wake-ups back {time.monotonic() - restarted:.2f} s after the restart")
    finally:
        await hub.leave(socket, layer)
