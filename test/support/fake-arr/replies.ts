import type { ServerResponse } from "node:http";
import type { FakeReply } from "./types.ts";

/**
 * An answer before it is sent (a body, or a stream for a long history), and the error answers the apps give: an
 * ASP.NET Core validation problem, an SQL error.
 */
export type Reply = FakeReply & { readonly stream?: (res: ServerResponse) => void };

export const JSON_TYPE = "application/json; charset=utf-8";

/** ASP.NET Core's answer to a query value that does not bind (a name where an int is expected) (unverified). */
export function validationProblem(field: string, message: string): Reply {
  const body = {
    type: "https://tools.ietf.org/html/rfc9110#section-15.5.1",
    title: "One or more validation errors occurred.",
    status: 400,
    errors: { [field]: [message] },
  };
  return { status: 400, contentType: "application/problem+json; charset=utf-8", body: JSON.stringify(body) };
}

/** An unknown sort column passed through to SQL (Lidarr, Readarr, Sonarr v3): a 500 (unverified). */
export function sqlError(key: string): Reply {
  return { status: 500, contentType: JSON_TYPE, body: JSON.stringify({ message: `SQLite error no such column: ${key}` }) };
}
