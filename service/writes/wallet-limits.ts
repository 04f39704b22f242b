/**
 * The per-user bound on the service wallet (./wallet-guard.ts) as numbers: what each limit is and its
 * default. Apart from the guard so the entry points' settings (stack/config/settings.ts) read the
 * defaults without loading the guard and what it needs.
 */
export interface WalletLimits {
  /** Writes a user may make at once (bucket size); 0 switches the rate limit off. */
  writeBurst: number;
  /** Writes per hour refilled into the bucket; 0 switches the rate limit off. */
  writesPerHour: number;
  /** Offers per user whose rent the service still holds; 0 switches the cap off. */
  maxOpenOffers: number;
  /** Positions per user whose rent the service still holds; 0 switches the cap off. */
  maxOpenPositions: number;
}

export const DEFAULT_WALLET_LIMITS: WalletLimits = { writeBurst: 60, writesPerHour: 60, maxOpenOffers: 20, maxOpenPositions: 100 };
