import { describe, expect, it } from "vitest";
import { checkGrantedScope, requiredScope, SCOPE_METADATA_READONLY, SCOPE_READONLY } from "./scope.ts";

describe("the narrowest Drive scope", () => {
  it("metadata-only for My Drive; drive.readonly when shared-drive names are needed", () => {
    expect(requiredScope({ sharedDrives: false })).toBe(SCOPE_METADATA_READONLY);
    expect(requiredScope({ sharedDrives: true })).toBe(SCOPE_READONLY);
  });

  it("checks granted scopes in Google's and rclone's spellings", () => {
    expect(checkGrantedScope("drive", { sharedDrives: true }).ok).toBe(true);
    expect(checkGrantedScope(`${SCOPE_METADATA_READONLY} openid`, { sharedDrives: false }).ok).toBe(true);
    expect(checkGrantedScope("drive.metadata.readonly", { sharedDrives: true }).ok).toBe(false);
    expect(checkGrantedScope("drive.file", { sharedDrives: false }).ok).toBe(false);
  });
});
