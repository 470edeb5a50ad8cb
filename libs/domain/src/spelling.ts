/**
 * The brand in what the relay writes to clients (WIRE.md "Spelling"). The spec names everything `svc`
 * (`svc-relay://`, `MEDIA:svc-relay://<token>`, `X-Svc-Relay-Session`, `/return_to_svc`); the public
 * clients (the phone app, the desktop CLI, the host's tools) read only their own `hermes` spelling.
 * RELAY_CLIENT_SPELLING picks which one the relay writes; it always reads both.
 */
export const SPELLINGS = ['svc', 'hermes'] as const;
export type Spelling = (typeof SPELLINGS)[number];

export function isSpelling(v: unknown): v is Spelling {
  return v === 'svc' || v === 'hermes';
}

export type ClientNames = {
  spelling: Spelling;
  /** `svc-relay://`: the pairing URL's scheme and the media marker's. */
  relayScheme: string;
  /** `MEDIA:svc-relay://`: what precedes a media token in a chat marker. */
  mediaMarkerPrefix: string;
  /** `/return_to_svc`: the Device Control route that brings the client app to the front. */
  returnPath: string;
  /** `X-Svc-Relay-Session`: the ingress header carrying a relay session. */
  sessionHeader: string;
  /** `svc-relay`: the dashboard plugin's name in its routes. */
  pluginName: string;
  /** `svc`: the prefix of brand-named frames and protocol ids (`svc.voice.output.v0`, `svc.run.started`). */
  brand: Spelling;
};

const NAMES: Readonly<Record<Spelling, ClientNames>> = {
  svc: {
    spelling: 'svc',
    relayScheme: 'svc-relay://',
    mediaMarkerPrefix: 'MEDIA:svc-relay://',
    returnPath: '/return_to_svc',
    sessionHeader: 'X-Svc-Relay-Session',
    pluginName: 'svc-relay',
    brand: 'svc',
  },
  hermes: {
    spelling: 'hermes',
    relayScheme: 'hermes-relay://',
    mediaMarkerPrefix: 'MEDIA:hermes-relay://',
    returnPath: '/return_to_hermes',
    sessionHeader: 'X-Hermes-Relay-Session',
    pluginName: 'hermes-relay',
    brand: 'hermes',
  },
};

export function clientNames(spelling: Spelling): ClientNames {
  return NAMES[spelling];
}

/** Every relay scheme the relay reads, whatever it writes. */
export const RELAY_SCHEMES: readonly string[] = [NAMES.svc.relayScheme, NAMES.hermes.relayScheme];
