import { getCi } from "./query-params.ts";
import { JSON_TYPE, type Reply } from "./replies.ts";
import type { FakeArrRequest } from "./types.ts";

/**
 * The API key (§1). v4-era: the `apikey` query (any case, checked first), then `X-Api-Key`, then
 * `Authorization: Bearer`; a missing or wrong key is 401 with an empty body. Sonarr v3: `X-Api-Key` first, then the
 * `ApiKey` query (any case); 401 `{"error":"Unauthorized"}`.
 */
export function givenKey(v3: boolean, req: FakeArrRequest): string | undefined {
  const header = headerText(req.headers["x-api-key"]);
  const query = getCi(req.query, "apikey");
  if (v3) return header ?? query;
  const bearer = /^Bearer\s+(.+)$/i.exec(headerText(req.headers.authorization) ?? "")?.[1];
  return query ?? header ?? bearer;
}

export function unauthorized(v3: boolean): Reply {
  return v3 ? { status: 401, contentType: JSON_TYPE, body: JSON.stringify({ error: "Unauthorized" }) } : { status: 401, body: "" };
}

function headerText(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}
