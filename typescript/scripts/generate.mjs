// Generates generated/typescript/ from schemas/ (run by `nox -s generate`; `--check` fails on drift).
//
//   index.d.ts                 every document kind's type (and every titled definition), with the
//                              schemas' descriptions as doc comments: json-schema-to-typescript,
//                              pinned in typescript/package-lock.json
//   kinds.json                 each kind: its bundled schema file and its type's name
//   schemas/<kind>.schema.json each kind's schema with every $ref inlined, as printed by
//                              `toolcall-spec schema --bundle KIND` (the Python package's bundler:
//                              one bundler serves both languages)
//
// Cross-file $refs resolve offline: every packaged schema is read from schemas/ and served to the
// $ref parser under its $id; http and file resolution are switched off.
//
// Usage: node typescript/scripts/generate.mjs [--check]   (from the repository root; the
// `toolcall-spec` command must be on PATH, or named by $TOOLCALL_SPEC)
import { execFileSync } from "node:child_process";
import { existsSync, mkdtempSync, mkdirSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync, cpSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";
import { compile } from "json-schema-to-typescript";

const SCHEMAS = "schemas";
const OUTPUT = join("generated", "typescript");
const CLI = process.env.TOOLCALL_SPEC ?? "toolcall-spec";
const BANNER = `/**
 * Generated from schemas/ by typescript/scripts/generate.mjs (\`nox -s generate\`) with
 * json-schema-to-typescript. Do not edit: change the schemas and regenerate.
 *
 * TypeScript cannot state every rule of the schemas (patterns, bounds, formats, conditional
 * members): \`validate\` of @toolcall-spec/schemas checks them all.
 */`;

function cli(...args) {
  return execFileSync(CLI, args, { encoding: "utf8", maxBuffer: 64 * 1024 * 1024 });
}

/** The packaged kinds and their schema files, from `toolcall-spec schema` (kind, path, $id). */
function packagedKinds() {
  const kinds = {};
  for (const line of cli("schema").split("\n")) {
    const [kind, path] = line.trim().split(/\s+/);
    if (kind && kind !== "-" && path) kinds[kind] = path;
  }
  return kinds;
}

function schemaFiles(folder) {
  return readdirSync(folder).flatMap((entry) => {
    const path = join(folder, entry);
    if (statSync(path).isDirectory()) return schemaFiles(path);
    return entry.endsWith(".schema.json") ? [path] : [];
  });
}

const SCHEMA_MAPS = ["properties", "patternProperties", "$defs", "dependentSchemas"];
const SCHEMA_LISTS = ["allOf", "anyOf", "oneOf", "prefixItems"];
const SCHEMA_VALUES = ["items", "additionalProperties", "not", "if", "then", "else", "contains", "propertyNames"];
const SHAPING = ["type", "$ref", "enum", "const", "properties", "patternProperties", "items", "prefixItems", "additionalProperties", "allOf", "anyOf", "oneOf"];

/** A schema made ready for the generator, the same in meaning:
 * - a `$ref` with sibling keywords becomes `allOf: [{$ref}]` beside them (the same in draft
 *   2020-12): the $ref parser would otherwise merge the siblings into a copy of the target, and
 *   each copy becomes a numbered duplicate type (`EventId1`);
 * - an allOf member that constrains no shape (only if/then or not) is left out, and so are anyOf
 *   and oneOf when none of their members constrains one: they add nothing TypeScript can say
 *   (the validator checks them);
 * - a schema that constrains no shape (`{"description": ...}`: any JSON value) is `unknown`: the
 *   generator would make it an object, and refuse a valid `"value": "Paris"`. */
function prepared(schema) {
  if (schema === null || typeof schema !== "object" || Array.isArray(schema)) return schema;
  const out = { ...schema };
  for (const key of SCHEMA_MAPS) {
    if (out[key] && typeof out[key] === "object") {
      out[key] = Object.fromEntries(Object.entries(out[key]).map(([name, value]) => [name, prepared(value)]));
    }
  }
  for (const key of SCHEMA_LISTS) if (Array.isArray(out[key])) out[key] = out[key].map(prepared);
  // An allOf member that constrains no shape (if/then, not) adds nothing TypeScript can say.
  if (Array.isArray(out.allOf)) out.allOf = out.allOf.filter((member) => member.tsType !== "unknown");
  if (out.allOf?.length === 0) delete out.allOf;
  // Alternatives none of which constrains a shape (`oneOf: [{required: [text]}, {required:
  // [blob]}]`) are all `unknown` to TypeScript; the validator checks them.
  for (const key of ["anyOf", "oneOf"]) {
    if (Array.isArray(out[key]) && out[key].every((member) => member.tsType === "unknown")) delete out[key];
  }
  for (const key of SCHEMA_VALUES) if (key in out) out[key] = prepared(out[key]);
  if (typeof out.$ref === "string" && Object.keys(out).length > 1) {
    const { $ref, ...siblings } = out;
    return { ...siblings, allOf: [...(siblings.allOf ?? []), { $ref }] };
  }
  if (!SHAPING.some((key) => key in out)) out.tsType = "unknown";
  return out;
}

function schemasById() {
  const byId = new Map();
  for (const path of schemaFiles(SCHEMAS).sort()) {
    const schema = JSON.parse(readFileSync(path, "utf8"));
    byId.set(schema.$id, { path: relative(SCHEMAS, path).split("\\").join("/"), schema: prepared(schema) });
  }
  return byId;
}

/** One root whose members name every kind (`Documents`) and every titled `$defs` entry
 * (`Definitions`: run event payloads and the like, which the kinds reach only through
 * if/then), so that each shared definition is emitted once under its title. */
function rootSchema(kinds, byId) {
  const idOf = (path) => [...byId.entries()].find(([, v]) => v.path === path)[0];
  const definitions = {};
  for (const [id, { schema }] of byId) {
    for (const [name, definition] of Object.entries(schema.$defs ?? {})) {
      if (typeof definition.title === "string") definitions[definition.title] = { $ref: `${id}#/$defs/${name}` };
    }
  }
  const object = (title, description, properties) => ({
    title,
    description,
    type: "object",
    additionalProperties: false,
    required: Object.keys(properties),
    properties,
  });
  const documents = Object.fromEntries(Object.entries(kinds).map(([kind, path]) => [kind, { $ref: idOf(path) }]));
  return object("ToolcallSpecTypes", "The generated types: `Documents` by kind, `Definitions` by title.", {
    documents: object("Documents", "Each document kind and its type.", documents),
    definitions: object("Definitions", "Every titled definition of the schemas, by title.", definitions),
  });
}

async function typesOf(kinds, byId) {
  const offline = {
    order: 1,
    canRead: (file) => byId.has(file.url.split("#")[0]),
    read: (file) => JSON.stringify(byId.get(file.url.split("#")[0]).schema),
  };
  return compile(rootSchema(kinds, byId), "ToolcallSpecTypes", {
    bannerComment: BANNER,
    additionalProperties: false,
    strictIndexSignatures: true,
    unknownAny: true,
    $refOptions: { resolve: { http: false, file: false, packaged: offline } },
  });
}

function typeNames(types, kinds) {
  // Documents' members, in the order of `kinds`: `"run-event": RunEvent;`
  const body = types.match(/export interface Documents \{([\s\S]*?)\n\}/)[1];
  const names = {};
  for (const kind of Object.keys(kinds)) {
    const quoted = kind.includes("-") ? `"${kind}"` : kind;
    names[kind] = body.match(new RegExp(`\\n\\s*${quoted.replace(/[-"]/g, "\\$&")}: (\\w+);`))[1];
  }
  return names;
}

async function generateInto(folder) {
  const kinds = packagedKinds();
  const types = await typesOf(kinds, schemasById());
  mkdirSync(join(folder, "schemas"), { recursive: true });
  writeFileSync(join(folder, "index.d.ts"), types);
  const names = typeNames(types, kinds);
  const manifest = {};
  for (const kind of Object.keys(kinds)) {
    writeFileSync(join(folder, "schemas", `${kind}.schema.json`), cli("schema", "--bundle", kind));
    manifest[kind] = { schema: `schemas/${kind}.schema.json`, type: names[kind] };
  }
  writeFileSync(join(folder, "kinds.json"), `${JSON.stringify(manifest, null, 2)}\n`);
}

/** Every file under `folder`, relative to it; none when the folder does not exist. */
function filesUnder(folder, base = folder) {
  if (!existsSync(folder)) return [];
  return readdirSync(folder).flatMap((entry) => {
    const path = join(folder, entry);
    return statSync(path).isDirectory() ? filesUnder(path, base) : [relative(base, path)];
  });
}

/** The files that differ between the two folders (added, removed or changed). */
function drift(expected, actual) {
  const want = new Set(filesUnder(expected));
  const have = new Set(filesUnder(actual));
  const differing = [...new Set([...want, ...have])].filter(
    (file) => !want.has(file) || !have.has(file) || !readFileSync(join(expected, file)).equals(readFileSync(join(actual, file))),
  );
  return differing.sort();
}

const check = process.argv.includes("--check");
const staging = mkdtempSync(join(tmpdir(), "toolcall-spec-ts-"));
try {
  await generateInto(staging);
  const differing = drift(staging, OUTPUT);
  if (check) {
    if (differing.length > 0) {
      console.error(`${OUTPUT} is out of date (run \`nox -s generate\`); differing: ${differing.join(", ")}`);
      process.exitCode = 1;
    } else {
      console.log(`${OUTPUT} is up to date`);
    }
  } else {
    rmSync(OUTPUT, { recursive: true, force: true });
    cpSync(staging, OUTPUT, { recursive: true });
    console.log(`${OUTPUT}: ${differing.length} file(s) changed`);
  }
} finally {
  rmSync(staging, { recursive: true, force: true });
}
