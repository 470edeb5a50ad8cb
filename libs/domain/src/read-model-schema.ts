/**
 * The read-model schema. Bump it when a projection's state or its meaning changes (2: rate limits keyed
 * per IPv6 /64, with a sweep time; 3: each block's start and each session's offline time; 4: each trust's
 * session token digest, which renewal is bound to; why a recording stopped, its key and the ones forgotten,
 * which keys a device received content under; 5: who keeps each bridge phone's idle expiry; 6: the named secrets).
 */
export const READ_MODEL_SCHEMA = 6;

/**
 * The schema of the first relay that could prune its log (retention came with it). From it on, every bump
 * comes with a snapshot upcaster: a log pruned behind its snapshot cannot be replayed from seq 1, so an
 * upgrade must carry the snapshot itself (read-model-schema.spec.ts holds the rule). Snapshots of earlier
 * schemas (0.1.0 builds wrote 3 and 4) come with whole logs, and start-up rebuilds them by replay.
 */
export const FIRST_PRUNABLE_SCHEMA = 5;

export type SnapshotState = Record<string, unknown>;

/** `(state under schema n) => state under schema n + 1`, keyed by n. */
export const SNAPSHOT_UPCASTERS: { readonly [fromSchema: number]: (state: Readonly<SnapshotState>) => SnapshotState } = {
  // No secret existed before schema 6.
  5: (s) => ({ ...s, secrets: { secrets: [] } }),
};

/** The schema steps from FIRST_PRUNABLE_SCHEMA to `current` that have no upcaster (empty: any released snapshot upgrades). */
export function missingSnapshotUpcasters(current = READ_MODEL_SCHEMA, upcasters = SNAPSHOT_UPCASTERS): number[] {
  const missing: number[] = [];
  for (let n = FIRST_PRUNABLE_SCHEMA; n < current; n++) if (typeof upcasters[n] !== 'function') missing.push(n);
  return missing;
}

/**
 * A snapshot's state under the current schema, upcast step by step from an older one; or why it cannot be
 * (written by a newer relay, or under a schema older than FIRST_PRUNABLE_SCHEMA): then start-up replays
 * the whole log instead, which a log pruned behind the snapshot cannot.
 */
export function upcastSnapshotState(
  state: SnapshotState,
  current = READ_MODEL_SCHEMA,
  upcasters = SNAPSHOT_UPCASTERS,
): { state: SnapshotState; upcastFrom?: number } | { reason: string } {
  const schema = typeof state.schema === 'number' ? state.schema : 1;
  if (schema === current) return { state };
  if (schema > current) return { reason: `read-model schema ${schema} is newer than this relay's ${current}` };
  let s = state;
  for (let n = schema; n < current; n++) {
    const up = upcasters[n];
    if (typeof up !== 'function') return { reason: `read-model schema ${schema}, this relay uses ${current} and has no upcaster from ${n}` };
    s = { ...up(s), schema: n + 1 };
  }
  return { state: s, upcastFrom: schema };
}
