import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["src/**/*.test.ts", "test/**/*.test.ts"],
    testTimeout: 20_000,
    hookTimeout: 60_000,
    pool: "forks",
    // One throwaway PostgreSQL for the run (test/support/postgres.ts); absent PostgreSQL skips those suites loudly.
    globalSetup: ["test/support/postgres-global-setup.ts"],
  },
});
