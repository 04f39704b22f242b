/** schema.graphql is the committed contract of the GraphQL API: it must match the code. */
import { describe, expect, it } from "vitest";
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";

const root = join(import.meta.dirname, "..", "..");

describe("schema.graphql", () => {
  it("equals the schema the server builds (run npm run schema after changing it)", () => {
    // In plain Node (one copy of graphql); exits non-zero, and the call throws, on drift.
    expect(() => execFileSync(process.execPath, ["--import", "tsx", "scripts/print-schema.ts", "--check"], { cwd: root, stdio: "pipe" })).not.toThrow();
  });

  it("exposes every query of the read API and the three write mutations", () => {
    const sdl = readFileSync(join(root, "schema.graphql"), "utf8");
    for (const f of [
      "settings:",
      "contracts:",
      "offers(",
      "offer(",
      "fills(",
      "mine(",
      "shareable(",
      "poll(",
      "_meta:",
      "createOffer(",
      "takeOffer(",
      "closeOffer(",
    ])
      expect(sdl).toContain(f);
  });
});
