/** One step of the PostgreSQL schema (schema `autoscan`). Applied versions are rows of `autoscan.schema_migrations`. */
export interface PgMigration {
  readonly version: number;
  readonly name: string;
  readonly sql: string;
}
