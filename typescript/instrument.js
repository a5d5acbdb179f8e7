// instrument(server, sink): one analytics `tool_call` event per `tools/call` of a server built on
// the MCP TypeScript SDK (`McpServer`, or the low-level `Server`), by the rules of the Python
// package's toolcall_spec.mcp.instrument, event for event (tests/typescript/
// test_typescript_instrument.py compares the two on the same probe, from real clients):
//
//   what happened                          status   category    error_message
//   the tool returned a result             success  -           -
//   the tool returned `isError: true`      error    tool_error  the result's first text
//   the tool threw                         error    unknown     the error's own message
//   refused before the tool ran            error    validation  the SDK's text
//   (unknown tool, invalid arguments)
//   the tool returned, its output failed   error    server      the SDK's text
//
// `latency_ms` is absent when the tool never ran. Messages are PII-stripped, then clamped.
//
// Where it observes, and why two places: the SDK's `tools/call` request handler (looked up in
// the low-level server's handler table at each request, so a handler installed later, e.g. by the
// first `registerTool`, is observed too) sees every call and the result the client receives;
// McpServer turns everything into an `isError: true` result there (a thrown error, an unknown
// tool, invalid arguments), so each registered tool's handler is wrapped as well (on its first
// call): the only place that sees whether the tool ran, how long, and the error it threw with its
// own message. The record of the call (an AsyncLocalStorage) carries what the inner place saw to
// the outer one, which emits exactly one event. The SDK internals used (`_requestHandlers`,
// `_registeredTools`, a tool's `handler` on 1.x and `executor` on 2.x) are private, present on both
// lines: tested with @modelcontextprotocol/sdk 1.32.2 (the newest 1.x, the pin in
// package-lock.json) and @modelcontextprotocol/server 2.4.0 (the newest 2.x), the version matrix
// of tests/typescript/test_typescript_instrument.py (tests/support/ts/matrix/). Neither line has a
// public hook that sees both the request and the tool's own run.
import { AsyncLocalStorage } from "node:async_hooks";
import { createHash, randomUUID } from "node:crypto";
import { readFileSync } from "node:fs";
import { cutCodePoints, pythonStrip, safeCut, stripPii, stripPiiDeep } from "./pii.js";

const TOOLS_CALL = "tools/call";
export const MAX_ERROR_MESSAGE_LENGTH = 500;
export const MESSAGE_SAFETY_CEILING = 4000;
export const MAX_CAPTURED_BYTES = 16384;
const MAX_ID_LENGTH = 128;
const MAX_NAME_LENGTH = 256;
const OBSERVED = Symbol.for("toolcall-spec.observed");
const PACKAGE = JSON.parse(readFileSync(new URL("./package.json", import.meta.url), "utf8"));
/** The `sdk_version` of every event: this package's version (the Python package's
 * `__version__` is the same number: both are released together). */
export const SDK_VERSION = PACKAGE.version;

const current = new AsyncLocalStorage();

// --- classification (toolcall_spec.analytics.classify) --------------------------------------------

/** `text` trimmed, cut to the safety ceiling, PII-stripped and clamped; null when nothing is left. */
export function errorMessage(text) {
  if (text === null || text === undefined) return null;
  const clamped = pythonStrip(cutCodePoints(stripPii(safeCut(pythonStrip(text), MESSAGE_SAFETY_CEILING)), MAX_ERROR_MESSAGE_LENGTH));
  return clamped || null;
}

/** The `text` of the first content item of type `text`, or null. */
export function firstText(result) {
  const content = result?.content;
  if (!Array.isArray(content)) return null;
  for (const item of content) {
    if (item !== null && typeof item === "object" && item.type === "text") {
      return typeof item.text === "string" ? item.text : null;
    }
  }
  return null;
}

const isToolError = (result) =>
  typeof result === "object" && result !== null && !Array.isArray(result) && result.isError === true;

const SUCCESS = Object.freeze({ status: "success" });
const failure = (category, message) => ({ status: "error", category, message });

/** A returned result by the one rule: an error exactly when `isError` is the boolean `true`. */
export function classifyResult(result, { captureOutput = true } = {}) {
  if (!isToolError(result)) return SUCCESS;
  return failure("tool_error", captureOutput ? errorMessage(firstText(result)) : null);
}

/** An error's own message: an McpError's without the `MCP error <code>: ` the SDK puts before
 * it (the Python SDK's MCPError has none); the error's name when it has no message. */
export function exceptionText(error) {
  let text;
  try {
    text = error instanceof Error ? String(error.message) : String(error);
  } catch {
    text = "";
  }
  const code = error?.code;
  if (typeof code === "number" && text.startsWith(`MCP error ${code}: `)) text = text.slice(`MCP error ${code}: `.length);
  text = pythonStrip(text);
  return text || (error?.name ?? error?.constructor?.name ?? typeof error);
}

export const classifyException = (error) => failure("unknown", errorMessage(typeof error === "string" ? error : exceptionText(error)));
const classifyPreHandler = (text, capture) => failure("validation", capture ? errorMessage(text) : null);
const classifyServerFailure = (text, capture) => failure("server", capture ? errorMessage(text) : null);

// --- events (toolcall_spec.analytics.events) ------------------------------------------------------

/** The JSON Schema type name of a parsed JSON value (`integer` for any number without a fraction). */
function jsonType(value) {
  if (value === null) return "null";
  if (typeof value === "boolean") return "boolean";
  if (typeof value === "number") return Number.isInteger(value) ? "integer" : "number";
  if (typeof value === "string") return "string";
  if (Array.isArray(value)) return "array";
  if (typeof value === "object") return "object";
  return typeof value;
}

function jsonSize(value) {
  try {
    const text = JSON.stringify(value);
    return text === undefined ? null : Buffer.byteLength(text, "utf8");
  } catch {
    return null;
  }
}

function* stringsOf(value) {
  if (typeof value === "string") yield value;
  else if (Array.isArray(value)) for (const item of value) yield* stringsOf(item);
  else if (value !== null && typeof value === "object") for (const item of Object.values(value)) yield* stringsOf(item);
}

function cutStrings(value, budget) {
  if (typeof value === "string") return [...value].length > budget ? safeCut(value, budget) : value;
  if (Array.isArray(value)) return value.map((item) => cutStrings(item, budget));
  if (value !== null && typeof value === "object") {
    return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, cutStrings(item, budget)]));
  }
  return value;
}

/** `value` as an event carries it: cut to MAX_CAPTURED_BYTES, then PII-stripped. */
export function captured(value) {
  const size = jsonSize(value);
  if (size === null) return { _truncated: true };
  if (size > MAX_CAPTURED_BYTES) {
    const strings = [...stringsOf(value)];
    const textBytes = strings.reduce((total, text) => total + Buffer.byteLength(text, "utf8"), 0);
    const room = Math.floor(MAX_CAPTURED_BYTES / 2) - (size - textBytes);
    const budget = Math.max(Math.floor(room / Math.max(strings.length, 1)), 0);
    value = { ...cutStrings(value, budget), _truncated: true };
  }
  const stripped = stripPiiDeep(value);
  const final = jsonSize(stripped);
  return final !== null && final <= MAX_CAPTURED_BYTES ? stripped : { _truncated: true };
}

/** RFC 3339 in UTC with milliseconds and `Z`, as the Python package writes it. */
const formatTimestamp = (moment) => moment.toISOString();

/** A `session_id` from a transport session key: `ses_` and 21 characters of the key's SHA-256 in
 * base64url (Yavio's derivation, and the Python package's `derive_session_id`). */
export function deriveSessionId(key) {
  return `ses_${createHash("sha256").update(key, "utf8").digest("base64url").slice(0, 21)}`;
}

/** Python's `round(x, 3)` for a latency (round half to even on the decimal value is not needed:
 * a latency is a measurement, not compared byte for byte). */
const roundLatency = (ms) => Math.round(Math.max(ms, 0) * 1000) / 1000;

class EventFactory {
  constructor({ sessionId, captureInput, captureOutput, clock, newId }) {
    Object.assign(this, { sessionId, captureInput, captureOutput, clock, newId });
  }

  toolCall(toolName, classification, { latencyMs, argumentsValue, output, sessionId }) {
    const event = {
      event_id: this.newId(),
      event_type: "tool_call",
      trace_id: cutCodePoints(this.newId(), MAX_ID_LENGTH),
      session_id: cutCodePoints(sessionId ?? this.sessionId, MAX_ID_LENGTH),
      timestamp: formatTimestamp(this.clock()),
      source: "server",
      event_name: cutCodePoints(toolName, MAX_NAME_LENGTH),
      sdk_version: SDK_VERSION,
    };
    if (latencyMs !== null && latencyMs !== undefined) event.latency_ms = roundLatency(latencyMs);
    event.status = classification.status;
    if (classification.category) event.error_category = classification.category;
    if (classification.message !== null && classification.message !== undefined) event.error_message = classification.message;
    event.is_retry = 0;
    if (this.captureInput && isPlainObject(argumentsValue)) {
      const keys = stripPiiDeep(Object.keys(argumentsValue));
      const values = Object.values(argumentsValue);
      event.input_keys = Object.fromEntries(keys.map((key) => [key, true]));
      event.input_types = Object.fromEntries(keys.map((key, index) => [key, jsonType(values[index])]));
      event.input_values = captured(argumentsValue);
    }
    if (this.captureOutput && output !== null && output !== undefined) event.output_content = captured(output);
    return event;
  }
}

const isPlainObject = (value) => value !== null && typeof value === "object" && !Array.isArray(value);

// --- delivery -------------------------------------------------------------------------------------

/** Give `event` to `sink`; false (and a warning) when the sink threw or rejected. */
function deliver(sink, event, logger) {
  try {
    const answer = typeof sink === "function" ? sink(event) : sink.write(event);
    if (answer && typeof answer.then === "function") {
      answer.then(undefined, (error) => logger.warn(`toolcall-spec: analytics sink failed; the event is lost: ${error}`));
    }
    return true;
  } catch (error) {
    logger.warn(`toolcall-spec: analytics sink failed; the event is lost: ${error}`);
    return false;
  }
}

// --- the adapter ----------------------------------------------------------------------------------

class ToolCall {
  constructor(tool) {
    this.tool = tool;
    this.ran = false;
    this.started = 0;
    this.latencyMs = null;
    this.raised = undefined;
    this.threw = false;
    this.returned = undefined;
  }

  start() {
    this.ran = true;
    this.started = performance.now();
  }

  stop({ raised, threw = false, returned } = {}) {
    this.latencyMs = performance.now() - this.started;
    this.raised = raised;
    this.threw = threw;
    this.returned = returned;
  }
}

/** What `instrument` returns: `eventsEmitted` counts the events given to the sink. */
export class ToolCallAnalytics {
  constructor(server, sink, factory, sessionOf, logger) {
    this.sink = sink;
    this.factory = factory;
    this.sessionOf = sessionOf;
    this.logger = logger;
    this.eventsEmitted = 0;
    this.mcpServer = isMcpServer(server) ? server : null;
    this.lowlevel = this.mcpServer ? server.server : server;
  }

  install() {
    const handlers = this.lowlevel._requestHandlers;
    if (handlers[OBSERVED]) throw new Error("this server is already instrumented");
    const lookup = handlers.get.bind(handlers);
    const observedOf = new WeakMap();
    // The handler table is read at every request: each tools/call handler, whenever installed,
    // is answered through its observed twin.
    handlers.get = (method) => {
      const handler = lookup(method);
      if (method !== TOOLS_CALL || typeof handler !== "function") return handler;
      if (!observedOf.has(handler)) observedOf.set(handler, this.observe(handler));
      return observedOf.get(handler);
    };
    handlers[OBSERVED] = true;
  }

  observe(handler) {
    return async (request, extra) => {
      const name = String(request?.params?.name ?? "");
      const call = new ToolCall(name);
      const lowlevel = this.mcpServer === null;
      if (lowlevel) call.start();
      else this.observeTool(name);
      let returned;
      try {
        returned = await current.run(call, () => handler(request, extra));
      } catch (error) {
        if (lowlevel && isRequestRefusal(error)) call.ran = false; // refused before the handler
        else if (lowlevel) call.stop({ raised: error, threw: !isResultRefusal(error) });
        this.emit(call, request, extra, { raised: error, threw: true });
        throw error;
      }
      if (lowlevel) call.stop({ returned });
      this.emit(call, request, extra, { returned });
      return returned;
    };
  }

  /** Wrap the function that runs the tool on its first call (again after `update()` replaced
   * it); an unknown tool has nothing to wrap. 1.x calls the tool's `handler`; 2.x its
   * `executor` (the input parsing and the handler, made anew by each `update`). */
  observeTool(name) {
    const tool = this.mcpServer._registeredTools?.[name];
    const member = typeof tool?.executor === "function" ? "executor" : "handler";
    if (!tool || typeof tool[member] !== "function" || tool[member][OBSERVED]) return;
    tool[member] = observedFunction(name, tool[member]);
  }

  emit(call, request, extra, { returned, raised, threw = false }) {
    try {
      const capture = this.factory.captureOutput;
      const wire = threw ? null : returned;
      const classification = this.classify(call, wire, threw ? raised : undefined, threw, capture);
      const output = !call.threw && wire !== null && wire !== undefined ? wire : null;
      const event = this.factory.toolCall(call.tool, classification, {
        latencyMs: call.latencyMs,
        argumentsValue: request?.params?.arguments,
        output,
        sessionId: this.sessionOf(extra),
      });
      if (deliver(this.sink, event, this.logger)) this.eventsEmitted += 1;
    } catch (error) {
      this.logger.warn(`toolcall-spec: could not build the tool_call event for ${JSON.stringify(call.tool)}: ${error}`);
    }
  }

  classify(call, wire, raised, threw, capture) {
    if (call.threw) return classifyException(call.raised);
    if (threw) {
      // Not from the tool: the SDK refused the call (before the tool ran) or its result.
      if (isResultRefusal(raised)) return classifyServerFailure(INVALID_RESULT, capture);
      const text = exceptionText(raised);
      return call.ran ? classifyServerFailure(text, capture) : classifyPreHandler(text, capture);
    }
    if (!call.ran) return isToolError(wire) ? classifyPreHandler(firstText(wire), capture) : SUCCESS;
    if (this.mcpServer === null || !isToolError(wire) || isToolError(call.returned)) {
      return classifyResult(wire, { captureOutput: capture });
    }
    // McpServer made this error result itself: the tool's output failed its output schema.
    return classifyServerFailure(firstText(wire), capture);
  }
}

// The low-level Server checks the request and the handler's result around the handler itself
// (server/index.js, setRequestHandler for tools/call): what it throws is the SDK's refusal, not
// the handler's error. Told apart by the SDK's own texts, the one thing it leaves to read.
/** The message of a result the SDK refuses to send, as the Python package words it. */
const INVALID_RESULT = "the handler returned an invalid result";
const isRequestRefusal = (error) => typeof error?.message === "string" && error.message.includes("Invalid tools/call request:");
const isResultRefusal = (error) => typeof error?.message === "string" && error.message.includes("Invalid tools/call result:");

/** A tool handler reporting its run to the current call's record, when the record is for this
 * tool and not yet claimed (a tool that calls another tool only reports the outer call). */
function observedFunction(name, handler) {
  const observed = async function (...args) {
    const call = current.getStore();
    if (call === undefined || call.ran || call.tool !== name) return handler.apply(this, args);
    call.start();
    let value;
    try {
      value = await handler.apply(this, args);
    } catch (error) {
      call.stop({ raised: error, threw: true });
      throw error;
    }
    call.stop({ returned: value });
    return value;
  };
  observed[OBSERVED] = true;
  return observed;
}

function isMcpServer(server) {
  return server !== null && typeof server === "object" && typeof server.registerTool === "function" && isLowlevelServer(server.server);
}

function isLowlevelServer(server) {
  return server !== null && typeof server === "object" && server._requestHandlers instanceof Map && typeof server.setRequestHandler === "function";
}

const ACCEPTED = "an McpServer or a low-level Server of @modelcontextprotocol/sdk 1.x or @modelcontextprotocol/server 2.x";

/** Make every tool call of `server` yield exactly one `tool_call` event to `sink`. See
 * index.d.ts for the options. */
export function instrument(server, sink, options = {}) {
  if (!isMcpServer(server) && !isLowlevelServer(server)) {
    throw new TypeError(`cannot instrument ${server?.constructor?.name ?? typeof server}: expected ${ACCEPTED}`);
  }
  if (typeof sink !== "function" && typeof sink?.write !== "function") {
    throw new TypeError("the sink must be a function of one event, or an object with write(event)");
  }
  const newId = options.newId ?? randomUUID;
  const fixed = typeof options.sessionId === "string" ? options.sessionId : null;
  const factory = new EventFactory({
    sessionId: fixed ?? newId(),
    captureInput: options.captureInput ?? true,
    captureOutput: options.captureOutput ?? true,
    clock: options.clock ?? (() => new Date()),
    newId,
  });
  let sessionOf;
  if (typeof options.sessionId === "function") sessionOf = options.sessionId;
  else if (fixed !== null) sessionOf = () => fixed;
  else sessionOf = (extra) => (typeof extra?.sessionId === "string" && extra.sessionId ? deriveSessionId(extra.sessionId) : factory.sessionId);
  const analytics = new ToolCallAnalytics(server, sink, factory, sessionOf, options.logger ?? console);
  analytics.install();
  return analytics;
}
