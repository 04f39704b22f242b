/**
 * Every REST route on one OpenAPIHono: the offers reads and writes under OFFERS_BASE, the pool
 * embed under EMBED_BASE, and the OpenAPI 3.1 document of them all at OFFERS_BASE/openapi.json,
 * generated from the zod schemas the routes validate with (committed as docs/openapi.json).
 */
import { OpenAPIHono } from "@hono/zod-openapi";
import type { Custody } from "../../service/custody/custody";
import type { ReadService } from "../../service/read/read-service";
import type { WriteService } from "../../service/writes/write-service";
import { embedRoutes, readRoutes } from "./read-routes";
import { bookRoutes } from "./book-routes";
import { historyRoutes } from "./history-routes";
import { quoteRoutes } from "./quote-routes";
import { writeRoutes } from "./write-routes";
import { portfolioRoutes } from "./portfolio-routes";
import type { DeadManSwitches } from "../../service/writes/dead-man-switch";
import type { Webhooks } from "../../service/webhooks/endpoints";
import { webhookRoutes } from "./webhook-routes";
import { documentActions } from "./action-docs";
import type { ErrorLog } from "../../service/observability/log";
import type { RequestReads } from "../read-admission";

export const OFFERS_BASE = "/api/bets-usdc/offers";
export const EMBED_BASE = "/api/embed/v1";
export const OPENAPI_PATH = `${OFFERS_BASE}/openapi.json`;

export interface RestDeps {
  read: ReadService;
  /** The read service a request's reads go through (graphql/read-admission.ts callerReads: as its caller); default `read`. */
  reads?: RequestReads;
  custody: Custody | null;
  /** Without it the write routes are not served (the document still describes them). */
  writes?: WriteService | null;
  /** The dead-man switches the routes arm (service/writes/dead-man-switch.ts); without it they answer 503. */
  deadMan?: DeadManSwitches | null;
  /** The users' webhooks (service/webhooks/endpoints.ts); without it the routes answer 503. */
  webhooks?: Webhooks | null;
  log?: ErrorLog;
}

/** The issue-26 routes (portfolio, bulk close, dead-man switch, webhooks) under OFFERS_BASE. */
function portfolioApp(d: RestDeps, writes: WriteService | null): OpenAPIHono {
  const app = new OpenAPIHono({ strict: false });
  app.route(OFFERS_BASE, portfolioRoutes({ db: d.read?.db, custody: d.custody, writes, deadMan: d.deadMan ?? null, log: d.log }));
  app.route(OFFERS_BASE, webhookRoutes({ custody: d.custody, webhooks: d.webhooks ?? null, log: d.log }));
  return app;
}

/** `portfolio`: the issue-26 routes last (the document lists them after the others; restApi serves them first). */
function routes(d: RestDeps, writes: WriteService | null, portfolio = false): OpenAPIHono {
  const app = new OpenAPIHono({ strict: false });
  app.openAPIRegistry.registerComponent("securitySchemes", "bearer", {
    type: "http",
    scheme: "bearer",
    description: "a Personal Access Token; writes need the bet:write scope",
  });
  if (writes) app.route(OFFERS_BASE, writeRoutes(writes, { log: d.log }));
  const reads = d.reads ?? (() => d.read);
  app.route(OFFERS_BASE, readRoutes(reads, d.custody, { log: d.log }));
  app.route(OFFERS_BASE, bookRoutes(reads, d.custody, { log: d.log }));
  app.route(OFFERS_BASE, historyRoutes(reads, { log: d.log }));
  app.route(OFFERS_BASE, quoteRoutes(reads, d.custody, { log: d.log }));
  app.route(EMBED_BASE, embedRoutes(reads, { log: d.log }));
  if (portfolio) app.route("/", portfolioApp(d, writes));
  return app;
}

/** The OpenAPI 3.1 document of the REST API (the services are never called to build it). */
export function openApiDocument(): object {
  const app = routes({ read: null as never, custody: null }, {} as WriteService, true);
  documentActions(app);
  return app.getOpenAPI31Document({
    openapi: "3.1.0",
    info: {
      title: "Fixed-odds offers and pool aggregates",
      version: "1.0.0",
      description:
        "Offers API (reads, and writes submitted on-chain on the caller's behalf) and the public pool aggregate embed. " +
        "Amounts are decimal strings of micro-units. Errors are {error: message}. See docs/api-guide.md.",
    },
    tags: [
      { name: "offers", description: "fixed-odds offers (base path /api/bets-usdc/offers)" },
      { name: "embed", description: "pool market aggregates, server-to-server" },
      { name: "webhooks", description: "signed HTTPS callbacks for the caller's offers and positions (docs/api-guide.md, Webhooks)" },
      { name: "actions", description: "Solana Actions (any origin): an offer or poll as a transaction for the visitor's own wallet" },
    ],
  });
}

/** docs/openapi.json as committed: the document, two-space indented, with a final newline. */
export function openApiJson(): string {
  return JSON.stringify(openApiDocument(), null, 2) + "\n";
}

export function restApi(d: RestDeps): OpenAPIHono {
  const app = new OpenAPIHono({ strict: false });
  // Before the offers routes: "/openapi.json" would otherwise be read as an offer address.
  let doc: string | null = null;
  app.get(OPENAPI_PATH, (c) => c.body((doc ??= openApiJson()), 200, { "content-type": "application/json; charset=utf-8" }));
  // Before the reads: their "/{address}" would otherwise take "/portfolio" and the others.
  app.route("/", portfolioApp(d, d.writes ?? null));
  app.route("/", routes(d, d.writes ?? null));
  return app;
}
