import 'reflect-metadata';
import { parseFrame } from '../common/sockets/parse-frame';
import { ActiveEditorFrame, WorkspaceFrame } from './desktop-frames.dto';

/** What a frame reads as: `view(frame)`, or the refusal's code and message as `desktop.error` would carry them. */
function read<T extends object, R>(dto: new () => T, payload: object, view: (f: T) => R): R | { code: string; message: string } {
  const r = parseFrame(dto, payload);
  return r.ok ? view(r.value) : { code: r.error.code, message: r.error.message };
}

describe('desktop frames', () => {
  it('workspace and active_editor: never refused; the fields the relay shows, the command line not read', () => {
    expect(
      read(
        WorkspaceFrame,
        { cwd: '/src/app', git_branch: 'main', git_status_summary: { staged: 1, modified: 2, untracked: 'x', ahead: 1 }, files: [1] },
        (f) => f.workspace(),
      ),
    ).toEqual({
      cwd: '/src/app',
      gitRoot: null,
      gitBranch: 'main',
      repoName: null,
      hostname: null,
      platform: null,
      activeShell: null,
      gitStatus: { staged: 1, modified: 2, untracked: 0, ahead: 1, behind: null },
    });
    expect(read(WorkspaceFrame, { git_status_summary: 'dirty', cwd: 5 }, (f) => f.workspace())).toMatchObject({ cwd: null, gitStatus: null });
    for (const junk of [
      { cwd: [], git_root: {}, hostname: 7, git_status_summary: null },
      { source: 1, editor: false, cwd: null },
    ]) {
      expect(read(WorkspaceFrame, junk, (f) => f.workspace().cwd)).toBeNull();
      expect(read(ActiveEditorFrame, junk, (f) => f.activeEditor().source)).toBe('none');
    }
    expect(read(ActiveEditorFrame, { editor: 'vim', command_line: 'vim secrets.txt' }, (f) => f.activeEditor())).toEqual({
      source: 'none',
      editor: 'vim',
      cwd: null,
    });
  });
});
