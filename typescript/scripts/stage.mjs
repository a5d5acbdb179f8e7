// `npm pack` runs this first (prepack): the package carries a copy of generated/typescript (the
// types, the bundled schemas, kinds.json) as ./generated; `--clean` (postpack) removes the copy,
// so that a checkout always reads generated/typescript itself.
import { cpSync, rmSync } from "node:fs";

const copy = new URL("../generated/", import.meta.url);
rmSync(copy, { recursive: true, force: true });
if (!process.argv.includes("--clean")) {
  cpSync(new URL("../../generated/typescript/", import.meta.url), copy, { recursive: true });
}
