import { useMemo } from 'react';
import { create } from 'qrcode';

const QUIET = 4;

/**
 * The QR drawn as one SVG path in the page (no image request, no inline markup string), dark modules
 * on white in both themes with the standard 4-module quiet zone, so any scanner reads it.
 */
export function QrCode({ text, size = 264, label }: { text: string; size?: number; label: string }) {
  const { d, n } = useMemo(() => {
    const qr = create(text, { errorCorrectionLevel: 'M' });
    const m = qr.modules;
    let path = '';
    for (let y = 0; y < m.size; y++) {
      let x = 0;
      while (x < m.size) {
        if (!m.data[y * m.size + x]) {
          x++;
          continue;
        }
        const start = x;
        while (x < m.size && m.data[y * m.size + x]) x++;
        path += `M${start + QUIET} ${y + QUIET}h${x - start}v1h${start - x}z`;
      }
    }
    return { d: path, n: m.size + QUIET * 2 };
  }, [text]);
  return (
    <svg
      className="qr"
      width={size}
      height={size}
      viewBox={`0 0 ${n} ${n}`}
      role="img"
      aria-label={label}
      shapeRendering="crispEdges"
      data-testid="pairing-qr"
    >
      <rect width={n} height={n} fill="#ffffff" />
      <path d={d} fill="#000000" />
    </svg>
  );
}
