// The sinks of @toolcall-spec/schemas that need no ingest service (run by
// test_typescript_sinks.py with `node --test`): the JSONL file, the callback, and the HTTP sink's
// answer to 503 with Retry-After from an endpoint that is briefly full.
import assert from "node:assert/strict";
import { mkdtempSync, readFileSync } from "node:fs";
import { createServer } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";
import { IngestHttpSink, JsonlFileSink, callbackSink, retryAfterMs } from "../../typescript/sinks.js";

test("the JSONL sink writes one line per event before write returns", () => {
  const path = join(mkdtempSync(join(tmpdir(), "sink-")), "events.jsonl");
  const sink = new JsonlFileSink(path);
  sink.write({ event_id: "a", text: "line\nbreak \u2028" });
  assert.equal(readFileSync(path, "utf8").split("\n").length, 2);
  sink.write({ event_id: "b" });
  sink.close();
  assert.throws(() => sink.write({}), /closed/);
  const lines = readFileSync(path, "utf8").trimEnd().split("\n").map((line) => JSON.parse(line));
  assert.deepEqual(lines.map((event) => event.event_id), ["a", "b"]);
});

test("the callback sink hands over a copy", () => {
  const seen = [];
  const sink = callbackSink((event) => seen.push(event));
  const event = { event_id: "a", nested: { x: 1 } };
  sink(event);
  event.nested.x = 2;
  assert.deepEqual(seen, [{ event_id: "a", nested: { x: 1 } }]);
});

test("Retry-After in seconds or as a date", () => {
  assert.equal(retryAfterMs("2"), 2000);
  assert.equal(retryAfterMs(new Date(10_000).toUTCString(), 4_000), 6_000);
  assert.equal(retryAfterMs("soon"), null);
  assert.equal(retryAfterMs(null), null);
});

test("a 503 with Retry-After is waited out and the batch sent again, whole", async () => {
  const arrivals = [];
  const server = createServer((req, res) => {
    const chunks = [];
    req.on("data", (chunk) => chunks.push(chunk));
    req.on("end", () => {
      arrivals.push({ at: Date.now(), events: JSON.parse(Buffer.concat(chunks)).events.length });
      if (arrivals.length === 1) {
        res.writeHead(503, { "retry-after": "1", "content-type": "application/json" });
        res.end('{"error":"backlog_full"}');
        return;
      }
      res.writeHead(200, { "content-type": "application/json" });
      res.end(JSON.stringify({ accepted: arrivals.at(-1).events, rejected: 0, errors: [] }));
    });
  });
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
  const sink = new IngestHttpSink(`http://127.0.0.1:${server.address().port}/v1/events`, {
    minBackoffMs: 10,
    logger: { warn() {} },
  });
  for (let i = 0; i < 5; i += 1) sink.write({ event_id: String(i) });
  assert.ok(await sink.close());
  server.close();
  assert.equal(arrivals.length, 2);
  assert.ok(arrivals[1].at - arrivals[0].at >= 900, "Retry-After was not honoured");
  assert.deepEqual([sink.sent, sink.accepted, sink.retries, sink.lost, sink.dropped], [5, 5, 1, 0, 0]);
});

test("a batch refused for good is counted as lost, not retried", async () => {
  const server = createServer((req, res) => {
    req.resume();
    req.on("end", () => {
      res.writeHead(401, { "content-type": "application/json" });
      res.end('{"error":"unauthorized"}');
    });
  });
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
  const warnings = [];
  const sink = new IngestHttpSink(`http://127.0.0.1:${server.address().port}/v1/events`, {
    logger: { warn: (message) => warnings.push(message) },
  });
  sink.write({ event_id: "x" });
  assert.ok(await sink.close());
  server.close();
  assert.deepEqual([sink.lost, sink.retries], [1, 0]);
  assert.match(warnings[0], /HTTP 401/);
});
