import { Inject, Injectable } from '@nestjs/common';
import { jsonDepthExceeds, MAX_FILE_JSON_DEPTH } from '@svc/events';
import * as fs from 'node:fs';
import type { RelayConfig } from '../common/config/relay-config';
import { CommandLoop } from '../common/loop/command-loop';
import { RELAY_CONFIG } from '../common/auth/tokens';

export const CONTEXT_LIMITS = { maxBlocks: 8, maxNameChars: 64, maxBlockChars: 2000, maxTotalChars: 8000, maxFileBytes: 256 * 1024 } as const;

export type InjectedBlock = { name: string; text: string; source: 'config' | 'relay'; truncated: boolean };

/**
 * What the relay adds to the agent's context: the operator's configured blocks (a JSON file) and the
 * phone status when the subscribed phone shares it. Bounded, so an auditor sees exactly what the
 * agent is told, and the agent is never flooded.
 */
@Injectable()
export class ContextService {
  constructor(
    private readonly loop: CommandLoop,
    @Inject(RELAY_CONFIG) private readonly config: RelayConfig,
  ) {}

  injected() {
    const errors: string[] = [];
    const file = this.readFile(errors);
    const enabled = file.enabled !== false;
    const blocks: InjectedBlock[] = [];
    let total = 0;
    const add = (name: string, text: string, source: InjectedBlock['source']) => {
      if (blocks.length >= CONTEXT_LIMITS.maxBlocks) {
        errors.push(`block "${name}" left out: at most ${CONTEXT_LIMITS.maxBlocks} blocks`);
        return;
      }
      const room = Math.min(CONTEXT_LIMITS.maxBlockChars, CONTEXT_LIMITS.maxTotalChars - total);
      if (room <= 0) {
        errors.push(`block "${name}" left out: the context is full (${CONTEXT_LIMITS.maxTotalChars} characters)`);
        return;
      }
      const truncated = text.length > room;
      const kept = truncated ? text.slice(0, room - 1) + '…' : text;
      total += kept.length;
      blocks.push({ name: name.slice(0, CONTEXT_LIMITS.maxNameChars), text: kept, source, truncated });
    };
    if (enabled) {
      const phone = this.phoneStatus();
      if (phone) add('phone_status', phone, 'relay');
      for (const b of file.blocks) add(b.name, b.text, 'config');
    }
    return {
      ok: true as const,
      enabled,
      blocks,
      limits: { max_blocks: CONTEXT_LIMITS.maxBlocks, max_block_chars: CONTEXT_LIMITS.maxBlockChars, max_total_chars: CONTEXT_LIMITS.maxTotalChars },
      ...(errors.length ? { errors } : {}),
    };
  }

  /** Null when the subscribed phone turned "share phone status" off. */
  private phoneStatus(): string | null {
    const phone = this.loop.models.phoneThreads;
    const sub = phone.subscriber();
    if (sub && !sub.sharePhoneStatus) return null;
    const n = phone.queuedCount();
    const queued = `${n} message${n === 1 ? '' : 's'}`;
    const home = `Home channel "${this.config.phoneHomeChannelName}" (id phone)`;
    const proactive = this.config.phoneEnabled ? 'proactive messages are on' : 'proactive messages are off (PHONE_ENABLED is not 1)';
    if (sub) return `${home}: ${sub.deviceName} is connected and receives messages now; ${proactive}; ${queued} queued.`;
    return `${home}: no phone is connected; messages wait in the queue for up to 24 hours; ${proactive}; ${queued} queued.`;
  }

  private readFile(errors: string[]): { enabled?: boolean; blocks: Array<{ name: string; text: string }> } {
    const file = this.config.injectedContextFile;
    let raw: string;
    try {
      const st = fs.statSync(file);
      if (!st.isFile()) throw Object.assign(new Error('not a file'), { code: 'EISDIR' });
      if (st.size > CONTEXT_LIMITS.maxFileBytes) {
        errors.push(`the context file is larger than ${CONTEXT_LIMITS.maxFileBytes} bytes; its blocks are left out`);
        return { blocks: [] };
      }
      raw = fs.readFileSync(file, 'utf8');
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') errors.push('the context file could not be read; its blocks are left out');
      return { blocks: [] };
    }
    let parsed: unknown;
    if (jsonDepthExceeds(raw, MAX_FILE_JSON_DEPTH)) {
      errors.push(`the context file nests JSON deeper than ${MAX_FILE_JSON_DEPTH} levels; its blocks are left out`);
      return { blocks: [] };
    }
    try {
      parsed = JSON.parse(raw);
    } catch {
      errors.push('the context file is not valid JSON; its blocks are left out');
      return { blocks: [] };
    }
    if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
      errors.push('the context file must hold an object {enabled?, blocks: [{name, text}]}');
      return { blocks: [] };
    }
    const o = parsed as { enabled?: unknown; blocks?: unknown };
    const blocks: Array<{ name: string; text: string }> = [];
    if (o.blocks !== undefined) {
      if (!Array.isArray(o.blocks)) errors.push('blocks must be an array');
      else
        o.blocks.forEach((b: unknown, i) => {
          const x = b as { name?: unknown; text?: unknown };
          if (typeof x !== 'object' || x === null || typeof x.name !== 'string' || typeof x.text !== 'string' || x.name.trim() === '') {
            errors.push(`blocks[${i}] needs a name and a text (strings); left out`);
          } else blocks.push({ name: x.name.trim(), text: x.text });
        });
    }
    return { enabled: typeof o.enabled === 'boolean' ? o.enabled : undefined, blocks };
  }
}
