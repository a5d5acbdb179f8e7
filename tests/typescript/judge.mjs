// The JavaScript side of the differential test (tests/typescript/test_differential.py): one
// long-lived process. Each line on stdin is {"kind", "document"}; each answer, one line on
// stdout in the same order, is {"valid", "toolError", "problems"} from @toolcall-spec/schemas
// (ajv), or {"failure"} when the package threw.
import { createInterface } from "node:readline";
import { isToolError, isValid, validate } from "../../typescript/index.js";

const lines = createInterface({ input: process.stdin, crlfDelay: Infinity });
for await (const line of lines) {
  if (line.trim() === "") continue;
  let answer;
  try {
    const { kind, document } = JSON.parse(line);
    const valid = isValid(document, kind);
    answer = { valid, toolError: isToolError(document), problems: valid ? [] : validate(document, kind) };
  } catch (error) {
    answer = { failure: String(error?.stack ?? error) };
  }
  process.stdout.write(`${JSON.stringify(answer)}\n`);
}
