'use strict';
// The table of bench/side-by-side.js: one row per measure, medians per subject, the relay's ratio to the subject its
// goal names (relay median / that median) with the goal and whether it is met, and its other ratios. Markdown.

const COLUMNS = ['relay', 'node', 'fastify', 'nest', 'files', 'reference'];
const HEADS = {
  relay: 'svc relay',
  node: 'bare node:http + ws',
  fastify: 'bare fastify + ws',
  nest: 'minimal Nest 11',
  files: 'bare Node file server',
  reference: 'reference relay',
};
const SHORT = { node: 'bare ws', fastify: 'fastify', nest: 'Nest', files: 'bare files', reference: 'reference' };

/** The rows: which median, its unit and digits, the goal (relay / `vs` `op` `target`), other ratios shown. */
function rows(o) {
  return [
    { key: 'startMs', name: 'start -> first `/health` 200, ms', digits: 0, goal: { vs: 'nest', op: '<=', target: 1.3 }, also: ['reference'] },
    { key: 'idleMiB', name: 'idle RSS 2 s after start, MiB', digits: 1, goal: { vs: 'nest', op: '<=', target: 1.1 }, also: ['reference'] },
    {
      key: 'settledMiB',
      name: `idle RSS settled (V8's reduce seen, >= ${o.settle} s), MiB`,
      digits: 1,
      goal: { vs: 'nest', op: '<=', target: 1.1 },
      also: ['reference'],
    },
    {
      key: 'healthRps',
      name: `\`GET /health\` req/s (-c ${o.connections}, ${o.duration} s)`,
      digits: 0,
      goal: { vs: 'fastify', op: '>=', target: 0.85 },
      also: ['reference'],
    },
    { key: 'healthCpuUs', name: '`GET /health` server CPU µs/request', digits: 1, goal: { vs: 'fastify' }, also: ['reference'] },
    {
      key: 'rssAfterLoadMiB',
      name: 'RSS after the `/health` load, MiB',
      digits: 1,
      goal: { vs: 'reference', op: '<=', target: 1.5 },
      also: ['fastify'],
    },
    {
      key: 'perSocketKiB',
      name: `RSS per authenticated idle socket (${o.sockets}), KiB`,
      digits: 2,
      goal: { vs: 'node', op: '<=', target: 1.3 },
      also: ['reference'],
    },
    {
      key: 'mediaMBps',
      name: `media, ${o.mediaMb} MiB file, 1 client, MB/s`,
      digits: 0,
      goal: { vs: 'reference', op: '>=', target: 0.9 },
      also: ['files'],
    },
  ];
}

const fmt = (v, digits) =>
  v === undefined || Number.isNaN(v) ? '-' : v.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits });

/** { text: the Markdown table and each row's rounds, ratios: [{measure, vs, ratio, goal, met}] } */
function table(medians, samples, o) {
  const lines = [];
  const ratios = [];
  lines.push(`| measure | ${COLUMNS.map((c) => HEADS[c]).join(' | ')} | relay ratio | goal | met | other ratios |`);
  lines.push(`|${' --- |'.repeat(COLUMNS.length + 5)}`);
  for (const row of rows(o)) {
    const m = medians[row.key] ?? {};
    const ratio = (vs) => (m.relay !== undefined && m[vs] !== undefined ? m.relay / m[vs] : undefined);
    const g = row.goal;
    const r = ratio(g.vs);
    const met = r === undefined || !g.op ? '-' : (g.op === '<=' ? r <= g.target : r >= g.target) ? 'yes' : 'no';
    const goal = g.op ? `${g.op} ${g.target}x ${SHORT[g.vs]}` : '-';
    const others = row.also.filter((k) => ratio(k) !== undefined).map((k) => `${ratio(k).toFixed(2)}x ${SHORT[k]}`);
    ratios.push({ measure: row.key, vs: g.vs, ratio: r ?? null, goal: g.op ? `${g.op} ${g.target}` : null, met: met === '-' ? null : met === 'yes' });
    for (const k of row.also) if (ratio(k) !== undefined) ratios.push({ measure: row.key, vs: k, ratio: ratio(k), goal: null, met: null });
    lines.push(
      `| ${row.name} | ${COLUMNS.map((c) => fmt(m[c], row.digits)).join(' | ')} | ${r === undefined ? '-' : `${r.toFixed(2)}x ${SHORT[g.vs]}`} | ${goal} | ${met} | ${others.join(', ') || '-'} |`,
    );
  }
  if (Object.values(samples).some((bySubject) => Object.values(bySubject).some((xs) => xs.length > 1))) {
    lines.push('', 'rounds (in order):');
    for (const row of rows(o)) {
      const bySubject = samples[row.key] ?? {};
      const cells = COLUMNS.filter((c) => bySubject[c]).map(
        (c) => `${SHORT[c] ?? 'relay'} ${bySubject[c].map((v) => fmt(v, row.digits)).join(' / ')}`,
      );
      if (cells.length) lines.push(`  ${row.key}: ${cells.join('; ')}`);
    }
  }
  return { text: lines.join('\n'), ratios };
}

module.exports = { table };
