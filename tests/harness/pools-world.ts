/**
 * A pools deployment on the test chain: mint, treasury, config, and helpers to make users and
 * pools and to run every instruction through the generated client (idl/client/pools.ts).
 */
import { Keypair, PublicKey, type TransactionInstruction } from "@solana/web3.js";
import {
  POOLS_PROGRAM_ID, PoolsClient, decodeParticipant, decodePool, decodePoolsConfig, type CreatePoolInput,
  type ParticipantAccount, type PoolAccount, type PoolsConfigAccount,
} from "../../idl/client/pools";
import { TestChain, type TxResult } from "./chain";
import { TestMint } from "./token";

export const UNIT = 1_000_000n;
export interface User { key: Keypair; token: PublicKey }

export class PoolsWorld {
  readonly users: User[] = [];
  readonly pools: PublicKey[] = [];
  private nonce = 0n;

  private constructor(readonly chain: TestChain, readonly mint: TestMint, readonly client: PoolsClient, readonly authority: Keypair, readonly treasury: PublicKey) {}

  static async create(opts: { chain?: TestChain; feeBps?: number } = {}): Promise<PoolsWorld> {
    const chain = opts.chain ?? (await TestChain.start([{ name: "pools", programId: POOLS_PROGRAM_ID }]));
    const mint = await TestMint.create(chain);
    const authority = await chain.fundedKeypair();
    const treasury = await mint.account(authority.publicKey);
    const client = PoolsClient.fromProvider(chain.anchorProvider);
    const w = new PoolsWorld(chain, mint, client, authority, treasury);
    const r = await w.send([await client.initializeConfig({ authority: authority.publicKey, mint: mint.mint, treasury, feeBps: opts.feeBps ?? 500 })], [authority]);
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
  async createPool(creator: User, o: Partial<Omit<CreatePoolInput, "payer" | "creator" | "closesAt">> & { closesIn?: bigint; closesAt?: bigint } = {}): Promise<{ r: TxResult; pool: PublicKey }> {
    const nonce = o.nonce ?? this.nextNonce();
    const closesAt = o.closesAt ?? (await this.chain.now()) + (o.closesIn ?? 3_600n);
    const ix = await this.client.createPool({ question: "Will it rain tomorrow?", ...o, payer: this.chain.payer.publicKey, creator: creator.key.publicKey, nonce, closesAt });
    const r = await this.send([ix], [creator.key]);
    const pool = this.client.pda.pool(creator.key.publicKey, nonce)[0];
    if (r.ok) this.pools.push(pool);
    return { r, pool };
  }

  async pick(user: User, pool: PublicKey, outcome: number, amount: bigint): Promise<TxResult> {
    const ix = await this.client.placePick({ payer: this.chain.payer.publicKey, user: user.key.publicKey, userToken: user.token, pool, outcome, amount });
    return this.send([ix], [user.key]);
  }

  async startVote(caller: Keypair, pool: PublicKey): Promise<TxResult> {
    return this.send([await this.client.startVote({ caller: caller.publicKey, pool })], [caller]);
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
  async settle(pool: PublicKey, user: PublicKey): Promise<TxResult> {
    const participant = this.participantOf(pool, user);
    const p = await this.participant(participant);
    return this.send([await this.client.settleParticipant({ pool, participant, userToken: p.userToken, treasury: this.treasury })]);
  }
  async refund(pool: PublicKey, user: PublicKey): Promise<TxResult> {
    const participant = this.participantOf(pool, user);
    const p = await this.participant(participant);
    return this.send([await this.client.refundParticipant({ pool, participant, userToken: p.userToken })]);
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
  async exists(address: PublicKey): Promise<boolean> {
    return (await this.chain.account(address)) !== null;
  }

  /** Token balances of every user, the vault and the treasury; their sum never changes. */
  async balances(): Promise<{ users: bigint[]; vault: bigint; treasury: bigint; total: bigint }> {
    const users = await Promise.all(this.users.map((u) => this.mint.balance(u.token)));
    const vault = await this.mint.balance(this.client.pda.vault()[0]);
    const treasury = await this.mint.balance(this.treasury);
    return { users, vault, treasury, total: users.reduce((a, b) => a + b, 0n) + vault + treasury };
  }
}
