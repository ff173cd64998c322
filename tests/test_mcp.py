"""The MCP server as a subprocess, spoken to with the official SDK's stdio client."""

import asyncio
import json
import sys

from mcp import Client
from mcp.client.stdio import StdioServerParameters

from .conftest import ROOT
import pytest

pytestmark = pytest.mark.slow   # real models or index builds (scripts/test.sh --fast skips it)

BEATRICE = "What nationality is Beatrice I, Countess of Burgundy's husband?"


def _payload(result):
    """The tool's JSON result (structured content, else the text block)."""
    if result.structured_content is not None:
        return result.structured_content
    return json.loads(result.content[0].text)


def test_server_tools_query_errors_and_survival(sample_index):
    params = StdioServerParameters(command=sys.executable, cwd=str(ROOT),
                                   args=["scripts/mcp_server.py", "--index", str(sample_index[0])])

    async def scenario():
        async with Client(params, read_timeout_seconds=300) as client:
            listed = {t.name: t for t in (await client.list_tools()).tools}
            assert {"query", "query_batch", "index_info", "build_index"} <= set(listed)
            for name in ("query", "query_batch", "index_info"):
                assert listed[name].annotations.read_only_hint is True
                assert listed[name].output_schema is not None
            assert listed["build_index"].annotations.destructive_hint is True
            assert "passages" in listed["query"].output_schema["properties"]

            result = await client.call_tool("query", {"question": BEATRICE, "top_k": 5})
            assert not result.is_error
            out = _payload(result)
            assert {"query", "query_entities", "activated_entities", "passages", "fallback", "params",
                    "timings_ms"} <= set(out)
            assert "2w000278" in [p["id"] for p in out["passages"]]
            assert result.structured_content is not None and out["warnings"] == []

            bad = await client.call_tool("query", {"question": "   "})
            assert bad.is_error and "empty query" in bad.content[0].text
            bad = await client.call_tool("query", {"question": "x", "params": {"gamma": 1}})
            assert bad.is_error and "unknown parameter" in bad.content[0].text
            bad = await client.call_tool("query", {"question": "x", "index": "/no/such/index"})
            assert bad.is_error and "outside the directories this server may use" in bad.content[0].text
            bad = await client.call_tool("query", {"question": "x", "index": str(ROOT / "no-such-index")})
            assert bad.is_error and "no index here" in bad.content[0].text
            bad = await client.call_tool("query", {"question": "x", "top_k": 0})
            assert bad.is_error and bad.content[0].text == "top_k must be ≥ 1, got 0"
            bad = await client.call_tool("query", {"question": "x", "top_k": "many"})
            text = bad.content[0].text
            assert bad.is_error and "\n" not in text and "top_k" in text and "http" not in text

            batch = _payload(await client.call_tool("query_batch", {"questions": [BEATRICE, "Who is Lothair II?"]}))
            assert len(batch["results"]) == 2

            info = _payload(await client.call_tool("index_info", {}))
            assert info["counts"]["passages"] == 160 and info["language"] == "en"

            again = await client.call_tool("query", {"question": BEATRICE})   # still alive
            assert not again.is_error

            assert listed["explain_path"].annotations.read_only_hint is True
            path = _payload(await client.call_tool("explain_path", {"source": "Beatrice I, Countess of Burgundy",
                                                                   "target": "Frederick Barbarossa"}))
            assert path["hops"] == 1 and path["paths"][0][1]["passage_id"] == "2w000283"
            assert listed["overview"].annotations.read_only_hint is True
            over = _payload(await client.call_tool("overview", {"communities": 3}))
            assert 1 <= len(over["communities"]) <= 3 and over["communities"][0]["top_entities"]

    asyncio.run(scenario())


def test_server_builds_an_index(tmp_path):
    params = StdioServerParameters(command=sys.executable, cwd=str(ROOT),
                                   args=["scripts/mcp_server.py", "--lazy", "--root", str(tmp_path), "--root", str(ROOT)])
    out = tmp_path / "idx"

    async def scenario():
        async with Client(params, read_timeout_seconds=300) as client:
            res = await client.call_tool("build_index", {"input": str(ROOT / "examples" / "ja-sample" / "corpus.jsonl"),
                                                         "output": str(out)})
            assert not res.is_error, res.content
            assert _payload(res)["passages"] == 6
            hit = _payload(await client.call_tool("query", {"question": "『坊っちゃん』の舞台はどこ?", "index": str(out)}))
            assert hit["passages"][0]["id"] in {"botchan", "soseki"}
            bad = await client.call_tool("build_index", {"input": str(tmp_path / "missing"), "output": str(out)})
            assert bad.is_error and "no such file" in bad.content[0].text
            info = _payload(await client.call_tool("index_info", {"index": str(out)}))
            assert info["language"] == "ja"

    asyncio.run(scenario())


def test_server_adds_and_removes_documents_and_sees_other_writers(tmp_path):
    """add_documents / remove_documents change the index; a commit by another process is picked
    up by the next query (the server reads CURRENT before each query)."""
    import subprocess

    out = tmp_path / "idx"
    corpus = ROOT / "examples" / "ja-sample" / "corpus.jsonl"
    subprocess.run([sys.executable, "scripts/build_graph.py", "--input", str(corpus), "--output", str(out), "--quiet"],
                   cwd=ROOT, check=True)
    extra = tmp_path / "extra.jsonl"
    extra.write_text(json.dumps({"id": "lunch", "title": "ランチ",
                                 "text": "金曜日のランチは田中さんが予約した渋谷のカレー屋です。"}, ensure_ascii=False) + "\n",
                     encoding="utf-8")
    params = StdioServerParameters(command=sys.executable, cwd=str(ROOT),
                                   args=["scripts/mcp_server.py", "--index", str(out), "--root", str(tmp_path)])
    question = "金曜日のランチはどこですか？"

    async def scenario():
        async with Client(params, read_timeout_seconds=300) as client:
            listed = {t.name: t for t in (await client.list_tools()).tools}
            for name in ("add_documents", "remove_documents", "update_index"):
                assert listed[name].annotations.destructive_hint is True
            before = _payload(await client.call_tool("query", {"question": question}))
            assert "lunch" not in [p["id"] for p in before["passages"]]
            added = _payload(await client.call_tool("add_documents", {"path": str(extra)}))
            assert added["added"] == 1 and added["passages"] == 7 and added["generation"] == 2
            hit = _payload(await client.call_tool("query", {"question": question}))
            assert hit["passages"][0]["id"] == "lunch"
            bad = await client.call_tool("remove_documents", {"ids": ["no-such-id"]})
            assert bad.is_error and "no-such-id" in bad.content[0].text
            removed = _payload(await client.call_tool("remove_documents", {"ids": ["lunch"]}))
            assert removed["removed"] == 1 and removed["passages"] == 6
            gone = _payload(await client.call_tool("query", {"question": question}))
            assert "lunch" not in [p["id"] for p in gone["passages"]]
            # another process adds it back: the server answers from the new generation
            proc = subprocess.run([sys.executable, "scripts/build_graph.py", "--output", str(out), "--add", str(extra),
                                   "--quiet"], cwd=ROOT, capture_output=True, text=True)
            assert proc.returncode == 0, proc.stderr
            back = _payload(await client.call_tool("query", {"question": question}))
            assert back["passages"][0]["id"] == "lunch"

    asyncio.run(scenario())
