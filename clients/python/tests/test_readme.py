"""The README's walkthrough runs, cell by cell, against the real server."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from mds_client import NotFoundError

from .conftest import Server

README = Path(__file__).resolve().parents[1] / "README.md"
CELL = re.compile(r"^```python( unserved)?\n(.*?)^```", re.M | re.S)


def run_cells(
    server: Server, api_key: str, monkeypatch: pytest.MonkeyPatch, unserved: bool
) -> None:
    pytest.importorskip("pandas")
    monkeypatch.setenv("MDS_API_KEY", api_key)
    monkeypatch.setenv("MDS_BASE_URL", server.base_url)
    cells = CELL.findall(README.read_text())
    assert len([c for c in cells if not c[0]]) >= 8
    namespace: dict[str, Any] = {}
    for tag, code in cells:
        if bool(tag) == unserved or not tag:
            exec(compile(code, str(README), "exec"), namespace)
    assert api_key not in repr(namespace["client"])


def test_the_walkthrough_runs(
    server: Server, api_key: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    run_cells(server, api_key, monkeypatch, unserved=False)


@pytest.mark.unserved
def test_the_cells_of_routes_being_added_run(
    server: Server, api_key: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    try:
        run_cells(server, api_key, monkeypatch, unserved=True)
    except NotFoundError as exc:
        pytest.skip(f"route not served by this mds yet (404 {exc.code}: {exc.detail})")
