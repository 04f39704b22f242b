/**
 * schemathesis (PyPI) against the running local stack over real HTTP, driven by the committed
 * docs/openapi.json: every operation through its examples, coverage, fuzzing (valid and invalid
 * input) and stateful phases (the document's links: contracts -> create -> read/close, browse and
 * read -> take/close/fills), signed in as a funded user while another user's offers are open.
 * The run must report no server error and every response conforming to the document (status,
 * content type, body schema, headers). Fixed seed and examples per operation, so CI runs the same
 * cases each time. Figures are printed (the README quotes them).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { spawn, spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { apiStack, type ApiStack, contract, createBody, makeUser, UNIT, type TestUser } from "../support/stack";
import { post } from "../support/http";
import { ENGINES, freshStore, type StoreTarget } from "../indexer/stores";

const root = join(import.meta.dirname, "..", "..");
const CHECKS = ["not_a_server_error", "status_code_conformance", "content_type_conformance", "response_schema_conformance", "response_headers_conformance"];
const MAX_EXAMPLES = 40;
const SEED = 20261124;

function run(cmd: string, args: string[], cwd: string): Promise<{ code: number | null; out: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { cwd, stdio: ["ignore", "pipe", "pipe"], env: { ...process.env, NO_COLOR: "1" } });
    let out = "";
    child.stdout.on("data", (b) => (out += b));
    child.stderr.on("data", (b) => (out += b));
    child.on("error", reject);
    child.on("close", (code) => resolve({ code, out }));
  });
}

describe.each(ENGINES)("schemathesis against docs/openapi.json, store on %s", (engine) => {
  let s: ApiStack;
  let caller: TestUser;
  let target: StoreTarget;

  beforeAll(async () => {
    target = freshStore(engine, "st");
    s = await apiStack({ storeUrl: target.url });
    const [creator, signedIn] = [await makeUser(s), await makeUser(s)];
    caller = signedIn;
    const c = await contract(s);
    for (let i = 0; i < 2; i++) {
      const r = await post(s, "/", createBody(c, { creatorTotalMicros: String(8n * UNIT), takerTargetMicros: String(10n * UNIT) }), creator.token);
      expect(r.status, r.text).toBe(200);
    }
  });
  afterAll(async () => {
    await s?.stop();
    await target?.drop();
  });

  it("finds no server error and no response outside the document", async () => {
    const version = spawnSync("schemathesis", ["--version"], { encoding: "utf8" });
    expect(version.status, "schemathesis is not installed: run bash scripts/setup.sh").toBe(0);
    const dir = mkdtempSync(join(tmpdir(), "schemathesis-"));
    const junit = join(dir, "junit.xml");
    const started = performance.now();
    const { code, out } = await run(
      "schemathesis",
      [
        "run",
        join(root, "docs", "openapi.json"),
        "--url",
        s.url,
        "--header",
        `Authorization: Bearer ${caller.token}`,
        "--checks",
        CHECKS.join(","),
        "--phases",
        "examples,coverage,fuzzing,stateful",
        "--max-examples",
        String(MAX_EXAMPLES),
        "--seed",
        String(SEED),
        "--workers",
        "1",
        "--suppress-health-check",
        "all",
        "--request-timeout",
        "30",
        "--report",
        "junit",
        "--report-junit-path",
        junit,
        "--no-color",
      ],
      dir, // hypothesis keeps its example database in the working directory
    );
    const seconds = (performance.now() - started) / 1000;
    const xml = readFileSync(junit, "utf8");
    const totals = /<testsuites errors="(\d+)" failures="(\d+)" skipped="(\d+)" tests="(\d+)"/.exec(xml);
    expect(totals, xml).not.toBeNull();
    const [errors, failures, skipped, tests] = totals!.slice(1).map(Number);
    const operations = [...xml.matchAll(/<testcase name="(GET|POST|PUT|PATCH|DELETE) /g)].length;
    const cases = Number(/(\d+) generated/.exec(out)?.[1] ?? NaN);
    console.log(
      `schemathesis ${version.stdout.trim().split(" ").pop()} (${engine}): ${operations} operations + stateful, ${cases} test cases, ` +
        `max-examples ${MAX_EXAMPLES}, seed ${SEED}, ${seconds.toFixed(1)} s; failures ${failures}, errors ${errors}, skipped ${skipped}`,
    );
    expect({ code, failures, errors }, out.slice(-6_000)).toEqual({ code: 0, failures: 0, errors: 0 });
    // Every path and method of the document was exercised, and the stateful phase ran.
    const doc = JSON.parse(readFileSync(join(root, "docs", "openapi.json"), "utf8")) as { paths: Record<string, object> };
    expect(operations).toBe(Object.values(doc.paths).reduce((n, p) => n + Object.keys(p).length, 0));
    expect(tests).toBe(operations + 1);
    expect(xml).toContain('name="Stateful tests"');
    expect(cases).toBeGreaterThan(500);
  });
});
