import * as fs from 'node:fs';
import { envNumber, PORT } from '../common/config/config-env';
import { DEFAULT_PORT } from '../common/config/hosts';
import { PhoneSim, type ConfirmPolicy } from '../../../phone-sim/src/phone-sim';

const USAGE = `usage: svc phone-sim --relay ws://127.0.0.1:8767 (--code ABC123 | --token <session token>)
         [--mode legacy|app] [--confirm allow|deny|ignore] [--name NAME] [--device-id ID] [--master on|off]
         [--no-device-control] [--current-app PACKAGE] [--trust send,pay] [--auto-disable MINUTES] [--screen WxH] [--save-token FILE] [--quiet]

A simulated sideload phone for the bridge: pairs, reports bridge.status, answers every Device Control
route with plausible data, answers destructive-verb confirmations by --confirm, and logs what it receives.
--mode app behaves like the real Android app (docs/COMPATIBILITY.md): nested status every 30 s, its own
confirmation modal, blocklist and idle expiry (--auto-disable, 5-120 min, default 30), uploaded screenshots;
it answers bridge.command only (bridge.confirm and bridge.master_disabled are dropped, as the app drops them).`;

/** `svc phone-sim …`: runs until the socket closes or the process is interrupted. Returns an exit code. */
export async function runPhoneSim(argv: string[], out: (line: string) => void = (l) => process.stdout.write(`${l}\n`)): Promise<number> {
  const flags = new Map<string, string>();
  const switches = new Set<string>();
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === '--help' || a === '-h') {
      out(USAGE);
      return 0;
    }
    if (a === '--no-device-control' || a === '--quiet') {
      switches.add(a);
      continue;
    }
    if (!a.startsWith('--') || i + 1 >= argv.length) {
      out(`phone-sim: unexpected argument "${a}"\n${USAGE}`);
      return 2;
    }
    flags.set(a.slice(2), argv[++i]);
  }
  let relay = flags.get('relay');
  try {
    relay ??= `ws://127.0.0.1:${envNumber(process.env, 'RELAY_PORT', { ...PORT, default: DEFAULT_PORT.relay })}`;
  } catch (err) {
    out(`phone-sim: ${(err as Error).message}`);
    return 2;
  }
  const confirm = (flags.get('confirm') ?? 'allow') as ConfirmPolicy;
  if (!['allow', 'deny', 'ignore'].includes(confirm)) {
    out('phone-sim: --confirm must be allow, deny or ignore');
    return 2;
  }
  const mode = flags.get('mode') ?? 'legacy';
  if (mode !== 'legacy' && mode !== 'app') {
    out('phone-sim: --mode must be legacy or app');
    return 2;
  }
  if (!flags.get('code') && !flags.get('token')) {
    out(`phone-sim: give --code (first pairing) or --token (reconnect)\n${USAGE}`);
    return 2;
  }
  const autoDisable = flags.has('auto-disable') ? Number(flags.get('auto-disable')) : null;
  if (autoDisable !== null && (!Number.isFinite(autoDisable) || autoDisable < 0)) {
    out('phone-sim: --auto-disable must be a number of minutes (0: never)');
    return 2;
  }
  // --screen 1440x3120: full-size screenshots at that size (issue 40), as a real phone's.
  const screenArg = flags.get('screen');
  const screenMatch = screenArg === undefined ? null : /^(\d{1,4})x(\d{1,4})$/.exec(screenArg);
  if (screenArg !== undefined && (!screenMatch || Number(screenMatch[1]) < 1 || Number(screenMatch[2]) < 1)) {
    out('phone-sim: --screen must be WIDTHxHEIGHT in pixels, e.g. 1440x3120');
    return 2;
  }
  const quiet = switches.has('--quiet');
  const sim = new PhoneSim({
    relayUrl: relay,
    mode,
    code: flags.get('code'),
    token: flags.get('token'),
    confirm,
    deviceName: flags.get('name') ?? 'Phone simulator',
    deviceId: flags.get('device-id'),
    masterEnabled: (flags.get('master') ?? 'on') !== 'off',
    deviceControlSupported: !switches.has('--no-device-control'),
    currentApp: flags.get('current-app'),
    trustedVerbs: flags
      .get('trust')
      ?.split(',')
      .map((v) => v.trim())
      .filter(Boolean),
    autoDisableMinutes: autoDisable,
    ...(screenMatch ? { screen: { width: Number(screenMatch[1]), height: Number(screenMatch[2]) } } : {}),
    log: quiet ? undefined : (line) => out(`[phone-sim] ${line}`),
  });
  try {
    await sim.start();
  } catch (err) {
    out(`phone-sim: ${(err as Error).message}`);
    return 1;
  }
  // The token is a secret: never printed, only written (0600) where the operator asked.
  const save = flags.get('save-token');
  if (save && sim.token) fs.writeFileSync(save, `${sim.token}\n`, { mode: 0o600 });
  const stop = () => sim.stop();
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
  const code = await sim.closed;
  process.off('SIGINT', stop);
  process.off('SIGTERM', stop);
  return code === 1000 || code === 1005 ? 0 : 1;
}
