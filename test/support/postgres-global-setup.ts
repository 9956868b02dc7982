import type { TestProject } from "vitest/node";
import { findPostgresBin, startPostgresCluster } from "./postgres-cluster.ts";
import type { PostgresProvided } from "./postgres.ts";

/**
 * vitest globalSetup: ONE throwaway PostgreSQL cluster for the whole test run (about 2 s to start), stopped and removed
 * after the last file. Test files reach it through `inject("autoscanPostgres")` (test/support/postgres.ts), which
 * works with the forks pool. When PostgreSQL is missing or does not start, the run goes on: the PostgreSQL suites
 * report SKIPPED with the reason (or fail, under CI=true with AUTOSCAN_REQUIRE_POSTGRES=1).
 */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const found = findPostgresBin();
  if (!found.ok) {
    project.provide("autoscanPostgres", { ok: false, reason: found.reason } satisfies PostgresProvided);
    return async () => undefined;
  }
  try {
    const cluster = await startPostgresCluster(found);
    project.provide("autoscanPostgres", { ok: true, url: cluster.url, major: cluster.major } satisfies PostgresProvided);
    return () => cluster.stop();
  } catch (error) {
    const reason = `the test PostgreSQL (${found.bin}) did not start: ${error instanceof Error ? error.message : String(error)}`;
    project.provide("autoscanPostgres", { ok: false, reason } satisfies PostgresProvided);
    return async () => undefined;
  }
}
