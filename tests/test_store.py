"""The store: layout, load-time checks, `linearrag check`, every damaged-file class as one
line and exit 2, kills at the commit point, the write lock, and readers pinned to a generation.

The index is built once with the real models (fp32) from 12 passages of the 2Wiki sample and
copied per test; removals and compactions need no model, so the subprocess tests are quick.
"""

import json
import os
import shutil
import signal
import subprocess
import sys
import textwrap
import threading

import numpy as np
import pytest

from linearrag.files import is_mapped
from linearrag.errors import IndexFormatError
from linearrag.index.store import load_index

from .conftest import EXAMPLES, ROOT

pytestmark = pytest.mark.slow   # real models or index builds (scripts/test.sh --fast skips it)

SCRIPTS = ROOT / "scripts"


def _run(*args, **kw):
    env = dict(os.environ, PYTHONPATH=str(ROOT), OPENBLAS_NUM_THREADS="1")
    return subprocess.run([sys.executable, *map(str, args)], capture_output=True, text=True, env=env, cwd=ROOT, **kw)


@pytest.fixture(scope="module")
def small_index(tmp_path_factory):
    from linearrag import BuildConfig, build_index

    root = tmp_path_factory.mktemp("store")
    rows = [json.loads(line) for line in (EXAMPLES / "2wiki-sample" / "corpus.jsonl").read_text().splitlines()[:12]]
    rows[3]["text"] = "Line one\u2028line two\u2029line three\u0085line four. " + rows[3]["text"]
    corpus = root / "corpus.jsonl"
    corpus.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    build_index(corpus, root / "idx", BuildConfig(precision="fp32"))
    return root / "idx", rows


@pytest.fixture
def idx(small_index, tmp_path):
    target = tmp_path / "idx"
    shutil.copytree(small_index[0], target)
    return target


def test_layout_and_round_trip(idx, small_index):
    rows = small_index[1]
    names = sorted(p.name for p in idx.iterdir())
    assert names == ["CURRENT", "LOCK", "g-000001", "manifest-000001.json", "seg-000001-0"]
    index = load_index(idx)
    assert index.generation == 1 and index.meta["format_version"] == 3
    assert index.passage_ids.tolist() == sorted(r["id"] for r in rows)
    assert is_mapped(index.passage_emb) and index.passage_emb.shape == (12, 384)
    text = dict(zip(index.passage_ids, index.passage_texts))[rows[3]["id"]]
    assert text.startswith("Line one\u2028line two\u2029line three\u0085line four.")   # U+2028 & co. round-trip
    manifest = json.loads((idx / "manifest-000001.json").read_text())
    assert all(len(sha) == 64 for _, sha in manifest["files"].values())


def test_check_passes_and_reports(idx):
    proc = _run("-m", "linearrag.commands.main", "check", idx, "--format", "json")
    assert proc.returncode == 0, proc.stderr
    summary = json.loads(proc.stdout)
    assert summary["ok"] and summary["passages"] == 12 and summary["files_checked"] > 20


def _damage_cases(idx):
    g = idx / "g-000001"
    yield "truncated array", lambda: (g / "sentence_emb.npy").write_bytes((g / "sentence_emb.npy").read_bytes()[:-9])
    yield "missing array", lambda: os.remove(g / "C_indices.npy")
    yield "missing texts", lambda: os.remove(g / "passage_texts.bin")
    yield "missing bm25", lambda: shutil.rmtree(g / "bm25")
    yield "corrupt manifest", lambda: (idx / "manifest-000001.json").write_text("{not json")
    yield "corrupt CURRENT", lambda: (idx / "CURRENT").write_text("garbage")
    yield "missing manifest", lambda: os.remove(idx / "manifest-000001.json")
    yield "missing segment", lambda: shutil.rmtree(idx / "seg-000001-0")


@pytest.mark.parametrize("case", [name for name, _ in _damage_cases(__import__("pathlib").Path("/x"))])
def test_damaged_index_is_one_line_and_exit_2(idx, case):
    dict(_damage_cases(idx))[case]()
    proc = _run("-m", "linearrag.commands.main", "check", idx)
    lines = proc.stderr.strip().splitlines()
    assert proc.returncode == 2 and len(lines) == 1 and lines[0].startswith("error: "), proc.stderr
    if case != "missing segment":   # a query needs only the global layer
        proc = _run(SCRIPTS / "query_graph.py", "--index", idx, "--query", "Who is it?")
        lines = proc.stderr.strip().splitlines()
        assert proc.returncode == 2 and len(lines) == 1 and lines[0].startswith("error: "), proc.stderr


def test_bit_flip_found_by_check(idx):
    """Same size, other bytes: opening does not read everything; `check` does."""
    f = idx / "g-000001" / "passage_emb.npy"
    data = bytearray(f.read_bytes())
    data[-1] ^= 0xFF
    f.write_bytes(bytes(data))
    proc = _run("-m", "linearrag.commands.main", "check", idx)
    assert proc.returncode == 2 and "passage_emb.npy does not match its checksum" in proc.stderr


def test_version_1_directory_and_not_an_index(tmp_path):
    v1 = tmp_path / "old"
    v1.mkdir()
    (v1 / "meta.json").write_text('{"format_version": 1}')
    with pytest.raises(IndexFormatError, match="format version 1"):
        load_index(v1)
    with pytest.raises(IndexFormatError, match="no index here"):
        load_index(tmp_path / "nope")
    (tmp_path / "empty").mkdir()
    with pytest.raises(IndexFormatError, match="no CURRENT"):
        load_index(tmp_path / "empty")


def test_bad_output_fails_before_any_model_loads(tmp_path):
    (tmp_path / "afile").write_text("x")
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "precious.txt").write_text("keep me")
    ro = tmp_path / "ro"
    ro.mkdir()
    ro.chmod(0o500)
    corpus = EXAMPLES / "2wiki-sample" / "corpus.jsonl"
    cases = [(tmp_path / "afile", "is a file"), (docs, "not an index")]
    if os.geteuid() != 0:   # root writes anywhere
        cases.append((ro / "idx", "not writable"))
    for out, message in cases:
        proc = _run(SCRIPTS / "build_graph.py", "--input", corpus, "--output", out, "--quiet")
        assert proc.returncode == 2 and message in proc.stderr and len(proc.stderr.strip().splitlines()) == 1
    assert (docs / "precious.txt").read_text() == "keep me"


def test_a_change_to_a_missing_index_is_one_line_and_creates_nothing(tmp_path):
    for change in (["--remove", "x"], ["--update"], ["--compact"]):
        proc = _run(SCRIPTS / "build_graph.py", "--output", tmp_path / "nope", *change)
        assert proc.returncode == 2 and "no index here" in proc.stderr and len(proc.stderr.strip().splitlines()) == 1
    assert not (tmp_path / "nope").exists()


def test_removal_needs_no_model_and_unknown_ids_change_nothing(idx, small_index):
    rows = small_index[1]
    proc = _run(SCRIPTS / "build_graph.py", "--output", idx, "--remove", "no-such-id", rows[0]["id"])
    assert proc.returncode == 2 and "no-such-id" in proc.stderr and "nothing was removed" in proc.stderr
    assert load_index(idx).generation == 1
    ids_file = idx.parent / "ids.txt"
    ids_file.write_text(f"# two of them\n{rows[0]['id']}\n\n{rows[1]['id']}\n")
    proc = _run(SCRIPTS / "build_graph.py", "--output", idx, "--remove-file", ids_file, "--json")
    assert proc.returncode == 0, proc.stderr
    summary = json.loads(proc.stdout)
    assert summary["removed"] == 2 and summary["passages"] == 10 and summary["generation"] == 2
    index = load_index(idx)
    assert rows[0]["id"] not in index.passage_ids.tolist() and len(index.passage_ids) == 10


_KILL_AT = textwrap.dedent("""
    import os, signal, sys
    import linearrag.index.store as store
    from linearrag.index.writer import IndexWriter
    point = sys.argv[2]
    real = {"replace": store.os.replace, "manifest": store.write_durably, "global": store.write_global}
    def die(*a, **k):
        os.kill(os.getpid(), signal.SIGKILL)
    if point == "replace":
        store.os.replace = die
    elif point == "manifest":
        store.write_durably = die
    elif point == "global":
        import linearrag.index.commit as c
        c.write_global = die
    elif point == "gc":   # the sweep after the commit (the lock's sweep is linearrag.index.lock's)
        import linearrag.index.commit as c
        c.collect_garbage = die
    IndexWriter(sys.argv[1]).remove([sys.argv[3]])
""")


@pytest.mark.parametrize("point", ["global", "manifest", "replace", "gc"])
def test_kill_during_a_commit_leaves_a_loadable_index(idx, small_index, point):
    victim = small_index[1][5]["id"]
    proc = _run("-c", _KILL_AT, idx, point, victim)
    assert proc.returncode == -signal.SIGKILL
    index = load_index(idx)
    after_commit = point == "gc"   # killed after CURRENT moved: the new generation is the committed one
    assert index.generation == (2 if after_commit else 1)
    assert (victim in index.passage_ids.tolist()) is not after_commit
    proc = _run("-m", "linearrag.commands.main", "check", idx)
    assert proc.returncode == 0, proc.stderr
    # the next writer sweeps what the killed one left, then commits on top of the committed generation
    proc = _run(SCRIPTS / "build_graph.py", "--output", idx, "--remove", small_index[1][6]["id"], "--json")
    assert proc.returncode == 0, proc.stderr
    leftovers = sorted(p.name for p in idx.iterdir())
    gen = json.loads(proc.stdout)["generation"]
    assert f"manifest-{gen:06d}.json" in leftovers and not any(n.endswith(".tmp") for n in leftovers)
    assert len(load_index(idx).passage_ids) == (10 if after_commit else 11)


def test_two_writers_serialise(idx, small_index):
    """Two removals at once: with --no-wait the second fails with one line, or both land in turn."""
    ids = [r["id"] for r in small_index[1]]
    hold = textwrap.dedent("""
        import sys, time
        from linearrag.index.lock import WriteLock
        with WriteLock(sys.argv[1]):
            print("locked", flush=True)
            time.sleep(float(sys.argv[2]))
    """)
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    holder = subprocess.Popen([sys.executable, "-c", hold, str(idx), "4"], stdout=subprocess.PIPE, text=True,
                              env=env)
    assert holder.stdout.readline().strip() == "locked"
    proc = _run(SCRIPTS / "build_graph.py", "--output", idx, "--remove", ids[0], "--no-wait")
    assert proc.returncode == 2 and "another process is writing" in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1
    proc = _run(SCRIPTS / "build_graph.py", "--output", idx, "--remove", ids[0])   # waits for the holder
    holder.wait()
    assert proc.returncode == 0 and "waiting for another writer" in proc.stderr
    both = [subprocess.Popen([sys.executable, str(SCRIPTS / "build_graph.py"), "--output", str(idx), "--remove", i,
                              "--quiet"], env=env) for i in ids[1:3]]
    assert [p.wait() for p in both] == [0, 0]
    index = load_index(idx)
    assert not set(ids[:3]) & set(index.passage_ids.tolist()) and len(index.passage_ids) == 9


def test_reader_keeps_its_generation_while_writers_commit(idx, small_index):
    from linearrag import Retriever

    ids = [r["id"] for r in small_index[1]]
    reader = Retriever.from_path(idx)
    before = reader.query("Who directed the film?").passages
    for i in ids[:4]:   # four commits: the reader's generation files are deleted meanwhile
        assert _run(SCRIPTS / "build_graph.py", "--output", idx, "--remove", i, "--quiet").returncode == 0
    assert not (idx / "g-000001").exists()
    again = reader.query("Who directed the film?").passages
    assert [(h.id, h.score) for h in again] == [(h.id, h.score) for h in before]
    assert len(load_index(idx).passage_ids) == 8


def test_concurrent_loads_during_commits_never_fail_or_mix(idx, small_index):
    ids = [r["id"] for r in small_index[1]]
    errors, seen = [], []
    stop = threading.Event()

    def read_loop():
        while not stop.is_set():
            try:
                index = load_index(idx)
                n = len(index.passage_ids)
                # a mixed load would pair one generation's counts with another's arrays
                assert index.passage_emb.shape[0] == n == index.graph.C.shape[0] == len(index.passage_texts)
                seen.append(index.generation)
            except Exception as exc:   # noqa: BLE001 - every failure counts
                errors.append(repr(exc))

    thread = threading.Thread(target=read_loop)
    thread.start()
    for i in ids[:5]:
        assert _run(SCRIPTS / "build_graph.py", "--output", idx, "--remove", i, "--quiet").returncode == 0
    stop.set()
    thread.join()
    assert not errors and len(set(seen)) >= 2


def test_float16_vectors_convert_exactly(tmp_path):
    """as_float32 (torch's fast cast when torch is loaded) gives numpy's own cast, bit for bit,
    for stored (memory-mapped, read-only) float16 vectors, rows picked out of them, subnormals
    and signed zeros included; float32 passes through untouched."""
    import torch  # noqa: F401  (the fast path needs torch imported, as in a query process)

    from linearrag.files import as_float32, load_array, save_array

    rng = np.random.default_rng(0)
    vectors = rng.standard_normal((300, 16)).astype(np.float16)
    vectors[0, :4] = [np.float16(6e-8), np.float16(-3e-6), np.float16(-0.0), np.float16(0.0)]
    save_array(tmp_path / "v.npy", vectors)
    mapped = load_array(tmp_path / "v.npy", random_access=True)
    assert not mapped.flags.writeable
    for got, ref in ((as_float32(mapped), mapped.astype(np.float32)),
                     (as_float32(mapped[[5, 0, 299]]), mapped[[5, 0, 299]].astype(np.float32))):
        assert got.dtype == np.float32 and np.array_equal(got.view(np.uint32), ref.view(np.uint32))
    already = np.ones((2, 3), dtype=np.float32)
    assert as_float32(already) is already


def test_vector_rows_read_from_the_file(tmp_path):
    """Tables opened with load_vector_table give read_rows the rows fancy indexing gives (any
    order, repeats, runs), map none of them, and a file cut short is an IndexFormatError."""
    from linearrag.files import _ROW_SOURCES, load_vector_table, read_rows, save_array

    rng = np.random.default_rng(3)
    data = rng.standard_normal((500, 24)).astype(np.float16)
    save_array(tmp_path / "t.npy", data)
    table = load_vector_table(tmp_path / "t.npy")
    assert is_mapped(table) and id(table) in _ROW_SOURCES
    cases = [np.array([0]), np.array([499]), np.arange(10, 40), np.array([7, 3, 3, 8, 9, 10, 499, 0]),
             rng.integers(0, 500, 300), np.zeros(0, dtype=np.int64)]
    for rows in cases:
        got = read_rows(table, rows)
        assert got.dtype == np.float16 and np.array_equal(got, data[rows])
    with pytest.raises(IndexError):
        read_rows(table, np.array([500]))
    plain = np.array(data)                 # not opened from a file: plain indexing
    assert np.array_equal(read_rows(plain, np.array([4, 2])), data[[4, 2]])
    assert np.array_equal(read_rows(table[100:], np.array([0, 1])), data[[100, 101]])   # a view: not the file's rows
    key = id(table)
    del table, got
    import gc

    gc.collect()
    assert key not in _ROW_SOURCES        # the descriptor is closed with the table

    short = load_vector_table(tmp_path / "t.npy")
    with open(tmp_path / "t.npy", "r+b") as f:   # the file shrinks under a reader
        f.truncate(os.path.getsize(tmp_path / "t.npy") - 48 * 10)
    with pytest.raises(IndexFormatError):
        read_rows(short, np.array([499]))


def _invert_middle(path, count=16):
    data = bytearray(path.read_bytes())
    at = len(data) // 2
    for k in range(at, min(at + count, len(data))):
        data[k] ^= 0xFF
    path.write_bytes(bytes(data))


@pytest.mark.parametrize("name,search", [("passage_texts.off.npy", "exact"), ("C_indices.npy", "exact"),
                                         ("passage_texts.bin", "exact"), ("entity_keys.hash.npy", "exact"),
                                         ("MT_indptr.npy", "ann"), ("passages.usearch", "ann")])
def test_flipped_bytes_are_named_at_query_time(idx, name, search):
    """16 bytes inverted in the middle of a file a query reads: one error line naming the file
    (was: another passage's text, or a traceback)."""
    _invert_middle(idx / "g-000001" / name)
    proc = _run(SCRIPTS / "query_graph.py", "--index", idx, "--query", "Who was Frederick Barbarossa's wife?",
                "--param", f"search={search}", "--top-k", "10")
    lines = proc.stderr.strip().splitlines()
    assert proc.returncode == 2 and len(lines) == 1 and lines[0].startswith("error: "), proc.stderr
    assert name.split(".")[0] in lines[0] and ("rebuild" in lines[0] or "restore" in lines[0])


def test_structure_checks_on_hand_made_arrays():
    from linearrag import validate

    validate.csr(np.array([0, 2, 3]), np.array([1, 0, 2], dtype=np.int32), 2, 3, ("p", "i"))
    for indptr, idx, what in [([0, 4, 3], [0, 1, 2], "decrease"), ([0, 2, 4], [0, 1, 2], "offsets run"),
                              ([0, 1, 3], [0, -1, 2], "outside"), ([0, 1, 3], [0, 1, 3], "outside")]:
        with pytest.raises(validate.Damaged, match=what):
            validate.csr(np.array(indptr), np.array(idx, dtype=np.int32), 2, 3, ("p", "i"))
    with pytest.raises(validate.Damaged, match="finite positive"):
        validate.positive(np.array([1.0, np.nan], dtype=np.float32), "w")
    with pytest.raises(validate.Damaged, match="sorted"):
        validate.non_decreasing(np.array([1, 3, 2]), "s")


def test_string_column_checks_every_string(tmp_path):
    from linearrag.files import read_strings, write_strings

    write_strings(tmp_path, "t", ["alpha", "beta", "ünïcode"])
    col = read_strings(tmp_path, "t")
    assert list(col) == ["alpha", "beta", "ünïcode"]
    blob = tmp_path / "t.bin"
    data = bytearray(blob.read_bytes())
    data[6] = ord("X")   # "beta" → "bXta": still UTF-8, still the same length
    blob.write_bytes(bytes(data))
    col = read_strings(tmp_path, "t")
    assert col[0] == "alpha"
    with pytest.raises(IndexFormatError, match="string 1 does not match its checksum"):
        col[1]
