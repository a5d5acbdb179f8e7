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
