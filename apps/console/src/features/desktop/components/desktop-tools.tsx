import { Chip } from '@/components/ui';

/** A client may serve up to 256 tools: the first few as chips, the rest behind a disclosure. */
const SHOWN = 6;

/** `desktop_read_file` reads better as `read_file` beside its client. */
const short = (tool: string) => tool.replace(/^desktop_/, '');

export function DesktopTools({ tools, computerUse }: { tools: string[]; computerUse: boolean }) {
  if (tools.length === 0) return <span className="muted">none advertised</span>;
  const chips = (list: string[]) =>
    list.map((t) => (
      <span key={t} title={t}>
        <Chip>{short(t)}</Chip>
      </span>
    ));
  return (
    <div data-testid="desktop-tools">
      <div className="muted small">
        {tools.length} tool{tools.length === 1 ? '' : 's'}
        {computerUse ? ' · computer use' : ''}
      </div>
      <div className="chips">{chips(tools.slice(0, SHOWN))}</div>
      {tools.length > SHOWN ? (
        <details className="tools-more">
          <summary className="small">{tools.length - SHOWN} more</summary>
          <div className="chips">{chips(tools.slice(SHOWN))}</div>
        </details>
      ) : null}
    </div>
  );
}
