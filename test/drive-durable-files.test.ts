import { chmod, readdir, readFile, stat, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { upgradeConfigFile } from "../src/config/upgrade.ts";
import { openDriveStateStore } from "../src/drive/drive-store.ts";
import { createTokenStore } from "../src/drive/token-store.ts";
import { captureLog, makeTempDir } from "./support/capture-log.ts";

/**
 * The files the Drive monitor and `autoscan config upgrade` replace go through the one durable-write module
 * (core/durable-file.ts): the token file stays private whatever was there before, a crash's temp files never linger
 * as the real file, and an upgraded config keeps the permissions its owner gave it. Real files on disk.
 */
let dir: string;
let cleanup: () => Promise<void>;
beforeEach(async () => ({ dir, cleanup } = await makeTempDir("autoscan-durable-")));
afterEach(() => cleanup());

const mode = async (path: string): Promise<number> => (await stat(path)).mode & 0o777;
const tempFiles = async (): Promise<string[]> => (await readdir(dir)).filter((name) => name.endsWith(".tmp"));

describe.skipIf(process.platform === "win32")("durable files of the Drive monitor and the config upgrade", () => {
  it("a token file copied in with loose permissions is replaced by one with mode 0600, and no temp file is left", async () => {
    const store = createTokenStore({ path: join(dir, "google-token.json") });
    await writeFile(store.path, "{}", { mode: 0o644 });
    await chmod(store.path, 0o644);
    await store.save({ clientId: "c", refreshToken: "r", accessToken: "a", expiryDate: 5 });
    expect(await mode(store.path)).toBe(0o600);
    expect((await store.load())?.accessToken).toBe("a");
    expect(await tempFiles()).toEqual([]);
  });

  it("the drive cache is written with mode 0600, and temp files a crash left beside it are removed when it is opened", async () => {
    const path = join(dir, "cache.db");
    const { log } = captureLog();
    const first = await openDriveStateStore({ path, log });
    await first.commit({ pageTokens: { "my-drive": "42" } });
    first.close();
    expect(await mode(path)).toBe(0o600);

    const leftover = join(dir, ".cache.db.0badc0de.tmp"); // the name writeFileDurably gives its temp files
    const unrelated = join(dir, ".cache.db.notes.tmp");
    await writeFile(leftover, "half a database");
    await writeFile(unrelated, "someone else's");
    const second = await openDriveStateStore({ path, log });
    expect(second.pageToken("my-drive")).toBe("42");
    second.close();
    expect(await tempFiles()).toEqual([".cache.db.notes.tmp"]);
  });

  it("an upgraded config keeps its owner's mode (0640 stays 0640), with a backup beside it", async () => {
    const path = join(dir, "config.json");
    await writeFile(path, '{\n  "SERVER_PORT": 3468\n}\n');
    await chmod(path, 0o640);
    const result = await upgradeConfigFile(path);
    expect(result.added.length).toBeGreaterThan(0);
    expect(await mode(path)).toBe(0o640);
    expect(JSON.parse(await readFile(path, "utf8"))).toMatchObject({ SERVER_PORT: 3468 });
    expect(await tempFiles()).toEqual([]);
  });
});
