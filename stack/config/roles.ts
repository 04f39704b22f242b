/** The roles one service process can take (`--role`); what each runs is ../roles.ts. */
export const ROLES = ["all", "api", "indexer", "worker"] as const;
export type Role = (typeof ROLES)[number];
