import * as path from 'node:path';
import WebSocket from 'ws';
import { TerminalService } from '../../apps/relay/src/terminal/terminal.service';
import { HIGH_WATER } from '../../apps/relay/src/terminal/shell-process';
import { pairPhone, startRelay, type TestRelay } from '../support/harness';
import { eventually } from '../support/terminal-screen';

jest.setTimeout(150_000);

const FLOOD_BYTES = 50 * 1024 * 1024; // `yes` prints "y\n": half of it is y
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * A phone that reads slowly must not make the relay's memory grow: the relay pauses the pty once the
 * socket's buffered amount passes the high-water mark. Counting without keeping the output keeps the
 * test process (which is also the relay) honest about its own RSS.
 */
describe('terminal flood', () => {
  let relay: TestRelay;
  beforeAll(async () => {
    relay = await startRelay({ config: { terminalShell: path.join(__dirname, '../fixtures/bash-norc') } });
  });
  afterAll(() => relay?.close());

  it('yes | head -c 50M to a slow reader: the pty pauses, RSS stays bounded, nothing is lost', async () => {
    const { phone, token } = await pairPhone(relay);
    phone.close();
    const ws = new WebSocket(relay.url.replace(/^http/, 'ws') + '/ws');
    await new Promise((r, j) => ws.once('open', r).once('error', j));
    let ys = 0;
    let tail = '';
    let done = false;
    let attached = false;
    ws.on('message', (raw) => {
      const f = JSON.parse(raw.toString()) as { type: string; payload: { data?: string } };
      if (f.type === 'terminal.attached') attached = true;
      if (f.type !== 'terminal.output' || typeof f.payload.data !== 'string') return;
      const d = f.payload.data;
      for (let i = d.indexOf('y'); i !== -1; i = d.indexOf('y', i + 1)) ys++;
      tail = (tail + d).slice(-64);
      if (tail.includes('FLOOD-DONE')) done = true;
    });
    ws.send(JSON.stringify({ channel: 'system', type: 'auth', payload: { session_token: token } }));
    ws.send(JSON.stringify({ channel: 'terminal', type: 'terminal.attach', payload: { cols: 80, rows: 24 } }));
    await eventually(() => attached, 5000, 'attached');
    // A prompt without a y, and the command itself spelled without one ($'\x79es' is `yes`).
    ws.send(JSON.stringify({ channel: 'terminal', type: 'terminal.input', payload: { data: "PS1='> '; stty -echo; echo READ$((1+1))\r" } }));
    await eventually(() => tail.includes('READ2'), 5000, 'prompt');
    await sleep(100);
    ys = 0;

    const socket = (ws as unknown as { _socket: import('node:net').Socket })._socket;
    const rssBefore = process.memoryUsage().rss;
    socket.pause(); // the phone stops reading
    ws.send(
      JSON.stringify({ channel: 'terminal', type: 'terminal.input', payload: { data: `$'\\x79es' | head -c ${FLOOD_BYTES}; echo FLOOD-DONE\r` } }),
    );
    const shell = relay.app.get(TerminalService).shells()[0];
    await eventually(() => shell.paused, 10_000, 'the pty to pause');
    let peakBuffered = 0;
    let peakRss = 0;
    for (let i = 0; i < 20; i++) {
      await sleep(50);
      peakBuffered = Math.max(peakBuffered, shell.conn?.ws.bufferedAmount ?? 0);
      peakRss = Math.max(peakRss, process.memoryUsage().rss);
    }
    expect(shell.paused).toBe(true);
    expect(done).toBe(false);
    // One coalesced frame may overshoot the high-water mark; nothing like 50 MB is ever held.
    expect(peakBuffered).toBeLessThan(HIGH_WATER + 512 * 1024);
    expect(peakRss - rssBefore).toBeLessThan(64 * 1024 * 1024);

    // Read slowly for a while (20 ms on, 30 ms off), then at full speed: every byte arrives.
    for (let i = 0; i < 20; i++) {
      socket.resume();
      await sleep(20);
      socket.pause();
      await sleep(30);
      peakRss = Math.max(peakRss, process.memoryUsage().rss);
    }
    expect(peakRss - rssBefore).toBeLessThan(96 * 1024 * 1024);
    socket.resume();
    await eventually(() => done, 120_000, 'FLOOD-DONE');
    expect(ys).toBe(FLOOD_BYTES / 2);
    ws.close();
  });
});
