import { applyDecorators } from '@nestjs/common';
import { reportedGitStatus, reportedText } from '@svc/domain';
import type { DesktopActiveEditor, DesktopWorkspace } from '@svc/events';
import { Transform } from 'class-transformer';
import { IsObject, IsOptional, IsString } from '../common/http/validators';

/*
 * The `desktop` channel's context reports from a desktop client, read with readFrame (parse-frame.ts). They
 * are never refused: a text that is not one is none, as the desktop CLI has always been answered. Not here,
 * read by hand in DesktopService for their size: `desktop.status` (up to 256 tool names, the domain's
 * parseDesktopStatus) and `desktop.response` (a tool's whole result, passed back as it came).
 */

/** A reported text of at most `max` characters (reportedText); not a string, or blank: null. */
const Text = (max: number): PropertyDecorator =>
  applyDecorators(
    Transform(({ value }: { value: unknown }) => reportedText(value, max)),
    IsOptional(),
    IsString(),
  );

/** `workspace` (WorkspaceContext v1), kept to the fields the relay shows. */
export class WorkspaceFrame {
  @Text(1024) cwd: string | null = null;
  @Text(1024) git_root: string | null = null;
  @Text(256) git_branch: string | null = null;
  @Text(256) repo_name: string | null = null;
  @Text(128) hostname: string | null = null;
  @Text(32) platform: string | null = null;
  @Text(64) active_shell: string | null = null;

  @Transform(({ value }: { value: unknown }) => reportedGitStatus(value))
  @IsOptional()
  @IsObject()
  git_status_summary: DesktopWorkspace['gitStatus'] = null;

  workspace(): DesktopWorkspace {
    return {
      cwd: this.cwd,
      gitRoot: this.git_root,
      gitBranch: this.git_branch,
      repoName: this.repo_name,
      hostname: this.hostname,
      platform: this.platform,
      activeShell: this.active_shell,
      gitStatus: this.git_status_summary,
    };
  }
}

/** `active_editor` (ActiveEditorHint v1). The command line it may carry is not read: it can hold anything the user typed. */
export class ActiveEditorFrame {
  @Text(32) source: string | null = null;
  @Text(128) editor: string | null = null;
  @Text(1024) cwd: string | null = null;

  activeEditor(): DesktopActiveEditor {
    return { source: this.source ?? 'none', editor: this.editor, cwd: this.cwd };
  }
}
