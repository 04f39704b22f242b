/**
 * Prints the test files of which a vitest log (the default reporter's output) shows no result
 * line: after vitest itself stopped, these were running or had not started (scripts/test.sh).
 */
import { readFileSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { stripVTControlCharacters } from "node:util";

const logFile = process.argv[2];
const log = stripVTControlCharacters(readFileSync(logFile, "utf8"));
const reported = new Set<string>();
for (const line of log.split("\n")) {
  const m = /^\s*[✓×↓❯]\s+\S+\s+(tests\/\S+\.test\.ts)/.exec(line);
  if (m) reported.add(m[1]);
}
const files: string[] = [];
const walk = (dir: string) => {
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    if (e.isDirectory()) walk(p);
    else if (p.endsWith(".test.ts")) files.push(p);
  }
};
walk("tests");
const missing = files.filter((f) => !reported.has(f)).sort();
console.log(`test files without a result in ${logFile} (${missing.length} of ${files.length}):`);
for (const f of missing) console.log(`  ${f}`);
