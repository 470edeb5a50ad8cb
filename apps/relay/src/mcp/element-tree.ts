/*
 * The phone's screen as an element tree for a model (issue 40, item 2): refs that name the same element across
 * reads, a short role, the fields an agent acts on, and a compact text. Pure: no Nest, no I/O, no clock.
 *
 * What the phone sends (`/screen`, ScreenReader.kt:180-320 in the reference app): a flat pre-order list of the
 * "interesting" nodes only (text, description or an action, and non-empty bounds), numbered `w<window>:<n>` in
 * emission order, with no parent links. Those numbers shift whenever a node appears above, so they are no
 * identity. The tree is read back from the order and the bounds: a node's parent is the nearest earlier node
 * whose bounds contain its own (pre-order puts a parent before its children, and Android lays a child inside
 * its parent).
 *
 * A ref is a hash of the element's path: each step is its class, its resource id, its name, and, among siblings
 * with the same three, its place (0 for the first). The name is its text, else its description, else (a
 * clickable or long-clickable container with neither) the texts inside it as a screen reader joins them. The
 * text of an editable field is left out of every name (typing into a field must not make it another element).
 * So a ref stays while the element keeps its class, id and name, its containers theirs, and no sibling of the
 * same kind appears before it; bounds, flags, scrolling, window order and the phone's node numbers do not count.
 */

import { ROLE_OF_CLASS, type Role } from './element-roles';

export { ROLES, type Role } from './element-roles';

export type Bounds = { left: number; top: number; right: number; bottom: number };

/** One element as the tree tool gives it (structuredContent; ELEMENT_SCHEMA in element-output.ts). */
export type Element = {
  ref: string;
  role: Role;
  /** The class's short name (`Button`, `RecyclerView`). */
  class: string;
  text: string | null;
  description: string | null;
  /** What names it: its text, else its description, else the texts inside it (a textless clickable container); a field's description only. */
  label: string | null;
  /** The resource id's entry name (`send` of `com.app:id/send`). */
  id: string | null;
  bounds: Bounds;
  clickable: boolean;
  long_clickable: boolean;
  focused: boolean;
  editable: boolean;
  scrollable: boolean;
  selected: boolean;
  enabled: boolean;
  /** Its bounds meet the screen's: an element off screen is listed, but not tapped (scroll it into view). */
  on_screen: boolean;
  /** The ref of the element it lies in, null at the top. */
  parent: string | null;
  depth: number;
  /** The phone's own id of this node in this read (`w0:7`): valid for this screen only. */
  node: string;
};

export type ElementTree = {
  package: string | null;
  elements: Element[];
  /** The phone cut its walk (512 nodes). */
  phone_truncated: boolean;
};

/** Refs: `e` and eight base-32 digits (40 bits of the path's hash). Checked with this before any lookup. */
export const REF_PATTERN = /^e[0-9a-v]{8}$/;

/** A peer's text is cut here before it is hashed, compared or shown (the app caps its own at 2000). */
const MAX_FIELD = 2000;
/** A container's name from the texts inside it stops here (a list row, not a whole list). */
const MAX_LABEL = 200;
/** At most this many nodes are read from one answer (the app sends at most 512). */
export const MAX_PHONE_NODES = 1024;

type Raw = Record<string, unknown>;
type Item = Omit<Element, 'ref' | 'parent' | 'depth' | 'label'> & { parentIndex: number; own: string | null; label: string | null };

/** The phone's `/screen` answer as an element tree. Anything malformed in a node is read as absent, never thrown. */
export function elementTree(body: Readonly<Raw>): ElementTree {
  const rawNodes = Array.isArray(body.nodes) ? (body.nodes as unknown[]).slice(0, MAX_PHONE_NODES) : [];
  const root = boundsOf((body as Raw).rootBounds);
  const items = rawNodes.filter(isObject).map((n, i) => item(n, i, root));
  linkParents(items);
  nameContainers(items);
  const refs = refsOf(items);
  const elements = items.map((it, i): Element => ({
    ref: refs[i],
    role: it.role,
    class: it.class,
    text: it.text,
    description: it.description,
    label: it.label,
    id: it.id,
    bounds: it.bounds,
    clickable: it.clickable,
    long_clickable: it.long_clickable,
    focused: it.focused,
    editable: it.editable,
    scrollable: it.scrollable,
    selected: it.selected,
    enabled: it.enabled,
    on_screen: it.on_screen,
    parent: it.parentIndex >= 0 ? refs[it.parentIndex] : null,
    depth: depthOf(items, i),
    node: it.node,
  }));
  return { package: str(body.packageName), elements, phone_truncated: body.truncated === true };
}

function item(n: Raw, i: number, root: Bounds | null): Item {
  const className = str(n.className) ?? '';
  const editable = n.editable === true;
  const text = str(n.text);
  const description = str(n.contentDescription);
  const bounds = boundsOf(n.bounds) ?? { left: 0, top: 0, right: 0, bottom: 0 };
  const viewId = str(n.viewId) ?? str(n.viewIdResourceName);
  return {
    role: roleOf(className, editable),
    class: className.slice(className.lastIndexOf('.') + 1) || 'View',
    text,
    description,
    id: viewId ? viewId.slice(viewId.lastIndexOf('/') + 1) : null,
    bounds,
    clickable: n.clickable === true,
    long_clickable: n.longClickable === true,
    focused: n.focused === true,
    editable,
    scrollable: n.scrollable === true,
    selected: n.selected === true,
    enabled: n.enabled !== false,
    on_screen: root ? meets(bounds, root) : true,
    node: typeof n.nodeId === 'string' || typeof n.nodeId === 'number' ? String(n.nodeId).slice(0, 64) : String(i),
    parentIndex: -1,
    // A field's own text is what the user typed, not what the field is: its name is its description.
    own: editable ? description : (text ?? description),
    label: editable ? description : (text ?? description),
  };
}

/** A role from the class (the widget's own kind), `input` for anything editable. */
export function roleOf(className: string, editable: boolean): Role {
  if (editable) return 'input';
  const short = className.slice(className.lastIndexOf('.') + 1);
  return ROLE_OF_CLASS.find(([test]) => test(short))?.[1] ?? 'view';
}

/** Parent = the nearest earlier node whose bounds contain this one's (a stack of the open ancestors). */
function linkParents(items: Item[]): void {
  const open: number[] = [];
  items.forEach((it, i) => {
    while (open.length > 0 && !contains(items[open[open.length - 1]].bounds, it.bounds)) open.pop();
    it.parentIndex = open.length > 0 ? open[open.length - 1] : -1;
    open.push(i);
  });
}

/** A textless clickable container is named by the texts inside it, in reading order (as TalkBack reads a row). */
function nameContainers(items: Item[]): void {
  const parts = new Map<number, string[]>();
  items.forEach((it) => {
    const words = it.editable ? it.description : (it.text ?? it.description);
    if (!words) return;
    for (let p = it.parentIndex; p >= 0; p = items[p].parentIndex) {
      const c = items[p];
      if (c.label !== null || !(c.clickable || c.long_clickable)) continue;
      const list = parts.get(p) ?? [];
      if (list.join(', ').length < MAX_LABEL) list.push(words);
      parts.set(p, list);
    }
  });
  for (const [i, list] of parts) {
    const label = list.join(', ').slice(0, MAX_LABEL);
    items[i].label = label;
    items[i].own = label;
  }
}

/**
 * Each node's path, hashed step by step: a step's key is its parent's ref and its own class, id, name and place,
 * so a key stays short however deep the tree (hashing whole paths cost 8 ms for 512 nodes). Two equal refs in
 * one read (a hash collision) give the later one the next hash.
 */
function refsOf(items: Item[]): string[] {
  const refs: string[] = [];
  const seen = new Map<string, number>();
  const used = new Set<string>();
  items.forEach((it, i) => {
    const parent = it.parentIndex >= 0 ? refs[it.parentIndex] : '';
    const sibling = `${parent}\u001e${it.class}\u001f${it.id ?? ''}\u001f${it.own ?? ''}`;
    const place = seen.get(sibling) ?? 0;
    seen.set(sibling, place + 1);
    const key = `${sibling}\u001f${place}`;
    let ref = refOf(key);
    for (let salt = 1; used.has(ref); salt++) ref = refOf(`${key}\u001d${salt}`);
    used.add(ref);
    refs[i] = ref;
  });
  return refs;
}

/** 40 bits of cyrb53 (a fast, well-mixed string hash; no crypto needed: a ref is a name, not a secret) in base 32. */
export function refOf(key: string): string {
  let h1 = 0xdeadbeef;
  let h2 = 0x41c6ce57;
  for (let i = 0; i < key.length; i++) {
    const c = key.charCodeAt(i);
    h1 = Math.imul(h1 ^ c, 2654435761);
    h2 = Math.imul(h2 ^ c, 1597334677);
  }
  h1 = Math.imul(h1 ^ (h1 >>> 16), 2246822507) ^ Math.imul(h2 ^ (h2 >>> 13), 3266489909);
  h2 = Math.imul(h2 ^ (h2 >>> 16), 2246822507) ^ Math.imul(h1 ^ (h1 >>> 13), 3266489909);
  const hi = (h2 >>> 0) & 0xff; // 8 bits of h2 and 32 of h1: 40 bits
  const n = hi * 2 ** 32 + (h1 >>> 0);
  return `e${n.toString(32).padStart(8, '0')}`;
}

function depthOf(items: Item[], i: number): number {
  let d = 0;
  for (let p = items[i].parentIndex; p >= 0; p = items[p].parentIndex) d++;
  return d;
}

const isObject = (v: unknown): v is Raw => typeof v === 'object' && v !== null && !Array.isArray(v);
const str = (v: unknown): string | null => (typeof v === 'string' && v.trim() !== '' ? v.slice(0, MAX_FIELD) : null);

function boundsOf(v: unknown): Bounds | null {
  if (!isObject(v)) return null;
  const [left, top, right, bottom] = [v.left, v.top, v.right, v.bottom].map((x) => (typeof x === 'number' && Number.isFinite(x) ? Math.trunc(x) : 0));
  return { left, top, right, bottom };
}

const contains = (o: Bounds, i: Bounds): boolean => i.left >= o.left && i.top >= o.top && i.right <= o.right && i.bottom <= o.bottom;
const meets = (a: Bounds, b: Bounds): boolean => a.left < b.right && b.left < a.right && a.top < b.bottom && b.top < a.bottom;
