import { createDecipheriv } from "node:crypto";

/**
 * rclone's "obscure" scheme (fs/config/obscure): base64url without padding of a 16-byte IV followed by the AES-CTR
 * ciphertext under a fixed key that ships in rclone's source. It hides a value from a glance, not from anyone:
 * `rclone reveal` undoes it, and so does this.
 */
const KEY = Buffer.from([
  0x9c, 0x93, 0x5b, 0x48, 0x73, 0x0a, 0x55, 0x4d, 0x6b, 0xfd, 0x7c, 0x63, 0xc8, 0x86, 0xa9, 0x2b, 0xd3, 0x90, 0x19, 0x8e,
  0xb8, 0x12, 0x8a, 0xfb, 0xf4, 0xde, 0x16, 0x2b, 0x8b, 0x95, 0xf6, 0x38,
]);

export function revealObscured(obscured: string): string {
  const bytes = Buffer.from(obscured, "base64url");
  if (bytes.length < 16) throw new Error("the value is too short to be an rclone-obscured string");
  const decipher = createDecipheriv("aes-256-ctr", KEY, bytes.subarray(0, 16));
  return Buffer.concat([decipher.update(bytes.subarray(16)), decipher.final()]).toString("utf8");
}

/**
 * rclone's own Google Drive client, used when a remote's `client_id` is blank. Its secret is public (obscured in
 * rclone's source). rclone's docs (v1.75) say it is rate-limited, shared by every rclone user, and "is being retired
 * and will stop working during 2026".
 */
export const RCLONE_SHARED_CLIENT_ID = "202264815644.apps.googleusercontent.com";
const RCLONE_SHARED_CLIENT_SECRET_OBSCURED = "eX8GpZTVx3vxMWVkuuBdDWmAUE6rGhTwVrvG9GhllYccSdj2-mvHVg";

export function rcloneSharedClientSecret(): string {
  return revealObscured(RCLONE_SHARED_CLIENT_SECRET_OBSCURED);
}
