import {
  isPostgresUrl,
  PgLogSource,
  plural,
  readLogLock,
  schemaVersion,
  SCHEMA_VERSION,
  verifySource,
  verifyLog,
  writerLockHolder,
} from '@svc/events';
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { DoctorCheck } from './doctor-check';

/** The event log of `home` (or of RELAY_EVENT_STORE's database): its chain, and who holds its lock. */
export async function eventLogChecks(home: string, env: NodeJS.ProcessEnv): Promise<DoctorCheck[]> {
  const checks: DoctorCheck[] = [];
  const events = path.join(home, 'relay', 'events');
  if (isPostgresUrl(env.RELAY_EVENT_STORE)) checks.push(...(await postgresLogChecks(env.RELAY_EVENT_STORE.trim())));
  else if (!fs.existsSync(events))
    checks.push({ id: 'log-chain', status: 'warn', summary: `no event log at ${events} yet`, fix: 'it is created by the first "svc relay start"' });
  else {
    try {
      const r = verifyLog(events);
      checks.push(
        r.ok
          ? {
              id: 'log-chain',
              status: 'ok',
              summary: `event log verified: ${plural(r.lastSeq, 'record')} in ${plural(r.segments, 'segment')}${r.tornTailBytes ? `, a torn last line of ${plural(r.tornTailBytes, 'byte')}` : ''}`,
            }
          : {
              id: 'log-chain',
              status: 'error',
              summary: `the event log is broken at seq ${r.seq} (${r.segment}): ${r.reason}`,
              fix: `inspect it with "svc relay events verify --log ${events}"`,
            },
      );
    } catch (err) {
      checks.push({
        id: 'log-chain',
        status: 'error',
        summary: `the event log could not be read (${(err as Error).message.slice(0, 100)})`,
        fix: `check the permissions of ${events}`,
      });
    }
    const holder = readLogLock(events);
    const alive = holder !== null && pidAlive(holder.pid);
    checks.push(
      holder === null
        ? { id: 'lock', status: 'ok', summary: 'no relay holds the event log' }
        : alive
          ? { id: 'lock', status: 'ok', summary: `held by the running relay (pid ${holder.pid} since ${holder.since})` }
          : {
              id: 'lock',
              status: 'warn',
              summary: `a lock from pid ${holder.pid} (not running) is left on the log`,
              fix: 'the next "svc relay start" takes it over and records it',
            },
    );
  }
  return checks;
}

function pidAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** RELAY_EVENT_STORE=postgres://...: the database answers, its schema, the chain, who holds the writer lock. */
async function postgresLogChecks(url: string): Promise<DoctorCheck[]> {
  const source = new PgLogSource(url);
  const checks: DoctorCheck[] = [];
  try {
    const c = await source.connection();
    const version = await schemaVersion(c);
    checks.push(
      version > SCHEMA_VERSION
        ? {
            id: 'log-store',
            status: 'error',
            summary: `${source.location}: schema version ${version}, newer than this relay's ${SCHEMA_VERSION}`,
            fix: 'run the relay version that wrote it',
          }
        : { id: 'log-store', status: 'ok', summary: `PostgreSQL event store ${source.location} (schema ${version || 'not created yet'})` },
    );
    const r = await verifySource(source);
    checks.push(
      r.ok
        ? { id: 'log-chain', status: 'ok', summary: `event log verified: ${plural(r.lastSeq, 'record')} in table svc_relay_events` }
        : {
            id: 'log-chain',
            status: 'error',
            summary: `the event log is broken at seq ${r.seq} (${r.segment}): ${r.reason}`,
            fix: 'inspect it with "svc relay events verify"',
          },
    );
    const holder = await writerLockHolder(c);
    checks.push({
      id: 'lock',
      status: 'ok',
      summary: holder
        ? `held by ${holder.application || `database backend pid ${holder.pid}`}${holder.since ? ` since ${holder.since}` : ''}`
        : 'no relay holds the event log',
    });
  } catch (err) {
    checks.push({
      id: 'log-store',
      status: 'error',
      summary: (err as Error).message.slice(0, 200),
      fix: 'check RELAY_EVENT_STORE (host, port, database, user) and that the server is running',
    });
  } finally {
    await source.close();
  }
  return checks;
}
