/**
 * The SVM engines (solana-bankrun, LiteSVM) live in graphql/chain/engines.ts, where the service's
 * local-chain gateway uses them too; the harness re-exports them so there is one copy.
 */
export * from "../../graphql/chain/engines";
