import { Inject, Injectable, type OnModuleDestroy, type OnModuleInit } from '@nestjs/common';
import { DomainError } from '@svc/domain';
import { encodeRecord, openLogSource, recordText, type StoredEvent } from '@svc/events';
import { buildTree } from '@svc/events/merkle/build';
import { checkNote, checkpointText, NoteFormatError, parseNote, parseVkey, SIG_COSIGNATURE_V1, type Verifier } from '@svc/events/merkle/note';
import { TreeRangeError, type MerkleTree } from '@svc/events/merkle/tree';
import { verify } from 'node:crypto';
import * as path from 'node:path';
import type { Logger } from 'pino';
import type { Subscription } from 'rxjs';
import { LOGGER, RELAY_CONFIG } from '../common/auth/tokens';
import { relayDir } from '../common/config/config';
import { ConfigError } from '../common/config/config-env';
import type { RelayConfig } from '../common/config/relay-config';
import { Clock } from '../common/loop/clock';
import { CommandLoop } from '../common/loop/command-loop';
import { MetricsService } from '../metrics/metrics.service';

import { logIdentity, signTreeHead, type LogIdentity } from './log-identity';
import { WitnessStore, type WitnessRecord } from './witness-store';

/** The bytes a witness signs to report a refusal: its own header line (tlog-cosignature lets a new prefix reuse the key), time, reason, the refused checkpoint. */
export function refusalMessage(time: number, reason: string, text: string): Buffer {
  return Buffer.from(`svc-witness-refusal/v1\ntime ${time}\nreason ${reason}\n${text}`, 'utf8');
}

/**
 * The transparency log of the running relay (issue 39): the Merkle tree over its records, built once from
 * the log as stored (read-only, in the background after start) and then followed from the bus, each
 * durable event re-encoded to its stored line and checked against its hash (a mismatch rebuilds from the
 * log instead of guessing). Signs checkpoints of the newest tree, answers proofs, and keeps what the
 * configured witnesses (RELAY_WITNESS_VKEYS) cosigned or refused.
 */
@Injectable()
export class TransparencyService implements OnModuleInit, OnModuleDestroy {
  private tree: MerkleTree | null = null;
  private building: Promise<MerkleTree> | null = null;
  private pending: StoredEvent[] = [];
  private sub: Subscription | null = null;
  private identity: LogIdentity | null = null;
  /** The published checkpoint: fixed for RELAY_CHECKPOINT_PUBLISH_SECONDS so the witnesses' cosignatures of it can be shown on it. */
  private published: { note: string; size: number; root: string; at: number } | null = null;
  readonly witnesses: Verifier[];
  readonly store: WitnessStore;

  constructor(
    private readonly loop: CommandLoop,
    private readonly clock: Clock,
    @Inject(RELAY_CONFIG) private readonly config: RelayConfig,
    @Inject(LOGGER) private readonly logger: Logger,
    private readonly metrics: MetricsService,
  ) {
    this.witnesses = config.witnessVkeys.map((k) => {
      let v: Verifier;
      try {
        v = parseVkey(k);
      } catch (err) {
        throw new ConfigError(`RELAY_WITNESS_VKEYS: ${(err as Error).message}: ${k.slice(0, 80)}`);
      }
      if (v.type !== SIG_COSIGNATURE_V1) throw new ConfigError(`RELAY_WITNESS_VKEYS: ${v.name} is not a cosignature/v1 key (type 0x04)`);
      return v;
    });
    this.store = new WitnessStore(config.svcHome);
  }

  onModuleInit(): void {
    this.sub = this.loop.bus.events$.subscribe((e) => this.follow(e));
    void this.ready().catch((err: Error) => this.logger.warn({ err: err.message }, 'transparency log: the Merkle tree could not be built'));
  }

  onModuleDestroy(): void {
    this.sub?.unsubscribe();
  }

  private follow(e: StoredEvent): void {
    if (this.tree === null) {
      if (this.building) this.pending.push(e);
      return;
    }
    this.append(this.tree, e);
  }

  private append(tree: MerkleTree, e: StoredEvent): void {
    if (e.seq <= tree.size) return;
    const { hash: _hash, ...fields } = e;
    const record = encodeRecord(fields);
    if (e.seq !== tree.size + 1 || record.hash !== e.hash) {
      // Not the bytes stored (or a gap): read them from the log rather than guess.
      this.tree = null;
      return;
    }
    tree.appendRecord(Buffer.from(record.line, 'utf8'));
  }

  /** The tree, built from the log the first time (and after anything it could not follow). */
  ready(): Promise<MerkleTree> {
    if (this.tree) return Promise.resolve(this.tree);
    this.building ??= this.build().finally(() => (this.building = null));
    return this.building;
  }

  private async build(): Promise<MerkleTree> {
    this.pending = [];
    const source = openLogSource(this.config.eventStoreUrl ?? path.join(relayDir(this.config), 'events'));
    try {
      const tree = await buildTree(source);
      for (const e of this.pending) this.append(tree, e);
      this.pending = [];
      this.tree = tree;
      return tree;
    } catch (err) {
      // A log pruned before the tree existed (no compact range at its cut), or one that does not read.
      throw new DomainError('log.tree_unavailable', 'unavailable', `the transparency log's tree cannot be built: ${(err as Error).message}`);
    } finally {
      await source.close();
    }
  }

  id(): LogIdentity {
    this.identity ??= logIdentity(this.config.svcHome);
    return this.identity;
  }

  /**
   * The published checkpoint, with every cosignature the witnesses gave it appended. As C2SP logs do, it
   * stays fixed for RELAY_CHECKPOINT_PUBLISH_SECONDS (on the injected clock) and is re-signed only when the
   * tree grew and that interval passed: a witness's cosignature of the exact newest tree would almost never
   * be shown on a busy relay.
   */
  async checkpoint(): Promise<{ note: string; size: number; root: string }> {
    const { note, size, root } = await this.publish();
    return { note: note + this.store.linesFor(size, root).join(''), size, root };
  }

  /** The published checkpoint as the log signed it (no cosignatures), re-signed when due (above). */
  async publish(): Promise<{ note: string; size: number; root: string; tree: MerkleTree }> {
    const tree = await this.ready();
    if (tree.size === 0) throw new DomainError('log.empty', 'not_found', 'the log is empty: there is no checkpoint yet');
    const now = this.clock.now().getTime();
    const p = this.published;
    if (p === null || (tree.size > p.size && now - p.at >= this.config.checkpointPublishSeconds * 1000)) {
      const root = tree.root();
      this.published = { note: signTreeHead(this.id(), tree.size, root), size: tree.size, root: root.toString('base64'), at: now };
    }
    const { note, size, root } = this.published!;
    return { note, size, root, tree };
  }

  /**
   * The inclusion proof of record `seq` in the tree of `size`, with the record exactly as stored (what
   * `svc relay events proof` prints; the route is the operator's: a record may hold personal data, its
   * sealed fields as sealed bytes). `record` is null when the log no longer holds the line.
   */
  async inclusion(
    seq: number,
    size: number | undefined,
  ): Promise<{ seq: number; tree_size: number; leaf_hash: string; inclusion: string[]; record: string | null }> {
    const tree = await this.ready();
    const n = size ?? tree.size;
    const proof = this.proof(() => tree.inclusion(seq - 1, n));
    const source = openLogSource(this.config.eventStoreUrl ?? path.join(relayDir(this.config), 'events'));
    let record: string | null;
    try {
      record = await recordText(source, seq);
    } finally {
      await source.close();
    }
    return { seq, tree_size: n, leaf_hash: tree.leaf(seq - 1)!.toString('base64'), inclusion: proof, record };
  }

  async consistency(from: number, to: number): Promise<{ from: number; to: number; consistency: string[] }> {
    const tree = await this.ready();
    return { from, to, consistency: this.proof(() => tree.consistency(from, to)) };
  }

  private proof(make: () => Buffer[]): string[] {
    try {
      return make().map((h) => h.toString('base64'));
    } catch (err) {
      if (err instanceof TreeRangeError) throw new DomainError(`log.proof_${err.code}`, err.code === 'pruned' ? 'gone' : 'invalid', err.message);
      throw err;
    }
  }

  private witnessOf(name: string, keyHash: string): Verifier {
    const w = this.witnesses.find((v) => v.name === name && v.keyHash.toString('hex') === keyHash);
    if (!w) throw new DomainError('log.unknown_witness', 'forbidden', `${name.slice(0, 80)} is not a witness of this relay (RELAY_WITNESS_VKEYS)`);
    return w;
  }

  /** A witness's cosignature line of the tree of `size`: kept when it verifies under a configured witness key. */
  async cosign(size: number, line: string): Promise<{ witness: string; size: number; time: number }> {
    const tree = await this.ready();
    if (size < 1 || size > tree.size)
      throw new DomainError('log.unknown_size', 'invalid', `no tree of ${size} records here (the log has ${tree.size})`);
    const root = this.proof(() => [tree.root(size)])[0];
    const text = checkpointText(this.id().origin, size, tree.root(size));
    let sig;
    try {
      sig = parseNote(`${text}\n${line.endsWith('\n') ? line : line + '\n'}`).signatures;
    } catch (err) {
      if (err instanceof NoteFormatError) throw new DomainError('log.bad_cosignature', 'invalid', `not a signature line: ${err.message}`);
      throw err;
    }
    if (sig.length !== 1) throw new DomainError('log.bad_cosignature', 'invalid', 'send one cosignature line');
    const w = this.witnessOf(sig[0].name, sig[0].keyHash.toString('hex'));
    let checked;
    try {
      checked = checkNote({ text, signatures: sig }, [w]);
    } catch (err) {
      throw new DomainError('log.bad_cosignature', 'invalid', `${(err as Error).message}: not a cosignature of this relay's tree of ${size}`);
    }
    const time = checked[0].time!;
    this.store.cosigned(w.name, w.keyHash.toString('hex'), { size, root, time, line: sig[0].line, received_at: this.clock.now().getTime() });
    this.logger.info({ witness: w.name, size }, 'transparency log: a witness cosigned');
    this.metrics.observeWitness(w.name, 'pull', 'cosigned');
    return { witness: w.name, size, time };
  }

  /** A witness's signed report that it refused a checkpoint of this relay (kept, shown on the Store page, logged loudly). */
  refusal(r: { witness: string; key_hash: string; size: number; root: string; reason: string; time: number; signature: string }): {
    witness: string;
  } {
    const w = this.witnessOf(r.witness, r.key_hash);
    const root = Buffer.from(r.root, 'base64');
    const sig = Buffer.from(r.signature, 'base64');
    const text = checkpointText(this.id().origin, r.size, root);
    if (root.length !== 32 || sig.length !== 64 || !verify(null, refusalMessage(r.time, r.reason, text), w.publicKey, sig))
      throw new DomainError('log.bad_refusal', 'invalid', `the refusal is not signed by ${w.name}'s key`);
    this.store.refused(w.name, r.key_hash, { size: r.size, root: r.root, reason: r.reason, time: r.time, received_at: this.clock.now().getTime() });
    this.logger.error({ witness: w.name, size: r.size, reason: r.reason }, 'transparency log: A WITNESS REFUSED a checkpoint of this relay');
    this.metrics.observeWitness(w.name, 'pull', 'refused');
    return { witness: w.name };
  }

  /** Every configured witness (one that has not spoken yet too) and every one the store remembers. */
  witnessView(): WitnessRecord[] {
    const rows = this.store.list();
    for (const w of this.witnesses) {
      const keyHash = w.keyHash.toString('hex');
      if (!rows.some((r) => r.name === w.name && r.key_hash === keyHash))
        rows.push({ name: w.name, key_hash: keyHash, cosigned: null, refusal: null });
    }
    return rows.sort((a, b) => a.name.localeCompare(b.name));
  }
}
