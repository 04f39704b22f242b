/** schema.graphql is the committed contract of the GraphQL API: it must match the code. */
import { describe, expect, it } from "vitest";
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { buildSchema, type GraphQLObjectType } from "graphql";

const root = join(import.meta.dirname, "..", "..");

describe("schema.graphql", () => {
  it("equals the schema the server builds (run npm run schema after changing it)", () => {
    // In plain Node (one copy of graphql); exits non-zero, and the call throws, on drift.
    expect(() => execFileSync(process.execPath, ["--import", "tsx", "scripts/print-schema.ts", "--check"], { cwd: root, stdio: "pipe" })).not.toThrow();
  });

  it("exposes every query of the read API, the three write mutations and the live subscriptions", () => {
    // The schema's own types, not its text: `offer(` in the SDL would also match Subscription.offer.
    const schema = buildSchema(readFileSync(join(root, "schema.graphql"), "utf8"));
    const fields = (t: GraphQLObjectType | null | undefined) => Object.keys(t?.getFields() ?? {}).sort();
    expect(fields(schema.getQueryType())).toEqual(
      expect.arrayContaining(["settings", "contracts", "offers", "offer", "fills", "mine", "shareable", "poll", "_meta"]),
    );
    expect(fields(schema.getMutationType())).toEqual(expect.arrayContaining(["createOffer", "takeOffer", "closeOffer"]));
    expect(fields(schema.getSubscriptionType())).toEqual(
      expect.arrayContaining(["offers", "offer", "offerFills", "myPositions", "mySettlements", "indexedSlot", "pool"]),
    );
  });
});
