import { createCipheriv, randomBytes } from "node:crypto";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { rcloneSharedClientSecret, revealObscured } from "./obscure.ts";
import { checkRcloneRemote, loadRcloneRemote } from "./remote.ts";

const TOKEN = JSON.stringify({
  access_token: "ya29.a0AfB",
  token_type: "Bearer",
  refresh_token: "1//0gAbC",
  expiry: "2026-01-01T13:57:58.955387075+01:00",
  expires_in: 3599,
});

const CONF = `
# rclone.conf
[gdrive]
type = drive
client_id = 1234567890-abc.apps.googleusercontent.com
client_secret = GOCSPX-xxxx
scope = drive
token = ${TOKEN}
team_drive = 0ABCDEF-01234567890
root_folder_id =

[gcrypt]
type = crypt
remote = gdrive:encrypted
password = xyz
`;

describe("rclone.conf drive remotes", () => {
  it("reads a valid remote: client, scope, token (expiry with nanoseconds and an offset), team_drive", () => {
    const check = checkRcloneRemote(CONF, "gdrive:", "/c/rclone.conf");
    expect(check.problems).toEqual([]);
    expect(check.warnings).toEqual([]);
    expect(check.remote).toEqual({
      name: "gdrive",
      clientId: "1234567890-abc.apps.googleusercontent.com",
      clientSecret: "GOCSPX-xxxx",
      scope: "https://www.googleapis.com/auth/drive",
      token: { accessToken: "ya29.a0AfB", refreshToken: "1//0gAbC", tokenType: "Bearer", expiryDate: Date.parse("2026-01-01T12:57:58.955Z") },
      teamDrive: "0ABCDEF-01234567890",
      rootFolderId: undefined,
      serviceAccountFile: undefined,
      serviceAccountCredentials: undefined,
    });
  });

  it("a missing remote lists the remotes that exist and says how to fix it", () => {
    const check = checkRcloneRemote(CONF, "media", "/c/rclone.conf");
    expect(check.remote).toBeUndefined();
    expect(check.problems).toEqual([
      "No remote named 'media' in /c/rclone.conf. Remotes in that file: gdrive (drive), gcrypt (crypt). Set CLOUD.RCLONE_REMOTE to one of them, or rename a remote with `rclone config rename <old> media`.",
    ]);
  });

  it("a crypt remote points at the drive remote it wraps", () => {
    expect(checkRcloneRemote(CONF, "gcrypt", "/c/rclone.conf").problems[0]).toBe(
      "Remote 'gcrypt' has type = crypt, not drive. It wraps 'gdrive'; point CLOUD.RCLONE_REMOTE at that drive remote.",
    );
  });

  it("reports every problem of a broken entry, not just the first", () => {
    const bad = `[g]\ntype = drive\nclient_id = id\nscope = drive,photos\ntoken = {"access_token":"a","token_type":"mac","refresh_token":"","expiry":"2026-01-01 12:00:00"}\n`;
    const check = checkRcloneRemote(bad, "g", "/c");
    expect(check.remote).toBeUndefined();
    expect(check.problems).toEqual([
      "scope 'photos' is not one of drive, drive.readonly, drive.file, drive.appfolder, drive.metadata.readonly.",
      'token: token_type must be "Bearer" (run `rclone config reconnect g:`).',
      "token: refresh_token is empty (run `rclone config reconnect g:`).",
      "token: expiry must be an RFC 3339 time with an offset (run `rclone config reconnect g:`).",
      "Remote 'g' sets client_id but its client_secret is blank.",
    ]);
  });

  it("a token that is not JSON, or missing, is a problem", () => {
    expect(checkRcloneRemote("[g]\ntype = drive\ntoken = {oops\n", "g", "/c").problems[0]).toMatch(/not valid JSON/);
    expect(checkRcloneRemote("[g]\ntype = drive\n", "g", "/c").problems[0]).toMatch(/has no token .*reconnect g:/);
  });

  it("a blank client_id uses rclone's shared client, with a warning that it is slow and being retired", () => {
    const check = checkRcloneRemote(`[g]\ntype = drive\nscope = drive.readonly\ntoken = ${TOKEN}\n`, "g", "/c");
    expect(check.remote?.clientId).toBeUndefined();
    expect(check.warnings[0]).toMatch(/shared OAuth client: it is slow .* retired during 2026/);
    expect(rcloneSharedClientSecret()).toMatch(/^[\x21-\x7e]{20,}$/);
  });

  it("warns that drive.file only sees rclone's own files; accepts old Go token field names", () => {
    const old = JSON.stringify({ AccessToken: "a", TokenType: "Bearer", RefreshToken: "r", Expiry: "2026-01-01T12:00:00Z" });
    const check = checkRcloneRemote(`[g]\ntype = drive\nclient_id = x\nclient_secret = y\nscope = drive.file\ntoken = ${old}\n`, "g", "/c");
    expect(check.problems).toEqual([]);
    expect(check.warnings[0]).toMatch(/only sees files rclone itself created/);
    expect(check.remote?.token?.refreshToken).toBe("r");
  });

  it("refuses an encrypted config", () => {
    const check = checkRcloneRemote("# Encrypted rclone configuration File\n\nRCLONE_ENCRYPT_V0:\nabcdef", "g", "/c");
    expect(check.problems[0]).toMatch(/is encrypted/);
  });

  it("a service account remote needs no token; its key file must exist (relative to rclone.conf)", async () => {
    const dir = await mkdtemp(join(tmpdir(), "rclone-"));
    try {
      const conf = join(dir, "rclone.conf");
      await writeFile(conf, "[sa]\ntype = drive\nscope = drive\nservice_account_file = keys/sa.json\nteam_drive = 0AAAAAAAAAAAAAAAAA\n");
      const missing = await loadRcloneRemote(conf, "sa");
      expect(missing.problems).toEqual([`service_account_file ${join(dir, "keys/sa.json")} does not exist.`]);
      expect((await loadRcloneRemote(join(dir, "nope.conf"), "sa")).problems[0]).toMatch(/the file does not exist/);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it("reveals rclone-obscured values (AES-CTR with rclone's fixed key)", () => {
    const key = Buffer.from("9c935b48730a554d6bfd7c63c886a92bd390198eb8128afbf4de162b8b95f638", "hex");
    const iv = randomBytes(16);
    const cipher = createCipheriv("aes-256-ctr", key, iv);
    const obscured = Buffer.concat([iv, cipher.update("hunter2"), cipher.final()]).toString("base64url");
    expect(revealObscured(obscured)).toBe("hunter2");
  });
});
