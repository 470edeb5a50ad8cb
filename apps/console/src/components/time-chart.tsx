import { useEffect, useLayoutEffect, useRef, useState } from 'react';
import uPlot, { type AlignedData, type Options } from 'uplot';
import 'uplot/dist/uPlot.min.css';
import { localClock } from '@/lib/format';
import { gapLabels, isolated } from './time-chart-gaps';
import './time-chart.css';

export type ChartSeries = { label: string; values: Array<number | null> };

/** The theme's colours, read from the CSS tokens, so a chart follows light, dark and the toggle. */
type Palette = { text: string; muted: string; grid: string; font: string; lines: string[] };

const LINE_TOKENS = ['--accent', '--info', '--good', '--warn', '--bad', '--muted', '--text'];

function readPalette(): Palette {
  const css = getComputedStyle(document.documentElement);
  const v = (name: string) => css.getPropertyValue(name).trim();
  return {
    text: v('--text'),
    muted: v('--muted'),
    grid: v('--border'),
    font: `11px ${getComputedStyle(document.body).fontFamily}`,
    lines: LINE_TOKENS.map(v),
  };
}

/** The palette, read again when the theme attribute or the OS preference changes. */
function usePalette(): Palette {
  const [palette, setPalette] = useState(readPalette);
  useEffect(() => {
    const update = () => setPalette(readPalette());
    const attr = new MutationObserver(update);
    attr.observe(document.documentElement, { attributes: true, attributeFilter: ['data-theme'] });
    const media = window.matchMedia('(prefers-color-scheme: dark)');
    media.addEventListener('change', update);
    return () => {
      attr.disconnect();
      media.removeEventListener('change', update);
    };
  }, []);
  return palette;
}

const WHOLE_STEPS = [1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000, 10_000, 20_000, 50_000, 100_000];

/** With no cursor on the chart, the legend reads the last sample's values instead of dashes. */
function showNewest(u: uPlot): void {
  const last = u.data[0].length - 1;
  if (u.cursor.idx === null || u.cursor.idx === undefined) {
    if (last >= 0) u.setLegend({ idx: last });
  }
}

/**
 * A small live time-series chart (uPlot on a canvas: axes, grid, legend and hover values are uPlot's own).
 * `times` are epoch seconds; each series has a value per time, null for "nothing then" (a gap, not a zero).
 * The container says what was drawn in `data-series` and `data-points`, read back from the chart itself, and
 * its time axis's labels in `data-time-ticks`.
 */
export function TimeChart({
  times,
  series,
  format,
  height = 170,
  label,
  integer = false,
  gap,
}: {
  times: number[];
  series: ChartSeries[];
  format: (v: number) => string;
  height?: number;
  label: string;
  /** Counts (sockets, messages): y ticks on whole numbers only. */
  integer?: boolean;
  /**
   * What an interval with no value means ("no commits"): written in the quiet stretches and in the legend,
   * and a lone value is drawn as a point (a line needs two).
   */
  gap?: string;
}) {
  const box = useRef<HTMLDivElement>(null);
  const chart = useRef<uPlot | null>(null);
  const palette = usePalette();
  const shape = series.map((s) => s.label).join('\u0000');
  const data: AlignedData = [times, ...series.map((s) => s.values)];
  const latest = useRef({ data, format });
  // Before the effects below, which read the newest data and formatter through it.
  useLayoutEffect(() => {
    latest.current = { data, format };
  });

  // A new chart when the set of lines or the theme changes; otherwise only its data moves (below).
  useEffect(() => {
    const el = box.current;
    if (!el) return;
    const fmt = (v: number | null) => (v === null || v === undefined ? (gap ?? '–') : latest.current.format(v));
    const axis = {
      stroke: palette.muted,
      font: palette.font,
      grid: { stroke: palette.grid, width: 1 },
      ticks: { stroke: palette.grid, width: 1, size: 4 },
    };
    const opts: Options = {
      width: Math.max(200, el.clientWidth),
      height,
      padding: [10, 12, 0, 0],
      cursor: { drag: { x: false, y: false }, points: { size: 6 } },
      // Filled markers in each line's colour; away from the cursor, the legend shows the newest values.
      legend: { show: true, live: true, markers: { fill: (_u, i) => palette.lines[(i - 1) % palette.lines.length] } },
      hooks: {
        setCursor: [showNewest],
        setData: [showNewest],
        draw: gap ? [(u) => (el.dataset.gapLabels = String(gapLabels(u, gap, palette)))] : [],
      },
      scales: { x: { time: true }, y: { range: (_u, _min, max) => [0, max > 0 ? max * 1.15 : 1] } },
      axes: [
        // The reader's clock (12 or 24 h as the browser's locale has it), seconds only when ticks are that close.
        {
          ...axis,
          space: 70,
          values: (_u, splits) => {
            const labels = splits.map((t) => localClock(t * 1000, splits.length > 1 && splits[1] - splits[0] < 60));
            el.dataset.timeTicks = labels.join(' | ');
            return labels;
          },
        },
        {
          ...axis,
          size: 64,
          ...(integer ? { incrs: WHOLE_STEPS } : {}),
          values: (_u, splits) => splits.map((v) => latest.current.format(v)),
        },
      ],
      series: [
        { label: 'time', value: (_u, v) => (v === null ? '–' : localClock(v * 1000)) },
        ...latest.current.data.slice(1).map((_, i) => ({
          label: series[i].label,
          stroke: palette.lines[i % palette.lines.length],
          width: 1.75,
          points: gap
            ? { show: true, size: 6, fill: palette.lines[i % palette.lines.length], filter: (u: uPlot, si: number) => isolated(u.data[si]) }
            : { show: false },
          value: (_u: uPlot, v: number | null) => fmt(v),
        })),
      ],
    };
    const u = new uPlot(opts, latest.current.data, el);
    chart.current = u;
    const resize = new ResizeObserver(() => u.setSize({ width: Math.max(200, el.clientWidth), height }));
    resize.observe(el);
    return () => {
      resize.disconnect();
      u.destroy();
      chart.current = null;
    };
    // `series` is read through `shape`: a chart is rebuilt only when its lines change, not on every sample.
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [shape, palette, height, integer, gap]);

  useEffect(() => {
    const u = chart.current;
    const el = box.current;
    if (!u || !el) return;
    u.setData(data);
    el.dataset.series = String(u.series.length - 1);
    let points = 0;
    for (const ys of u.data.slice(1))
      for (const y of ys as ArrayLike<number | null | undefined> & Iterable<number | null | undefined>) if (y !== null && y !== undefined) points++;
    el.dataset.points = String(points);
  });

  return <div className="time-chart" ref={box} role="group" aria-label={label} data-testid="time-chart" />;
}
