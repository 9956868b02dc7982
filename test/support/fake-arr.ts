/**
 * A fake Sonarr (v3 or v4), Radarr, Lidarr or Readarr history API on 127.0.0.1, faithful to
 * ../shared/reference/arr-history.md (every behaviour below cites its section):
 * - API root `/api/v3` (Sonarr, Radarr) or `/api/v1` (Lidarr, Readarr) (§1);
 * - `GET …/history`: `{page,pageSize,sortKey,sortDirection,totalRecords,records}`, page 1 and 10 records by default,
 *   `date` descending by default, the sort keys each app allows (Sonarr v4: `date`, `series.sortTitle`, any other →
 *   `date`; Radarr: `date`, `languages`, `movieMetadata.sortTitle`, `quality`, others → `date`; Lidarr, Readarr and
 *   Sonarr v3 pass the key to SQL: `date`, `id` work, an unknown column is a 500), one sort column and no tie-breaker
 *   (records of the same instant come in a scrambled, stable order), `eventType` (numbers; v4-era repeatable, v3 one
 *   value) and `downloadId` filters, and the include flags (`includeSeries` …) (§2);
 * - Sonarr v3: a `sortKey` without `sortDirection` sorts ascending, `sortDir=asc` works, `page=0`/`pageSize=0` fall
 *   back to 1 and 10 (§2);
 * - `GET …/history/since?date=`: a plain array, ascending, unpaged (streamed, so 100,000 records stay cheap); v3
 *   answers 400 without `date`, v4-era apps return the whole history (§2);
 * - `GET …/system/status` (`appName`, `version` …) and `X-Application-Version` on every answer (§1);
 * - the key: v4-era: `apikey` query (any case, checked first), then `X-Api-Key`, then `Authorization: Bearer`; a
 *   missing or wrong key is 401 with an empty body. Sonarr v3: `X-Api-Key` first, then the `ApiKey` query (any
 *   case), 401 `{"error":"Unauthorized"}` (§1);
 * - records: camelCase `eventType` strings with the app's own numbers for filters (§3), `data` a string → string
 *   dictionary with camelCased keys, nulls omitted, `sourceTitle` = the deleted file for deletes and the old path
 *   for renames, `downloadId` only on grabs and imports, dates in whole seconds (v4-era) or with fractions (Sonarr
 *   v3), the database keeping sub-second precision for the sort (§4); Sonarr and Lidarr write one import record per
 *   episode or track of a file (`items`);
 * - switches: starting up (503 with the app's `errorMessage`), down (the port is closed: connection refused, then
 *   reopened on the same port), hung (requests never answered), a new key, and injected answers (`answerNext`).
 * - the connections (`…/notification`: list, create, update, test, schema) and health list (`…/health`) of the apps'
 *   provider controller and NotificationStatusCheck, kept in memory; a create or update of an enabled connection and
 *   a test send the app's Test event to the connection's URL, as the apps do (the facts and their source files are
 *   at the top of fake-arr/notifications.ts).
 *
 * The parts, in fake-arr/: types.ts (this API's types), app-facts.ts (what differs per app: roots, versions, event
 * tables), record-store.ts (the table, its items and sort orders), record-builders.ts (the records `add…` writes),
 * record-json.ts (a record as the API answers it), history.ts (paging, sorting, filters, `since`), auth.ts (the key),
 * system-status.ts, notifications.ts (connections and health), query-params.ts, replies.ts, and server.ts
 * (`startFakeArr`: the HTTP server and its switches).
 */
export { startFakeArr } from "./fake-arr/server.ts";
export type {
  FakeArr,
  FakeArrOptions,
  FakeArrRequest,
  FakeArrType,
  FakeDate,
  FakeDelete,
  FakeGrab,
  FakeImport,
  FakeNotification,
  FakeNotificationInput,
  FakeNotificationTest,
  FakeOther,
  FakeRecordInput,
  FakeRename,
  FakeReply,
} from "./fake-arr/types.ts";
