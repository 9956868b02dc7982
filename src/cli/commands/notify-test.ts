import { systemClock } from "../../core/clock.ts";
import { UsageError } from "../../core/errors.ts";
import { stringFlag, type CommandSpec } from "../command.ts";
import { loadRuntime } from "../runtime.ts";
import { newInstanceId } from "../../core/instance-id.ts";
import { createNotifiersFromConfig } from "../../notify/from-config.ts";

/**
 * `autoscan notify test [--name N]`: one test message to each notifier of `NOTIFY` (or to N), now, in its own format,
 * through the same sender the server uses, so a wrong URL, topic or key shows before a real failure needs it. One line
 * per notifier on stdout; exit 0 when every one was delivered, 1 when one was not (with the receiver's answer, never
 * the URL's secret), 2 when NOTIFY is empty or N is not in it.
 */
export const notifyTestCommand: CommandSpec = {
  usage: "autoscan notify test [--name NAME] [--config PATH]",
  description:
    "Sends one test message to each notifier under NOTIFY in config.json (or only to NAME) and says what each receiver " +
    "answered. Only the URL's scheme and host are shown: its path and password are secrets.",
  options: { name: { type: "string" } },
  optionHelp: { name: "only this notifier (a name under NOTIFY)" },
  async run(input) {
    const runtime = await loadRuntime(input);
    if (!("config" in runtime)) return runtime.exitCode;
    const { config } = runtime;
    const { io } = input;
    const names = Object.keys(config.NOTIFY);
    if (names.length === 0) {
      io.stderr.write(`No notifier is configured: add one under NOTIFY in ${runtime.settings.configPath} (see the README's Notifications).\n`);
      return 2;
    }
    const only = stringFlag(input.values, "name");
    if (only !== undefined && !names.includes(only)) {
      throw new UsageError(`--name "${only}" is not a notifier under NOTIFY; there are: ${names.join(", ")}.`);
    }
    const notifiers = createNotifiersFromConfig({ config, clock: systemClock, log: runtime.log, instance: newInstanceId() });
    let failed = 0;
    for (const name of only === undefined ? names : [only]) {
      const notifier = notifiers.find(name);
      if (!notifier) continue;
      const { type, shown } = notifier.state();
      const delivery = await notifier.sendTest();
      if (delivery.kind === "sent") {
        io.stdout.write(`✓ ${name}: test message delivered (${type} at ${shown}, answered ${String(delivery.status)}).\n`);
        continue;
      }
      failed += 1;
      io.stdout.write(`✗ ${name}: test message not delivered (${type} at ${shown}): ${delivery.problem}.\n`);
      io.stderr.write(
        delivery.kind === "refused"
          ? `The receiver refused it: check NOTIFY.${name}.URL (and TYPE "${type}").\n`
          : `The receiver did not take it: is it running and reachable from here? The server would try again with backoff.\n`,
      );
    }
    notifiers.stop();
    return failed === 0 ? 0 : 1;
  },
};
