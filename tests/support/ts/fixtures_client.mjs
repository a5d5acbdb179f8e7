// The MCP TypeScript SDK's client over stdio, for the tests: launches the server command given
// after the calls, lists its tools, makes each call in order, and prints what it received as one
// JSON line: {"tools": [names], "results": [{"isError": bool, "content": [...]}]}.
// Usage: node fixtures_client.mjs '[{"tool": "t", "args": {...}}, ...]' COMMAND ARGS...
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";

const [calls, command, ...args] = process.argv.slice(2);
const transport = new StdioClientTransport({ command, args, env: process.env, stderr: "inherit" });
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
