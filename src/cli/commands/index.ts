import type { Command } from "../command.ts";
import { configCheckCommand } from "./config-check.ts";
import { configInitCommand } from "./config-init.ts";
import { configUpgradeCommand } from "./config-upgrade.ts";
import { scanCommand } from "./scan.ts";
import { sectionsCommand } from "./sections.ts";
import { healthCommand } from "./health.ts";
import { serverCommand } from "./server.ts";
import { authorizeCommand } from "./authorize.ts";
import { rcloneCheckCommand } from "./rclone-check.ts";
import { doctorCommand } from "./doctor.ts";
import { backfillCommand } from "./backfill.ts";

/** The command table: one line per command (later issues add sections, scan, authorize, rclone check …). */
export const COMMANDS: readonly Command[] = [
  serverCommand,
  configInitCommand,
  configCheckCommand,
  configUpgradeCommand,
  sectionsCommand,
  scanCommand,
  healthCommand,
  authorizeCommand,
  rcloneCheckCommand,
  doctorCommand,
  backfillCommand,
];
