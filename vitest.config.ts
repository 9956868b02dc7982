import { availableParallelism } from "node:os";
import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["src/**/*.test.ts", "test/**/*.test.ts"],
    testTimeout: 20_000,
    hookTimeout: 60_000,
    pool: "forks",
    // Two test files at a time even on 2 cores (vitest's default there is one): most of a component test's time is
    // spent waiting on a child process, a real clock or a container, not on the CPU. Whole suite on 2 cores:
    // 867 s one file at a time, 535 s two at a time.
    maxWorkers: Math.max(2, availableParallelism() - 1),
    // One throwaway PostgreSQL for the run (test/support/postgres.ts); absent PostgreSQL skips those suites loudly.
    globalSetup: ["test/support/postgres-global-setup.ts"],
    // A test file marks itself with a `// @module-tag <name>` line; `npm run test:unit` leaves these out (vitest.unit.config.ts).
    tags: [
      { name: "process", description: "starts a child process (the disk probe's helper, a shell, a scanner, mount)" },
      { name: "realtime", description: "waits on the real clock to let time pass" },
    ],
  },
});
