import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { startFakeNotifyReceiver, type FakeNotifyReceiver } from "./support/fake-notify-receiver.ts";
import { startFakePlex, type FakePlex } from "./support/fake-plex.ts";
import { freePort } from "./support/free-port.ts";
import { runCli, startCli, within, type RunningCli } from "./support/run-cli.ts";

/**
 * Notifications with the real service (`autoscan server` as a child process), a fake Plex and a fake receiver of
 * notifications: folders fail fast (one file check for a file that never appears), notifiers batch them, and a
 * notifier that fails or hangs holds up no scan. Also `autoscan notify test` and `config check` on NOTIFY.
 */
const SERVER_PASS = "0123456789abcdef0123456789abcdef";
const SECRET = "Zk3p9QvB7xL2mN8rT4yW6cD1fH5jK0sAsecret";

let dir: string;
let plex: FakePlex;
let receiver: FakeNotifyReceiver;
let port: number;
const running: RunningCli[] = [];
const others: FakeNotifyReceiver[] = [];

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), "autoscan-notify-"));
  port = await freePort();
  const media = join(dir, "media");
  await mkdir(join(media, "TV", "Here", "Season 01"), { recursive: true });
  await writeFile(join(media, "TV", "Here", "Season 01", "Here - S01E01.mkv"), "x");
  plex = await startFakePlex({ sections: [{ key: "2", title: "TV Shows", type: "show", locations: ["/data/TV"] }] });
  receiver = await startFakeNotifyReceiver();
});

afterEach(async () => {
  for (const child of running.splice(0)) child.process.kill("SIGKILL");
  await Promise.all([plex.close(), receiver.close(), ...others.splice(0).map((other) => other.close())]);
  await rm(dir, { recursive: true, force: true });
});

async function writeConfig(notify: Record<string, unknown>): Promise<string> {
  const media = join(dir, "media");
  const config = {
    SERVER_PASS,
    SERVER_PORT: port,
    SERVER_IP: "127.0.0.1",
    PLEX_LOCAL_URL: plex.url,
    PLEX_TOKEN: plex.token,
    PLEX_ANALYZE_TYPE: "off",
    SERVER_SCAN_DELAY: 0,
    // A file that never appears fails at its first look.
    SERVER_MAX_FILE_CHECKS: 1,
    SERVER_FILE_CHECK_DELAY: 1,
    SERVER_PATH_MAPPINGS: { "/data/TV/": ["/tv/"] },
    SERVER_FILE_EXIST_PATH_MAPPINGS: { [`${media}/TV/`]: ["/data/TV/"] },
    NOTIFY: notify,
  };
  const path = join(dir, "config.json");
  await writeFile(path, JSON.stringify(config, null, 2));
  return path;
}

function startServer(config: string): RunningCli {
  const child = startCli(["server", "--config", config, "--logfile", "none"], { timeoutMs: 60_000 });
  running.push(child);
  return child;
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

const health = async (): Promise<Record<string, unknown> | undefined> =>
  fetch(`http://127.0.0.1:${port}/health`).then(async (r) => (r.ok ? ((await r.json()) as Record<string, unknown>) : undefined), () => undefined);

function download(show: string): unknown {
  return {
    eventType: "Download",
    series: { id: 1, title: show, path: `/tv/${show}`, tvdbId: 1 },
    episodes: [{ id: 1, episodeNumber: 1, seasonNumber: 1, title: "Pilot" }],
    episodeFile: { id: 1, relativePath: `Season 01/${show} - S01E01.mkv`, path: `/tv/${show}/Season 01/${show} - S01E01.mkv` },
    isUpgrade: false,
  };
}

const post = (body: unknown): Promise<Response> =>
  fetch(`http://127.0.0.1:${port}/${SERVER_PASS}`, { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(body) });

describe("notifications from the running service", () => {
  it("20 folders failing within a window reach each notifier as ONE message listing all 20", async () => {
    const config = await writeConfig({
      hook: { TYPE: "webhook", URL: `${receiver.url}/hook`, EVENTS: ["failed"], BATCH_SECONDS: 2 },
      discord: { TYPE: "discord", URL: `${receiver.url}/api/webhooks/123/${SECRET}`, BATCH_SECONDS: 2 },
    });
    const child = startServer(config);
    await waitFor(async () => (await health()) !== undefined, `health (stderr: ${child.stderr()})`);
    const shows = Array.from({ length: 20 }, (_, i) => `Missing ${String(i + 1)}`);
    expect((await Promise.all(shows.map((show) => post(download(show))))).map((answer) => answer.status)).toEqual(shows.map(() => 200));
    await waitFor(() => receiver.messages.length >= 2, `both notifiers were told (log: ${child.stdout()})`);
    await new Promise((resolve) => setTimeout(resolve, 300));
    const hook = receiver.messages.filter((message) => message.path === "/hook");
    expect(hook).toHaveLength(1);
    const doc = hook[0]?.json as { event: string; instance: string; items: { event: string; folder: string; reason: string }[] };
    expect(doc.event).toBe("failed");
    expect(doc.instance).toMatch(/-\d+-[0-9a-f]{4}$/);
    expect(doc.items.map((item) => item.folder).sort()).toEqual(shows.map((show) => `/data/TV/${show}/Season 01`).sort());
    expect(doc.items.every((item) => item.event === "failed" && item.reason.startsWith("Not found after 1 file check(s)"))).toBe(true);
    const discord = receiver.messages.filter((message) => message.path.startsWith("/api/webhooks/"));
    expect(discord).toHaveLength(1);
    const content = (discord[0]?.json as { content: string }).content;
    expect(content.split("\n")[0]).toBe("**autoscan: 20 folders failed**");
    expect(content.length).toBeLessThanOrEqual(2000);
    expect(child.stdout()).not.toContain(SECRET);
  });

  it("a notifier that answers 500 or hangs delays no scan, and shows in /health and doctor, its secret nowhere", async () => {
    const broken = await startFakeNotifyReceiver();
    const stuck = await startFakeNotifyReceiver();
    others.push(broken, stuck);
    broken.answerWith(500);
    stuck.setDelay(60_000);
    const config = await writeConfig({
      broken: { TYPE: "webhook", URL: `${broken.url}/hooks/${SECRET}`, BATCH_SECONDS: 0 },
      stuck: { TYPE: "ntfy", URL: `${stuck.url}/ntfy/${SECRET}`, BATCH_SECONDS: 0 },
    });
    const child = startServer(config);
    await waitFor(async () => (await health()) !== undefined, `health (stderr: ${child.stderr()})`);
    expect((await post(download("Missing"))).status).toBe(200);
    await waitFor(() => broken.messages.length > 0 && stuck.messages.length > 0, `both notifiers were tried (log: ${child.stdout()})`);
    // Both notifiers are failing or stuck now; a scan goes out as fast as ever.
    const posted = Date.now();
    expect((await post(download("Here"))).status).toBe(200);
    await waitFor(() => plex.scans.length > 0, `the scan reached Plex (log: ${child.stdout()})`, 5_000);
    expect(Date.now() - posted).toBeLessThan(3_000);
    expect(plex.scans).toEqual([expect.objectContaining({ path: "/data/TV/Here/Season 01" })]);
    const body = await health();
    expect(body?.status).toBe("ok");
    expect(body?.notifiers).toEqual({
      failing: [{ name: "broken", type: "webhook", since: expect.any(String), attempts: 1, problem: `${broken.url} answered 500 (cannot deliver to <redacted>)`, waiting: 1 }],
    });
    expect(child.stdout()).toMatch(/- WARNING - NOTIFY \[\d+\]: Notifier 'broken' \(webhook at http:\/\/127\.0\.0\.1:\d+\) could not deliver: .* answered 500 .*1 event\(s\) wait; trying again in \d+ s\. Scans go on meanwhile\./);
    const doctor = await runCli(["doctor", "--json", "--config", config], { timeoutMs: 30_000 });
    const checks = (JSON.parse(doctor.stdout) as { checks: { id: string; status: string; detail: string }[] }).checks;
    expect(checks.find((check) => check.id === "notify.broken")).toMatchObject({ status: "warn", detail: expect.stringContaining("The running server cannot deliver to it since") });
    expect(checks.find((check) => check.id === "notify.stuck")).toMatchObject({ status: "ok", detail: expect.stringContaining(`ntfy at ${stuck.url}; events failed, not_visible, target_down, target_up, arr_disconnected; batch off.`) });
    // A message still hanging does not hold up the stop either; what was not sent is said.
    child.process.kill("SIGTERM");
    expect((await within(child.exited, 10_000, "exit after SIGTERM")).code).toBe(0);
    expect(child.stdout()).toContain("1 notification event(s) for 'stuck' were not sent: autoscan is stopping.");
    expect(child.stdout()).toContain("Server stopped");
    for (const text of [child.stdout(), child.stderr(), JSON.stringify(body), doctor.stdout, doctor.stderr]) expect(text).not.toContain(SECRET);
  });
});

describe("autoscan notify test, and NOTIFY in config check", () => {
  it("sends one test message and exits 0; a refused one exits 1 saying why; an unknown name exits 2", async () => {
    const config = await writeConfig({
      hook: { TYPE: "webhook", URL: `${receiver.url}/hook`, EVENTS: ["failed"] },
      discord: { TYPE: "discord", URL: `${receiver.url}/api/webhooks/123/${SECRET}` },
    });
    const sent = await runCli(["notify", "test", "--name", "hook", "--config", config]);
    expect(sent.code, sent.stderr).toBe(0);
    expect(sent.stdout).toBe(`✓ hook: test message delivered (webhook at ${receiver.url}, answered 200).\n`);
    expect(receiver.messages).toHaveLength(1);
    expect(receiver.messages[0]?.json).toMatchObject({ event: "test", notifier: "hook", items: [] });

    receiver.answerWith(404, { message: "Unknown Webhook", code: 10015 });
    const refused = await runCli(["notify", "test", "--name", "discord", "--config", config]);
    expect(refused.code).toBe(1);
    expect(refused.stdout).toBe(`✗ discord: test message not delivered (discord at ${receiver.url}): ${receiver.url} answered 404 ({"message":"Unknown Webhook","code":10015}).\n`);
    expect(refused.stderr).toContain('The receiver refused it: check NOTIFY.discord.URL (and TYPE "discord").');
    expect(refused.stdout + refused.stderr).not.toContain(SECRET);

    const unknown = await runCli(["notify", "test", "--name", "phone", "--config", config]);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain('--name "phone" is not a notifier under NOTIFY; there are: hook, discord.');
  });

  it("config check names the nearest key for a typo; config check and show never repeat a notifier's URL", async () => {
    const config = await writeConfig({
      hook: { TYPE: "webhook", URL: `https://ha.example.org/api/webhook/${SECRET}`, BATCH_SECOND: 10 },
      discord: { TYPE: "discord", URL: `https://discord.com/channels/123/${SECRET}` },
    });
    const checked = await runCli(["config", "check", "--config", config]);
    expect(checked.code).toBe(2);
    expect(checked.stderr).toContain('Unknown key "BATCH_SECOND" in "NOTIFY.hook" — did you mean "BATCH_SECONDS"?');
    expect(checked.stderr).toContain("NOTIFY.discord.URL: a discord URL is the channel's webhook URL");
    expect(checked.stdout + checked.stderr).not.toContain(SECRET);

    const fixed = await writeConfig({ hook: { TYPE: "webhook", URL: `https://ha.example.org/api/webhook/${SECRET}` } });
    const valid = await runCli(["config", "check", "--config", fixed]);
    expect(valid.code, valid.stderr).toBe(0);
    expect(valid.stdout).toContain("Notifiers:       hook (webhook at https://ha.example.org)");
    const shown = await runCli(["config", "show", "--json", "--config", fixed]);
    expect((JSON.parse(shown.stdout) as { keys: { NOTIFY: { value: unknown } } }).keys.NOTIFY.value).toEqual({
      hook: { TYPE: "webhook", URL: "https://ha.example.org/<hidden>", EVENTS: ["failed", "not_visible", "target_down", "target_up", "arr_disconnected"], BATCH_SECONDS: 30 },
    });
    expect(valid.stdout + valid.stderr + shown.stdout + shown.stderr).not.toContain(SECRET);
  });
});
