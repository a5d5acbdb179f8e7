// The TypeScript PII stripper for the tests in test_typescript_pii_differential.py.
//   node strip_pii.mjs strip    one JSON string per stdin line -> one JSON string per line:
//                               stripPii(text)
//   node strip_pii.mjs message  the same with errorMessage(text): trimmed, cut to 4,000
//                               characters without leaving half a value, stripped, clamped to 500
//   node strip_pii.mjs growth   argv[3]: JSON list of units; for each, the best of 3 times (ms) of
//                               stripPii (CPU ms) on the unit repeated to 128, 256 and 512 KB
import { createInterface } from "node:readline";
import { errorMessage } from "../../typescript/instrument.js";
import { stripPii } from "../../typescript/pii.js";

const mode = process.argv[2];
if (mode === "growth") {
  const rows = [];
  for (const unit of JSON.parse(process.argv[3])) {
    // Warm up first (the JIT, the heap at the largest size): the first size measured must not
    // pay for what the later ones then get for free.
    stripPii(unit.repeat(Math.floor((512 * 1024) / unit.length)));
    const times = [128, 256, 512].map((kb) => {
      const text = unit.repeat(Math.floor((kb * 1024) / unit.length));
      // CPU time, not wall time: the machine is shared, and another process's turn on the CPU
      // is not this one's cost.
      let best = Infinity;
      for (let round = 0; round < 3; round += 1) {
        const started = process.cpuUsage();
        stripPii(text);
        const spent = process.cpuUsage(started);
        best = Math.min(best, (spent.user + spent.system) / 1000);
      }
      return best;
    });
    rows.push({ unit, times });
  }
  console.log(JSON.stringify(rows));
} else {
  const apply = mode === "message" ? (text) => errorMessage(text) : stripPii;
  const out = [];
  for await (const line of createInterface({ input: process.stdin, crlfDelay: Infinity })) {
    out.push(JSON.stringify(apply(JSON.parse(line))));
    if (out.length >= 1000) {
      process.stdout.write(`${out.join("\n")}\n`);
      out.length = 0;
    }
  }
  if (out.length) process.stdout.write(`${out.join("\n")}\n`);
}
