// A TypeScript-SDK MCP server over stdio, behind `toolcall-spec record` in the tests
// (tests/mcp_boundary/test_record_node.py): the same tools as tests/support/record_servers.py.
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { z } from "zod";

const server = new McpServer({ name: "record-demo-ts", version: "1.0.0" });
const seen = new Set();
const text = (value, isError = false) => ({ content: [{ type: "text", text: value }], isError });

server.registerTool("add", { inputSchema: { a: z.number(), b: z.number() } }, ({ a, b }) =>
  text(String(a + b)),
);
server.registerTool("flaky", { inputSchema: { key: z.string() } }, ({ key }) => {
  const first = !seen.has(key);
  seen.add(key);
  return text(first ? `${key}: try again` : `${key}: ok`, first);
});
server.registerTool("lookup", { inputSchema: { reference: z.string() } }, ({ reference }) =>
  text(`offer ${reference} expired for max@example.com`, true),
);
server.registerTool("die", {}, () => process.exit(3));

await server.connect(new StdioServerTransport());
