import { existsSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { makeTempDir } from "../../test/support/capture-log.ts";
import { openRotatingFile } from "./rotating-file.ts";

let dir: string;
let cleanup: () => Promise<void>;
beforeEach(async () => ({ dir, cleanup } = await makeTempDir("autoscan-rotate-")));
afterEach(() => cleanup());

/** Lines of exactly 10 bytes: "line-0001\n". */
const line = (n: number): string => `line-${String(n).padStart(4, "0")}\n`;

describe("openRotatingFile", () => {
  it("creates the folder and appends lines", async () => {
    const path = join(dir, "nested", "autoscan.log");
    const file = openRotatingFile({ path, maxBytes: 1000, maxFiles: 3 });
    file.write(line(1));
    file.write(line(2));
    await file.flushed();
    file.close();
    expect(readFileSync(path, "utf8")).toBe(line(1) + line(2));
  });

  it("rotates when the next line would pass maxBytes, keeping maxFiles old files: .1 newest … .N oldest", async () => {
    const path = join(dir, "autoscan.log");
    const file = openRotatingFile({ path, maxBytes: 30, maxFiles: 3 });
    for (let n = 1; n <= 14; n++) file.write(line(n));
    await file.flushed();
    file.close();
    // 3 lines per file: 1-3, 4-6, 7-9, 10-12, 13-14. The current file and three old ones remain.
    expect(readFileSync(path, "utf8")).toBe(line(13) + line(14));
    expect(readFileSync(`${path}.1`, "utf8")).toBe(line(10) + line(11) + line(12));
    expect(readFileSync(`${path}.2`, "utf8")).toBe(line(7) + line(8) + line(9));
    expect(readFileSync(`${path}.3`, "utf8")).toBe(line(4) + line(5) + line(6));
    expect(readdirSync(dir).sort()).toEqual(["autoscan.log", "autoscan.log.1", "autoscan.log.2", "autoscan.log.3"]);
  });

  it("never lets a file pass maxBytes, except a single line longer than maxBytes on its own", async () => {
    const path = join(dir, "autoscan.log");
    const file = openRotatingFile({ path, maxBytes: 25, maxFiles: 5 });
    file.write(line(1));
    file.write(`${"x".repeat(40)}\n`);
    file.write(line(2));
    await file.flushed();
    file.close();
    expect(readFileSync(`${path}.2`, "utf8")).toBe(line(1));
    expect(readFileSync(`${path}.1`, "utf8")).toBe(`${"x".repeat(40)}\n`);
    expect(readFileSync(path, "utf8")).toBe(line(2));
  });

  it("counts the size of a file that already exists (a restart does not reset the budget)", async () => {
    const path = join(dir, "autoscan.log");
    writeFileSync(path, line(1) + line(2));
    const file = openRotatingFile({ path, maxBytes: 30, maxFiles: 2 });
    file.write(line(3));
    file.write(line(4));
    await file.flushed();
    file.close();
    expect(readFileSync(`${path}.1`, "utf8")).toBe(line(1) + line(2) + line(3));
    expect(readFileSync(path, "utf8")).toBe(line(4));
  });

  it("counts bytes, not characters (non-Latin names in paths)", async () => {
    const path = join(dir, "autoscan.log");
    const file = openRotatingFile({ path, maxBytes: 20, maxFiles: 1 });
    file.write("日本語のパス\n"); // 19 bytes
    file.write("x\n");
    await file.flushed();
    file.close();
    expect(readFileSync(`${path}.1`, "utf8")).toBe("日本語のパス\n");
    expect(readFileSync(path, "utf8")).toBe("x\n");
  });

  it("with maxFiles 0 keeps no old file", async () => {
    const path = join(dir, "autoscan.log");
    const file = openRotatingFile({ path, maxBytes: 20, maxFiles: 0 });
    for (let n = 1; n <= 5; n++) file.write(line(n));
    await file.flushed();
    file.close();
    expect(readdirSync(dir)).toEqual(["autoscan.log"]);
    expect(readFileSync(path, "utf8")).toBe(line(5));
    expect(existsSync(`${path}.1`)).toBe(false);
  });
});
