/**
 * Account deletions, apart from account writes (as Carbon's datasources report an AccountDeletion
 * beside an AccountUpdate): closing an account hands it to the system program, and
 * programSubscribe only reports accounts the program still owns, so a close never arrives as a
 * notification of its own. Three ways in:
 * - a notification of an account the programs no longer own, or with no lamports, is a deletion;
 * - the programs' transactions that log no event (the rent reclaims) are read back
 *   (getTransaction) and their accounts that the source knows are checked
 *   (getMultipleAccountsInfo); those gone are tombstoned in the next batch;
 * - a snapshot (the periodic reconcile, the net under everything else) tombstones the known
 *   accounts it no longer finds.
 */
import { PublicKey, type Commitment, type Connection, type KeyedAccountInfo, type Logs } from "@solana/web3.js";
import type { AccountUpdate } from "../types";

interface CloseCheck {
  signature: string;
  slot: number;
  attempts: number;
  nextAt: number;
}

/** Tries of a close check whose transaction is not readable yet, and the wait between them. */
const CHECK_TRIES = 25;
const CHECK_RETRY_MS = 200;

export class CloseDetector {
  /** Accounts of the programs the store has (as far as this source knows). */
  private readonly known = new Set<string>();
  private checks: CloseCheck[] = [];

  constructor(
    private readonly connection: Connection,
    private readonly programs: PublicKey[],
    private readonly commitment: Commitment,
    /** The source's arrival counter: the write version of each deletion found. */
    private readonly nextWv: () => number,
    known: Iterable<string> = [],
  ) {
    for (const k of known) this.known.add(k);
  }

  /** A programSubscribe notification as an update: a deletion if the account left the programs or has no lamports. */
  notified(a: KeyedAccountInfo, slot: number, writeVersion: number): AccountUpdate {
    const pubkey = a.accountId.toBase58();
    const owner = a.accountInfo.owner.toBase58();
    const ours = this.programs.some((p) => p.toBase58() === owner) && a.accountInfo.lamports > 0;
    if (ours) this.known.add(pubkey);
    else this.known.delete(pubkey);
    return { slot, writeVersion, pubkey, owner, data: ours ? Buffer.from(a.accountInfo.data) : null };
  }

  /** A live transaction of the programs: one that logs no event (a rent reclaim) is checked for closes. */
  logged(l: Logs, slot: number): void {
    if (!l.err && !l.logs.some((x) => x.startsWith("Program data: "))) this.checks.push({ signature: l.signature, slot, attempts: 0, nextAt: 0 });
  }

  hasChecks(): boolean {
    return this.checks.length > 0;
  }

  /**
   * Deletions caused by the due close checks: the accounts of their transactions this source
   * knows that no longer exist (or left the programs). A transaction not yet readable at
   * "confirmed" (an indexer at "processed" sees it a slot earlier) is retried every 200 ms, 25
   * times at most; the periodic reconcile covers the rest.
   */
  async closed(): Promise<AccountUpdate[]> {
    const now = Date.now();
    const due = this.checks.filter((c) => c.nextAt <= now);
    this.checks = this.checks.filter((c) => c.nextAt > now);
    const out: AccountUpdate[] = [];
    for (const c of due) {
      const tx = await this.connection.getTransaction(c.signature, { commitment: "confirmed", maxSupportedTransactionVersion: 0 }).catch(() => null);
      if (!tx) {
        if (++c.attempts < CHECK_TRIES) this.checks.push({ ...c, nextAt: now + CHECK_RETRY_MS });
        continue;
      }
      const keys = [
        ...tx.transaction.message.staticAccountKeys.map((k) => k.toBase58()),
        ...(tx.meta?.loadedAddresses?.writable ?? []).map((k) => k.toBase58()),
      ];
      const candidates = keys.filter((k) => this.known.has(k));
      if (!candidates.length) continue;
      const infos = await this.connection.getMultipleAccountsInfo(
        candidates.map((k) => new PublicKey(k)),
        this.commitment,
      );
      candidates.forEach((pubkey, i) => {
        const a = infos[i];
        const ours = a && a.lamports > 0 && this.programs.some((p) => p.equals(a.owner));
        if (ours) return;
        out.push({ slot: Math.max(c.slot, tx.slot), writeVersion: this.nextWv(), pubkey, owner: "", data: null });
        this.known.delete(pubkey);
      });
    }
    return out;
  }

  /** The known accounts a snapshot did not find (`seen`): closed. */
  absentFrom(seen: Set<string>): string[] {
    return [...this.known].filter((k) => !seen.has(k));
  }

  /** A snapshot's deletions (`gone`) and accounts (`seen`) are in the store. */
  snapshotApplied(gone: string[], seen: Set<string>): void {
    for (const k of gone) this.known.delete(k);
    for (const k of seen) this.known.add(k);
  }
}
