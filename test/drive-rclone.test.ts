import { execFile } from "node:child_process";
import { mkdtemp, readFile, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterEach, describe, expect, it } from "vitest";
import { credentialsFromRclone } from "../src/drive/from-config.ts";
import { SCOPE_FULL } from "../src/drive/scope.ts";
import { RCLONE_SHARED_CLIENT_ID, rcloneSharedClientSecret } from "../src/rclone/obscure.ts";
import { loadRcloneRemote } from "../src/rclone/remote.ts";
import { createDriveHarness, type Harness } from "./support/drive-harness.ts";
import { startFakeGoogle } from "./support/fake-google.ts";

/** The monitor borrowing an rclone `drive` remote's client and token (rclone.conf is read, never written). */
const run = promisify(execFile);
const MAIN = join(import.meta.dirname, "..", "src", "cli", "main.ts");
let h: Harness;
afterEach(async () => {
  await h?.close();
});

function conf(remote: string, body: Record<string, string>): string {
  return `[${remote}]\n${Object.entries(body).map(([k, v]) => `${k} = ${v}`).join("\n")}\n`;
}

function token(refresh: string): string {
  return JSON.stringify({ access_token: "ya29.stale", token_type: "Bearer", refresh_token: refresh, expiry: "2020-01-01T00:00:00.000000000+01:00" });
}

describe("Google Drive monitor with an rclone remote", () => {
  it("uses the remote's own client and token, and watches its team_drive too", async () => {
    const google = await startFakeGoogle();
    const dir = await mkdtemp(join(tmpdir(), "autoscan-rclone-"));
    google.addClient("rc-client.apps.googleusercontent.com", "rc-secret");
    const team = google.drive.addSharedDrive("Team");
    const refresh = google.issueRefreshToken("rc-client.apps.googleusercontent.com", SCOPE_FULL);
    const confPath = join(dir, "rclone.conf");
    const text = conf("gdrive", { type: "drive", client_id: "rc-client.apps.googleusercontent.com", client_secret: "rc-secret", scope: "drive", token: token(refresh), team_drive: team });
    await writeFile(confPath, text);
    const credentials = credentialsFromRclone(await loadRcloneRemote(confPath, "gdrive"));
    h = await createDriveHarness({
      google,
      dir,
      filter: { filePaths: ["My Drive/Media/", "Team/"] },
      mappings: { "/data/Media/": ["My Drive/Media/"], "/data/team/": ["Team/"] },
      credentials: () => credentials,
    });
    await h.monitor.pollOnce();
    google.drive.addFile("a.mkv", google.drive.ensureFolders("Media/Movies"));
    google.drive.addFile("b.mkv", google.drive.ensureFolders("TV", team));
    await h.monitor.pollOnce();
    expect(h.scanned().sort()).toEqual(["/data/Media/Movies/a.mkv", "/data/team/TV/b.mkv"]);
    expect(await readFile(confPath, "utf8")).toBe(text); // never written
    expect(h.messages()).toContain("Loaded 1 shared drive(s): Team");
  });

  it("a blank client_id borrows rclone's shared client (its public secret)", async () => {
    const google = await startFakeGoogle();
    const dir = await mkdtemp(join(tmpdir(), "autoscan-rclone-"));
    google.addClient(RCLONE_SHARED_CLIENT_ID, rcloneSharedClientSecret());
    const refresh = google.issueRefreshToken(RCLONE_SHARED_CLIENT_ID, SCOPE_FULL);
    const confPath = join(dir, "rclone.conf");
    await writeFile(confPath, conf("gdrive", { type: "drive", scope: "drive", token: token(refresh) }));
    const check = await loadRcloneRemote(confPath, "gdrive");
    expect(check.warnings[0]).toMatch(/shared OAuth client/);
    const credentials = credentialsFromRclone(check);
    h = await createDriveHarness({ google, dir, credentials: () => credentials });
    await h.monitor.pollOnce();
    expect(h.monitor.state).not.toBe("failed");
    expect(google.calls.token).toBe(1);
  });

  it("a remote with problems is refused with all of them", async () => {
    const check = { configPath: "/c", problems: ["a.", "b."], warnings: [], remotes: [] };
    expect(() => credentialsFromRclone(check)).toThrow("rclone remote cannot be used: a. b.");
  });
});

describe("autoscan rclone check", () => {
  it("prints the validation and exits 0 for a usable remote, 1 with every problem otherwise", async () => {
    h = await createDriveHarness();
    const confPath = join(h.dir, "rclone.conf");
    await writeFile(
      confPath,
      conf("gdrive", { type: "drive", client_id: "id", client_secret: "s", scope: "drive.readonly", token: token("1//r") }) +
        conf("broken", { type: "drive", scope: "drive", token: "{}" }),
    );
    const ok = await run(process.execPath, [MAIN, "rclone", "check", "--config", confPath, "--remote", "gdrive"]);
    expect(ok.stdout).toContain(`rclone remote 'gdrive' in ${confPath}:`);
    expect(ok.stdout).toContain("scope:       drive.readonly");
    expect(ok.stdout).toContain("OK: the Google Drive monitor can use this remote.");

    const bad = await run(process.execPath, [MAIN, "rclone", "check", "--config", confPath, "--remote", "broken"]).catch((e: { code: number; stdout: string }) => e);
    expect(bad).toMatchObject({ code: 1 });
    expect(bad.stdout).toMatch(/Problems:\n {2}- token: access_token is missing \(run `rclone config reconnect broken:`\)\.\n {2}- token: token_type is missing/);
    expect(bad.stdout).toContain("NOT USABLE");
  });
});
