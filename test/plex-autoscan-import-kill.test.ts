import { mkdir, readdir, writeFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import { expect, it } from "vitest";
import { captureLog, makeTempDir } from "./support/capture-log.ts";
import { freePort } from "./support/free-port.ts";
import { createManualClock } from "./support/manual-clock.ts";
import { backlogPaths, writePlexAutoscanQueue } from "./support/plex-autoscan-queue.ts";
import { describeEachStore } from "./support/queue-adapters.ts";
import { startCli, within, type RunningCli } from "./support/run-cli.ts";

/**
 * plex_autoscan's queue.db where autoscan's goes, taken in by a real server that is SIGKILLed at each step of the
 * import (`AUTOSCAN_TEST_PAUSE_IMPORT_AT` holds it there): `move` (the file set aside, the store not open yet), `rows`
 * (the first batch and its mark stored), `marker` (every row and the mark stored, the file not yet kept as .bak).
 * The restart ends with every row imported once: none lost, none stored twice, the old file kept.
 */
const ROWS = 1_200;

describeEachStore("a plex_autoscan import killed at each step", (adapter) => {
  for (const step of ["move", "rows", "marker"]) {
    it(`a SIGKILL at '${step}', then a restart: every row imported once`, async () => {
      const place = await adapter.place();
      const temp = await makeTempDir();
      const data = adapter.name === "sql.js" ? dirname(place.where) : join(temp.dir, "data");
      await mkdir(data, { recursive: true });
      const config = join(temp.dir, "config.json");
      await writeFile(config, JSON.stringify({ SERVER_PASS: "kill-test-pass", SERVER_PORT: await freePort(), SERVER_SCAN_DELAY: 3600 }));
      const env: Record<string, string> = adapter.name === "postgresql" ? { SERVER_DATABASE_URL: place.where } : {};
      writePlexAutoscanQueue(join(data, "queue.db"), backlogPaths(ROWS));
      const server = (extra: Record<string, string> = {}): RunningCli =>
        startCli(["server", "--config", config, "--data-dir", data, "--logfile", "none"], { env: { ...env, ...extra }, timeoutMs: 60_000 });
      const output = (child: RunningCli): string => child.stdout() + child.stderr();
      const until = async (child: RunningCli, text: string): Promise<void> => {
        for (let i = 0; i < 600 && !output(child).includes(text); i++) await new Promise((resolve) => setTimeout(resolve, 50));
        expect(output(child), `waiting for "${text}"`).toContain(text);
      };
      try {
        const first = server({ AUTOSCAN_TEST_PAUSE_IMPORT_AT: step });
        await until(first, `Paused at the import step '${step}'`);
        first.process.kill("SIGKILL");
        await within(first.exited, 10_000, "the killed server");

        const second = server();
        await until(second, "Imported ");
        const summary = /Imported (\d+) scan request\(s\).*: (\d+) queued, (\d+) merged/.exec(output(second));
        second.process.kill("SIGTERM");
        expect((await within(second.exited, 30_000, "the stop")).code).toBe(0);
        // None stored twice: what the restart stored is what the first run had not, and nothing merged.
        const before = step === "move" ? 0 : step === "rows" ? 500 : ROWS;
        expect(summary?.slice(1).map(Number)).toEqual([ROWS - before, ROWS - before, 0]);
        expect((await readdir(data)).filter((name) => name.includes("plex_autoscan"))).toEqual(["queue.db.plex_autoscan.bak"]);

        const queue = await place.open({ clock: createManualClock(), log: captureLog().log, scanDelayMs: 3_600_000 });
        try {
          expect(await queue.pendingCount()).toBe(ROWS);
          for (let offset = 0; offset < ROWS; offset += 500) {
            expect((await queue.listPending({ limit: 500, offset })).every((item) => item.requests.length === 1)).toBe(true);
          }
        } finally {
          await queue.close();
        }
      } finally {
        await place.cleanup();
        await temp.cleanup();
      }
    }, 120_000);
  }
});
