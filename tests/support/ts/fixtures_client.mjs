// The MCP TypeScript SDK's client, for the tests of `toolcall-spec serve-fixtures`
// (tests/mcp_boundary/test_serve_fixtures_clients.py): connects to an MCP server, lists its
// tools, makes each call in order, and prints what it received as one JSON line:
// {"tools": [names], "results": [{"isError": bool, "content": [...]}]}.
// Usage: node fixtures_client.mjs CALLS COMMAND ARGS...   (launches a stdio server)
//        node fixtures_client.mjs CALLS http://127.0.0.1:PORT/mcp   (streamable HTTP)
// CALLS: '[{"tool": "t", "args": {...}}, ...]'
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

const [calls, target, ...args] = process.argv.slice(2);
const transport = /^https?:\/\//.test(target)
  ? new StreamableHTTPClientTransport(new URL(target))
  : new StdioClientTransport({ command: target, args, env: process.env, stderr: "inherit" });
const client = new Client({ name: "toolcall-spec-ts-test", version: "1.0.0" });
await client.connect(transport);
const listed = await client.listTools();
const results = [];
for (const { tool, args: toolArgs } of JSON.parse(calls)) {
  const result = await client.callTool({ name: tool, arguments: toolArgs });
  results.push({ isError: result.isError === true, content: result.content });
}
await client.close();
console.log(JSON.stringify({ tools: listed.tools.map((tool) => tool.name), results }));
