/**
 * The HTTP benchmarks' baseline: a bare node:http + better-sqlite3 server on a second, read-only
 * connection to the store's SQLite file, answering the read API's main requests with the same
 * SQL the service runs and the viewer part a signed-in caller gets (token digest -> user, the
 * page or offer, its count, the caller's positions on it, the blocked flags), shaped minimally.
 * What the app costs beyond it is the framework, the layers and the shaping.
 *
 *   /browse (20 newest), /offer?a=<address>, /mine (the caller's 20), /gql50 (50 newest, as the
 *   GraphQL page), /embed?s=<slug> (a pool and its outcomes)
 */
import { createHash } from "node:crypto";
import { createServer } from "node:http";
import Database from "better-sqlite3";

export interface BareReads {
  url: string;
  close(): Promise<void>;
}

export async function bareReads(storeFile: string): Promise<BareReads> {
  const db = new Database(storeFile, { readonly: true });
  const joined = "from offers o join contracts c on c.address = o.contract join contract_catalog cc on cc.contract = o.contract";
  const offerColumns = `select o.*, c.cutoff_at k_cutoff_at, c.status k_status, cc.title, cc.event, cc.sport, cc.competition, cc.side_a_label, cc.side_b_label, cc.visuals_json ${joined}`;
  const page = (n: number) => db.prepare(`${offerColumns} order by o.created_at desc, o.address limit ${n} offset 0`);
  const browse20 = page(20);
  const browse50 = page(50);
  const count = db.prepare(`select count(*) n ${joined}`);
  const one = db.prepare(`${offerColumns} where o.address = ?`);
  const mineWhere = `where o.creator = @w or exists (select 1 from positions p where p.offer = o.address and p.taker = @w)`;
  const mine = db.prepare(`${offerColumns} ${mineWhere} order by o.created_at desc, o.address limit 20 offset 0`);
  const mineCount = db.prepare(`select count(*) n ${joined} ${mineWhere}`);
  const tokenUser = db.prepare(`select u.wallet, t.revoked_at, t.expires_at from access_tokens t join users u on u.id = t.user_id where t.token_hash = ?`);
  const positions = db.prepare(`select * from positions where taker = ? and offer in (select value from json_each(?))`);
  const blocked = db.prepare(`select wallet from users where blocked = 1 and wallet in (select value from json_each(?))`);
  const pool = db.prepare(`select p.*, pc.slug from pool_catalog pc join pools p on p.address = pc.pool where pc.slug = ?`);
  const outcomes = db.prepare(`select * from pool_outcomes where pool = ? order by outcome_index`);
  type Row = { address: string; creator: string };
  /** The viewer part: the caller's position per offer, role, blocked flags. */
  const withViewer = (rows: Row[], wallet: string | null) => {
    if (wallet === null) return rows;
    const held = new Map((positions.all(wallet, JSON.stringify(rows.map((r) => r.address))) as { offer: string }[]).map((x) => [x.offer, x]));
    const flagged = new Set((blocked.all(JSON.stringify([wallet, ...rows.map((r) => r.creator)])) as { wallet: string }[]).map((x) => x.wallet));
    return rows.map((r) => ({
      ...r,
      viewer: {
        role: r.creator === wallet ? "creator" : held.has(r.address) ? "taker" : "none",
        canTake: !flagged.has(wallet),
        position: held.get(r.address) ?? null,
      },
    }));
  };
  const server = createServer((req, res) => {
    const url = new URL(req.url ?? "/", "http://x");
    const auth = req.headers.authorization;
    let wallet: string | null = null;
    if (auth) {
      const t = tokenUser.get(createHash("sha256").update(auth.slice(7)).digest("hex")) as { wallet: string; revoked_at: number | null } | undefined;
      if (!t || t.revoked_at !== null) {
        res.writeHead(401).end();
        return;
      }
      wallet = t.wallet;
    }
    let body: unknown;
    if (url.pathname === "/browse") body = { offers: withViewer(browse20.all() as Row[], wallet), total: (count.get() as { n: number }).n };
    else if (url.pathname === "/offer") body = withViewer([one.get(url.searchParams.get("a")) as Row], wallet)[0];
    else if (url.pathname === "/mine")
      body = { offers: withViewer(mine.all({ w: wallet }) as Row[], wallet), total: (mineCount.get({ w: wallet }) as { n: number }).n };
    else if (url.pathname === "/gql50")
      body = { data: { offers: { totalCount: (count.get() as { n: number }).n, edges: withViewer(browse50.all() as Row[], wallet) } } };
    else if (url.pathname === "/embed") {
      const p = pool.get(url.searchParams.get("s")) as { address: string } | undefined;
      body = { data: p ? { ...p, outcomes: outcomes.all(p.address) } : null, error: null };
    }
    res.writeHead(200, { "content-type": "application/json" });
    res.end(JSON.stringify(body));
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  return {
    url: `http://127.0.0.1:${(server.address() as { port: number }).port}`,
    close: async () => {
      await new Promise<void>((r) => server.close(() => r()));
      db.close();
    },
  };
}
