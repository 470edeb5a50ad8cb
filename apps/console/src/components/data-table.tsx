import { Fragment, type HTMLAttributes, type Key, type ReactNode, type TdHTMLAttributes } from 'react';

/** `data-*` attributes the browser tests and the page's own scripts find rows and cells by. */
type DataAttributes = { [name: `data-${string}`]: string | undefined };

export type Column<T> = {
  /** The header, and each cell's label on a narrow screen. */
  label: string;
  /** A header only screen readers see (the row actions); its cells carry no label. */
  srOnly?: boolean;
  render: (row: T) => ReactNode;
  /** The cells' classes. */
  className?: string;
  /** The header's classes (`col-opt`: a column a narrow screen drops). */
  headClassName?: string;
  /** Per-row cell attributes (a `title`, a `data-testid`). */
  cellProps?: (row: T) => TdHTMLAttributes<HTMLTableCellElement> & DataAttributes;
};

/**
 * A table whose columns are written once. On a narrow screen (a phone) every table becomes a list of
 * cards, one per row, each cell a "label: value" line, so nothing needs a sideways scroll. `log` (the
 * event log, bridge commands) keeps dense, clickable rows on a wide screen.
 */
export function DataTable<T>({
  columns,
  rows,
  rowKey,
  testId,
  layout = 'cards',
  rowProps,
  after,
}: {
  columns: Array<Column<T>>;
  rows: readonly T[];
  rowKey: (row: T) => Key;
  testId: string;
  layout?: 'cards' | 'log';
  rowProps?: (row: T) => HTMLAttributes<HTMLTableRowElement> & DataAttributes;
  /** What follows a row (a preview row under it), or null. */
  after?: (row: T) => ReactNode;
}) {
  return (
    <div className="table-wrap">
      <table className={`table responsive ${layout === 'log' ? 'events-table' : ''}`} data-testid={testId}>
        <thead>
          <tr>
            {columns.map((c) => (
              <th key={c.label} scope="col" className={c.headClassName}>
                {c.srOnly ? <span className="sr-only">{c.label}</span> : c.label}
              </th>
            ))}
          </tr>
        </thead>
        <tbody>
          {rows.map((row) => (
            <Fragment key={rowKey(row)}>
              <tr {...rowProps?.(row)}>
                {columns.map((c) => (
                  <td key={c.label} data-label={c.srOnly ? undefined : c.label} className={c.className} {...c.cellProps?.(row)}>
                    {/* One box beside the label when a row is a card (a cell may hold text and blocks). */}
                    {c.srOnly ? c.render(row) : <div className="cell">{c.render(row)}</div>}
                  </td>
                ))}
              </tr>
              {after?.(row)}
            </Fragment>
          ))}
        </tbody>
      </table>
    </div>
  );
}
