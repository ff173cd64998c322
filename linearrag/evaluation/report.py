"""Markdown rendering of an evaluation report."""

from __future__ import annotations

from typing import Any

GOLD_COLUMNS = ("recall@1", "recall@2", "recall@5", "recall@10", "allgold@5", "contain@5")
FACT_COLUMNS = ("factrecall@1", "factrecall@3", "factrecall@5", "factrecall@10", "allfacts@5")


def _fmt(value) -> str:
    return "n/a" if value is None else f"{value:.1f}"


def markdown_report(report: dict[str, Any]) -> str:
    """A table of every mode (overall), one by hop count where the types name hops, then one table
    per question type."""
    first = next(iter(report["modes"].values()), {"overall": {}})["overall"]
    columns = FACT_COLUMNS if "factrecall@5" in first else GOLD_COLUMNS
    head = "| mode | " + " | ".join(columns) + " | fallback % | linked % | p50 ms | p95 ms |"
    sep = "|" + "---|" * (len(columns) + 5)
    lines = [f"Questions: {report['questions']} (index {report['index']})", "", head, sep]
    for mode, res in report["modes"].items():
        lat = res["latency_ms"]
        cells = " | ".join(_fmt(res["overall"].get(c)) for c in columns)
        lines.append(f"| {mode} | {cells} | {_fmt(res.get('fallback_rate'))} | {_fmt(res.get('linked_rate'))} | {_fmt(lat['p50'])} | {_fmt(lat['p95'])} |")
    hops = sorted({h for res in report["modes"].values() for h in res.get("by_hops", {})}, key=int)
    if len(hops) > 1:
        lines += ["", "By hop count:", "", "| mode | hops | n | " + " | ".join(columns) + " |",
                  "|" + "---|" * (len(columns) + 3)]
        for mode, res in report["modes"].items():
            for h in hops:
                row = res["by_hops"].get(h, {})
                cells = " | ".join(_fmt(row.get(c)) for c in columns)
                lines.append(f"| {mode} | {h} | {row.get('questions', 0)} | {cells} |")
    types = sorted({t for res in report["modes"].values() for t in res["by_type"]})
    if len(types) > 1:
        for qtype in types:
            lines += ["", f"Type `{qtype}`:", "", "| mode | n | " + " | ".join(columns) + " |",
                      "|" + "---|" * (len(columns) + 2)]
            for mode, res in report["modes"].items():
                row = res["by_type"].get(qtype, {})
                cells = " | ".join(_fmt(row.get(c)) for c in columns)
                lines.append(f"| {mode} | {row.get('questions', 0)} | {cells} |")
    return "\n".join(lines)
