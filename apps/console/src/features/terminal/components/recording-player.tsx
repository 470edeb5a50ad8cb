import { useEffect, useRef } from 'react';
import * as AsciinemaPlayer from 'asciinema-player';
import 'asciinema-player/dist/bundle/asciinema-player.css';
import './recording-player.css';

type Player = ReturnType<typeof AsciinemaPlayer.create>;

/**
 * asciinema-player on one recording, fetched from the relay as the asciicast file itself. Loaded with
 * the first Play only (its own chunk): the player and its terminal emulator are ~300 kB.
 */
export function RecordingPlayer({ url, cols, rows }: { url: string; cols?: number; rows?: number }) {
  const host = useRef<HTMLDivElement>(null);
  useEffect(() => {
    const el = host.current;
    if (!el) return;
    const player: Player = AsciinemaPlayer.create({ url, fetchOpts: { credentials: 'same-origin' } }, el, {
      cols,
      rows,
      fit: 'width',
      preload: true,
      autoPlay: true,
      idleTimeLimit: 2,
      terminalFontSize: 'small',
    });
    return () => player.dispose();
  }, [url, cols, rows]);
  return (
    <div className="recording-player" data-testid="recording-player">
      <div ref={host} />
    </div>
  );
}
