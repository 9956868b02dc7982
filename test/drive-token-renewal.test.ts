import { generateKeyPairSync } from "node:crypto";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { SCOPE_FULL, SCOPE_READONLY } from "../src/drive/scope.ts";
import { CLIENT_ID, CLIENT_SECRET, createDriveHarness, type Harness, type HarnessOptions } from "./support/drive-harness.ts";
import type { FakeGoogle } from "./support/fake-google.ts";

/**
 * Google may drop an access token before its expiry (password change, security event, a token revoked by hand). The
 * client still believes it valid, so Drive's 401 is the only sign: the monitor gets one new token, retries the call
 * once, and goes on. Only Google refusing the new token (a revoked refresh token, a deleted service account key) is
 * final, and then the log says what to run. Real @googleapis/drive + google-auth-library against the fake Google.
 */
let h: Harness;
afterEach(async () => {
  await h?.close();
});

const MOVIE = "/data/Media/Movies/Early (2025)/Early (2025).mkv";

function addMovie(google: FakeGoogle): void {
  google.drive.addFile("Early (2025).mkv", google.drive.ensureFolders("Media/Movies/Early (2025)"));
}

const errors = (harness: Harness): string[] => harness.lines.filter((l) => Number(l.level) >= 50).map((l) => String(l.msg));
const warnings = (harness: Harness): string[] => harness.lines.filter((l) => l.level === 40).map((l) => String(l.msg));
/** Lines saying a new token was obtained: they must match the token calls that really succeeded. */
const renewalClaims = (harness: Harness): string[] => harness.messages().filter((m) => /got a new access token|refreshed/i.test(m));

async function until(condition: () => boolean, what: string, timeoutMs = 5000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

describe("Google Drive monitor: an access token revoked before its expiry (user OAuth tokens)", () => {
  it("poll → 401 → one refresh → the call retried → the change is queued, and the new token is saved", async () => {
    h = await createDriveHarness();
    await h.monitor.pollOnce();
    const before = await h.tokenStore.load();
    expect(before?.expiryDate).toBeGreaterThan(Date.now() + 60_000); // the client has every reason to trust it

    addMovie(h.google);
    expect(h.google.revokeAccessTokens()).toBe(1);
    h.google.resetCalls();
    await h.monitor.pollOnce();

    expect(h.scanned()).toEqual([MOVIE]);
    expect(h.google.calls.token).toBe(1); // exactly one refresh
    expect(h.google.calls.changes).toBe(2); // the refused call, then its retry
    expect(h.monitor.state).not.toBe("failed");
    expect(errors(h)).toEqual([]);
    expect(renewalClaims(h)).toEqual([expect.stringMatching(/^Google Drive refused the access token before its expiry \(401\); got a new access token and retrying changes\.list/)]);

    // Saved durably through the token store, before the retry: a restart uses it without asking Google again.
    const after = await h.tokenStore.load();
    expect(after?.accessToken).toMatch(/^ya29\./);
    expect(after?.accessToken).not.toBe(before?.accessToken);
    expect(after?.refreshToken).toBe(before?.refreshToken);
    expect(h.secrets).toContain(after?.accessToken);
    const again = await h.restart();
    h = again;
    h.google.resetCalls();
    await h.monitor.pollOnce();
    expect(h.google.calls.token).toBe(0);
    expect(h.google.calls.changes).toBeGreaterThan(0);
  });

  it("the running monitor keeps going through an early revocation (no stop, no error)", async () => {
    h = await createDriveHarness({ realTimeIntervalMs: 20 });
    await h.monitor.start();
    expect(h.monitor.state).toBe("running");
    const tokenCalls = h.google.calls.token;
    h.google.revokeAccessTokens();
    addMovie(h.google);
    await until(() => h.scanned().length > 0, "the change to be queued");
    expect(h.scanned()).toEqual([MOVIE]);
    expect(h.monitor.state).toBe("running");
    expect(h.google.calls.token - tokenCalls).toBe(1);
    expect(errors(h)).toEqual([]);
  });

  it("a 401 on a token borrowed from an rclone remote gets a new token the same way (kept in memory only)", async () => {
    let refresh = "";
    h = await createDriveHarness({
      credentials: ({ google }) => {
        google.addClient("rc-client.apps.googleusercontent.com", "rc-secret");
        refresh = google.issueRefreshToken("rc-client.apps.googleusercontent.com", SCOPE_FULL);
        return {
          kind: "token",
          clientId: "rc-client.apps.googleusercontent.com",
          clientSecret: "rc-secret",
          // rclone refreshed it since and Google dropped this one, but its expiry is still hours away.
          token: { accessToken: "ya29.dropped-by-google", refreshToken: refresh, expiryDate: Date.now() + 3_000_000, tokenType: "Bearer" },
          scope: SCOPE_FULL,
          description: "rclone remote gdrive: (rclone.conf)",
        };
      },
    });
    await h.monitor.pollOnce();
    expect(h.google.calls.token).toBe(1);
    addMovie(h.google);
    h.google.revokeAccessTokens();
    await h.monitor.pollOnce();
    expect(h.scanned()).toEqual([MOVIE]);
    expect(h.google.calls.token).toBe(2);
    expect(await h.tokenStore.load()).toBeUndefined(); // the remote's owner keeps its own file
  });

  it("a 401 again right after a successful refresh is not final: this poll fails, the next one refreshes once more and goes on", async () => {
    h = await createDriveHarness();
    await h.monitor.pollOnce();
    addMovie(h.google);
    h.google.resetCalls();
    h.google.failNext("changes", { status: 401, reason: "authError" }, 2);
    await expect(h.monitor.pollOnce()).rejects.toThrow(/refused the new access token too/);
    expect(h.google.calls.token).toBe(1); // one refresh per refused call, never a loop
    expect(h.google.calls.changes).toBe(2);
    expect(h.monitor.state).not.toBe("failed");
    await h.monitor.pollOnce();
    expect(h.scanned()).toEqual([MOVIE]);
  });

  it("a refused refresh (revoked refresh token) is final: one clear error naming `autoscan authorize`, no crash, no retry storm", async () => {
    h = await createDriveHarness({ realTimeIntervalMs: 20 });
    await h.monitor.start();
    expect(h.monitor.state).toBe("running");
    const tokenCalls = h.google.calls.token;
    h.google.revokeAll(); // the user removed autoscan's access in their Google account
    addMovie(h.google);
    await until(() => h.monitor.state === "failed", "the monitor to stop");

    expect(h.google.calls.token - tokenCalls).toBe(1); // one refresh was tried, and refused
    const calls = { token: h.google.calls.token, drive: h.google.apiCalls() };
    await new Promise((resolve) => setTimeout(resolve, 150)); // several poll intervals
    expect({ token: h.google.calls.token, drive: h.google.apiCalls() }).toEqual(calls);

    expect(errors(h)).toEqual([
      expect.stringMatching(
        /^Google Drive monitoring stopped: Google refused to refresh the access token: the refresh token has expired or was revoked \(invalid_grant: Token has been expired or revoked\.\)\. Run `autoscan authorize`/,
      ),
    ]);
    expect(renewalClaims(h)).toEqual([]); // no line claims a refresh that did not happen
    expect(warnings(h).filter((m) => m.startsWith("Polling Google Drive failed"))).toEqual([]);
    expect(h.scanned()).toEqual([]);
    await h.monitor.stop(); // no crash: it stops cleanly and stays "failed"
    expect(h.monitor.state).toBe("failed");
  });

  it("a refresh refused while the token is merely expired (no 401 first) is final with the same clear words", async () => {
    h = await createDriveHarness();
    h.google.revokeAll();
    await h.monitor.start();
    expect(h.monitor.state).toBe("failed");
    expect(h.google.calls.token).toBe(1);
    expect(errors(h)).toEqual([expect.stringMatching(/^Google Drive monitoring stopped: Google refused to refresh the access token: .*invalid_grant.*Run `autoscan authorize`/)]);
    expect(renewalClaims(h)).toEqual([]);
  });

  it("a token endpoint that is down is not final: the poll fails, the monitor waits and tries again", async () => {
    h = await createDriveHarness();
    await h.monitor.pollOnce();
    addMovie(h.google);
    h.google.revokeAccessTokens();
    h.google.failNext("token", { status: 503, reason: "backendError" }, 4); // gaxios retries a token POST 3 times
    await expect(h.monitor.pollOnce()).rejects.toThrow(/new access token/);
    expect(h.monitor.state).not.toBe("failed");
    expect(renewalClaims(h).filter((m) => m.startsWith("Google Drive refused"))).toEqual([]);
    await h.monitor.pollOnce();
    expect(h.scanned()).toEqual([MOVIE]);
  });
});

describe("Google Drive monitor: an access token revoked before its expiry (service account)", () => {
  async function serviceAccountHarness(options: HarnessOptions = {}): Promise<{ email: string; team: string }> {
    const { publicKey, privateKey } = generateKeyPairSync("rsa", { modulusLength: 2048 });
    const email = "autoscan@project.iam.gserviceaccount.com";
    let keyFile = "";
    h = await createDriveHarness({
      sharedDrives: ["Media Team"],
      filter: { filePaths: ["Media Team/"] },
      mappings: { "/data/team/": ["Media Team/"] },
      scope: SCOPE_READONLY,
      credentials: ({ dir }) => {
        keyFile = join(dir, "sa.json");
        return { kind: "service-account", key: { file: keyFile } };
      },
      ...options,
    });
    const key = { type: "service_account", private_key_id: "k1", private_key: privateKey.export({ type: "pkcs8", format: "pem" }), client_email: email };
    await writeFile(keyFile, JSON.stringify(key));
    h.google.addServiceAccount(email, publicKey.export({ type: "spki", format: "pem" }).toString());
    const team = h.google.drive.addSharedDrive("Media Team", [email]);
    return { email, team };
  }

  it("a 401 gets the account a new token (a new JWT grant), the call is retried and the change queued", async () => {
    const { team } = await serviceAccountHarness();
    await h.monitor.pollOnce();
    expect(h.google.calls.token).toBe(1);
    h.google.drive.addFile("x.mkv", h.google.drive.ensureFolders("Movies", team));
    h.google.revokeAccessTokens();
    await h.monitor.pollOnce();
    expect(h.scanned()).toEqual(["/data/team/Movies/x.mkv"]);
    expect(h.google.calls.token).toBe(2);
    expect(errors(h)).toEqual([]);
    expect(renewalClaims(h)).toHaveLength(1);
  });

  it("a deleted key is final, and the line says what to do about the key (not a user authorization)", async () => {
    const { email } = await serviceAccountHarness({ realTimeIntervalMs: 20 });
    await h.monitor.start();
    expect(h.monitor.state).toBe("running");
    const tokenCalls = h.google.calls.token;
    h.google.revokeServiceAccountKey(email);
    h.google.revokeAccessTokens();
    await until(() => h.monitor.state === "failed", "the monitor to stop");
    expect(h.google.calls.token - tokenCalls).toBe(1);
    expect(errors(h)).toEqual([
      expect.stringMatching(/^Google Drive monitoring stopped: Google refused a new access token for service account autoscan@project\.iam\.gserviceaccount\.com \(invalid_grant: Invalid JWT Signature\.\).*Create a new key.*replace the key file .*sa\.json with it/),
    ]);
    expect(renewalClaims(h)).toEqual([]);
  });
});

describe("the fake Google's early revocation (test support)", () => {
  it("Drive answers 401 to a dropped token whose expiry is hours away, and a refresh gets a working one", async () => {
    h = await createDriveHarness();
    await h.monitor.pollOnce();
    const stored = await h.tokenStore.load();
    h.google.revokeAccessTokens();
    const refused = await fetch(`${h.google.url}drive/v3/changes/startPageToken`, { headers: { authorization: `Bearer ${stored?.accessToken}` } });
    expect(refused.status).toBe(401);
    const refreshed = await fetch(h.google.tokenUrl, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({ grant_type: "refresh_token", refresh_token: stored?.refreshToken ?? "", client_id: CLIENT_ID, client_secret: CLIENT_SECRET }),
    });
    const token = (await refreshed.json()) as { access_token: string };
    const ok = await fetch(`${h.google.url}drive/v3/changes/startPageToken`, { headers: { authorization: `Bearer ${token.access_token}` } });
    expect(ok.status).toBe(200);
  });
});
