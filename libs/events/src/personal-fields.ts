/**
 * Which fields of which events are personal content, and their forgotten form: the pure half of
 * personal-data.ts (the read models in libs/domain use it; the sealing needs node:crypto and stays there).
 */
export const PERSONAL_FIELDS = {
  'notification.posted': { title: null, text: null, subText: null },
  'phone.message_posted': { text: '', title: null, metadata: null },
  'phone.reply_received': { text: '' },
  'secret.set': { value: null },
} as const satisfies Record<string, Record<string, unknown>>;

export type PersonalEventType = keyof typeof PERSONAL_FIELDS;

const PERSONAL_TYPES: ReadonlySet<string> = new Set(Object.keys(PERSONAL_FIELDS));

/** Asked of every event on the way in and on replay: a Set lookup (a third of `hasOwnProperty` on these dotted keys). */
export function isPersonalType(type: string): type is PersonalEventType {
  return PERSONAL_TYPES.has(type);
}

/** The fields emptied, as replay and the projections show content whose key is gone. */
export function forgottenPersonal(type: PersonalEventType, data: object): Record<string, unknown> {
  const out: Record<string, unknown> = { ...data, ...PERSONAL_FIELDS[type], forgotten: true };
  delete out.sealed;
  return out;
}
