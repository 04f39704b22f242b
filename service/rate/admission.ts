/**
 * Read admission: the rule for who runs next when expensive reads (GraphQL query executions, REST
 * reads that miss the read cache) outnumber the process's thread. At most `concurrency` run at
 * once; the others wait, each in its caller's queue (service/rate/caller-key.ts callerKey: the
 * token when signed in, else the address group, IPv6 by /64), and when a read finishes the next
 * to run is the head of the queue of the caller with
 *
 *   1. the fewest reads running now, then
 *   2. the lowest recent rate: its reads admitted, each counting 1, halved every
 *      COST_HALF_LIFE_MS, divided by what a steady rate of one read a second would have added up
 *      to since the caller was first seen (at least RATE_WINDOW_MIN_MS ago; so a caller seen for
 *      a second is judged on that second, not on the history an older caller has had the time to
 *      build), then
 *   3. the earliest arrival.
 *
 * So a caller with nothing in flight and few recent reads goes first, and one that keeps requests
 * queued waits behind everyone else's first. Beyond `queuePerCaller` waiting for one caller, or
 * `queueTotal` in all, a read is refused at once: ApiError 429 with Retry-After (REST
 * `{error, code}`; GraphQL an error coded TOO_MANY_REQUESTS with HTTP 429). A read without a
 * caller runs at once: the worker's, live updates', a GraphQL resolver's (its execution as a whole
 * waited for its turn), and the reads a REST request makes while one of its own runs
 * (ReadService.forCaller). The caller is always passed in, never looked up from an async context
 * (docs/service-guide.md, "Request ids": an AsyncLocalStorage hooks every promise of the process).
 *
 * Reads are counted, not timed (BENCHMARKS.md, "distinct-query load"). A read's wall time on a
 * loop it shares with every other request, on a machine shared with other work, measures the loop
 * and the machine more than the read: under issue 21's distinct-query load, reads of the same page
 * ran 3 ms at the median, 24 at p90 and 113 at p99. Charged by wall time (each read at most 50 ms),
 * one unlucky read made the light normal caller the heaviest of all, and its next reads waited
 * 5-11 s behind 100 closed-loop callers until its charge decayed. A caller's rate is judged since
 * it was first seen: counted from zero, 100 new callers each went before an older light caller
 * until they had caught up with its history (its read waited 9.5 s at the load's start). Charging the time a caller's
 * reads spend waiting as well (its occupancy of the server) was tried and dropped: a caller that
 * waited long became heavier and waited longer still (one load caller 29 s).
 *
 * Written here rather than taken from p-queue: p-queue fixes a task's priority when it is added,
 * where this rule is decided when a slot frees (the rates move while reads wait), and the bounds
 * and refusals per caller would be ours either way.
 */
import { ApiError } from "../api-error";
import type { AdmissionLimits } from "./admission-limits";

export { DEFAULT_ADMISSION_LIMITS, type AdmissionLimits } from "./admission-limits";

/** A caller's recent reads halve every 10 s: a burst a minute ago hardly counts, one this second does. */
export const COST_HALF_LIFE_MS = 10_000;

/**
 * The shortest time a caller's rate is judged over: a new caller's second read a few milliseconds
 * after its first is two reads in a second, not a thousand a second.
 */
export const RATE_WINDOW_MIN_MS = 1_000;

/** A read refused by admission (a 429 the GraphQL layer turns into its own error shape). */
export class AdmissionRefused extends ApiError {}

interface Caller {
  /** Reads admitted, decayed to `at`. */
  cost: number;
  at: number;
  /** When the caller was first seen (its record made). */
  since: number;
  running: number;
  waiting: { seq: number; go: () => void }[];
}

export interface AdmissionStats {
  running: number;
  waiting: number;
  admitted: number;
  refused: number;
}

export class ReadAdmission {
  private readonly callers = new Map<string, Caller>();
  /** Callers with a read waiting. */
  private readonly queued = new Set<Caller>();
  private running = 0;
  private waiting = 0;
  private seq = 0;
  private admitted = 0;
  private refused = 0;
  private swept = 0;
  private scheduled = false;

  constructor(
    readonly limits: AdmissionLimits,
    private readonly clock: () => number = () => performance.now(),
  ) {}

  /** An expensive read of caller `key`: runs when admitted; AdmissionRefused (429) over a bound. Without a key, at once. */
  run<T>(read: () => Promise<T>, key?: string): Promise<T> {
    if (this.limits.concurrency <= 0 || key === undefined) return read();
    const c = this.caller(key);
    if (this.running < this.limits.concurrency && this.waiting === 0) {
      this.take(c, this.clock());
      return this.execute(c, read);
    }
    if (c.waiting.length >= this.limits.queuePerCaller) return this.refuse(`at most ${this.limits.queuePerCaller} reads of one caller wait at once`);
    if (this.waiting >= this.limits.queueTotal) return this.refuse(`the server has ${this.limits.queueTotal} reads waiting`);
    return new Promise<void>((go) => {
      c.waiting.push({ seq: this.seq++, go });
      this.waiting++;
      this.queued.add(c);
    }).then(() => this.execute(c, read));
  }

  stats(): AdmissionStats {
    return { running: this.running, waiting: this.waiting, admitted: this.admitted, refused: this.refused };
  }

  private refuse(why: string): Promise<never> {
    this.refused++;
    return Promise.reject(
      new AdmissionRefused(429, `too many reads waiting: ${why}; retry in ${this.limits.retryAfterSeconds} s`, this.limits.retryAfterSeconds),
    );
  }

  /** Admits one read of `c`: it runs, and counts in the caller's recent reads. */
  private take(c: Caller, now: number): void {
    this.running++;
    c.running++;
    c.cost = this.costAt(c, now) + 1;
    c.at = now;
  }

  private async execute<T>(c: Caller, read: () => Promise<T>): Promise<T> {
    try {
      return await read();
    } finally {
      c.running--;
      this.running--;
      this.admitted++;
      this.scheduleNext();
    }
  }

  /**
   * The next reads start from the event loop's check phase, never from the finished read's own
   * continuation: a read against SQLite completes within microtasks, so starting the next one there
   * ran the whole queue in one go, and requests that had arrived meanwhile (a first request, an
   * answer from the cache) were read from their sockets only once it was empty. From setImmediate,
   * what arrived is read first (the poll phase) and takes its turn by the rule.
   */
  private scheduleNext(): void {
    if (this.scheduled || this.waiting === 0) return;
    this.scheduled = true;
    setImmediate(() => {
      this.scheduled = false;
      this.next(this.clock());
    });
  }

  /** Fills the free slots with the waiting reads the rule puts first. */
  private next(now: number): void {
    while (this.running < this.limits.concurrency && this.waiting > 0) {
      let best: Caller | null = null;
      let bestRate = 0;
      for (const c of this.queued) {
        const rate = this.rateAt(c, now);
        if (
          !best ||
          c.running < best.running ||
          (c.running === best.running && (rate < bestRate || (rate === bestRate && c.waiting[0].seq < best.waiting[0].seq)))
        ) {
          best = c;
          bestRate = rate;
        }
      }
      const w = best!.waiting.shift()!;
      if (best!.waiting.length === 0) this.queued.delete(best!);
      this.waiting--;
      this.take(best!, now);
      w.go();
    }
  }

  private costAt(c: Caller, now: number): number {
    return c.cost * Math.pow(2, -(now - c.at) / COST_HALF_LIFE_MS);
  }

  /**
   * The caller's recent reads per second: its decayed count against what one read a second since it
   * was first seen (at least RATE_WINDOW_MIN_MS ago) would have added up to by now, the decayed
   * sum of a steady rate, (1 - 2^(-age/half-life)) times its limit half-life/ln 2.
   */
  private rateAt(c: Caller, now: number): number {
    const age = Math.max(RATE_WINDOW_MIN_MS, now - c.since);
    return this.costAt(c, now) / (((1 - Math.pow(2, -age / COST_HALF_LIFE_MS)) * COST_HALF_LIFE_MS) / 1000 / Math.LN2);
  }

  /** The caller's record; idle callers whose cost has faded are forgotten once per half-life. */
  private caller(key: string): Caller {
    let c = this.callers.get(key);
    if (!c) {
      const now = this.clock();
      if (now - this.swept > COST_HALF_LIFE_MS) {
        this.swept = now;
        for (const [k, x] of this.callers) if (x.running === 0 && x.waiting.length === 0 && this.costAt(x, now) < 1) this.callers.delete(k);
      }
      c = { cost: 0, at: now, since: now, running: 0, waiting: [] };
      this.callers.set(key, c);
    }
    return c;
  }
}
