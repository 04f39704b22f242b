/**
 * The layout of docs/architecture.md, held by the code: dependencies point one way through the
 * layers, nothing outside tests/ imports from tests/, every relative link in the documentation
 * resolves inside the repository, and the README's folder list names every top-level folder.
 */
import { describe, expect, it } from "vitest";
import { execFileSync } from "node:child_process";
import { existsSync, readFileSync, statSync } from "node:fs";
import { dirname, join, normalize, relative, resolve, sep } from "node:path";

const root = resolve(import.meta.dirname, "..", "..");
/** The layers, lowest first: a module may import from its own layer or a lower one. */
const LAYERS = ["programs", "idl", "harness", "indexer", "service", "graphql", "stack", "scripts", "tests"] as const;
const layerOf = (file: string): number => LAYERS.indexOf(file.split("/")[0] as (typeof LAYERS)[number]);

const tracked = (pattern: string[]): string[] =>
  execFileSync("git", ["ls-files", "--cached", "--others", "--exclude-standard", ...pattern], { cwd: root, encoding: "utf8" })
    .split("\n")
    .filter((f) => f && existsSync(join(root, f)));

/** Relative import specifiers of a TypeScript file, resolved to repository paths. */
function importsOf(file: string): string[] {
  const text = readFileSync(join(root, file), "utf8");
  const out: string[] = [];
  for (const m of text.matchAll(/(?:from|import)\s*\(?\s*["'](\.{1,2}\/[^"']+)["']/g)) {
    const base = normalize(join(dirname(file), m[1]));
    const hit = [`${base}.ts`, base, join(base, "index.ts")].find((c) => existsSync(join(root, c)) && statSync(join(root, c)).isFile());
    out.push(hit ?? base);
  }
  return out;
}

/**
 * What a module loads when it is imported: its static imports and re-exports (relative ones
 * resolved to repository paths, packages by name), without `import type` (erased) and dynamic
 * `import()` (loaded only on the path that calls it).
 */
function runtimeImportsOf(file: string): string[] {
  const text = readFileSync(join(root, file), "utf8");
  const out: string[] = [];
  const clause = String.raw`(?:\{[^}]*\}|\*(?:\s+as\s+\w+)?|\w+(?:\s*,\s*(?:\{[^}]*\}|\*\s+as\s+\w+))?)`;
  for (const m of text.matchAll(new RegExp(String.raw`^(?:import|export)\s+(type\s+)?(?:${clause}\s+from\s+)?["']([^"']+)["']`, "gm"))) {
    if (m[1]) continue;
    const spec = m[2];
    if (!spec.startsWith(".")) {
      out.push(spec);
      continue;
    }
    const base = normalize(join(dirname(file), spec));
    out.push([`${base}.ts`, base, join(base, "index.ts")].find((c) => existsSync(join(root, c)) && statSync(join(root, c)).isFile()) ?? base);
  }
  return out;
}

/** Every module `roots` load, each with the chain of imports that reaches it. */
function loadedBy(roots: string[]): Map<string, string[]> {
  const seen = new Map<string, string[]>(roots.map((r) => [r, [r]]));
  const queue = [...roots];
  while (queue.length) {
    const f = queue.shift()!;
    if (!f.endsWith(".ts")) continue;
    for (const t of runtimeImportsOf(f)) {
      if (seen.has(t)) continue;
      seen.set(t, [...seen.get(f)!, t]);
      queue.push(t);
    }
  }
  return seen;
}

describe("layout", () => {
  it("cluster roles load no SVM engine: solana-bankrun, LiteSVM and harness/engines are reached only through the local stack", () => {
    // What `start --rpc --role api|indexer|worker|all` and `admin --rpc` import before any branch runs.
    const loaded = loadedBy(["stack/cluster-stack.ts", "stack/roles.ts", "stack/app.ts", "scripts/start.ts", "scripts/admin.ts"]);
    const engines = [...loaded].filter(([m]) => /^(solana-bankrun|litesvm)(\/|$)/.test(m) || m === "harness/engines.ts").map(([, via]) => via.join(" -> "));
    expect(engines).toEqual([]);
    // The check sees through the layers: the local stack does reach them.
    expect([...loadedBy(["stack/local-stack.ts"]).keys()]).toEqual(expect.arrayContaining(["harness/engines.ts", "solana-bankrun", "litesvm"]));
  });

  const sources = tracked(["*.ts"]).filter((f) => layerOf(f) >= 0);

  it("dependencies point one way: programs -> idl -> harness -> indexer -> service -> graphql -> stack -> scripts -> tests", () => {
    const upward: string[] = [];
    for (const f of sources) {
      for (const target of importsOf(f)) {
        const [from, to] = [layerOf(f), layerOf(target)];
        if (to > from) upward.push(`${f} imports ${target}`);
      }
    }
    expect(upward).toEqual([]);
    expect(sources.length).toBeGreaterThan(100);
  });

  it("nothing outside tests/ imports from tests/", () => {
    const offenders = sources
      .filter((f) => !f.startsWith("tests/"))
      .flatMap((f) =>
        importsOf(f)
          .filter((t) => t.startsWith("tests/"))
          .map((t) => `${f} imports ${t}`),
      );
    expect(offenders).toEqual([]);
  });

  it("every relative link in the documentation resolves inside the repository", () => {
    const docs = tracked(["*.md"]).filter((f) => !f.startsWith("node_modules/"));
    expect(docs).toContain("docs/architecture.md");
    const broken: string[] = [];
    let links = 0;
    for (const f of docs) {
      const text = readFileSync(join(root, f), "utf8");
      for (const m of text.matchAll(/\]\(([^)\s]+)\)/g)) {
        const target = m[1];
        if (/^[a-z]+:/i.test(target) || target.startsWith("#")) continue;
        links++;
        const path = resolve(root, dirname(f), target.split("#")[0]);
        const rel = relative(root, path);
        if (rel.startsWith("..") || rel.split(sep)[0] === "..") broken.push(`${f}: ${target} leaves the repository`);
        else if (!existsSync(path)) broken.push(`${f}: ${target} does not exist`);
      }
    }
    expect(broken).toEqual([]);
    expect(links).toBeGreaterThan(10);
  });

  it("the README's folder list names every top-level folder of the code", () => {
    const readme = readFileSync(join(root, "README.md"), "utf8");
    const folders = [
      ...new Set(
        tracked(["*.ts", "*.rs", "*.md", "*.sh"])
          .filter((f) => f.includes("/"))
          .map((f) => f.split("/")[0]),
      ),
    ].filter((d) => !d.startsWith("."));
    const missing = folders.filter((d) => !readme.includes(`${d}/`));
    expect(missing).toEqual([]);
  });
});
