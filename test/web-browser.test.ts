import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { chromium, type Browser } from "playwright-core";
import { withChromium } from "./support/chromium.ts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startWebServer, type WebServer } from "../src/web/server.ts";
import { TEST_PASS, buildWebApp, itemView } from "./support/web-builders.ts";

/**
 * The manual scan page in real headless Chromium (Debian's `chromium`, driven by playwright-core), with JavaScript
 * turned off to prove the page needs none, at a phone's size: fill the path, submit, read the result. Screenshots go
 * to test/artifacts/ (git-ignored) for a human to look at.
 *
 * Without a Chromium binary the test fails under CI=true and is skipped loudly elsewhere.
 */
const ARTIFACTS = join(import.meta.dirname, "artifacts");
withChromium("the browser test of the manual page", describeBrowser);

function describeBrowser(binary: string): void {
  describe("the manual scan page in headless Chromium", () => {
    const harness = buildWebApp();
    let server: WebServer;
    let browser: Browser;

    beforeAll(async () => {
      mkdirSync(ARTIFACTS, { recursive: true });
      harness.queue.items.push(itemView({ id: 1, folder: "/data/TV/Show/Season 01" }), itemView({ id: 2, folder: "/data/Movies/Alien (1979)" }));
      server = await startWebServer({ app: harness.app, hostname: "127.0.0.1", port: 0 });
      browser = await chromium.launch({ executablePath: binary, args: ["--no-sandbox", "--disable-gpu"] });
    });
    afterAll(async () => {
      await browser?.close();
      await server?.close();
    });

    async function phonePage() {
      const context = await browser.newContext({
        viewport: { width: 390, height: 844 },
        deviceScaleFactor: 2,
        isMobile: true,
        hasTouch: true,
        javaScriptEnabled: false,
      });
      return context.newPage();
    }

    it("fills the path, submits without JavaScript, and shows what was queued in which form", async () => {
      const page = await phonePage();
      await page.goto(`${server.url}/${TEST_PASS}`);
      expect(await page.title()).toBe("Manual scan · autoscan");
      await page.screenshot({ path: join(ARTIFACTS, "manual-page-empty.png"), fullPage: true });

      await page.fill("#filepath", "/mnt/unionfs/Movies/Heat (1995)/Heat (1995).mkv");
      await Promise.all([page.waitForNavigation(), page.click("button[type=submit]")]);

      const result = page.locator("#result");
      await expect.poll(() => result.textContent()).toContain("Queued for scanning");
      const shown = (await result.innerText()).replace(/\s+/g, " ");
      expect(shown).toContain("/data/Movies/Heat (1995)");
      expect(shown).toContain("/mnt/unionfs/Movies/Heat (1995)/Heat (1995).mkv");
      expect(shown).toContain("Mapped from /mnt/unionfs/Movies/");
      expect(await page.inputValue("#filepath")).toBe("/mnt/unionfs/Movies/Heat (1995)/Heat (1995).mkv");
      expect(harness.recorder.all().at(-1)).toMatchObject({ path: "/data/Movies/Heat (1995)/Heat (1995).mkv", source: "Manual" });

      // Nothing sticks out sideways on a phone.
      // (A string, because the test is type-checked without the DOM library.)
      const overflow = await page.evaluate<number>("document.documentElement.scrollWidth - document.documentElement.clientWidth");
      expect(overflow).toBeLessThanOrEqual(0);
      await page.screenshot({ path: join(ARTIFACTS, "manual-page-queued.png"), fullPage: true });
      await page.context().close();
    });

    it("shows why a path was refused", async () => {
      const page = await phonePage();
      await page.goto(`${server.url}/${TEST_PASS}`);
      await page.fill("#filepath", "Movies/../../etc/passwd");
      await Promise.all([page.waitForNavigation(), page.click("button[type=submit]")]);
      const shown = await page.locator("#result").innerText();
      expect(shown).toContain("Not queued");
      expect(shown).toContain("The path must not contain '..' segments.");
      await page.screenshot({ path: join(ARTIFACTS, "manual-page-refused.png"), fullPage: true });
      await page.context().close();
    });

    it("looks right on a desktop too, in dark mode", async () => {
      const context = await browser.newContext({
        viewport: { width: 1280, height: 800 },
        javaScriptEnabled: false,
        colorScheme: "dark",
      });
      const page = await context.newPage();
      await page.goto(`${server.url}/${TEST_PASS}`);
      await page.fill("#filepath", "/data/Movies/.grab/Heat.mkv");
      await Promise.all([page.waitForNavigation(), page.click("button[type=submit]")]);
      expect(await page.locator("#result").innerText()).toContain("SERVER_IGNORE_LIST");
      await page.screenshot({ path: join(ARTIFACTS, "manual-page-desktop-dark-ignored.png") });
      await context.close();
    });
  });

  describe("Connect your apps, on the Scan page and on the page shown while it is off", () => {
    const apps = { sonarr: { TYPE: "sonarr" as const }, "radarr 4k": { TYPE: "radarr" as const } };
    const on = buildWebApp({ connectApps: { apps, port: 3467, inContainer: true } });
    const off = buildWebApp({ allowManualScan: false, connectApps: { apps: {}, port: 3467, inContainer: false } });
    let servers: WebServer[] = [];
    let browser: Browser;

    beforeAll(async () => {
      servers = [
        await startWebServer({ app: on.app, hostname: "127.0.0.1", port: 0 }),
        await startWebServer({ app: off.app, hostname: "127.0.0.1", port: 0 }),
      ];
      browser = await chromium.launch({ executablePath: binary, args: ["--no-sandbox", "--disable-gpu"] });
    });
    afterAll(async () => {
      await browser?.close();
      for (const server of servers) await server.close();
    });

    it("lists each ARR app's URL for the Docker network and for this page's address, and the events to tick, on a phone", async () => {
      const context = await browser.newContext({ viewport: { width: 390, height: 844 }, deviceScaleFactor: 2, isMobile: true, javaScriptEnabled: false });
      const page = await context.newPage();
      const server = servers[0]!;
      await page.goto(`${server.url}/${TEST_PASS}`);
      const panel = page.getByRole("region", { name: "Connect your apps" });
      const text = (await panel.innerText()).replace(/\s+/g, " ");
      const host = new URL(server.url).host;
      expect(text).toContain(`Same Docker network: http://autoscan:3467/${TEST_PASS}/sonarr`);
      expect(text).toContain(`Elsewhere (this page's address): http://${host}/${TEST_PASS}/radarr%204k`);
      expect(text).toContain("On File Import, On File Upgrade, On Rename, On Series Delete");
      expect(text).toContain("On Movie File Delete");
      // Nothing sticks out sideways on a phone.
      expect(await page.evaluate<number>("document.documentElement.scrollWidth - document.documentElement.clientWidth")).toBeLessThanOrEqual(0);
      await panel.screenshot({ path: join(ARTIFACTS, "connect-apps-phone.png") });
      await context.close();
    });

    it("is on the page that says the Scan page is off, with one line per kind of app when ARR is empty", async () => {
      const context = await browser.newContext({ viewport: { width: 1280, height: 800 }, javaScriptEnabled: false });
      const page = await context.newPage();
      const server = servers[1]!;
      const answer = await page.goto(`${server.url}/${TEST_PASS}`);
      expect(answer?.status()).toBe(403);
      const rows = page.locator("table.connect-apps tbody tr");
      expect(await rows.count()).toBe(4);
      expect(await rows.first().innerText()).toContain(`http://${new URL(server.url).host}/${TEST_PASS}/sonarr`);
      await page.screenshot({ path: join(ARTIFACTS, "connect-apps-page-off.png"), fullPage: true });
      await context.close();
    });
  });
}
