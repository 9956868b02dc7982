import { describe, expect, it } from "vitest";
import { instanceHealth } from "./instance-health.ts";

describe("/health's store, instance and roles", () => {
  it("says sqlite and no instance without a database; a configured job always runs there", () => {
    const health = instanceHealth({ database: false, instance: "host-1-abcd", drive: { status: () => ({}) }, backfill: undefined });
    expect(health()).toEqual({ store: "sqlite", roles: { drive: "active", backfill: "off" } });
  });

  it("says postgresql, the instance id and each role as held now, with a database", () => {
    let drive: "active" | "standby" = "standby";
    const health = instanceHealth({ database: true, instance: "host-1-abcd", drive: { role: () => drive }, backfill: { role: () => "active" } });
    expect(health()).toEqual({ store: "postgresql", instance: "host-1-abcd", roles: { drive: "standby", backfill: "active" } });
    drive = "active";
    expect(health().roles.drive).toBe("active");
  });
});
