import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { Duplex } from 'node:stream';
import * as tls from 'node:tls';
import pino from 'pino';
import { ManualClock } from '../../apps/relay/src/common/loop/clock';
import { ReachBroker } from '../../apps/relay/src/reach/broker';
import { newId, newToken, tokenSha256 } from '../../apps/relay/src/reach/protocol';
import { startRelay, tempHome, type TestRelay } from '../support/harness';
import { call } from '../support/http';
import { reachClientStream } from '../support/reach-client';

/**
 * Issue 41 item 9: every TLS listener the project runs (Secure Link, directly and inside a Reach stream;
 * the relay's own RELAY_SSL_CERT listener; the Reach broker) negotiates TLS 1.2 only with ECDHE and an
 * AEAD cipher, and TLS 1.3 as it is. Each case is a real handshake by a client that offers exactly one
 * suite, or what a real client offers.
 */

type Where = { host: string; port: number } | { socket: Duplex };

/** One handshake: the suite negotiated, or `refused`. */
function negotiated(where: Where, opts: tls.ConnectionOptions): Promise<string> {
  return new Promise((resolve) => {
    const s = tls.connect({ ...where, servername: undefined, rejectUnauthorized: false, ...opts });
    s.once('secureConnect', () => {
      resolve(`${s.getProtocol()} ${s.getCipher().name}`);
      s.destroy();
    });
    s.once('error', () => resolve('refused'));
  });
}

const TLS12 = { minVersion: 'TLSv1.2', maxVersion: 'TLSv1.2' } as const;

/** What the phone app offers: OkHttp's default spec (MODERN_TLS, its APPROVED_CIPHER_SUITES), as an Android 8 or 9 phone without TLS 1.3 sends it. */
const OKHTTP_MODERN_TLS_12 = [
  'ECDHE-ECDSA-AES128-GCM-SHA256',
  'ECDHE-RSA-AES128-GCM-SHA256',
  'ECDHE-ECDSA-AES256-GCM-SHA384',
  'ECDHE-RSA-AES256-GCM-SHA384',
  'ECDHE-ECDSA-CHACHA20-POLY1305',
  'ECDHE-RSA-CHACHA20-POLY1305',
  'ECDHE-RSA-AES128-SHA',
  'ECDHE-RSA-AES256-SHA',
  'AES128-GCM-SHA256',
  'AES256-GCM-SHA384',
  'AES128-SHA',
  'AES256-SHA',
].join(':');

/**
 * Every suite offered alone at TLS 1.2 (`refused` or what was negotiated), then TLS 1.3 and the real
 * clients' offers: OkHttp's at TLS 1.2, Node's default (the desktop CLI) at TLS 1.2.
 */
async function survey(connect: () => Promise<Where>, suites: string[]): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  for (const suite of suites) out[suite] = await negotiated(await connect(), { ...TLS12, ciphers: suite });
  out['TLS 1.3, default offer'] = await negotiated(await connect(), { minVersion: 'TLSv1.3' });
  out['OkHttp MODERN_TLS at TLS 1.2'] = await negotiated(await connect(), { ...TLS12, ciphers: OKHTTP_MODERN_TLS_12 });
  out['Node default at TLS 1.2'] = await negotiated(await connect(), TLS12);
  return out;
}

const EC_SUITES = {
  refused: ['ECDHE-ECDSA-AES128-SHA', 'ECDHE-ECDSA-AES256-SHA', 'ECDHE-ECDSA-AES128-SHA256', 'ECDHE-ECDSA-AES256-SHA384'],
  accepted: ['ECDHE-ECDSA-AES128-GCM-SHA256', 'ECDHE-ECDSA-AES256-GCM-SHA384', 'ECDHE-ECDSA-CHACHA20-POLY1305'],
};
const RSA_SUITES = {
  refused: ['ECDHE-RSA-AES128-SHA', 'ECDHE-RSA-AES256-SHA', 'ECDHE-RSA-AES128-SHA256', 'AES128-GCM-SHA256', 'AES256-GCM-SHA384', 'AES128-SHA'],
  accepted: ['ECDHE-RSA-AES128-GCM-SHA256', 'ECDHE-RSA-AES256-GCM-SHA384', 'ECDHE-RSA-CHACHA20-POLY1305'],
};

/** What every listener must answer for a certificate of `kind`. */
function expected(kind: { refused: string[]; accepted: string[] }, ecdsa: boolean): Record<string, string | RegExp> {
  return {
    ...Object.fromEntries(kind.refused.map((s) => [s, 'refused'])),
    ...Object.fromEntries(kind.accepted.map((s) => [s, `TLSv1.2 ${s}`])),
    'TLS 1.3, default offer': expect.stringMatching(/^TLSv1\.3 TLS_(AES_128_GCM_SHA256|AES_256_GCM_SHA384|CHACHA20_POLY1305_SHA256)$/),
    'OkHttp MODERN_TLS at TLS 1.2': `TLSv1.2 ECDHE-${ecdsa ? 'ECDSA' : 'RSA'}-AES128-GCM-SHA256`,
    'Node default at TLS 1.2': expect.stringMatching(
      new RegExp(`^TLSv1\\.2 ECDHE-${ecdsa ? 'ECDSA' : 'RSA'}-(AES(128|256)-GCM-SHA(256|384)|CHACHA20-POLY1305)$`),
    ),
  } as Record<string, string | RegExp>;
}

/** A throwaway self-signed certificate for 127.0.0.1 (openssl, as the relay's own identity is made). */
function selfSigned(dir: string, name: string, key: 'ec' | 'rsa'): { cert: string; key: string } {
  const files = { cert: path.join(dir, `${name}.crt`), key: path.join(dir, `${name}.key`) };
  const keyArgs = key === 'ec' ? ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1'] : ['-newkey', 'rsa:2048'];
  execFileSync(
    'openssl',
    [
      'req',
      '-x509',
      ...keyArgs,
      '-nodes',
      '-days',
      '1',
      '-subj',
      `/CN=${name}`,
      '-addext',
      'subjectAltName=IP:127.0.0.1',
      '-keyout',
      files.key,
      '-out',
      files.cert,
    ],
    { stdio: 'pipe' },
  );
  return files;
}

describe('TLS listeners offer TLS 1.2 only with ECDHE and AEAD suites, TLS 1.3 as is (issue 41)', () => {
  const dir = tempHome();
  let broker: ReachBroker;
  let relay: TestRelay;
  let hostId: string;

  beforeAll(async () => {
    const brokerCert = selfSigned(dir, 'broker', 'ec');
    const hostToken = newToken();
    hostId = newId();
    const credentials = path.join(dir, 'credentials.json');
    fs.writeFileSync(credentials, JSON.stringify({ hosts: { [hostId]: { host_token_sha256: tokenSha256(hostToken) } } }));
    broker = new ReachBroker({ credentialsFile: credentials, listen: '127.0.0.1', port: 0, tls: brokerCert, logger: pino({ level: 'silent' }) });
    await broker.start();
    fs.writeFileSync(path.join(dir, 'host-id'), `${hostId}\n`);
    relay = await startRelay({
      env: {
        RELAY_SECURE_LINK_BROKER_HOST_ID_FILE: path.join(dir, 'host-id'),
        RELAY_SECURE_LINK_ENABLED: '1',
        RELAY_SECURE_LINK_HOST: '127.0.0.1',
        RELAY_SECURE_LINK_PORT: '0',
        RELAY_EXPERIMENTAL_REACH_ENABLED: '1',
        RELAY_SECURE_LINK_BROKER_URL: broker.url,
        RELAY_SECURE_LINK_BROKER_CA_FILE: brokerCert.cert,
        RELAY_SECURE_LINK_BROKER_HOST_TOKEN: hostToken,
      },
      reachBackoff: { baseMs: 50, maxMs: 200 },
      clock: new ManualClock(new Date().toISOString()),
    });
    let reach: { state: string; last_error: string | null } = { state: 'connecting', last_error: null };
    while (reach.state !== 'connected' && !reach.last_error) {
      await new Promise((r) => setTimeout(r, 20));
      reach = (await call(relay, 'GET', '/health')).body.secure_link.reach;
    }
  }, 60_000);
  afterAll(async () => {
    await relay.close();
    await broker.close();
  });

  it('Secure Link (its generated EC identity)', async () => {
    const port = Number(new URL((await call(relay, 'GET', '/health')).body.secure_link.url).port);
    const got = await survey(async () => ({ host: '127.0.0.1', port }), [...EC_SUITES.refused, ...EC_SUITES.accepted]);
    expect(got).toEqual(expected(EC_SUITES, true));
  });

  it('Secure Link inside a Reach stream (the connector hands each stream to the same origin)', async () => {
    expect((await call(relay, 'GET', '/health')).body.secure_link.reach).toMatchObject({ state: 'connected', host_id: hostId });
    const ca = fs.readFileSync(path.join(dir, 'broker.crt'), 'utf8');
    const streams: Array<{ ws: { close(): void } }> = [];
    // Each handshake rides its own stream, opened with a fresh single-use bootstrap credential from a new QR.
    const connect = async (): Promise<Where> => {
      const qr = JSON.parse((await call(relay, 'POST', '/pairing/mint', {})).body.qr_payload);
      const cand = qr.endpoints.find((e: { role: string }) => e.role === 'outbound_broker');
      const s = await reachClientStreamOverTls(cand.broker.url, hostId, cand.broker.token, ca);
      streams.push(s);
      return { socket: s.duplex };
    };
    try {
      const got = await survey(connect, [EC_SUITES.refused[0], EC_SUITES.accepted[0]]);
      expect(got).toEqual(expected({ refused: [EC_SUITES.refused[0]], accepted: [EC_SUITES.accepted[0]] }, true));
    } finally {
      for (const s of streams) s.ws.close();
    }
  });

  it('the Reach broker (--tls-cert, an EC certificate)', async () => {
    const port = broker.port;
    const got = await survey(async () => ({ host: '127.0.0.1', port }), [...EC_SUITES.refused, ...EC_SUITES.accepted]);
    expect(got).toEqual(expected(EC_SUITES, true));
  });

  it("the relay's own listener (RELAY_SSL_CERT, an RSA certificate)", async () => {
    const cert = selfSigned(dir, 'relay', 'rsa');
    const direct = await startRelay({ env: { RELAY_SSL_CERT: cert.cert, RELAY_SSL_KEY: cert.key } });
    try {
      const port = Number(new URL(direct.url).port);
      const got = await survey(async () => ({ host: '127.0.0.1', port }), [...RSA_SUITES.refused, ...RSA_SUITES.accepted]);
      expect(got).toEqual(expected(RSA_SUITES, false));
    } finally {
      await direct.close();
    }
  }, 60_000);
});

/** A client stream through a TLS broker: the broker's own certificate is the only trust anchor. */
async function reachClientStreamOverTls(url: string, hostId: string, token: string, ca: string) {
  const s = await reachClientStream(url, hostId, 'bootstrap', token, { ca });
  if ('error' in s) throw new Error(`the broker refused the stream: ${s.error}`);
  return s;
}
