/**
 * Offer rows (with their contract, see contracts.ts) to the API's Offer objects: the derived
 * chain fields, the contract, the creator's profile (joined in the offer rows), the side labels
 * and the viewer block. The caller's positions on a page and the compliance flags are loaded in
 * one query each (no N+1).
 */
import type { Kysely } from "kysely";
import { deriveOffer, sideLabels, type ConfigTable, type Database, type PositionsTable } from "../../indexer";
import { contractOfRow, resultOf, toContract, type OfferRow } from "./contracts";
import { viewerOf, type Viewer } from "./offer-viewer";
import { offerOdds } from "./odds";
import type { Contract, Offer } from "./read-model";
import type { CompiledReads } from "./compiled-reads";

/** The caller's positions on a page's offers, and every position of the offers the caller created. */
export interface HeldPositions {
  positionOf: Map<string, PositionsTable>;
  creatorPositions: PositionsTable[];
}

export interface ShapingDeps {
  db: Kysely<Database>;
  configRow: () => Promise<ConfigTable | null>;
  /** Chain time in unix seconds. */
  now: () => Promise<number>;
  /** Which of these wallets are blocked from wagering. */
  blockedWallets: (wallets: string[]) => Promise<Set<string>>;
  /** The per-page queries compiled once per shape (./compiled-reads.ts). */
  compiled: CompiledReads;
}

const shortWallet = (w: string) => `${w.slice(0, 4)}…${w.slice(-4)}`;

/**
 * One offer as the API shows it. Written as one object literal, every field named: spreading the
 * derived fields, labels and odds into it (as before) cost about 12 µs per offer, most of an
 * uncached page's shaping (BENCHMARKS.md, issue 21 item 7), and left an object that is slower to
 * serialise. The field order is the API's (the derived fields, then the contract, creator, labels,
 * odds and viewer).
 */
export function offerOf(r: OfferRow, config: ConfigTable | null, contract: Contract, creator: Offer["creator"], viewer: Viewer): Offer {
  const d = deriveOffer(r, config);
  const labels = sideLabels(d.creatorOutcome, { side_a_label: contract.outcomes[0].label, side_b_label: contract.outcomes[1].label });
  const odds = offerOdds(r);
  return {
    address: d.address,
    creatorOutcome: d.creatorOutcome,
    creatorTotalMicros: d.creatorTotalMicros,
    creatorAllocatedMicros: d.creatorAllocatedMicros,
    takerTargetMicros: d.takerTargetMicros,
    takerFilledMicros: d.takerFilledMicros,
    remainingTakerMicros: d.remainingTakerMicros,
    minimumTakeMicros: d.minimumTakeMicros,
    feeBps: d.feeBps,
    termsGuardrail: d.termsGuardrail,
    status: d.status,
    fillCount: d.fillCount,
    positionCount: d.positionCount,
    settledPositionCount: d.settledPositionCount,
    revision: d.revision,
    createdAt: d.createdAt,
    closedAt: d.closedAt,
    expiresAt: d.expiresAt,
    contract,
    creator,
    creatorSideLabel: labels.creatorSideLabel,
    takerSideLabel: labels.takerSideLabel,
    takerOdds: odds.takerOdds,
    creatorOdds: odds.creatorOdds,
    viewer,
  };
}

export class OfferShaper {
  constructor(private readonly d: ShapingDeps) {}

  /**
   * Rows -> spec Offers, with contracts, profiles and the viewer's positions loaded in batches
   * (`held`: already loaded by the caller).
   *
   * `publicRead`: the viewer blocks of a wallet's public positions read, which anyone may ask for:
   * the wallet's compliance state is not theirs to learn, so it is never consulted (callerBlocked
   * stays false) and a blocked wallet's read equals an unblocked one's.
   */
  async shape(rows: OfferRow[], viewerWallet: string | null, o: { publicRead?: boolean; held?: HeldPositions } = {}): Promise<Offer[]> {
    if (rows.length === 0) return [];
    const [config, viewers] = await Promise.all([this.d.configRow(), this.viewers(rows, viewerWallet, o.held, o)]);
    const contracts = new Map<string, Contract>();
    for (const r of rows) if (!contracts.has(r.contract)) contracts.set(r.contract, toContract(contractOfRow(r)));
    return rows.map((r, i) => {
      const creator = { displayName: r.p_display_name ?? shortWallet(r.creator), profileImageUrl: r.p_profile_image_url ?? "" };
      return offerOf(r, config, contracts.get(r.contract)!, creator, viewers[i]);
    });
  }

  /** The viewer blocks of `rows` for `wallet` (anonymous: null), from `held` when the caller already has it. */
  async viewers(rows: OfferRow[], wallet: string | null, held?: HeldPositions, o: { publicRead?: boolean } = {}): Promise<Viewer[]> {
    const asked = o.publicRead ? null : wallet;
    if (rows.length === 0) return [];
    const [config, now, { positionOf, creatorPositions }, blocked] = await Promise.all([
      this.d.configRow(),
      this.d.now(),
      held ?? this.positions(rows, wallet),
      this.d.blockedWallets([...new Set([...rows.map((r) => r.creator), ...(asked ? [asked] : [])])]),
    ]);
    return rows.map((r) =>
      viewerOf({
        offer: r,
        wallet,
        position: positionOf.get(r.address) ?? null,
        creatorPositions: creatorPositions.filter((p) => p.offer === r.address),
        contract: { status: r.k_status, cutoffAt: r.k_cutoff_at },
        result: resultOf(r.k_result),
        now,
        config,
        callerBlocked: asked !== null && blocked.has(asked),
        creatorBlocked: blocked.has(r.creator),
      }),
    );
  }

  /** The caller's positions on `rows` (one query) and every position of the rows the caller created (one more). */
  async positions(rows: OfferRow[], wallet: string | null): Promise<HeldPositions> {
    const own = wallet === null ? [] : rows.filter((r) => r.creator === wallet).map((r) => r.address);
    const [positions, creatorPositions] = await Promise.all([
      wallet === null || rows.length === 0
        ? ([] as PositionsTable[])
        : this.d.compiled.rows(`taker-positions:${rows.length}`, [wallet, ...rows.map((r) => r.address)], () =>
            this.d.db
              .selectFrom("positions")
              .selectAll()
              .where("taker", "=", wallet)
              .where(
                "offer",
                "in",
                rows.map((r) => r.address),
              ),
          ),
      own.length === 0
        ? ([] as PositionsTable[])
        : this.d.compiled.rows(`offer-positions:${own.length}`, own, () => this.d.db.selectFrom("positions").selectAll().where("offer", "in", own)),
    ]);
    return { positionOf: new Map(positions.map((p) => [p.offer, p])), creatorPositions };
  }
}
