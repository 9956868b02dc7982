import { existsSync } from "node:fs";
import { join } from "node:path";
import pino from "pino";
import { chromium, type Browser, type BrowserContext, type Page } from "playwright-core";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { systemClock } from "../src/core/clock.ts";
import type { LandedStart, LookRecord } from "../src/queue/rules/landed.ts";
import { createScanQueue } from "../src/queue/open-scan-queue.ts";
import { withChromium } from "./support/chromium.ts";
import { startConsoleService, type ConsoleService } from "./support/console-service.ts";

/**
 * The landed check as the History page shows it, in headless Chromium against the real service: one folder per
 * badge (landed, checking, not visible with two long missing paths, not checked), the "In the library" filter, no
 * sideways scrolling on a phone, axe-core, and screenshots for a human to look at (`/tmp/landed-*.png`).
 */
const AXE = join(import.meta.dirname, "..", "node_modules", "axe-core", "axe.min.js");
const SHOTS = process.env.LANDED_SHOTS ?? "/tmp";
withChromium("the browser tests of the History page's landed check", describeLanded);

const LANDED = "/data/Movies/Heat (1995)";
const CHECKING = "/data/TV/Severance/Season 02";
const NOT_VISIBLE = "/data/TV/The Extraordinarily Long-Named Documentary Series About Absolutely Everything (2024)/Season 01";
const NOT_CHECKED = "/data/TV/Slow Horses/Season 04";
const MISSING = [
  `${NOT_VISIBLE}/The_Extraordinarily_Long-Named_Documentary_Series_About_Absolutely_Everything_(2024)_-_S01E01_-_Beginnings.WEBDL-2160p.HDR10.mkv`,
  `${NOT_VISIBLE}/The_Extraordinarily_Long-Named_Documentary_Series_About_Absolutely_Everything_(2024)_-_S01E02_-_Middles.WEBDL-2160p.HDR10.mkv`,
];
const NOT_VISIBLE_REASON = `${MISSING.map((path) => `'${path}'`).join(", ")} not visible in 'plex' after a rescan`;
const NOT_CHECKED_REASON = "the lookup failed: Plex answered 500 Internal Server Error";

/** Each folder's requested files, how its landed check starts and what its look found (none: still checking). */
const FOLDERS: readonly { folder: string; files: readonly string[]; start: LandedStart; look?: LookRecord }[] = [
  { folder: NOT_CHECKED, files: [`${NOT_CHECKED}/Slow Horses - S04E01.mkv`], start: { look: true, inMs: 0 }, look: { kind: "not_checked", reason: NOT_CHECKED_REASON } },
  { folder: CHECKING, files: [`${CHECKING}/Severance - S02E03.mkv`], start: { look: true, inMs: 3_600_000 } },
  { folder: LANDED, files: [`${LANDED}/Heat (1995).mkv`], start: { look: true, inMs: 0 }, look: { kind: "landed", afterMs: 95_000 } },
  { folder: NOT_VISIBLE, files: MISSING, start: { look: true, inMs: 0 }, look: { kind: "not_visible", reason: NOT_VISIBLE_REASON } },
];

/** The four folders scanned by Plex through the real queue (as the dispatcher and the landed checker write them). */
async function seedLanded(dataDir: string): Promise<void> {
  const queue = await createScanQueue({ file: join(dataDir, "queue.db"), clock: systemClock, log: pino({ level: "silent" }), scanDelayMs: 0 });
  try {
    for (const { folder, files, start, look } of FOLDERS) {
      await queue.enqueue(files.map((path) => ({ path, kind: "file" as const, source: "Sonarr", event: "Download" })));
      const at = Date.now() + 1000;
      for (const item of await queue.dueForCheck(at, 10, new Set())) await queue.recordCheck(item.id, item.rev, { kind: "ready", checks: 1, scanFolder: item.folder, files: [] });
      const [item] = await queue.dueForTarget("plex", at, 10, new Set());
      if (item?.folder !== folder) throw new Error(`expected ${folder} due, got ${item?.folder}`);
      await queue.beginAttempt(item.id, item.rev);
      await queue.recordScan(item.id, item.rev, "plex", { status: "scanned" }, ["plex"], start);
      if (look) {
        expect(await queue.claimLook(item.id, "plex", 60_000)).toBeDefined();
        expect(await queue.recordLook(item.id, "plex", look)).toBe(true);
      }
    }
    expect(await queue.historyCount()).toBe(FOLDERS.length);
  } finally {
    await queue.close();
  }
}

interface AxeResult {
  readonly passes: readonly unknown[];
  readonly violations: readonly { readonly id: string; readonly impact?: string | null; readonly help: string; readonly nodes: readonly { readonly target: readonly string[] }[] }[];
}

function describeLanded(binary: string): void {
  describe("History: did the files land?", () => {
    let browser: Browser;
    let svc: ConsoleService;
    const contexts: BrowserContext[] = [];

    beforeAll(async () => {
      [browser, svc] = await Promise.all([
        chromium.launch({ executablePath: binary, args: ["--no-sandbox", "--disable-gpu"] }),
        startConsoleService({ SERVER_SCAN_DELAY: 600 }, { seed: seedLanded }),
      ]);
    });
    afterEach(async () => {
      await Promise.all(contexts.splice(0).map((context) => context.close().catch(() => undefined)));
    });
    afterAll(async () => {
      await browser?.close();
      await svc?.stop();
    });

    async function openHistory(width: number, height: number, query = ""): Promise<Page> {
      const context = await browser.newContext({ viewport: { width, height }, bypassCSP: true });
      contexts.push(context);
      const page = await context.newPage();
      await page.goto(`${svc.base}/history${query}`);
      return page;
    }

    /** The landed part of the plex target's line in the row of `folder`. */
    const targetLine = (page: Page, folder: string) =>
      page.locator("#history-list li.item").filter({ has: page.locator(".folder", { hasText: folder }) }).locator(".targets li");

    it("shows one badge per state, with the time, the next look or the reason", async () => {
      const page = await openHistory(1280, 800);
      expect(await page.locator("#history-list li.item").count()).toBe(4);
      const line = async (folder: string): Promise<string> => (await targetLine(page, folder).innerText()).replace(/\s+/g, " ");
      expect(await line(LANDED)).toMatch(/^plex scanned .+ landed visible 1 min 35 s after the request$/);
      expect(await line(CHECKING)).toMatch(/ checking first look in (59|60) min/);
      expect(await line(NOT_VISIBLE)).toContain(` not visible ${NOT_VISIBLE_REASON}`);
      expect(await line(NOT_CHECKED)).toMatch(new RegExp(` not checked ${NOT_CHECKED_REASON.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}$`));
    });

    it('the "In the library" filter narrows the list to the folder whose files are not visible', async () => {
      const page = await openHistory(1280, 800);
      const select = page.getByLabel("In the library");
      expect(await select.evaluate((el) => el.id)).toBe("landed");
      expect(await select.locator("option").allInnerTexts()).toEqual(["Any", "Not visible", "Landed", "Still checking", "Not checked"]);
      await select.selectOption("not_visible");
      await Promise.all([page.waitForURL(/[?&]landed=not_visible/), page.click("#filters button[type=submit]")]);
      const rows = page.locator("#history-list li.item");
      expect(await rows.count()).toBe(1);
      expect(await rows.locator(".folder").innerText()).toBe(NOT_VISIBLE);
      expect(await page.locator("#history-title").innerText()).toBe("1 folder match");
      expect(await page.getByLabel("In the library").inputValue()).toBe("not_visible");
    });

    it("nothing sticks out sideways at 390 px or 1280 px; screenshots in light and dark", async () => {
      const overflow: string[] = [];
      for (const [width, height] of [
        [390, 844],
        [1280, 800],
      ] as const) {
        const page = await openHistory(width, height);
        for (const colorScheme of ["light", "dark"] as const) {
          await page.emulateMedia({ colorScheme });
          const file = join(SHOTS, `landed-history-${width}-${colorScheme}.png`);
          await page.screenshot({ path: file, fullPage: true });
          expect(existsSync(file)).toBe(true);
          const sideways = await page.evaluate<number>("document.documentElement.scrollWidth - window.innerWidth");
          if (sideways > 0) overflow.push(`${width} px ${colorScheme}: ${sideways} px wider than the window`);
        }
      }
      expect(overflow).toEqual([]);
    });

    it("axe-core finds no serious or critical violation, light or dark, all rows and filtered", async () => {
      const found: string[] = [];
      for (const query of ["", "?landed=not_visible"]) {
        const page = await openHistory(390, 844, query);
        await page.addScriptTag({ path: AXE });
        for (const colorScheme of ["light", "dark"] as const) {
          await page.emulateMedia({ colorScheme });
          const result = await page.evaluate<AxeResult>("axe.run(document, { resultTypes: ['violations'] })");
          expect(result.passes.length).toBeGreaterThan(10);
          for (const v of result.violations.filter((x) => x.impact === "serious" || x.impact === "critical")) {
            found.push(`history${query} ${colorScheme}: ${v.impact} ${v.id}: ${v.help} ${v.nodes.slice(0, 3).map((n) => n.target.join(" ")).join("; ")}`);
          }
        }
      }
      expect(found).toEqual([]);
    });
  });
}
