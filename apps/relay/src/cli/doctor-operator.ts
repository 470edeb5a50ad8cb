import * as fs from 'node:fs';
import * as path from 'node:path';
import type { DoctorCheck } from './doctor-check';

/**
 * The operator key (present and private), and what RELAY_LOOPBACK_TRUST leaves to any loopback caller: with
 * the default `loopback`, the platform routes the host tools call (pairing register and mint, notifications,
 * Threads, bridge status...) answer anyone a same-host proxy or tunnel forwards. Something listening on 80 or
 * 443 here is most likely such a proxy.
 */
export function operatorChecks(home: string, env: NodeJS.ProcessEnv, listening: ReadonlySet<number>): DoctorCheck[] {
  const out: DoctorCheck[] = [];
  const file = path.join(home, 'relay', 'operator.key');
  try {
    const mode = fs.statSync(file).mode & 0o777;
    out.push(
      mode & 0o077
        ? {
            id: 'operator-key',
            status: 'warn',
            summary: `${file} is readable by others (mode ${mode.toString(8)}): whoever reads it is the operator`,
            fix: `chmod 600 ${file}`,
          }
        : {
            id: 'operator-key',
            status: 'ok',
            summary: `the operator key is ${file} (mode ${mode.toString(8)}): the console, the CLI and operator routes need it`,
          },
    );
  } catch {
    out.push({
      id: 'operator-key',
      status: 'warn',
      summary: `no operator key at ${file} yet`,
      fix: 'the first "svc relay start" with this SVC_HOME makes it',
    });
  }
  const trust = (env.RELAY_LOOPBACK_TRUST ?? '').trim().toLowerCase() || 'loopback';
  const proxy = [80, 443].filter((p) => listening.has(p));
  if (trust === 'key')
    out.push({ id: 'loopback-trust', status: 'ok', summary: 'RELAY_LOOPBACK_TRUST=key: every route needs the operator key or a paired bearer' });
  else if (proxy.length > 0)
    out.push({
      id: 'loopback-trust',
      status: 'warn',
      summary: `something listens on port ${proxy.join(' and ')} here, and RELAY_LOOPBACK_TRUST=loopback: a reverse proxy or tunnel on this host that forwards without X-Forwarded-For lets anyone reach the host tools' platform routes (mint and register pairing codes, read notifications, post Threads)`,
      fix: 'set RELAY_LOOPBACK_TRUST=key (host tools then need MOBILE_BRIDGE_TOKEN/PHONE_RELAY_TOKEN), or have the proxy send X-Forwarded-For so the relay sees a remote caller',
    });
  else
    out.push({
      id: 'loopback-trust',
      status: 'ok',
      summary: "RELAY_LOOPBACK_TRUST=loopback: the host tools' platform routes answer any caller on this host; operator routes need the key",
    });
  return out;
}

/** TCP ports something on this host listens on, from /proc/net/tcp and tcp6 (empty where there is no /proc). */
export function listeningPorts(): Set<number> {
  const ports = new Set<number>();
  for (const f of ['/proc/net/tcp', '/proc/net/tcp6']) {
    let text = '';
    try {
      text = fs.readFileSync(f, 'utf8');
    } catch {
      continue;
    }
    for (const row of text.split('\n').slice(1)) {
      const cols = row.trim().split(/\s+/);
      // local_address is HEXIP:HEXPORT; state 0A is LISTEN.
      if (cols.length > 3 && cols[3] === '0A') ports.add(parseInt(cols[1].slice(cols[1].lastIndexOf(':') + 1), 16));
    }
  }
  return ports;
}
