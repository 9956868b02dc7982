// Loaded with `--import` into a server the walk bench starts: V8's precise coverage (call counts) for the whole
// process. Each odd SIGUSR2 forgets what ran so far (start, warm-up, the window before); each even one writes the files
// whose functions ran since the odd one to AUTOSCAN_WALK_OUT.<n> (n = 1, 2, …), one line per file: its path, then the
// start offsets of the functions that ran, tab-separated.
//
// Then the order: the fifth SIGUSR2 puts a breakpoint on the first statement of each of autoscan's functions that ran
// in the last window, with a condition that records the call stack and answers false (so nothing ever pauses); the
// sixth writes the stacks to AUTOSCAN_WALK_OUT.trace, one per line, their files top first, tab-separated.
import { writeFileSync } from "node:fs";
import { Session } from "node:inspector";

const session = new Session();
session.connect();
const post = (method, params = {}) =>
  new Promise((resolve, reject) => session.post(method, params, (error, result) => (error ? reject(error) : resolve(result))));
await post("Profiler.enable");
await post("Profiler.startPreciseCoverage", { callCount: true, detailed: false });
const out = process.env.AUTOSCAN_WALK_OUT;
const scripts = new Map();
session.on("Debugger.scriptParsed", ({ params }) => {
  if (params.url.startsWith("file://")) scripts.set(params.url.slice(7), params.scriptId);
});

let marks = 0;
/** The functions of the last window (their coverage ranges), by file: where the trace puts its breakpoints. */
let lastWindow = [];
process.on("SIGUSR2", () => {
  marks += 1;
  if (marks === 5) return void startTrace().then((count) => writeFileSync(`${out}.ready`, String(count)));
  if (marks === 6) return void stopTrace();
  const mark = marks;
  void post("Profiler.takePreciseCoverage").then(({ result }) => {
    if (mark % 2 === 1) return;
    const files = [];
    for (const script of result) {
      const ran = script.functions.filter((fn) => fn.ranges[0].count > 0).map((fn) => fn.ranges[0]);
      if (ran.length > 0 && script.url.startsWith("file://")) files.push([script.url.slice(7), ran]);
    }
    lastWindow = files.filter(([path]) => !path.includes("/node_modules/") && !path.includes("/bench/"));
    const lines = files.map(([path, ran]) => [path, ...ran.map((range) => range.startOffset)].join("\t"));
    writeFileSync(`${out}.${String(mark / 2)}`, lines.join("\n") + "\n");
  });
});

/** Line and column of an offset in a script's source (`starts`: where each line starts). */
function locate(starts, offset) {
  let line = starts.length - 1;
  while (starts[line] > offset) line -= 1;
  return { lineNumber: line, columnNumber: offset - starts[line] };
}

const breakpoints = [];
const RECORD = "(globalThis.__autoscanWalk.push(new Error().stack), false)";

async function startTrace() {
  globalThis.__autoscanWalk = [];
  Error.stackTraceLimit = 64;
  await post("Debugger.enable");
  for (const [path, ranges] of lastWindow) {
    const scriptId = scripts.get(path);
    if (!scriptId) continue;
    const { scriptSource } = await post("Debugger.getScriptSource", { scriptId });
    const starts = [0];
    for (let i = 0; i < scriptSource.length; i++) if (scriptSource[i] === "\n") starts.push(i + 1);
    for (const { startOffset, endOffset } of ranges) {
      // The function's own first break location, not the statement around its declaration.
      const { locations } = await post("Debugger.getPossibleBreakpoints", {
        start: { scriptId, ...locate(starts, startOffset) },
        end: { scriptId, ...locate(starts, endOffset) },
        restrictToFunction: true,
      });
      const first = locations[0];
      if (!first) continue;
      const location = { scriptId, lineNumber: first.lineNumber, columnNumber: first.columnNumber };
      const placed = await post("Debugger.setBreakpoint", { location, condition: RECORD }).catch(() => undefined);
      if (placed) breakpoints.push(placed.breakpointId);
    }
  }
  return breakpoints.length;
}

async function stopTrace() {
  for (const breakpointId of breakpoints.splice(0)) await post("Debugger.removeBreakpoint", { breakpointId });
  await post("Debugger.disable");
  // Each stack's first line is the condition's own frame ("at eval (eval at …)"): dropped. The last field names the
  // frames' functions ("#" then the names, "|"-separated), for the walk's cut between stages.
  const stacks = globalThis.__autoscanWalk.map((stack) => {
    const lines = stack
      .split("\n")
      .slice(1)
      .filter((line) => !line.includes("(eval at "));
    const files = lines.map((line, i) => {
      const [, file = "", at = ""] = /file:\/\/([^:)]+)(:\d+:\d+)\)?$/.exec(line) ?? [];
      // The function hit (the top frame) keeps its position: the walk reads each function once.
      return i === 0 ? file + at : file;
    });
    const names = lines.map((line) => /^\s*at (?:async )?(\S+) \(/.exec(line)?.[1] ?? "");
    return [...files, `#${names.join("|")}`].join("\t");
  });
  writeFileSync(`${out}.trace`, stacks.join("\n") + "\n");
}
