/** What a client says of itself in `system/auth` (kept on its session). */
export type DeviceInfo = {
  deviceId: string;
  deviceName: string;
  deviceModel: string | null;
  devicePlatform: string | null;
  deviceHostname?: string | null;
  /** `android`, `desktop`... as the client says; display only, never an authority. */
  clientSurface?: string | null;
  deviceFormFactor?: string | null;
};
