import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { EVENT_FLAGS } from "../src/arr/connection-facts.ts";
import { appConnections } from "../src/arr/app-connections.ts";
import { makeTempDir } from "./support/capture-log.ts";
import { CONSOLE_PASS, startConsoleService, type ConsoleService } from "./support/console-service.ts";
import { startFakeArr, type FakeArr, type FakeArrOptions } from "./support/fake-arr.ts";
import { freePort } from "./support/free-port.ts";
import { runCli, type CliResult } from "./support/run-cli.ts";

/**
 * `autoscan arr connect` through the real entry point (a child process), against fake Sonarr (v4 and v3), Radarr,
 * Lidarr and Readarr whose connection and health APIs follow the apps' source (test/support/fake-arr/notifications.ts),
 * and the real `autoscan server` as the address the connections point at: the fake apps send their Test event to it,
 * as the apps do before they save a connection. Each case has fresh fake apps and a config of its own.
 */
let svc: ConsoleService;
const PASS = CONSOLE_PASS;
const fakes: FakeArr[] = [];
const cleanups: (() => Promise<void>)[] = [];

beforeAll(async () => {
  svc = await startConsoleService();
}, 60_000);

afterAll(async () => {
  await Promise.all(fakes.map((fake) => fake.close()));
  await Promise.all(cleanups.map((cleanup) => cleanup()));
  await svc?.stop();
});

async function fake(options: FakeArrOptions): Promise<FakeArr> {
  const started = await startFakeArr(options);
  fakes.push(started);
  return started;
}

async function configFor(apps: Record<string, { type: string; url: string; apiKey: string }>): Promise<string> {
  const { dir, cleanup } = await makeTempDir("autoscan-arr-connect-");
  cleanups.push(cleanup);
  const path = join(dir, "config.json");
  const ARR = Object.fromEntries(Object.entries(apps).map(([name, app]) => [name, { TYPE: app.type, URL: app.url, API_KEY: app.apiKey, TIMEOUT: 5 }]));
  await writeFile(path, JSON.stringify({ SERVER_PASS: PASS, SERVER_PORT: Number(new URL(svc.url).port), ARR }));
  return path;
}

const entry = (app: FakeArr) => ({ type: app.type, url: app.url, apiKey: app.apiKey });

async function connect(path: string, ...args: string[]): Promise<CliResult & { lines: string[] }> {
  const result = await runCli(["arr", "connect", "--config", path, ...args]);
  const text = result.stdout + result.stderr;
  expect(text).not.toContain(PASS);
  for (const app of fakes) expect(text).not.toContain(app.apiKey);
  return { ...result, lines: result.stdout.trim().split("\n") };
}

const ours = (name: string) => `${svc.url}/${PASS}/${encodeURIComponent(name)}`;
const shown = (name: string) => `${svc.url}/<SERVER_PASS>/${name}`;
const wanted = (type: keyof typeof EVENT_FLAGS) => Object.fromEntries(EVENT_FLAGS[type].map(({ flag }) => [flag, true]));
const writes = (app: FakeArr) => app.requests.filter((request) => request.method !== "GET").map((request) => `${request.method} ${request.path}`);

describe("autoscan arr connect", () => {
  it("the events it ticks are the ones webhook-url tells users to tick", () => {
    const connections = appConnections("http://autoscan:3030", "pass", {});
    expect(connections.map((connection) => connection.type)).toEqual(["sonarr", "radarr", "lidarr", "readarr"]);
    for (const { type, events } of connections) if (type) expect(events).toEqual(EVENT_FLAGS[type].map((event) => event.label));
  });

  it("creates a missing connection (Sonarr on /api/v3, Lidarr on /api/v1); the app tests it against the running autoscan; a second run creates no other", async () => {
    const [sonarr, lidarr] = await Promise.all([fake({ type: "sonarr" }), fake({ type: "lidarr" })]);
    const path = await configFor({ sonarr: entry(sonarr), lidarr: entry(lidarr) });

    const first = await connect(path, "--url", svc.url);
    expect(first.code, first.stderr).toBe(0);
    expect(first.lines).toEqual([
      `sonarr: created 'autoscan' (id 1) → ${shown("sonarr")}; the test passed`,
      `lidarr: created 'autoscan' (id 1) → ${shown("lidarr")}; the test passed`,
    ]);
    expect(writes(sonarr)).toEqual(["POST /api/v3/notification", "POST /api/v3/notification/test"]);
    expect(writes(lidarr)).toEqual(["POST /api/v1/notification", "POST /api/v1/notification/test"]);
    for (const [app, name, type] of [[sonarr, "sonarr", "sonarr"], [lidarr, "lidarr", "lidarr"]] as const) {
      expect(app.notifications).toHaveLength(1);
      const [made] = app.notifications;
      expect(made).toMatchObject({ name: "autoscan", implementation: "Webhook", url: ours(name), method: 1, enabled: true, failing: false });
      const on = Object.entries(made!.events).filter(([, value]) => value).map(([flag]) => flag);
      expect(on.sort()).toEqual(Object.keys(wanted(type)).sort());
      // The app tested it before saving (no id yet) and again when asked; the real autoscan answered 200 both times.
      expect(app.notificationTests).toEqual([
        { id: undefined, url: ours(name), method: "POST", ok: true, status: 200 },
        { id: 1, url: ours(name), method: "POST", ok: true, status: 200 },
      ]);
    }

    const second = await connect(path, "--url", svc.url);
    expect(second.code, second.stderr).toBe(0);
    expect(second.lines).toEqual([
      `sonarr: already right: 'autoscan' (id 1) → ${shown("sonarr")}; the test passed`,
      `lidarr: already right: 'autoscan' (id 1) → ${shown("lidarr")}; the test passed`,
    ]);
    expect(sonarr.notifications).toHaveLength(1);
    expect(lidarr.notifications).toHaveLength(1);
    expect(writes(sonarr).filter((write) => write === "POST /api/v3/notification")).toHaveLength(1);
  });

  it("fixes the one that is there: a wrong URL (an old name match), a disabled one, missing events and PUT; keeps the user's name, password, tags and other connections", async () => {
    const [radarr, readarr, sonarr3] = await Promise.all([fake({ type: "radarr" }), fake({ type: "readarr" }), fake({ type: "sonarr", sonarrVersion: "v3" })]);
    const old = radarr.addNotification({
      name: "Autoscan",
      url: "http://old-host:3468/0ldpass0ldpass0ldpass/radarr",
      username: "me",
      password: "hunter22",
      tags: [3],
      events: { onGrab: true, onDownload: true, onHealthIssue: true },
    });
    const other = radarr.addNotification({ name: "Notifiarr", url: "http://notifiarr:5454/api/v1/notification/radarr", events: { onGrab: true, onDownload: true } });
    readarr.addNotification({ name: "autoscan", url: ours("readarr") });
    sonarr3.addNotification({ name: "autoscan", url: ours("sonarr-old"), method: 2, events: { onDownload: true, onUpgrade: true, onRename: true, onSeriesDelete: true, onEpisodeFileDelete: true } });
    const path = await configFor({ radarr: entry(radarr), readarr: entry(readarr), "sonarr-old": entry(sonarr3) });

    const result = await connect(path, "--url", svc.url);
    expect(result.code, result.stderr).toBe(0);
    expect(result.lines).toEqual([
      `radarr: fixed 'Autoscan' (id ${old}): URL http://old-host:3468/<hidden>/radarr → ${shown("radarr")}; ticked On File Upgrade, On Rename, ` +
        "On Movie Delete, On Movie File Delete, On Movie File Delete For Upgrade; On Grab off (nothing to scan yet at a grab); the test passed",
      "readarr: fixed 'autoscan' (id 1): enabled: ticked On Release Import, On Upgrade, On Rename, On Author Delete, On Book Delete, On Book File " +
        "Delete, On Book File Delete For Upgrade; the test passed",
      "sonarr-old: fixed 'autoscan' (id 1): method PUT → POST; ticked On Episode File Delete For Upgrade; the test passed",
    ]);
    const fixed = radarr.notifications.find((connection) => connection.id === old)!;
    expect(fixed).toMatchObject({ name: "Autoscan", url: ours("radarr"), method: 1, username: "me", password: "hunter22", tags: [3], enabled: true });
    expect(fixed.events).toMatchObject({ ...wanted("radarr"), onGrab: false, onHealthIssue: true, onMovieAdded: false });
    expect(radarr.notifications.find((connection) => connection.id === other)).toMatchObject({ url: "http://notifiarr:5454/api/v1/notification/radarr", events: { onGrab: true } });
    expect(writes(radarr)).toEqual([`PUT /api/v3/notification/${old}`, "POST /api/v3/notification/test"]);
    expect(readarr.notifications[0]).toMatchObject({ enabled: true, events: wanted("readarr") });
    expect(writes(readarr)).toEqual(["PUT /api/v1/notification/1", "POST /api/v1/notification/test"]);
    expect(sonarr3.notifications[0]).toMatchObject({ method: 1, events: wanted("sonarr") });
    expect(radarr.notifications).toHaveLength(2);
  });

  it("several connections to autoscan: keeps the best, names the others, deletes nothing", async () => {
    const sonarr = await fake({ type: "sonarr" });
    const events = wanted("sonarr");
    sonarr.addNotification({ name: "Plex scan", url: `${ours("sonarr")}/`, events });
    sonarr.addNotification({ name: "autoscan", url: ours("sonarr"), events });
    const path = await configFor({ sonarr: entry(sonarr) });
    const result = await connect(path, "--url", svc.url);
    expect(result.code, result.stderr).toBe(0);
    expect(result.lines).toEqual([`sonarr: already right: 'autoscan' (id 2) → ${shown("sonarr")}; the test passed`]);
    expect(result.stderr).toContain(
      "sonarr: another connection also sends to autoscan: 'Plex scan' (id 1); left as they are (autoscan deletes nothing of yours). Each event " +
        "reaches autoscan once per connection: remove the extra ones in Sonarr, Settings → Connect.",
    );
    expect(sonarr.notifications).toHaveLength(2);
    expect(writes(sonarr)).toEqual(["POST /api/v3/notification/test"]);
  });

  it("--dry-run says what would change, and changes and tests nothing", async () => {
    const [radarr, lidarr] = await Promise.all([fake({ type: "radarr" }), fake({ type: "lidarr" })]);
    radarr.addNotification({ name: "autoscan", url: ours("radarr"), events: { onDownload: true } });
    const before = radarr.notifications;
    const path = await configFor({ radarr: entry(radarr), lidarr: entry(lidarr) });
    const result = await connect(path, "--url", svc.url, "--dry-run");
    expect(result.code, result.stderr).toBe(0);
    expect(result.lines).toEqual([
      "radarr: would fix 'autoscan' (id 1): ticked On File Upgrade, On Rename, On Movie Delete, On Movie File Delete, On Movie File Delete For Upgrade",
      `lidarr: would create 'autoscan' → ${shown("lidarr")} (POST; On Release Import, On Upgrade, On Rename, On Artist Delete, On Album Delete)`,
    ]);
    expect(radarr.notifications).toEqual(before);
    expect(lidarr.notifications).toEqual([]);
    expect([...writes(radarr), ...writes(lidarr)]).toEqual([]);
    expect([...radarr.notificationTests, ...lidarr.notificationTests]).toEqual([]);
  });

  it("an app that is down, or refuses the key, fails with a clear line; the others are still connected (exit 1)", async () => {
    const sonarr = await fake({ type: "sonarr" });
    const radarr = await fake({ type: "radarr" });
    await radarr.setDown(true);
    const readarr = await fake({ type: "readarr" });
    const path = await configFor({ sonarr: entry(sonarr), radarr: entry(radarr), readarr: { ...entry(readarr), apiKey: "wrongkey0123456789abcdef01234567" } });
    const result = await connect(path, "--url", svc.url);
    expect(result.code).toBe(1);
    expect(result.lines[0]).toBe(`sonarr: created 'autoscan' (id 1) → ${shown("sonarr")}; the test passed`);
    expect(result.lines[1]).toMatch(new RegExp(`^radarr: failed: radarr is unreachable at http://127\\.0\\.0\\.1:${radarr.port} \\(GET /api/v3/notification\\): .*ECONNREFUSED`));
    expect(result.lines[2]).toBe("readarr: failed: readarr rejected the API key: check ARR.readarr.API_KEY");
    expect(result.stdout).not.toContain("wrongkey0123456789abcdef01234567");
  });

  it("an app that cannot reach autoscan at the URL refuses to save the connection: failed, in the app's words, with what to check", async () => {
    const sonarr = await fake({ type: "sonarr" });
    const lidarr = await fake({ type: "lidarr" });
    const path = await configFor({ sonarr: entry(sonarr), lidarr: entry(lidarr) });
    const closed = `http://127.0.0.1:${await freePort()}`;
    const result = await connect(path, "--url", closed);
    expect(result.code).toBe(1);
    const port = new URL(closed).port;
    expect(result.lines[0]).toBe(
      `sonarr: failed: Sonarr refused to create 'autoscan' → ${closed}/<SERVER_PASS>/sonarr: Connection refused (127.0.0.1:${port}) (Sonarr sends a test ` +
        `to the URL before it saves a connection: is 'autoscan server' running, and does Sonarr reach it at ${closed}/<SERVER_PASS>/sonarr? --url sets ` +
        "the address Sonarr should use.)",
    );
    expect(result.lines[1]).toContain(`lidarr: failed: Lidarr refused to create 'autoscan' → ${closed}/<SERVER_PASS>/lidarr: Connection refused`);
    expect(sonarr.notifications).toEqual([]);

    // A wrong path on the running autoscan: the app's test gets autoscan's 401, and says so (SERVER_PASS masked).
    const wrong = await connect(path, "--url", `${svc.url}/not-autoscan`, "--app", "sonarr");
    expect(wrong.code).toBe(1);
    expect(wrong.lines[0]).toMatch(/^sonarr: failed: Sonarr refused to create 'autoscan' → .*: Unable to send test message: Unable to post to webhook: HTTP request failed: \[\d{3}:\w+\] \[POST\] at \[http:\/\/127\.0\.0\.1:\d+\/not-autoscan\/<SERVER_PASS>\/sonarr\]/);
  });

  it("an app that cannot resolve the name it was given: the fix is --url (and, for 'autoscan', the Docker network advice webhook-url gives)", async () => {
    const sonarr = await fake({ type: "sonarr" });
    const path = await configFor({ sonarr: entry(sonarr) });
    const port = new URL(svc.url).port;
    const result = await connect(path, "--url", `autoscan:${port}`);
    expect(result.code).toBe(1);
    expect(result.lines[0]).toBe(
      `sonarr: failed: Sonarr refused to create 'autoscan' → http://autoscan:${port}/<SERVER_PASS>/sonarr: Name or service not known (autoscan:${port}) ` +
        "(Sonarr cannot find the host 'autoscan' from where it runs, so it cannot send to autoscan there. The address 'autoscan' works for apps on " +
        "the same Docker network (the same compose project). Apps in another compose project: join both to one external network, or use the host's " +
        `address and published port (autoscan arr connect --url 192.168.1.10:${port}).)`,
    );
    const other = await connect(path, "--url", `nas.invalid:${port}`);
    expect(other.code).toBe(1);
    expect(other.lines[0]).toContain(
      `(Sonarr cannot find the host 'nas.invalid' from where it runs, so it cannot send to autoscan there: give the address Sonarr reaches autoscan at with --url, e.g. autoscan arr connect --url 192.168.1.10:${port})`,
    );
    expect(sonarr.notifications).toEqual([]);

    // autoscan itself cannot find the app: the fix is the app's address under ARR (or where the command runs).
    const unknown = await configFor({ sonarr: { type: "sonarr", url: "http://sonarr.invalid:8989", apiKey: sonarr.apiKey } });
    const lost = await connect(unknown);
    expect(lost.code).toBe(1);
    expect(lost.lines[0]).toBe(
      "sonarr: failed: sonarr is unreachable at http://sonarr.invalid:8989 (GET /api/v3/notification): getaddrinfo ENOTFOUND sonarr.invalid " +
        "(autoscan cannot find the host 'sonarr.invalid' from where this command runs: run it where that name resolves (in Docker: docker exec " +
        "autoscan autoscan arr connect), or set ARR.sonarr.URL to an address it reaches, such as the app's LAN address and port)",
    );
  });

  it("a connection the app holds back after failures: the passed test lets it send again", async () => {
    const sonarr = await fake({ type: "sonarr" });
    const id = sonarr.addNotification({ name: "autoscan", url: ours("sonarr"), events: wanted("sonarr") });
    sonarr.setNotificationFailing(id, true);
    const path = await configFor({ sonarr: entry(sonarr) });
    const result = await connect(path, "--url", svc.url);
    expect(result.code, result.stderr).toBe(0);
    expect(result.lines).toEqual([`sonarr: already right: 'autoscan' (id ${id}) → ${shown("sonarr")}; the test passed`]);
    expect(result.stderr).toContain(`sonarr: Sonarr had stopped sending to 'autoscan' (id ${id}) after failed deliveries; a passed test lets it send again.`);
    expect(sonarr.notifications[0]?.failing).toBe(false);
  });

  it("without --url, a connection carrying SERVER_PASS keeps the address it has; one without the app's label gets it", async () => {
    const [sonarr, radarr] = await Promise.all([fake({ type: "sonarr" }), fake({ type: "radarr" })]);
    sonarr.addNotification({ name: "autoscan", url: ours("sonarr"), events: wanted("sonarr") });
    radarr.addNotification({ name: "webhook", url: `${svc.url}/${PASS}`, events: wanted("radarr") });
    const path = await configFor({ sonarr: entry(sonarr), radarr: entry(radarr) });
    const result = await connect(path);
    expect(result.code, result.stderr).toBe(0);
    expect(result.lines[0]).toBe(`sonarr: already right: 'autoscan' (id 1) → ${shown("sonarr")}; the test passed`);
    expect(result.lines[1]).toBe(`radarr: fixed 'webhook' (id 1): URL ${svc.url}/<SERVER_PASS> → ${shown("radarr")}; the test passed`);
    expect(radarr.notifications[0]?.url).toBe(ours("radarr"));
  });

  it("bad usage is exit 2; no app under ARR is exit 1 with where to add them", async () => {
    const sonarr = await fake({ type: "sonarr" });
    const path = await configFor({ sonarr: entry(sonarr) });
    const unknown = await connect(path, "--app", "nope");
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain("--app: no app 'nope' under ARR (known: sonarr)");
    const badUrl = await connect(path, "--url", "ftp://nas");
    expect(badUrl.code).toBe(2);
    expect(badUrl.stderr).toContain('--url "ftp://nas": only http:// and https:// addresses work.');
    const empty = await configFor({});
    const none = await connect(empty);
    expect(none.code).toBe(1);
    expect(none.stderr).toContain("No *arr app is configured: add each under ARR");
    expect(writes(sonarr)).toEqual([]);
  });
});
