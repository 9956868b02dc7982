// Loaded with `--import` into a server the walk bench starts: V8's precise coverage (call counts) for the whole
// process. Each odd SIGUSR2 forgets what ran so far (start, warm-up, the window before); each even one writes the files
// whose functions ran since the odd one to AUTOSCAN_WALK_OUT.<n> (n = 1, 2, …), one line per file: its path, then the
// start offsets of the functions that ran, tab-separated.
import { writeFileSync } from "node:fs";
import { Session } from "node:inspector";

const session = new Session();
session.connect();
const post = (method, params = {}) =>
  new Promise((resolve, reject) => session.post(method, params, (error, result) => (error ? reject(error) : resolve(result))));
await post("Profiler.enable");
await post("Profiler.startPreciseCoverage", { callCount: true, detailed: false });
let marks = 0;
process.on("SIGUSR2", () => {
  void post("Profiler.takePreciseCoverage").then(({ result }) => {
    marks += 1;
    if (marks % 2 === 1) return;
    const lines = [];
    for (const script of result) {
      const ran = script.functions.filter((fn) => fn.ranges[0].count > 0).map((fn) => fn.ranges[0].startOffset);
      if (ran.length > 0 && script.url.startsWith("file://")) lines.push([script.url.slice(7), ...ran].join("\t"));
    }
    writeFileSync(`${process.env.AUTOSCAN_WALK_OUT}.${String(marks / 2)}`, lines.join("\n") + "\n");
  });
});
