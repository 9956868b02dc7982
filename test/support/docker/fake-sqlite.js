#!/usr/local/bin/node
// A fake `Plex SQLite` (Plex's build of the sqlite3 shell) for autoscan's Docker tests: enough of the sqlite3 CLI
// to answer `Plex SQLite -readonly -json <database> <sql>` from a real SQLite file, as the real shell does:
// a JSON array of row objects, nothing at all when there are no rows, exit 1 with `Error: …` on stderr.
import { DatabaseSync } from "node:sqlite";

const args = process.argv.slice(2);
const flags = args.filter((arg) => arg.startsWith("-"));
const [database, sql] = args.filter((arg) => !arg.startsWith("-"));
if (!flags.includes("-json") || !database || !sql) {
  process.stderr.write("fake Plex SQLite: only `-readonly -json <database> <sql>` is implemented\n");
  process.exit(1);
}
try {
  const db = new DatabaseSync(database, { readOnly: flags.includes("-readonly") });
  const rows = db.prepare(sql).all();
  if (rows.length > 0) process.stdout.write(`[${rows.map((row) => JSON.stringify(row)).join(",\n")}]\n`);
} catch (error) {
  process.stderr.write(`Error: unable to open database "${database}": ${error.message}\n`);
  process.exit(1);
}
