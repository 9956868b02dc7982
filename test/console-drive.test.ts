import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pino from "pino";
import { afterEach, describe, expect, it } from "vitest";
import { createDriveMonitorFromConfig, describeDriveAccess, tokenStoreFor } from "../src/drive/from-config.ts";
import { systemClock } from "../src/core/clock.ts";
import { parseConfigText } from "../src/config/load.ts";
import { createMonitorStatus } from "../src/drive/monitor-status.ts";
import { SCOPE_METADATA_READONLY } from "../src/drive/scope.ts";
import { createPathMapper } from "../src/paths/mapping.ts";
import type { DriveStatus } from "../src/core/drive-status.ts";
import { CLIENT_ID, CLIENT_SECRET, createDriveHarness, type Harness } from "./support/drive-harness.ts";
import { startFakeGoogle, type FakeGoogle } from "./support/fake-google.ts";
import { createManualClock } from "./support/manual-clock.ts";
import { buildWebApp, TEST_PASS } from "./support/web-builders.ts";

/** The console's Drive page: the monitor's own account of its polls (fake Google), and the page that shows it. */
let h: Harness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

describe("Drive monitor status", () => {
  it("moves with each poll: last poll, today's changes and scans, drives, token expiry", async () => {
    h = await createDriveHarness();
    const before = h.monitor.status();
    expect(before).toMatchObject({ state: "idle", access: "not connected yet", drives: ["My Drive"], today: { changes: 0, scansQueued: 0 }, errors: [] });
    expect(before.lastPoll).toBeUndefined();

    await h.monitor.pollOnce(); // takes the start token: nothing to read yet
    const first = h.monitor.status();
    expect(first.lastPoll).toMatchObject({ ok: true, detail: "no changes" });
    expect(first.access).toBe(`OAuth client ${CLIENT_ID}`);
    expect(first.tokenExpiresAt).toBeGreaterThan(Date.now());

    const folder = h.google.drive.ensureFolders("Media/Movies/New (2024)");
    h.google.drive.addFile("New (2024).mkv", folder);
    h.google.drive.addFile("New (2024).nfo", folder);
    await h.monitor.pollOnce();
    const after = h.monitor.status();
    expect(after.today.scansQueued).toBe(1);
    expect(after.today.changes).toBeGreaterThanOrEqual(2);
    expect(after.lastPoll?.ok).toBe(true);
    expect(after.lastPoll?.detail).toBe(`${after.today.changes} changes, 1 scan queued`);
    expect(after.lastPoll!.at).toBeGreaterThanOrEqual(first.lastPoll!.at);
    expect(after.lastScanQueuedAt).toBeDefined();
    expect(after.errors).toEqual([]);
  });

  it("a failing poll shows in lastPoll and the errors, newest first; a good poll clears the failure count", async () => {
    h = await createDriveHarness();
    await h.monitor.pollOnce();
    h.google.drive.addFile("Show S01E01.mkv", h.google.drive.ensureFolders("Media/TV/Show/Season 1"));
    h.refuseNext(1);
    await expect(h.monitor.pollOnce()).rejects.toThrow("queue unavailable");
    let status = h.monitor.status();
    expect(status.lastPoll).toMatchObject({ ok: false, detail: "queue unavailable" });
    expect(status.failuresInARow).toBe(1);
    expect(status.errors.map((e) => e.message)).toEqual(["queue unavailable"]);
    expect(status.today.scansQueued).toBe(0);

    h.google.failNext("changes", { status: 400, reason: "badRequest" });
    await expect(h.monitor.pollOnce()).rejects.toThrow();
    status = h.monitor.status();
    expect(status.failuresInARow).toBe(2);
    expect(status.errors).toHaveLength(2);
    expect(status.errors[0]?.message).toMatch(/^changes\.list: /);

    await h.monitor.pollOnce(); // the refused page is read again and accepted
    status = h.monitor.status();
    expect(status.lastPoll?.ok).toBe(true);
    expect(status.failuresInARow).toBe(0);
    expect(status.today.scansQueued).toBe(1);
    expect(status.errors).toHaveLength(2);
  });

  it("Google refusing the credentials stops the monitor, with the reason and its fix", async () => {
    h = await createDriveHarness({ realTimeIntervalMs: 60_000 });
    h.google.revokeAll();
    await h.monitor.start();
    const status = h.monitor.status();
    expect(status.state).toBe("failed");
    expect(status.reason).toMatch(/autoscan authorize/);
    expect(status.nextPollAt).toBeUndefined();
    expect(status.lastPoll?.ok).toBe(false);
    expect(status.errors).toHaveLength(1);
  });

  it("counts today by the monitor's clock (UTC day) and keeps the last five errors, on one line each", async () => {
    const clock = createManualClock(Date.UTC(2026, 10, 25, 23, 59, 0));
    const status = createMonitorStatus({ clock, pollIntervalMs: 60_000, drives: ["My Drive"], redact: (text) => text.replaceAll("s3cret", "<redacted>") });
    status.pollStarted();
    status.page(7, 2);
    status.pollSucceeded();
    expect(status.snapshot("running").today).toEqual({ changes: 7, scansQueued: 2 });
    await clock.advance(2 * 60_000);
    expect(status.snapshot("running").today).toEqual({ changes: 0, scansQueued: 0 });
    expect(status.snapshot("running").lastPoll?.detail).toBe("7 changes, 2 scans queued");
    for (let i = 1; i <= 7; i++) status.pollFailed(new Error(`failure ${i}\n  token s3cret`));
    const errors = status.snapshot("running").errors.map((e) => e.message);
    expect(errors).toEqual([7, 6, 5, 4, 3].map((i) => `failure ${i} token <redacted>`));
  });
});

describe("Drive monitor status through the service's wiring", () => {
  it.each([
    [{ SERVICE_ACCOUNT_FILE: "/config/sa.json" }, "service account key /config/sa.json"],
    [{ RCLONE_CONFIG: "/config/rclone.conf", RCLONE_REMOTE: "gdrive:" }, "rclone remote gdrive: (/config/rclone.conf)"],
    [{ CLIENT_ID: "id", CLIENT_SECRET: "secret" }, "OAuth token stored by autoscan authorize (/data/google-token.json)"],
  ])("names the access method the config chose: %o", (cloud, words) => {
    const { config } = parseConfigText(JSON.stringify({ SERVER_PASS: TEST_PASS, CLOUD: { ENABLED: true, ...cloud } }), "config.json", {});
    expect(describeDriveAccess(config, { dataDir: "/data" })).toBe(words);
  });


  let google: FakeGoogle | undefined;
  let dir: string | undefined;
  afterEach(async () => {
    await google?.close();
    if (dir) await rm(dir, { recursive: true, force: true });
    google = undefined;
    dir = undefined;
  });

  it("says how it reaches Google, and keeps no token or secret in the errors it shows", async () => {
    google = await startFakeGoogle();
    google.addClient(CLIENT_ID, CLIENT_SECRET);
    dir = await mkdtemp(join(tmpdir(), "autoscan-console-drive-"));
    const settings = { dataDir: dir, cacheFile: join(dir, "cache.db") };
    const refreshToken = google.issueRefreshToken(CLIENT_ID, SCOPE_METADATA_READONLY);
    await tokenStoreFor(settings).save({ clientId: CLIENT_ID, refreshToken });
    const raw = {
      SERVER_PASS: TEST_PASS,
      SERVER_PATH_MAPPINGS: { "/data/Media/": ["My Drive/Media/"] },
      CLOUD: { ENABLED: true, CLIENT_ID, CLIENT_SECRET, ALLOWED: { FILE_PATHS: ["My Drive/Media/"] } },
    };
    const { config } = parseConfigText(JSON.stringify(raw), "config.json", {});
    let fail = false;
    const monitor = createDriveMonitorFromConfig({
      config,
      settings,
      env: { AUTOSCAN_GOOGLE_API_URL: google.url, AUTOSCAN_GOOGLE_TOKEN_URL: google.tokenUrl, AUTOSCAN_GOOGLE_AUTH_URL: google.authUrl },
      sink: async (requests) => {
        if (fail) throw new Error(`queue refused (refresh_token=${refreshToken}, secret "${CLIENT_SECRET}", ${encodeURIComponent(refreshToken)})`);
        return { items: requests.map((r) => ({ folder: r.path, merged: false })) };
      },
      isInLibrary: async () => false,
      mapper: createPathMapper({ mappings: raw.SERVER_PATH_MAPPINGS }),
      clock: systemClock,
      log: pino({ level: "silent" }),
    });
    try {
      expect(monitor?.status().access).toBe(`OAuth token stored by autoscan authorize (${join(dir, "google-token.json")})`);
      await monitor!.pollOnce();
      expect(monitor!.status().account).toBe(`OAuth client ${CLIENT_ID}`);
      google.drive.addFile("a.mkv", google.drive.ensureFolders("Media/Movies"));
      fail = true;
      await expect(monitor!.pollOnce()).rejects.toThrow(/queue refused/);
      const status = monitor!.status();
      const shown = JSON.stringify(status);
      expect(status.errors[0]?.message).toMatch(/^queue refused .*<redacted>/);
      expect(shown).not.toContain(refreshToken);
      expect(shown).not.toContain(encodeURIComponent(refreshToken));
      expect(shown).not.toContain(CLIENT_SECRET);
    } finally {
      await monitor?.stop();
    }
  });
});

describe("Drive page", () => {
  // The page prints times against the real clock: the status is built around it (a fixed date would turn the token
  // "expired" once the real clock passed it).
  const NOW = Math.floor(Date.now() / 60_000) * 60_000;
  const iso = (ms: number): string => new Date(ms).toISOString();
  const running: DriveStatus = {
    access: "rclone remote 'gdrive' (/config/rclone.conf)",
    account: "rclone remote gdrive: (/config/rclone.conf)",
    state: "running",
    tokenExpiresAt: NOW + 50 * 60_000,
    pollIntervalMs: 120_000,
    lastPoll: { at: NOW - 30_000, ok: true, detail: "12 changes, 2 scans queued" },
    nextPollAt: NOW + 90_000,
    today: { changes: 1234, scansQueued: 56 },
    lastScanQueuedAt: NOW - 30_000,
    drives: ["My Drive", "Films & <Séries>"],
    errors: [],
  };
  const get = async (drive: (() => DriveStatus) | undefined) => {
    const { app } = buildWebApp(drive ? { console: { drive } } : {});
    const res = await app.request(`/${TEST_PASS}/drive`);
    return { res, text: await res.text() };
  };

  it("shows a running monitor: state, access, token expiry, last and next poll, today's counts, the Drive nav link", async () => {
    const { res, text } = await get(() => running);
    expect(res.status).toBe(200);
    expect(res.headers.get("content-security-policy")).toContain("script-src 'self'");
    expect(text).toContain('<span class="badge ok">Running</span>');
    expect(text).toContain("rclone remote &#39;gdrive&#39; (/config/rclone.conf)");
    expect(text).toContain("Films &amp; &lt;Séries&gt;");
    expect(text).toContain("12 changes, 2 scans queued");
    expect(text).toContain('<b class="num">1,234</b>');
    expect(text).toContain('<b class="num">56</b>');
    expect(text).toContain(`expires <time datetime="${iso(NOW + 50 * 60_000)}"`);
    expect(text).toContain(`<time datetime="${iso(NOW + 90_000)}"`);
    expect(text).toMatch(/<a href="[^"]*\/drive" aria-current="page">Drive<\/a>/);
    expect(text).toContain("No errors since autoscan started.");
  });

  it("a failing monitor says so with the error, escaped: a message cannot inject HTML", async () => {
    const hostile = `changes.list: <script>alert("x")</script> & <img src=x onerror=alert(1)>`;
    const failing: DriveStatus = {
      ...running,
      lastPoll: { at: NOW - 5_000, ok: false, detail: hostile },
      failuresInARow: 3,
      errors: [{ at: NOW - 5_000, message: hostile }],
    };
    const { text } = await get(() => failing);
    expect(text).toContain('<span class="badge err">Failing</span>');
    expect(text).toContain("The last 3 polls failed");
    expect(text).not.toContain("<script>alert");
    expect(text).not.toContain("<img src=x");
    expect(text).toContain("&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt; &amp; &lt;img src=x onerror=alert(1)&gt;");
    expect(text).toContain("Recent errors");
  });

  it("a stopped monitor shows the reason with its fix", async () => {
    const failed: DriveStatus = {
      ...running,
      state: "failed",
      nextPollAt: undefined,
      reason: "Google says the refresh token has expired or was revoked (invalid_grant). Run `autoscan authorize` again, then restart autoscan.",
      lastPoll: { at: NOW - 5_000, ok: false, detail: "invalid_grant" },
      errors: [{ at: NOW - 5_000, message: "invalid_grant" }],
    };
    const { text } = await get(() => failed);
    expect(text).toContain('<span class="badge err">Stopped</span>');
    expect(text).toContain("Why it stopped");
    expect(text).toContain("Run <code>autoscan authorize</code> again, then restart autoscan.");
  });

  it("a monitor stopped by Google's refusal lists that error, with its time, under Recent errors too", async () => {
    h = await createDriveHarness({ realTimeIntervalMs: 60_000 });
    h.google.revokeAll();
    await h.monitor.start();
    const status = h.monitor.status();
    expect(status.state).toBe("failed");
    const { text } = await get(() => status);
    expect(text).toContain("Why it stopped");
    const errors = text.slice(text.indexOf('id="drive-errors"'));
    expect(errors).not.toContain("No errors since autoscan started.");
    const rows = [...errors.matchAll(/<tr><td data-label="When" class="when"><time datetime="([^"]+)"[\s\S]*?<\/tr>/g)];
    expect(rows).toHaveLength(1);
    expect(Date.parse(rows[0]![1]!)).toBe(status.errors[0]!.at);
    expect(rows[0]![0]).toContain("invalid_grant");
  });

  it("the reason a monitor stopped is in Recent errors even when it is word for word the box's", async () => {
    const reason = "CLOUD.CLIENT_ID changed since autoscan authorize stored the token: run `autoscan authorize` again, then restart autoscan.";
    const failed: DriveStatus = {
      ...running,
      state: "failed",
      nextPollAt: undefined,
      reason,
      lastPoll: { at: NOW - 5_000, ok: false, detail: reason },
      errors: [{ at: NOW - 5_000, message: reason }],
    };
    const { text } = await get(() => failed);
    const errors = text.slice(text.indexOf('id="drive-errors"'));
    expect(errors).toContain(`<time datetime="${iso(NOW - 5_000)}"`);
    expect(errors).toContain("CLOUD.CLIENT_ID changed since");
  });

  it("renders a real monitor's status after a poll", async () => {
    h = await createDriveHarness();
    await h.monitor.pollOnce();
    h.google.drive.addFile("x.mkv", h.google.drive.ensureFolders("Media/Movies"));
    await h.monitor.pollOnce();
    const monitor = h.monitor;
    const { text } = await get(() => monitor.status());
    expect(text).toContain('<span class="badge muted">Not started</span>'); // pollOnce alone never starts the loop
    expect(text).toMatch(/\d+ changes, 1 scan queued/);
    expect(text).toContain(`OAuth client ${CLIENT_ID}`);
  });

  it("does not exist without Drive monitoring: 404, and no Drive link in the navigation", async () => {
    const { res } = await get(undefined);
    expect(res.status).toBe(404);
    const { app } = buildWebApp();
    const queue = await (await app.request(`/${TEST_PASS}/queue`)).text();
    expect(queue).not.toMatch(/\/drive"/);
  });
});
