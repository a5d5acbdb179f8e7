// The wiring rules of instrument() on the SDK line installed in TOOLCALL_TS_SDK (a matrix entry of
// test_typescript_instrument.py; run with `node --test`), through tests/support/ts/sdk.mjs and
// the SDK's own in-memory client: results unchanged, tools registered after connecting counted,
// a tool's callback replaced by update() counted, instrumenting twice refused.
// (instrument.test.mjs covers more rules on the repository's 1.x.)
import assert from "node:assert/strict";
import { test } from "node:test";
import { sdk, z } from "../support/ts/sdk.mjs";
import { instrument } from "../../typescript/instrument.js";
import { MemorySink } from "../../typescript/sinks.js";

async function connected(server) {
  const [clientSide, serverSide] = sdk.InMemoryTransport.createLinkedPair();
  const client = new sdk.Client({ name: "test", version: "1.0.0" });
  await Promise.all([server.connect(serverSide), client.connect(clientSide)]);
  return client;
}

const summary = (event) => [event.event_name, event.status, event.error_category ?? null, "latency_ms" in event];
const text = (value, isError) => ({ content: [{ type: "text", text: value }], ...(isError === undefined ? {} : { isError }) });

function demo() {
  const server = new sdk.McpServer({ name: "demo", version: "1.0.0" });
  server.registerTool("echo", { inputSchema: sdk.inputSchema({ value: z.string() }) }, ({ value }) => text(value));
  server.registerTool("fail", {}, () => text("nope for max@example.com", true));
  return server;
}

const call = (client, name, args) => client.callTool({ name, arguments: args }).then(
  (result) => result,
  (error) => ({ rejected: String(error?.message ?? error) }),
);

test("every answer reaches the client exactly as without the instrumentation", async () => {
  const calls = [["echo", { value: "a" }], ["fail", {}], ["echo", { value: 1 }], ["missing", {}]];
  const answers = [];
  for (const observed of [false, true]) {
    const server = demo();
    if (observed) instrument(server, new MemorySink());
    const client = await connected(server);
    answers.push(await Promise.all(calls.map(([name, args]) => call(client, name, args))));
  }
  assert.deepEqual(answers[1], answers[0]);
});

test("tools registered after connecting and callbacks replaced by update() are counted once each", async () => {
  const server = demo();
  const sink = new MemorySink();
  instrument(server, sink);
  const client = await connected(server);
  await call(client, "echo", { value: "a" });
  const late = server.registerTool("late", {}, () => {
    throw new Error("late for max@example.com");
  });
  await call(client, "late", {});
  late.update({ callback: () => text("fine") });
  await call(client, "late", {});
  await call(client, "missing", {});
  assert.deepEqual(sink.events.map(summary), [
    ["echo", "success", null, true],
    ["late", "error", "unknown", true],
    ["late", "success", null, true],
    ["missing", "error", "validation", false],
  ]);
  assert.equal(sink.events[1].error_message, "late for [EMAIL_REDACTED]");
});

test("instrumenting twice is refused, and the first instrumentation still counts once", async () => {
  for (const server of [demo(), new sdk.Server({ name: "demo", version: "1.0.0" }, { capabilities: { tools: {} } })]) {
    const sink = new MemorySink();
    instrument(server, sink);
    assert.throws(() => instrument(server, new MemorySink()), /already instrumented/);
    if (!(server instanceof sdk.McpServer)) continue;
    const client = await connected(server);
    await call(client, "fail", {});
    assert.deepEqual(sink.events.map(summary), [["fail", "error", "tool_error", true]]);
  }
});
