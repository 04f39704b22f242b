/**
 * The cluster an Action's transactions are for, as CAIP-2 (`solana:<first 32 characters of the
 * genesis hash>`), sent in `X-Blockchain-Ids`: a client refuses to sign for another cluster.
 */
export const SOLANA_CLUSTERS = {
  mainnet: "solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp",
  devnet: "solana:EtWTRABZaYq6iMfeYKouRu166VU2xqa1",
  testnet: "solana:4uhcVJyU9pJkvQyS88uRDiswHXSCkY3z",
} as const;

/** A cluster name or a CAIP-2 id of a Solana chain; anything else throws. */
export function blockchainId(v: string): string {
  if (v in SOLANA_CLUSTERS) return SOLANA_CLUSTERS[v as keyof typeof SOLANA_CLUSTERS];
  if (/^solana:[1-9A-HJ-NP-Za-km-z]{32}$/.test(v)) return v;
  throw new Error(`expected mainnet, devnet, testnet or solana:<32 base58 characters of the genesis hash>, got ${JSON.stringify(v)}`);
}
