// Dev-only look at the console pages (not a test). Run: node test/look.dev.ts
import { chromium } from "playwright-core";
import { readFile } from "node:fs/promises";
import { startConsoleService } from "./support/console-service.ts";

const svc = await startConsoleService({ SERVER_SCAN_DELAY: 30 });
const sonarr = JSON.parse(await readFile("src/intake/fixtures/sonarr/download-import-complete-season-pack.json", "utf8"));
console.log((await svc.webhook("sonarr", sonarr)).status);
const browser = await chromium.launch({ executablePath: "/usr/bin/chromium", args: ["--no-sandbox"] });
for (const [w, h, scheme] of [[1280, 800, "light"], [390, 844, "dark"]] as const) {
  const ctx = await browser.newContext({ viewport: { width: w, height: h }, colorScheme: scheme });
  const page = await ctx.newPage();
  page.on("console", (m) => console.log("console:", m.text()));
  for (const name of ["", "queue", "history", "libraries"]) {
    await page.goto(`${svc.base}${name ? "/" + name : ""}`);
    await page.waitForTimeout(500);
    await page.screenshot({ path: `/work/notes/shots/${name || "scan"}-${w}-${scheme}.png`, fullPage: true });
  }
}
await browser.close();
await svc.stop();
