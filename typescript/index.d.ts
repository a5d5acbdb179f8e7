// The API of @toolcall-spec/schemas; the document types are generated from the schemas
// (generated/index.d.ts, re-exported here).
import type { Documents } from "./generated/index.js";

export * from "./generated/index.js";

/** A document kind, e.g. `"tool-call-event"`. */
export type Kind = keyof Documents;

/** One problem of a document: where (`tasks[0].fixtures.toolResponses[0].isError`) and what. */
export interface Problem {
  path: string;
  message: string;
}

/** The deepest nesting of arrays and objects a valid document may have (the Python package's
 * limit). */
export declare const MAX_DEPTH: number;

/** Every document kind. */
export declare const KINDS: readonly Kind[];

/** Each kind's schema, self-contained (every `$ref` inlined). */
export declare const SCHEMAS: Readonly<Record<Kind, Record<string, unknown>>>;

/** Whether `document` is a valid document of `kind`; narrows it to the kind's type. */
export declare function isValid<K extends Kind>(document: unknown, kind: K): document is Documents[K];

/** Every problem of `document` as a document of `kind`; empty when it is valid. Throws a
 * TypeError for an unknown kind. */
export declare function validate(document: unknown, kind: Kind): Problem[];

/** `a.b[0].c` from member names and array indices; the empty path is `(root)`. */
export declare function formatPath(parts: readonly (string | number)[]): string;

/** The one rule: a tool result is an error exactly when its `isError` member is the JSON boolean
 * `true` (not `"true"`, not `1`, not absent). */
export declare function isToolError(result: unknown): result is { isError: true };

// --- analytics: instrument(), sinks, PII -----------------------------------------------------------

/** A `tool_call` event as instrument() makes it (schema-valid: `ToolCallEvent`). */
export type ToolCallEventRecord = Documents["tool-call-event"];

/** Where events go: a function of one event, or an object with `write(event)`. A sink that
 * throws or rejects is logged, never allowed to break the call it observes. */
export type Sink =
  | ((event: ToolCallEventRecord) => void | Promise<void>)
  | { write(event: ToolCallEventRecord): void | Promise<void> };

export interface InstrumentOptions {
  /** Capture `input_keys`, `input_types`, `input_values` (default true). */
  captureInput?: boolean;
  /** Capture `output_content`; when off, an error message taken from the result is dropped too,
   * `status` and `error_category` stay (default true). */
  captureOutput?: boolean;
  /** The events' session: a fixed id, or a function of the SDK's request `extra` (its
   * `sessionId` is the transport session). Default: over streamable HTTP, an id derived from the
   * `Mcp-Session-Id` (deriveSessionId); otherwise one new id per server. */
  sessionId?: string | ((extra: { sessionId?: string } | undefined) => string);
  /** The clock of `timestamp` (default: now). */
  clock?: () => Date;
  /** The source of `event_id` and `trace_id` (default: crypto.randomUUID). */
  newId?: () => string;
  /** Where warnings go (a failing sink, an event that could not be built); default console. */
  logger?: { warn(message: string): void };
}

/** What instrument() installed on a server. */
export declare class ToolCallAnalytics {
  /** Events given to the sink so far. */
  readonly eventsEmitted: number;
}

/** Make every `tools/call` of an MCP TypeScript SDK server (`McpServer` or the low-level
 * `Server`) yield exactly one `tool_call` event to `sink`, by the Python package's rules:
 * `isError: true` -> error/tool_error; a thrown error -> error/unknown with its own message; an
 * unknown tool or invalid arguments -> error/validation without latency; an output that fails
 * its schema -> error/server; otherwise success. Tools registered later are counted; a second
 * instrument() of the same server throws. Anything but an SDK server is a TypeError. */
export declare function instrument(server: object, sink: Sink, options?: InstrumentOptions): ToolCallAnalytics;

/** The derived fields of one call: `category` and `message` only for an error. */
export interface Classification {
  status: "success" | "error";
  category?: "auth" | "validation" | "timeout" | "rate_limit" | "server" | "unknown" | "tool_error";
  message?: string | null;
}
export declare function classifyResult(result: unknown, options?: { captureOutput?: boolean }): Classification;
export declare function classifyException(error: unknown): Classification;
/** Trimmed, cut to 4,000 characters without leaving half a value, PII-stripped, clamped to 500;
 * null when nothing is left. */
export declare function errorMessage(text: string | null | undefined): string | null;
/** `ses_` and 21 characters of the key's SHA-256 in base64url. */
export declare function deriveSessionId(key: string): string;
export declare const SDK_VERSION: string;
export declare const MAX_ERROR_MESSAGE_LENGTH: number;

/** Keeps every event, in order. */
export declare class MemorySink {
  readonly events: ToolCallEventRecord[];
  write(event: ToolCallEventRecord): void;
}

/** Appends one JSON line per event, written before write() returns. */
export declare class JsonlFileSink {
  constructor(path: string);
  readonly path: string;
  write(event: ToolCallEventRecord): void;
  close(): void;
}

/** A sink that calls `fn` with a copy of each event. */
export declare function callbackSink(fn: (event: ToolCallEventRecord) => unknown): (event: ToolCallEventRecord) => void;

export interface IngestHttpSinkOptions {
  /** The project's key, sent as `Authorization: Bearer <key>`. */
  key?: string;
  /** Events per POST (serve-ingest takes 1,000 at most; the default). */
  batchSize?: number;
  /** Events held at most; past it an event is dropped and counted (default 10,000). */
  maxBuffered?: number;
  /** The first retry's backoff, doubling up to maxBackoffMs (defaults 100 and 30,000). */
  minBackoffMs?: number;
  maxBackoffMs?: number;
  /** One POST's limit (default 10,000). */
  requestTimeoutMs?: number;
  /** How long close() waits for the endpoint (default 10,000). */
  closeTimeoutMs?: number;
  /** Close the sink on node's `beforeExit` (default true). */
  flushOnExit?: boolean;
  logger?: { warn(message: string): void };
  fetch?: typeof fetch;
}

/** Posts events to `toolcall-spec serve-ingest` (POST /v1/events) in batches from a background
 * loop: never blocks a call, retries network errors, 408/429/5xx and honours Retry-After, keeps
 * a bounded buffer (drops counted), and sends what is left on close(). */
export declare class IngestHttpSink {
  constructor(url: string, options?: IngestHttpSinkOptions);
  write(event: ToolCallEventRecord): void;
  /** Resolves true when everything buffered was answered within `timeoutMs`. */
  flush(timeoutMs?: number): Promise<boolean>;
  /** Flush, then refuse further events; what could not be sent in time is counted in `lost`. */
  close(): Promise<boolean>;
  readonly sent: number;
  readonly accepted: number;
  readonly rejected: number;
  readonly retries: number;
  readonly dropped: number;
  readonly lost: number;
}

/** Every e-mail, IBAN, IP address, phone, card number, SSN/ITIN and secret replaced by its token
 * (`[EMAIL_REDACTED]`, ...): the Python package's strip_pii, byte for byte. Linear time. */
export declare function stripPii(text: string): string;
/** A copy of a JSON value with stripPii on every string (keys too) and on long integers. */
export declare function stripPiiDeep(value: unknown): unknown;
/** `text` cut to at most `limit` characters without leaving part of a value behind. */
export declare function safeCut(text: string, limit: number): string;
