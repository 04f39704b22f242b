/**
 * Missing owner checks and type cosplay (programs/SECURITY.md): accounts forged under another
 * owner, another program's accounts, one account type passed as another, token accounts not owned
 * by the token program.
 */
import { beforeAll, describe, it } from "vitest";
import { Keypair, PublicKey } from "@solana/web3.js";
import { TOKEN_PROGRAM } from "../../../idl/client/offers";
import { setUp, alice, bob, closeIx, contract, offer, rejected, takeIx, w } from "./scene";

beforeAll(setUp);

describe("offers: owner checks and type cosplay", () => {
  it("an offer forged under another owner (missing owner check), and the contract passed as the offer (type cosplay)", async () => {
    const forged = Keypair.generate().publicKey;
    w.chain.setAccount(forged, { ...(await w.chain.account(offer))!, owner: TOKEN_PROGRAM });
    const o = await w.offer(offer);
    await rejected(takeIx(o.revision, { offer: forged }), [bob.key], "WrongAccountOwner");
    await rejected(takeIx(o.revision, { offer: contract }), [bob.key], "WrongAccountType");
    await rejected(closeIx(o, { offer: forged, creator: alice.key.publicKey }), [alice.key], "WrongAccountOwner");
  });

  it("a copy of the config data under an address this program does not own (another program's account)", async () => {
    const copy = Keypair.generate().publicKey;
    const cfg = (await w.chain.account(w.client.pda.config()[0]))!;
    w.chain.setAccount(copy, { ...cfg, owner: new PublicKey("11111111111111111111111111111111") });
    const o = await w.offer(offer);
    await rejected(closeIx(o, { overrides: { config: copy } }), [alice.key], "AccountMismatch");
  });

  it("a token account not owned by the token program (a copy of the taker's, owned by the system program)", async () => {
    const copy = Keypair.generate().publicKey;
    w.chain.setAccount(copy, { ...(await w.chain.account(bob.token))!, owner: new PublicKey("11111111111111111111111111111111") });
    const o = await w.offer(offer);
    await rejected(takeIx(o.revision, { taker: { key: bob.key, token: copy } }), [bob.key], "WrongAccountOwner");
  });
});
