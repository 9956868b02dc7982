import type { ScanRequest } from "../../core/scan.ts";
import type { PathMapper, PathMappings } from "../../paths/mapping.ts";
import { unroutableReason, type Unroutable } from "../../paths/unroutable.ts";

/**
 * Whether a request can be scanned anywhere, for the intake's guard (intake/unroutable-guard.ts): a path that matches
 * no `SERVER_PATH_MAPPINGS` form is looked up in Plex's libraries (the section list the Plex target uses, cached);
 * in none, it is unroutable. A mapped path is never looked up. Undefined — queue as before — whenever it cannot be
 * told in `budgetMs`: Plex not set up or not answering, or other targets (TARGETS) whose libraries may hold it.
 */
export interface UnroutableJudgeInput {
  readonly mapper: Pick<PathMapper, "toServer">;
  /** The current `SERVER_PATH_MAPPINGS` (a reload changes them). */
  readonly mappings: () => PathMappings;
  readonly sections: { resolve(folder: string, signal?: AbortSignal): Promise<readonly unknown[]> } | undefined;
  /** Other targets are configured: a path in no Plex library may be in theirs. */
  readonly otherTargets: () => boolean;
  readonly budgetMs?: number;
}

export function unroutableJudge(input: UnroutableJudgeInput): (request: ScanRequest) => Promise<Unroutable | undefined> {
  const budgetMs = input.budgetMs ?? 1_000;
  return async (request) => {
    const received = request.receivedPath ?? request.path;
    if (!input.sections || input.otherTargets() || input.mapper.toServer(received).known) return undefined;
    const held = await input.sections.resolve(request.path, AbortSignal.timeout(budgetMs)).catch(() => undefined);
    return held === undefined || held.length > 0 ? undefined : unroutableReason(received, request.path, input.mappings());
  };
}
