import type { FakeApp } from "./app-facts.ts";
import { allCi, getCi, intParam } from "./query-params.ts";
import { recordJson } from "./record-json.ts";
import type { RecordStore } from "./record-store.ts";
import { JSON_TYPE, sqlError, validationProblem, type Reply } from "./replies.ts";
import type { FakeArrType } from "./types.ts";

/**
 * The two history reads (§2): `GET …/history` (paging, the sort each app and version applies, the `eventType` and
 * `downloadId` filters, the include flag) and `GET …/history/since` (ascending from a date, unpaged, streamed).
 */
export function historyPage(app: FakeApp, store: RecordStore, query: URLSearchParams): Reply {
  const { v3 } = app;
  const page = intParam(query, "page");
  const size = intParam(query, "pageSize");
  const pageNumber = page === undefined || (v3 && page <= 0) ? 1 : page;
  const pageSize = size === undefined || (v3 && size <= 0) ? 10 : size;
  const sort = sortOf(app, query);
  if ("status" in sort) return sort;
  const filter = eventFilter(v3, query);
  if ("status" in filter) return filter;
  const downloadId = getCi(query, "downloadId");
  let list = store.ordered(sort.key, sort.direction);
  if (filter.types || downloadId !== undefined) {
    list = list.filter((row) => (!filter.types || filter.types.has(row.eventType)) && (downloadId === undefined || row.downloadId === downloadId));
  }
  const include = includeFlag(app, query);
  const start = Math.max(0, (pageNumber - 1) * pageSize);
  const slice = pageSize > 0 ? list.slice(start, start + pageSize) : [];
  const head = JSON.stringify({
    page: pageNumber,
    pageSize,
    sortKey: sort.key,
    sortDirection: sort.direction === 1 ? "ascending" : "descending",
    totalRecords: list.length,
  });
  const records = slice.map((row) => recordJson(app, store, row, include)).join(",");
  return { status: 200, contentType: JSON_TYPE, body: `${head.slice(0, -1)},"records":[${records}]}` };
}

export function historySince(app: FakeApp, store: RecordStore, query: URLSearchParams): Reply {
  const { facts, v3 } = app;
  const raw = getCi(query, "date");
  if (raw === undefined && v3) return { status: 400, body: JSON.stringify({ message: "date is missing" }), contentType: JSON_TYPE };
  const from = raw === undefined ? Number.NEGATIVE_INFINITY : Date.parse(/(Z|[+-]\d{2}:?\d{2})$/.test(raw) ? raw : `${raw}Z`);
  if (Number.isNaN(from)) return validationProblem("date", `The value '${raw ?? ""}' is not valid.`);
  const eventValue = getCi(query, "eventType");
  let eventType: number | undefined;
  if (eventValue !== undefined) {
    const byName = Object.entries(facts.events).find(([, name]) => name.toLowerCase() === eventValue.toLowerCase());
    eventType = /^\d+$/.test(eventValue) ? Number(eventValue) : !v3 && byName ? Number(byName[0]) : Number.NaN;
    if (Number.isNaN(eventType)) return validationProblem("eventType", `The value '${eventValue}' is not valid.`);
  }
  const include = includeFlag(app, query);
  const list = store.byDate(1);
  return {
    status: 200,
    contentType: JSON_TYPE,
    // Streamed a thousand records at a time: the whole history is never one string.
    stream(res) {
      let index = 0;
      let first = true;
      res.write("[");
      const writeSome = (): void => {
        let chunk = "";
        for (let n = 0; n < 1000 && index < list.length; index += 1) {
          const row = list[index];
          if (!row || row.ms < from || (eventType !== undefined && row.eventType !== eventType)) continue;
          chunk += (first ? "" : ",") + recordJson(app, store, row, include);
          first = false;
          n += 1;
        }
        if (index >= list.length) return void res.end(`${chunk}]`);
        if (res.write(chunk)) setImmediate(writeSome);
        else res.once("drain", writeSome);
      };
      writeSome();
    },
  };
}

/** The sort each app and version applies to the query (§2). */
function sortOf(app: FakeApp, query: URLSearchParams): { key: string; direction: 1 | -1 } | Reply {
  const { v3 } = app;
  const key = getCi(query, "sortKey");
  const rawDirection = (getCi(query, "sortDirection") ?? "").toLowerCase();
  const direction: 1 | -1 | undefined = rawDirection === "ascending" ? 1 : rawDirection === "descending" ? -1 : undefined;
  if (v3) {
    if (key === undefined) return { key: "date", direction: -1 };
    const legacy = (getCi(query, "sortDir") ?? "").toLowerCase();
    const v3Direction = direction ?? (legacy === "desc" ? -1 : 1);
    if (!["date", "id", "series.sortTitle", "eventType"].includes(key)) return sqlError(key);
    return { key, direction: v3Direction };
  }
  const allowed: Record<FakeArrType, readonly string[] | undefined> = {
    sonarr: ["date", "series.sortTitle"],
    radarr: ["date", "languages", "movieMetadata.sortTitle", "quality"],
    lidarr: undefined,
    readarr: undefined,
  };
  const list = allowed[app.type];
  if (list) return { key: key !== undefined && list.includes(key) ? key : "date", direction: direction ?? -1 };
  if (key === undefined) return { key: "date", direction: direction ?? -1 };
  if (key !== "date" && key !== "id") return sqlError(key);
  return { key, direction: direction ?? -1 };
}

/** `eventType` numbers: v4-era a repeatable int array, Sonarr v3 one value (`Convert.ToInt32`). */
function eventFilter(v3: boolean, query: URLSearchParams): { types: Set<number> | undefined } | Reply {
  const values = allCi(query, "eventType");
  if (values.length === 0) return { types: undefined };
  if (v3 && values.length > 1) return { status: 500, body: JSON.stringify({ message: "Input string was not in a correct format." }), contentType: JSON_TYPE };
  const numbers = values.map((value) => (/^-?\d+$/.test(value) ? Number(value) : Number.NaN));
  if (numbers.some((n) => Number.isNaN(n))) {
    return v3
      ? { status: 500, body: JSON.stringify({ message: "Input string was not in a correct format." }), contentType: JSON_TYPE }
      : validationProblem("eventType", `The value '${values.find((value) => !/^-?\d+$/.test(value)) ?? ""}' is not valid.`);
  }
  return { types: new Set(numbers) };
}

function includeFlag(app: FakeApp, query: URLSearchParams): boolean {
  const { facts } = app;
  const flag = `include${facts.itemKey.charAt(0).toUpperCase()}${facts.itemKey.slice(1)}`;
  return (getCi(query, flag) ?? "").toLowerCase() === "true";
}
