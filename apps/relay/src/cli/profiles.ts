import { parseArgs } from 'node:util';
import * as path from 'node:path';
import { loadConfig } from '../common/config/config';
import { ProfileLayout } from '../profiles/profile-layout';
import { enableRelayPlugin, relayPluginName, relayPluginState, RELAY_PLUGIN } from '../profiles/profile-relay-plugin';
import { CliError, EXIT, line, UsageError, type CliIo } from './io';
import { relayEndpoint, relayRefused, relayUnreachable, requestJson } from './relay-client';

const COMMAND = 'relay profiles';

type Listed = { profile: string; state: string; file: string };
type Enabled = { profile: string; path: string; was: string; changed: boolean; backup?: string; error?: string };

/**
 * `svc relay profiles [list] [--json]` and `svc relay profiles enable (--all | <name>...) [--dry-run] [--json]`
 * (spec 4.13): which profile configs enable the relay's plugin (`plugins.enabled: [svc-relay]`), and
 * adding it. With a relay running, the relay does the write (`POST /relay/profiles/enable` on loopback)
 * so it is recorded in the log (`profile.relay_enabled`) and phones hear of it; with none, the configs
 * are read and written here, and the relay records the new state when it next starts.
 */
export async function profilesCommand(args: string[], io: CliIo): Promise<number> {
  const action = args[0] && !args[0].startsWith('-') ? args[0] : 'list';
  const rest = args[0] === action ? args.slice(1) : args;
  if (action !== 'list' && action !== 'enable') throw new UsageError(`the action is list or enable, not "${action}"`, COMMAND);
  let parsed;
  try {
    parsed = parseArgs({
      args: rest,
      allowPositionals: action === 'enable',
      strict: true,
      options: { json: { type: 'boolean' }, all: { type: 'boolean' }, 'dry-run': { type: 'boolean' } },
    });
  } catch (err) {
    throw new UsageError((err as Error).message, COMMAND);
  }
  const { json, all, 'dry-run': dryRun } = parsed.values;
  if (action === 'list' && (all || dryRun)) throw new UsageError('--all and --dry-run belong to "enable"', COMMAND);
  const names = parsed.positionals;
  if (action === 'enable' && !all && names.length === 0) throw new UsageError('name the profiles to enable, or pass --all', COMMAND);
  if (all && names.length) throw new UsageError('pass --all or profile names, not both', COMMAND);
  for (const n of names) if (!ProfileLayout.validName(n)) throw new UsageError(`"${n}" is not a profile name`, COMMAND);

  const endpoint = relayEndpoint(io.env);
  let running = true;
  let answer: { status: number; body: unknown } | null = null;
  try {
    answer =
      action === 'list'
        ? await requestJson(endpoint, 'GET', '/relay/profiles')
        : await requestJson(
            endpoint,
            'POST',
            '/relay/profiles/enable',
            all ? { all: true, dry_run: Boolean(dryRun) } : { names, dry_run: Boolean(dryRun) },
          );
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ECONNREFUSED' || endpoint.found === 'home') throw relayUnreachable(endpoint, err, io.env);
    running = false;
  }
  if (answer && answer.status !== 200) throw relayRefused(endpoint, answer, io.env, 'the relay refused');

  if (action === 'list') {
    const listed: Listed[] = running ? (answer!.body as { profiles: Listed[] }).profiles : listLocally(io.env);
    if (json) {
      line(io.stdout, JSON.stringify({ plugin: RELAY_PLUGIN, relay_running: running, profiles: listed }));
      return EXIT.ok;
    }
    if (listed.length === 0) {
      line(io.stdout, `no profile configs under ${layoutOf(io.env).svcHome} (the global config.yaml and profiles/<name>/config.yaml)`);
      return EXIT.ok;
    }
    line(io.stdout, `${RELAY_PLUGIN} by profile${running ? '' : ' (read from the files: no relay is running)'}:`);
    const width = Math.max(...listed.map((p) => p.profile.length));
    for (const p of listed) line(io.stdout, `  ${{ enabled: '✓', disabled: '✗' }[p.state] ?? '·'}  ${p.profile.padEnd(width)}  ${p.state}`);
    if (listed.some((p) => p.state !== 'enabled')) line(io.stdout, `\nEnable it everywhere with: svc relay profiles enable --all`);
    return EXIT.ok;
  }

  const results: Enabled[] = running ? (answer!.body as { results: Enabled[] }).results : enableLocally(io.env, all ? [] : names, Boolean(dryRun));
  if (json) {
    line(io.stdout, JSON.stringify({ action: 'enable', dry_run: Boolean(dryRun), relay_running: running, results }));
    return results.some((r) => r.error) ? EXIT.failed : EXIT.ok;
  }
  const verb = dryRun ? 'would enable' : 'enabled';
  for (const r of results) {
    if (r.error) line(io.stderr, `  ${r.profile}: not changed: ${r.error}`);
    else if (r.changed)
      line(io.stdout, `  ${verb} in ${r.profile} (${r.path}; was ${r.was}${r.backup ? `, previous text kept as ${path.basename(r.backup)}` : ''})`);
    else line(io.stdout, `  already enabled in ${r.profile}`);
  }
  if (!results.some((r) => r.changed)) line(io.stdout, `${RELAY_PLUGIN} is already enabled in every profile asked for: nothing to do.`);
  else if (!dryRun)
    line(
      io.stdout,
      running
        ? '\nThe relay recorded the change and told connected phones. Restart the affected agents to load the plugin.'
        : '\nNo relay is running: the files were written here; the relay records their new state when it starts. Restart the affected agents to load the plugin.',
    );
  return results.some((r) => r.error) ? EXIT.failed : EXIT.ok;
}

function layoutOf(env: NodeJS.ProcessEnv): ProfileLayout {
  const config = loadConfig(env);
  return new ProfileLayout(config.svcHome, config.svcConfigPath);
}

function listLocally(env: NodeJS.ProcessEnv): Listed[] {
  const layout = layoutOf(env);
  return layout.names().map((name) => ({ profile: name, state: relayPluginState(layout.configOf(name)), file: layout.configOf(name) }));
}

function enableLocally(env: NodeJS.ProcessEnv, names: string[], dryRun: boolean): Enabled[] {
  const layout = layoutOf(env);
  const known = layout.names();
  const unknown = names.filter((n) => !known.includes(n));
  if (unknown.length) throw new CliError(`no profile ${unknown.map((n) => `"${n}"`).join(', ')} (known: ${known.join(', ') || 'none'})`);
  return (names.length ? names : known).map((name) => {
    try {
      const r = enableRelayPlugin(name, layout.configOf(name), dryRun, relayPluginName(env.RELAY_CLIENT_SPELLING?.trim().toLowerCase()));
      return { profile: name, path: r.file, was: r.was, changed: r.changed, ...(r.backup ? { backup: r.backup } : {}) };
    } catch (err) {
      return { profile: name, path: layout.configOf(name), was: 'absent', changed: false, error: (err as Error).message };
    }
  });
}
