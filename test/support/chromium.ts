import { existsSync } from "node:fs";
import { it } from "vitest";

/**
 * The browser tests' Chromium (Debian's `chromium`, driven by playwright-core). `CHROMIUM_PATH`, when set, is the only
 * candidate (so the skip and the CI failure can be checked on any machine). Without a binary a browser suite fails
 * under CI=true and is skipped loudly elsewhere.
 */
const CANDIDATES = process.env.CHROMIUM_PATH ? [process.env.CHROMIUM_PATH] : ["/usr/bin/chromium", "/usr/bin/chromium-browser", "/usr/bin/google-chrome"];
const MISSING = "no Chromium binary found (apt-get install chromium, or set CHROMIUM_PATH)";

/** Runs `suite` with the Chromium binary's path, or stands in for it with one failing (CI) or skipped test. */
export function withChromium(what: string, suite: (executablePath: string) => void): void {
  const executablePath = CANDIDATES.find((candidate): candidate is string => Boolean(candidate && existsSync(candidate)));
  if (executablePath) {
    suite(executablePath);
  } else if (process.env.CI === "true") {
    it(what, () => {
      throw new Error(`CI=true but ${MISSING}`);
    });
  } else {
    console.warn(`\n*** SKIPPING ${what}: ${MISSING} ***\n`);
    it.skip(`${what} (SKIPPED: ${MISSING})`, () => undefined);
  }
}
