import pino from "pino";
import { createRoleLock } from "../../src/cluster/role-lock.ts";

/**
 * A holder of the drive role in its own process, for the test that SIGKILLs it (src/cluster/role-lock.test.ts):
 * `node role-lock-child.ts <database url> <instance>`; prints `active` once it holds the role, then waits to be killed.
 */
const [url, instance] = process.argv.slice(2);
if (!url || !instance) throw new Error("usage: role-lock-child.ts <database url> <instance>");
const lock = createRoleLock({
  url,
  role: "drive",
  instance,
  log: pino({ level: "silent" }),
  retryMs: 50,
  onAcquired: () => void process.stdout.write("active\n"),
  onLost: () => undefined,
});
lock.start();
setInterval(() => undefined, 60_000);
