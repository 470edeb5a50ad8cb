/** A Device Control command as the relay sends it to the phone (`bridge.command`). */
export type SimCommand = { request_id: string; method: string; path: string; params: Record<string, unknown>; body: Record<string, unknown> };

/** The phone's answer (`bridge.response`): an HTTP-like status and the result the relay passes on. */
export type SimAnswer = { status: number; result: unknown };
