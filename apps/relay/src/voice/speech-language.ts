import { DomainError } from '@svc/domain';

/**
 * The language a voice session speaks, as the app sends it: `language` in the output session's body
 * (RelayVoiceClient.kt 3049-3063) and in `/voice/synthesize` (264-270), or the voice output settings'. The app
 * offers a provider's codes but also a free text field (VoiceSettingsScreen.kt 1657-1663): `de`, `de-DE`,
 * `pt_BR` and `German` all arrive. Each provider says what it makes of one (VoiceProvider.speechLanguage).
 */
export type SpeechLanguage = { ok: true; language: string } | { ok: false; why: string };

/** A BCP-47-like tag: a 2-3 letter language, then up to five subtags of 1-8 letters or digits. */
const TAG_RE = /^[a-z]{2,3}(?:-[a-z0-9]{1,8}){0,5}$/;

/** The tag the app meant, lower-cased with `_` read as `-` (`pt_BR` is `pt-br`); null when it is no tag at all (`German`). */
export function languageTag(raw: string): string | null {
  const tag = raw.trim().toLowerCase().replace(/_/g, '-');
  return TAG_RE.test(tag) ? tag : null;
}

/** The tag, then the tag without its last subtag, down to the language: `de-de-1996`, `de-de`, `de`. */
export function tagFallbacks(tag: string): string[] {
  const parts = tag.split('-');
  return parts.map((_, i) => parts.slice(0, parts.length - i).join('-'));
}

/** Printable ASCII only, for a status line (the app shows `HTTP 400: <reason phrase>`, RelayVoiceClient.kt 2657-2674). */
const printable = (s: string) => s.replace(/[^\x20-\x7e]/g, '?').slice(0, 40);

/**
 * A language the provider cannot speak, refused before a session is made: 400 `voice.language_unavailable`.
 * The words avoid "field": the app's classifier reads a 400 saying "unsupported" and "field" as "update the
 * relay" (RelayErrorClassifier.kt 145-153).
 */
export function languageUnavailable(raw: string, why: string): DomainError {
  return new DomainError('voice.language_unavailable', 'invalid', why, {
    success: false,
    language: raw.slice(0, 64),
    reasonPhrase: `Language not spoken here: ${printable(raw.trim())}`,
  });
}
