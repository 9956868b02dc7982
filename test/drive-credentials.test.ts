import { generateKeyPairSync } from "node:crypto";
import { stat, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { SCOPE_METADATA_READONLY } from "../src/drive/scope.ts";
import { CLIENT_ID, createDriveHarness, type Harness } from "./support/drive-harness.ts";

let h: Harness;
afterEach(async () => {
  await h?.close();
});

describe("Google Drive monitor: shared drives", () => {
  it("watches shared drives named in TEAMDRIVES (by name or id) with per-drive feeds and their real names", async () => {
    h = await createDriveHarness({
      sharedDrives: ["Media Team", "ID-PLACEHOLDER"],
      filter: { filePaths: ["Media Team/", "Archive/"] },
      mappings: { "/data/team/": ["Media Team/"], "/data/archive/": ["Archive/"] },
    });
    const d = h.google.drive;
    const team = d.addSharedDrive("Media Team");
    const archive = d.addSharedDrive("Archive");
    d.addSharedDrive("Unwatched");
    // The second entry is an id: swap it in now that the fake made one.
    h = await restartWith(h, ["Media Team", archive]);
    await h.monitor.pollOnce();
    d.addFile("x.mkv", d.ensureFolders("Movies/X", team));
    d.addFile("y.mkv", d.ensureFolders("Old", archive));
    await h.monitor.pollOnce();
    expect(h.scanned().sort()).toEqual(["/data/archive/Old/y.mkv", "/data/team/Movies/X/x.mkv"]);

    const perDrive = h.google.requests.filter((r) => r.route === "changes" && r.query.get("driveId") === team);
    expect(perDrive.length).toBeGreaterThan(0);
    for (const { query } of perDrive) {
      expect(query.get("supportsAllDrives")).toBe("true");
      expect(query.get("includeItemsFromAllDrives")).toBe("true");
    }
    const starts = h.google.requests.filter((r) => r.route === "startPageToken" && r.query.get("driveId") === archive);
    expect(starts[0]?.query.get("supportsAllDrives")).toBe("true");
    expect(h.messages()).toContain("Loaded 2 shared drive(s): Media Team, Archive");
  });

  it("names a missing shared drive and lists the visible ones", async () => {
    h = await createDriveHarness({ sharedDrives: ["Nope"] });
    h.google.drive.addSharedDrive("Media Team");
    await h.monitor.pollOnce();
    const warning = h.messages().find((m) => m.startsWith("Shared drive 'Nope' was not found"));
    expect(warning).toContain("'Media Team' (0A");
  });

  it("stops with a scope hint when the token cannot read shared-drive names", async () => {
    h = await createDriveHarness({ sharedDrives: ["Media Team"], scope: SCOPE_METADATA_READONLY });
    await h.monitor.start();
    expect(h.monitor.state).toBe("failed");
    const errors = h.lines.filter((l) => l.level === 50).map((l) => String(l.msg));
    expect(errors).toHaveLength(1);
    expect(errors[0]).toMatch(/Google Drive monitoring stopped: .*lack of scope.*autoscan authorize.*drive\.readonly/);
  });
});

describe("Google Drive monitor: tokens", () => {
  it("refreshes the access token, persists it (mode 0600) and hands it to the log scrubber", async () => {
    h = await createDriveHarness();
    await h.monitor.pollOnce();
    const stored = await h.tokenStore.load();
    expect(stored?.accessToken).toMatch(/^ya29\./);
    expect(stored?.expiryDate).toBeGreaterThan(Date.now());
    expect(stored?.scope).toBe(SCOPE_METADATA_READONLY);
    expect(h.secrets).toContain(stored?.accessToken);
    expect((await stat(h.tokenStore.path)).mode & 0o777).toBe(0o600);
  });

  it("a revoked refresh token stops the monitor with one error line and a hint", async () => {
    h = await createDriveHarness();
    h.google.revokeAll();
    await h.monitor.start();
    expect(h.monitor.state).toBe("failed");
    const errors = h.lines.filter((l) => l.level === 50).map((l) => String(l.msg));
    expect(errors).toEqual([expect.stringMatching(/^Google Drive monitoring stopped: .*invalid_grant.*Run `autoscan authorize` again/)]);
  });

  it("a refresh token bound to another client stops the monitor with unauthorized_client", async () => {
    h = await createDriveHarness();
    h.google.addClient("other-client", "other-secret");
    const foreign = h.google.issueRefreshToken("other-client", SCOPE_METADATA_READONLY);
    await h.tokenStore.save({ clientId: CLIENT_ID, refreshToken: foreign });
    await h.monitor.start();
    expect(h.monitor.state).toBe("failed");
    expect(h.messages().find((m) => m.includes("stopped"))).toMatch(/unauthorized_client/);
  });

  it("without a stored token it says to run authorize", async () => {
    h = await createDriveHarness();
    await h.tokenStore.remove();
    await h.monitor.start();
    expect(h.monitor.state).toBe("failed");
    expect(h.messages().find((m) => m.includes("stopped"))).toMatch(/No Google Drive token yet.*autoscan authorize/);
  });

  it("a CLIENT_ID changed since authorize is caught before any call", async () => {
    h = await createDriveHarness();
    await h.tokenStore.save({ clientId: "old-client.apps.googleusercontent.com", refreshToken: "1//x" });
    await h.monitor.start();
    expect(h.messages().find((m) => m.includes("stopped"))).toMatch(/issued to OAuth client old-client.*CLOUD.CLIENT_ID/);
    expect(h.google.calls.token).toBe(0);
  });
});

describe("Google Drive monitor: quotas and failures", () => {
  it("backs off on 403 userRateLimitExceeded, honouring Retry-After, then succeeds", async () => {
    h = await createDriveHarness();
    await h.monitor.pollOnce();
    h.google.drive.addFile("a.mkv", h.google.drive.ensureFolders("Media/Movies"));
    h.google.failNext("changes", { status: 403, reason: "userRateLimitExceeded", retryAfter: "7" });
    h.google.failNext("changes", { status: 429 });
    await h.monitor.pollOnce();
    expect(h.scanned()).toEqual(["/data/Media/Movies/a.mkv"]);
    expect(h.sleeps).toEqual([7000, 2500]); // Retry-After wins; then 2^1 s + jitter (0.5 s)
    expect(h.messages().filter((m) => m.startsWith("Google Drive rate limit hit"))).toHaveLength(2);
  });

  it("retries 5xx, gives up after the attempts, and the next poll continues where it was", async () => {
    h = await createDriveHarness();
    await h.monitor.pollOnce();
    h.google.drive.addFile("a.mkv", h.google.drive.ensureFolders("Media/Movies"));
    h.google.failNext("changes", { status: 503 }, 6);
    await expect(h.monitor.pollOnce()).rejects.toThrow(/changes.list/);
    expect(h.sleeps).toHaveLength(5);
    expect(h.monitor.state).not.toBe("failed");
    await h.monitor.pollOnce();
    expect(h.scanned()).toEqual(["/data/Media/Movies/a.mkv"]);
  });

  it("keeps running after a failed poll and waits longer than the interval (never spins)", async () => {
    h = await createDriveHarness();
    h.google.failNext("startPageToken", { status: 500 }, 6);
    await h.monitor.start();
    expect(h.monitor.state).toBe("starting");
    expect(h.messages().some((m) => m.startsWith("Polling Google Drive failed"))).toBe(true);
    await h.monitor.stop();
    expect(h.sleeps.at(-1)).toBeGreaterThanOrEqual(60_000);
  });
});

describe("Google Drive monitor: service account", () => {
  it("reads the shared drives the account is a member of (JWT grant through the real client)", async () => {
    const { publicKey, privateKey } = generateKeyPairSync("rsa", { modulusLength: 2048 });
    const email = "autoscan@project.iam.gserviceaccount.com";
    let keyFile = "";
    h = await createDriveHarness({
      sharedDrives: ["Media Team"],
      filter: { filePaths: ["Media Team/"] },
      mappings: { "/data/team/": ["Media Team/"] },
      credentials: ({ dir }) => {
        keyFile = join(dir, "sa.json");
        return { kind: "service-account", key: { file: keyFile } };
      },
    });
    await writeFile(
      keyFile,
      JSON.stringify({
        type: "service_account",
        project_id: "p",
        private_key_id: "k1",
        private_key: privateKey.export({ type: "pkcs8", format: "pem" }),
        client_email: email,
        client_id: "1",
        token_uri: "https://oauth2.googleapis.com/token",
      }),
    );
    h.google.addServiceAccount(email, publicKey.export({ type: "spki", format: "pem" }).toString());
    const team = h.google.drive.addSharedDrive("Media Team", [email]);
    h.google.drive.addSharedDrive("Not a member");
    await h.monitor.pollOnce();
    h.google.drive.addFile("x.mkv", h.google.drive.ensureFolders("Movies", team));
    await h.monitor.pollOnce();
    expect(h.scanned()).toEqual(["/data/team/Movies/x.mkv"]);
    expect(h.google.calls.token).toBe(1);
    expect(h.messages()).toContain("Loaded 1 shared drive(s): Media Team");
  });

  it("explains a key file that is not a service account key", async () => {
    h = await createDriveHarness({
      credentials: ({ dir }) => ({ kind: "service-account", key: { file: join(dir, "missing.json") } }),
    });
    await h.monitor.start();
    expect(h.messages().find((m) => m.includes("stopped"))).toMatch(/Cannot read the service account key .*missing\.json/);
  });
});

async function restartWith(old: Harness, sharedDrives: string[]): Promise<Harness> {
  await old.monitor.stop();
  const next = await createDriveHarness({
    google: old.google,
    dir: old.dir,
    sharedDrives,
    filter: { filePaths: ["Media Team/", "Archive/"] },
    mappings: { "/data/team/": ["Media Team/"], "/data/archive/": ["Archive/"] },
  });
  return next;
}

