import { request } from "node:http";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startFakePlex, type FakePlex } from "./support/fake-plex.ts";
import { freePort } from "./support/free-port.ts";
import { startCli, within, type RunningCli } from "./support/run-cli.ts";

/**
 * Guessing the URL secret or the Basic credentials, against the real service. Before, every wrong guess was answered
 * at once (6,700 a second on loopback: a 4-character SERVER_PASS in 37 minutes). Now one address gets 10 wrong answers
 * at once, then one a second, and while 5 of its answers wait its further requests are answered 429 unchecked; the
 * right secret from another address is answered at once meanwhile.
 */
const SERVER_PASS = "0123456789abcdef0123456789abcdef";
const USER = "tdarr";
const PASSWORD = "a-long-basic-password";

let dir: string;
let plex: FakePlex;
let port: number;
let child: RunningCli;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "autoscan-guessing-"));
  port = await freePort();
  plex = await startFakePlex({ sections: [{ key: "2", title: "TV Shows", type: "show", locations: ["/data/TV"] }] });
  const config = join(dir, "config.json");
  await writeFile(
    config,
    JSON.stringify({ SERVER_PASS, SERVER_IP: "127.0.0.1", SERVER_PORT: port, PLEX_LOCAL_URL: plex.url, PLEX_TOKEN: plex.token, SERVER_AUTH_USERNAME: USER, SERVER_AUTH_PASSWORD: PASSWORD }),
  );
  child = startCli(["server", "--config", config, "--logfile", "none"], { timeoutMs: 120_000 });
  await within(
    (async () => {
      while (!(await fetch(`http://127.0.0.1:${port}/health`).then((r) => r.ok, () => false))) await new Promise((resolve) => setTimeout(resolve, 50));
    })(),
    20_000,
    `health (stderr: ${child.stderr()})`,
  );
});

afterAll(async () => {
  child.process.kill("SIGKILL");
  await plex.close();
  await rm(dir, { recursive: true, force: true });
});

/** One request from a chosen local address (127.0.0.x are all this machine): its status and when it came back. */
function send(path: string, from: string, headers: Record<string, string> = {}): Promise<{ status: number; at: number }> {
  return new Promise((resolve, reject) => {
    const req = request({ host: "127.0.0.1", port, path, method: "GET", localAddress: from, agent: false, headers }, (res) => {
      res.resume();
      res.on("end", () => resolve({ status: res.statusCode ?? 0, at: performance.now() }));
    });
    req.on("error", reject);
    req.end();
  });
}

const count = (answers: readonly { status: number }[], status: number): number => answers.filter((answer) => answer.status === status).length;

describe("wrong secrets from one address are slowed, and nobody else is", () => {
  it("40 wrong URL secrets at once: 10 answered at once, a few held, the rest 429 unchecked; the right one from elsewhere at once", async () => {
    const guesses = Array.from({ length: 40 }, (_, i) => send(`/guess${String(i).padStart(28, "0")}/triggers/manual?dir=/tv/X`, "127.0.0.2"));
    // While that address's answers wait, another address with the right secret is answered at once.
    const right = await send(`/${SERVER_PASS}/triggers/manual?dir=/data/TV/Show/Season%2001`, "127.0.0.3");
    const answers = await within(Promise.all(guesses), 30_000, "every guess answered");
    expect(right.status).toBe(200);
    expect(count(answers, 404) + count(answers, 429)).toBe(40);
    // 10 free and 5 held (a second's refill may let one or two more through on a slow machine).
    expect(count(answers, 404)).toBeGreaterThanOrEqual(15);
    expect(count(answers, 404)).toBeLessThanOrEqual(18);
    // The held answers went out one by one, after the right one had its answer.
    const lastWrong = Math.max(...answers.filter((answer) => answer.status === 404).map((answer) => answer.at));
    expect(right.at).toBeLessThan(lastWrong);
  });

  it("wrong Basic credentials on /triggers/manual are slowed the same way", async () => {
    const wrong = `Basic ${Buffer.from(`${USER}:guess`).toString("base64")}`;
    const answers = await within(Promise.all(Array.from({ length: 40 }, () => send("/triggers/manual?dir=/tv/X", "127.0.0.4", { authorization: wrong }))), 30_000, "every guess answered");
    expect(count(answers, 401) + count(answers, 429)).toBe(40);
    expect(count(answers, 429)).toBeGreaterThanOrEqual(20);
    const right = await send("/triggers/manual?dir=/data/TV/Show/Season%2001", "127.0.0.5", { authorization: `Basic ${Buffer.from(`${USER}:${PASSWORD}`).toString("base64")}` });
    expect(right.status).toBe(200);
    expect(child.stdout()).toMatch(/Refused client '127\.0\.0\.4': wrong or no credentials for \/triggers\/manual\. Further refusals from it are summarised/);
  });
});
