import { DomainError } from '@svc/domain';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { pick, readTree, selectors, type ElementCall } from './element-call';
import { byRef, findOne, queryWords, type ElementQuery } from './element-find';
import { boundedTree, elementLine, treeText } from './element-text';
import type { Element, ElementTree } from './element-tree';
import { toolResult } from './mcp-results';
import type { ToolEntry } from './mcp-tool-set';
import { waitFor } from './mcp-wait';

/*
 * The tools that act on elements (issue 40, item 2): android_ui_tree reads the screen as an element tree;
 * android_tap, android_long_press and android_type take a `ref` or a `query` besides their coordinates or node
 * id; android_wait_for polls (mcp-wait.ts). A ref or query is resolved against a fresh read of the screen (a
 * `/screen` command like any other), never a remembered one: the phone's node ids are positions in one read,
 * and acting on an old read is how an agent taps the wrong thing. The action then goes through
 * BridgeService.command as it would over HTTP, with the element's label as the tap's or long press's `text`,
 * so the destructive-word check reads what is pressed.
 */

type Input = Record<string, unknown> & { ref?: string; query?: ElementQuery };

/** The element tools' answer, or null when the call is an ordinary one (no tree, no wait, no ref or query). */
export async function elementCall(tool: ToolEntry, value: Input, c: ElementCall): Promise<CallToolResult | null> {
  if (tool.shape === 'tree') return tree(value, c);
  if (tool.shape === 'wait') return waitFor(value, c);
  if (value.ref === undefined && value.query === undefined) return null;
  if (tool.path === '/tap' || tool.path === '/long_press' || tool.path === '/type') return act(tool.path, value, c);
  return null;
}

async function tree(value: Record<string, unknown>, c: ElementCall): Promise<CallToolResult> {
  const read = await readTree(value, c);
  if (!read.ok) return read.result;
  const max = typeof value.max_elements === 'number' ? Math.min(value.max_elements, c.limits.maxElements) : c.limits.maxElements;
  const view = boundedTree(read.tree, { ...c.limits, maxElements: max });
  return { content: [{ type: 'text', text: treeText(view) }], structuredContent: view };
}

/** A tap, long press or typing on the element a ref or query names. */
async function act(path: '/tap' | '/long_press' | '/type', value: Input, c: ElementCall): Promise<CallToolResult> {
  const others = ['nodeId', 'node_id', 'x', 'y'].filter((k) => value[k] !== undefined);
  if (value.ref !== undefined && value.query !== undefined) throw new DomainError('mcp.bad_target', 'invalid', 'give ref or query, not both');
  if (others.length > 0) throw new DomainError('mcp.bad_target', 'invalid', `give ref or query, or ${others.join('/')}, not both`);
  const read = await readTree(value, c);
  if (!read.ok) return read.result;
  const e = target(read.tree, value);
  const sel = selectors(value);
  let body: Record<string, unknown>;
  const label = e.label ? { text: e.label } : {};
  if (path === '/long_press') {
    const centre = { x: Math.trunc((e.bounds.left + e.bounds.right) / 2), y: Math.trunc((e.bounds.top + e.bounds.bottom) / 2) };
    // The app's long press by node is ACTION_LONG_CLICK, refused by a node that does not take it (reference app,
    // ActionExecutor.kt:544-600): a press at its centre then. A tap by node is a gesture at its centre (BridgeCommandHandler.kt:954-990).
    body = { ...sel, ...(e.long_clickable ? { node_id: e.node } : centre), ...label, ...pick(value, ['duration', 'duration_ms']) };
  } else {
    body = { ...sel, nodeId: e.node, ...label, ...(path === '/tap' ? pick(value, ['duration_ms']) : {}) };
  }
  if (path === '/type') {
    if (!e.editable) throw new DomainError('mcp.not_editable', 'invalid', `${describe(e)} is not a text field: type into an editable element`);
    // The field is focused by tapping it, then typed into: the app types into the focused field, else the first
    // editable one (ActionExecutor.kt:643-690, ScreenReader.kt:550-558), which need not be this one. The focusing
    // tap carries no label: focusing a field acts on nothing ("Confirm password" is no confirmation); the typed text
    // is what /type's check reads.
    const tapped = await c.bridge.command(c.driver, 'POST', '/tap', {}, { ...sel, nodeId: e.node }, c.from);
    if (tapped.status >= 300) return toolResult('json', tapped);
    body = { ...sel, ...pick(value, ['text', 'clearFirst']) };
  }
  const reply = await c.bridge.command(c.driver, 'POST', path, {}, body, c.from);
  if (reply.status >= 300) return toolResult('json', reply);
  return { content: [{ type: 'text', text: `${path.slice(1)} on ${elementLine(e)}\n${JSON.stringify(reply.body)}` }] };
}

/** The one on-screen element a ref or query names, or a refusal that says what to do. */
function target(tree: ElementTree, value: Input): Element {
  if (value.ref !== undefined) {
    const e = byRef(tree, value.ref);
    if (!e)
      throw new DomainError(
        'mcp.stale_ref',
        'conflict',
        `no element ${value.ref} on the screen now: the screen changed since that read (or the ref is from another one). Read it again with android_ui_tree and use a ref from that read`,
      );
    if (!e.on_screen) throw offScreen(e);
    return e;
  }
  const q = value.query!;
  const found = findOne(tree, q);
  if (found.ok) return found.element;
  const shown = found.candidates.slice(0, 5).map((x) => ({ ref: x.ref, role: x.role, label: x.label, on_screen: x.on_screen }));
  switch (found.reason) {
    case 'none':
      throw new DomainError('mcp.no_match', 'not_found', `no element on the screen matches ${queryWords(q)}: read it with android_ui_tree`);
    case 'off_screen':
      throw offScreen(found.candidates[0]);
    case 'ambiguous':
      throw new DomainError(
        'mcp.ambiguous_query',
        'conflict',
        `${found.candidates.length} elements match ${queryWords(q)}: ${shown.map((x) => `${x.ref} ${x.role} "${x.label ?? ''}"`).join('; ')}. Give one's ref, or a narrower query (exact, role)`,
        { candidates: shown },
      );
  }
}

const offScreen = (e: Element) =>
  new DomainError('mcp.off_screen', 'conflict', `${describe(e)} is off screen: scroll it into view (android_scroll), then read the screen again`, {
    ref: e.ref,
  });

const describe = (e: Element): string => `${e.ref} (${e.role}${e.label ? ` "${e.label.slice(0, 80)}"` : ''})`;
