/**
 * Webhooks follow the indexed chain through a fork (service/webhooks/dispatcher.ts, "Finality"),
 * with the writer's fork mechanics of tests/indexer/forks.test.ts: a take of a real program run
 * (bankrun) delivered live under a ghost signature (a fork's version of the transaction), then
 * retracted and replaced by the chain's from history. Nothing is ever sent for the ghost:
 * - with a finality margin, the ghost is never derived (its slot is not final before the retraction);
 * - without one (a premature derivation), the check before the send finds its rows gone and
 *   records the delivery "retracted".
 * Either way the chain's transaction is delivered, with the id its signature gives. On SQLite and
 * PostgreSQL (the webhook tables' migration and queries on both).
 */
import { createServer, type IncomingHttpHeaders, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Kysely } from "kysely";
import { Webhook } from "standardwebhooks";
import { TestChain } from "../../harness/chain";
import { OffersWorld, UNIT } from "../../harness/offers-world";
import { decodeEvents } from "../../indexer/decode";
import { openStore, type Store } from "../../indexer/store/db";
import { StoreWriter } from "../../indexer/store/writer";
import type { Batch, TxEvent } from "../../indexer/sources/types";
import { migrateCustody } from "../../service/custody/schema";
import { ServiceKey } from "../../service/custody/crypto";
import type { Principal } from "../../service/custody/custody";
import { Webhooks, type WebhookDb } from "../../service/webhooks/endpoints";
import { WebhookDispatcher } from "../../service/webhooks/dispatcher";
import { eventId } from "../../service/webhooks/events";
import { WEBHOOK_LIMITS } from "../../service/webhooks/limits";
import { recordBatches } from "../indexer/attach";
import { ENGINES, freshStore, type StoreTarget } from "../indexer/stores";

let batches: Batch[] = [];
let take: TxEvent;
let creator: string;
let server: Server;
let url: string;
const got: { headers: IncomingHttpHeaders; body: string }[] = [];

beforeAll(async () => {
  const chain = await TestChain.start();
  const recorded = await recordBatches(chain);
  batches = recorded.batches;
  const w = await OffersWorld.create({ chain });
  const [c, taker] = [await w.user(), await w.user()];
  creator = c.key.publicKey.toBase58();
  const contract = await w.contract({ cutoffIn: 3_600n, deadlineAfterCutoff: 600n });
  const { offer } = await w.createOffer(c, contract, { total: 10n * UNIT, target: 20n * UNIT });
  expect((await w.take(taker, offer, 2n * UNIT)).error).toBeNull();
  await recorded.source.drain();
  take = batches.flatMap((b) => b.transactions).find((t) => decodeEvents([t]).fills.length === 1)!;
  expect(take).toBeDefined();
  server = createServer((req, res) => {
    let body = "";
    req.on("data", (d) => (body += d));
    req.on("end", () => (got.push({ headers: req.headers, body }), res.writeHead(204).end()));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/in`;
});
afterAll(async () => {
  server?.closeAllConnections();
  if (server) await new Promise((resolve) => server.close(resolve));
});

const otherSignature = (sig: string) => (sig[0] === "1" ? "2" : "1") + sig.slice(1);
const batch = (t: TxEvent, slot = t.slot): Batch => ({ slot, writeVersion: 0, accounts: [], transactions: [t], cursor: "" });
const retraction = (t: TxEvent): TxEvent => ({ signature: t.signature, slot: t.slot, writeVersion: 0, err: null, logs: [], retracted: true });

describe.each(ENGINES)("webhooks through a fork (%s)", (engine) => {
  const targets: StoreTarget[] = [];
  const stores: Store[] = [];
  afterAll(async () => {
    for (const s of stores) await s.close();
    for (const t of targets) await t.drop();
  });

  /** A store holding everything before the take, the creator as a user with an endpoint for offer.taken. */
  async function setup(finalitySlots: number) {
    got.length = 0;
    const t = freshStore(engine, "whfork");
    targets.push(t);
    const store = await openStore(t.url);
    stores.push(store);
    const w = await StoreWriter.open(store, "t");
    for (const b of batches) await w.apply({ ...b, transactions: b.transactions.filter((x) => x.signature !== take.signature) });
    await migrateCustody(store.db as Kysely<unknown>);
    const db = store.db as unknown as WebhookDb;
    const user = {
      id: "u-creator",
      name: "creator",
      display_name: "Creator",
      wallet: creator,
      token_account: creator,
      wallet_secret_enc: "-",
      wallet_secret_enc_next: null,
      blocked: 0,
      blocked_reason: null,
      created_at: 0,
    };
    await db.insertInto("users").values(user).execute();
    const hooks = new Webhooks(db, ServiceKey.generate(), { ...WEBHOOK_LIMITS, allowLocalTargets: true, finalitySlots });
    const p = { user: { id: user.id }, tokenId: "t", scopes: new Set(["bet:write"]) } as unknown as Principal;
    const endpoint = await hooks.create(p, { url, events: ["offer.taken"] });
    const dispatcher = new WebhookDispatcher(hooks);
    const deliveries = () => db.selectFrom("webhook_deliveries").select(["signature", "state", "event_id"]).execute();
    return { w, dispatcher, deliveries, endpoint };
  }
  const ghostOf = () => ({ ...take, signature: otherSignature(take.signature) });
  const sentFor = (signature: string) => got.filter((g) => JSON.parse(g.body).signature === signature);
  const realId = () => {
    const f = decodeEvents([take]).fills[0];
    return eventId("offer.taken", take.signature, `${f.offer}:${f.revision}`);
  };

  it("with a finality margin the ghost is never derived; the chain's take is, once final", async () => {
    const { w, dispatcher, deliveries, endpoint } = await setup(10);
    const ghost = ghostOf();
    await w.apply(batch(ghost));
    expect(await dispatcher.runOnce()).toMatchObject({ enqueued: 0, attempted: 0 });
    // The fork is found: the ghost retracted and the chain's transaction read from history, one batch.
    await w.apply({ ...batch(take), transactions: [retraction(ghost), { ...take, fromHistory: true }] });
    expect(await dispatcher.runOnce()).toMatchObject({ enqueued: 0 });
    // The chain moves on past the margin.
    await w.apply({ slot: take.slot + 11, writeVersion: 0, accounts: [], transactions: [], cursor: "" });
    expect(await dispatcher.runOnce()).toMatchObject({ enqueued: 1, delivered: 1 });
    expect(await deliveries()).toEqual([{ signature: take.signature, state: "delivered", event_id: realId() }]);
    expect(sentFor(ghost.signature)).toEqual([]);
    const [sent] = sentFor(take.signature);
    expect(sent.headers["webhook-id"]).toBe(realId());
    expect(() => new Webhook(endpoint.secret).verify(sent.body, sent.headers as Record<string, string>)).not.toThrow();
  });

  it("without one, a ghost derived too early is found retracted before its send and never sent", async () => {
    const { w, dispatcher, deliveries } = await setup(0);
    const ghost = ghostOf();
    await w.apply(batch(ghost));
    await dispatcher.derive();
    expect(await deliveries()).toEqual([{ signature: ghost.signature, state: "pending", event_id: expect.any(String) }]);
    await w.apply({ ...batch(take), transactions: [retraction(ghost), { ...take, fromHistory: true }] });
    const r = await dispatcher.runOnce();
    expect(r).toMatchObject({ retracted: 1, delivered: 1 });
    expect((await deliveries()).sort((a, b) => a.state.localeCompare(b.state))).toEqual([
      { signature: take.signature, state: "delivered", event_id: realId() },
      { signature: ghost.signature, state: "retracted", event_id: expect.any(String) },
    ]);
    expect(sentFor(ghost.signature)).toEqual([]);
  });
});
