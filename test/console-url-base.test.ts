import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { chromium, type Browser } from "playwright-core";
import { withChromium } from "./support/chromium.ts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CONSOLE_PASS, startConsoleService, type ConsoleService } from "./support/console-service.ts";
import { startRecordingProxy, type RecordingProxy } from "./support/recording-proxy.ts";

/**
 * SERVER_URL_BASE behind a reverse proxy that forwards the prefix (Traefik, Caddy and SWAG on a sub-path): the real
 * service with `/autoscan`, a proxy in front, and headless Chromium through the proxy. Every link, the script, the
 * event stream, the forms and their redirects stay under the prefix; a webhook to the prefixed URL is scanned; the
 * container's healthcheck still finds /health at the root.
 */
const ARTIFACTS = join(import.meta.dirname, "artifacts");
withChromium("the console under SERVER_URL_BASE", describeUrlBase);

function describeUrlBase(binary: string): void {
  describe("the console under SERVER_URL_BASE, through a proxy that forwards /autoscan", () => {
    let service: ConsoleService;
    let proxy: RecordingProxy;
    let browser: Browser;

    beforeAll(async () => {
      mkdirSync(ARTIFACTS, { recursive: true });
      service = await startConsoleService({ SERVER_URL_BASE: "/autoscan/" });
      proxy = await startRecordingProxy(service.url);
      browser = await chromium.launch({ executablePath: binary, args: ["--no-sandbox", "--disable-gpu"] });
    }, 60_000);
    afterAll(async () => {
      await browser?.close();
      await proxy?.close();
      await service?.stop();
    });

    it("every page, link, script, live update, form and redirect stays under the prefix", async () => {
      const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
      const page = await context.newPage();
      const failures: string[] = [];
      page.on("response", (response) => {
        if (response.status() >= 400) failures.push(`${response.status()} ${response.url()}`);
      });
      const base = `${proxy.url}/autoscan/${CONSOLE_PASS}`;
      await page.goto(`${base}/queue`);
      expect(await page.title()).toBe("Queue · autoscan");
      for (const [name, title] of [
        ["History", "History · autoscan"],
        ["Libraries", "Libraries · autoscan"],
        ["Scan", "Manual scan · autoscan"],
        ["Queue", "Queue · autoscan"],
      ] as const) {
        await Promise.all([page.waitForNavigation(), page.getByRole("link", { name, exact: true }).first().click()]);
        expect(await page.title()).toBe(title);
        expect(new URL(page.url()).pathname.startsWith(`/autoscan/${CONSOLE_PASS}`)).toBe(true);
      }
      // The page's live stream is opened under the prefix; a webhook through the proxy's prefixed URL is scanned.
      expect(proxy.requests.some((request) => request.path === `/autoscan/${CONSOLE_PASS}/events`)).toBe(true);
      await service.addFile("TV/Prefixed/Season 01/e1.mkv");
      const webhook = await fetch(`${base}/sonarr`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ eventType: "Download", series: { path: "/tv/Prefixed" }, episodeFile: { relativePath: "Season 01/e1.mkv" } }),
      });
      expect(webhook.status).toBe(200);
      await expect.poll(() => service.plex.scans.map((scan) => scan.path), { timeout: 20_000 }).toContain("/data/TV/Prefixed/Season 01");
      // The Scan page's form posts and comes back under the prefix.
      await page.goto(base);
      await page.fill("#filepath", "/movies/Heat (1995)");
      await Promise.all([page.waitForNavigation(), page.click("form:not(.confirm) button[type=submit]")]);
      expect(new URL(page.url()).pathname.startsWith(`/autoscan/${CONSOLE_PASS}`)).toBe(true);
      await page.screenshot({ path: join(ARTIFACTS, "console-url-base.png"), fullPage: true });
      expect(failures).toEqual([]);
      const paths = proxy.requests.map((request) => request.path);
      expect(paths.filter((path) => !path.startsWith("/autoscan/"))).toEqual([]);
      await context.close();
    });

    it("answers nothing outside the prefix but /health (the healthcheck asks the root)", async () => {
      expect((await fetch(`${service.url}/${CONSOLE_PASS}/queue`)).status).toBe(404);
      expect((await fetch(`${service.url}/health`)).status).toBe(200);
      expect((await fetch(`${service.url}/autoscan/health`)).status).toBe(200);
      expect((await fetch(`${service.url}/autoscan/api/${CONSOLE_PASS}?cmd=queue_count`)).status).toBe(200);
    });
  });
}
