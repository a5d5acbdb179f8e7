// instrument() of @toolcall-spec/schemas against real McpServer and Server objects of the MCP
// TypeScript SDK and its real client, in memory (run by test_typescript_instrument_rules.py with
// `node --test`): the wiring rules the cross-language comparison does not reach.
import assert from "node:assert/strict";
import { test } from "node:test";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { CallToolRequestSchema } from "@modelcontextprotocol/sdk/types.js";
import { z } from "zod";
import { instrument } from "../../typescript/instrument.js";
import { MemorySink } from "../../typescript/sinks.js";

async function connected(server) {
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  const client = new Client({ name: "test", version: "1.0.0" });
  await Promise.all([server.connect(serverSide), client.connect(clientSide)]);
  return client;
}

const summary = (event) => [event.event_name, event.status, event.error_category ?? null, event.error_message ?? null, "latency_ms" in event];
const text = (value, isError) => ({ content: [{ type: "text", text: value }], ...(isError === undefined ? {} : { isError }) });

function demo() {
  const server = new McpServer({ name: "demo", version: "1.0.0" });
  server.registerTool("echo", { inputSchema: { value: z.string() } }, ({ value }) => text(value));
  server.registerTool("fail", {}, () => text("nope for max@example.com", true));
  return server;
}

test("every result reaches the client exactly as without the instrumentation", async () => {
  const calls = [["echo", { value: "a" }], ["fail", {}], ["echo", { value: 1 }], ["missing", {}]];
  const answers = [];
  for (const observed of [false, true]) {
    const server = demo();
    if (observed) instrument(server, new MemorySink());
    const client = await connected(server);
    answers.push(await Promise.all(calls.map(([name, args]) => client.callTool({ name, arguments: args }))));
  }
  assert.deepEqual(answers[1], answers[0]);
});

test("tools registered after instrument() are counted, once each", async () => {
  const server = new McpServer({ name: "late", version: "1.0.0" });
  const sink = new MemorySink();
  const analytics = instrument(server, sink); // no tool yet: McpServer has no tools/call handler
  server.registerTool("first", {}, () => text("1"));
  const client = await connected(server);
  server.registerTool("second", {}, () => {
    throw new Error("second failed for 4111 1111 1111 1111");
  });
  await client.callTool({ name: "first", arguments: {} });
  await client.callTool({ name: "second", arguments: {} });
  await client.callTool({ name: "first", arguments: {} });
  assert.deepEqual(sink.events.map(summary), [
    ["first", "success", null, null, true],
    ["second", "error", "unknown", "second failed for [CC_REDACTED]", true],
    ["first", "success", null, null, true],
  ]);
  assert.equal(analytics.eventsEmitted, 3);
});

test("a tool that calls another tool in process is one call", async () => {
  const server = new McpServer({ name: "nested", version: "1.0.0" });
  const sink = new MemorySink();
  instrument(server, sink);
  server.registerTool("inner", {}, () => text("inner"));
  server.registerTool("outer", {}, async (extra) => server._registeredTools.inner.handler({}, extra));
  const client = await connected(server);
  await client.callTool({ name: "inner", arguments: {} });
  await client.callTool({ name: "outer", arguments: {} });
  assert.deepEqual(sink.events.map((event) => event.event_name), ["inner", "outer"]);
});

test("instrumenting twice is refused, and the first instrumentation still counts once", async () => {
  const server = demo();
  const sink = new MemorySink();
  instrument(server, sink);
  assert.throws(() => instrument(server, sink), /already instrumented/);
  const client = await connected(server);
  await client.callTool({ name: "echo", arguments: { value: "x" } });
  assert.equal(sink.events.length, 1);
});

test("anything but an SDK server is refused with what is accepted", () => {
  assert.throws(() => instrument({}, () => {}), /expected an McpServer or a low-level Server/);
  assert.throws(() => instrument(demo(), 42), /sink must be a function/);
});

test("a sink that throws or rejects never breaks the call", async () => {
  for (const sink of [() => { throw new Error("sink down"); }, async () => { throw new Error("sink down"); }]) {
    const server = demo();
    const warnings = [];
    instrument(server, sink, { logger: { warn: (message) => warnings.push(message) } });
    const client = await connected(server);
    const answer = await client.callTool({ name: "echo", arguments: { value: "still here" } });
    assert.deepEqual(answer.content, [{ type: "text", text: "still here" }]);
    await new Promise((resolve) => setImmediate(resolve));
    assert.equal(warnings.length, 1);
  }
});

test("without output capture the category stays and the result's text is dropped", async () => {
  const server = demo();
  const sink = new MemorySink();
  instrument(server, sink, { captureOutput: false, captureInput: false });
  const client = await connected(server);
  await client.callTool({ name: "fail", arguments: {} });
  await client.callTool({ name: "missing", arguments: { secret: "x" } });
  assert.deepEqual(sink.events.map(summary), [
    ["fail", "error", "tool_error", null, true],
    ["missing", "error", "validation", null, false],
  ]);
  for (const event of sink.events) {
    assert.ok(!("output_content" in event) && !("input_values" in event) && !("input_keys" in event));
  }
});

test("a low-level handler: isError true, a throw, a result the SDK refuses", async () => {
  const server = new Server({ name: "low", version: "1.0.0" }, { capabilities: { tools: {} } });
  server.setRequestHandler(CallToolRequestSchema, async (request) => {
    const { name } = request.params;
    if (name === "flag") return text("quota exhausted", true);
    if (name === "string-flag") return { content: [], isError: "true" }; // the SDK refuses it
    if (name === "throw") throw new Error("backend for max@example.com is down");
    return text("fine");
  });
  const sink = new MemorySink();
  instrument(server, sink);
  const client = await connected(server);
  for (const name of ["ok", "flag", "throw", "string-flag"]) {
    await client.callTool({ name, arguments: {} }).catch(() => null);
  }
  assert.deepEqual(sink.events.map(summary), [
    ["ok", "success", null, null, true],
    ["flag", "error", "tool_error", "quota exhausted", true],
    ["throw", "error", "unknown", "backend for [EMAIL_REDACTED] is down", true],
    ["string-flag", "error", "server", "the handler returned an invalid result", true],
  ]);
});

test("messages are clamped to 500 characters after stripping, never leaving half an address", async () => {
  const server = new McpServer({ name: "long", version: "1.0.0" });
  server.registerTool("long", {}, () => text(`${"x ".repeat(245)}contact max@example.com ${"y".repeat(600)}`, true));
  const sink = new MemorySink();
  instrument(server, sink);
  const client = await connected(server);
  await client.callTool({ name: "long", arguments: {} });
  const message = sink.events[0].error_message;
  assert.ok(message.length <= 500);
  assert.ok(!message.includes("max@") && !message.includes("example.com"));
});
