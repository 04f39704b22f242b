/**
 * One load run of the HTTP benchmarks: autocannon in a process of its own against `url`, and this
 * process's CPU time per answered request meanwhile. The benchmarks run the server (and the bare
 * handler beside it) in this process, so that CPU is the server's; under load from other work
 * wall-clock figures scatter, CPU per request much less.
 */
import { execFile } from "node:child_process";
import { join } from "node:path";
import { promisify } from "node:util";

const run = promisify(execFile);
const AUTOCANNON = join(import.meta.dirname, "..", "node_modules", ".bin", "autocannon");

export interface LoadOptions {
  connections: number;
  /** Seconds. */
  duration: number;
  /** Sent as `Authorization: Bearer <token>`. */
  token?: string;
  /** A JSON body, POSTed. */
  post?: string;
  /** Answers other than 2xx are expected (a 404 measured): counted, not refused. */
  allowNon2xx?: boolean;
}

export interface LoadResult {
  rps: number;
  /** Latency percentiles, ms. */
  p50: number;
  p99: number;
  /** Answered requests. */
  total: number;
  non2xx: number;
  /** This process's CPU time (user + system) per answered request, µs. */
  cpuUs: number;
}

/** Runs the load; throws when a request failed, or answered other than 2xx unless `allowNon2xx`. */
export async function load(url: string, o: LoadOptions): Promise<LoadResult> {
  const args = ["-j", "-c", String(o.connections), "-d", String(o.duration)];
  if (o.token) args.push("-H", `authorization=Bearer ${o.token}`);
  if (o.post) args.push("-m", "POST", "-H", "content-type=application/json", "-b", o.post);
  args.push(url);
  const cpu = process.cpuUsage();
  const { stdout } = await run(AUTOCANNON, args, { maxBuffer: 1 << 24 });
  const used = process.cpuUsage(cpu);
  const j = JSON.parse(stdout) as { requests: { average: number; total: number }; latency: { p50: number; p99: number }; errors: number; non2xx: number };
  if (j.errors || (j.non2xx && !o.allowNon2xx)) throw new Error(`${url}: ${j.errors} errors, ${j.non2xx} non-2xx`);
  return {
    rps: j.requests.average,
    p50: j.latency.p50,
    p99: j.latency.p99,
    total: j.requests.total,
    non2xx: j.non2xx,
    cpuUs: (used.user + used.system) / Math.max(1, j.requests.total),
  };
}
