import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { startFakeNotifyReceiver, type FakeNotifyReceiver } from "./support/fake-notify-receiver.ts";
import { startFakePlex, type FakePlex } from "./support/fake-plex.ts";
import { freePort } from "./support/free-port.ts";
import { runCli, startCli, within, type RunningCli } from "./support/run-cli.ts";

/**
 * A receiver's error page may quote the URL it was sent to, token and all. Its answer is quoted in `notify test`, the
 * log, doctor and the unauthenticated `/health`, cut to a short excerpt: the secrets must be hidden before the cut, or
 * a token the cut goes through is no longer found whole and its first part shows. Short secrets (an ntfy topic, an
 * apprise key, a `?token=` value) quoted on their own are hidden too.
 */
const SERVER_PASS = "0123456789abcdef0123456789abcdef";
/** A Discord webhook token's shape: 68 characters. */
const TOKEN = "Qw7Zr2Lk9Xv4Tn6Bm1Hc8Ys3Jd5Pf0Ga-uE_iO7pKx2VbN4mLq9ZwR1tY6sC3hD8jFgA";
const WEBHOOK_PATH = `/api/webhooks/112233445566778899/${TOKEN}`;

let dir: string;
let plex: FakePlex;
let receiver: FakeNotifyReceiver;
let port: number;
const running: RunningCli[] = [];

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), "autoscan-notify-cut-"));
  port = await freePort();
  await mkdir(join(dir, "media", "TV"), { recursive: true });
  plex = await startFakePlex({ sections: [{ key: "2", title: "TV Shows", type: "show", locations: ["/data/TV"] }] });
  receiver = await startFakeNotifyReceiver();
});

afterEach(async () => {
  for (const child of running.splice(0)) child.process.kill("SIGKILL");
  await Promise.all([plex.close(), receiver.close()]);
  await rm(dir, { recursive: true, force: true });
});

async function writeConfig(notify: Record<string, unknown>): Promise<string> {
  const config = {
    SERVER_PASS,
    SERVER_PORT: port,
    SERVER_IP: "127.0.0.1",
    PLEX_LOCAL_URL: plex.url,
    PLEX_TOKEN: plex.token,
    PLEX_ANALYZE_TYPE: "off",
    SERVER_SCAN_DELAY: 0,
    SERVER_MAX_FILE_CHECKS: 1,
    SERVER_FILE_CHECK_DELAY: 1,
    SERVER_PATH_MAPPINGS: { "/data/TV/": ["/tv/"] },
    SERVER_FILE_EXIST_PATH_MAPPINGS: { [`${join(dir, "media")}/TV/`]: ["/data/TV/"] },
    NOTIFY: notify,
  };
  const path = join(dir, "config.json");
  await writeFile(path, JSON.stringify(config, null, 2));
  return path;
}

/** Every piece of `secret` of `size` characters that shows in `text`. */
function pieces(text: string, secret: string, size = 6): string[] {
  const found = new Set<string>();
  for (let start = 0; start + size <= secret.length; start++) {
    const piece = secret.slice(start, start + size);
    if (text.includes(piece)) found.add(piece);
  }
  return [...found];
}

/** Discord-like error JSON whose text puts the token across the excerpt's 160-character cut. */
function errorQuotingTheUrl(): { message: string } {
  const lead = `{"message":"`.length;
  const before = "The webhook could not be executed: ";
  const quoted = `POST ${WEBHOOK_PATH}`;
  const tokenAt = lead + before.length + quoted.indexOf(TOKEN);
  // Padding so the token starts 40 characters before the cut (157) and runs past it.
  const pad = "x".repeat(157 - 40 - tokenAt);
  return { message: `${before}${pad}${quoted} failed` };
}

async function waitFor(check: () => boolean | Promise<boolean>, what: string, ms = 20_000): Promise<void> {
  await within(
    (async () => {
      while (!(await check())) await new Promise((resolve) => setTimeout(resolve, 50));
    })(),
    ms,
    what,
  );
}

describe("a notifier's secret in the receiver's answer", () => {
  it("a token straddling the excerpt's cut shows nowhere: notify test, the log, doctor, /health", async () => {
    receiver.answerWith(500, errorQuotingTheUrl());
    const config = await writeConfig({ discord: { TYPE: "discord", URL: `${receiver.url}${WEBHOOK_PATH}`, BATCH_SECONDS: 0 } });

    const tested = await runCli(["notify", "test", "--name", "discord", "--config", config]);
    expect(tested.code).toBe(1);
    expect(tested.stdout).toContain("answered 500 (");

    const child = startCli(["server", "--config", config, "--logfile", "none"], { timeoutMs: 60_000 });
    running.push(child);
    const health = async (): Promise<Record<string, unknown> | undefined> =>
      fetch(`http://127.0.0.1:${port}/health`).then(async (r) => (r.ok ? ((await r.json()) as Record<string, unknown>) : undefined), () => undefined);
    await waitFor(async () => (await health()) !== undefined, `health (stderr: ${child.stderr()})`);
    const missing = {
      eventType: "Download",
      series: { id: 1, title: "Missing", path: "/tv/Missing", tvdbId: 1 },
      episodes: [{ id: 1, episodeNumber: 1, seasonNumber: 1, title: "Pilot" }],
      episodeFile: { id: 1, relativePath: "Season 01/Missing - S01E01.mkv", path: "/tv/Missing/Season 01/Missing - S01E01.mkv" },
      isUpgrade: false,
    };
    const posted = await fetch(`http://127.0.0.1:${port}/${SERVER_PASS}`, { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(missing) });
    expect(posted.status).toBe(200);
    await waitFor(async () => (await health())?.notifiers !== undefined, `the notifier failed (log: ${child.stdout()})`);
    const body = JSON.stringify(await health());
    expect(body).toContain("answered 500 ({\\\"message\\\":\\\"The webhook could not be executed:");
    const doctor = await runCli(["doctor", "--json", "--config", config], { timeoutMs: 30_000 });
    expect(doctor.stdout).toContain("notify.discord");
    child.process.kill("SIGTERM");
    await within(child.exited, 10_000, "exit after SIGTERM");
    expect(child.stdout()).toContain("answered 500 (");

    for (const [where, text] of Object.entries({ notifyTest: tested.stdout + tested.stderr, log: child.stdout() + child.stderr(), health: body, doctor: doctor.stdout + doctor.stderr })) {
      expect({ where, pieces: pieces(text, TOKEN) }).toEqual({ where, pieces: [] });
    }
  });

  it("short secrets quoted on their own are hidden: an ntfy topic, an apprise key, a ?token= value", async () => {
    const config = await writeConfig({
      phone: { TYPE: "ntfy", URL: `${receiver.url}/ntfy/tvpager7` },
      apprise: { TYPE: "apprise", URL: `${receiver.url}/notify/k3yz` },
      hook: { TYPE: "webhook", URL: `${receiver.url}/in?token=s3cr3tv` },
    });
    const answers: Record<string, string> = { phone: "topic tvpager7 is reserved", apprise: "no configuration for key k3yz", hook: "bad token s3cr3tv" };
    for (const [name, said] of Object.entries(answers)) {
      receiver.answerWith(403, { error: said });
      const tested = await runCli(["notify", "test", "--name", name, "--config", config]);
      expect(tested.code).toBe(1);
      const text = tested.stdout + tested.stderr;
      expect(text).toContain("answered 403");
      for (const secret of ["tvpager7", "k3yz", "s3cr3tv"]) expect(text).not.toContain(secret);
    }
  });
});
