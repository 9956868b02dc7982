import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { DriveStatus } from "../src/core/drive-status.ts";
import { buildWebApp, TEST_PASS } from "./support/web-builders.ts";

/**
 * The README's Console table is what people type into the address bar: every page it lists must be written with the
 * secret, as the app serves it (`/queue` alone is a 404), and must answer on the real app.
 */
const README = join(import.meta.dirname, "..", "README.md");

async function consoleTablePaths(): Promise<string[]> {
  const text = await readFile(README, "utf8");
  const start = text.indexOf("\n## Console\n");
  const end = text.indexOf("\n## ", start + 1);
  expect(start).toBeGreaterThan(-1);
  const rows = text.slice(start, end).split("\n").filter((line) => /^\| \*\*/.test(line));
  expect(rows.length).toBeGreaterThanOrEqual(5);
  // The path is the first code span in the row's first cell: "| **Queue** (`/<SERVER_PASS>/queue`) | …".
  return rows.map((row) => /`(\/[^`]*)`/.exec(row.split("|")[1] ?? "")?.[1] ?? `no path in: ${row}`);
}

const drive: DriveStatus = {
  access: "service account key /config/sa.json",
  state: "running",
  pollIntervalMs: 60_000,
  today: { changes: 0, scansQueued: 0 },
  drives: ["My Drive"],
  errors: [],
};

describe("README: the Console table", () => {
  it("writes every page with the secret, and each answers 200", async () => {
    const paths = await consoleTablePaths();
    for (const path of paths) expect(path).toMatch(/^\/<SERVER_PASS>(\/[a-z]+)?$/);
    const { app } = buildWebApp({ allowManualScan: true, console: { drive: () => drive } });
    for (const path of paths) {
      const res = await app.request(path.replace("<SERVER_PASS>", TEST_PASS));
      expect({ path, status: res.status }).toEqual({ path, status: 200 });
    }
  });
});
