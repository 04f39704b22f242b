/**
 * The GraphQL response cache: yoga's response-cache plugin, keyed so an answer is never served
 * after the data under it moved, nor to another caller.
 *
 * - Key: the document, variables and operation name, the session (the caller's wallet; none for
 *   anonymous callers, who share one entry), the version of the blocked set (a compliance block
 *   changes canTake without an indexed write), the store's generation as ReadService knows it
 *   (ReadService.generation(): every write heard, or a polled move of the checkpoint slot and write
 *   version) and the chain second. Any committed indexer write makes a new key, so lists gain new offers at once too, which
 *   invalidation by entity cannot see (a new offer is in no cached answer yet); the chain second
 *   because viewer fields (canTake, open contracts) depend on chain time.
 * - With a change feed, each announced write moves the generation at once (the store is not read)
 *   and drops the entries that hold a changed offer, position, pool or contract (entity
 *   invalidation by the global ids the plugin records); without one, ReadService reads the
 *   position from the store at most every 100 ms.
 * - Entries live `ttlMs` (default 1 s), swept when they expire, within a ceiling in bytes
 *   (./response-cache-store.ts). Mutations are never cached; answers with errors are never
 *   cached (the plugin's defaults). A cached answer carries an ETag; a client sending it back in
 *   If-None-Match gets 304 while it is current.
 */
import { createHash } from "node:crypto";
import { useResponseCache } from "@graphql-yoga/plugin-response-cache";
import { ResponseCacheStore } from "./response-cache-store";
import { getOperationAST, parse } from "graphql";
import type { Plugin } from "graphql-yoga";
import type { ChangeFeed } from "../indexer";
import type { ReadService } from "../service/read/read-service";
import type { ReadViewer } from "../service/read/viewer";

export interface ResponseCacheOptions {
  read: ReadService;
  ttlMs: number;
  changes?: ChangeFeed | null;
  /** The Relay global id of a node (entity invalidation uses the ids the answers carry). */
  globalId: (typename: string, id: string) => string;
  /** Ceiling of the answers kept (estimated bytes); default RESPONSE_CACHE_MAX_BYTES (./response-cache-store.ts). */
  maxBytes?: number;
}

export function graphqlResponseCache(o: ResponseCacheOptions): { plugin: Plugin; close(): void; store: ResponseCacheStore } {
  const cache = new ResponseCacheStore(o.maxBytes);
  const unsubscribe = o.changes?.subscribe((c) => {
    const entities = [
      ...c.offers.flatMap((a) => [
        { typename: "Offer", id: o.globalId("Offer", a) },
        { typename: "ShareableOffer", id: o.globalId("ShareableOffer", a) },
      ]),
      ...c.positions.map((a) => ({ typename: "ViewerPosition", id: o.globalId("ViewerPosition", a) })),
      ...c.contracts.map((a) => ({ typename: "Contract", id: o.globalId("Contract", a) })),
      ...c.pools.map((a) => ({ typename: "PoolAggregate", id: o.globalId("PoolAggregate", a) })),
    ];
    if (entities.length) void cache.invalidate(entities);
  });
  const keys = new WeakMap<Request, string>();
  const plugin = useResponseCache<{ viewer?: Promise<ReadViewer | null> }>({
    cache,
    ttl: o.ttlMs,
    enabled: () => o.ttlMs > 0,
    // Per viewer: the server resolved the token before yoga ran (an invalid one never gets here).
    session: async (_request, ctx) => {
      const v = await ctx.viewer;
      return v ? `wallet:${v.wallet}` : null;
    },
    // node's hash, synchronous: the plugin's own (WebCrypto) costs a promise round per request.
    buildResponseCacheKey: async (p) => {
      const key = createHash("sha256")
        .update(
          JSON.stringify([
            p.documentString,
            p.variableValues ?? null,
            p.operationName ?? null,
            p.sessionId ?? null,
            // Compliance blocks change canTake without an indexed write (REST keys on it too).
            o.read.blockedVersion(),
            // The store's generation, the one REST's caches keep to (ReadService.generation()).
            await o.read.generation(),
            await o.read.now(),
          ]),
        )
        .digest("hex");
      keys.set(p.request, key);
      return key;
    },
  });
  const enabled = o.ttlMs > 0;
  return {
    plugin: {
      // Off (ttl 0), none of it is added: yoga's plugin builds each request's key (a digest, the
      // store's generation, the chain clock) in onParams even when its `enabled` says no.
      onPluginInit: ({ addPlugin }) => {
        if (!enabled) return;
        addPlugin(plugin);
        addPlugin(shareMisses(keys, (key) => cache.peek(key)));
        addPlugin(serializeHitsOnce());
      },
    },
    close: () => unsubscribe?.(),
    store: cache,
  };
}

/** How long a request waits for another's identical query before running it itself. */
const SHARED_MISS_WAIT_MS = 5_000;

/**
 * Queries that miss the cache under the same key while that key's answer is being computed wait
 * for it instead of executing again: when an answer expires under load, the requests already
 * queued would otherwise each execute the same document (50 offers with viewer fields) in a row.
 * Only queries (never mutations or subscriptions); an answer with errors, or none within
 * SHARED_MISS_WAIT_MS, lets the waiters run their own.
 */
function shareMisses(keys: WeakMap<Request, string>, cached: (key: string) => unknown): Plugin {
  type Answer = Record<string | symbol, unknown> | null;
  const running = new Map<string, Promise<Answer>>();
  const leaders = new WeakMap<Request, (answer: Answer) => void>();
  return {
    onParams({ params, request, setResult }) {
      const key = keys.get(request);
      if (key === undefined || !params.query || cached(key) || !isQuery(params.query, params.operationName ?? undefined)) return;
      const pending = running.get(key);
      if (pending)
        return pending.then((answer) => {
          if (answer) setResult({ ...answer, [SERVED_FROM_CACHE]: true } as never);
        });
      let settle!: (answer: Answer) => void;
      const answer = new Promise<Answer>((resolve) => (settle = resolve));
      const timer = setTimeout(() => finish(null), SHARED_MISS_WAIT_MS).unref();
      const finish = (a: Answer) => {
        clearTimeout(timer);
        if (running.get(key) === answer) running.delete(key);
        leaders.delete(request);
        settle(a);
      };
      running.set(key, answer);
      leaders.set(request, finish);
    },
    onResultProcess({ request, result }) {
      const finish = leaders.get(request);
      if (!finish) return;
      const r = result as Answer;
      finish(!Array.isArray(r) && r && typeof r === "object" && !r.errors && r.data ? r : null);
    },
  };
}

/**
 * Whether a document's operation is a query, parsed once per document (kept by digest, a bounded
 * number). This runs before yoga's parse and the armor's limits, so it sets its own: the armor's
 * token limit, and no sharing for a document longer than any the armor lets through.
 */
const operationKinds = new Map<string, string | null>();
const MAX_SHARED_DOCUMENT = 16_384;
function isQuery(document: string, operationName: string | undefined): boolean {
  if (document.length > MAX_SHARED_DOCUMENT) return false;
  const k = createHash("sha256")
    .update(`${operationName ?? ""}\u0000${document}`)
    .digest("base64");
  let kind = operationKinds.get(k);
  if (kind === undefined) {
    try {
      kind = getOperationAST(parse(document, { maxTokens: 2_000, noLocation: true }), operationName)?.operation ?? null;
    } catch {
      kind = null;
    }
    if (operationKinds.size >= 1_000) operationKinds.delete(operationKinds.keys().next().value!);
    operationKinds.set(k, kind);
  }
  return kind === "query";
}

const SERVED_FROM_CACHE = Symbol.for("servedFromResponseCache");

/**
 * A cached answer is serialised once: every hit hands yoga a copy of the same stored result, whose
 * `data` object is the one kept, and yoga's JSON processor stringifies a result through its own
 * `stringify` when it has one (a page of 50 offers costs more to stringify than the rest of a hit).
 */
function serializeHitsOnce(): Plugin {
  const bodies = new WeakMap<object, string>();
  return {
    onResultProcess({ result }) {
      if (Array.isArray(result) || !result || typeof result !== "object" || !(SERVED_FROM_CACHE in result)) return;
      const hit = result as { data?: unknown; errors?: unknown; stringify?: (r: unknown) => string };
      const data = hit.data;
      if (!data || typeof data !== "object" || hit.errors) return;
      hit.stringify = (sanitized) => {
        let body = bodies.get(data);
        if (body === undefined) bodies.set(data, (body = JSON.stringify(sanitized)));
        return body;
      };
    },
  };
}
