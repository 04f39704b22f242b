/**
 * Dedicated PostgreSQL sessions (one pg.Client each, outside the store's pool) for what lives in a
 * session rather than in a query: an advisory lock held for as long as a process leads
 * (service/leadership), and LISTEN for change notifications (service/changes). Both must notice a
 * dead session fast, so each session gets a heartbeat: a `SELECT 1` every `everyMs` that must answer
 * within `timeoutMs`; a failed or late one, a socket error or the end of the connection is the end
 * of the session, reported once.
 *
 * The server side is told to probe the client's socket too (TCP keepalives on the session, and a
 * 10 s bound on unacknowledged data), so a client that vanished without closing (power loss,
 * network partition) loses its session, and its locks, in about 5 + 2 x 3 = 11 s (10 s when the
 * server was sending); a client killed by a signal closes its socket at once. The client's own
 * heartbeat gives up sooner (at most 1 + 5 s), so a cut-off leader stops before its lock is free.
 */
import pg from "pg";

/** Where a store URL points: the connection string without `?schema=` and the schema it selects. */
export function pgTarget(storeUrl: string): { connectionString: string; schema: string } {
  const u = new URL(storeUrl);
  const schema = u.searchParams.get("schema") ?? "public";
  if (!/^[a-z_][a-z0-9_]*$/.test(schema)) throw new Error(`bad schema name ${schema}`);
  u.searchParams.delete("schema");
  return { connectionString: u.toString(), schema };
}

export interface SessionOptions {
  /** Heartbeat period (default 1000 ms). */
  everyMs?: number;
  /** How long a heartbeat may take before the session counts as dead (default 5000 ms). */
  timeoutMs?: number;
}

export interface Session {
  client: pg.Client;
  /** The server process of this session (pg_terminate_backend ends it: tests, operators). */
  pid: number;
  /** Resolves when the session ended (error, end, failed heartbeat, or close()). */
  ended: Promise<string>;
  close(): Promise<void>;
}

/** Opens a session and starts its heartbeat; `ended` says why it stopped. */
export async function openSession(storeUrl: string, o: SessionOptions = {}): Promise<Session> {
  const { connectionString } = pgTarget(storeUrl);
  const client = new pg.Client({
    connectionString,
    keepAlive: true,
    keepAliveInitialDelayMillis: 5_000,
    options: "-c tcp_keepalives_idle=5 -c tcp_keepalives_interval=2 -c tcp_keepalives_count=3 -c tcp_user_timeout=10000",
  });
  let finish!: (why: string) => void;
  let done = false;
  const ended = new Promise<string>((r) => (finish = r));
  let timer: NodeJS.Timeout | null = null;
  const end = (why: string) => {
    if (done) return;
    done = true;
    if (timer) clearTimeout(timer);
    // A half-dead socket would keep the client (and this process) waiting: cut it.
    const conn = (client as unknown as { connection?: { stream?: { destroy(): void } } }).connection;
    conn?.stream?.destroy();
    finish(why);
  };
  client.on("error", (e) => end(`session error: ${e.message}`));
  client.on("end", () => end("session ended"));
  await client.connect();
  const pid = Number((await client.query<{ pid: number }>("SELECT pg_backend_pid() AS pid")).rows[0].pid);
  const everyMs = o.everyMs ?? 1_000;
  const timeoutMs = o.timeoutMs ?? 5_000;
  const beat = () => {
    timer = setTimeout(async () => {
      const late = setTimeout(() => end(`heartbeat: no answer within ${timeoutMs} ms`), timeoutMs);
      try {
        await client.query("SELECT 1");
        clearTimeout(late);
        if (!done) beat();
      } catch (e) {
        clearTimeout(late);
        end(`heartbeat failed: ${(e as Error).message}`);
      }
    }, everyMs);
    timer.unref();
  };
  beat();
  return {
    client,
    pid,
    ended,
    async close() {
      if (done) return;
      done = true;
      if (timer) clearTimeout(timer);
      finish("closed");
      await client.end().catch(() => undefined);
    },
  };
}

export const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));
