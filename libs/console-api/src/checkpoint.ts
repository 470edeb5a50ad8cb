/**
 * Signed checkpoints on the Store page (`/console/api/store/checkpoint`). Types only, like index.ts,
 * which re-exports them. The file's shape is `svc relay events checkpoint`'s, read back by
 * `svc relay events verify --checkpoint FILE`.
 */

/** A checkpoint file: the log's head signed with the relay's Ed25519 key. */
export type CheckpointFile = {
  format: 'svc-relay-checkpoint/1';
  seq: number;
  hash: string;
  /** ISO time of signing (the relay's clock). */
  at: string;
  key_id: string;
  /** Base64 Ed25519 signature over "svc-relay-checkpoint/1\n<seq>\n<hash>\n<at>\n<key_id>\n". */
  signature: string;
};

/** The public half of the checkpoint key: what an auditor copies off the host once. */
export type CheckpointKeyView = {
  ok: true;
  server_time: number;
  algorithm: 'ed25519';
  /** Base64 of the raw 32 bytes. */
  public_key: string;
  key_id: string;
  /** The transparency log's signed-note verifier key (`<origin>+<key hash>+<base64>`), what `verify --vkey` takes. */
  vkey: string;
};

/**
 * A checkpoint of the running relay's durable head (issue 39): a C2SP tlog-checkpoint signed as a signed
 * note by the same key, the bytes `svc relay events checkpoint` writes, and the name the page saves it under.
 */
export type CheckpointMade = {
  ok: true;
  form: 'c2sp-note';
  /** The note: origin, tree size, root, a blank line, the relay's signature line. */
  note: string;
  origin: string;
  size: number;
  /** Base64 of the tree's root hash. */
  root: string;
  key_id: string;
  vkey: string;
  file_name: string;
};
