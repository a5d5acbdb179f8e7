"""``toolcall-spec metrics --store URL``: the metrics computed inside the store's engine."""

from __future__ import annotations

from toolcall_spec.analytics.store import StoreError, StoreMetrics, open_store
from toolcall_spec.cli.console import fail, print_json
from toolcall_spec.cli.metrics_text import render_text


def run_store_metrics(url: str, project: str | None, output_format: str) -> int:
    """Print the store's metrics (exit 0), or the reason it cannot be read (exit 2)."""
    try:
        with open_store(url) as store:
            metrics = store.metrics(project)
    except StoreError as exc:
        fail(str(exc))
        return 2
    if output_format == "json":
        print_json(metrics.as_dict())
    else:
        print(render_store_text(metrics))
    return 0


def render_store_text(metrics: StoreMetrics) -> str:
    lines = [render_text(metrics.totals), "by tool:"]
    lines += [
        f"  {tool or '(unnamed)'}: {row.calls:,} calls, {row.errors:,} errors"
        for tool, row in metrics.by_tool.items()
    ]
    lines.append("by day:")
    lines += [
        f"  {day.isoformat()}: {row.calls:,} calls, {row.errors:,} errors"
        for day, row in metrics.by_day.items()
    ]
    return "\n".join(lines)
