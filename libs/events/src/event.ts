/**
 * The shapes every event shares. A feature declares its events as `Ev<'feature.thing_happened', {...}>`
 * and adds them to the `RelayEvent` union in relay-event.ts.
 */
export type Ev<Type extends string, Data extends object> = Readonly<{ type: Type; data: Readonly<Data> }>;

/** Who caused an event: `operator` (loopback), `device:<token prefix>`, `public:<ip>`, `system`. */
export type Actor = string;

/** An event as the command path hands it to the store (the store stamps seq, id, at, hashes). */
export type NewEvent<E extends { type: string; data: object } = { type: string; data: object }> = E & {
  readonly actor?: Actor;
};

/**
 * One durable record of the log. `hash` covers every other field; `prev` is the previous record's hash.
 * Distributive, so a `StoredEvent<RelayEvent>` narrows by `type` in a switch.
 */
export type StoredEvent<E extends { type: string; data: object } = { type: string; data: object }> = E extends unknown
  ? Readonly<{
      seq: number;
      id: string;
      at: string;
      type: E['type'];
      actor: Actor;
      data: E['data'];
      /** The data schema version of its type (event-schema.ts); 1 in every record written before versions moved. */
      v: number;
      prev: string;
      hash: string;
    }>
  : never;

/** The hash a chain starts from (no record before seq 1). */
export const GENESIS_HASH = '0'.repeat(64);
