import type { Logger } from "../core/logger.ts";
import type { WebOptions } from "./options.ts";
import type { GuessBrake } from "./guess-brake.ts";
import type { RejectionLog } from "./rejections.ts";
import type { UrlSecret } from "./secret.ts";

/** What every route handler receives: the options with defaults applied, the component logger, the URL secret. */
export interface RouteDeps {
  readonly options: WebOptions;
  readonly log: Logger;
  readonly secret: UrlSecret;
  readonly maxBodyBytes: number;
  readonly requestTimeoutMs: number;
  readonly rejections: RejectionLog;
  /** Wrong secrets are answered at its pace (guess-brake.ts). */
  readonly guesses: GuessBrake;
}
