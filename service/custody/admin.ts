/**
 * Operator actions behind scripts/admin.ts (and the test/bench stacks): users and tokens,
 * compliance blocks, funding on the local chain, contracts with their catalog metadata, the
 * offers switch. Chain actions are signed by the service's wallet (the program's authority).
 */
import { randomUUID } from "node:crypto";
import { SystemProgram, type Keypair, type PublicKey } from "@solana/web3.js";
import { createAssociatedTokenAccountIdempotentInstruction, createMintToInstruction, getAssociatedTokenAddressSync } from "@solana/spl-token";
import type { Kysely } from "kysely";
import type { Database } from "../../indexer/store/schema";
import { upsertContractCatalog, upsertProfile, type ContractCatalogInput } from "../../indexer/store/catalog";
import type { OffersClient } from "../../idl/client/offers";
import type { ChainGateway } from "../chain/gateway";
import { mintTo, poolsClientFor, readConfig } from "../chain/service-chain";
import { sendAndConfirm } from "../chain/submitter";
import type { Custody, User } from "./custody";
import { SPORTS, sportOf } from "../read/sports";

/** A new contract: its catalog metadata and its on-chain schedule (the ids default to fresh UUIDs). */
export interface ContractInput extends Omit<ContractCatalogInput, "contract"> {
  cutoffAt: bigint;
  resolutionDeadline: bigint;
  templateId?: string;
  eventId?: string;
}

export class AdminOps {
  constructor(
    readonly custody: Custody,
    readonly store: Kysely<Database>,
    readonly gateway: ChainGateway,
    readonly service: Keypair,
    readonly client: OffersClient,
  ) {}

  async mint(): Promise<PublicKey> {
    return (await readConfig(this.gateway, this.client)).mint;
  }

  /** A user with a custodial wallet, its token account and a public profile. */
  async createUser(name: string, displayName = name, profileImageUrl = ""): Promise<User> {
    const u = await this.custody.createUser({ name, displayName, gateway: this.gateway, payer: this.service, mint: await this.mint() });
    await upsertProfile(this.store, { wallet: u.wallet.toBase58(), displayName, profileImageUrl });
    return u;
  }

  async user(nameOrId: string): Promise<User> {
    const u = (await this.custody.userByName(nameOrId)) ?? (await this.custody.userById(nameOrId));
    if (!u) throw new Error(`no user ${nameOrId}`);
    return u;
  }

  /** Local chain only: mints stablecoin to the user's custodial token account. */
  async fund(nameOrId: string, micros: bigint): Promise<void> {
    const u = await this.user(nameOrId);
    await mintTo(this.gateway, this.service, await this.mint(), u.tokenAccount, micros);
  }

  /**
   * Local chain only (the service is the mint's authority): any wallet, custodial or not, gets its
   * associated token account of the stablecoin (created when missing), `micros` minted to it and
   * `lamports` for fees and rent, in one transaction. Returns the token account.
   */
  async fundWallet(wallet: PublicKey, micros: bigint, lamports: bigint): Promise<PublicKey> {
    const mint = await this.mint();
    const token = getAssociatedTokenAddressSync(mint, wallet, true);
    const payer = this.service.publicKey;
    const ixs = [createAssociatedTokenAccountIdempotentInstruction(payer, token, wallet, mint)];
    if (micros > 0n) ixs.push(createMintToInstruction(mint, token, payer, micros));
    if (lamports > 0n) ixs.push(SystemProgram.transfer({ fromPubkey: payer, toPubkey: wallet, lamports }));
    await sendAndConfirm(this.gateway, ixs, [this.service]);
    return token;
  }

  async createContract(c: ContractInput): Promise<PublicKey> {
    const sport = sportOf(c.sport);
    if (!sport) throw new Error(`sport must be one of ${SPORTS.join(", ")}`);
    const templateId = c.templateId ?? randomUUID();
    const eventId = c.eventId ?? randomUUID();
    const ix = await this.client.createContract({
      authority: this.service.publicKey,
      payer: this.service.publicKey,
      templateId,
      eventId,
      cutoffAt: c.cutoffAt,
      resolutionDeadline: c.resolutionDeadline,
    });
    await sendAndConfirm(this.gateway, [ix], [this.service]);
    const address = this.client.pda.contract(templateId, eventId)[0];
    await upsertContractCatalog(this.store, {
      contract: address.toBase58(),
      title: c.title,
      description: c.description,
      event: c.event,
      sport,
      competition: c.competition,
      startsAt: c.startsAt,
      sideALabel: c.sideALabel,
      sideBLabel: c.sideBLabel,
      visuals: c.visuals,
    });
    return address;
  }

  async resolveContract(contract: PublicKey, result: "sideA" | "sideB" | "void"): Promise<string> {
    return sendAndConfirm(this.gateway, [await this.client.resolveContract({ authority: this.service.publicKey, contract, result })], [this.service]);
  }

  async setOffersEnabled(enabled: boolean, feeBps?: number): Promise<void> {
    const cfg = await readConfig(this.gateway, this.client);
    await sendAndConfirm(
      this.gateway,
      [await this.client.updateConfig({ authority: this.service.publicKey, feeBps: feeBps ?? cfg.feeBps, offersEnabled: enabled, limits: cfg.limits })],
      [this.service],
    );
  }

  /**
   * Names a new fee treasury in both programs (a token account of the mint, not the vault): the
   * way out when the old one can no longer receive (closed, or frozen by the mint's freeze
   * authority), which blocks every settlement that owes a fee. One transaction, both Configs.
   */
  async setTreasury(treasury: PublicKey): Promise<string> {
    const authority = this.service.publicKey;
    const ixs = [await this.client.setTreasury({ authority, treasury }), await poolsClientFor(authority).setTreasury({ authority, treasury })];
    return sendAndConfirm(this.gateway, ixs, [this.service]);
  }
}
