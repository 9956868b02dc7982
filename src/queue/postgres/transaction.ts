import { classifyDatabaseError, type PgClient, type PgPool } from "./pool.ts";

/** SQLSTATEs after which the same transaction may simply run again: a serialization failure, a deadlock. */
const RETRYABLE = new Set(["40001", "40P01"]);
const MAX_TRIES = 5;

/**
 * Runs `work` in one transaction on one connection; it commits when `work` resolves and rolls back when it throws.
 * A transaction PostgreSQL aborted as a deadlock victim runs again (at most 5 times). Errors come out classified: an
 * unreachable database is a `StoreUnavailableError`. A rejected promise means nothing was stored, except when the
 * connection broke during COMMIT itself (the outcome is then unknown to us; the caller was not told "stored").
 */
export async function inTransaction<T>(pool: PgPool, work: (client: PgClient) => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    let client: PgClient;
    try {
      client = await pool.connect();
    } catch (error) {
      throw classifyDatabaseError(error);
    }
    let broken: Error | undefined;
    // A checked-out connection has no listener of the pool's: the server ending it mid-transaction (a restart,
    // pg_terminate_backend) emits 'error', which without this one would end the process. The query fails anyway.
    const onError = (error: Error): void => {
      broken = error;
    };
    client.on("error", onError);
    try {
      await client.query("BEGIN");
      const result = await work(client);
      await client.query("COMMIT");
      return result;
    } catch (error) {
      await client.query("ROLLBACK").catch((rollbackError: unknown) => {
        broken = rollbackError instanceof Error ? rollbackError : new Error(String(rollbackError));
      });
      const code = (error as { code?: unknown }).code;
      if (typeof code === "string" && RETRYABLE.has(code) && attempt < MAX_TRIES) continue;
      throw classifyDatabaseError(error);
    } finally {
      // A connection whose rollback failed, or that broke, is not given back to the pool.
      client.removeListener("error", onError);
      client.release(broken);
    }
  }
}
