/** How long requests still in flight at shutdown (a long poll, an event stream) get before their sockets are cut. */
export const SHUTDOWN_DRAIN_MS = 3000;
