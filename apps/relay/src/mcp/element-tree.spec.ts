import { findOne, matching } from './element-find';
import { boundedTree, treeText } from './element-text';
import { elementTree, MAX_PHONE_NODES, REF_PATTERN, refOf, roleOf } from './element-tree';

/*
 * The element tree from a phone's `/screen` answer (issue 40, item 2). Nodes are written as the app sends them
 * (ScreenReader.kt:105-135 in the reference app: flat, pre-order, only the interesting ones, `w0:<n>` ids).
 */

type N = Record<string, unknown>;
const node = (id: number, className: string, b: [number, number, number, number], extra: N = {}): N => ({
  nodeId: `w0:${id}`,
  text: null,
  contentDescription: null,
  className: `android.widget.${className}`,
  viewId: null,
  bounds: { left: b[0], top: b[1], right: b[2], bottom: b[3] },
  clickable: false,
  longClickable: false,
  scrollable: false,
  editable: false,
  focused: false,
  selected: false,
  enabled: true,
  ...extra,
});
const screen = (nodes: N[]) => ({
  packageName: 'com.example.chat',
  rootBounds: { left: 0, top: 0, right: 1080, bottom: 2340 },
  nodes,
  truncated: false,
});
/** A list of conversation rows (a clickable row with no text of its own, a name and a snippet inside), from `top`. */
const rows = (names: Array<[string, string]>, top = 200, first = 1): N[] =>
  names.flatMap(([name, snippet], i) => {
    const t = top + i * 260;
    const id = first + i * 3;
    return [
      node(id, 'LinearLayout', [0, t, 1080, t + 260], { viewId: 'app:id/row', clickable: true }),
      node(id + 1, 'TextView', [240, t + 40, 1040, t + 120], { viewId: 'app:id/name', text: name }),
      node(id + 2, 'TextView', [240, t + 140, 1040, t + 220], { viewId: 'app:id/snippet', text: snippet }),
    ];
  });
const list = (n: N[]) => [node(0, 'RecyclerView', [0, 200, 1080, 2340], { viewId: 'app:id/list', scrollable: true }), ...n];
const refsByLabel = (t: ReturnType<typeof elementTree>) => new Map(t.elements.map((e) => [`${e.role} ${e.label ?? ''}`, e.ref]));

describe('the element tree', () => {
  it('gives each element a role from its class (editable: input), its parent from the bounds, and a ref of the documented shape', () => {
    expect(
      [
        ['android.widget.Button', false],
        ['com.google.android.material.button.MaterialButton', false],
        ['android.widget.ImageButton', false],
        ['android.widget.EditText', false],
        ['android.widget.TextView', true],
        ['androidx.appcompat.widget.SwitchCompat', false],
        ['android.widget.CheckBox', false],
        ['android.widget.ToggleButton', false],
        ['android.widget.ImageView', false],
        ['androidx.recyclerview.widget.RecyclerView', false],
        ['android.widget.LinearLayout', false],
        ['com.example.Custom', false],
      ].map(([c, editable]) => roleOf(c as string, editable as boolean)),
    ).toEqual(['button', 'button', 'button', 'input', 'input', 'switch', 'checkbox', 'toggle', 'image', 'list', 'group', 'view']);
    const t = elementTree(screen(list(rows([['Ada', 'See you at 6']]))));
    const [lst, row, name, snippet] = t.elements;
    expect(row).toMatchObject({ role: 'group', parent: lst.ref, depth: 1, label: 'Ada, See you at 6', text: null, node: 'w0:1', id: 'row' });
    expect(name).toMatchObject({ role: 'text', parent: row.ref, depth: 2, label: 'Ada' });
    expect(snippet.parent).toBe(row.ref);
    expect(lst).toMatchObject({ role: 'list', parent: null, depth: 0, scrollable: true, on_screen: true });
    for (const e of t.elements) expect(e.ref).toMatch(REF_PATTERN);
    expect(new Set(t.elements.map((e) => e.ref)).size).toBe(t.elements.length);
    expect(refOf('x')).toBe(refOf('x'));
    expect(refOf('x')).not.toBe(refOf('y'));
  });

  it('keeps refs across reads: the same screen, a row added above (node ids shift), bounds that move, text typed into a field', () => {
    const before = elementTree(
      screen([
        ...list(
          rows([
            ['Ada', 'See you at 6'],
            ['Alan', 'OK'],
          ]),
        ),
        node(7, 'EditText', [40, 2000, 800, 2120], { viewId: 'app:id/compose', editable: true, clickable: true, contentDescription: 'Message' }),
        node(8, 'Button', [820, 2000, 1040, 2120], { viewId: 'app:id/send', text: 'Send', clickable: true }),
      ]),
    );
    expect(elementTree(screen([])).elements).toEqual([]);
    const again = elementTree(
      screen([
        ...list(
          rows([
            ['Ada', 'See you at 6'],
            ['Alan', 'OK'],
          ]),
        ),
        node(7, 'EditText', [40, 2000, 800, 2120], { viewId: 'app:id/compose', editable: true, clickable: true, contentDescription: 'Message' }),
        node(8, 'Button', [820, 2000, 1040, 2120], { viewId: 'app:id/send', text: 'Send', clickable: true }),
      ]),
    );
    expect(again.elements.map((e) => e.ref)).toEqual(before.elements.map((e) => e.ref));
    // Grace writes: her row comes first, every row moves down, the phone numbers its nodes anew, and the user types.
    const after = elementTree(
      screen([
        ...list(
          rows([
            ['Grace', 'Running late'],
            ['Ada', 'See you at 6'],
            ['Alan', 'OK'],
          ]),
        ),
        node(10, 'EditText', [40, 2000, 800, 2120], {
          viewId: 'app:id/compose',
          editable: true,
          clickable: true,
          contentDescription: 'Message',
          text: 'On my way',
          focused: true,
        }),
        node(11, 'Button', [820, 2000, 1040, 2120], { viewId: 'app:id/send', text: 'Send', clickable: true }),
      ]),
    );
    const was = refsByLabel(before);
    const now = refsByLabel(after);
    for (const k of ['group Ada, See you at 6', 'text Ada', 'group Alan, OK', 'text OK', 'list ', 'input Message', 'button Send']) {
      expect([k, now.get(k)]).toEqual([k, was.get(k)]);
    }
    expect(after.elements.find((e) => e.label === 'Ada')!.node).not.toBe(before.elements.find((e) => e.label === 'Ada')!.node);
    expect(now.get('group Grace, Running late')).toBeDefined();
    expect([...was.values()]).not.toContain(now.get('group Grace, Running late'));
  });

  it('changes a ref when what identifies the element changes (its text, its id, its container’s), and numbers same-kind siblings', () => {
    const base = elementTree(screen([node(0, 'Button', [0, 0, 500, 100], { text: 'Send' })])).elements[0].ref;
    expect(elementTree(screen([node(0, 'Button', [0, 0, 500, 100], { text: 'Sent' })])).elements[0].ref).not.toBe(base);
    expect(elementTree(screen([node(0, 'Button', [0, 0, 500, 100], { text: 'Send', viewId: 'a:id/x' })])).elements[0].ref).not.toBe(base);
    expect(elementTree(screen([node(0, 'TextView', [0, 0, 500, 100], { text: 'Send' })])).elements[0].ref).not.toBe(base);
    // Flags and bounds are not identity.
    expect(elementTree(screen([node(3, 'Button', [10, 900, 400, 1000], { text: 'Send', clickable: true, enabled: false })])).elements[0].ref).toBe(
      base,
    );
    // Two "OK" buttons side by side: each its own ref, the same in the next read.
    const two = () =>
      elementTree(screen([node(0, 'Button', [0, 0, 500, 100], { text: 'OK' }), node(1, 'Button', [500, 0, 1000, 100], { text: 'OK' })]));
    const [a, b] = two().elements;
    expect(a.ref).not.toBe(b.ref);
    expect(two().elements.map((e) => e.ref)).toEqual([a.ref, b.ref]);
    // A row whose snippet changed is another row (its name is the texts inside), and so are its children.
    const r1 = elementTree(screen(list(rows([['Ada', 'See you at 6']]))));
    const r2 = elementTree(screen(list(rows([['Ada', 'Running late']]))));
    expect(r2.elements[1].ref).not.toBe(r1.elements[1].ref);
    expect(r2.elements[2].ref).not.toBe(r1.elements[2].ref);
    expect(r2.elements[0].ref).toBe(r1.elements[0].ref);
  });

  it('reads a hostile answer without throwing: junk nodes, missing bounds, huge texts, too many nodes', () => {
    const huge = 'x'.repeat(100_000);
    const t = elementTree({
      packageName: 42,
      nodes: [
        null,
        7,
        'w0:1',
        [],
        { nodeId: { a: 1 }, text: huge, className: huge, bounds: { left: 'a', top: NaN } },
        { text: 'ok', bounds: 'nope' },
      ],
    });
    expect(t.package).toBeNull();
    expect(t.elements).toHaveLength(2);
    expect(t.elements[0].text!.length).toBe(2000);
    expect(t.elements[0].bounds).toEqual({ left: 0, top: 0, right: 0, bottom: 0 });
    expect(elementTree({ nodes: 'no' }).elements).toEqual([]);
    const many = Array.from({ length: 5000 }, (_, i) => node(i, 'TextView', [0, i, 10, i + 1], { text: `t${i}` }));
    expect(elementTree(screen(many)).elements).toHaveLength(MAX_PHONE_NODES);
  });
});

describe('the tree for a model', () => {
  it('is cut at the limit (off-screen elements first) with a note, each text cut, and one indented line an element', () => {
    const nodes = [
      node(0, 'TextView', [0, 0, 1080, 100], { text: 'Title' }),
      node(1, 'Button', [0, 3000, 500, 3100], { text: 'Below' }),
      node(2, 'Button', [0, 100, 500, 200], { text: 'y'.repeat(500), clickable: true }),
      node(3, 'TextView', [0, 200, 500, 300], { text: 'Last' }),
    ];
    const view = boundedTree(elementTree(screen(nodes)), { maxElements: 3, maxText: 50 });
    expect(view).toMatchObject({ total: 4, shown: 3, cut: true, package: 'com.example.chat' });
    expect(view.elements.map((e) => e.label?.slice(0, 5))).toEqual(['Title', 'yyyyy', 'Last']);
    expect(view.elements[1].text).toBe(`${'y'.repeat(50)}…`);
    const lines = treeText(view).split('\n');
    expect(lines[0]).toBe('com.example.chat: 4 elements');
    expect(lines[2]).toBe(`[${view.elements[1].ref}] button "${'y'.repeat(50)}…" clickable @0,100-500,200`);
    expect(lines.at(-1)).toMatch(/^\(1 more elements not shown: the limit is 3;/);
    const full = boundedTree(elementTree(screen(nodes)), { maxElements: 10, maxText: 50 });
    expect(treeText(full)).toContain('button "Below" offscreen @0,3000-500,3100');
    expect(full.cut).toBe(false);
  });
});

describe('finding an element by query', () => {
  const t = elementTree(
    screen([
      ...list(
        rows([
          ['Ada', 'OK'],
          ['Alan', 'OK'],
        ]),
      ),
      node(7, 'Button', [820, 2000, 1040, 2120], { text: 'Send', clickable: true }),
      node(8, 'TextView', [0, 1000, 500, 1100], { text: 'Send me the file' }),
      node(9, 'Button', [0, 2400, 500, 2500], { text: 'Archive', clickable: true }),
    ]),
  );
  it('matches text or description case-insensitively, whole labels before parts, narrowed by role; several is ambiguous', () => {
    expect(findOne(t, { text: 'send' })).toMatchObject({ ok: true, element: { role: 'button', text: 'Send' } });
    expect(findOne(t, { text: 'send', role: 'text' })).toMatchObject({ ok: true, element: { text: 'Send me the file' } });
    expect(findOne(t, { text: 'ok' })).toMatchObject({ ok: false, reason: 'ambiguous' });
    expect((findOne(t, { text: 'ok' }) as { candidates: unknown[] }).candidates).toHaveLength(2);
    expect(findOne(t, { text: 'ada, ok' })).toMatchObject({ ok: true, element: { role: 'group' } });
    expect(findOne(t, { text: 'me the', exact: true })).toMatchObject({ ok: false, reason: 'none' });
    expect(findOne(t, { text: 'archive' })).toMatchObject({ ok: false, reason: 'off_screen' });
    expect(matching(t, { role: 'list' })).toHaveLength(1);
    // A query is text to look for, never a pattern.
    expect(findOne(t, { text: '.*' })).toMatchObject({ ok: false, reason: 'none' });
  });
});
