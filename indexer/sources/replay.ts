/**
 * A recorded stream of batches (JSON lines, account data base64): what a source delivered,
 * replayable into any store. Used for crash-safety runs, benchmarks and reproducing a bug from a
 * capture. `start` skips batches at or before the checkpoint, so a restarted indexer resumes.
 */
import { createReadStream, createWriteStream, type WriteStream } from "node:fs";
import { createInterface } from "node:readline";
import type { AccountSource, Batch, BatchSink, Checkpoint } from "./types";
import { newer } from "./types";

interface WireBatch {
  slot: number;
  writeVersion: number;
  cursor?: string;
  accounts: { slot: number; writeVersion: number; pubkey: string; owner: string; data: string | null }[];
  transactions: Batch["transactions"];
}

export function encodeBatch(b: Batch): string {
  const w: WireBatch = { ...b, accounts: b.accounts.map((a) => ({ ...a, data: a.data ? a.data.toString("base64") : null })) };
  return JSON.stringify(w);
}
export function decodeBatch(line: string): Batch {
  const w = JSON.parse(line) as WireBatch;
  return { ...w, accounts: w.accounts.map((a) => ({ ...a, data: a.data === null ? null : Buffer.from(a.data, "base64") })) };
}

/** Appends batches to a JSONL file. */
export class BatchRecorder {
  private readonly out: WriteStream;
  count = 0;
  constructor(path: string) {
    this.out = createWriteStream(path, { flags: "a" });
  }
  readonly sink: BatchSink = async (b) => {
    this.count++;
    if (!this.out.write(encodeBatch(b) + "\n")) await new Promise<void>((r) => this.out.once("drain", () => r()));
  };
  close(): Promise<void> {
    return new Promise<void>((r) => this.out.end(() => r()));
  }
}

export async function readBatches(path: string): Promise<Batch[]> {
  const out: Batch[] = [];
  const rl = createInterface({ input: createReadStream(path), crlfDelay: Infinity });
  for await (const line of rl) if (line.trim()) out.push(decodeBatch(line));
  return out;
}

/** Merges consecutive batches into one (the writer keeps the newest version of each account). */
export function mergeBatches(list: Batch[]): Batch {
  const last = list[list.length - 1];
  return {
    slot: last.slot,
    writeVersion: last.writeVersion,
    cursor: last.cursor,
    accounts: list.flatMap((b) => b.accounts),
    transactions: list.flatMap((b) => b.transactions),
  };
}

export class ReplaySource implements AccountSource {
  readonly name: string;
  private stopped = false;
  constructor(
    readonly path: string,
    opts: { name?: string; group?: number } = {},
  ) {
    this.name = opts.name ?? "replay";
    this.group = opts.group ?? 1;
  }
  private readonly group: number;

  async snapshot(sink: BatchSink, onTotal?: (n: number) => void): Promise<void> {
    const all = await readBatches(this.path);
    onTotal?.(all.length);
    for (const b of all) await sink(b);
  }

  async start(from: Checkpoint | null, sink: BatchSink): Promise<void> {
    const all = (await readBatches(this.path)).filter((b) => !from || newer(b.slot, b.writeVersion, from.slot, from.writeVersion));
    for (let i = 0; i < all.length && !this.stopped; i += this.group) await sink(mergeBatches(all.slice(i, i + this.group)));
  }

  async stop(): Promise<void> {
    this.stopped = true;
  }
}
