import { existsSync } from "node:fs";
import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, expect, it } from "vitest";
import { createTestDatabase, describeWithPostgres, dropTestDatabase } from "./support/postgres.ts";
import { INSTANCES_PASS, startServiceInstances, type ServiceInstances } from "./support/service-instances.ts";

/**
 * Two real autoscan processes on one PostgreSQL queue, one of them with a clock 40 s ahead (libfaketime, from Debian's
 * `faketime` package). Leases and due times are the database's, so the fast instance does not take over folders the
 * other one is scanning: every folder reaches Plex once. (With each instance's own clock, 116 of 200 folders were
 * scanned twice.) Scans are held 400 ms on their way to Plex, so every instance has scans in flight.
 */
const FAKETIME_LIB = "/usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1";
const FOLDERS = 60;

let url: string | undefined;
let set: ServiceInstances | undefined;
afterAll(async () => {
  await set?.close();
  if (url) await dropTestDatabase(url);
}, 60_000);

const season = (n: number): string => `Show ${String(n).padStart(3, "0")}/Season 01`;

async function until(what: string, probe: () => Promise<boolean> | boolean, ms: number): Promise<void> {
  const end = Date.now() + ms;
  while (!(await probe())) {
    if (Date.now() > end) throw new Error(`${what}: not within ${String(ms / 1000)} s`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

describeWithPostgres("two instances whose clocks disagree by 40 s", () => {
  it("scan every folder once: leases and due times come from the database's clock", async () => {
    if (!existsSync(FAKETIME_LIB)) {
      if (process.env.CI === "true") throw new Error(`libfaketime is required here (${FAKETIME_LIB}: apt-get install faketime)`);
      console.warn(`\n*** SKIPPED the clock-skew case: ${FAKETIME_LIB} is missing (apt-get install faketime) ***\n`);
      return;
    }
    url = await createTestDatabase();
    set = await startServiceInstances({
      databaseUrl: url,
      names: ["A", "B"],
      config: { SERVER_SCAN_DELAY: 1, SERVER_SCAN_CONCURRENCY: 2 },
      scanMs: () => 400,
      envOf: (name): Record<string, string> => (name === "B" ? { LD_PRELOAD: FAKETIME_LIB, FAKETIME: "+40s", FAKETIME_DONT_RESET: "1" } : {}),
    });
    const [a, b] = set.instances;
    if (!a || !b) throw new Error("two instances");
    for (let n = 0; n < FOLDERS; n++) {
      const dir = join(set.media, "TV", season(n));
      await mkdir(dir, { recursive: true });
      await writeFile(join(dir, "e1.mkv"), "x");
    }
    await Promise.all([a.start(), b.start()]);
    // B's own clock really is 40 s ahead: its log lines say so.
    const stamp = b.logs().at(-1)?.time;
    const skew = new Date(typeof stamp === "number" || typeof stamp === "string" ? stamp : Number.NaN).getTime() - Date.now();
    expect(skew, `libfaketime did not move B's clock: ${JSON.stringify(b.logs().at(-1))}`).toBeGreaterThan(30_000);

    for (let n = 0; n < FOLDERS; n++) {
      const to = n % 2 === 0 ? a : b;
      const body = JSON.stringify({
        eventType: "Download",
        series: { id: n, title: `Show ${String(n)}`, path: `/tv/Show ${String(n).padStart(3, "0")}` },
        episodes: [{ id: n, episodeNumber: 1, seasonNumber: 1 }],
        episodeFile: { id: n, relativePath: "Season 01/e1.mkv", path: `/tv/${season(n)}/e1.mkv` },
      });
      const response = await fetch(`${to.url}/${INSTANCES_PASS}`, { method: "POST", headers: { "content-type": "application/json" }, body });
      expect(response.status).toBe(200);
    }
    const scanned = (): Map<string, number> => {
      const counts = new Map<string, number>();
      for (const scan of set?.scans() ?? []) counts.set(scan.path, (counts.get(scan.path) ?? 0) + 1);
      return counts;
    };
    await until("every folder scanned", () => scanned().size >= FOLDERS, 60_000);
    // Time for a takeover to show: a lease (15 s) as B's clock reads it has long run out for every claim of A's.
    await new Promise((resolve) => setTimeout(resolve, 3_000));
    const twice = [...scanned()].filter(([, count]) => count > 1).map(([path]) => path);
    expect(twice, `folders scanned more than once: ${twice.join(", ")}`).toEqual([]);
    expect(scanned().size).toBe(FOLDERS);
    const takeovers = [...a.logs(), ...b.logs()].filter((line) => String(line.msg).startsWith("Took over"));
    expect(takeovers.map((line) => line.msg)).toEqual([]);
  }, 120_000);
});
