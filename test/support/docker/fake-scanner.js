#!/usr/local/bin/node
// A fake `Plex Media Scanner` for autoscan's Docker tests. It records how it was started (argv, env, uid, gid, cwd)
// to /var/log/fake-scanner/calls.jsonl and prints the record on stdout, then behaves as told:
//   env FAKE_SCANNER_EXIT=<code>      exit code (default 0)
//   env FAKE_SCANNER_SLEEP_MS=<ms>    stay running this long first (to be seen by `docker top`, or to time out)
//   env FAKE_SCANNER_STDOUT_BYTES=<n> print n extra bytes of output on stdout (output cap tests)
//   env FAKE_SCANNER_STDERR=<text>    print this line on stderr
// /var/log/fake-scanner/control.json may hold the same settings ({ "exit": 3, "sleepMs": 0, ... }); env wins.
// A copy run on the host (native-mode tests) keeps its state in a `fake-scanner-state` folder beside it instead.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";

const beside = path.join(path.dirname(process.argv[1]), "fake-scanner-state");
const dir = fs.existsSync(beside) ? beside : "/var/log/fake-scanner";
let control = {};
try {
  control = JSON.parse(fs.readFileSync(`${dir}/control.json`, "utf8"));
} catch {}
const env = process.env;
const setting = (name, key, fallback) => (env[name] !== undefined ? env[name] : control[key] ?? fallback);

const args = process.argv.slice(2);
const record = {
  script: process.argv[1],
  argv: args,
  env: Object.fromEntries(Object.entries(env).sort()),
  uid: process.getuid(),
  gid: process.getgid(),
  user: os.userInfo().username,
  cwd: process.cwd(),
  pid: process.pid,
};
const line = JSON.stringify(record);
try {
  fs.appendFileSync(`${dir}/calls.jsonl`, line + "\n");
} catch {}
process.stdout.write(`FAKE-SCANNER-RECORD ${line}\n`);

async function main() {
  const sleepMs = Number(setting("FAKE_SCANNER_SLEEP_MS", "sleepMs", 0));
  if (sleepMs > 0) await new Promise((resolve) => setTimeout(resolve, sleepMs));
  if (args.includes("--list")) {
    const sections = control.sections ?? [["1", "Movies"], ["2", "TV Shows"]];
    for (const [id, name] of sections) process.stdout.write(`  ${id}: ${name}\n`);
  }
  if (args.includes("--scan")) {
    // Plex >= 1.28.1 prints this on every --scan (integrations.md §3.2).
    process.stderr.write(
      "The '--scan' operation is deprecated and will be removed in future versions of Plex Media Server.\n",
    );
    const at = args.indexOf("--directory");
    process.stdout.write(`Scanning ${at >= 0 ? args[at + 1] : "section"}\n`);
  }
  const bytes = Number(setting("FAKE_SCANNER_STDOUT_BYTES", "stdoutBytes", 0));
  for (let written = 0; written < bytes; written += 64) process.stdout.write("x".repeat(63) + "\n");
  const stderr = setting("FAKE_SCANNER_STDERR", "stderr", "");
  if (stderr) process.stderr.write(`${stderr}\n`);
  const code = Number(setting("FAKE_SCANNER_EXIT", "exit", 0));
  process.stdout.write("", () => process.exit(code));
}
await main();
