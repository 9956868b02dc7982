/**
 * Reads that both stores answer: the embedded store's in memory at once, PostgreSQL's over the network. The views
 * (`queue-views.ts`) and the covered check (`coverage.ts`) are written once
 * against this, in SQL both engines read alike (`?` and `?N` placeholders; the PostgreSQL reader numbers them).
 */
export interface AsyncRows {
  all<T>(sql: string, params?: readonly (string | number | null)[]): Promise<T[]>;
  get<T>(sql: string, params?: readonly (string | number | null)[]): Promise<T | undefined>;
}
