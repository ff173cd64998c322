"""The Claude Code skill: front matter, and every command in it run as written."""

import json
import re
import shlex
import shutil
import subprocess

import yaml

from .conftest import ROOT
import pytest

pytestmark = pytest.mark.slow   # real models or index builds (scripts/test.sh --fast skips it)

SKILL = ROOT / ".claude" / "skills" / "linearrag" / "SKILL.md"


def _front_matter():
    text = SKILL.read_text(encoding="utf-8")
    match = re.match(r"^---\n(.*?)\n---\n", text, re.S)
    assert match, "SKILL.md must start with YAML front matter"
    return yaml.safe_load(match.group(1)), text[match.end():]


def test_front_matter():
    meta, body = _front_matter()
    assert meta["name"] == "linearrag"
    desc = meta["description"]
    assert 100 < len(desc) <= 1024
    for phrase in ("index a corpus", "multi-hop", "コーパスに索引を張る", "グラフRAGで検索"):
        assert phrase in desc
    assert "## How to answer" in body and "## Troubleshooting" in body


def test_every_command_runs_as_written():
    _, body = _front_matter()
    commands = [line.strip() for block in re.findall(r"```bash\n(.*?)```", body, re.S)
                for line in block.splitlines() if line.strip() and not line.strip().startswith("#")]
    assert len(commands) >= 4 and all(c.startswith("uv run scripts/") for c in commands)
    uv = shutil.which("uv")
    assert uv, "uv must be on PATH (scripts/test.sh installs it)"
    for command in commands:
        proc = subprocess.run(shlex.split(command), cwd=ROOT, capture_output=True, text=True)
        assert proc.returncode == 0, f"{command}\n{proc.stderr[-1500:]}"
        if "query_graph.py" in command:
            first = json.loads(proc.stdout.splitlines()[0])
            assert first["passages"], command
        if "evaluate.py" in command:
            assert "| linearrag |" in proc.stdout
