/**
 * Bulk close (issue #26): one request closes every open offer of the caller in a scope (one
 * contract, one event, one sport, or all), under one idempotency key, and answers each offer with
 * its signature or its refusal; used by REST (`POST /close-all`), GraphQL (`closeAllOffers`) and
 * the dead-man switch (./dead-man-switch.ts).
 *
 * - The offers are chosen from the indexed store (creator = caller, status Open) at the first
 *   request and recorded with their revision as the chain holds it then under (user, key) in `bulk_closes`; a replay with the
 *   same key closes that same list again, which each close answers from its own idempotency row
 *   (key derived from the bulk key and the offer), so nothing is sent twice and the answer is the
 *   same signatures. A replay with another scope is 400, like any write.
 * - On chain one transaction per offer (close_offer of one offer, signed by the caller's custodial
 *   key and the service's wallet), sent one after the other: a refusal of one offer (the state moved,
 *   a taker took it all meanwhile, the write rate) never sinks the others, and each refusal is in
 *   the answer with its status, code and message; nothing is hidden.
 * - A list is kept as long as the idempotency keys (RETENTION_SECONDS, 7 days), then pruned by the
 *   caller's next bulk close.
 * - Limits: the scope holds at most the caller's offers (the holdings cap of ./wallet-guard.ts,
 *   20 by default) and `MAX_BULK_CLOSE` in any case; each close takes one write from the caller's
 *   write bucket like a single close (a 429 refusal per offer when it is empty).
 */
import { createHash } from "node:crypto";
import { z } from "zod";
import type { Kysely } from "kysely";
import { PublicKey } from "@solana/web3.js";
import { decodeOffer, offersAccountKind } from "../../idl/client/offers";
import type { Database } from "../../indexer/store/schema";
import type { CustodyDatabase } from "../custody/schema";
import type { Principal } from "../custody/custody";
import { ApiError } from "../api-error";
import { ChainUnavailableError } from "../chain/gateway";
import { CHAIN_UNREACHABLE } from "./errors";
import type { WriteService } from "./write-service";
import { requestHash } from "./write-service";
import { RETENTION_SECONDS } from "./idempotency";

export const CLOSE_SCOPES = ["contract", "event", "sport", "all"] as const;
export type CloseScope = (typeof CLOSE_SCOPES)[number];

/** Offers one bulk close handles at most (far above the default holdings cap of 20). */
export const MAX_BULK_CLOSE = 200;

const key = z
  .string({ error: "idempotencyKey must be a string of 8 to 128 characters" })
  .refine((s) => [...s].length >= 8 && [...s].length <= 128, { message: "idempotencyKey must be 8 to 128 characters" });
const name = (field: string) =>
  z
    .string({ error: `${field} must be a string` })
    .min(1, { message: `${field} must not be empty` })
    .max(200, { message: `${field} must be at most 200 characters` });

/** The body of POST /close-all (and the GraphQL input). */
export const CloseAllBody = z
  .object({
    scope: z
      .enum(CLOSE_SCOPES, { error: `scope must be one of ${CLOSE_SCOPES.join(", ")}` })
      .describe("Which open offers of the caller: one contract, one event, one sport, or all"),
    contract: z
      .string()
      .regex(/^[1-9A-HJ-NP-Za-km-z]{32,44}$/, { message: "contract must be a base58 address" })
      .optional()
      .describe("With scope contract: the contract's address"),
    event: name("event").optional().describe("With scope event: the contract catalog's event, exactly as the reads show it"),
    sport: name("sport").optional().describe("With scope sport: the contract catalog's sport, exactly as the reads show it"),
    idempotencyKey: key.describe("8 to 128 characters; a replay with the same key answers the same offers and signatures"),
  })
  .strict()
  .superRefine((b, ctx) => {
    for (const f of ["contract", "event", "sport"] as const) {
      if (b.scope === f && b[f] === undefined) ctx.addIssue({ code: "custom", message: `scope ${f} needs the field ${f}` });
      if (b.scope !== f && b[f] !== undefined) ctx.addIssue({ code: "custom", message: `${f} is only taken with scope ${f}` });
    }
  });
export type CloseAllRequest = z.infer<typeof CloseAllBody>;

export function parseCloseAll(body: unknown): CloseAllRequest {
  const r = CloseAllBody.safeParse(body);
  if (!r.success) throw new ApiError(400, r.error.issues.map((i) => i.message).join("; "));
  return r.data;
}

export interface BulkCloseItem {
  offerAddress: string;
  contract: string;
  /** "pending": submitted, with its signature; "refused": not closed, with why. */
  status: "pending" | "refused";
  signature: string | null;
  refundMicros: string | null;
  /** The refusal's HTTP status, code and message, as a single close would answer it. */
  httpStatus: number | null;
  code: string | null;
  error: string | null;
}

export interface BulkCloseResponse {
  scope: CloseScope;
  /** Offers in scope (each one below). */
  requested: number;
  closed: number;
  refused: number;
  /** Transactions sent: one per closed offer. */
  transactions: number;
  results: BulkCloseItem[];
}

interface ListedOffer {
  address: string;
  contract: string;
  revision: string;
}

export class BulkClose {
  private readonly db: Kysely<Database & CustodyDatabase>;

  constructor(readonly writes: WriteService) {
    this.db = writes.deps.custody.db as unknown as Kysely<Database & CustodyDatabase>;
  }

  /** The caller's open offers in scope, from the store, oldest first. */
  async openOffers(wallet: string, req: Pick<CloseAllRequest, "scope" | "contract" | "event" | "sport">): Promise<ListedOffer[]> {
    let q = this.db
      .selectFrom("offers")
      .leftJoin("contract_catalog", "contract_catalog.contract", "offers.contract")
      .select(["offers.address as address", "offers.contract as contract", "offers.revision as revision"])
      .where("offers.creator", "=", wallet)
      .where("offers.status", "=", "Open")
      .where("offers.deleted", "=", 0);
    if (req.scope === "contract") q = q.where("offers.contract", "=", req.contract!);
    if (req.scope === "event") q = q.where("contract_catalog.event", "=", req.event!);
    if (req.scope === "sport") q = q.where("contract_catalog.sport", "=", req.sport!);
    const rows = await q.orderBy("offers.created_at").orderBy("offers.address").limit(MAX_BULK_CLOSE).execute();
    // The revision each close expects is the chain's now (the store may not have applied the last take yet).
    const accounts = rows.length
      ? await this.writes.deps.gateway.getAccounts(rows.map((r) => new PublicKey(r.address))).catch((e) => {
          if (e instanceof ChainUnavailableError) throw new ApiError(503, CHAIN_UNREACHABLE);
          throw e;
        })
      : [];
    return rows.map((r, i) => {
      const a = accounts[i];
      const onChain = a && a.owner.equals(this.writes.client.program.programId) && offersAccountKind(a.data) === "offer" ? decodeOffer(a.data) : null;
      return { address: r.address, contract: r.contract, revision: String(onChain?.revision ?? r.revision) };
    });
  }

  /** `requestId`: the HTTP request it is made in (none from the dead-man switch), logged with its transactions. */
  async closeAll(p: Principal, body: unknown, reason = "request", requestId?: string): Promise<BulkCloseResponse> {
    const req = parseCloseAll(body);
    const hash = requestHash("close-all", "", { scope: req.scope, contract: req.contract, event: req.event, sport: req.sport });
    const offers = await this.listFor(p.user.id, req.idempotencyKey, hash, reason, () => this.openOffers(p.user.wallet.toBase58(), req));
    const results: BulkCloseItem[] = [];
    for (const o of offers) results.push(await this.closeOne(p, req.idempotencyKey, o, requestId));
    const closed = results.filter((r) => r.status === "pending").length;
    return { scope: req.scope, requested: results.length, closed, refused: results.length - closed, transactions: closed, results };
  }

  /** The offers recorded under (user, key): chosen now at the first request, the recorded ones on a replay. */
  private async listFor(userId: string, idemKey: string, hash: string, reason: string, choose: () => Promise<ListedOffer[]>): Promise<ListedOffer[]> {
    const existing = await this.recorded(userId, idemKey);
    if (existing) return this.check(existing, hash);
    const offers = await choose();
    // The caller's lists older than the idempotency keys' retention go (a key that old is a new request anyway).
    await this.db
      .deleteFrom("bulk_closes")
      .where("user_id", "=", userId)
      .where("created_at", "<", Math.floor(Date.now() / 1000) - RETENTION_SECONDS)
      .execute();
    await this.db
      .insertInto("bulk_closes")
      .values({
        user_id: userId,
        idem_key: idemKey,
        request_hash: hash,
        offers_json: JSON.stringify(offers),
        reason,
        created_at: Math.floor(Date.now() / 1000),
      })
      .onConflict((oc) => oc.columns(["user_id", "idem_key"]).doNothing())
      .execute();
    // A concurrent request with the same key may have recorded its list first: that one holds.
    return this.check((await this.recorded(userId, idemKey))!, hash);
  }

  private async recorded(userId: string, idemKey: string) {
    return this.db
      .selectFrom("bulk_closes")
      .select(["request_hash", "offers_json"])
      .where("user_id", "=", userId)
      .where("idem_key", "=", idemKey)
      .executeTakeFirst();
  }

  private check(row: { request_hash: string; offers_json: string }, hash: string): ListedOffer[] {
    if (row.request_hash !== hash) throw new ApiError(400, "idempotencyKey was already used with another scope");
    return JSON.parse(row.offers_json) as ListedOffer[];
  }

  private async closeOne(p: Principal, bulkKey: string, o: ListedOffer, requestId: string | undefined): Promise<BulkCloseItem> {
    try {
      const r = await this.writes.close(p, o.address, { expectedRevision: o.revision, idempotencyKey: offerKey(bulkKey, o.address) }, requestId);
      return {
        offerAddress: o.address,
        contract: o.contract,
        status: "pending",
        signature: r.signature,
        refundMicros: r.refundMicros,
        httpStatus: null,
        code: null,
        error: null,
      };
    } catch (e) {
      // Anything unexpected is logged and reported for this offer like a single close's 503; the others go on.
      if (!(e instanceof ApiError)) this.writes.deps.onInternalError?.(e);
      const err = e instanceof ApiError ? e : new ApiError(503, "temporarily unavailable; retry with the same idempotencyKey");
      return {
        offerAddress: o.address,
        contract: o.contract,
        status: "refused",
        signature: null,
        refundMicros: null,
        httpStatus: err.status,
        code: err.code,
        error: err.message,
      };
    }
  }
}

/** The idempotency key of one offer's close within a bulk close: derived, so that a replay finds it. */
export function offerKey(bulkKey: string, offer: string): string {
  return `bulk:${createHash("sha256").update(bulkKey).digest("hex").slice(0, 24)}:${offer}`;
}
