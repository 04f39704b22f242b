/**
 * One subscriber of live updates: an async iterator over its own bounded, coalescing queue. A
 * value is queued under a key; an undelivered value of the same key is replaced where it stands
 * (a state such as an offer keeps only its latest value), and past `limit` undelivered values the
 * oldest is dropped (lists such as fills, when a slow consumer falls that far behind).
 */
import type { ApiError } from "../api-error";
import type { LiveTopic } from "./live-topics";

/** The last value of a subscription that ended on an error (a revoked token, a vanished offer). */
export class LiveEnded {
  constructor(readonly error: ApiError) {}
}

/** One subscriber: an async iterator over its bounded, coalescing queue. */
export class LiveSubscription<T> implements AsyncIterableIterator<T | LiveEnded> {
  private readonly queue = new Map<string, T>();
  private waiter: ((r: IteratorResult<T | LiveEnded>) => void) | null = null;
  private ended: LiveEnded | null = null;
  private done = false;
  /** Values dropped because the consumer fell `queueLimit` behind. */
  dropped = 0;

  constructor(
    readonly topic: LiveTopic<T>,
    readonly connection: object,
    readonly authorization: string | null,
    private readonly limit: number,
    private readonly onDone: (s: LiveSubscription<T>) => void,
  ) {}

  get queued(): number {
    return this.queue.size;
  }

  push(key: string, value: T): void {
    if (this.done || this.ended) return;
    if (this.waiter) return this.wake({ value, done: false });
    // An undelivered value of the same key is replaced where it stands: the consumer gets the latest state once.
    this.queue.set(key, value);
    if (this.queue.size > this.limit) {
      this.queue.delete(this.queue.keys().next().value!);
      this.dropped++;
    }
  }

  /** Ends with `error` as the last value; what was still queued is not sent. */
  end(error: ApiError): void {
    if (this.done || this.ended) return;
    this.queue.clear();
    this.ended = new LiveEnded(error);
    if (this.waiter) this.finishWith({ value: this.ended, done: false });
  }

  /** Ends without an error (the server is closing). */
  finish(): void {
    if (this.done) return;
    this.finishWith({ value: undefined, done: true });
  }

  async next(): Promise<IteratorResult<T | LiveEnded>> {
    if (this.ended && !this.done) {
      this.finishWith(null);
      return { value: this.ended, done: false };
    }
    if (this.queue.size > 0) {
      const [key, value] = this.queue.entries().next().value!;
      this.queue.delete(key);
      return { value, done: false };
    }
    if (this.done) return { value: undefined, done: true };
    return new Promise((r) => (this.waiter = r));
  }

  async return(): Promise<IteratorResult<T | LiveEnded>> {
    this.finishWith({ value: undefined, done: true });
    return { value: undefined, done: true };
  }

  async throw(): Promise<IteratorResult<T | LiveEnded>> {
    return this.return();
  }

  [Symbol.asyncIterator](): this {
    return this;
  }

  private wake(r: IteratorResult<T | LiveEnded>): void {
    const w = this.waiter;
    this.waiter = null;
    w?.(r);
  }

  private finishWith(last: IteratorResult<T | LiveEnded> | null): void {
    const first = !this.done;
    this.done = true;
    this.queue.clear();
    if (last) this.wake(last);
    if (first) this.onDone(this);
  }
}
