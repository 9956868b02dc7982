// Loaded with `--import` into a server the walk bench starts: V8's precise coverage (call counts) for the whole
// process. SIGUSR2 the first time: forget what ran so far (start, warm-up). The second time: write the files whose
// functions ran since then to AUTOSCAN_WALK_OUT, one `path<TAB>functions run` per line.
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
    if (marks === 1) return;
    const lines = [];
    for (const script of result) {
      const ran = script.functions.filter((fn) => fn.ranges[0].count > 0).length;
      if (ran > 0 && script.url.startsWith("file://")) lines.push(`${script.url.slice(7)}\t${String(ran)}`);
    }
    writeFileSync(process.env.AUTOSCAN_WALK_OUT, lines.join("\n") + "\n");
  });
});
