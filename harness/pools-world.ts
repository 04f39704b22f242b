/**
 * A pools deployment on the test chain: mint, treasury, config, and helpers to make users and
 * pools and to run every instruction through the generated client (idl/client/pools.ts).
 */
import { Keypair, PublicKey, type TransactionInstruction } from "@solana/web3.js";
import { createCloseAccountInstruction, createTransferInstruction } from "@solana/spl-token";
import {
  POOLS_PROGRAM_ID,
  PoolsClient,
  decodeClaim,
  decodeParticipant,
  decodePool,
  decodePoolsConfig,
  type ClaimAccount,
  type CreatePoolInput,
  type ParticipantAccount,
  type PoolAccount,
  type PoolsConfigAccount,
} from "../idl/client/pools";
import { TestChain, type TxResult } from "./chain";
import { ProgramWorld, UNIT, deploymentParts, type User } from "./program-world";

export { UNIT, type User };

export class PoolsWorld extends ProgramWorld<PoolsClient> {
  readonly pools: PublicKey[] = [];

  static async create(opts: { chain?: TestChain; feeBps?: number } = {}): Promise<PoolsWorld> {
    const chain = opts.chain ?? (await TestChain.start([{ name: "pools", programId: POOLS_PROGRAM_ID }]));
    const { mint, authority, treasury } = await deploymentParts(chain);
    const client = PoolsClient.fromProvider(chain.anchorProvider);
    const w = new PoolsWorld(chain, mint, client, authority, treasury);
    await w.initialize(
      await client.initializeConfig({
        authority: authority.publicKey,
        mint: mint.mint,
        treasury,
        feeBps: opts.feeBps ?? 500,
        deployer: chain.upgradeAuthority.publicKey,
      }),
    );
    return w;
  }

  protected decodeClaim(data: Buffer): ClaimAccount {
    return decodeClaim(data);
  }

  /** Creates a pool closing `closesIn` seconds from the chain's now. */
  async createPool(
    creator: User,
    o: Partial<Omit<CreatePoolInput, "payer" | "creator" | "closesAt">> & { closesIn?: bigint; closesAt?: bigint } = {},
  ): Promise<{ r: TxResult; pool: PublicKey }> {
    const nonce = o.nonce ?? this.nextNonce();
    const closesAt = o.closesAt ?? (await this.chain.now()) + (o.closesIn ?? 3_600n);
    const ix = await this.client.createPool({
      question: "Will it rain tomorrow?",
      ...o,
      payer: this.chain.payer.publicKey,
      creator: creator.key.publicKey,
      nonce,
      closesAt,
    });
    const r = await this.send([ix], [creator.key]);
    const pool = this.client.pda.pool(creator.key.publicKey, nonce)[0];
    if (r.ok) this.pools.push(pool);
    return { r, pool };
  }

  async pick(user: User, pool: PublicKey, outcome: number, amount: bigint): Promise<TxResult> {
    return this.send([await this.pickIx(user, pool, outcome, amount)], [user.key]);
  }

  /** `user`'s place_pick from its token account, the chain's payer paying rent; `over` bends it (bump, accounts). */
  pickIx(
    user: User,
    pool: PublicKey,
    outcome: number,
    amount: bigint,
    over: Pick<Parameters<PoolsClient["placePick"]>[0], "participantBump" | "overrides"> = {},
  ) {
    return this.client.placePick({ payer: this.chain.payer.publicKey, user: user.key.publicKey, userToken: user.token, pool, outcome, amount, ...over });
  }

  /** The creator proposes `outcome` (opens the 24 h dispute window). */
  async propose(creator: Keypair, pool: PublicKey, outcome: number): Promise<TxResult> {
    return this.send([await this.client.proposeOutcome({ creator: creator.publicKey, pool, outcome })], [creator]);
  }
  /** The config's authority (default: the world's) decides an escalated pool; 255 cancels. */
  async authorityResolve(pool: PublicKey, outcome: number, authority: Keypair = this.authority): Promise<TxResult> {
    return this.send([await this.client.authorityResolve({ authority: authority.publicKey, pool, outcome })], [authority]);
  }
  async vote(user: User, pool: PublicKey, outcome: number): Promise<TxResult> {
    return this.send([await this.client.castVote({ voter: user.key.publicKey, pool, outcome })], [user.key]);
  }
  async resolve(caller: Keypair, pool: PublicKey): Promise<TxResult> {
    return this.send([await this.client.resolvePool({ caller: caller.publicKey, pool })], [caller]);
  }
  async cancel(caller: Keypair, pool: PublicKey): Promise<TxResult> {
    return this.send([await this.client.cancelPool({ caller: caller.publicKey, pool })], [caller]);
  }
  /** Settles `user` in `pool`; the chain's payer pays the fee (and a Claim's rent if one is created). */
  async settle(pool: PublicKey, user: PublicKey): Promise<TxResult> {
    const participant = this.participantOf(pool, user);
    const { userToken } = await this.participant(participant);
    return this.send([await this.client.settleParticipant({ pool, participant, user, userToken, treasury: this.treasury, payer: this.chain.payer.publicKey })]);
  }
  async refund(pool: PublicKey, user: PublicKey): Promise<TxResult> {
    const participant = this.participantOf(pool, user);
    const { userToken } = await this.participant(participant);
    return this.send([await this.client.refundParticipant({ pool, participant, user, userToken, payer: this.chain.payer.publicKey })]);
  }
  /** The user withdraws its whole claim to `destination` (default: its token account). */
  withdrawClaim(user: User, destination: PublicKey = user.token): Promise<TxResult> {
    return this.withdrawClaimAs(user.key, destination);
  }

  participantOf(pool: PublicKey, user: PublicKey): PublicKey {
    return this.client.pda.participant(pool, user)[0];
  }

  config(): Promise<PoolsConfigAccount> {
    return this.read(this.client.pda.config()[0], decodePoolsConfig);
  }
  pool(address: PublicKey): Promise<PoolAccount> {
    return this.read(address, decodePool);
  }
  participant(address: PublicKey): Promise<ParticipantAccount> {
    return this.read(address, decodeParticipant);
  }
  async exists(address: PublicKey): Promise<boolean> {
    return (await this.chain.account(address)) !== null;
  }

  /**
   * Closes the user's token account (as its owner may at any time), first moving what it holds
   * to `sweepTo`; the rent goes back to the user. Payouts then land in the user's Claim.
   */
  async closeTokenAccount(user: User, sweepTo?: PublicKey): Promise<void> {
    const left = await this.mint.balance(user.token);
    const ixs: TransactionInstruction[] = [];
    if (left > 0n) {
      if (!sweepTo) throw new Error("closeTokenAccount: the account holds tokens; pass sweepTo");
      ixs.push(createTransferInstruction(user.token, sweepTo, user.key.publicKey, left));
    }
    ixs.push(createCloseAccountInstruction(user.token, user.key.publicKey, user.key.publicKey));
    const r = await this.send(ixs, [user.key]);
    if (!r.ok) throw new Error(`close token account: ${r.error}`);
  }
}
