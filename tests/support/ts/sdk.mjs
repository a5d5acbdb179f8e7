// The MCP TypeScript SDK the probe runs on: the repository's own (@modelcontextprotocol/sdk 1.x,
// the root package.json's pin) or, when TOOLCALL_TS_SDK names a folder, the one installed there
// (a matrix entry of tests/typescript/test_typescript_instrument.py: 1.x as
// `@modelcontextprotocol/sdk`, 2.x as the split `@modelcontextprotocol/server` with its client and
// node HTTP packages). One shape for both: the probe does not care
// which line it runs on.
import { createRequire } from "node:module";
import { pathToFileURL } from "node:url";

const folder = process.env.TOOLCALL_TS_SDK;
const require = createRequire(folder ? `${folder}/package.json` : import.meta.url);
const load = (specifier) => import(pathToFileURL(require.resolve(specifier)).href);
const has = (specifier) => {
  try {
    require.resolve(specifier);
    return true;
  } catch {
    return false;
  }
};

export const { z } = await load("zod");

async function version1() {
  const [{ McpServer }, { Server }, { StdioServerTransport }, http, types, { Client }, { InMemoryTransport }] = await Promise.all([
    load("@modelcontextprotocol/sdk/server/mcp.js"),
    load("@modelcontextprotocol/sdk/server/index.js"),
    load("@modelcontextprotocol/sdk/server/stdio.js"),
    load("@modelcontextprotocol/sdk/server/streamableHttp.js"),
    load("@modelcontextprotocol/sdk/types.js"),
    load("@modelcontextprotocol/sdk/client/index.js"),
    load("@modelcontextprotocol/sdk/inMemory.js"),
  ]);
  return {
    line: 1,
    McpServer,
    Server,
    Client,
    InMemoryTransport,
    StdioServerTransport,
    StreamableHTTPServerTransport: http.StreamableHTTPServerTransport,
    CALL_TOOL: types.CallToolRequestSchema,
    LIST_TOOLS: types.ListToolsRequestSchema,
    protocolError: (code, message) => new types.McpError(code, message),
    // 1.x McpServer wants a zod shape, 2.x a Standard Schema object.
    inputSchema: (shape) => shape,
  };
}

async function version2() {
  const [server, { StdioServerTransport }, client, node] = await Promise.all([
    load("@modelcontextprotocol/server"),
    load("@modelcontextprotocol/server/stdio"),
    has("@modelcontextprotocol/client") ? load("@modelcontextprotocol/client") : {},
    has("@modelcontextprotocol/node") ? load("@modelcontextprotocol/node") : {},
  ]);
  return {
    line: 2,
    McpServer: server.McpServer,
    Server: server.Server,
    Client: client.Client,
    InMemoryTransport: server.InMemoryTransport,
    StdioServerTransport,
    // node's HTTP adapter is a package of its own in 2.x
    StreamableHTTPServerTransport: node.NodeStreamableHTTPServerTransport ?? null,
    CALL_TOOL: "tools/call",
    LIST_TOOLS: "tools/list",
    protocolError: (code, message) => new server.ProtocolError(code, message),
    inputSchema: (shape) => z.object(shape),
  };
}

export const sdk = has("@modelcontextprotocol/server") ? await version2() : await version1();
