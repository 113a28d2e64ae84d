"""Fixtures: a real `mds demo` on a free loopback port over a SQLite store in a
temp dir, and real keys issued with the `mds` CLI on that store.

The binary is `$MDS_BIN`, else `target/debug/mds` of the repository
(`$CARGO_TARGET_DIR/debug/mds` when that is set); build it with
`cargo build --bin mds`. With `$MDS_DEMO_SEED` (a SQLite file a demo has
loaded, as `scripts/demo-seed.sh` makes it), each demo starts on a copy of it
and skips loading the files again.
"""

from __future__ import annotations

import contextlib
import itertools
import os
import re
import shutil
import subprocess
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

import httpx
import pytest

import mds_client
from mds_client import NotFoundError

REPO = Path(__file__).resolve().parents[3]


def mds_binary() -> Path:
    if os.environ.get("MDS_BIN"):
        return Path(os.environ["MDS_BIN"])
    target = Path(os.environ.get("CARGO_TARGET_DIR") or REPO / "target")
    return target / "debug" / "mds"


@dataclass
class Server:
    base_url: str
    demo_key: str
    database: str
    binary: Path
    workdir: Path

    def mds(self, *args: str) -> str:
        """Run an `mds` command on the server's store; its stdout."""
        done = subprocess.run(
            [str(self.binary), "--database", self.database, *args],
            capture_output=True,
            text=True,
            timeout=120,
            env={**os.environ, "MDS_LOG": "warn"},
        )
        if done.returncode != 0:
            raise RuntimeError(f"mds {args[0]} failed: {done.stderr.strip()}")
        return done.stdout


_names = itertools.count()
T = TypeVar("T")


def copy_demo_seed(db: Path) -> None:
    """Copies `$MDS_DEMO_SEED` (and its -wal and -shm files) to ``db``, if set."""
    seed = os.environ.get("MDS_DEMO_SEED")
    if not seed or not Path(seed).is_file():
        return
    for suffix in ("", "-wal", "-shm"):
        if Path(seed + suffix).is_file():
            shutil.copyfile(seed + suffix, f"{db}{suffix}")


@contextlib.contextmanager
def running_demo(work: Path) -> Iterator[Server]:
    """A real `mds demo` over a new SQLite store in ``work``, stopped at the end."""
    binary = mds_binary()
    if not binary.is_file():
        pytest.fail(f"no mds binary at {binary}: run `cargo build --bin mds` (or set MDS_BIN)")
    database = f"sqlite://{work}/mds.db?mode=rwc"
    copy_demo_seed(work / "mds.db")
    out = open(work / "demo.out", "w+")  # noqa: SIM115 - lives as long as the server
    err = open(work / "demo.err", "w+")  # noqa: SIM115
    proc = subprocess.Popen(
        [str(binary), "--database", database, "demo", "--listen", "127.0.0.1:0"],
        stdout=out,
        stderr=err,
        env={**os.environ, "MDS_LOG": "warn"},
    )
    base_url = key = None
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        text = (work / "demo.out").read_text()
        m = re.search(r"^Serving on (http://\S+)", text, re.M)
        if m:
            base_url = m.group(1)
            key = next(w for w in text.split() if w.startswith(("mds_live_", "mds_test_"))).strip(
                '"'
            )
            break
        if proc.poll() is not None:
            pytest.fail(f"mds demo exited: {(work / 'demo.err').read_text()}")
        time.sleep(0.1)
    if base_url is None or key is None:
        proc.kill()
        pytest.fail("mds demo did not start within 120 s")
    try:
        yield Server(base_url, key, database, binary, work)
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
        out.close()
        err.close()


@pytest.fixture(scope="session")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    with running_demo(tmp_path_factory.mktemp("mds")) as server:
        yield server


@pytest.fixture(scope="session")
def make_key(server: Server) -> Callable[..., str]:
    """`make_key(tier="pro")` issues a new key on a new account (its own limits)."""
    return key_maker(server)


def key_maker(server: Server) -> Callable[..., str]:
    """The `make_key` of ``server``."""

    def make(
        tier: str = "pro", rate_limit_per_minute: int | None = None, quota: int | None = None
    ) -> str:
        if rate_limit_per_minute is not None or quota is not None:
            server.mds(
                "tiers", "set", tier,
                "--rate-limit-per-minute", str(rate_limit_per_minute or 600),
                "--monthly-quota", str(quota or 1_000_000),
            )  # fmt: skip
        account = f"pytest-{os.getpid()}-{next(_names)}"
        server.mds("accounts", "create", account)
        key = server.mds("keys", "create", "--account", account, "--tier", tier).strip()
        key = key.splitlines()[-1].strip()
        wait_until_accepted(server.base_url, key)
        return key

    return make


def wait_until_accepted(base_url: str, key: str) -> None:
    """The contract says a key works the moment `keys create` returns; this
    build answers 401 for up to about a second after (reported), so wait for it.
    (401s are neither counted nor rate limited; the 200 takes one request
    from the per-minute limit.)"""
    deadline = time.monotonic() + 10
    with httpx.Client(base_url=base_url, headers={"Authorization": f"Bearer {key}"}) as h:
        while h.get("/v1/usage").status_code == 401:
            if time.monotonic() > deadline:
                pytest.fail("a new key was still refused after 10 s")
            time.sleep(0.1)


@pytest.fixture
def api_key(make_key: Callable[..., str]) -> str:
    return make_key("pro")


@pytest.fixture
def client(server: Server, api_key: str) -> Iterator[mds_client.Client]:
    with mds_client.Client(api_key=api_key, base_url=server.base_url) as c:
        yield c


def skip_if_unserved(call: Callable[[], T]) -> T:
    """Run `call`; skip the test when the server does not serve the route yet."""
    try:
        return call()
    except NotFoundError as exc:
        pytest.skip(f"route not served by this mds yet (404 {exc.code}: {exc.detail})")
