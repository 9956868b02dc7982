// @module-tag process
import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import pino from "pino";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { makeTempDir } from "../../test/support/capture-log.ts";
import { createDiskProbe, type DiskEntry } from "./disk-probe.ts";
import { carrySpelling, findSpelling, spellingsOf } from "./spelling.ts";

const NFC = "Pok\u00e9mon";
const NFD = "Poke\u0301mon";

describe("spellingsOf", () => {
  it("is the text alone for ASCII, else as received, NFC, NFD, each once", () => {
    expect(spellingsOf("Heat (1995)")).toEqual(["Heat (1995)"]);
    expect(spellingsOf(NFD)).toEqual([NFD, NFC]);
    expect(spellingsOf(NFC)).toEqual([NFC, NFD]);
    // Mixed: one name composed, the other decomposed → received, all NFC, all NFD.
    expect(spellingsOf(`${NFC}/${NFD}`)).toEqual([`${NFC}/${NFD}`, `${NFC}/${NFC}`, `${NFD}/${NFD}`]);
  });
});

describe("findSpelling on a real disk", () => {
  let temp: { dir: string; cleanup(): Promise<void> };
  const looked: string[] = [];
  const probe = createDiskProbe({ log: pino({ level: "silent" }) });
  const statPath = async (path: string): Promise<DiskEntry> => {
    looked.push(path.slice(temp.dir.length));
    return probe.stat(path);
  };
  beforeEach(async () => {
    temp = await makeTempDir("autoscan-spelling-");
    looked.length = 0;
  });
  afterEach(async () => temp.cleanup());

  it("takes the path as received when it is there, with one stat", async () => {
    await mkdir(join(temp.dir, NFD));
    expect(await findSpelling(join(temp.dir, NFD), statPath)).toEqual({ path: join(temp.dir, NFD), entry: "directory" });
    expect(looked).toEqual([`/${NFD}`]);
  });

  it("finds the other spelling of the whole path", async () => {
    await mkdir(join(temp.dir, NFD, "Season 01"), { recursive: true });
    await writeFile(join(temp.dir, NFD, "Season 01", `${NFD} 01.mkv`), "x");
    const found = await findSpelling(join(temp.dir, NFC, "Season 01", `${NFC} 01.mkv`), statPath);
    expect(found).toEqual({ path: join(temp.dir, NFD, "Season 01", `${NFD} 01.mkv`), entry: "file" });
    expect(Buffer.from(found.path.slice(temp.dir.length))).toEqual(Buffer.from(`/${NFD}/Season 01/${NFD} 01.mkv`));
  });

  it("finds mixed spellings name by name", async () => {
    await mkdir(join(temp.dir, NFC), { recursive: true });
    await writeFile(join(temp.dir, NFC, `${NFD} 01.mkv`), "x");
    const found = await findSpelling(join(temp.dir, NFD, `${NFC} 01.mkv`), statPath);
    expect(found).toEqual({ path: join(temp.dir, NFC, `${NFD} 01.mkv`), entry: "file" });
  });

  it("answers missing with the path as asked when no spelling is there; ASCII paths cost one stat", async () => {
    expect(await findSpelling(join(temp.dir, NFC, `${NFC} 01.mkv`), statPath)).toEqual({
      path: join(temp.dir, NFC, `${NFC} 01.mkv`),
      entry: "missing",
    });
    looked.length = 0;
    expect((await findSpelling(join(temp.dir, "Heat (1995)"), statPath)).entry).toBe("missing");
    expect(looked).toHaveLength(1);
  });

  it("stops at a stat the disk did not answer: another spelling would wait just the same", async () => {
    const calls: string[] = [];
    const hung = async (path: string): Promise<DiskEntry> => (calls.push(path), "unanswered");
    expect(await findSpelling(`/mnt/${NFC}/${NFC}.mkv`, hung)).toEqual({ path: `/mnt/${NFC}/${NFC}.mkv`, entry: "unanswered" });
    expect(calls).toHaveLength(1);
  });
});

describe("carrySpelling", () => {
  it("respells the server path's names that the local form shares, from the end", () => {
    expect(carrySpelling(`/data/TV/${NFC}/e.mkv`, `/mnt/tv/${NFC}/e.mkv`, `/mnt/tv/${NFD}/e.mkv`)).toBe(`/data/TV/${NFD}/e.mkv`);
  });
  it("leaves the server prefix alone when the local mount's own name was respelled", () => {
    expect(carrySpelling(`/data/${NFC}/e.mkv`, `/mnt/${NFC}-x/${NFC}/e.mkv`, `/mnt/${NFD}-x/${NFD}/e.mkv`)).toBe(`/data/${NFD}/e.mkv`);
    expect(carrySpelling("/data/x", "/mnt/x", "/mnt/x")).toBe("/data/x");
  });
});
