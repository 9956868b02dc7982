import type { Logger as PinoLogger } from "pino";

/**
 * The logger every module receives in its options. It is pino's: object first, message second
 * (`log.info({ folder }, "Scan requested")`), errors under `err`. Make one child per component with
 * `log.child({ component: "PLEX" })`; the classic line format prints the component in capitals.
 */
export type Logger = PinoLogger;
