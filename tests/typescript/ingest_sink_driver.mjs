// IngestHttpSink under the control of test_typescript_sinks.py: one command per stdin line, one
// JSON answer per stdout line.
//   {"write": N}        write N new schema-valid tool_call events (new event_ids); answers how
//                       long the N writes took (ms): they never wait on the network
//   {"resend": N}       write the first N events again, as a retry that lost its answer would
//   {"flush": ms}       wait until everything buffered is answered (or ms passed)
//   {"close": true}     close the sink; answers its counters, and exits
// argv[2]: {"url", "key", "options"} for the sink.
import { randomUUID } from "node:crypto";
import { createInterface } from "node:readline";
import { IngestHttpSink } from "../../typescript/sinks.js";

const { url, key, options } = JSON.parse(process.argv[2]);
const warnings = [];
const sink = new IngestHttpSink(url, { key, ...options, logger: { warn: (message) => warnings.push(message) } });
const written = [];

function event(index) {
  return {
    event_id: randomUUID(),
    event_type: "tool_call",
    trace_id: `trace-${index}`,
    session_id: "session-ts",
    timestamp: new Date().toISOString(),
    source: "server",
    event_name: `tool_${index % 3}`,
    sdk_version: "0.1.0",
    latency_ms: index % 50,
    status: "success",
    is_retry: 0,
  };
}

const counters = () => {
  const { sent, accepted, rejected, retries, dropped, lost } = sink;
  return { sent, accepted, rejected, retries, dropped, lost, written: written.length, warnings: warnings.length };
};

for await (const line of createInterface({ input: process.stdin })) {
  const command = JSON.parse(line);
  if ("write" in command) {
    const started = performance.now();
    for (let i = 0; i < command.write; i += 1) {
      const made = event(written.length);
      written.push(made);
      sink.write(made);
    }
    console.log(JSON.stringify({ ms: performance.now() - started, ...counters() }));
  } else if ("resend" in command) {
    for (const again of written.slice(0, command.resend)) sink.write(again);
    console.log(JSON.stringify(counters()));
  } else if ("flush" in command) {
    const done = await sink.flush(command.flush);
    console.log(JSON.stringify({ done, ...counters() }));
  } else if ("close" in command) {
    const done = await sink.close();
    const answer = JSON.stringify({ done, ...counters(), ids: written.map((made) => made.event_id) });
    process.stdout.write(`${answer}\n`, () => process.exit(0)); // stdin stays open on the test's side
  }
}
