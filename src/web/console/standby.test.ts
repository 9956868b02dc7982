import { describe, expect, it } from "vitest";
import { backfillPanel } from "./backfill-panel.ts";
import { renderDrivePage } from "./drive-page.ts";

/** What a standby instance's console says (several instances share a database; another one does the job). */
describe("console on a standby instance", () => {
  const shell = { base: "/pass", drive: true, csrf: "token" };
  const now = Date.parse("2026-11-25T10:00:00Z");

  it("Drive page: standby, naming the instance that polls; the token is not in use here", () => {
    const html = renderDrivePage(
      shell,
      { access: "OAuth token", state: "standby", activeInstance: "host-a-1-aaaa", pollIntervalMs: 60_000, today: { changes: 0, scansQueued: 0 }, drives: ["My Drive"], errors: [] },
      now,
    );
    expect(html).toContain(`<span class="badge info">Standby</span>`);
    expect(html).toContain("Instance <b>host-a-1-aaaa</b> polls Google Drive; this instance takes over if it stops.");
    expect(html).toContain("not in use while another instance polls");
  });

  it("backfill panel: each app on standby, naming the instance that reads", () => {
    const html = backfillPanel([{ name: "sonarr", state: "standby", activeInstance: "host-a-1-aaaa" }], now);
    expect(html).toContain(`<b>sonarr</b> <span class="badge muted">standby</span>`);
    expect(html).toContain("instance host-a-1-aaaa reads its history; this one takes over if it stops");
  });
});
