// Where events go: a sink is a function of one event (or an object with `write(event)`).
// MemorySink keeps them, JsonlFileSink appends one line per event, callbackSink adapts a function,
// IngestHttpSink posts batches to `toolcall-spec serve-ingest` (POST /v1/events). The same sinks
// as the Python package's toolcall_spec.analytics.sinks, the HTTP one with the same behaviour.
import { closeSync, openSync, writeSync } from "node:fs";

/** Keeps every event in `events`, in arrival order. */
export class MemorySink {
  constructor() {
    this.events = [];
  }

  write(event) {
    this.events.push(structuredClone(event));
  }
}

/** Appends each event as one JSON line to a file, written before `write` returns (a synchronous
 * write: a process that dies later loses nothing written). */
export class JsonlFileSink {
  constructor(path) {
    this.path = String(path);
    this.fd = openSync(this.path, "a");
  }

  write(event) {
    if (this.fd === null) throw new Error(`${this.path}: the sink is closed`);
    const line = Buffer.from(`${JSON.stringify(event)}\n`, "utf8");
    for (let done = 0; done < line.length; ) done += writeSync(this.fd, line, done);
  }

  close() {
    if (this.fd !== null) closeSync(this.fd);
    this.fd = null;
  }
}

/** A sink that calls `fn` with a copy of each event (its return value is ignored). */
export function callbackSink(fn) {
  return (event) => {
    fn(structuredClone(event));
  };
}

/** Resolves when `promise` settles or after `ms`, whichever is first; the timer never outlives it. */
async function within(promise, ms) {
  let timer;
  const timeout = new Promise((resolve) => {
    timer = setTimeout(resolve, ms);
  });
  try {
    await Promise.race([promise, timeout]);
  } finally {
    clearTimeout(timer);
  }
}
const RETRYABLE = new Set([408, 429, 500, 502, 503, 504]);

/** Seconds of a `Retry-After` header (a number of seconds or an HTTP date), or null. */
export function retryAfterMs(value, now = Date.now()) {
  if (value === null || value === undefined || value === "") return null;
  const seconds = Number(value);
  if (Number.isFinite(seconds) && seconds >= 0) return seconds * 1000;
  const date = Date.parse(value);
  return Number.isNaN(date) ? null : Math.max(date - now, 0);
}

/** Posts events to an ingest endpoint in batches, from a background loop, so a tool call never
 * waits on the network:
 * - `write` only appends to a buffer of at most `maxBuffered` events; past that, the event is
 *   dropped and counted in `dropped` (a tool call is never blocked, memory stays bounded);
 * - a batch is at most `batchSize` events (serve-ingest takes 1000 at most);
 * - a batch the endpoint could not take (a network error, 408, 429, 5xx: 503 with `Retry-After`
 *   when its log is full) is sent again, after `Retry-After` or an exponential backoff with
 *   jitter (`minBackoffMs` doubling to `maxBackoffMs`), until it is answered: nothing is lost while
 *   the endpoint is away. A retried batch holds the same events with the same `event_id`s, and
 *   the store keeps one row per id: a batch sent twice (its answer lost) is stored once;
 * - a batch refused for good (400, 401, 413, ...) is counted in `lost`, with the reason logged;
 * - `close()` (or `flush()`) sends what is buffered and resolves when it is answered, or after
 *   `closeTimeoutMs`; what is still unsent then is counted in `lost`. With `flushOnExit`
 *   (default), node's `beforeExit` closes the sink, so a script that ends normally flushes.
 * Counters: `sent` (events the endpoint answered for), `accepted` and `rejected` (its per-event
 * verdicts), `retries`, `dropped`, `lost`. */
export class IngestHttpSink {
  constructor(url, options = {}) {
    this.url = url;
    this.key = options.key ?? null;
    this.batchSize = options.batchSize ?? 1000;
    this.maxBuffered = options.maxBuffered ?? 10000;
    this.minBackoffMs = options.minBackoffMs ?? 100;
    this.maxBackoffMs = options.maxBackoffMs ?? 30000;
    this.requestTimeoutMs = options.requestTimeoutMs ?? 10000;
    this.closeTimeoutMs = options.closeTimeoutMs ?? 10000;
    this.logger = options.logger ?? console;
    this.fetch = options.fetch ?? globalThis.fetch;
    Object.assign(this, { sent: 0, accepted: 0, rejected: 0, retries: 0, dropped: 0, lost: 0 });
    this.buffer = [];
    this.running = null;
    this.closing = false;
    this.wake = null;
    if (options.flushOnExit ?? true) {
      this.onExit = () => {
        this.close();
      };
      process.once("beforeExit", this.onExit);
    }
  }

  /** Queue one event; never waits, never throws for a full buffer (the event is counted). */
  write(event) {
    if (this.closing || this.buffer.length >= this.maxBuffered) {
      this.dropped += 1;
      return;
    }
    this.buffer.push(event);
    if (this.running === null) this.running = this.drain().finally(() => (this.running = null));
    else if (this.wake !== null) this.wake();
  }

  /** Send everything buffered now; resolves when the buffer is empty (or `timeoutMs` passed). */
  async flush(timeoutMs = this.closeTimeoutMs) {
    const deadline = Date.now() + timeoutMs;
    while ((this.buffer.length > 0 || this.running !== null) && Date.now() < deadline) {
      if (this.running === null) this.running = this.drain().finally(() => (this.running = null));
      if (this.wake !== null) this.wake();
      await within(this.running, Math.max(deadline - Date.now(), 0));
    }
    return this.buffer.length === 0 && this.running === null;
  }

  /** Flush, then refuse further events; what could not be sent in time is counted in `lost`. */
  async close() {
    if (this.onExit) process.removeListener("beforeExit", this.onExit);
    const done = await this.flush();
    this.closing = true;
    if (!done) {
      this.lost += this.buffer.length; // the batch in flight is still at its head
      this.buffer.length = 0;
    }
    this.stopped = true;
    if (this.wake !== null) this.wake();
    return done;
  }

  async drain() {
    let backoff = this.minBackoffMs;
    while (this.buffer.length > 0 && !this.stopped) {
      const batch = this.buffer.slice(0, this.batchSize);
      const outcome = await this.post(batch);
      if (outcome.done) {
        this.buffer.splice(0, batch.length);
        backoff = this.minBackoffMs;
        continue;
      }
      this.retries += 1;
      const wait = outcome.retryAfterMs ?? backoff * (0.5 + Math.random() / 2);
      backoff = Math.min(backoff * 2, this.maxBackoffMs);
      await new Promise((resolve) => {
        const timer = setTimeout(resolve, Math.min(wait, this.maxBackoffMs));
        // A wait alone does not keep node running: when nothing else does, beforeExit closes
        // the sink, which gives the endpoint closeTimeoutMs more.
        timer.unref();
        this.wake = () => {
          if (this.stopped) {
            clearTimeout(timer);
            resolve();
          }
        };
      });
      this.wake = null;
    }
  }

  /** One POST: `{done: true}` when the endpoint answered for the batch (accepted, partly
   * rejected, or refused for good), else when to try again. */
  async post(batch) {
    const headers = { "content-type": "application/json" };
    if (this.key) headers.authorization = `Bearer ${this.key}`;
    let response;
    try {
      response = await this.fetch(this.url, {
        method: "POST",
        headers,
        body: JSON.stringify({ events: batch }),
        signal: AbortSignal.timeout(this.requestTimeoutMs),
      });
    } catch (error) {
      this.logger.warn?.(`toolcall-spec: could not post ${batch.length} events to ${this.url}: ${error?.cause?.code ?? error}; retrying`);
      return { done: false, retryAfterMs: null };
    }
    let answer = null;
    try {
      answer = await response.json();
    } catch {
      answer = null;
    }
    if (response.status === 200 || response.status === 207) {
      this.sent += batch.length;
      this.accepted += typeof answer?.accepted === "number" ? answer.accepted : batch.length;
      this.rejected += typeof answer?.rejected === "number" ? answer.rejected : 0;
      return { done: true };
    }
    if (RETRYABLE.has(response.status)) {
      return { done: false, retryAfterMs: retryAfterMs(response.headers.get("retry-after")) };
    }
    this.lost += batch.length;
    this.logger.warn?.(`toolcall-spec: ${this.url} refused a batch of ${batch.length} events: HTTP ${response.status}`);
    return { done: true };
  }
}
