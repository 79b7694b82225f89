"""One meaning of "chunks" (issue 8 item 8): --chunks gives the splits; a remainder
makes one more chunk; simulate, solve and bound report both the same way."""

from __future__ import annotations

import json

import pytest

from reports.cli import main
from themis.collective import Collective


def test_chunking_by_hand() -> None:
    # 6005 bytes in 6 splits: 6 chunks of floor(6005 / 6) = 1000 bytes and one of 5.
    c = Collective("all-reduce", 6005, 6)
    assert (c.splits, c.chunk_bytes, c.remainder_bytes, c.chunk_count) == (6, 1000, 5, 7)
    assert c.chunk_sizes() == [1000] * 6 + [5]
    assert c.chunking() == {"splits": 6, "chunk_count": 7, "chunk_sizes": [
        {"size_bytes": 1000, "count": 6}, {"size_bytes": 5, "count": 1}]}
    assert c.describe_chunks() == "7 chunks (6 splits: 6 x 1000B + 1 x 5B)"
    even = Collective("all-reduce", 4096, 4)
    assert even.chunk_count == 4 and even.chunking()["chunk_sizes"] == [
        {"size_bytes": 1024, "count": 4}]
    assert even.describe_chunks() == "4 chunks of 1KiB"


@pytest.mark.parametrize("command", ["simulate", "solve", "bound"])
def test_every_command_reports_splits_and_chunks_alike(capsys, command: str) -> None:
    argv = [command, "small-2d", "--size", "6005", "--chunks", "6"]
    assert main([*argv, "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["splits"] == 6 and data["chunk_count"] == 7
    assert data["chunk_sizes"] == [{"size_bytes": 1000, "count": 6}, {"size_bytes": 5, "count": 1}]
    if command != "bound":
        assert data["chunks"] == 7  # the chunks simulated or solved
    assert main(argv) == 0
    assert "7 chunks (6 splits: 6 x 1000B + 1 x 5B)" in capsys.readouterr().out
