import { IconTerminal } from '@/components/icons';
import type { ConsoleFeature } from '@/lib/feature';
import { recordingsKey } from './api/get-recordings';
import { terminalKey } from './api/get-terminal';
import { TerminalPage } from './components/terminal-page';

export const terminalFeature: ConsoleFeature = {
  id: 'terminal',
  path: '/terminal',
  title: 'Terminal',
  icon: IconTerminal,
  Page: TerminalPage,
  invalidate: [
    { on: ['terminal.', 'tui.', 'relay.started'], queryKey: terminalKey },
    { on: ['terminal.recording_saved', 'terminal.recording_removed'], queryKey: recordingsKey },
  ],
};
