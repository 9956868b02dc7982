import { describeContainerPort, loadContainerPortFacts } from "../../config/container-port.ts";
import type { ConfigSource } from "../../config/provenance.ts";
import type { Config } from "../../config/schema.ts";
import { ok, warn, type CheckResult } from "./check.ts";

/**
 * In a container: where autoscan listens and whether the port the user's apps use still reaches it. A moved-over
 * config.json with another SERVER_PORT is a warning (at every start and in doctor) until the host publishes that port
 * (AUTOSCAN_PORT in .env) and the file no longer says otherwise.
 */
export async function containerPortCheck(config: Pick<Config, "SERVER_PORT">, configPath: string, source: ConfigSource | undefined): Promise<CheckResult> {
  const finding = describeContainerPort(await loadContainerPortFacts(configPath, config.SERVER_PORT, source));
  const id = "server.container-port";
  const title = "Container port";
  return finding.problem && finding.fix ? warn(id, title, finding.detail, finding.fix) : ok(id, title, finding.detail);
}
