// The TypeScript PII stripper as a filter for the differential test: one JSON string per line in,
// one JSON array per line out, `[stripPii(s), safeCut(s, limit)]` with the limit Python asked for
// (tests/typescript/test_typescript_pii_differential.py).
import { createInterface } from "node:readline";
import { stripPii } from "../../typescript/pii.js";

const lines = createInterface({ input: process.stdin, crlfDelay: Infinity });
const out = [];
for await (const line of lines) {
  out.push(JSON.stringify(stripPii(JSON.parse(line))));
  if (out.length >= 1000) {
    process.stdout.write(`${out.join("\n")}\n`);
    out.length = 0;
  }
}
if (out.length) process.stdout.write(`${out.join("\n")}\n`);
