import { existsSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import pino from "pino";
import { chromium, type Browser, type BrowserContext, type BrowserContextOptions, type Page } from "playwright-core";
import { withChromium } from "./support/chromium.ts";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { systemClock } from "../src/core/clock.ts";
import type { ScanRequest } from "../src/core/scan.ts";
import { createScanQueue } from "../src/queue/open-scan-queue.ts";
import { CONSOLE_PASS, startConsoleService, type ConsoleService } from "./support/console-service.ts";

/**
 * The operator's console in real headless Chromium (Debian's `chromium`, driven by playwright-core) against the real
 * service (a child process with a real queue file, a fake Plex and a media folder on disk): live updates, the
 * actions, the History search over 10,000 folders, escaping of a hostile path, the event stream's hygiene, axe-core,
 * and screenshots of every page for a human to look at (test/artifacts/, git-ignored).
 *
 * Without a Chromium binary the test fails under CI=true and is skipped loudly elsewhere.
 */
const ARTIFACTS = join(import.meta.dirname, "artifacts");
const AXE = join(import.meta.dirname, "..", "node_modules", "axe-core", "axe.min.js");
withChromium("the browser tests of the console", describeConsole);

/** A minimal Sonarr "Download" webhook: `/tv/<show>/<relative>` (the service maps `/tv/` to `/data/TV/`). */
function sonarr(show: string, relative: string): unknown {
  return { eventType: "Download", series: { path: `/tv/${show}` }, episodeFile: { relativePath: relative } };
}

/** The hostile folder: markup, an entity, quotes, an emoji and right-to-left text. */
const HOSTILE_SHOW = `שלום <b>x</b> &amp; "q" 'y' 🎬 <img src=x onerror=alert(1)>`;
const HOSTILE_FOLDER = `/data/TV/${HOSTILE_SHOW}/S01`;

/** The needle of the History search, among 10,000 folders. */
const NEEDLE = "/data/Movies/Heat (1995)";
const SEEDED = 10_000;

/**
 * 10,000 finished folders written through the real queue (its own API, as the dispatcher writes them) before the
 * service opens the same file: 9,000 failed long ago, then 995 scanned (the needle among them), then 5 failed, so the
 * first page of History shows both kinds.
 */
async function seedHistory(dataDir: string): Promise<void> {
  const queue = await createScanQueue({ file: join(dataDir, "queue.db"), clock: systemClock, log: pino({ level: "silent" }), scanDelayMs: 0 });
  let n = 0;
  const batch = (count: number): ScanRequest[] =>
    Array.from({ length: count }, () => {
      const i = n++;
      return {
        path: i === 9_500 ? `${NEEDLE}/Heat (1995).mkv` : `/data/TV/Series ${String(i).padStart(5, "0")}/Season ${String((i % 9) + 1).padStart(2, "0")}/e.mkv`,
        kind: "file",
        source: i % 3 === 0 ? "Radarr" : "Sonarr",
        event: "Download",
      };
    });
  /** Each folder of a new batch is checked, sent to Plex, and given up on at its first failure. */
  const fail = async (count: number, reason: string): Promise<void> => {
    await queue.enqueue(batch(count));
    const at = Date.now() + 1000;
    for (let checked = await queue.dueForCheck(at, 1000, new Set()); checked.length > 0; checked = await queue.dueForCheck(at, 1000, new Set())) {
      await Promise.all(checked.map((item) => queue.recordCheck(item.id, item.rev, { kind: "ready", checks: 1, scanFolder: item.folder, files: [] })));
    }
    for (let due = await queue.dueForTarget("plex", at, 1000, new Set()); due.length > 0; due = await queue.dueForTarget("plex", at, 1000, new Set())) {
      await Promise.all(
        due.map(async (item) => {
          await queue.beginAttempt(item.id, item.rev);
          await queue.recordFailure(item.id, item.rev, "plex", { error: reason, retryInMs: 0, retryMaxMs: 0 }, ["plex"]);
        }),
      );
    }
  };
  try {
    await fail(9_000, "Plex did not answer for 30 minutes (connection refused at 127.0.0.1:32400).");
    await queue.enqueue(batch(995));
    const at = Date.now() + 1000;
    const checked = await queue.dueForCheck(at, 1000, new Set());
    await Promise.all(checked.map((item) => queue.recordCheck(item.id, item.rev, { kind: "ready", checks: 1, scanFolder: item.folder, files: [] })));
    await Promise.all(
      (await queue.dueForTarget("plex", at, 1000, new Set())).map(async (item) => {
        await queue.beginAttempt(item.id, item.rev);
        await queue.recordScan(item.id, item.rev, "plex", { status: "scanned" }, ["plex"]);
      }),
    );
    await fail(5, "Plex answered 401 Unauthorized: PLEX_TOKEN is wrong or expired; run autoscan doctor.");
    expect(await queue.historyCount()).toBe(SEEDED);
  } finally {
    await queue.close();
  }
}

/** Every page. */
const PAGES = ["scan", "queue", "history", "libraries", "drive"] as const;
type ConsolePage = (typeof PAGES)[number];
const SIZES = [
  [1280, 800],
  [390, 844],
] as const;
const SCHEMES = ["light", "dark"] as const;

interface AxeResult {
  readonly passes: readonly unknown[];
  readonly violations: readonly {
    readonly id: string;
    readonly impact?: string | null;
    readonly help: string;
    readonly nodes: readonly { readonly target: readonly string[]; readonly failureSummary?: string }[];
  }[];
}

function describeConsole(binary: string): void {
  describe("the operator's console in headless Chromium", () => {
    let browser: Browser;
    /** SERVER_SCAN_DELAY 1 s: requests go due at once (a due folder moving to History, a failure, a retry). */
    let fast: ConsoleService;
    /** SERVER_SCAN_DELAY 10 min: requests stay in the Queue while a test looks. Drive monitoring is on (so the Drive
     *  page exists), with no token yet: it shows as stopped, with why and how to fix it; Google is never called. */
    let slow: ConsoleService;
    /** 10,000 folders in History, and SERVER_SCAN_DELAY 10 min. */
    let seeded: ConsoleService;
    const contexts: BrowserContext[] = [];

    beforeAll(async () => {
      mkdirSync(ARTIFACTS, { recursive: true });
      const checks = { SERVER_MAX_FILE_CHECKS: 1, SERVER_FILE_CHECK_DELAY: 1 };
      [browser, fast, slow, seeded] = await Promise.all([
        chromium.launch({ executablePath: binary, args: ["--no-sandbox", "--disable-gpu"] }),
        startConsoleService({ SERVER_SCAN_DELAY: 1, ...checks }),
        startConsoleService({ SERVER_SCAN_DELAY: 600, ...checks, CLOUD: { ENABLED: true, CLIENT_ID: "555-console.apps.googleusercontent.com", CLIENT_SECRET: "GOCSPX-console" } }),
        startConsoleService({ SERVER_SCAN_DELAY: 600 }, { seed: seedHistory }),
      ]);
    });
    // A page left open would keep following its service live (and fetch itself again at every change).
    afterEach(async () => {
      await Promise.all(contexts.splice(0).map((context) => context.close().catch(() => undefined)));
    });
    afterAll(async () => {
      await browser?.close();
      await Promise.all([fast?.stop(), slow?.stop(), seeded?.stop()]);
    });

    /** A page whose dialogs are recorded (and accepted: a delete asks first). */
    async function openPage(options: BrowserContextOptions = {}): Promise<{ page: Page; dialogs: string[] }> {
      const context = await browser.newContext({ viewport: { width: 1280, height: 800 }, ...options });
      contexts.push(context);
      const page = await context.newPage();
      const dialogs: string[] = [];
      page.on("dialog", (dialog) => {
        dialogs.push(`${dialog.type()}: ${dialog.message()}`);
        void dialog.accept();
      });
      return { page, dialogs };
    }

    /** Opens a live page and waits until its event stream is open. */
    async function gotoLive(page: Page, url: string): Promise<void> {
      await page.goto(url);
      await page.locator("#live", { hasText: /^Live$/ }).waitFor({ timeout: 10_000 });
    }

    /** Opens one of the console's pages (a live one once its event stream is open). */
    async function gotoPage(page: Page, svc: ConsoleService, name: ConsolePage | "libraries-preview"): Promise<void> {
      if (name === "scan") return void (await page.goto(svc.base));
      if (name === "libraries-preview") return void (await page.goto(`${svc.base}/libraries?path=${encodeURIComponent("/nowhere/Film (2000)/film.mkv")}`));
      if (name === "queue" || name === "history" || name === "drive") return gotoLive(page, `${svc.base}/${name}`);
      await page.goto(`${svc.base}/${name}`);
    }

    /** The row of `folder` in a list (`#queue-list` or `#history-list`). */
    const row = (page: Page, list: string, folder: string) =>
      page.locator(`${list} li.item`).filter({ has: page.locator(".folder", { hasText: folder }) });

    async function markPage(page: Page): Promise<void> {
      await page.evaluate("window.__marker = 1");
    }
    async function stillSamePage(page: Page): Promise<void> {
      expect(await page.evaluate<unknown>("window.__marker"), "the page was reloaded or navigated").toBe(1);
    }

    /** The folders waiting, as the API lists them. */
    async function queued(svc: ConsoleService): Promise<string[]> {
      const answer = (await (await fetch(`${svc.url}/api/${CONSOLE_PASS}?cmd=queue`)).json()) as { queue: { folder: string }[] };
      return answer.queue.map((q) => q.folder);
    }

    /** axe-core's serious and critical violations on the page as it is, light and dark (the context must bypass the
     *  pages' script policy: axe is injected as an inline script). */
    async function axeProblems(page: Page, name: string): Promise<string[]> {
      const found: string[] = [];
      await page.addScriptTag({ path: AXE });
      for (const colorScheme of SCHEMES) {
        await page.emulateMedia({ colorScheme });
        const result = await page.evaluate<AxeResult>("axe.run(document, { resultTypes: ['violations'] })");
        expect(result.passes.length, `axe checked nothing on ${name}`).toBeGreaterThan(10);
        for (const violation of result.violations.filter((v) => v.impact === "serious" || v.impact === "critical")) {
          const where = violation.nodes.slice(0, 3).map((node) => `${node.target.join(" ")} (${(node.failureSummary ?? "").replace(/\s+/g, " ")})`);
          found.push(`${name} ${colorScheme}: ${violation.impact} ${violation.id}: ${violation.help} [${violation.nodes.length}] ${where.join("; ")}`);
        }
      }
      await page.emulateMedia({ colorScheme: "light" });
      return found;
    }

    async function sendAll(svc: ConsoleService, hooks: readonly (readonly [string, unknown])[]): Promise<void> {
      for (const [label, body] of hooks) {
        const response = await svc.webhook(label, body);
        if (response.status !== 200) throw new Error(`The ${label} webhook got ${response.status}: ${await response.text()}`);
      }
    }

    describe("History: a due folder's result, retry, search", () => {
      it("a due folder moves to History with its target's result, without a reload", async () => {
        const { page, dialogs } = await openPage();
        await gotoLive(page, `${fast.base}/history`);
        await markPage(page);
        await fast.addFile("TV/Due Show/Season 01/Due Show - S01E01.mkv");
        await sendAll(fast, [["sonarr", sonarr("Due Show", "Season 01/Due Show - S01E01.mkv")]]);

        const done = row(page, "#history-list", "/data/TV/Due Show/Season 01");
        await expect.poll(() => done.count(), { timeout: 15_000 }).toBe(1);
        expect(await done.locator(".badge").first().innerText()).toBe("Scanned");
        expect((await done.locator(".targets").innerText()).replace(/\s+/g, " ")).toMatch(/plex scanned/);
        await stillSamePage(page);
        expect(fast.plex.scans).toContainEqual(expect.objectContaining({ sectionId: "2", path: "/data/TV/Due Show/Season 01", inside: true }));
        expect(dialogs).toEqual([]);
      });

      it("Retry on a failed folder makes it pending again", async () => {
        const { page } = await openPage();
        await gotoLive(page, `${fast.base}/history`);
        // The file is not there: one file check, then the folder fails.
        await sendAll(fast, [["sonarr", sonarr("Late Show", "Season 02/Late Show - S02E05.mkv")]]);
        const folder = "/data/TV/Late Show/Season 02";
        const failed = row(page, "#history-list", folder);
        const badge = () => failed.locator(".badge").first().textContent({ timeout: 1000 }).catch(() => null);
        await expect.poll(badge, { timeout: 15_000 }).toBe("Failed");
        expect(await failed.locator(".reason").innerText()).toContain("Not found");
        await markPage(page);

        // Now the file is there, and Plex answers slowly: the retried folder stays pending while its scan is out.
        await fast.addFile("TV/Late Show/Season 02/Late Show - S02E05.mkv");
        fast.plex.setDelay(2500);
        try {
          await failed.locator("button[data-focus=retry]").click();
          await expect.poll(() => page.locator("#notice").innerText(), { timeout: 10_000 }).toContain("Queued again");
          await expect.poll(() => queued(fast), { timeout: 5_000, interval: 100 }).toContain(folder);
          // It left History without a reload…
          await expect.poll(() => failed.count(), { timeout: 5_000 }).toBe(0);
          await stillSamePage(page);
        } finally {
          fast.plex.setDelay(0);
        }
        // …and comes back scanned once Plex answers.
        await expect.poll(badge, { timeout: 15_000 }).toBe("Scanned");
      });

      it("History search finds one folder among 10,000", async () => {
        const { page } = await openPage();
        await page.goto(`${seeded.base}/history`);
        expect(await page.locator("#history-title").innerText()).toBe(`${SEEDED.toLocaleString("en-US")} folders`);
        await page.fill("#q", "Heat (1995)");
        const started = performance.now();
        await Promise.all([page.waitForURL(/[?&]q=Heat/), page.click("#filters button[type=submit]")]);
        const took = performance.now() - started;
        const rows = page.locator("#history-list li.item");
        expect(await rows.count()).toBe(1);
        expect(await rows.locator(".folder").innerText()).toBe(NEEDLE);
        expect(await page.locator("#history-title").innerText()).toBe("1 folder match");
        const server = await page.evaluate<number>(
          "(() => { const n = performance.getEntriesByType('navigation')[0]; return Math.round(n.responseStart - n.requestStart); })()",
        );
        console.info(`History search among ${SEEDED.toLocaleString("en-US")} folders: ${Math.round(took)} ms from the click to the page, ${server} ms of it waiting for the service`);
      });
    });

    describe("Queue: live updates, escaping, event streams; every page: screenshots, accessibility", () => {
      // A few folders waiting, one scanned and one failed (both through "Scan now"), so the pages show something.
      beforeAll(async () => {
        await slow.addFile("TV/The Expanse/Season 02/The Expanse - S02E01 - Safe.mkv");
        const alien = { eventType: "Download", movie: { folderPath: "/movies/Alien (1979)" }, movieFile: { relativePath: "Alien (1979) Bluray-1080p.mkv" } };
        await sendAll(slow, [
          ["radarr", alien],
          ["sonarr", sonarr("The Expanse", "Season 02/The Expanse - S02E01 - Safe.mkv")],
          ["sonarr", sonarr("The Expanse", "Season 02/The Expanse - S02E02 - Doors & Corners.mkv")],
          ["sonarr", sonarr("Severance", "Season 02/Severance - S02E03 - Who Is Alive.mkv")],
        ]);
        const { page } = await openPage();
        await gotoLive(page, `${slow.base}/queue`);
        for (const folder of ["/data/Movies/Alien (1979)", "/data/TV/The Expanse/Season 02"]) {
          await row(page, "#queue-list", folder).locator("button[data-focus=scan]").click();
          await row(page, "#queue-list", folder).waitFor({ state: "detached", timeout: 10_000 });
        }
        await page.context().close();
      });

      it("a webhook posted while the Queue page is open appears without a reload; Delete removes it", async () => {
        const { page, dialogs } = await openPage();
        await gotoLive(page, `${slow.base}/queue`);
        await markPage(page);
        await sendAll(slow, [["sonarr", sonarr("Live Show", "Season 01/Live Show - S01E02.mkv")]]);
        const waiting = row(page, "#queue-list", "/data/TV/Live Show/Season 01");
        await expect.poll(() => waiting.count(), { timeout: 10_000 }).toBe(1);
        expect(await waiting.textContent()).toContain("Sonarr");
        await stillSamePage(page);

        await waiting.locator("button[data-focus=delete]").click();
        await expect.poll(() => waiting.count(), { timeout: 10_000 }).toBe(0);
        expect(await page.locator("#notice").innerText()).toContain("Deleted");
        expect(dialogs).toEqual([expect.stringMatching(/^confirm: Delete \/data\/TV\/Live Show\/Season 01/)]);
        expect(await queued(slow)).not.toContain("/data/TV/Live Show/Season 01");
        await stillSamePage(page);
      });

      it("a hostile path renders as text, live and after a reload", async () => {
        // Without the page's script policy, so an injected handler would run and be seen.
        const { page, dialogs } = await openPage({ bypassCSP: true });
        await gotoLive(page, `${slow.base}/queue`);
        await sendAll(slow, [["sonarr", sonarr(HOSTILE_SHOW, "S01/e.mkv")]]);
        const list = page.locator("#queue-list");
        const check = async (): Promise<void> => {
          expect(await list.innerText()).toContain(HOSTILE_FOLDER);
          expect(await page.locator("img").count()).toBe(0);
          expect(await list.locator("b", { hasText: /^x$/ }).count()).toBe(0);
          // The action buttons name the folder, escaped in an attribute.
          expect(await page.locator(`button[aria-label="Delete: ${HOSTILE_FOLDER.replace(/"/g, '\\"')}"]`).count()).toBe(1);
          expect(dialogs).toEqual([]);
        };
        await expect.poll(async () => (await list.innerText()).includes(HOSTILE_FOLDER), { timeout: 10_000 }).toBe(true);
        await check();
        await page.reload();
        await check();
      });

      it("the preview of an unmapped path says why and queues nothing until confirmed", async () => {
        const { page } = await openPage({ viewport: { width: 390, height: 844 }, bypassCSP: true });
        await page.goto(slow.base);
        const path = "/nowhere/Film (2000)/Film (2000).mkv";
        await page.fill("#filepath", path);
        await Promise.all([page.waitForNavigation(), page.click("form:not(.confirm) button[type=submit]")]);
        const result = page.locator("#result");
        expect(await result.innerText()).toContain("Not queued yet");
        expect(await result.innerText()).toContain("SERVER_PATH_MAPPINGS");
        expect((await queued(slow)).filter((folder) => folder.startsWith("/nowhere/"))).toEqual([]);
        await page.screenshot({ path: join(ARTIFACTS, "console-scan-held-390-light.png"), fullPage: true });
        expect(await axeProblems(page, "scan (held)")).toEqual([]);

        await Promise.all([page.waitForNavigation(), page.click("#queue-anyway")]);
        expect(await page.locator("#result").innerText()).toContain("Queued anyway");
        expect((await queued(slow)).filter((folder) => folder.startsWith("/nowhere/Film (2000)"))).toHaveLength(1);
      });

      it("clicking through the pages 10 times leaves one event stream open; pagehide closes it", async () => {
        const { page } = await openPage();
        const open = new Set<unknown>();
        page.on("request", (request) => {
          if (request.resourceType() === "eventsource") open.add(request);
        });
        page.on("requestfailed", (request) => open.delete(request));
        page.on("requestfinished", (request) => open.delete(request));
        await gotoLive(page, `${slow.base}/queue`);
        for (let n = 0; n < 10; n++) {
          const next = n % 2 === 0 ? "history" : "queue";
          await Promise.all([page.waitForURL(`${slow.base}/${next}`), page.click(`nav a[href$="/${next}"]`)]);
        }
        expect(page.url()).toBe(`${slow.base}/queue`);
        await expect.poll(() => page.locator("#live").textContent(), { timeout: 10_000 }).toBe("Live");
        await expect.poll(() => open.size, { timeout: 5_000 }).toBe(1);
        // Had the clicks left streams open, the six connections Chromium allows per host would be used up and this
        // would never arrive.
        await markPage(page);
        await sendAll(slow, [["sonarr", sonarr("After Clicks", "Season 03/e.mkv")]]);
        await expect.poll(() => row(page, "#queue-list", "/data/TV/After Clicks/Season 03").count(), { timeout: 10_000 }).toBe(1);
        await stillSamePage(page);

        // A page put away (pagehide, as into the back/forward cache) holds no connection; shown again, it reconnects.
        await page.evaluate("window.dispatchEvent(new PageTransitionEvent('pagehide', { persisted: true }))");
        await expect.poll(() => open.size, { timeout: 5_000 }).toBe(0);
        await page.evaluate("window.dispatchEvent(new PageTransitionEvent('pageshow', { persisted: true }))");
        await expect.poll(() => open.size, { timeout: 5_000 }).toBe(1);
        await expect.poll(() => page.locator("#live").textContent(), { timeout: 10_000 }).toBe("Live");
      });

      it("writes screenshots of every page at 1280×800 and 390×844, light and dark; nothing sticks out sideways", async () => {
        const overflow: string[] = [];
        const { page } = await openPage();
        for (const name of PAGES) {
          await gotoPage(page, slow, name);
          // Size and scheme change in place (media queries apply at once): one load per page.
          for (const colorScheme of SCHEMES) {
            await page.emulateMedia({ colorScheme });
            for (const [width, height] of SIZES) {
              await page.setViewportSize({ width, height });
              const file = join(ARTIFACTS, `console-${name}-${width}-${colorScheme}.png`);
              await page.screenshot({ path: file, fullPage: true });
              expect(existsSync(file)).toBe(true);
              const sideways = await page.evaluate<number>("document.documentElement.scrollWidth - document.documentElement.clientWidth");
              if (sideways > 0) overflow.push(`${name} at ${width} px in ${colorScheme}: ${sideways} px wider than the window`);
            }
          }
        }
        expect(overflow).toEqual([]);
      }, 60_000);

      it("axe-core finds no serious or critical violation on any page, light or dark", async () => {
        // The pages as the screenshots show them (a few folders waiting, one scanned, one failed), and a preview.
        const found: string[] = [];
        const { page } = await openPage({ bypassCSP: true });
        for (const name of [...PAGES, "libraries-preview" as const]) {
          await gotoPage(page, slow, name);
          found.push(...(await axeProblems(page, name)));
        }
        expect(found).toEqual([]);
      });
    });
  });
}
