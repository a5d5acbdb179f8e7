// The MCP TypeScript SDK client in the tests of `toolcall-spec record`
// (tests/mcp_boundary/test_record_node.py). argv[2]: a JSON object
// {"command": [...] or "url": "http://...", "calls": [[tool, args], ...]}; it launches the command
// as its stdio server (or connects over streamable HTTP), makes each call, and prints one JSON line
// per call: the result, or {"jsonrpcError": code}. The tool names come first.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

const { command, url, calls } = JSON.parse(process.argv[2]);
const transport = url
  ? new StreamableHTTPClientTransport(new URL(url))
  : new StdioClientTransport({
      command: command[0],
      args: command.slice(1),
      env: process.env,
      stderr: "inherit",
    });
const client = new Client({ name: "ts-client", version: "1.0.0" });
await client.connect(transport);
const tools = await client.listTools();
console.log(JSON.stringify(tools.tools.map((t) => t.name).sort()));
for (const [name, args] of calls) {
  try {
    console.log(JSON.stringify(await client.callTool({ name, arguments: args })));
  } catch (error) {
    console.log(JSON.stringify({ jsonrpcError: error.code ?? null }));
  }
}
await client.close();
