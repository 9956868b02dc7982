// Loaded with `node --import`: appends the URL of every module the process loads to $AUTOSCAN_TEST_LOADS, one a
// line, so a test can say what a command did and did not load.
import { appendFileSync } from "node:fs";
import { registerHooks } from "node:module";

const out = process.env.AUTOSCAN_TEST_LOADS;
if (out) {
  registerHooks({
    load(url, context, nextLoad) {
      appendFileSync(out, `${url}\n`);
      return nextLoad(url, context);
    },
  });
}
