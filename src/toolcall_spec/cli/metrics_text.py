"""The text form of error metrics, shared by ``metrics FILE`` and ``metrics --store URL``."""

from __future__ import annotations

from toolcall_spec.analytics.metrics import ErrorMetrics


def render_text(metrics: ErrorMetrics) -> str:
    lines = [
        f"tool calls: {metrics.tool_calls:,}",
        f"errors: {metrics.errors:,} (error rate {metrics.error_rate:.1%})",
    ]
    lines += [f"  {category}: {count:,}" for category, count in sorted(metrics.by_category.items())]
    if metrics.reclassified:
        lines.append(
            f"recorded as success but isError: true in the output: {metrics.reclassified:,} "
            f"(corrected error rate {metrics.corrected_error_rate:.1%})"
        )
    if metrics.unreadable:
        lines.append(f"unreadable (not counted): {metrics.unreadable:,}")
    if metrics.skipped:
        lines.append(f"skipped (not a tool_call event): {metrics.skipped:,}")
    return "\n".join(lines)
