/** What a Personal Access Token may do, and how long it lives unless the operator says (./custody.ts). */

/** bet:write: create, take, close. bet:read: signed-in reads only (any valid token may read). */
export const SCOPES = ["bet:write", "bet:read"] as const;

/** A token's lifetime when the operator names none (`admin issue-token` without --ttl): 30 days. */
export const DEFAULT_TOKEN_TTL_SECONDS = 30 * 86_400;
export type Scope = (typeof SCOPES)[number];
