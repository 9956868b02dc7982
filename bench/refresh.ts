/**
 * Refresh in place: what an upgrade that keeps the file's name costs on Plex. The real service (a child process) with
 * a fake Plex whose scans read the disk and stay busy for a few status reads after they were asked (Plex scans in
 * the background); a Sonarr import, then its upgrade under the same name. Counted from Plex's side: the partial scans,
 * item refreshes and analyses the upgrade caused, whether any refresh came while a scan was still running, and the
 * time from the upgrade's webhook to the refresh stored in History.
 *
 *   node bench/refresh.ts
 */
import { CONSOLE_PASS, startConsoleService, type ConsoleService } from "../test/support/console-service.ts";

const show = "Bench Show";
const season = "Season 01";
const name = `${show} - S01E01.mkv`;
const path = `/tv/${show}/${season}/${name}`;
const body = (upgrade: boolean): unknown => ({
  eventType: "Download",
  series: { id: 1, title: show, path: `/tv/${show}` },
  episodeFile: { id: 2, relativePath: `${season}/${name}`, path },
  ...(upgrade ? { isUpgrade: true, deletedFiles: [{ id: 1, relativePath: `${season}/${name}`, path }] } : {}),
});

/** The Plex row of the newest History item with `event`, once its `field` is settled. */
async function settled(svc: ConsoleService, event: string, field: "landed" | "refresh"): Promise<void> {
  const deadline = Date.now() + 120_000;
  while (Date.now() < deadline) {
    const answer = await fetch(`${svc.url}/api/${CONSOLE_PASS}?cmd=history&q=${encodeURIComponent(show)}`);
    const { history } = (await answer.json()) as { history: { requests: { event: string }[]; targets: Record<string, string | undefined>[] }[] };
    const done = history.some((item) => item.requests.some((r) => r.event === event) && item.targets.some((t) => t[field] !== undefined && t[field] !== "pending"));
    if (done) return;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`no ${field} for the ${event} within 2 minutes`);
}

const svc = await startConsoleService({ SERVER_SCAN_DELAY: 0, SERVER_LANDED_RECHECK: 5 }, { plexReadsDisk: true });
try {
  await svc.addFile(`TV/${show}/${season}/${name}`);
  await svc.webhook("sonarr", body(false));
  await settled(svc, "Download", "landed");
  const before = { requests: svc.plex.requests.length, scans: svc.plex.scans.length, refreshed: svc.plex.refreshed.length, analyzed: svc.plex.analyzed.length };
  svc.plex.setScanBusyReads(2);
  const started = performance.now();
  await svc.webhook("sonarr", body(true));
  await settled(svc, "Upgrade", "refresh");
  const ms = performance.now() - started;
  const scans = svc.plex.scans.length - before.scans;
  const refreshes = svc.plex.refreshed.slice(before.refreshed);
  const analyses = svc.plex.analyzed.length - before.analyzed;
  const early = refreshes.filter((r) => r.duringScan).length;
  const sectionWide = svc.plex.requests.slice(before.requests).filter((r) => /^\/library\/sections\/[^/]+\/refresh$/.test(r.path) && !r.query.has("path")).length;
  console.log(`Plex calls per upgrade: ${String(scans)} scan + ${String(refreshes.length)} refresh + ${String(analyses)} analyze (the file was replaced: its streams are re-read)`);
  console.log(`refreshes sent while Plex was still scanning: ${String(early)}; section-wide refreshes: ${String(sectionWide)}`);
  console.log(`upgrade webhook → refresh stored in History: ${(ms / 1000).toFixed(1)} s (Plex's scan busy for 2 status reads; the look polls every 5 s)`);
} finally {
  await svc.stop();
}
