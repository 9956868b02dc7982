// @module-tag process
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { readFile, readdir } from "node:fs/promises";
import { join } from "node:path";
import { captureLog, makeTempDir } from "../../../test/support/capture-log.ts";
import { hookEnvironment, runCommandHook } from "./run-command.ts";

let temp: Awaited<ReturnType<typeof makeTempDir>>;
beforeEach(async () => {
  temp = await makeTempDir();
});
afterEach(() => temp.cleanup());

const context = (folder: string) => ({ folder, files: [`${folder}/a.mkv`, `${folder}/b.mkv`], sources: ["Sonarr", "Sonarr", "Radarr"] });

describe("runCommandHook", () => {
  it("passes the folder, files, sources and stage in the environment", async () => {
    const logs = captureLog();
    const out = join(temp.dir, "env.txt");
    const command = `printf '%s|%s|%s|%s' "$AUTOSCAN_FOLDER" "$AUTOSCAN_FILES" "$AUTOSCAN_SOURCES" "$AUTOSCAN_STAGE" > '${out}'`;
    await runCommandHook(command, "before", context("/tv/Show"), { timeoutMs: 5_000, log: logs.log });
    expect(await readFile(out, "utf8")).toBe("/tv/Show|/tv/Show/a.mkv\n/tv/Show/b.mkv|Sonarr, Radarr|before");
    expect(logs.messages()).toContain(`Running external command: '${command}'`);
    expect(logs.messages()).toContain("Finished running external command.");
  });

  it("never runs shell text hidden in a folder name", async () => {
    const logs = captureLog();
    const folder = `/tv/$(touch ${join(temp.dir, "pwned")})\`touch ${join(temp.dir, "pwned2")}\``;
    await runCommandHook('echo "$AUTOSCAN_FOLDER"', "after", context(folder), { timeoutMs: 5_000, log: logs.log });
    expect(await readdir(temp.dir)).toEqual([]);
    expect(logs.messages()).toContain(folder);
  });

  it("logs a failing command and returns normally", async () => {
    const logs = captureLog();
    await runCommandHook("exit 3", "before", context("/tv/Show"), { timeoutMs: 5_000, log: logs.log });
    const line = logs.records.find((r) => r.level === 50);
    expect(line?.msg).toBe("External command 'exit 3' exited with code 3; the scan goes on.");
  });

  it("stops a command that outlives its timeout, children included", async () => {
    const logs = captureLog();
    await runCommandHook("sleep 30 & sleep 30; wait", "before", context("/tv/Show"), { timeoutMs: 200, log: logs.log });
    expect(logs.records.find((r) => r.level === 50)?.msg).toContain("did not finish within 0 seconds and was stopped");
  });

  it("reports a shell that cannot be started", async () => {
    const logs = captureLog();
    await runCommandHook("true", "before", context("/x"), { timeoutMs: 1_000, log: logs.log, shell: "/nonexistent/sh" });
    expect(logs.records.find((r) => r.level === 50)?.msg).toContain("could not be started");
  });

  it("de-duplicates sources in the environment", () => {
    expect(hookEnvironment("after", context("/m")).AUTOSCAN_SOURCES).toBe("Sonarr, Radarr");
  });
});
