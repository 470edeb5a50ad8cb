import { DomainError } from '@svc/domain';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { setTimeout as sleep } from 'node:timers/promises';
import { byRef, matching, queryWords, type ElementQuery } from './element-find';
import { readTree, selectors, type ElementCall } from './element-call';
import { ELEMENT_SCHEMA, elementLine } from './element-text';
import type { Element, ElementTree } from './element-tree';
import { toolResult } from './mcp-results';

/*
 * android_wait_for (issue 40, item 2): until an element or text is on screen (or, with `gone`, no longer is),
 * or the timeout. Each poll asks the phone for its screen hash (a few bytes) and reads the screen only when the
 * hash changed, so a still screen costs one small command a poll. Bounded by the phone's command budget: one
 * command in flight at a time, at most RELAY_MCP_WAIT_MAX_POLLS polls a wait (the interval grows to fit a long
 * timeout in them), a timeout at most RELAY_MCP_WAIT_MAX_MS. The deadline is the relay's clock (the injected
 * one); the pause between polls is real time, cut short when the MCP request is cancelled. A phone that leaves
 * ends the wait at its next poll with the command's own refusal (`bridge.no_device`).
 */

export const DEFAULT_WAIT_MS = 10_000;
export const DEFAULT_POLL_MS = 500;

type WaitInput = Record<string, unknown> & {
  ref?: string;
  query?: ElementQuery;
  text?: string;
  gone?: boolean;
  timeout_ms?: number;
  poll_ms?: number;
};

export async function waitFor(value: WaitInput, c: ElementCall): Promise<CallToolResult> {
  const given = (['ref', 'query', 'text'] as const).filter((k) => value[k] !== undefined);
  if (given.length !== 1) throw new DomainError('mcp.bad_target', 'invalid', 'give exactly one of ref, query or text to wait for');
  const timeout = value.timeout_ms ?? Math.min(DEFAULT_WAIT_MS, c.limits.waitMaxMs);
  if (timeout > c.limits.waitMaxMs)
    throw new DomainError(
      'mcp.wait_too_long',
      'invalid',
      `timeout_ms ${timeout} is beyond this relay's longest wait, ${c.limits.waitMaxMs} ms: wait again after it`,
      {
        max_timeout_ms: c.limits.waitMaxMs,
      },
    );
  const pollMs = Math.max(value.poll_ms ?? DEFAULT_POLL_MS, Math.ceil(timeout / c.limits.waitMaxPolls));
  // The polls the timeout holds at this interval (and one at its start), never more than the relay allows: so a
  // wait ends near its timeout even if the relay's clock stands still, and a phone is asked at most this often.
  const budget = Math.min(c.limits.waitMaxPolls, Math.ceil(timeout / pollMs) + 1);
  const gone = value.gone === true;
  const what = value.ref !== undefined ? `element ${value.ref}` : `an element matching ${queryWords(value.query ?? { text: value.text })}`;
  const present = (tree: ElementTree): Element[] => {
    if (value.ref !== undefined) return [byRef(tree, value.ref)].filter((e): e is Element => !!e?.on_screen);
    return matching(tree, value.query ?? { text: value.text }).filter((e) => e.on_screen);
  };
  const started = c.clock.now().getTime();
  const deadline = started + timeout;
  let seen: string | null = null;
  let found: Element[] = [];
  for (let polls = 1; ; polls++) {
    const hash = await c.bridge.command(c.driver, 'GET', '/screen_hash', selectors(value), {}, c.from);
    if (hash.status >= 300) return toolResult('json', hash);
    const h = typeof hash.body.hash === 'string' ? hash.body.hash : null;
    // An unchanged screen gives the same answer: read it only when the hash moved (or the phone sent none).
    if (h === null || h !== seen) {
      const read = await readTree(value, c);
      if (!read.ok) return read.result;
      found = present(read.tree);
      seen = h;
    }
    const elapsed = c.clock.now().getTime() - started;
    if (found.length > 0 !== gone) return met(found, gone, what, polls, elapsed);
    if (c.clock.now().getTime() >= deadline || polls >= budget)
      throw new DomainError(
        'mcp.wait_timeout',
        'timeout',
        `${what} ${gone ? 'was still on the screen' : 'did not appear'} within ${timeout} ms (${polls} polls): read the screen with android_ui_tree to see what is there`,
        { polls, timeout_ms: timeout },
      );
    try {
      await sleep(pollMs, undefined, { signal: c.signal });
    } catch {
      throw new DomainError('mcp.cancelled', 'conflict', 'the wait was cancelled');
    }
  }
}

function met(found: Element[], gone: boolean, what: string, polls: number, elapsed: number): CallToolResult {
  const structured = { met: true, gone, element: gone ? null : found[0], matches: found.length, polls, elapsed_ms: elapsed };
  const text = gone ? `${what} is gone (${polls} polls)` : `${elementLine(found[0])}\n(appeared; ${found.length} matching, ${polls} polls)`;
  return { content: [{ type: 'text', text }], structuredContent: structured };
}

/** android_wait_for's outputSchema: the condition met (with the element when it appeared), or a refusal/timeout (`ok: false`). */
export const WAIT_OUTPUT = {
  type: 'object' as const,
  properties: {
    met: { type: 'boolean', const: true },
    gone: { type: 'boolean', description: 'true: waited for it to go' },
    element: { anyOf: [ELEMENT_SCHEMA, { type: 'null' }], description: 'the first element matching, with its ref (null when waiting for it to go)' },
    matches: { type: 'integer', minimum: 0 },
    polls: { type: 'integer', minimum: 1 },
    elapsed_ms: { type: 'integer', minimum: 0, description: 'by the relay’s clock' },
    ok: { type: 'boolean' },
  },
  anyOf: [{ required: ['met', 'gone', 'element', 'polls'] }, { required: ['ok'], properties: { ok: { const: false } } }],
};
