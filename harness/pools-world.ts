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
import { TestMint } from "./token";

export const UNIT = 1_000_000n;
export interface User {
  key: Keypair;
  token: PublicKey;
}

export class PoolsWorld {
  readonly users: User[] = [];
  readonly pools: PublicKey[] = [];
  private nonce = 0n;

  private constructor(
    readonly chain: TestChain,
    readonly mint: TestMint,
    readonly client: PoolsClient,
    readonly authority: Keypair,
    public treasury: PublicKey,
  ) {}

  static async create(opts: { chain?: TestChain; feeBps?: number } = {}): Promise<PoolsWorld> {
    const chain = opts.chain ?? (await TestChain.start([{ name: "pools", programId: POOLS_PROGRAM_ID }]));
    const mint = await TestMint.create(chain);
    const authority = await chain.fundedKeypair();
    const treasury = await mint.account(authority.publicKey);
    const client = PoolsClient.fromProvider(chain.anchorProvider);
    const w = new PoolsWorld(chain, mint, client, authority, treasury);
    const deployer = chain.upgradeAuthority;
    const ix = await client.initializeConfig({
      authority: authority.publicKey,
      mint: mint.mint,
      treasury,
      feeBps: opts.feeBps ?? 500,
      deployer: deployer.publicKey,
    });
    const r = await w.send([ix], [deployer]);
    if (!r.ok) throw new Error(`initialize_config failed: ${r.error}\n${r.logs.join("\n")}`);
    return w;
  }

  send(ixs: TransactionInstruction[], signers: Keypair[] = []): Promise<TxResult> {
    return this.chain.send(ixs, signers);
  }

  async user(balance = 1_000n * UNIT): Promise<User> {
    const key = await this.chain.fundedKeypair();
    const u = { key, token: await this.mint.account(key.publicKey, balance) };
    this.users.push(u);
    return u;
  }

  nextNonce(): bigint {
    return ++this.nonce;
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
    const ix = await this.client.placePick({ payer: this.chain.payer.publicKey, user: user.key.publicKey, userToken: user.token, pool, outcome, amount });
    return this.send([ix], [user.key]);
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
  async withdrawClaim(user: User, destination: PublicKey = user.token): Promise<TxResult> {
    const c = await this.claim(user.key.publicKey);
    const rentPayer = c?.rentPayer ?? this.chain.payer.publicKey;
    return this.send([await this.client.withdrawClaim({ owner: user.key.publicKey, destination, rentPayer })], [user.key]);
  }

  participantOf(pool: PublicKey, user: PublicKey): PublicKey {
    return this.client.pda.participant(pool, user)[0];
  }

  private async data(address: PublicKey): Promise<Buffer> {
    const a = await this.chain.account(address);
    if (!a) throw new Error(`account ${address.toBase58()} does not exist`);
    return a.data;
  }
  async config(): Promise<PoolsConfigAccount> {
    return decodePoolsConfig(await this.data(this.client.pda.config()[0]));
  }
  async pool(address: PublicKey): Promise<PoolAccount> {
    return decodePool(await this.data(address));
  }
  async participant(address: PublicKey): Promise<ParticipantAccount> {
    return decodeParticipant(await this.data(address));
  }
  /** The owner's Claim, or null when it has none. */
  async claim(owner: PublicKey): Promise<ClaimAccount | null> {
    const a = await this.chain.account(this.client.pda.claim(owner)[0]);
    return a && a.data.length > 0 ? decodeClaim(a.data) : null;
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

  /** A token balance, 0 for an account that no longer exists (closed by its owner). */
  async balanceOf(account: PublicKey): Promise<bigint> {
    return (await this.chain.account(account)) ? this.mint.balance(account) : 0n;
  }

  /** Token balances of every user, the vault and the treasury; their sum changes only when a user moves tokens elsewhere. */
  async balances(): Promise<{ users: bigint[]; vault: bigint; treasury: bigint; total: bigint }> {
    const users = await Promise.all(this.users.map((u) => this.balanceOf(u.token)));
    const vault = await this.mint.balance(this.client.pda.vault()[0]);
    const treasury = await this.mint.balance(this.treasury);
    return { users, vault, treasury, total: users.reduce((a, b) => a + b, 0n) + vault + treasury };
  }
}
