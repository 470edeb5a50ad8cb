import type { VoiceSection, VoiceSessionKind } from '@svc/events';

export type Kind = VoiceSessionKind;

type KindSpec = {
  /** The settings section it reads (`GET /voice/<segment>/config`). */
  section: VoiceSection;
  /** The grant a phone's relay session needs to create and keep one. */
  grant: 'voice:tts' | 'voice:realtime';
  /** Its URL segment: `POST /voice/<segment>/session`, the socket `/voice/<segment>/<session_id>`. */
  segment: string;
  /** Creations are rated per caller in two buckets: output sessions (the app makes one a sentence), and realtime ones. */
  bucket: 'output' | 'realtime';
  /** What a refusal calls it. */
  title: string;
};

/** The voice session kinds (spec 4.5), everything the relay says differently of each. */
export const KINDS: { readonly [K in Kind]: KindSpec } = {
  output: { section: 'voice_output', grant: 'voice:tts', segment: 'output', bucket: 'output', title: 'voice output' },
  realtime: { section: 'realtime_voice', grant: 'voice:realtime', segment: 'realtime', bucket: 'realtime', title: 'realtime voice' },
  realtime_agent: { section: 'realtime_agent', grant: 'voice:realtime', segment: 'realtime-agent', bucket: 'realtime', title: 'the realtime agent' },
};

const ALL = Object.keys(KINDS) as Kind[];

/** The kind whose socket path segment this is (undefined: none). */
export function kindOfSegment(segment: string): Kind | undefined {
  return ALL.find((k) => KINDS[k].segment === segment);
}

export function kindOfSection(section: VoiceSection): Kind {
  return ALL.find((k) => KINDS[k].section === section)!;
}
