/*
 * Ceilings of the element tools' settings (issue 40, item 2), in a module of their own: the relay's config reads
 * them at start, before anything loads the DTOs (which need reflect-metadata) or the MCP SDK.
 */

/** The longest wait any relay allows (RELAY_MCP_WAIT_MAX_MS is at most this; a call's timeout_ms too). */
export const WAIT_CEILING_MS = 600_000;
