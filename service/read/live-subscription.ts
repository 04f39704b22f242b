/**
 * One stream of live updates and the consumer reading it. A value is queued under a key with the
 * stream's next sequence number; an earlier value of the same key is replaced (a state such as an
 * offer keeps only its latest value, under its new number), and past `limit` values kept the
 * oldest goes (already delivered ones first: lists such as fills lose values only when a consumer
 * falls that far behind). Delivered values stay in that bounded log, so a consumer that went away
 * (a dropped SSE connection) can come back within the resume window and receive every value after
 * the last one it saw (./live-updates.ts keeps the detached stream; docs/api-guide.md, "Resuming").
 */
import { randomBytes } from "node:crypto";
import type { ApiError } from "../api-error";
import type { LiveTopic } from "./live-topics";

/** The last value of a subscription that ended on an error (a revoked token, a vanished offer). */
export class LiveEnded {
  constructor(readonly error: ApiError) {}
}

/** The first value of a resumed subscription that could not be resumed: what it missed is lost, read the state again. */
export class LiveReread {
  constructor(readonly reason: string) {}
}

/** A value of the stream and its sequence number. */
interface Entry<T> {
  seq: number;
  value: T | LiveReread;
}

/** One stream: its bounded log, and the consumer (at most one at a time) reading it. */
export class LiveSubscription<T> {
  /** Names the stream in event ids (`<id>.<seq>`): 128 random bits, so a stream cannot be guessed. */
  readonly id = randomBytes(16).toString("base64url");
  /** By key, in sequence order (a key pushed again moves to the end). */
  private readonly log = new Map<string, Entry<T>>();
  private seq = 0;
  /** The highest sequence number handed to the consumer. */
  private delivered = 0;
  /** The highest sequence number evicted from the log: a resume after an earlier one would miss it. */
  private lost = 0;
  private waiter: ((r: IteratorResult<T | LiveEnded | LiveReread>) => void) | null = null;
  private ended: LiveEnded | null = null;
  private done = false;
  /** Which consumer reads the stream now; a consumer of an earlier generation reads nothing more. */
  private generation = 0;
  /** Whether a consumer reads the stream now (false: detached, waiting to be resumed). */
  attached = true;
  /** Values dropped undelivered because the consumer fell `limit` behind. */
  dropped = 0;
  /** The event id of the value the consumer was handed last (`<stream>.<seq>`). */
  lastEventId: string;
  /** Whether the value handed last was the re-read signal. */
  lastWasReread = false;

  constructor(
    readonly topic: LiveTopic<T>,
    /** The connection its consumer runs on (a resume moves it to the new one). */
    public connection: object,
    readonly authorization: string | null,
    private readonly limit: number,
    private readonly onDone: (s: LiveSubscription<T>) => void,
    /** Called when the consumer goes away without the stream ending (kept for a resume, or dropped). */
    private readonly onDetach: (s: LiveSubscription<T>) => void = (s) => s.finish(),
    /** What a resume must present besides the id: the topic and its arguments, and whose it is. */
    readonly resumeKey = "",
  ) {
    this.lastEventId = `${this.id}.0`;
  }

  get queued(): number {
    let n = 0;
    for (const e of this.log.values()) if (e.seq > this.delivered) n++;
    return n;
  }

  push(key: string, value: T | LiveReread): void {
    if (this.done || this.ended) return;
    const entry = { seq: ++this.seq, value };
    this.log.delete(key);
    this.log.set(key, entry);
    if (this.log.size > this.limit) {
      const [oldestKey, oldest] = this.log.entries().next().value!;
      this.log.delete(oldestKey);
      this.lost = Math.max(this.lost, oldest.seq);
      if (oldest.seq > this.delivered) this.dropped++;
    }
    if (this.waiter && this.attached) this.wake({ value: this.hand(entry), done: false });
  }

  /**
   * Whether a consumer that saw up to `after` can resume: every value after it is still in the
   * log (or was replaced there by a later value of its key).
   */
  canResume(after: number): boolean {
    return !this.done && !this.ended && after <= this.seq && after >= this.lost;
  }

  /** A new consumer (the previous one, if any, reads nothing more), starting after `after` (default: what was delivered). */
  consume(after = this.delivered): AsyncIterableIterator<T | LiveEnded | LiveReread> {
    const generation = ++this.generation;
    if (this.waiter) this.wake({ value: undefined, done: true });
    this.attached = true;
    this.delivered = after;
    const mine = () => generation === this.generation && this.attached;
    const it: AsyncIterableIterator<T | LiveEnded | LiveReread> = {
      next: async () => {
        if (!mine()) return { value: undefined, done: true };
        return this.next();
      },
      return: async () => {
        if (mine()) {
          this.attached = false;
          if (this.done || this.ended) this.finishWith(null);
          else this.onDetach(this);
        }
        return { value: undefined, done: true };
      },
      throw: async () => it.return!(),
      [Symbol.asyncIterator]: () => it,
    };
    return it;
  }

  /** Ends with `error` as the last value; what was still queued is not sent. */
  end(error: ApiError): void {
    if (this.done || this.ended) return;
    this.log.clear();
    this.ended = new LiveEnded(error);
    if (!this.attached) this.finishWith(null);
    else if (this.waiter) this.finishWith({ value: this.ended, done: false });
  }

  /** Ends without an error (the server is closing, or a detached stream's window passed). */
  finish(): void {
    if (this.done) return;
    this.finishWith({ value: undefined, done: true });
  }

  private async next(): Promise<IteratorResult<T | LiveEnded | LiveReread>> {
    if (this.ended && !this.done) {
      this.finishWith(null);
      return { value: this.ended, done: false };
    }
    for (const e of this.log.values()) if (e.seq > this.delivered) return { value: this.hand(e), done: false };
    if (this.done) return { value: undefined, done: true };
    return new Promise((r) => (this.waiter = r));
  }

  private hand(e: Entry<T>): T | LiveReread {
    this.delivered = e.seq;
    this.lastEventId = `${this.id}.${e.seq}`;
    this.lastWasReread = e.value instanceof LiveReread;
    return e.value;
  }

  private wake(r: IteratorResult<T | LiveEnded | LiveReread>): void {
    const w = this.waiter;
    this.waiter = null;
    w?.(r);
  }

  private finishWith(last: IteratorResult<T | LiveEnded | LiveReread> | null): void {
    const first = !this.done;
    this.done = true;
    this.log.clear();
    if (last) this.wake(last);
    if (first) this.onDone(this);
  }
}
