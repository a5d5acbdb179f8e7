// @toolcall-spec/schemas: the bundled JSON Schemas of toolcall-spec, a validator built on ajv
// (draft 2020-12, formats checked by ajv-formats), and the one rule: a tool result is an error
// exactly when its `isError` member is the JSON boolean `true`.
import { existsSync, readFileSync } from "node:fs";
import Ajv2020 from "ajv/dist/2020.js";
import addFormats from "ajv-formats";

// An installed package carries its copy of generated/typescript as ./generated (made by
// `npm pack`); a checkout of the repository reads generated/typescript itself.
const GENERATED = [new URL("./generated/", import.meta.url), new URL("../generated/typescript/", import.meta.url)].find(
  (folder) => existsSync(new URL("kinds.json", folder)),
);
if (GENERATED === undefined) {
  throw new Error("@toolcall-spec/schemas: generated/ is missing; run `nox -s generate` (a checkout) or reinstall");
}

const readJson = (name) => JSON.parse(readFileSync(new URL(name, GENERATED), "utf8"));
const MANIFEST = readJson("kinds.json");

/** Every document kind, e.g. `"tool-call-event"`. */
export const KINDS = Object.freeze(Object.keys(MANIFEST));

/** Each kind's schema, self-contained (every `$ref` inlined), as `toolcall-spec schema --bundle`
 * prints it. */
export const SCHEMAS = Object.freeze(Object.fromEntries(KINDS.map((kind) => [kind, readJson(MANIFEST[kind].schema)])));

// Strict mode, but for strictRequired: the schemas' `then` and `oneOf` branches require members
// that the object around them defines (`then: {required: ["error_category"]}`), which draft
// 2020-12 allows. allErrors: every problem of a document, as the Python validator reports them.
const ajv = new Ajv2020({ strict: true, strictRequired: false, allErrors: true });
addFormats(ajv);
const compiled = new Map();

function validatorOf(kind) {
  if (!Object.hasOwn(MANIFEST, kind)) {
    throw new TypeError(`unknown kind ${JSON.stringify(kind)}; known kinds: ${KINDS.join(", ")}`);
  }
  if (!compiled.has(kind)) compiled.set(kind, ajv.compile(SCHEMAS[kind]));
  return compiled.get(kind);
}

/** The deepest nesting of arrays and objects a document may have (`[]` is 1 level, `[[]]` 2):
 * the Python package's limit (toolcall_spec.validation.MAX_DEPTH), so both refuse the same. */
export const MAX_DEPTH = 128;

/** Whether an array or object is nested deeper than MAX_DEPTH. Walked level by level without
 * recursion, so any depth is safe; no paths are built (every valid document pays for this). */
function tooDeep(document) {
  let level = [document];
  for (let depth = 0; level.length > 0; depth += 1) {
    const nested = [];
    for (const node of level) {
      if (node === null || typeof node !== "object") continue;
      if (depth === MAX_DEPTH) return true;
      for (const value of Array.isArray(node) ? node : Object.values(node)) nested.push(value);
    }
    level = nested;
  }
  return false;
}

/** The path of the first array or object nested deeper than MAX_DEPTH (document order). */
function firstTooDeep(document) {
  const stack = [[document, 0, []]];
  while (stack.length > 0) {
    const [node, depth, path] = stack.pop();
    if (node === null || typeof node !== "object") continue;
    if (depth === MAX_DEPTH) return path;
    const entries = Array.isArray(node) ? node.map((value, index) => [index, value]) : Object.entries(node);
    for (const [key, value] of entries.reverse()) stack.push([value, depth + 1, [...path, key]]);
  }
  return [];
}

/** Whether `document` is a valid document of `kind`. */
export function isValid(document, kind) {
  return validatorOf(kind)(document) === true && !tooDeep(document);
}

/** Every problem of `document` as a document of `kind` (empty when valid), each with a path in
 * the `tasks[0].fixtures.toolResponses[0].isError` form. */
export function validate(document, kind) {
  const check = validatorOf(kind);
  if (tooDeep(document)) {
    return [{ path: formatPath(firstTooDeep(document)), message: `nested deeper than ${MAX_DEPTH} levels, this package's limit` }];
  }
  if (check(document)) return [];
  return reported(check.errors).map((error) => ({
    path: formatPath(pointerParts(error.instancePath, document)),
    message: messageOf(error),
  }));
}

/** ajv's errors as the Python validator reports them (the same paths, one problem each):
 * - a failed `then` or `else` is reported by ajv twice, as the member's own error and as an `if`
 *   error ("must match \"then\" schema") at the object: the first says where and what;
 * - a failed `anyOf` or `oneOf` is one problem at the value (no branch fitted): ajv also lists
 *   why each branch did not, which says nothing about which branch was meant. */
function reported(errors) {
  const alternatives = errors.filter((error) => error.keyword === "anyOf" || error.keyword === "oneOf");
  const inBranch = (error) => alternatives.some((alt) => error.schemaPath.startsWith(`${alt.schemaPath}/`));
  return errors.filter((error) => error.keyword !== "if" && !inBranch(error));
}

function messageOf(error) {
  if (error.keyword === "additionalProperties") return `${error.params.additionalProperty} is not allowed here`;
  if (error.keyword === "required") return `${JSON.stringify(error.params.missingProperty)} is a required property`;
  return `${error.message ?? error.keyword}`;
}

/** The members of a JSON Pointer, array indices as numbers (read against the document: `"0"`
 * is a member name in an object and an index in an array). */
function pointerParts(pointer, document) {
  const parts = [];
  let node = document;
  for (const token of pointer === "" ? [] : pointer.slice(1).split("/")) {
    const key = token.replace(/~1/g, "/").replace(/~0/g, "~");
    const index = Array.isArray(node) ? Number(key) : Number.NaN;
    parts.push(Number.isInteger(index) ? index : key);
    node = node?.[key];
  }
  return parts;
}

const PLAIN_MEMBER = /^[A-Za-z_$][A-Za-z0-9_$-]*$/;

/** `a.b[0].c`; a member that is not a plain name is quoted, `payload["vendor.key"]`; the empty
 * path is `(root)`. The same form as the Python package's paths. */
export function formatPath(parts) {
  let out = "";
  for (const part of parts) {
    if (typeof part === "number") out += `[${part}]`;
    else if (PLAIN_MEMBER.test(part)) out += out ? `.${part}` : part;
    else out += `[${JSON.stringify(part)}]`;
  }
  return out || "(root)";
}

/** The one rule: a tool result (an MCP `CallToolResult`, or a fixture entry) is an error exactly
 * when its `isError` member is the JSON boolean `true`. `"true"`, `1`, `null`, an absent member:
 * not an error; anything that is not an object: not an error. */
export function isToolError(result) {
  return typeof result === "object" && result !== null && !Array.isArray(result) && result.isError === true;
}

// The analytics half: instrument() for servers built on the MCP TypeScript SDK, the sinks, and
// the PII stripper (the Python package's, byte for byte).
export {
  instrument,
  ToolCallAnalytics,
  classifyResult,
  classifyException,
  errorMessage,
  deriveSessionId,
  SDK_VERSION,
  MAX_ERROR_MESSAGE_LENGTH,
} from "./instrument.js";
export { IngestHttpSink, JsonlFileSink, MemorySink, callbackSink } from "./sinks.js";
export { stripPii, stripPiiDeep, safeCut } from "./pii.js";
