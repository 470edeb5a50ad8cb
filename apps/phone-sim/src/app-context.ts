import type { SimAnswer } from './bridge-command';
import type { AppSafety } from './app-safety';
import type { ConfirmPolicy, FakePhone } from './fake-phone';

/* What the app-mode files share: the context of one answer, and how the app reads and writes JSON values. */

export type Body = Record<string, unknown>;

/** What an app-mode answer needs besides the command: the phone, its rails, its user, its clock and the relay it uploads to. */
export type AppContext = {
  phone: FakePhone;
  safety: AppSafety;
  /** The user at the modal. */
  confirm: ConfirmPolicy;
  /** Where each question of the modal is recorded, in order. */
  modalAsked: Array<{ path: string; text: string }>;
  now: () => number;
  relayUrl: string;
  token: string | null;
  maxWaitMs: number | undefined;
};

/** respondFromResult (BridgeCommandHandler.kt:2037-2068): an executor's data with 200, `{ok: true}` when it has none. */
export const ok = (result: Body): SimAnswer => ({ status: 200, result: Object.keys(result).length ? result : { ok: true } });
/** An executor's failure: 400 with its message and data. */
export const fail = (error: string, extra: Body = {}): SimAnswer => ({ status: 400, result: { error, ...extra } });
/** `jsonPrimitive.content` of a JSON value (a string's text, a number's digits). */
export const content = (v: unknown): string | null => (v === undefined || v === null || typeof v === 'object' ? null : String(v as string));
/** Kotlin's `toIntOrNull()` of that content: whole numbers only. */
export const int = (v: unknown): number | null => (/^[+-]?\d+$/.test(content(v) ?? '') ? Number(content(v)) : null);
/** `toBooleanStrictOrNull()` / `booleanOrNull` of that content. */
export const bool = (v: unknown): boolean | null => (content(v) === 'true' ? true : content(v) === 'false' ? false : null);

/** userDeniedResponse (BridgeCommandHandler.kt:2177-2200). */
export function userDenied(context: string): Body {
  return {
    error: `${context} This is a FINAL denial. Do NOT retry the same action via alternate tools (android_open_app + android_tap + android_type + android_tap_text to drive a messaging / dialer / email UI). The user's denial applies to the entire intent, not just this one tool call. Report the denial to the user and stop. If the user later asks you to try again, that counts as a fresh intent and you can re-attempt.`,
    error_code: 'user_denied',
    status: 'blocked',
    android_result: 'user_denied',
    reason: 'confirmation_denied_or_timeout',
    final: true,
    instruction: 'Do not retry via UI automation. Denial is terminal for this intent.',
  };
}
