import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Readable } from "node:stream";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { CommandIO } from "../src/cli/command.ts";
import { main } from "../src/cli/main.ts";
import { startFakePlex, type FakePlex } from "./support/fake-plex.ts";

let dir: string;
let plex: FakePlex;

beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), "plex-sections-cli-"));
  plex = await startFakePlex({
    sections: [
      { key: "1", title: "Movies", type: "movie", locations: ["/data/Movies"] },
      { key: "2", title: "TV", type: "show", locations: ["/data/TV", "/data2/TV/"] },
    ],
  });
});
afterEach(async () => {
  await plex.close();
  rmSync(dir, { recursive: true, force: true });
});

async function run(args: string[], config: Record<string, unknown>) {
  const path = join(dir, "config.json");
  writeFileSync(path, JSON.stringify({ SERVER_PASS: "0123456789abcdef", ...config }, null, 2));
  let stdout = "";
  let stderr = "";
  const io: CommandIO = {
    stdout: { write: (text: string) => (stdout += text) },
    stderr: { write: (text: string) => (stderr += text) },
    stdin: Readable.from([]),
    env: {},
    installDir: dir,
    shutdownSignal: new AbortController().signal,
  };
  const code = await main(["sections", ...args, "--config", path], io);
  return { code, stdout, stderr };
}

describe("autoscan sections", () => {
  it("lists the sections and their folders", async () => {
    const result = await run([], { PLEX_LOCAL_URL: plex.url, PLEX_TOKEN: plex.token });
    expect(result.code).toBe(0);
    expect(result.stdout).toBe(
      "Plex Sections:\n==============\n  1: Movies\n      /data/Movies/\n  2: TV\n      /data/TV/\n      /data2/TV/\n",
    );
  });

  it("prints JSON for scripts", async () => {
    const result = await run(["--json"], { PLEX_LOCAL_URL: plex.url, PLEX_TOKEN: plex.token });
    expect(result.code).toBe(0);
    expect(JSON.parse(result.stdout)).toEqual([
      { id: "1", title: "Movies", type: "movie", locations: ["/data/Movies"] },
      { id: "2", title: "TV", type: "show", locations: ["/data/TV", "/data2/TV/"] },
    ]);
  });

  it("exits 1 with a clear message when the token is wrong, without printing it", async () => {
    const result = await run([], { PLEX_LOCAL_URL: plex.url, PLEX_TOKEN: "not-the-token-xyz" });
    expect(result.code).toBe(1);
    expect(result.stdout).toBe("");
    expect(result.stderr).toContain("Plex rejected the token");
    expect(result.stderr).not.toContain("not-the-token-xyz");
  });

  it("exits 1 with a clear message when Plex cannot be reached", async () => {
    const url = plex.url;
    await plex.close();
    const result = await run([], { PLEX_LOCAL_URL: url, PLEX_TOKEN: "some-token-123" });
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/Plex is unreachable at http:\/\/127\.0\.0\.1:\d+.*Is Plex running/);
    plex = await startFakePlex();
  });

  it("falls back to Plex Media Scanner --list when PLEX_TOKEN is not set, and says which scanner it tried", async () => {
    const result = await run([], { PLEX_LOCAL_URL: plex.url, USE_SUDO: false, PLEX_SCANNER: "/nonexistent/Plex Media Scanner" });
    expect(result.stderr).toContain("PLEX_TOKEN is empty: asking Plex Media Scanner on this host instead.");
    expect(result.code).toBe(1);
    expect(result.stderr).toContain("/nonexistent/Plex Media Scanner");
  });
});
