// @module-tag process
import { chmod, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir, userInfo } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { installHostFakeScanner } from "../../../test/support/docker/host-fake-scanner.ts";
import { ExecTimeoutError } from "../../docker/errors.ts";
import { createHostRunner } from "./host-runner.ts";

const HOSTILE = [
  `/data/Movies/It's a "Test" $HOME \`id\` $(id) (2020) [1080p] {x} & ; | < > * ? ~ ! # % ^ = \\ end`,
  "/data/Séries/東京 🎬/cafe\u0301",
  "/data/line\nbreak\tand tab/trailing space ",
  "",
];

function recordOf(stdout: string): { argv: string[]; env: Record<string, string>; cwd: string; uid: number } {
  const line = stdout.split("\n").find((entry) => entry.startsWith("FAKE-SCANNER-RECORD "));
  if (!line) throw new Error(`no record in: ${stdout}`);
  return JSON.parse(line.slice("FAKE-SCANNER-RECORD ".length)) as ReturnType<typeof recordOf>;
}

describe("host runner (this host, no shell)", () => {
  let dir: string;
  let scanner: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), "autoscan-native-"));
    ({ scanner } = await installHostFakeScanner(join(dir, "plex media server (bin)")));
  });
  afterAll(async () => rm(dir, { recursive: true, force: true }));

  it("passes argv byte for byte and the environment through env(1), in the working directory", async () => {
    const runner = createHostRunner({ useSudo: false });
    const env = { LD_LIBRARY_PATH: "/usr/lib/plexmediaserver/lib", ODD: "a=b c\nd `x` $HOME" };
    const args = ["--scan", "--directory", ...HOSTILE];
    const result = await runner.run([scanner, ...args], { env, workdir: dir });
    expect(result.exitCode).toBe(0);
    const record = recordOf(result.stdout);
    expect(record.argv).toEqual(args);
    expect(record.env).toMatchObject(env);
    expect(record.cwd).toBe(dir);
  });

  it("returns exit codes and stderr as values; live lines per stream", async () => {
    const lines: string[] = [];
    const runner = createHostRunner({ useSudo: false });
    const result = await runner.run([scanner, "--list"], {
      env: { FAKE_SCANNER_EXIT: "5", FAKE_SCANNER_STDERR: "bad things" },
      onLine: (line) => lines.push(`${line.stream}:${line.text}`),
    });
    expect(result.exitCode).toBe(5);
    expect(result.stderr).toBe("bad things\n");
    expect(lines).toContain("stderr:bad things");
    expect(lines).toContain("stdout:  1: Movies");
  });

  it("reports a missing binary as 127 and a non-executable one as 126, like a shell", async () => {
    const runner = createHostRunner({ useSudo: false });
    const missing = await runner.run([join(dir, "nope", "Plex Media Scanner")]);
    expect(missing.exitCode).toBe(127);
    expect(missing.stderr).toContain("ENOENT");
    const plain = join(dir, "not-executable");
    await writeFile(plain, "#!/bin/sh\n");
    await chmod(plain, 0o644);
    expect((await runner.run([plain])).exitCode).toBe(126);
  });

  it("stops the process on timeout (here it can be killed)", async () => {
    const runner = createHostRunner({ useSudo: false, killGraceMs: 200 });
    const error = await runner
      .run([scanner, "--list"], { env: { FAKE_SCANNER_SLEEP_MS: "20000" }, timeoutMs: 300 })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ExecTimeoutError);
    expect((error as Error).message).toMatch(/^Timed out after 300 ms: stopped /);
  });

  it("lists running processes from /proc", async () => {
    const runner = createHostRunner({ useSudo: false });
    const processes = await runner.listProcesses();
    expect(processes.find((process) => process.pid === globalThis.process.pid)?.command).toContain("node");
  });

  it("plans sudo -n -u <user> -- /usr/bin/env … only when USE_SUDO and another user", () => {
    const env = { LD_LIBRARY_PATH: "/usr/lib/plexmediaserver/lib", PLEX_MEDIA_SERVER_APPLICATION_SUPPORT_DIR: "/a b" };
    const sudo = createHostRunner({ useSudo: true, currentUser: "autoscan" });
    expect(sudo.plan(["/usr/lib/plexmediaserver/Plex Media Scanner", "--list"], { user: "plex", env }).argv).toEqual([
      "sudo",
      "-n",
      "-u",
      "plex",
      "--",
      "/usr/bin/env",
      "LD_LIBRARY_PATH=/usr/lib/plexmediaserver/lib",
      "PLEX_MEDIA_SERVER_APPLICATION_SUPPORT_DIR=/a b",
      "/usr/lib/plexmediaserver/Plex Media Scanner",
      "--list",
    ]);
    const self = createHostRunner({ useSudo: true, currentUser: userInfo().username });
    expect(self.plan(["/x"], { user: userInfo().username }).argv).toEqual(["/x"]);
    const noSudo = createHostRunner({ useSudo: false });
    expect(noSudo.plan(["/x", "y"], { user: "plex", env: {} }).argv).toEqual(["/x", "y"]);
    expect(() => noSudo.plan(["/odd=path"], { env: { A: "1" } })).toThrow(/its path contains "="/);
  });
});
