import { DomainError, type Driver } from '@svc/domain';
import type { BridgeService, CommandReply } from '../bridge/bridge.service';
import { ManualClock } from '../common/loop/clock';
import type { ElementCall } from './element-call';
import { waitFor } from './mcp-wait';

/*
 * android_wait_for's loop (issue 40, item 2) with a phone that answers from a script: how many commands it
 * sends, when it stops. The e2e suite drives it against the simulator; these pin the bounds.
 */

const node = (text: string) => ({ nodeId: 'w0:0', text, className: 'android.widget.TextView', bounds: { left: 0, top: 0, right: 100, bottom: 100 } });

/** A phone whose screen is `screen()`; its hash changes with it. Every command is counted by path. */
function phone(screen: () => string[], onCommand: (path: string) => void = () => undefined) {
  const counts: Record<string, number> = {};
  const bridge = {
    command: (_d: Driver, _m: string, path: string): Promise<CommandReply> => {
      counts[path] = (counts[path] ?? 0) + 1;
      onCommand(path);
      const texts = screen();
      return Promise.resolve(
        path === '/screen_hash'
          ? { status: 200, body: { hash: texts.join('|') || 'empty' } }
          : { status: 200, body: { packageName: 'x', rootBounds: { left: 0, top: 0, right: 1000, bottom: 1000 }, nodes: texts.map(node) } },
      );
    },
  } as unknown as BridgeService;
  return { bridge, counts };
}

const call = (bridge: BridgeService, clock: ManualClock, signal = new AbortController().signal, waitMaxPolls = 120): ElementCall => ({
  bridge,
  clock,
  limits: { maxElements: 300, maxText: 200, waitMaxMs: 60_000, waitMaxPolls },
  driver: {} as Driver,
  from: { origin: { via: 'mcp', client: 'spec' } },
  signal,
});

describe('android_wait_for', () => {
  it('reads the screen only when its hash moved, and answers the element when it appears', async () => {
    let texts = ['Loading'];
    const { bridge, counts } = phone(
      () => texts,
      () => {
        if ((counts['/screen_hash'] ?? 0) === 4) texts = ['Loading', 'Done'];
      },
    );
    const r = await waitFor({ text: 'done', poll_ms: 50, timeout_ms: 5000 }, call(bridge, new ManualClock()));
    expect(r.structuredContent).toMatchObject({ met: true, polls: 4, element: { text: 'Done' } });
    // Four hashes; the screen read at the first and at the change only.
    expect(counts).toEqual({ '/screen_hash': 4, '/screen': 2 });
  });

  it('stops when the MCP request is cancelled: no command after the abort', async () => {
    const ctl = new AbortController();
    const { bridge, counts } = phone(
      () => ['Loading'],
      () => {
        if (counts['/screen_hash'] === 2) ctl.abort();
      },
    );
    await expect(waitFor({ text: 'done', poll_ms: 50, timeout_ms: 60_000 }, call(bridge, new ManualClock(), ctl.signal))).rejects.toMatchObject({
      code: 'mcp.cancelled',
    });
    expect(counts['/screen_hash']).toBe(2);
  });

  it('polls at most RELAY_MCP_WAIT_MAX_POLLS times (the interval grows to fit the timeout), and ends at the clock’s deadline', async () => {
    const { bridge, counts } = phone(() => []);
    // 1000 ms in at most 4 polls: the 50 ms asked becomes 250 ms.
    const r = waitFor({ text: 'x', poll_ms: 50, timeout_ms: 1000 }, call(bridge, new ManualClock(), undefined, 4));
    await expect(r).rejects.toMatchObject({ code: 'mcp.wait_timeout', extra: { polls: 4 } });
    expect(counts['/screen_hash']).toBe(4);
    // The relay's clock moves 400 ms a poll: the 1000 ms deadline passes at the third.
    const clock = new ManualClock();
    const moving = phone(
      () => [],
      (p) => p === '/screen_hash' && clock.advance(400),
    );
    await expect(waitFor({ text: 'x', poll_ms: 50, timeout_ms: 1000 }, call(moving.bridge, clock))).rejects.toMatchObject({
      code: 'mcp.wait_timeout',
      extra: { polls: 3 },
    });
    await expect(waitFor({ text: 'x', timeout_ms: 60_001 }, call(bridge, clock))).rejects.toBeInstanceOf(DomainError);
  });
});
