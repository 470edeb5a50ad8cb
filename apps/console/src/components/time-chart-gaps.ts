import type uPlot from 'uplot';

type Values = uPlot.AlignedData[number];

/** Indices of values with no neighbour on either side: a line cannot show them, a point can. */
export function isolated(values: Values): number[] {
  const out: number[] = [];
  const has = (i: number) => i >= 0 && i < values.length && values[i] !== null && values[i] !== undefined;
  for (let i = 0; i < values.length; i++) if (has(i) && !has(i - 1) && !has(i + 1)) out.push(i);
  return out;
}

/**
 * Writes `text` ("no commits") centred in every stretch where no series has a value and the text fits,
 * so a quiet interval reads as quiet, not as a broken chart. Returns how many it wrote (the chart's
 * `data-gap-labels`, for the browser tests).
 */
export function gapLabels(u: uPlot, text: string, palette: { muted: string }): number {
  const times = u.data[0];
  const empty = (i: number) => u.data.slice(1).every((ys) => ys[i] === null || ys[i] === undefined);
  const { ctx } = u;
  const ratio = devicePixelRatio || 1;
  ctx.save();
  // The axes' size (11 CSS px), in the canvas's device pixels.
  ctx.font = `${11 * ratio}px ${getComputedStyle(u.root).fontFamily}`;
  ctx.fillStyle = palette.muted;
  ctx.textAlign = 'center';
  ctx.textBaseline = 'middle';
  const width = ctx.measureText(text).width;
  let written = 0;
  for (let i = 0; i < times.length; i++) {
    if (!empty(i)) continue;
    let j = i;
    while (j + 1 < times.length && empty(j + 1)) j++;
    // The stretch runs from the last value before it to the first after (or the chart's edge).
    const left = i > 0 ? u.valToPos(times[i - 1], 'x', true) : u.bbox.left;
    const right = j + 1 < times.length ? u.valToPos(times[j + 1], 'x', true) : u.bbox.left + u.bbox.width;
    if (right - left >= width + 16 * ratio) {
      ctx.fillText(text, (left + right) / 2, u.bbox.top + u.bbox.height / 2);
      written++;
    }
    i = j;
  }
  ctx.restore();
  return written;
}
