import { join } from "node:path";
import pino from "pino";
import { afterEach, describe, expect, it } from "vitest";
import { systemClock } from "../../core/clock.ts";
import type { LookRecord } from "../../queue/rules/landed.ts";
import { createScanQueue } from "../../queue/open-scan-queue.ts";
import { makeTempDir } from "../../../test/support/capture-log.ts";
import { targetsHtml } from "./item-view.ts";

/**
 * A pending landed check as History shows it, from the real queue (the rows the dispatcher and the landed checker
 * write, read back as the console reads them): before the first look, after a first look that missed, after a second
 * that queued a rescan. The words say which, with the files still missing.
 */
const FOLDER = "/data/TV/Severance/Season 02";
const FILE = `${FOLDER}/Severance - S02E03.mkv`;
const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => void (await Promise.all(cleanups.splice(0).map((cleanup) => cleanup()))));

/** A folder scanned by 'plex' whose check has taken these looks; its target line as History renders it, as text. */
async function pendingLine(looks: readonly LookRecord[]): Promise<string> {
  const { dir, cleanup } = await makeTempDir("autoscan-item-view-");
  cleanups.push(cleanup);
  const queue = await createScanQueue({ file: join(dir, "queue.db"), clock: systemClock, log: pino({ level: "silent" }), scanDelayMs: 0 });
  try {
    await queue.enqueue([{ path: FILE, kind: "file", source: "Sonarr", event: "Download" }]);
    const at = Date.now() + 1000;
    for (const item of await queue.dueForCheck(at, 10, new Set())) await queue.recordCheck(item.id, item.rev, { kind: "ready", checks: 1, scanFolder: item.folder, files: [] });
    const [item] = await queue.dueForTarget("plex", at, 10, new Set());
    if (!item) throw new Error("nothing due");
    await queue.beginAttempt(item.id, item.rev);
    await queue.recordScan(item.id, item.rev, "plex", { status: "scanned" }, ["plex"], { look: true, inMs: looks.length === 0 ? 240_000 : 0 });
    for (const look of looks) {
      expect(await queue.claimLook(item.id, "plex", 60_000)).toBeDefined();
      expect(await queue.recordLook(item.id, "plex", look)).toBe(true);
    }
    const view = await queue.getItem(item.id);
    if (!view) throw new Error("no item");
    // "Now" 4 minutes before the next look, so the words do not depend on how long the test took.
    const now = (view.targets[0]?.landedCheckAt ?? 0) - 240_000;
    return targetsHtml(view, ["plex"], now).replace(/<[^>]+>/g, "").replace(/&#39;/g, "'").replace(/\s+/g, " ").trim();
  } finally {
    await queue.close();
  }
}

const missed = (inMs: number): LookRecord => ({ kind: "again", inMs, missing: `'${FILE}'`, looked: true });

describe("History: a landed check still under way says where it stands", () => {
  it("before the first look: when it comes", async () => {
    expect(await pendingLine([])).toMatch(/^plex scanned .* checking first look in 4 min$/);
  });

  it("after a first look that missed: says so, names the missing file, and when the next look is", async () => {
    expect(await pendingLine([missed(240_000)])).toMatch(/checking not in its library yet at the first look · next look in 4 min missing: '\/data\/TV\/Severance\/Season 02\/Severance - S02E03\.mkv'$/);
  });

  it("after a second look that missed: a rescan is queued", async () => {
    expect(await pendingLine([missed(0), missed(90_000)])).toContain("still not in its library at the second look; a rescan of the files is queued · next look in");
  });
});
