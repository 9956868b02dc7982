import type { RouteDeps } from "../deps.ts";
import type { ArrCheckView } from "../options.ts";

/**
 * `cmd=arr_check` (optionally `app`): the server looks at the *arr apps' connections to autoscan now, not at the next
 * `SERVER_BACKFILL_INTERVAL`. `autoscan arr connect` asks it after it made a connection right, so the console's banner
 * and a notification not sent yet go at once. The answer: `{"success":true,"apps":[{"app","state","detail","cleared"}]}`.
 */
type Params = (name: string) => string | undefined;

export async function answerArrCheck(params: Params, deps: RouteDeps): Promise<{ success: boolean; msg?: string; apps?: readonly ArrCheckView[] }> {
  const watch = deps.options.arrConnections;
  if (!watch) return { success: false, msg: "No *arr app is watched: add each under ARR in config.json, with its TYPE, URL and API_KEY" };
  const app = params("app")?.trim() || undefined;
  const checks = watch.recheck(app);
  if (!checks) return { success: false, msg: `No app '${app ?? ""}' under ARR` };
  deps.log.debug({ app }, "Connection check of the *arr apps asked for through the API");
  return { success: true, apps: await checks };
}
