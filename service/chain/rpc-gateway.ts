/**
 * ChainGateway over Solana JSON-RPC (@solana/web3.js 1.x). `submit` sends with preflight
 * (simulation at `confirmed`), so a program error on a race is thrown as a SubmitError with the
 * custom code; it returns the signature without waiting for confirmation. Network failures are
 * ChainUnavailableError (503 upstream).
 */
import { Connection, SendTransactionError, type AccountInfo, type PublicKey, type Transaction } from "@solana/web3.js";
import { utils } from "../../idl/client/anchor";
import { customCode } from "../../idl/client/common";
import { ChainUnavailableError, SubmitError, type ChainGateway, type SubmissionStatus } from "./gateway";

export class RpcGateway implements ChainGateway {
  readonly kind = "rpc" as const;
  readonly connection: Connection;

  constructor(
    url: string,
    readonly commitment: "confirmed" | "finalized" = "confirmed",
  ) {
    this.connection = new Connection(url, commitment);
  }

  private async net<T>(fn: () => Promise<T>): Promise<T> {
    try {
      return await fn();
    } catch (e) {
      if (e instanceof SubmitError) throw e;
      throw new ChainUnavailableError(`rpc: ${(e as Error).message}`);
    }
  }

  blockhash(): Promise<string> {
    return this.net(async () => (await this.connection.getLatestBlockhash(this.commitment)).blockhash);
  }

  isBlockhashValid(blockhash: string): Promise<boolean> {
    return this.net(async () => (await this.connection.isBlockhashValid(blockhash, { commitment: this.commitment })).value);
  }

  getAccount(address: PublicKey): Promise<AccountInfo<Buffer> | null> {
    return this.net(() => this.connection.getAccountInfo(address, this.commitment));
  }

  getAccounts(addresses: PublicKey[]): Promise<(AccountInfo<Buffer> | null)[]> {
    return this.net(async () => {
      const out: (AccountInfo<Buffer> | null)[] = [];
      for (let i = 0; i < addresses.length; i += 100)
        out.push(...(await this.connection.getMultipleAccountsInfo(addresses.slice(i, i + 100), this.commitment)));
      return out;
    });
  }

  rentExempt(bytes: number): Promise<bigint> {
    return this.net(async () => BigInt(await this.connection.getMinimumBalanceForRentExemption(bytes, this.commitment)));
  }

  now(): Promise<bigint> {
    return this.net(async () => {
      const slot = await this.connection.getSlot(this.commitment);
      const t = await this.connection.getBlockTime(slot);
      return BigInt(t ?? Math.floor(Date.now() / 1000));
    });
  }

  async submit(tx: Transaction): Promise<string> {
    if (!tx.signature) throw new SubmitError("transaction is not signed", null);
    const signature = utils.bytes.bs58.encode(tx.signature);
    try {
      await this.connection.sendRawTransaction(tx.serialize(), { skipPreflight: false, preflightCommitment: this.commitment, maxRetries: 5 });
      return signature;
    } catch (e) {
      if (e instanceof SendTransactionError) {
        const logs = (e as SendTransactionError & { logs?: string[] }).logs ?? [];
        const code = customCode(e.message) ?? customCode(logs.join("\n"));
        if (/already been processed/i.test(e.message)) return signature;
        throw new SubmitError(e.message, code, logs);
      }
      throw new ChainUnavailableError(`rpc: ${(e as Error).message}`);
    }
  }

  status(signature: string): Promise<SubmissionStatus> {
    return this.net(async () => {
      const { value } = await this.connection.getSignatureStatuses([signature], { searchTransactionHistory: true });
      const s = value[0];
      if (!s) return { state: "unknown", code: null, error: null, slot: null };
      if (s.err) {
        const err = JSON.stringify(s.err);
        return { state: "failed", code: customCode(err), error: err, slot: s.slot };
      }
      const done = s.confirmationStatus === "confirmed" || s.confirmationStatus === "finalized";
      return { state: done ? "confirmed" : "pending", code: null, error: null, slot: s.slot };
    });
  }

  async waitFor(signature: string, timeoutMs = 60_000): Promise<SubmissionStatus> {
    const until = Date.now() + timeoutMs;
    for (;;) {
      const s = await this.status(signature);
      if (s.state === "confirmed" || s.state === "failed" || Date.now() >= until) return s;
      await new Promise((r) => setTimeout(r, 500));
    }
  }
}
