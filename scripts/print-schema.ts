/** Writes schema.graphql from the code-first schema (`npm run schema`); `--check` fails on drift. */
import { readFileSync, writeFileSync, existsSync } from "node:fs";
import { join } from "node:path";
import { buildSchema, schemaSdl } from "../graphql/server";

const path = join(import.meta.dirname, "..", "schema.graphql");
const sdl = schemaSdl(buildSchema({ read: null as never, custody: null, writes: null }));
if (process.argv.includes("--check")) {
  if (!existsSync(path) || readFileSync(path, "utf8") !== sdl) {
    console.error("schema.graphql is out of date: run npm run schema");
    process.exit(1);
  }
} else writeFileSync(path, sdl);
