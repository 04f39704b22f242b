/** What both simulations (scenario.ts in process, http-scenario.ts over HTTP) share. */
import type { PublicKey } from "@solana/web3.js";
import type { EngineName } from "../../harness/chain";

export interface ScenarioOptions {
  users: number;
  actions: number;
  days: number;
  seed: number;
  engine: EngineName;
  onProgress?: (done: number) => void;
}

export interface LiveContract {
  address: PublicKey;
  cutoff: bigint;
  deadline: bigint;
  done: boolean;
}

/** The simulated time: `days` spread evenly over `actions` steps from the chain's clock at the start. */
export class Timeline {
  private readonly startedMs = performance.now();
  private readonly span: bigint;
  private readonly step: bigint;

  private constructor(
    readonly t0: bigint,
    o: Pick<ScenarioOptions, "days" | "actions">,
  ) {
    this.span = BigInt(o.days) * 86_400n;
    this.step = this.span / BigInt(o.actions);
  }

  static async start(o: Pick<ScenarioOptions, "days" | "actions">, now: () => Promise<bigint>): Promise<Timeline> {
    return new Timeline(await now(), o);
  }

  /** The chain time of action `i`. */
  at(i: number): bigint {
    return this.t0 + this.step * BigInt(i);
  }

  /** Three days past the last action: every contract is past its deadline, so all can settle. */
  get end(): bigint {
    return this.t0 + this.span + 3n * 86_400n;
  }

  /** Wall-clock seconds since the start. */
  wallSeconds(): number {
    return (performance.now() - this.startedMs) / 1000;
  }
}
