/** Writes docs/openapi.json from the REST routes' zod schemas (`npm run openapi`); `--check` fails on drift. */
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { openApiJson } from "../graphql/rest/rest-api";

const path = join(import.meta.dirname, "..", "docs", "openapi.json");
const doc = openApiJson();
if (process.argv.includes("--check")) {
  if (!existsSync(path) || readFileSync(path, "utf8") !== doc) {
    console.error("docs/openapi.json is out of date: run npm run openapi");
    process.exit(1);
  }
} else writeFileSync(path, doc);
