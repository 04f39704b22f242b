/**
 * How the entry points end on a bad value: one line naming it on stderr and exit code 2 (a usage
 * error), whether commander refused it (a flag, an environment variable, an argument) or the
 * entry point did (a combination of settings, a port in use). Other failures stay exit 1.
 */
import { CommanderError, InvalidArgumentError, type Command } from "commander";
import { createServer } from "node:net";

/** The exit code of a value or combination the command does not accept. */
export const USAGE_EXIT = 2;

/** A setting the entry point refuses after parsing (e.g. two that do not go together). */
export class ConfigError extends Error {}

/**
 * Commander's own refusals (unknown option, bad or missing value) exit 2 instead of 1; help and
 * version still exit 0. Set on the program before its subcommands, which inherit it.
 */
export function strictExit<C extends Command>(cmd: C): C {
  return cmd.exitOverride((e: CommanderError) => process.exit(e.exitCode === 0 ? 0 : USAGE_EXIT));
}

/** Whether `e` is a refusal of the command line (exit 2) rather than a failure of the work (exit 1). */
export const isUsageError = (e: unknown) => e instanceof ConfigError || e instanceof InvalidArgumentError;

/** The last word of an entry point: a usage error as one line and exit 2, anything else with its trace and exit 1. */
export function exitOnError(e: unknown): never {
  if (isUsageError(e)) {
    console.error(`error: ${(e as Error).message}`);
    process.exit(USAGE_EXIT);
  }
  console.error(e);
  process.exit(1);
}

/**
 * Refuses a port another process holds, before anything is written: a second `npm start` must
 * not touch the data directory of the one running. (A port taken between this check and the
 * server's listen still fails there, with the same sentence.)
 */
export async function assertPortFree(host: string, port: number, flag: string): Promise<void> {
  const probe = createServer();
  const err = await new Promise<NodeJS.ErrnoException | null>((resolve) => {
    probe.once("error", resolve);
    probe.listen({ host, port, exclusive: true }, () => probe.close(() => resolve(null)));
  });
  if (err) throw portRefusal(err, port, flag) ?? err;
}

/** The sentence for a port that cannot be bound (in use, or not ours to take); null for other errors. */
export function portRefusal(err: NodeJS.ErrnoException, port: number, flag: string): ConfigError | null {
  if (err.code === "EADDRINUSE") return new ConfigError(`port ${port} is in use; choose another with ${flag}`);
  if (err.code === "EACCES") return new ConfigError(`port ${port} may not be bound by this user; choose another with ${flag}`);
  if (err.code === "EADDRNOTAVAIL") return new ConfigError(`the address to bind for port ${port} is not one of this machine's; choose another with --host`);
  return null;
}
