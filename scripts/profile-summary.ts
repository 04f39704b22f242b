/**
 * Where a CPU profile's time went: the functions with the most self time, and the self time per
 * package (node_modules/<name>) or project folder, as a share of the sampled time. For the
 * `.cpuprofile` files `scripts/bench-api.ts --profile <dir>` (or `node --cpu-prof`) writes.
 *
 *   npx tsx scripts/profile-summary.ts <file.cpuprofile> [--top 30]
 */
import { Command, Option } from "commander";
import { readFileSync } from "node:fs";
import { relative } from "node:path";
import { arg, positiveValue } from "../stack/config/values";
import { exitOnError, strictExit } from "../stack/config/cli";

const cmd = strictExit(new Command().name("profile-summary"))
  .argument("<file>", "a .cpuprofile (V8's JSON profile)")
  .addOption(new Option("--top <n>", "functions listed").argParser(arg(positiveValue)).default(30))
  .parse();
const opts = cmd.opts<{ top: number }>();

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
}
interface Profile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

const ROOT = relative(process.cwd(), ".") || ".";
/** A package under node_modules, else the project folder (graphql/, service/...), else V8's own ("(gc)", "(program)"). */
function owner(url: string, name: string): string {
  if (!url) return name.startsWith("(") ? name : "(native)";
  const path = url.replace(/^file:\/\//, "");
  const m = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(path);
  if (m) return m[1];
  if (path.startsWith("node:")) return "node";
  const rel = relative(process.cwd(), path);
  return rel.startsWith("..")
    ? path
    : `${ROOT === "." ? "" : ROOT + "/"}${rel
        .split("/")
        .slice(0, rel.includes("/") ? 2 : 1)
        .join("/")}`;
}

function main() {
  const p = JSON.parse(readFileSync(cmd.args[0], "utf8")) as Profile;
  const byId = new Map(p.nodes.map((n) => [n.id, n]));
  const self = new Map<number, number>();
  let total = 0;
  p.samples.forEach((id, i) => {
    const dt = p.timeDeltas[i] ?? 0;
    self.set(id, (self.get(id) ?? 0) + dt);
    total += dt;
  });
  const idle = [...self].filter(([id]) => byId.get(id)!.callFrame.functionName === "(idle)").reduce((a, [, t]) => a + t, 0);
  const busy = total - idle;
  const fns = new Map<string, number>();
  const owners = new Map<string, number>();
  for (const [id, t] of self) {
    const { functionName, url, lineNumber } = byId.get(id)!.callFrame;
    if (functionName === "(idle)") continue;
    const where = owner(url, functionName);
    const key = `${functionName || "(anonymous)"}  ${url ? `${relative(process.cwd(), url.replace(/^file:\/\//, ""))}:${lineNumber + 1}` : ""}`;
    fns.set(key, (fns.get(key) ?? 0) + t);
    owners.set(where, (owners.get(where) ?? 0) + t);
  }
  const pct = (t: number) => `${((100 * t) / busy).toFixed(1).padStart(5)} %`;
  console.log(`sampled ${(total / 1e6).toFixed(2)} s, busy ${(busy / 1e6).toFixed(2)} s (idle left out)\n\nself time by package or folder:`);
  for (const [k, t] of [...owners].sort((a, b) => b[1] - a[1]).slice(0, 25)) console.log(`${pct(t)}  ${k}`);
  console.log(`\ntop ${opts.top} functions by self time:`);
  for (const [k, t] of [...fns].sort((a, b) => b[1] - a[1]).slice(0, opts.top)) console.log(`${pct(t)}  ${k}`);
}

try {
  main();
} catch (e) {
  exitOnError(e);
}
