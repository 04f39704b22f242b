/**
 * Pool operations on a chain the service can sign for (the local stack's demo data and tests):
 * create a pool as a custodial user, place picks, propose the outcome (creator), vote or dispute,
 * resolve or escalate, decide as the config's authority (the service key), settle, cancel, refund,
 * withdraw a claim. The service's key pays fees and rent; the user's custodial key signs as
 * creator, picker, voter.
 */
import type { Keypair, PublicKey } from "@solana/web3.js";
import { decodeClaim, decodeParticipant, decodePool, type PoolAccount, type PoolsClient } from "../../idl/client/pools";
import type { Custody, User } from "../custody/custody";
import type { ChainGateway } from "./gateway";
import { sendAndConfirm } from "./submitter";

export class PoolOps {
  private nonce = BigInt(Date.now());
  constructor(private readonly d: { gateway: ChainGateway; pools: PoolsClient; custody: Custody; service: Keypair; treasury: PublicKey }) {}

  private async user(name: string): Promise<{ user: User; key: Keypair }> {
    const user = await this.d.custody.userByName(name);
    if (!user) throw new Error(`no user ${name}`);
    return { user, key: await this.d.custody.signer(user.id) };
  }

  async create(
    creator: string,
    p: { question: string; labels?: string[]; closesAt: bigint; resolutionAt?: bigint; criteria?: string; coverUrl?: string },
  ): Promise<PublicKey> {
    const { key } = await this.user(creator);
    const nonce = ++this.nonce;
    const ix = await this.d.pools.createPool({ payer: this.d.service.publicKey, creator: key.publicKey, nonce, ...p });
    await sendAndConfirm(this.d.gateway, [ix], [this.d.service, key]);
    return this.d.pools.pda.pool(key.publicKey, nonce)[0];
  }

  async pick(name: string, pool: PublicKey, outcome: number, amount: bigint): Promise<void> {
    const { user, key } = await this.user(name);
    const ix = await this.d.pools.placePick({ payer: this.d.service.publicKey, user: key.publicKey, userToken: user.tokenAccount, pool, outcome, amount });
    await sendAndConfirm(this.d.gateway, [ix], [this.d.service, key]);
  }

  /** The creator proposes the outcome; participants may dispute it for 24 h. */
  async propose(creator: string, pool: PublicKey, outcome: number): Promise<void> {
    const { key } = await this.user(creator);
    await sendAndConfirm(this.d.gateway, [await this.d.pools.proposeOutcome({ creator: key.publicKey, pool, outcome })], [this.d.service, key]);
  }

  async vote(name: string, pool: PublicKey, outcome: number): Promise<void> {
    const { key } = await this.user(name);
    await sendAndConfirm(this.d.gateway, [await this.d.pools.castVote({ voter: key.publicKey, pool, outcome })], [this.d.service, key]);
  }

  /** Resolves an undisputed proposal, or escalates a disputed (or overdue) pool to the authority. */
  async resolve(pool: PublicKey): Promise<void> {
    await sendAndConfirm(this.d.gateway, [await this.d.pools.resolvePool({ caller: this.d.service.publicKey, pool })], [this.d.service]);
  }

  /** The service key, as the config's authority, decides an escalated pool (255: cancel). */
  async authorityResolve(pool: PublicKey, outcome: number): Promise<void> {
    await sendAndConfirm(this.d.gateway, [await this.d.pools.authorityResolve({ authority: this.d.service.publicKey, pool, outcome })], [this.d.service]);
  }

  async cancel(creator: string, pool: PublicKey): Promise<void> {
    const { key } = await this.user(creator);
    await sendAndConfirm(this.d.gateway, [await this.d.pools.cancelPool({ caller: key.publicKey, pool })], [this.d.service, key]);
  }

  /**
   * Settles (resolved pool) or refunds (canceled pool) every listed participant, to the token
   * account its first pick recorded (its Claim when that account cannot receive).
   */
  async payOut(pool: PublicKey, names: string[], mode: "settle" | "refund"): Promise<void> {
    const payer = this.d.service.publicKey;
    for (const name of names) {
      const { user } = await this.user(name);
      const participant = this.d.pools.pda.participant(pool, user.wallet)[0];
      const rec = await this.d.gateway.getAccount(participant);
      const userToken = rec ? decodeParticipant(rec.data).userToken : user.tokenAccount;
      const ix =
        mode === "settle"
          ? await this.d.pools.settleParticipant({ pool, participant, user: user.wallet, userToken, treasury: this.d.treasury, payer })
          : await this.d.pools.refundParticipant({ pool, participant, user: user.wallet, userToken, payer });
      await sendAndConfirm(this.d.gateway, [ix], [this.d.service]);
    }
  }

  /** The user takes its whole claim to its custodial token account. */
  async withdrawClaim(name: string): Promise<void> {
    const { user, key } = await this.user(name);
    const a = await this.d.gateway.getAccount(this.d.pools.pda.claim(key.publicKey)[0]);
    if (!a || a.data.length === 0) throw new Error(`${name} has no claim`);
    const ix = await this.d.pools.withdrawClaim({ owner: key.publicKey, destination: user.tokenAccount, rentPayer: decodeClaim(a.data).rentPayer });
    await sendAndConfirm(this.d.gateway, [ix], [this.d.service, key]);
  }

  async read(pool: PublicKey): Promise<PoolAccount> {
    const a = await this.d.gateway.getAccount(pool);
    if (!a) throw new Error(`no pool ${pool.toBase58()}`);
    return decodePool(a.data);
  }
}
