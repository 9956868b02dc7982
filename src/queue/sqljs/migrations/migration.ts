/** One step of the queue file's schema. `version` is stored in SQLite's `PRAGMA user_version`. */
export interface Migration {
  readonly version: number;
  readonly name: string;
  readonly sql: string;
  /** SQL functions the step calls (registered on the database before its SQL runs). */
  readonly functions?: Readonly<Record<string, (value: string) => number>>;
}
