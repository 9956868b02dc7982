import { chmod, mkdir, readFile, writeFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const HERE = dirname(fileURLToPath(import.meta.url));

/**
 * The fake `Plex Media Scanner` and `Plex SQLite` of the test image, installed on this host (native mode) under
 * `dir`, with the shebang pointing at this Node. State (calls.jsonl, control.json) lives in `<dir>/fake-scanner-state`.
 */
export async function installHostFakeScanner(dir: string): Promise<{ scanner: string; sqlite: string; state: string }> {
  await mkdir(join(dir, "fake-scanner-state"), { recursive: true });
  const install = async (source: string, name: string): Promise<string> => {
    const text = (await readFile(join(HERE, source), "utf8")).replace(/^#!.*\n/, `#!${process.execPath}\n`);
    const target = join(dir, name);
    await writeFile(target, text);
    await chmod(target, 0o755);
    return target;
  };
  return {
    scanner: await install("fake-scanner.js", "Plex Media Scanner"),
    sqlite: await install("fake-sqlite.js", "Plex SQLite"),
    state: join(dir, "fake-scanner-state"),
  };
}

/** The records the fake scanner appended, oldest first. */
export async function readHostCalls(state: string): Promise<{ argv: string[]; env: Record<string, string>; cwd: string }[]> {
  const text = await readFile(join(state, "calls.jsonl"), "utf8").catch(() => "");
  return text
    .split("\n")
    .filter((line) => line !== "")
    .map((line) => JSON.parse(line) as { argv: string[]; env: Record<string, string>; cwd: string });
}
