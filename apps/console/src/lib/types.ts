/** An event as `/console/api/events` and the stream send it (digests cut, secrets withheld). */
export type ConsoleEvent = {
  seq: number;
  id: string;
  at: string;
  type: string;
  actor: string;
  data: Record<string, unknown>;
  hash: string;
};

export type ChainStatus =
  | { state: 'verified'; verified_to_seq: number; checked_at: number }
  | { state: 'broken'; broken_at_seq: number; segment: string; reason: string; checked_at: number };
