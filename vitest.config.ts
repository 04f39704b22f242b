import { defineConfig } from "vitest/config";

// The program and harness suites run twice, once per SVM engine (engine parity: bankrun is deprecated
// upstream, LiteSVM is its successor); everything else runs on bankrun, but the RPC source's
// suite, which needs a real validator.
export default defineConfig({
  test: {
    // Each suite starts its own runtime; two cores, so two forks.
    pool: "forks",
    // The validator project's own pool: one thread, one file at a time (see below).
    poolOptions: { forks: { maxForks: 2, minForks: 1 }, threads: { maxThreads: 1, minThreads: 1 } },
    testTimeout: 180_000,
    hookTimeout: 180_000,
    projects: [
      {
        extends: true,
        test: { name: "bankrun", include: ["tests/**/*.test.ts"], exclude: ["tests/rpc/**", "**/node_modules/**"], env: { SVM_ENGINE: "bankrun" } },
      },
      // A real solana-test-validator (skipped where scripts/setup-test-validator.sh has not built it).
      // Its files wait mostly on the validator's wall clock (cutoffs, slots, lock takeovers), so they
      // run in a pool of their own (vitest runs different pools side by side): one worker thread,
      // one file and one validator at a time, beside the two forks of the other projects. In the
      // forks pool with `singleFork` they ran only after every other file had finished (vitest
      // 3.2 runs singleFork specs last), a serial tail of 6-9 minutes with one core idle.
      { extends: true, test: { name: "validator", include: ["tests/rpc/**/*.test.ts"], pool: "threads" } },
      {
        extends: true,
        test: {
          name: "litesvm",
          include: ["tests/harness/**/*.test.ts", "tests/offers/**/*.test.ts", "tests/pools/**/*.test.ts"],
          env: { SVM_ENGINE: "litesvm" },
        },
      },
    ],
  },
});
