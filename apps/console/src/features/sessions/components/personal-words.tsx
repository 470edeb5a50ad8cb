import { exact } from '@/lib/format';

/** An hour's start (epoch seconds) as "2026-11-20 14:00 UTC". */
export function hourText(s: number): string {
  return `${exact(s * 1000).slice(0, 16)} UTC`;
}

/** Whose content: a paired device's name and prefix, or the host's (Thread messages posted while no phone was subscribed). */
export function DeviceWho({ device, name }: { device: string; name: string | null | undefined }) {
  if (device === 'host')
    return (
      <>
        <div className="strong mono">host</div>
        <div className="muted small">Thread messages posted while no phone was subscribed</div>
      </>
    );
  return (
    <>
      <div className="strong">{name ?? <span className="muted">no longer paired</span>}</div>
      <div className="mono muted small" title="token prefix">
        {device}
      </div>
    </>
  );
}
