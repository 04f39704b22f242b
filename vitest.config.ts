import { defineConfig } from "vitest/config";

// The program and harness suites run twice, once per SVM engine (engine parity: bankrun is deprecated
// upstream, LiteSVM is its successor); everything else runs on bankrun, but the RPC source's
// suite, which needs a real validator.
export default defineConfig({
  test: {
    // Each suite starts its own runtime; two cores, so two forks.
    pool: "forks",
    poolOptions: { forks: { maxForks: 2, minForks: 1 } },
    testTimeout: 180_000,
    hookTimeout: 180_000,
    projects: [
      {
        extends: true,
        test: { name: "bankrun", include: ["tests/**/*.test.ts"], exclude: ["tests/rpc/**", "**/node_modules/**"], env: { SVM_ENGINE: "bankrun" } },
      },
      // A real solana-test-validator (skipped where scripts/setup-test-validator.sh has not built it).
      { extends: true, test: { name: "validator", include: ["tests/rpc/**/*.test.ts"], poolOptions: { forks: { singleFork: true } } } },
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
