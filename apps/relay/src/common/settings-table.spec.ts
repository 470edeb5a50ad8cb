import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { loadConfig, svcHomeFrom } from './config/config';
import { ConfigError } from './config/config-env';

/**
 * docs/OPERATING.md "Settings" is the one place a setting's default is written (README, PROTOCOL and the
 * other docs link to it). This spec holds the table to the configuration loader: a default written as a
 * value is the loader's, every variable in the table is one the relay reads, and every variable the loader
 * reads is in the table.
 */
const OPERATING = path.join(__dirname, '..', '..', '..', '..', 'docs', 'OPERATING.md');

/** Read by the CLI, not by loadConfig: where, so a row for them is not a stale one. */
const READ_ELSEWHERE: Record<string, string> = {
  RELAY_LOG_FORMAT: 'apps/relay/src/cli/start.ts',
};

type Row = { variable: string; defaultCell: string; text: string };

function settingsTable(markdown: string): Row[] {
  const section = markdown.split(/^## Settings$/m)[1];
  if (section === undefined) throw new Error('docs/OPERATING.md has no "## Settings" section');
  const lines = section.split('\n');
  const start = lines.findIndex((l) => l.startsWith('| Variable |'));
  const rows: Row[] = [];
  for (const line of lines.slice(start + 2)) {
    if (!line.startsWith('|')) break;
    // Cells split on " | " (a `|` inside a cell is always written `\|`).
    const cells = line.slice(2, -2).split(' | ');
    if (cells.length !== 3) throw new Error(`a settings row with ${cells.length} cells: ${line}`);
    const variable = /^`([A-Z][A-Z0-9_]*)`(?: \(`--[a-z-]+`\))?$/.exec(cells[0])?.[1];
    if (!variable) throw new Error(`a settings row names one variable (and its flag): ${cells[0]}`);
    rows.push({ variable, defaultCell: cells[1], text: line });
  }
  return rows;
}

const rows = settingsTable(fs.readFileSync(OPERATING, 'utf8'));
const HOME = svcHomeFrom({});

/** A default written as a value: one code span, perhaps with a note in parentheses (`1048576` (1 MiB)). */
function literal(cell: string): string | null {
  const m = /^`([^`$]+)`(?: \([^()]*\))?$/.exec(cell);
  if (!m) return null;
  return m[1].replace(/^<svc_home>/, HOME).replace(/^~(?=\/)/, os.homedir());
}

/** Every variable loadConfig reads with an empty environment (what it falls back from). */
function readByLoader(): Set<string> {
  const read = new Set<string>();
  const env = new Proxy({} as NodeJS.ProcessEnv, {
    get(target, key) {
      if (typeof key === 'string') read.add(key);
      return Reflect.get(target, key) as unknown;
    },
  });
  loadConfig(env);
  return read;
}

/** Another value of the same kind: loadConfig either reads it into something else or refuses it. */
function other(value: string): string {
  return /^\d+$/.test(value) ? String(Number(value) + 1) : `${value}-not-the-default`;
}

describe('the settings table (docs/OPERATING.md, Settings) against the configuration loader', () => {
  it('lists each variable once', () => {
    const names = rows.map((r) => r.variable);
    expect(names.length).toBeGreaterThan(80);
    expect(names.filter((n, i) => names.indexOf(n) !== i)).toEqual([]);
  });

  it("writes the code's default wherever it writes the default as a value", () => {
    const base = loadConfig({});
    const checked = rows.filter((r) => literal(r.defaultCell) !== null);
    const wrong = checked
      .filter((r) => {
        try {
          return JSON.stringify(loadConfig({ [r.variable]: literal(r.defaultCell)! })) !== JSON.stringify(base);
        } catch {
          return true;
        }
      })
      .map((r) => `${r.variable}: documented ${r.defaultCell}, which is not what the relay uses when it is unset`);
    expect(wrong).toEqual([]);
    expect(checked.length).toBeGreaterThan(60);
  });

  it('documents only variables the relay reads (a value default: one that changes the configuration)', () => {
    const read = readByLoader();
    const unread = rows.filter((r) => !read.has(r.variable) && !(r.variable in READ_ELSEWHERE)).map((r) => r.variable);
    expect(unread).toEqual([]);
    const base = JSON.stringify(loadConfig({}));
    const inert = rows
      .filter((r) => literal(r.defaultCell) !== null)
      .filter((r) => {
        try {
          return JSON.stringify(loadConfig({ [r.variable]: other(literal(r.defaultCell)!) })) === base;
        } catch (err) {
          if (err instanceof ConfigError) return false;
          throw err;
        }
      })
      .map((r) => r.variable);
    expect(inert).toEqual([]);
  });

  it('holds every variable the configuration loader reads', () => {
    const table = rows.map((r) => r.text).join('\n');
    const missing = [...readByLoader()].filter((name) => !table.includes(`\`${name}\``) && !table.includes(`\`$${name}\``));
    expect(missing).toEqual([]);
  });
});
