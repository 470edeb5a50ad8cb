import { useState } from 'react';
import type { ProfileFileView } from '@svc/console-api';
import { Button, Card, Chip, EmptyState, ErrorState, Skeleton } from '@/components/ui';
import { ApiError } from '@/lib/api-client';
import { bytes } from '@/lib/format';
import { useProfileMemory, useProfileSoul } from '../api/get-profile-files';
import { useWriteProfileFile } from '../api/write-profile-file';

/** What an edit started from: the text and the ETag it was read with (null: the file did not exist). */
type Draft = { text: string; base: string; etag: string | null };

/**
 * One profile file, read-only until Edit. Saving sends the ETag the edit started from: if the file
 * changed meanwhile (a phone, another console tab, the agent), the relay refuses it (412) and the
 * operator's text stays in the box, with the way out said plainly.
 */
function FileView({ profile, memory, file }: { profile: string; memory: string | null; file: ProfileFileView }) {
  const write = useWriteProfileFile();
  const [draft, setDraft] = useState<Draft | null>(null);
  const label = memory ?? 'SOUL.md';
  const stale = write.error instanceof ApiError && write.error.code === 'profile.stale';
  const save = () => {
    if (!draft) return;
    write.mutate({ profile, memory, content: draft.text, ifMatch: draft.etag }, { onSuccess: () => setDraft(null) });
  };
  const startOver = () => {
    write.reset();
    setDraft({ text: file.content, base: file.content, etag: file.etag });
  };
  return (
    <section className="profile-file" data-testid={`profile-file-${label}`} aria-label={label}>
      <header className="profile-file-head">
        <span className="mono strong">{file.path}</span>
        <span className="muted small">
          {file.exists ? bytes(file.size_bytes) : 'does not exist yet'}
          {file.truncated ? ` · shown in part (the first ${bytes(file.shown_bytes)})` : ''}
        </span>
        <span className="profile-file-actions">
          {draft ? (
            <>
              <Button
                size="sm"
                onClick={() => {
                  write.reset();
                  setDraft(null);
                }}
              >
                Cancel
              </Button>
              <Button size="sm" variant="primary" busy={write.isPending} disabled={draft.text === draft.base} onClick={save}>
                Save
              </Button>
            </>
          ) : file.truncated ? (
            <Chip
              tone="warn"
              title={`Phones and this page are shown only the first ${bytes(file.shown_bytes)}: a save from either would cut the rest, so a phone's save is refused (409). Raise RELAY_PROFILE_*_MAX_BYTES or edit it on the host.`}
            >
              too large to edit here or on a phone
            </Chip>
          ) : (
            <Button size="sm" onClick={startOver} aria-label={`Edit ${label}`}>
              {file.exists ? 'Edit' : 'Create'}
            </Button>
          )}
        </span>
      </header>
      {draft ? (
        <textarea
          className="profile-editor mono"
          value={draft.text}
          onChange={(e) => setDraft({ ...draft, text: e.target.value })}
          aria-label={`${label} text`}
          spellCheck={false}
          rows={Math.min(24, Math.max(6, draft.text.split('\n').length + 1))}
        />
      ) : file.exists ? (
        <pre className="profile-text">{file.content || <span className="muted">(empty)</span>}</pre>
      ) : null}
      {write.error ? (
        <div className="inline-error" role="alert" data-testid="profile-write-error">
          {stale ? (
            <>
              <strong>{label} changed since you opened it</strong> (a phone, the agent or another tab wrote it). Nothing was written; your text is
              still in the box.{' '}
              <Button size="sm" onClick={startOver}>
                Discard my edit and reload
              </Button>
            </>
          ) : (
            <>Not saved: {write.error instanceof Error ? write.error.message : String(write.error)}</>
          )}
        </div>
      ) : null}
    </section>
  );
}

export function ProfileFiles({ profile }: { profile: string }) {
  const soul = useProfileSoul(profile);
  const memory = useProfileMemory(profile);
  return (
    <Card title={`${profile}: SOUL and memory`} id="profile-files">
      <p className="muted small card-note">
        Read-only until you edit. A save is the same write phones make (<code>PUT /api/profiles/{profile}/…</code>), checked against the version you
        opened, and recorded as <code>profile.file_written</code> with you as the actor (the digest, never the text). Phones are shown each file whole
        up to the relay&apos;s caps (<code>RELAY_PROFILE_SOUL_MAX_BYTES</code>, <code>RELAY_PROFILE_MEMORY_MAX_BYTES</code>
        {soul.data ? `; SOUL.md here: ${bytes(soul.data.soul.shown_bytes)}` : ''}); a phone&apos;s save of a file shown in part is refused, so nothing
        past the cut is lost.
      </p>
      {soul.isError ? <ErrorState what="SOUL.md" error={soul.error} onRetry={() => void soul.refetch()} /> : null}
      {soul.isPending ? <Skeleton lines={3} /> : null}
      {soul.data ? <FileView key={`${profile}/soul`} profile={profile} memory={null} file={soul.data.soul} /> : null}
      <h3 className="profiles-subhead">Memory</h3>
      {memory.isError ? <ErrorState what="memory" error={memory.error} onRetry={() => void memory.refetch()} /> : null}
      {memory.isPending ? <Skeleton lines={3} /> : null}
      {memory.data && memory.data.entries.length === 0 ? (
        <EmptyState title="No memory files">
          The agent keeps notes as <code>.md</code> or <code>.txt</code> files under <code>memories/</code> of the profile.
        </EmptyState>
      ) : null}
      {memory.data?.entries.map((e) => (
        <FileView key={`${profile}/${e.filename}`} profile={profile} memory={e.filename} file={e} />
      ))}
    </Card>
  );
}
