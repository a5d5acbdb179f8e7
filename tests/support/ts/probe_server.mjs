// The probe server of the Python tests (tests/support/mcp_servers.py, `demo_server`) written
// again on the MCP TypeScript SDK, instrumented with @toolcall-spec/schemas' instrument():
//
//   node probe_server.mjs KIND TRANSPORT EVENTS_FILE [SDK_FOLDER]
//
// The SDK is tests/support/ts/sdk.mjs's: the repository's 1.x, or the matrix entry installed in
// SDK_FOLDER (1.x or 2.x; 2.x over stdio only). EVENTS_FILE.sdk gets the SDK's major version.
// KIND is `mcp` (McpServer) or `lowlevel` (the low-level Server, the tools dispatched by hand);
// TRANSPORT is `stdio`, or `http` (streamable HTTP on a free loopback port, one server per
// session; prints `serving on URL` once listening). Every tool_call event is appended to
// EVENTS_FILE as one JSON line. Each tool answers what the Python tool's answer is on the wire
// (MCPServer's conversions included: an int becomes text plus {"result": n}), so the events of
// both instrumentations can be compared as they are.
import { randomUUID } from "node:crypto";
import { writeFileSync } from "node:fs";
import { createServer } from "node:http";
import { instrument } from "../../../typescript/instrument.js";
import { JsonlFileSink } from "../../../typescript/sinks.js";

const [kind, transportName, eventsFile, sdkFolder] = process.argv.slice(2);
if (sdkFolder) process.env.TOOLCALL_TS_SDK = sdkFolder; // before sdk.mjs reads it
const { sdk, z } = await import("./sdk.mjs");
// Which SDK line answered, for the matrix test to check it ran the one it asked for.
writeFileSync(`${eventsFile}.sdk`, `${sdk.line}\n`);
const sink = new JsonlFileSink(eventsFile);
const text = (value) => ({ type: "text", text: value });
const DICT = { content: [], isError: true };

/** The demo tools: name -> [input shape, output shape or null, handler]. */
const TOOLS = {
  add: [{ a: z.number().int(), b: z.number().int() }, { result: z.number() }, ({ a, b }) => ({
    content: [text(String(a + b))],
    structuredContent: { result: a + b },
    isError: false,
  })],
  lookup_offer: [{ reference: z.string() }, null, ({ reference }) => ({
    content: [text(`  Offer ${reference} expired for max@example.com `)],
    isError: true,
  })],
  silent_failure: [{}, null, () => ({ content: [], isError: true })],
  crash: [{}, null, () => {
    throw new Error("customer max@example.com not found");
  }],
  async_crash: [{}, null, async () => {
    await new Promise((resolve) => setImmediate(resolve));
    throw new Error("card 4111 1111 1111 1111 was declined");
  }],
  quota: [{}, null, () => {
    throw sdk.protocolError(-32001, "quota exceeded for max@example.com");
  }],
  dict_with_flag: [{}, null, () => ({
    content: [text(JSON.stringify(DICT, null, 2))],
    structuredContent: DICT,
    isError: false,
  })],
  // Its output schema wants a price; the text alone fails McpServer's output check.
  bad_output: [{}, { price: z.number() }, () => ({ content: [text("not an offer")] })],
};

function mcpServer() {
  const server = new sdk.McpServer({ name: "demo", version: "1.0.0" });
  for (const [name, [input, output, handler]] of Object.entries(TOOLS)) {
    const config = { inputSchema: sdk.inputSchema(input), ...(output ? { outputSchema: sdk.inputSchema(output) } : {}) };
    server.registerTool(name, config, (args) => handler(args ?? {}));
  }
  return server;
}

function lowlevelServer() {
  const server = new sdk.Server({ name: "demo", version: "1.0.0" }, { capabilities: { tools: {} } });
  server.setRequestHandler(sdk.LIST_TOOLS, () => ({
    tools: Object.keys(TOOLS).map((name) => ({ name, inputSchema: { type: "object" } })),
  }));
  server.setRequestHandler(sdk.CALL_TOOL, async (request) => {
    const { name, arguments: args = {} } = request.params;
    const tool = TOOLS[name];
    if (tool === undefined) return { content: [text(`Unknown tool: ${name}`)], isError: true };
    const parsed = z.object(tool[0]).safeParse(args);
    if (!parsed.success) return { content: [text(`Invalid arguments for ${name}`)], isError: true };
    const result = await tool[2](parsed.data);
    return { ...result, isError: result.isError ?? false }; // as the Python twin's model sends it
  });
  return server;
}

function instrumented() {
  const server = kind === "lowlevel" ? lowlevelServer() : mcpServer();
  instrument(server, sink);
  return server;
}

if (transportName === "stdio") {
  await instrumented().connect(new sdk.StdioServerTransport());
} else {
  const sessions = new Map();
  const http = createServer(async (req, res) => {
    const chunks = [];
    for await (const chunk of req) chunks.push(chunk);
    const body = chunks.length ? JSON.parse(Buffer.concat(chunks).toString("utf8")) : undefined;
    const id = req.headers["mcp-session-id"];
    let transport = typeof id === "string" ? sessions.get(id) : undefined;
    if (transport === undefined) {
      transport = new sdk.StreamableHTTPServerTransport({
        sessionIdGenerator: randomUUID,
        onsessioninitialized: (session) => sessions.set(session, transport),
      });
      await instrumented().connect(transport);
    }
    await transport.handleRequest(req, res, body);
  });
  http.listen(0, "127.0.0.1", () => {
    console.log(`serving on http://127.0.0.1:${http.address().port}/mcp`);
  });
}
