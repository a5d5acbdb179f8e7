"""The probe: one MCP server, built the same way on two frameworks, and the 22 calls every peer
is measured on.

The calls are chosen so that each error class of the one rule appears more than once, and every
call's tool name is unique, so that whatever a peer records can be matched to its call by the tool
name alone (a span name, an attribute, an event field):

=====================  =====  =================================================================
class                  calls  what the server does
=====================  =====  =================================================================
``success``            8      the tool returns a value
``is_error``           6      the tool returns a result with ``isError: true``
``raised``             4      the tool raises an ordinary exception
``unknown_tool``       2      the client calls a tool the server does not have
``invalid_arguments``  2      the arguments fail the tool's input schema
=====================  =====  =================================================================

14 of the 22 are errors in the one-rule sense: the client receives ``isError: true`` (or, where a
framework chooses, a JSON-RPC error: the call failed either way). Every message a tool writes or
raises, and one invalid argument value, contains a user's e-mail address (``EMAIL``), so a
comparison can tell whether a peer's recorded error messages keep PII.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import Any

from mcp.types import CallToolResult, TextContent

EMAIL = "max.mustermann@example.com"

FRAMEWORKS = ("mcpserver", "fastmcp")
"""``mcpserver``: the ``mcp`` SDK's ``MCPServer``; ``fastmcp``: standalone ``fastmcp`` 4.x."""

SUCCESS = "success"
IS_ERROR = "is_error"
RAISED = "raised"
UNKNOWN_TOOL = "unknown_tool"
INVALID_ARGUMENTS = "invalid_arguments"
ERROR_CLASSES = (IS_ERROR, RAISED, UNKNOWN_TOOL, INVALID_ARGUMENTS)
CLASSES = (SUCCESS, *ERROR_CLASSES)


@dataclass(frozen=True)
class ProbeCall:
    tool: str
    arguments: dict[str, Any]
    kind: str

    @property
    def is_error(self) -> bool:
        return self.kind != SUCCESS


CALLS: tuple[ProbeCall, ...] = (
    ProbeCall("sum_numbers", {"a": 2, "b": 3}, SUCCESS),
    ProbeCall("refund_order", {"order": "A-1001"}, IS_ERROR),
    ProbeCall("echo_text", {"text": "hello"}, SUCCESS),
    ProbeCall("notify_customer", {"order": "A-1002"}, RAISED),
    ProbeCall("greet_user", {"name": "Ada"}, SUCCESS),
    ProbeCall("reserve_seat", {"seat": "12C"}, IS_ERROR),
    ProbeCall("delete_everything", {}, UNKNOWN_TOOL),
    ProbeCall("count_words", {"text": "one two three"}, SUCCESS),
    ProbeCall("schedule_meeting", {"hour": f"ask {EMAIL}"}, INVALID_ARGUMENTS),
    ProbeCall("send_invoice", {"invoice": "INV-7"}, IS_ERROR),
    ProbeCall("charge_card", {"amount": 12}, RAISED),
    ProbeCall("reverse_text", {"text": "abc"}, SUCCESS),
    ProbeCall("check_stock", {"sku": "SKU-9"}, IS_ERROR),
    ProbeCall("sync_contacts", {}, RAISED),
    ProbeCall("lookup_city", {"zip_code": "10115"}, SUCCESS),
    ProbeCall("set_quantity", {}, INVALID_ARGUMENTS),
    ProbeCall("cancel_booking", {"booking": "B-3"}, IS_ERROR),
    ProbeCall("list_tags", {}, SUCCESS),
    ProbeCall("no_such_tool", {"x": 1}, UNKNOWN_TOOL),
    ProbeCall("export_report", {"report": "Q3"}, RAISED),
    ProbeCall("lookup_offer", {"offer": "O-5"}, IS_ERROR),
    ProbeCall("format_price", {"cents": 1999}, SUCCESS),
)

EXPECTED_COUNTS = Counter(call.kind for call in CALLS)
"""What the probe is built to produce: 8 successes, 6 / 4 / 2 / 2 errors."""


def _failure(text: str) -> CallToolResult:
    return CallToolResult(content=[TextContent(type="text", text=text)], is_error=True)


def _tools() -> list[Any]:
    """The probe's tool functions (names as in ``CALLS``); the same functions serve both
    frameworks, each registers them with its own decorator."""

    def sum_numbers(a: int, b: int) -> int:
        return a + b

    def echo_text(text: str) -> str:
        return text

    def greet_user(name: str) -> str:
        return f"Hello, {name}"

    def count_words(text: str) -> int:
        return len(text.split())

    def reverse_text(text: str) -> str:
        return text[::-1]

    def lookup_city(zip_code: str) -> str:
        return "Berlin" if zip_code.startswith("10") else "unknown"

    def list_tags() -> list[str]:
        return ["a", "b"]

    def format_price(cents: int) -> str:
        return f"{cents / 100:.2f} EUR"

    def refund_order(order: str) -> CallToolResult:
        return _failure(f"Refund for {order} refused: {EMAIL} has no payment on file")

    def reserve_seat(seat: str) -> CallToolResult:
        return _failure(f"Seat {seat} is taken; we wrote to {EMAIL}")

    def send_invoice(invoice: str) -> CallToolResult:
        return _failure(f"Invoice {invoice} bounced at {EMAIL}")

    def check_stock(sku: str) -> CallToolResult:
        return _failure(f"{sku} is out of stock (alert sent to {EMAIL})")

    def cancel_booking(booking: str) -> CallToolResult:
        return _failure(f"Booking {booking} of {EMAIL} can no longer be cancelled")

    def lookup_offer(offer: str) -> CallToolResult:
        return _failure(f"Offer {offer} expired for {EMAIL}")

    def notify_customer(order: str) -> str:
        raise RuntimeError(f"mail server refused {EMAIL} for {order}")

    def charge_card(amount: int) -> str:
        raise ValueError(f"card of {EMAIL} declined for {amount} EUR")

    async def sync_contacts() -> str:
        raise ConnectionError(f"address book of {EMAIL} unreachable")

    async def export_report(report: str) -> str:
        raise PermissionError(f"{EMAIL} may not export {report}")

    def schedule_meeting(hour: int) -> str:
        return f"meeting at {hour}:00"

    def set_quantity(quantity: int) -> int:
        return quantity

    return [
        sum_numbers,
        echo_text,
        greet_user,
        count_words,
        reverse_text,
        lookup_city,
        list_tags,
        format_price,
        refund_order,
        reserve_seat,
        send_invoice,
        check_stock,
        cancel_booking,
        lookup_offer,
        notify_customer,
        charge_card,
        sync_contacts,
        export_report,
        schedule_meeting,
        set_quantity,
    ]


def build_server(framework: str) -> Any:
    """A fresh probe server on ``framework`` (see ``FRAMEWORKS``)."""
    if framework == "mcpserver":
        from mcp.server.mcpserver import MCPServer  # noqa: PLC0415

        server: Any = MCPServer("probe")
    elif framework == "fastmcp":
        from importlib import import_module  # noqa: PLC0415

        server = import_module("fastmcp").FastMCP("probe")
    else:
        raise ValueError(f"unknown framework {framework!r}: expected one of {FRAMEWORKS}")
    for function in _tools():
        server.tool()(function)
    return server
