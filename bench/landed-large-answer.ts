/**
 * The landed check's Plex listing when the file's folder is huge: Plex answers `/library/sections/{id}/all?file=` with
 * the whole folder, here 6,000 episodes with ~2.4 kB of metadata each (a ~15 MB answer). Each way is measured in a
 * fresh process (the fake Plex runs in this one): the longest event-loop stall (perf_hooks' delay histogram), the peak
 * RSS, and the time the listing took.
 *
 *   node bench/landed-large-answer.ts
 *
 * - `paged`: what the Plex client does, 200 items a page (X-Plex-Container-Start/-Size);
 * - `whole`: the whole answer read and parsed at once (what it did before), for comparison.
 */
import { execFile } from "node:child_process";
import { monitorEventLoopDelay } from "node:perf_hooks";
import { promisify } from "node:util";
import * as v from "valibot";
import { httpCall } from "../src/http/http-call.ts";
import { createPlexClient } from "../src/targets/plex/client.ts";
import { LibraryItemsSchema, partFiles } from "../src/targets/plex/wire-schemas.ts";
import { startFakePlex } from "../test/support/fake-plex.ts";

const ITEMS = 6_000;
const METADATA_BYTES = 2_400;
const season = "/data/TV/Big/Season 01";
const wanted = `${season}/Big - S01E0000.mkv`;

if (process.argv[2] === "--measure") {
  await measure(process.argv[3] === "whole" ? "whole" : "paged", process.argv[4] ?? "", process.argv[5] ?? "");
} else {
  const plex = await startFakePlex({ sections: [{ key: "2", title: "TV", type: "show", locations: ["/data/TV"] }] });
  for (let n = 0; n < ITEMS; n++) plex.library.add(`${season}/Big - S01E${String(n).padStart(4, "0")}.mkv`);
  plex.setItemMetadataBytes(METADATA_BYTES);
  try {
    for (const way of ["paged", "whole"]) {
      // Not execFileSync: the fake Plex in this process must keep answering.
      const { stdout } = await promisify(execFile)(process.execPath, [import.meta.filename, "--measure", way, plex.url, plex.token], { encoding: "utf8" });
      process.stdout.write(stdout);
    }
  } finally {
    await plex.close();
  }
}

async function measure(way: "paged" | "whole", url: string, token: string): Promise<void> {
  const delay = monitorEventLoopDelay({ resolution: 5 });
  const rssBefore = process.memoryUsage().rss / 1024 / 1024;
  delay.enable();
  const started = performance.now();
  let files: string[];
  if (way === "paged") {
    files = await createPlexClient({ url, token }).filesInSection("2", 4, wanted);
  } else {
    const query = new URLSearchParams({ type: "4", file: wanted }).toString();
    const answer = await httpCall({
      method: "GET",
      url: `${url}/library/sections/2/all?${query}`,
      headers: { "X-Plex-Token": token, Accept: "application/json" },
      timeoutMs: 60_000,
      maxBytes: 64 * 1024 * 1024,
    });
    files = partFiles(v.parse(LibraryItemsSchema, JSON.parse(answer.body)));
  }
  const ms = performance.now() - started;
  // The histogram records a stall when its timer next fires: give it that turn.
  await new Promise((resolve) => setTimeout(resolve, 20));
  delay.disable();
  const peak = process.resourceUsage().maxRSS / 1024;
  console.log(
    `${way.padEnd(5)}: ${String(files.length)} files in ${ms.toFixed(0)} ms; longest stall ${(delay.max / 1e6).toFixed(0)} ms; ` +
      `RSS ${rssBefore.toFixed(0)} MB before, peak ${peak.toFixed(0)} MB`,
  );
}
