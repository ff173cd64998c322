"""The fault-injection run, short: kills over every write operation, two writers racing a
reader, a full disk, and a sample of the damage matrix (scripts/torture.py --quick)."""

import json
import os
import subprocess
import sys

from .conftest import ROOT
import pytest

pytestmark = pytest.mark.slow   # real models or index builds (scripts/test.sh --fast skips it)


def test_quick_torture_run_finds_nothing_broken(tmp_path):
    env = dict(os.environ, PYTHONPATH=str(ROOT), OPENBLAS_NUM_THREADS="1")
    proc = subprocess.run([sys.executable, str(ROOT / "scripts" / "torture.py"), "--quick", "--workdir",
                           str(tmp_path / "work")], capture_output=True, text=True, env=env, cwd=ROOT)
    report = json.loads(proc.stdout.strip().splitlines()[-1])
    assert proc.returncode == 0, report
    totals = report["totals"]
    assert totals["trials"] >= 20
    assert all(totals[k] == 0 for k in ("broken", "wrong_texts", "tracebacks", "lost_documents", "lost_user_files"))
    assert report["kills"]["killed"] + report["kills"]["finished"] == 5
    assert set(report["kills"]["by_operation"]) == {"build", "add", "remove", "update", "compact"}
    assert report["concurrent"]["failed_reads"] == 0 and report["concurrent"]["reads"] > 0
    assert report["disk_full"]["refused"] >= 1
    queries = report["damage"]["queries"]
    assert queries.get("error", 0) >= 1 and set(queries) <= {"error", "correct", "reordered"}
