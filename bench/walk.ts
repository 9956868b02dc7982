/**
 * The walk (issue "The queue, written once"): which of autoscan's source files one Sonarr webhook runs through, from
 * its route to the Plex call. A real `autoscan server` (the .ts sources) with V8's precise coverage switched on by a
 * preload (bench/support/coverage-preload.mjs), a fake Plex and the episode on disk. One webhook first warms
 * everything up (the section list is read, the timers have run); the coverage is then reset, a second webhook for
 * another show is sent and followed until Plex is asked to scan its season; what ran in between is listed, by
 * folder, with how many of each file's functions ran. Every file that ran counts; the list marks those shared by every
 * request (logging, metrics, the clock, the app's middleware) and those that also ran in a 2-s window without any
 * request before it (timers), so the request's own path can be read apart.
 *
 * Then the order: a third webhook with a non-pausing breakpoint on each function that ran for the second (its
 * condition records the call stack), from the route to the target call. Each hit adds the file that called the
 * function, then the function's own file; a return is entering a file the walk has already left. Counted three ways:
 * every call (a path normalised in `paths/normalize.ts` and back is a return); each function read once, at its first
 * call; and, the headline, each call from one file into another followed once, as a reader who has seen where a file
 * calls another does not follow that call again. Helpers that call none of our files are read in place. A fourth
 * count leaves out going back to a caller: only calls that enter a file already entered, and how many of them go
 * through a function the caller was given (a capability passed in) rather than one it imports. That count is then
 * given per stage, as the issue "A house one can walk" sets its targets: intake → stored (until the webhook is
 * answered, which it is once the request is stored), stored → due work (until the dispatcher holds a due folder), due
 * work → the target's HTTP call; each stage with the files it enters that no earlier stage entered, and its
 * re-entries (see `stagesOf`). What runs for the request but on none of those paths is given on a line of its own,
 * "after the answer, off the request's path", and counted in "in all": the unroutable judge (`intake/submit.ts` asks
 * whether a library holds the stored request on the next turn of the event loop, after the answer: Plex's section
 * list, its cache, the containment rule), and the store's other change listeners (the landed checker's wake, which the
 * store calls as it tells the dispatcher of the change, just before the answer; the checker's own work runs apart).
 * Both run meanwhile (so do the landed checker's looks for an earlier scan, also counted there): the count reads the
 * request's path first, then the rest, so a file both enter is the path's. WALK_ORDER=1 prints the reader's order and those calls,
 * and names each stage's files.
 *
 *   node bench/walk.ts
 */
import { spawn } from "node:child_process";
import { mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { startFakePlex } from "../test/support/fake-plex.ts";
import { freePort } from "../test/support/free-port.ts";
import { childEnv, CLI_MAIN } from "../test/support/run-cli.ts";

const PASS = "wa1kwa1kwa1kwa1kwa1kwa1kwa1kwa1k";
const root = fileURLToPath(new URL("..", import.meta.url));
const preload = join(root, "bench/support/coverage-preload.mjs");
const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));
/** Files every request runs through whatever its route: the logger, metrics, the clock, the app's middleware. */
const SHARED = ["logging/", "core/log-context.ts", "core/metrics.ts", "core/clock.ts", "web/app.ts", "web/cross-site.ts", "web/request-count.ts", "web/client-address.ts"];

/** The issue's three stages of the walk, with the most files each may enter that no earlier stage entered. */
const STAGES = [
  { name: "intake → stored", files: 8 },
  { name: "stored → due work", files: 1 },
  { name: "due work → target's HTTP call", files: 6 },
] as const;
/** The stage (after the three above) of what runs for the request off its path: the judge, the store's listeners. */
const OFF_PATH = STAGES.length;

const home = await mkdtemp(join(tmpdir(), "autoscan-walk-"));
const media = join(home, "media");
const shows = ["First Show", "Second Show", "Third Show"];
for (const show of shows) {
  await mkdir(join(media, "TV", show, "Season 01"), { recursive: true });
  await writeFile(join(media, "TV", show, "Season 01", `${show} - S01E01.mkv`), "x");
}
const plex = await startFakePlex({ sections: [{ key: "2", title: "TV", type: "show", locations: [join(media, "TV")] }] });
const port = await freePort();
await writeFile(
  join(home, "config.json"),
  JSON.stringify({
    SERVER_PASS: PASS,
    SERVER_IP: "127.0.0.1",
    SERVER_PORT: port,
    PLEX_LOCAL_URL: plex.url,
    PLEX_TOKEN: plex.token,
    PLEX_ANALYZE_TYPE: "off",
    SERVER_SCAN_DELAY: 0,
  }),
);
const out = join(home, "walk.txt");
const child = spawn(process.execPath, ["--import", preload, CLI_MAIN, "server", "--config", join(home, "config.json"), "--data-dir", join(home, "data"), "--logfile", "none"], {
  env: childEnv({ AUTOSCAN_WALK_OUT: out }),
  stdio: ["ignore", "ignore", "pipe"],
});

/** The files of the `n`th window the preload wrote: path → the functions that ran (their start offsets). */
async function coverage(n: number): Promise<Map<string, Set<string>>> {
  for (let waited = 0; ; waited += 20) {
    const text = await readFile(`${out}.${String(n)}`, "utf8").catch(() => "");
    if (text) return new Map(text.trim().split("\n").map((line) => line.split("\t")).map(([path = "", ...fns]) => [path, new Set(fns)]));
    if (waited > 10_000) throw new Error(`no coverage written for window ${String(n)}`);
    await sleep(20);
  }
}
let stderr = "";
child.stderr.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk));

async function webhook(show: string): Promise<void> {
  const before = plex.scans.length;
  const body = {
    eventType: "Download",
    series: { id: 1, title: show, path: join(media, "TV", show) },
    episodes: [{ id: 1, episodeNumber: 1, seasonNumber: 1, title: "One" }],
    episodeFile: { id: 1, relativePath: `Season 01/${show} - S01E01.mkv` },
    isUpgrade: false,
  };
  const answer = await fetch(`http://127.0.0.1:${String(port)}/${PASS}`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body),
  }).catch((error: unknown) => {
    throw new Error(`the webhook got no answer (${String(error)}); the server said:\n${stderr}`);
  });
  if (!answer.ok) throw new Error(`webhook answered ${String(answer.status)}`);
  for (let waited = 0; plex.scans.length === before; waited += 10) {
    if (waited > 20_000) throw new Error(`no scan after 20 s:\n${stderr}`);
    await sleep(10);
  }
}

try {
  for (let waited = 0; ; waited += 20) {
    const status = await fetch(`http://127.0.0.1:${String(port)}/health`).then((r) => r.status, () => 0);
    if (status === 200) break;
    if (waited > 30_000) throw new Error(`not ready:\n${stderr}`);
    await sleep(20);
  }
  await webhook(shows[0] as string);
  await sleep(1_500);
  // A window with no request: what runs anyway (timers). Then the webhook, followed to the Plex call.
  child.kill("SIGUSR2");
  await sleep(2_000);
  child.kill("SIGUSR2");
  await sleep(200);
  child.kill("SIGUSR2");
  await sleep(200);
  const started = performance.now();
  await webhook(shows[1] as string);
  const tookMs = performance.now() - started;
  child.kill("SIGUSR2");
  const idle = await coverage(1);
  const ran = await coverage(2);
  const src = join(root, "src");
  const ours = [...ran].filter(([path]) => path.startsWith(src)).map(([path, fns]) => [relative(src, path), fns] as const);
  const others = ran.size - ours.length;
  ours.sort(([x], [y]) => x.localeCompare(y));
  // A file runs anyway when every function of it that ran for the webhook also ran in the window without a request.
  const kindOf = (path: string, fns: ReadonlySet<string>): string => {
    const before = idle.get(join(src, path));
    if (before && [...fns].every((fn) => before.has(fn))) return "runs anyway";
    return SHARED.some((prefix) => path.startsWith(prefix)) ? "shared" : "path";
  };
  const counts = new Map<string, number>();
  for (const [path, fns] of ours) counts.set(kindOf(path, fns), (counts.get(kindOf(path, fns)) ?? 0) + 1);
  console.log(
    `One Sonarr webhook, route to Plex call (${tookMs.toFixed(0)} ms): ${String(ours.length)} of autoscan's files ran ` +
      `(and ${String(others)} files of libraries): ${String(counts.get("path") ?? 0)} on the request's own path, ` +
      `${String(counts.get("shared") ?? 0)} shared by every request (logging, metrics, clock, the app's middleware), ` +
      `${String(counts.get("runs anyway") ?? 0)} whose functions all ran in 2 s without a request too (timers)`,
  );
  for (const [path, fns] of ours) {
    const kind = kindOf(path, fns);
    console.log(`  ${path.padEnd(44)} ${String(fns.size).padStart(3)} function(s)  ${kind === "path" ? "" : kind}`);
  }

  // The order: a breakpoint on each of those functions, and a third webhook for another show. Each hit gives the
  // function's file and the file that called it; the files entered, in order, are the walk a reader follows.
  child.kill("SIGUSR2");
  await waitForFile(`${out}.ready`);
  await webhook(shows[2] as string);
  child.kill("SIGUSR2");
  const stacks = requestWindow((await waitForFile(`${out}.trace`)).trim().split("\n").map((line) => line.split("\t")), src);
  // The top frame carries the hit function's position (its first statement); the other frames are files.
  const hits = stacks.map(([top = "", ...below]) => [top.replace(/:\d+:\d+$/, ""), ...below]);
  const stages = stagesOf(hits, src);
  // A reader reads each function once: only the first call of each counts.
  const firstReads = stacks.filter(([top = ""], i) => stacks.findIndex(([other]) => other === top) === i);
  const reads = firstReads.map(([top = "", ...below]) => [top.replace(/:\d+:\d+$/, ""), ...below]);
  const kinds = new Map(ours.map(([path, fns]) => [path, kindOf(path, fns)]));
  const order = walkOrder(hits, src, kinds);
  const own = collapse(order.filter((f) => kinds.get(f) === "path"));
  // Helpers that call none of our files (a path normalised, a heap's sift) are read where they are called.
  const leaves = new Set(own.filter((file) => !hits.some((frames) => callsFrom(frames, src, file))));
  const read = collapse(walkOrder(reads, src, kinds).filter((f) => kinds.get(f) === "path"));
  // A reader follows a call from one file into another once: the first call along each such edge counts.
  const stageOf = new Map(hits.map((frames, i) => [frames, stages[i] ?? 0]));
  const edgeReads = firstAlongEachEdge(hits, src);
  const byEdge = collapse(walkOrder(edgeReads, src, kinds).filter((f) => kinds.get(f) === "path"));
  const count = (files: readonly string[]): string => {
    const { distinct, returns } = countReturns(files);
    return `${String(distinct)} files, ${String(returns)} returns`;
  };
  const inPlace = (files: readonly string[]): string[] => files.filter((f) => !leaves.has(f));
  // The headline is the count closest to a reader's: on the code the issue was filed against it gives 34 files and
  // 49 returns, where the reviewer counted about 33 and 42.
  console.log(
    `The walk as a reader follows it (each call from one file into another followed once; the ${String(leaves.size)} ` +
      `helpers that call none of ours read in place; shared files left out): ${count(inPlace(byEdge))}` +
      ` (the issue's floor: 15 files, 3 returns)`,
  );
  console.log(
    `  finer: each function read once ${count(inPlace(read))} (${count(read)} with the helpers); every call ` +
      `${count(inPlace(own))} (${count(own)} with the helpers, ${count(order)} with the shared files too)`,
  );
  // Without going back to a caller: how often a call enters a file already entered, and how many of those calls go
  // through a function passed in (the caller does not import the callee's file: a capability, a callback). The
  // request's path is read first, then what runs off it (which runs meanwhile: the judge, the landed checker): a file
  // the path enters is the path's, and entering it again off the path is the off-path part's re-entry.
  const pathFirst = firstAlongEachEdge([...hits.filter((_, i) => stages[i] !== OFF_PATH), ...hits.filter((_, i) => stages[i] === OFF_PATH)], src);
  const reentries = await reentriesByCall(pathFirst, src, (file) => kinds.get(file) === "path" && !leaves.has(file), stageOf);
  console.log(
    `  by calls only (a return to the caller not counted): ${String(reentries.files)} files, ${String(reentries.calls.length)} ` +
      `re-entries, ${String(reentries.calls.filter((c) => c.passedIn).length)} of them through a function passed in`,
  );
  // The same count per stage: the files a stage enters that no earlier stage entered, and its re-entries.
  const mark = (value: number, limit: number): string => `${String(value)} (≤ ${String(limit)} ${value <= limit ? "✓" : "✗"})`;
  STAGES.forEach(({ name, files: limit }, stage) => {
    const files = [...reentries.stageOfFile].filter(([, s]) => s === stage).map(([file]) => file);
    const calls = reentries.calls.filter((c) => c.stage === stage);
    console.log(`    ${name}: ${mark(files.length, limit)} files not entered before, ${String(calls.length)} re-entries`);
    if (process.env.WALK_ORDER) console.log(`      ${files.join(", ")}${calls.length > 0 ? `; re-entries: ${calls.map((c) => c.edge).join(", ")}` : ""}`);
  });
  const offPath = [...reentries.stageOfFile].filter(([, s]) => s === OFF_PATH).map(([file]) => file);
  const offCalls = reentries.calls.filter((c) => c.stage === OFF_PATH);
  console.log(`    after the answer, off the request's path: ${String(offPath.length)} files not entered before, ${String(offCalls.length)} re-entries`);
  if (process.env.WALK_ORDER) console.log(`      ${offPath.join(", ")}${offCalls.length > 0 ? `; re-entries: ${offCalls.map((c) => c.edge).join(", ")}` : ""}`);
  console.log(`    in all: ${mark(reentries.files, 15)} files, ${mark(reentries.calls.length, 3)} re-entries`);
  const entered = new Map<string, number>();
  for (const file of own) entered.set(file, (entered.get(file) ?? 0) + 1);
  const most = [...entered].filter(([, n]) => n > 1).sort(([, a], [, b]) => b - a).slice(0, 8);
  console.log(`  entered most often (every call): ${most.map(([file, n]) => `${file} ${String(n)}×`).join(", ")}`);
  if (process.env.WALK_ORDER) {
    console.log(`  as a reader follows it: ${collapse(inPlace(byEdge)).join(" → ")}`);
    console.log(`  helpers read in place: ${[...leaves].join(", ")}`);
    console.log(`  re-entries by call: ${reentries.calls.map((c) => `${c.edge}${c.passedIn ? " (passed in)" : ""}`).join(", ")}`);
  }
} finally {
  const exited = new Promise((resolve) => child.once("exit", resolve));
  child.kill("SIGTERM");
  await exited;
  await plex.close();
  await rm(home, { recursive: true, force: true });
}

async function waitForFile(path: string): Promise<string> {
  for (let waited = 0; ; waited += 20) {
    const text = await readFile(path, "utf8").catch(() => undefined);
    if (text !== undefined) return text;
    if (waited > 20_000) throw new Error(`${path} was not written`);
    await sleep(20);
  }
}

/**
 * The files a reader passes through, in order: for each function hit, the file that called it (a return to it when
 * the call comes from a file left earlier), then the function's own file. Library and Node frames are skipped; hits
 * of timers (files that run anyway) are left out.
 */
function walkOrder(hits: readonly string[][], src: string, kinds: ReadonlyMap<string, string>): string[] {
  const order: string[] = [];
  for (const frames of hits) {
    const ours = frames.filter((frame) => frame.startsWith(src)).map((frame) => relative(src, frame));
    const [top, ...below] = ours;
    if (top === undefined || kinds.get(top) === "runs anyway" || !kinds.has(top)) continue;
    const caller = below[0];
    if (caller !== undefined && caller !== top) order.push(caller);
    order.push(top);
  }
  return collapse(order);
}

/**
 * The request's own hits, as the issue draws the walk: from the first one under the webhook's route to the target
 * call (what follows Plex's answer, `after-scan.ts`, is left out), in the order they ran. The dispatcher wakes as
 * soon as the request is stored, while the route still finishes its answer: that part of the walk interleaves.
 */
function requestWindow(stacks: readonly string[][], src: string): string[][] {
  const under = (frames: readonly string[], file: string): boolean => frames.some((frame) => frame.startsWith(join(src, file)));
  const from = stacks.findIndex((frames) => under(frames, "web/routes/webhook.ts"));
  const to = stacks.findIndex((frames) => frames.some((frame) => frame.replace(/:\d+:\d+$/, "").endsWith("/after-scan.ts")));
  return stacks.slice(Math.max(0, from), to < 0 ? undefined : to);
}

/** The first hit along each call from one of our files into another, in order. */
function firstAlongEachEdge(hits: readonly string[][], src: string): string[][] {
  const edges = new Set<string>();
  return hits.filter((frames) => {
    const [top, caller] = frames.filter((frame) => frame.startsWith(src));
    if (top === undefined || caller === undefined || top === caller) return false;
    const edge = `${caller}>${top}`;
    if (edges.has(edge)) return false;
    edges.add(edge);
    return true;
  });
}

/** Whether a hit shows `file` calling another of our files (a frame of it right below another file's). */
function callsFrom(frames: readonly string[], src: string, file: string): boolean {
  const ours = frames.filter((frame) => frame.startsWith(src)).map((frame) => relative(src, frame));
  return ours.some((frame, i) => i > 0 && frame === file && ours[i - 1] !== file);
}

/**
 * Each call from one file into another (first along its edge), in order: the calls that enter a file the walk has
 * already entered, and whether the caller imports the callee's file (a direct call) or got the function passed in.
 */
async function reentriesByCall(
  edgeHits: readonly string[][],
  src: string,
  counted: (file: string) => boolean,
  stageOf: ReadonlyMap<readonly string[], number>,
): Promise<{ files: number; calls: { edge: string; passedIn: boolean; stage: number }[]; stageOfFile: Map<string, number> }> {
  const seen = new Set<string>();
  const calls: { edge: string; passedIn: boolean; stage: number }[] = [];
  /** Each file's earliest stage among the calls that entered it (or left from it). */
  const stageOfFile = new Map<string, number>();
  for (const frames of edgeHits) {
    const [top, caller] = frames.filter((frame) => frame.startsWith(src)).map((frame) => relative(src, frame));
    if (top === undefined || caller === undefined || !counted(top) || !counted(caller)) continue;
    const stage = stageOf.get(frames) ?? 0;
    if (seen.size === 0) seen.add(caller);
    if (seen.has(top)) calls.push({ edge: `${caller} → ${top}`, passedIn: !(await imports(join(src, caller), join(src, top))), stage });
    for (const file of [caller, top]) {
      seen.add(file);
      stageOfFile.set(file, Math.min(stage, stageOfFile.get(file) ?? stage));
    }
  }
  return { files: seen.size, calls, stageOfFile };
}

/**
 * The stage of each hit (an index into `STAGES`, or `OFF_PATH`), cut by the stack rather than by the time alone (the
 * route still answers while the dispatcher already works). The dispatcher's hits (a frame of `queue/dispatch/`, even
 * under the route, where the store tells it of the new work) are "stored → due work" until it holds a due item: its
 * first hit after a due read (the port's `dueFor…`) that is no longer under one; from there on they are "due work →
 * the target's HTTP call". A hit of the store's (`queue/`) under no other file of ours (shared ones aside), once the
 * dispatcher works, is in the stage the dispatcher is in (the store's own work for the due read, then for recording
 * the check and the attempt). Off the request's path (`OFF_PATH`), whatever else the stack holds: a change listener
 * of the store's other than the dispatcher (a hit under the store's `hear` whose own file is not the store's), any hit
 * of the landed check (under `landed/` or a target's `library-lookup.ts`, or the store's look methods, `…Look…`: its
 * wake, and its looks for earlier scans, whenever they run; the store's write queue cuts the stack, hence the names),
 * and, once the route has answered (its call into `web/responses.ts`), any other hit not under the route (the
 * unroutable judge). The rest is "intake → stored": the route, intake, and the store's writes for the request until
 * the answer.
 */
function stagesOf(hits: readonly string[][], src: string): number[] {
  const isLandedCheck = (file: string): boolean => file.startsWith("landed/") || file.endsWith("library-lookup.ts");
  let dispatching = false;
  let askedDue = false;
  let holdsDue = false;
  let answered = false;
  return hits.map((frames) => {
    const files = frames.filter((frame) => frame.startsWith(src)).map((frame) => relative(src, frame));
    const names = (frames.at(-1) ?? "").startsWith("#") ? (frames.at(-1) ?? "").slice(1).split("|") : [];
    const underDueRead = names.some((name) => /\bdueFor/.test(name));
    const underRoute = files.includes("web/routes/webhook.ts");
    if (files.some(isLandedCheck) || names.some((name) => /Look/.test(name)) || (names.includes("hear") && !(files[0] ?? "").startsWith("queue/"))) {
      return OFF_PATH;
    }
    if (files.some((file) => file.startsWith("queue/dispatch/"))) {
      dispatching = true;
      if (underDueRead) askedDue = true;
      else if (askedDue) holdsDue = true;
      return holdsDue ? 2 : 1;
    }
    const storeOnly = files.every((file) => file.startsWith("queue/") || SHARED.some((prefix) => file.startsWith(prefix)));
    if (dispatching && (files[0] ?? "").startsWith("queue/") && storeOnly) return holdsDue ? 2 : 1;
    if (files[0] === "web/responses.ts" && files[1] === "web/routes/webhook.ts") answered = true;
    else if (answered && !underRoute) return OFF_PATH;
    return 0;
  });
}

async function imports(file: string, target: string): Promise<boolean> {
  const text = await readFile(file, "utf8");
  return [...text.matchAll(/from "(\.{1,2}\/[^"]+)"/g)].some(([, spec = ""]) => join(file, "..", spec) === target);
}

function collapse(files: readonly string[]): string[] {
  return files.filter((file, i) => i === 0 || files[i - 1] !== file);
}

/** Distinct files, and how often the walk enters a file it has already left. */
function countReturns(files: readonly string[]): { distinct: number; returns: number } {
  const seen = new Set<string>();
  let returns = 0;
  for (const file of collapse(files)) {
    if (seen.has(file)) returns += 1;
    seen.add(file);
  }
  return { distinct: seen.size, returns };
}
