import { Duplex } from 'node:stream';
import { WebSocket } from 'ws';
import { newId } from '../../apps/relay/src/reach/protocol';

/**
 * A phone's side of Reach (the app's HermesReachTransport, the desktop's BrokerRelaySocket): register
 * with a credential, then raw bytes both ways, as a Duplex a TLS client can run over. `ca`: a `wss://`
 * broker's certificate, when it is its own.
 */
export async function reachClientStream(
  brokerUrl: string,
  hostId: string,
  kind: 'bootstrap' | 'route',
  token: string,
  opts: { ca?: string } = {},
): Promise<{ ws: WebSocket; duplex: Duplex } | { error: string }> {
  const ws = new WebSocket(brokerUrl, { perMessageDeflate: false, ...(opts.ca ? { ca: opts.ca } : {}) });
  await new Promise((r, j) => (ws.once('open', r), ws.once('error', j)));
  ws.send(
    JSON.stringify({ type: 'register', protocol_version: 1, role: 'client', host_id: hostId, connection_id: newId(), credential_kind: kind, token }),
  );
  const first = await new Promise<{ type: string; code?: string }>((r) => ws.once('message', (d) => r(JSON.parse(d.toString()))));
  if (first.type !== 'matched') return { error: first.code ?? first.type };
  const duplex = new Duplex({
    read() {},
    write(chunk: Buffer, _e, cb) {
      ws.send(chunk, { binary: true }, cb);
    },
    final(cb) {
      ws.close();
      cb();
    },
  });
  ws.on('message', (d: Buffer, isBinary) => isBinary && duplex.push(d));
  ws.on('close', () => duplex.push(null));
  return { ws, duplex };
}
