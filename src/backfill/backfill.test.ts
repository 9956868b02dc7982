// @module-tag realtime
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pino from "pino";
import { afterEach, describe, expect, it } from "vitest";
import type { ScanRequest } from "../core/scan.ts";
import { createBackfill, type BackfillApp } from "./backfill.ts";
import { openCursorStore } from "./cursor-store.ts";
import type { HistoryPages } from "./read-history.ts";

/**
 * The backfill's cursor rules and its stop: a read from `--since` later than the cursor leaves the cursor (the
 * records between them were not read), and a stop ends a read that was asked for through the API.
 */
const silent = pino({ level: "silent" });
const H = 3_600_000;
const T0 = Date.UTC(2026, 10, 20);
let dir: string | undefined;
afterEach(async () => {
  if (dir) await rm(dir, { recursive: true, force: true });
  dir = undefined;
});

type Rec = { id: number; date: number; path: string };

function source(records: Rec[], hang?: { active: boolean }): HistoryPages<Rec> {
  return {
    historyPage(page, size, signal) {
      if (hang?.active) {
        return new Promise((_resolve, reject) => signal?.addEventListener("abort", () => reject(signal.reason), { once: true }));
      }
      const newestFirst = [...records].sort((a, b) => b.date - a.date);
      return Promise.resolve({ totalRecords: records.length, records: newestFirst.slice((page - 1) * size, page * size) });
    },
  };
}

async function setup(records: Rec[], now: { at: number }, hang?: { active: boolean }) {
  dir = await mkdtemp(join(tmpdir(), "autoscan-backfill-"));
  const cursors = await openCursorStore(join(dir, "backfill.json"), silent);
  const queued: ScanRequest[] = [];
  const app: BackfillApp<Rec> = {
    name: "sonarr",
    pages: source(records, hang),
    toRequests: (record) => [{ path: record.path, kind: "file", source: "Sonarr (sonarr)", event: "Download (backfill)" }],
    classify: () => "other",
  };
  const backfill = createBackfill({
    apps: [app],
    cursors,
    sink: async (requests) => {
      queued.push(...requests);
      return { items: requests.map((r) => ({ folder: r.path, merged: false })) };
    },
    isCovered: async (request) => queued.some((q) => q.path === request.path),
    clock: { now: () => now.at, sleep: () => Promise.resolve() },
    log: silent,
    intervalMs: 900_000,
  });
  return { backfill, cursors, queued };
}

describe("the backfill's cursor", () => {
  it("a --since later than the cursor leaves it, so the next regular read still reads what lies between", async () => {
    const records: Rec[] = [{ id: 1, date: T0, path: "/tv/A/S01/e1.mkv" }];
    const now = { at: T0 + H };
    const { backfill, cursors, queued } = await setup(records, now);
    await backfill.run(); // the first read: from now on
    expect(cursors.get("sonarr")).toEqual({ date: T0, id: 1 });
    // Autoscan could not read for a day; then someone asks for the last hour only.
    records.push({ id: 2, date: T0 + 10 * H, path: "/tv/B/S01/e1.mkv" }, { id: 3, date: T0 + 23.5 * H, path: "/tv/C/S01/e1.mkv" });
    now.at = T0 + 24 * H;
    await backfill.run({ since: now.at - H });
    expect(queued.map((r) => r.path)).toEqual(["/tv/C/S01/e1.mkv"]);
    expect(cursors.get("sonarr")).toEqual({ date: T0, id: 1 });
    // The regular read goes back to the cursor: B is queued too.
    await backfill.run();
    expect(queued.map((r) => r.path).sort()).toEqual(["/tv/B/S01/e1.mkv", "/tv/C/S01/e1.mkv"]);
    expect(cursors.get("sonarr")).toEqual({ date: T0 + 23.5 * H, id: 3 });
  });

  it("an empty history starts from the beginning of time: what the app writes next is read whatever its clock says", async () => {
    const records: Rec[] = [];
    const now = { at: T0 + H };
    const { backfill, cursors, queued } = await setup(records, now);
    await backfill.run();
    expect(cursors.get("sonarr")).toEqual({ date: 0, id: 0 });
    // The app's clock is an hour behind ours.
    records.push({ id: 1, date: T0, path: "/tv/A/S01/e1.mkv" });
    await backfill.run();
    expect(queued.map((r) => r.path)).toEqual(["/tv/A/S01/e1.mkv"]);
  });
});

describe("stopping", () => {
  it("ends a read asked for through the API (its own signal never aborts)", async () => {
    const hang = { active: false };
    const now = { at: T0 };
    const { backfill } = await setup([{ id: 1, date: T0, path: "/tv/A/S01/e1.mkv" }], now, hang);
    await backfill.run();
    hang.active = true;
    const api = new AbortController();
    const reading = backfill.run({ since: T0 - H, signal: api.signal });
    // Let the read reach the app (it hangs there), then stop.
    await new Promise((resolve) => setTimeout(resolve, 20));
    await backfill.stop();
    const [summary] = await reading;
    expect(summary).toMatchObject({ app: "sonarr", ok: false, error: "stopped" });
    expect(api.signal.aborted).toBe(false);
  });
});
