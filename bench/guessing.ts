/**
 * Guessing SERVER_PASS against the real web app on loopback, printed, not asserted (issue point 12: 6,700 wrong
 * guesses a second were answered before, a 4-character secret found in 37 minutes). One address sends wrong guesses
 * as fast as it can (16 at a time) for `SECONDS`; meanwhile another address sends the right secret one request at a
 * time. Printed: the wrong guesses actually checked and answered per second (404), the ones refused unchecked (429),
 * what that rate means for an 8-character secret of letters and digits, and the right requests' median and worst time.
 *
 *   node bench/guessing.ts
 */
import { request } from "node:http";
import { buildWebApp, TEST_PASS } from "../test/support/web-builders.ts";
import { startWebServer } from "../src/web/server.ts";

const SECONDS = 10;
const CONCURRENCY = 16;

const { app } = buildWebApp({ log: (await import("pino")).default({ level: "silent" }) });
const server = await startWebServer({ app, hostname: "127.0.0.1", port: 0, requestTimeoutMs: 30_000 });
const port = server.port;

function send(path: string, from: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request({ host: "127.0.0.1", port, path, method: "GET", localAddress: from, agent: false }, (res) => {
      res.resume();
      res.on("end", () => resolve(res.statusCode ?? 0));
    });
    req.on("error", reject);
    req.end();
  });
}

const end = performance.now() + SECONDS * 1000;
const statuses = new Map<number, number>();
let n = 0;
const guesser = async (): Promise<void> => {
  while (performance.now() < end) {
    const status = await send(`/api/guess-${String(n++)}?cmd=queue_count`, "127.0.0.2");
    statuses.set(status, (statuses.get(status) ?? 0) + 1);
  }
};
const rightTimes: number[] = [];
const rightOnes = async (): Promise<void> => {
  while (performance.now() < end) {
    const started = performance.now();
    const status = await send(`/api/${TEST_PASS}?cmd=queue_count`, "127.0.0.3");
    if (status !== 200) throw new Error(`the right secret was answered ${String(status)}`);
    rightTimes.push(performance.now() - started);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
};
await Promise.all([...Array.from({ length: CONCURRENCY }, guesser), rightOnes()]);
await server.close();

const checked = statuses.get(404) ?? 0;
const refused = statuses.get(429) ?? 0;
const perSecond = checked / SECONDS;
// The steady rate leaves out the first free answers (10).
const steady = Math.max(checked - 10, 1) / SECONDS;
const years = 62 ** 8 / 2 / steady / (365.25 * 24 * 3600);
rightTimes.sort((a, b) => a - b);
console.log(
  `guessing: one address, ${String(CONCURRENCY)} at a time for ${String(SECONDS)} s: ${String(checked)} wrong guesses checked (${perSecond.toFixed(1)}/s, ` +
    `${steady.toFixed(1)}/s after the free 10), ${String(refused)} refused unchecked (429); an 8-character [A-Za-z0-9] secret: ` +
    `${years.toExponential(2)} years on average at that pace`,
);
console.log(
  `guessing: meanwhile the right secret from another address: ${String(rightTimes.length)} requests, median ` +
    `${(rightTimes[Math.floor(rightTimes.length / 2)] ?? 0).toFixed(1)} ms, worst ${(rightTimes.at(-1) ?? 0).toFixed(1)} ms`,
);
