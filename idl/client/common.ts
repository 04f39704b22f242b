/**
 * What both program clients share: the upgradeable loader, whose ProgramData account of a
 * program names its upgrade authority (the only key that may initialise the program's Config).
 */
import { PublicKey } from "@solana/web3.js";

/** The BPF upgradeable loader (loader v3). */
export const LOADER_V3 = new PublicKey("BPFLoaderUpgradeab1e11111111111111111111111");

/** `PDA([programId], loader v3)`: the ProgramData account of an upgradeable program. */
export const programDataAddress = (programId: PublicKey): PublicKey => PublicKey.findProgramAddressSync([programId.toBuffer()], LOADER_V3)[0];
