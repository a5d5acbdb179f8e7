// Side by side: the same probe through Yavio's TypeScript SDK (`withYavio`, built from the public
// teamyavio/yavio source; not on the registry) and through this package's instrument(), on the
// MCP TypeScript SDK's McpServer with its real client (in memory). Prints the table of
// docs/typescript.md: what each records per class of call.
//
//   node typescript/scripts/compare_yavio.mjs /path/to/yavio/packages/sdk/dist/server/index.js
//
// Run by hand where Yavio's source is present (CI has no copy). How to build it: docs/typescript.md.
// Run from the repository's root: the MCP SDK and zod come from its node_modules.
import { createServer } from "node:http";
import { pathToFileURL } from "node:url";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { z } from "zod";
import { instrument } from "../instrument.js";
import { MemorySink } from "../sinks.js";

const CALLS = [
  ["the tool returns isError: true", "refund", { order: "A-17" }],
  ["the tool throws", "charge", { order: "A-17" }],
  ["an unknown tool", "no_such_tool", {}],
  ["invalid arguments", "refund", { order: 17 }],
  ["a success", "status", {}],
];

function register(server) {
  server.registerTool("refund", { inputSchema: { order: z.string() } }, async ({ order }) => ({
    content: [{ type: "text", text: `order ${order} is past the refund window` }],
    isError: true,
  }));
  server.registerTool("charge", { inputSchema: { order: z.string() } }, async () => {
    throw new Error("card declined");
  });
  server.registerTool("status", {}, async () => ({ content: [{ type: "text", text: "ok" }] }));
}

async function drive(server) {
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  await server.connect(serverSide);
  const client = new Client({ name: "probe", version: "1.0.0" });
  await client.connect(clientSide);
  const seen = [];
  for (const [, name, args] of CALLS) {
    const result = await client.callTool({ name, arguments: args });
    seen.push(result.isError === true);
  }
  await client.close();
  return seen;
}

/** Yavio's tool_call events, caught by a local endpoint standing in for Yavio's ingest. */
async function throughYavio(entry) {
  const batches = [];
  const endpoint = createServer((req, res) => {
    const chunks = [];
    req.on("data", (chunk) => chunks.push(chunk));
    req.on("end", () => {
      batches.push(JSON.parse(Buffer.concat(chunks).toString("utf8")));
      res.writeHead(200, { "content-type": "application/json" });
      res.end("{}");
    });
  });
  await new Promise((resolve) => endpoint.listen(0, "127.0.0.1", resolve));
  const { withYavio } = await import(pathToFileURL(entry).href);
  const url = `http://127.0.0.1:${endpoint.address().port}/v1/events`;
  const server = withYavio(new McpServer({ name: "probe", version: "1.0.0" }), {
    apiKey: "probe-key",
    endpoint: url,
    serverOnly: true,
  });
  register(server);
  const seen = await drive(server);
  process.emit("SIGTERM"); // withYavio's own shutdown hook flushes its transport
  await new Promise((resolve) => setTimeout(resolve, 1500));
  endpoint.close();
  const events = batches.flatMap((batch) => batch.events ?? batch).filter((event) => event.event_type === "tool_call");
  return { seen, events };
}

async function throughInstrument() {
  const server = new McpServer({ name: "probe", version: "1.0.0" });
  register(server);
  const sink = new MemorySink();
  instrument(server, sink);
  const seen = await drive(server);
  return { seen, events: sink.events };
}

/** What an SDK recorded for each call: matched by tool name, in call order. */
function recorded(events) {
  const left = [...events];
  return CALLS.map(([, name]) => {
    const index = left.findIndex((event) => (event.event_name ?? event.tool_name) === name);
    if (index < 0) return "no event";
    const [event] = left.splice(index, 1);
    const category = event.error_category ? ` / ${event.error_category}` : "";
    return `${event.status}${category}`;
  });
}

const entry = process.argv[2];
if (!entry) {
  console.error("usage: node typescript/scripts/compare_yavio.mjs YAVIO/packages/sdk/dist/server/index.js");
  process.exit(2);
}
const ours = await throughInstrument();
const yavio = await throughYavio(entry);
const a = recorded(yavio.events);
const b = recorded(ours.events);
console.log("| call | the client sees | Yavio's SDK records | `instrument()` records |");
console.log("| --- | --- | --- | --- |");
CALLS.forEach(([label], i) => {
  const sees = ours.seen[i] ? "`isError: true`" : "a result";
  console.log(`| ${label} | ${sees} | ${a[i]} | ${b[i]} |`);
});
process.exit(0);
