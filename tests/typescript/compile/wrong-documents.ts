// Documents the generated types must refuse: each `@ts-expect-error` below must be needed (tsc
// reports an unused one), so each line is a rule TypeScript itself enforces.
// tests/typescript/test_typescript_compile.py type-checks this file with `tsc --noEmit --strict`,
// then checks that without the directives each marked line fails.
import type {
  AgentEvalSuite,
  CallToolResult,
  IngestAnswer,
  IngestBatch,
  ToolCallEvent,
  ToolResponse,
} from "../../../generated/typescript/index.js";

// The one rule: isError is the JSON boolean, never a look-alike.
// @ts-expect-error isError: "true" is a string
export const stringIsError: ToolResponse = { tool: "billing:lookup", isError: "true" };
// @ts-expect-error isError: 1 is a number
export const numericIsError: CallToolResult = { content: [], isError: 1 };
// @ts-expect-error isError: null
export const nullIsError: CallToolResult = { content: [], isError: null };

// Required members.
// @ts-expect-error a fixture entry names its tool
export const entryWithoutTool: ToolResponse = { response: { ok: true } };
// @ts-expect-error a tools/call result has content
export const resultWithoutContent: CallToolResult = { isError: true };

// Closed objects and closed value sets.
export const eventBase = {
  event_id: "123e4567-e89b-12d3-a456-426614174000",
  trace_id: "trace-1",
  session_id: "session-1",
  timestamp: "2026-11-30T12:00:00Z",
  source: "server",
} as const;
// @ts-expect-error event_type is the constant "tool_call"
export const otherEventType: ToolCallEvent = { ...eventBase, event_type: "tool_result" };
// @ts-expect-error an error category the schema does not list
export const unknownCategory: ToolCallEvent = { ...eventBase, event_type: "tool_call", error_category: "oops" };
// @ts-expect-error a member the closed event does not have
export const extraMember: ToolCallEvent = { ...eventBase, event_type: "tool_call", isError: true };
// @ts-expect-error source is "server" or "widget"
export const otherSource: ToolCallEvent = { ...eventBase, event_type: "tool_call", source: "client" };
export const unknownBlock: CallToolResult = {
  // @ts-expect-error a content block type MCP does not define
  content: [{ type: "video", data: "AAAA", mimeType: "video/mp4" }],
};
// @ts-expect-error 201 is not an answer ingest gives
export const otherStatus: IngestAnswer = { status: 201, accepted: 1, rejected: 0, errors: [] };

// Non-empty arrays (minItems 1 becomes a tuple with a first element).
// @ts-expect-error an ingest batch has at least one event
export const emptyBatch: IngestBatch = { events: [] };
export const suiteWithoutModes: AgentEvalSuite = {
  suiteId: "core.openwop.evals.demo",
  version: "1.0.0",
  // @ts-expect-error a suite declares at least one mode
  modes: [],
  tasks: [{ taskId: "t1", input: {}, expected: { kind: "golden", match: { strategy: "exact", value: {} } } }],
};
export const unknownOnMiss: AgentEvalSuite = {
  suiteId: "core.openwop.evals.demo",
  version: "1.0.0",
  modes: ["golden"],
  tasks: [
    {
      taskId: "t1",
      input: {},
      expected: { kind: "golden", match: { strategy: "exact", value: {} } },
      // @ts-expect-error onMiss is fail, live or error
      fixtures: { onMiss: "retry", toolResponses: [] },
    },
  ],
};
