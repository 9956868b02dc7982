import pino from "pino";
import { afterEach, describe, expect, it } from "vitest";
import { startFakeRcloneRc, type FakeRcloneRc } from "../../test/support/fake-rclone-rc.ts";
import { createRcRefresher, parseRcUrl } from "./rc.ts";

const mappings = { "Media/": ["/mnt/rclone/Media/"] };
let rc: FakeRcloneRc | undefined;
afterEach(async () => {
  await rc?.close();
  rc = undefined;
});

function capture(): { log: pino.Logger; messages: string[] } {
  const messages: string[] = [];
  const log = pino({ level: "debug" }, { write: (line: string) => void messages.push(JSON.parse(line).msg as string) });
  return { log, messages };
}

describe("rclone vfs/refresh before the file check", () => {
  it("refreshes the file's folder when rclone knows it", async () => {
    rc = await startFakeRcloneRc();
    rc.known.get("")?.add("Media/Movies/X (2020)");
    const { log, messages } = capture();
    await createRcRefresher({ rcUrl: rc.url, remoteMappings: mappings, log })("/mnt/rclone/Media/Movies/X (2020)/X.mkv");
    expect(rc.calls).toEqual([{ path: "vfs/refresh", body: { dir: "Media/Movies/X (2020)" }, authorization: undefined }]);
    expect(messages).toContain("Refreshed rclone's directory cache for 'Media/Movies/X (2020)'");
  });

  it("asks for the folder in the bytes the path has on disk (an NFD name stays NFD)", async () => {
    rc = await startFakeRcloneRc();
    const nfd = "Poke\u0301mon (2019)";
    rc.known.get("")?.add(`Media/Movies/${nfd}`);
    const { log } = capture();
    await createRcRefresher({ rcUrl: rc.url, remoteMappings: mappings, log })(`/mnt/rclone/Media/Movies/${nfd}/x.mkv`);
    expect(rc.calls.map((call) => call.body.dir)).toEqual([`Media/Movies/${nfd}`]);
  });

  it("walks up a level at a time while rclone does not know the folder", async () => {
    rc = await startFakeRcloneRc();
    rc.known.get("")?.add("Media");
    await createRcRefresher({ rcUrl: rc.url, remoteMappings: mappings, log: capture().log })("/mnt/rclone/Media/TV/Show/Season 1/e1.mkv");
    expect(rc.calls.map((c) => c.body.dir)).toEqual(["Media/TV/Show/Season 1", "Media/TV/Show", "Media/TV", "Media"]);
  });

  it("sends the credentials of the RC URL as Basic auth and picks the mount among several", async () => {
    rc = await startFakeRcloneRc({ vfses: ["gcrypt:", "gdrive:"], user: "me", pass: "p@ss" });
    rc.known.get("gdrive:")?.add("Media/Movies");
    const url = rc.url.replace("http://", "http://me:p%40ss@");
    await createRcRefresher({ rcUrl: url, remoteMappings: mappings, log: capture().log })("/mnt/rclone/Media/Movies/a.mkv");
    expect(rc.calls.map((c) => [c.path, c.body.fs ?? "", c.body.dir ?? ""])).toEqual([
      ["vfs/refresh", "", "Media/Movies"],
      ["vfs/list", "", ""],
      ["vfs/refresh", "gcrypt:", "Media/Movies"],
      ["vfs/refresh", "gdrive:", "Media/Movies"],
    ]);
    expect(rc.calls.every((c) => c.authorization === `Basic ${Buffer.from("me:p@ss").toString("base64")}`)).toBe(true);
  });

  it("does nothing for a path outside FILE_EXISTS_TO_REMOTE_MAPPINGS", async () => {
    rc = await startFakeRcloneRc();
    await createRcRefresher({ rcUrl: rc.url, remoteMappings: mappings, log: capture().log })("/data/other/x.mkv");
    expect(rc.calls).toEqual([]);
  });

  it("never throws when rclone is down; it logs a warning", async () => {
    const { log, messages } = capture();
    const refresh = createRcRefresher({ rcUrl: "http://127.0.0.1:9", remoteMappings: mappings, log, timeoutMs: 2000 });
    await expect(refresh("/mnt/rclone/Media/a.mkv")).resolves.toBeUndefined();
    expect(messages).toContain("rclone remote control refresh failed; checking the file anyway");
  });

  it("splits credentials out of the RC URL", () => {
    expect(parseRcUrl("http://localhost:5572")).toEqual({ endpoint: "http://localhost:5572/" });
    expect(parseRcUrl("http://u:p@localhost:5572/")).toEqual({ endpoint: "http://localhost:5572/", authorization: "Basic dTpw" });
  });
});
