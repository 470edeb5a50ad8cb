import { ROLES, type Element, type ElementTree } from './element-tree';

/*
 * The element tree as a tool result (issue 40, item 2): bounded (a screen can hold 512 nodes and 2000-character
 * texts), as structured content with its schema and as a compact text for the model, one line an element:
 *   [ref] role "text" (description) ~"label from the texts inside" #id flags @left,top-right,bottom
 * indented by depth. Pure.
 */

export type TreeLimits = {
  /** RELAY_MCP_TREE_MAX_ELEMENTS (or the call's max_elements, never above it). */
  maxElements: number;
  /** RELAY_MCP_TREE_MAX_TEXT: a text, description or label is cut here. */
  maxText: number;
};

export type TreeView = {
  package: string | null;
  /** Elements the phone sent, and how many are shown. */
  total: number;
  shown: number;
  cut: boolean;
  phone_truncated: boolean;
  elements: Element[];
};

/** Indentation stops growing here (a hostile phone can nest 1000 deep). */
const MAX_INDENT = 12;

/** The tree within the limits: past maxElements, elements off screen go first, then the last in reading order. */
export function boundedTree(tree: ElementTree, limits: TreeLimits): TreeView {
  const all = tree.elements;
  let kept = all;
  if (all.length > limits.maxElements) {
    const onScreen = all.filter((e) => e.on_screen).length;
    let offBudget = Math.max(0, limits.maxElements - onScreen);
    let onBudget = limits.maxElements - offBudget;
    kept = all.filter((e) => (e.on_screen ? onBudget-- > 0 : offBudget-- > 0));
  }
  return {
    package: tree.package,
    total: all.length,
    shown: kept.length,
    cut: kept.length < all.length,
    phone_truncated: tree.phone_truncated,
    elements: kept.map((e) => ({
      ...e,
      text: cut(e.text, limits.maxText),
      description: cut(e.description, limits.maxText),
      label: cut(e.label, limits.maxText),
    })),
  };
}

const FLAGS = [
  ['clickable', 'clickable'],
  ['long_clickable', 'longClickable'],
  ['editable', 'editable'],
  ['scrollable', 'scrollable'],
  ['focused', 'focused'],
  ['selected', 'selected'],
] as const;

/** One line an element, indented by depth; a header, and a closing note when something was cut. */
export function treeText(view: TreeView): string {
  const head = `${view.package ?? 'an unknown app'}: ${view.total} elements${view.phone_truncated ? ' (the phone cut its walk at its limit)' : ''}`;
  const lines = view.elements.map((e) => `${'  '.repeat(Math.min(e.depth, MAX_INDENT))}${elementLine(e)}`);
  if (view.cut)
    lines.push(
      `(${view.total - view.shown} more elements not shown: the limit is ${view.shown}; scroll, or act by query, or read with android_find_nodes)`,
    );
  return [head, ...lines].join('\n');
}

export function elementLine(e: Element): string {
  const parts = [`[${e.ref}]`, e.role];
  if (e.text) parts.push(JSON.stringify(e.text));
  if (e.description && e.description !== e.text) parts.push(`(${e.description})`);
  if (!e.text && !e.description && e.label) parts.push(`~${JSON.stringify(e.label)}`);
  if (e.id) parts.push(`#${e.id}`);
  const flags: string[] = FLAGS.filter(([k]) => e[k]).map(([, word]) => word);
  if (!e.enabled) flags.push('disabled');
  if (!e.on_screen) flags.push('offscreen');
  if (flags.length) parts.push(flags.join(' '));
  const b = e.bounds;
  parts.push(`@${b.left},${b.top}-${b.right},${b.bottom}`);
  return parts.join(' ');
}

function cut(s: string | null, max: number): string | null {
  return s !== null && s.length > max ? `${s.slice(0, max)}…` : s;
}

const BOUNDS = {
  type: 'object',
  properties: { left: { type: 'integer' }, top: { type: 'integer' }, right: { type: 'integer' }, bottom: { type: 'integer' } },
  required: ['left', 'top', 'right', 'bottom'],
};
const nullableString = { type: ['string', 'null'] };

/** One element in structured content (element-tree.ts Element). */
export const ELEMENT_SCHEMA = {
  type: 'object',
  properties: {
    ref: {
      type: 'string',
      pattern: '^e[0-9a-v]{8}$',
      description: 'stable name of this element: pass it as ref to android_tap, android_long_press, android_type, android_wait_for',
    },
    role: { type: 'string', enum: [...ROLES] },
    class: { type: 'string', description: 'the Android class’s short name' },
    text: nullableString,
    description: { ...nullableString, description: 'the content description' },
    label: { ...nullableString, description: 'what names it: its text, else its description, else the texts inside it' },
    id: { ...nullableString, description: 'the resource id’s entry name' },
    bounds: { ...BOUNDS, description: 'phone pixels' },
    clickable: { type: 'boolean' },
    long_clickable: { type: 'boolean' },
    focused: { type: 'boolean' },
    editable: { type: 'boolean' },
    scrollable: { type: 'boolean' },
    selected: { type: 'boolean' },
    enabled: { type: 'boolean' },
    on_screen: { type: 'boolean', description: 'false: scroll it into view before acting on it' },
    parent: { ...nullableString, description: 'the ref of the element it lies in' },
    depth: { type: 'integer', minimum: 0 },
    node: { type: 'string', description: 'the phone’s node id in this read only (android_describe_node)' },
  },
  required: ['ref', 'role', 'text', 'description', 'label', 'bounds', 'clickable', 'focused', 'editable', 'enabled', 'on_screen', 'parent', 'node'],
};

/** android_ui_tree's outputSchema: the bounded tree, or a refusal (`ok: false`: the SDK's client checks errors against it too). */
export const TREE_OUTPUT = {
  type: 'object' as const,
  properties: {
    package: nullableString,
    total: { type: 'integer', minimum: 0, description: 'elements the phone sent' },
    shown: { type: 'integer', minimum: 0 },
    cut: { type: 'boolean', description: 'true: more elements than the limit; those off screen were left out first' },
    phone_truncated: { type: 'boolean' },
    elements: { type: 'array', items: ELEMENT_SCHEMA },
    ok: { type: 'boolean' },
  },
  anyOf: [{ required: ['total', 'shown', 'cut', 'elements'] }, { required: ['ok'], properties: { ok: { const: false } } }],
};
