/** DI tokens for values made before Nest starts. */
export const RELAY_CONFIG = Symbol('RELAY_CONFIG');
export const LOGGER = Symbol('LOGGER');
export const RUNTIME = Symbol('RUNTIME');

/** Facts known only once the relay listens (the real port when started on port 0). */
export type Runtime = { port: number; startedAt: Date; version: string; url: string };
