import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { parseArgs } from 'node:util';
import { atomicWrite } from '../common/atomic-write';
import { svcHomeFrom } from '../common/config/config';
import { HOOK_MODULE, hookSource, hookVersion } from '../compat/hook-source';
import { CliError, EXIT, line, UsageError, type CliIo } from './io';

const COMMAND = 'relay compat';
export const PTH_NAME = `${HOOK_MODULE}.pth`;

/** The hook module's place: beside the service home, so removing the `.pth` is all it takes to turn it off. */
export function hookModulePath(env: NodeJS.ProcessEnv): string {
  return path.join(svcHomeFrom(env), 'compat', `${HOOK_MODULE}.py`);
}

/** The one managed `.pth` line: loads the module by path, and does nothing once the module is gone. */
export function pthLine(modulePath: string): string {
  const p = JSON.stringify(modulePath);
  return (
    `import importlib.util, os, sys; p=${p}; ` +
    `s=importlib.util.spec_from_file_location('${HOOK_MODULE}', p) if os.path.exists(p) else None; ` +
    `m=s and importlib.util.module_from_spec(s); m and sys.modules.__setitem__('${HOOK_MODULE}', m); m and s.loader.exec_module(m)\n`
  );
}

/** The agent Python's site-packages directories (SVC_PYTHON, default python3), in its own order. */
export function siteDirs(env: NodeJS.ProcessEnv): string[] {
  const python = env.SVC_PYTHON || 'python3';
  try {
    const out = execFileSync(
      python,
      [
        '-c',
        'import json, site, sys\nd=[p for p in sys.path if p.endswith(("site-packages","dist-packages"))]\ntry: d+=site.getsitepackages()\nexcept Exception: pass\ntry: d.append(site.getusersitepackages())\nexcept Exception: pass\nprint(json.dumps(d))',
      ],
      { encoding: 'utf8', timeout: 10_000, env: { ...env, PYTHONNOUSERSITE: '' } },
    );
    return [...new Set(JSON.parse(out) as string[])];
  } catch (err) {
    throw new CliError(
      `cannot ask ${python} for its site-packages (${(err as Error).message.split('\n')[0]}); set SVC_PYTHON to the agent's python or pass --site-packages DIR`,
    );
  }
}

type PthEntry = { path: string; managed: boolean; references_hook: boolean; module_present: boolean };

function entry(file: string, modulePath: string): PthEntry {
  const text = fs.readFileSync(file, 'utf8');
  return {
    path: file,
    managed: text === pthLine(modulePath),
    references_hook: text.includes(HOOK_MODULE),
    module_present: fs.existsSync(modulePath),
  };
}

/** What is installed where, from the files only (never an HTTP answer): `doctor` reports it the same way. */
export function compatStatus(env: NodeJS.ProcessEnv, only?: string) {
  const modulePath = hookModulePath(env);
  const dirs = only ? [only] : siteDirs(env);
  const files = dirs.map((d) => path.join(d, PTH_NAME)).filter((f) => fs.existsSync(f));
  const current = fs.existsSync(modulePath) && fs.readFileSync(modulePath, 'utf8') === hookSource();
  return {
    schema_version: 1,
    hook: 'svc-relay-compat',
    version: hookVersion(),
    installed: files.length > 0,
    pth_files: files.map((f) => entry(f, modulePath)),
    module: { path: modulePath, present: fs.existsSync(modulePath), current },
    site_dirs: dirs,
    default_site_dir: dirs.find((d) => fs.existsSync(d)) ?? dirs[0] ?? null,
    recommendation:
      'only an API server older than the clients needs it (the app and the desktop probe /v1/capabilities first); it never starts the relay or unlocks relay features',
  };
}

/**
 * `svc relay compat status|install|remove [--all] [--site-packages DIR] [--dry-run] [--force] [--json]`
 * (spec 4.12, 4.13): the compatibility hook for older agent API servers, as a `.pth` in the agent Python's
 * site-packages that loads the hook module kept under `$SVC_HOME/compat/`.
 */
export async function compatCommand(args: string[], io: CliIo): Promise<number> {
  const action = args[0] && !args[0].startsWith('-') ? args[0] : 'status';
  const rest = args[0] === action ? args.slice(1) : args;
  if (!['status', 'install', 'remove'].includes(action)) throw new UsageError(`the action is status, install or remove, not "${action}"`, COMMAND);
  let v;
  try {
    v = parseArgs({
      args: rest,
      strict: true,
      options: {
        json: { type: 'boolean' },
        all: { type: 'boolean' },
        'site-packages': { type: 'string' },
        'dry-run': { type: 'boolean' },
        force: { type: 'boolean' },
      },
    }).values;
  } catch (err) {
    throw new UsageError((err as Error).message, COMMAND);
  }
  if (v.all && action !== 'remove') throw new UsageError('--all belongs to "remove"', COMMAND);
  const only = v['site-packages'] ? path.resolve(v['site-packages']) : undefined;
  const out = (body: Record<string, unknown>, text: string[]) => {
    if (v.json) line(io.stdout, JSON.stringify(body));
    else for (const l of text) line(io.stdout, l);
    return EXIT.ok;
  };

  if (action === 'status') {
    const s = compatStatus(io.env, only);
    return out(s, [
      'svc relay compatibility hook',
      `  installed: ${s.installed ? 'yes' : 'no'}`,
      ...s.pth_files.map(
        (f) => `    ${f.path}${f.managed ? '' : ' (not the managed line)'}${f.module_present ? '' : ' (its module is missing: it does nothing)'}`,
      ),
      `  module: ${s.module.path} (${s.module.present ? (s.module.current ? 'current' : 'another version: install again to update') : 'absent'})`,
      `  ${s.recommendation}`,
    ]);
  }

  const modulePath = hookModulePath(io.env);
  if (action === 'install') {
    const dir = only ?? compatStatus(io.env).default_site_dir;
    if (!dir) throw new CliError('the agent Python has no site-packages directory; pass --site-packages DIR');
    const target = path.join(dir, PTH_NAME);
    const want = pthLine(modulePath);
    const existing = fs.existsSync(target) ? fs.readFileSync(target, 'utf8') : null;
    if (existing !== null && existing !== want && !v.force)
      throw new CliError(`${target} exists with other content; look at it, then run again with --force to replace it`);
    const moduleChanged = !fs.existsSync(modulePath) || fs.readFileSync(modulePath, 'utf8') !== hookSource();
    const changed = existing !== want || moduleChanged;
    if (!v['dry-run'] && changed) {
      fs.mkdirSync(path.dirname(modulePath), { recursive: true, mode: 0o755 });
      if (moduleChanged) atomicWrite(modulePath, hookSource());
      fs.chmodSync(modulePath, 0o644);
      fs.mkdirSync(dir, { recursive: true });
      if (existing !== want) atomicWrite(target, want);
      fs.chmodSync(target, 0o644);
    }
    const verb = v['dry-run'] ? 'would install' : changed ? 'installed' : 'already installed';
    return out({ ok: true, action: 'install', changed, dry_run: Boolean(v['dry-run']), target, module: modulePath }, [
      `Compat hook ${verb}: ${target}`,
      ...(changed && !v['dry-run'] ? ['Restart the agent API server to load it.'] : []),
    ]);
  }

  // remove
  const dirs = only
    ? [only]
    : v.all
      ? compatStatus(io.env).site_dirs
      : [compatStatus(io.env).default_site_dir].filter((d): d is string => Boolean(d));
  const removed: string[] = [];
  const skipped: Array<{ path: string; reason: string }> = [];
  for (const d of dirs) {
    const f = path.join(d, PTH_NAME);
    if (!fs.existsSync(f)) {
      skipped.push({ path: f, reason: 'not_found' });
      continue;
    }
    if (!fs.readFileSync(f, 'utf8').includes(HOOK_MODULE) && !v.force)
      throw new CliError(`${f} does not look like the svc relay compat hook; not removed (--force removes it anyway)`);
    if (!v['dry-run']) fs.unlinkSync(f);
    removed.push(f);
  }
  return out({ ok: true, action: 'remove', changed: removed.length > 0, dry_run: Boolean(v['dry-run']), removed, skipped }, [
    ...(removed.length ? removed.map((f) => `Compat hook ${v['dry-run'] ? 'would remove' : 'removed'}: ${f}`) : ['Compat hook not found.']),
  ]);
}
