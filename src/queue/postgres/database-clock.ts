import type { PgQueryable } from "./pool.ts";

/**
 * The time of the PostgreSQL queue: the database's clock, one for every instance. Due times, next attempts, leases and
 * finish times are written and compared in it, so instances need no clock agreement: an instance whose clock runs
 * ahead neither takes over folders others are scanning nor holds a dead instance's folders too long. (Instances still
 * compare their own clocks for nothing but the log's timestamps; doctor's skew warning is information.)
 *
 * Tests drive time with a manual clock instead (River's stubbed time): `fixed` answers it, and the SQL below takes it
 * in place of the database's.
 */
export type StoreClock = (db: PgQueryable) => Promise<number>;

/** Milliseconds since the epoch on the database's clock, in SQL. */
export const DATABASE_NOW_MS = "(extract(epoch from clock_timestamp()) * 1000)::bigint";

export function createStoreClock(fixed?: () => number): StoreClock {
  if (fixed) return (_db) => Promise.resolve(fixed());
  return async (db) => {
    const result = await db.query<{ now: number }>(`SELECT ${DATABASE_NOW_MS} AS now`);
    return Number(result.rows[0]?.now);
  };
}
