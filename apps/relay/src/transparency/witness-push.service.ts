import { Inject, Injectable } from '@nestjs/common';
import { DomainError } from '@svc/domain';
import { parseCheckpointText, parseNote } from '@svc/events/merkle/note';
import { TreeRangeError } from '@svc/events/merkle/tree';
import type { Logger } from 'pino';
import { LOGGER, RELAY_CONFIG } from '../common/auth/tokens';
import type { RelayConfig } from '../common/config/relay-config';
import { Clock } from '../common/loop/clock';
import { CommandLoop } from '../common/loop/command-loop';
import { Scheduler } from '../common/loop/scheduler';
import { MetricsService } from '../metrics/metrics.service';
import { TransparencyService } from './transparency.service';
import {
  addCheckpointBody,
  excerpt,
  MAX_ANSWER_BYTES,
  parseSizeAnswer,
  pushTargets,
  PUSH_TIMEOUT_MS,
  pushBackoffMs,
  readCosignature,
  shownUrl,
  type PushState,
  type PushTarget,
} from './witness-push';

type Published = Awaited<ReturnType<TransparencyService['publish']>>;
type Outcome = { state: PushState['state']; message: string | null };

/**
 * Submits the published checkpoint to each witness of RELAY_WITNESS_URLS (C2SP tlog-witness), on the
 * scheduler's tick, on the leader only: once per witness per new checkpoint, one submission in flight per
 * witness, a failure waiting 10 s doubling to 15 minutes (on the injected clock). A cosignature answered is
 * kept as one submitted to POST /log/cosignature is; an answer that shows the log inconsistent with what
 * the witness cosigned (409 with a larger size, 409 at the same size, 422) is kept as a refusal and logged
 * loudly. The tick never waits for a witness.
 */
@Injectable()
export class WitnessPushService {
  readonly targets: PushTarget[];
  private readonly states = new Map<string, PushState>();
  private readonly inFlight = new Set<string>();

  constructor(
    private readonly log: TransparencyService,
    private readonly loop: CommandLoop,
    private readonly clock: Clock,
    scheduler: Scheduler,
    @Inject(RELAY_CONFIG) config: RelayConfig,
    @Inject(LOGGER) private readonly logger: Logger,
    private readonly metrics: MetricsService,
  ) {
    this.targets = pushTargets(config.witnessUrls, log.witnesses);
    for (const t of this.targets)
      this.states.set(t.witness.name, { url: shownUrl(t.url), state: 'pending', at: null, message: null, next_at: null, failures: 0 });
    if (this.targets.length > 0) scheduler.onTick(() => this.tick());
  }

  /** What each witness answered last (null for a witness the relay does not submit to). */
  state(name: string): PushState | null {
    const s = this.states.get(name);
    return s ? { ...s } : null;
  }

  /** Starts the submissions that are due; returns at once (a slow witness holds up nothing). */
  tick(): void {
    if (this.loop.standby) return;
    const now = this.clock.now().getTime();
    for (const t of this.targets) {
      const name = t.witness.name;
      const st = this.states.get(name)!;
      if (this.inFlight.has(name) || (st.next_at !== null && now < st.next_at)) continue;
      this.inFlight.add(name);
      void this.submit(t)
        .catch((err: Error) => this.done(t, { state: 'error', message: err.message }))
        .finally(() => this.inFlight.delete(name));
    }
  }

  /** Resolves when no submission is in flight (tests, shutdown). */
  async settled(): Promise<void> {
    while (this.inFlight.size > 0) await new Promise((r) => setTimeout(r, 5));
  }

  private async submit(t: PushTarget): Promise<void> {
    let cp: Published;
    try {
      cp = await this.log.publish();
    } catch (err) {
      if (err instanceof DomainError) return; // an empty log, or no tree yet: nothing to submit
      throw err;
    }
    const rec = this.log.store.list().find((r) => r.name === t.witness.name && r.key_hash === t.witness.keyHash.toString('hex'));
    const known = rec?.cosigned ?? null;
    if (known && known.size === cp.size && known.root === cp.root && this.states.get(t.witness.name)!.state === 'ok') return;
    const text = parseNote(cp.note).text;
    // The size the witness cosigned last, as far as this relay knows; a 409 corrects it once.
    let old = known && known.size <= cp.size ? known.size : 0;
    for (let attempt = 0; attempt < 2; attempt++) {
      const proof = this.proof(cp, old);
      if (typeof proof === 'string') return this.done(t, { state: 'error', message: proof });
      const answer = await this.post(t, addCheckpointBody(old, proof, cp.note));
      if (answer.status === 200) {
        const c = readCosignature(text, answer.body, t.witness);
        const now = this.clock.now().getTime();
        this.log.store.cosigned(t.witness.name, t.witness.keyHash.toString('hex'), {
          size: cp.size,
          root: cp.root,
          time: c.time,
          line: c.line,
          received_at: now,
        });
        this.logger.info({ witness: t.witness.name, size: cp.size }, 'transparency log: a witness cosigned (tlog-witness)');
        return this.done(t, { state: 'ok', message: null });
      }
      if (answer.status === 409 && answer.sizeType) {
        const m = parseSizeAnswer(answer.body);
        if (m === null) return this.done(t, { state: 'error', message: `409 with a size that does not read: ${excerpt(answer.body)}` });
        if (m > cp.size)
          return this.refused(t, cp, `the witness cosigned a tree of ${m} records of this log; it now has ${cp.size}: rewound or truncated`);
        if (attempt === 0 && m !== old) {
          old = m;
          continue;
        }
        return this.done(t, { state: 'error', message: `the witness asked for old ${m} again` });
      }
      return this.answered(t, cp, old, answer);
    }
  }

  /** The consistency proof from `old` (none from 0 or at the same size), or why there is none. */
  private proof(cp: Published, old: number): Buffer[] | string {
    if (old === 0 || old === cp.size) return [];
    try {
      return cp.tree.consistency(old, cp.size);
    } catch (err) {
      if (err instanceof TreeRangeError)
        return `no consistency proof from ${old} to ${cp.size} (${err.message}): the witness cannot be brought forward from what it cosigned`;
      throw err;
    }
  }

  /** Every answer but a cosignature and a 409 with a size. */
  private answered(t: PushTarget, cp: Published, old: number, a: { status: number; body: string }): void {
    const origin = parseCheckpointText(parseNote(cp.note).text).origin;
    switch (a.status) {
      case 409:
        return this.refused(t, cp, `the witness cosigned another tree of ${cp.size} records of this log: rewritten`);
      case 422:
        return this.refused(
          t,
          cp,
          `the consistency proof from the ${old} records the witness cosigned did not verify for it: rewritten, or rewound and regrown`,
        );
      case 404:
        return this.done(t, {
          state: 'error',
          message: `the witness does not know this log (${origin}): its operator adds the log's verifier key (svc relay events vkey)`,
        });
      case 403:
        return this.done(t, {
          state: 'error',
          message: `the witness does not trust the key that signed this checkpoint (${origin}): give it the log's verifier key (svc relay events vkey)`,
        });
      default:
        return this.done(t, { state: 'error', message: `HTTP ${a.status}: ${excerpt(a.body)}` });
    }
  }

  private refused(t: PushTarget, cp: Published, reason: string): void {
    const now = this.clock.now().getTime();
    this.log.store.refused(t.witness.name, t.witness.keyHash.toString('hex'), {
      size: cp.size,
      root: cp.root,
      reason,
      time: Math.floor(now / 1000),
      received_at: now,
    });
    this.logger.error(
      { witness: t.witness.name, size: cp.size, reason },
      'transparency log: A WITNESS REFUSED a checkpoint of this relay (tlog-witness)',
    );
    this.done(t, { state: 'refused', message: reason });
  }

  private done(t: PushTarget, o: Outcome): void {
    const st = this.states.get(t.witness.name)!;
    const now = this.clock.now().getTime();
    st.at = now;
    st.state = o.state;
    st.message = o.message;
    st.failures = o.state === 'ok' ? 0 : st.failures + 1;
    st.next_at = o.state === 'ok' ? null : now + pushBackoffMs(st.failures);
    this.metrics.observeWitness(t.witness.name, 'push', o.state === 'ok' ? 'cosigned' : o.state === 'refused' ? 'refused' : 'error');
    if (o.state === 'error')
      this.logger.warn({ witness: t.witness.name, url: st.url, err: o.message }, 'transparency log: a witness submission failed');
  }

  /** One POST, its answer read up to MAX_ANSWER_BYTES (a larger one is an error, not read on). */
  private async post(t: PushTarget, body: string): Promise<{ status: number; body: string; sizeType: boolean }> {
    let res: Response;
    try {
      res = await fetch(`${t.url}/add-checkpoint`, {
        method: 'POST',
        headers: { 'content-type': 'text/plain; charset=utf-8' },
        body,
        redirect: 'error',
        signal: AbortSignal.timeout(PUSH_TIMEOUT_MS),
      });
    } catch (err) {
      const cause = (err as { cause?: { code?: string } }).cause?.code;
      throw new Error(`${shownUrl(t.url)} did not answer: ${cause ?? (err as Error).message}`);
    }
    const type = (res.headers.get('content-type') ?? '').split(';')[0].trim().toLowerCase();
    return { status: res.status, body: await readBounded(res, shownUrl(t.url)), sizeType: type === 'text/x.tlog.size' };
  }
}

async function readBounded(res: Response, url: string): Promise<string> {
  const declared = Number(res.headers.get('content-length') ?? 0);
  if (declared > MAX_ANSWER_BYTES) {
    await res.body?.cancel();
    throw new Error(`${url} answered more than ${MAX_ANSWER_BYTES} bytes (${declared})`);
  }
  const chunks: Buffer[] = [];
  let n = 0;
  if (res.body) {
    const reader = res.body.getReader();
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      n += value.length;
      if (n > MAX_ANSWER_BYTES) {
        await reader.cancel();
        throw new Error(`${url} answered more than ${MAX_ANSWER_BYTES} bytes`);
      }
      chunks.push(Buffer.from(value));
    }
  }
  return Buffer.concat(chunks).toString('utf8');
}
