/**
 * A user's claim balance on chain: payouts and refunds the offers program credited to the user's
 * claim account because the recorded token account could not receive them, waiting for a
 * withdrawal. Not indexed, so read from the chain (the portfolio's `claimsWaitingMicros`).
 */
import { PublicKey } from "@solana/web3.js";
import { decodeClaim, offersAccountKind } from "../../idl/client/offers";
import { ChainUnavailableError } from "../chain/gateway";
import { ApiError } from "../api-error";
import { CHAIN_UNREACHABLE } from "./errors";
import type { WriteService } from "./write-service";

export async function claimBalance(writes: WriteService, wallet: string): Promise<bigint> {
  const [claim] = writes.client.pda.claim(new PublicKey(wallet));
  const a = await writes.deps.gateway.getAccount(claim).catch((e) => {
    if (e instanceof ChainUnavailableError) throw new ApiError(503, CHAIN_UNREACHABLE);
    throw e;
  });
  if (!a || !a.owner.equals(writes.client.program.programId) || offersAccountKind(a.data) !== "claim") return 0n;
  return decodeClaim(a.data).amount;
}
