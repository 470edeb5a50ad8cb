import { useState } from 'react';
import type { ProfileRowView, ProfilesView } from '@svc/console-api';
import { DataTable, type Column } from '@/components/data-table';
import { Ago, Button, Card, Chip, Dialog, EmptyState, ErrorState, InlineError, PageHeader, Skeleton, Stat } from '@/components/ui';
import { bytes } from '@/lib/format';
import { useEnableProfile } from '../api/enable-profile';
import { avatarUrl } from '../api/get-profile-files';
import { useProfiles } from '../api/get-profiles';
import { useRescanProfiles } from '../api/rescan-profiles';
import { ProfileFiles } from './profile-files';

const who = (actor: string) => (actor.startsWith('device:') ? `phone ${actor.slice(7)}` : actor);

function RelayState({ p }: { p: ProfileRowView }) {
  return (
    <>
      {p.relay === 'enabled' ? (
        <Chip tone="good">relay enabled</Chip>
      ) : p.relay === 'disabled' ? (
        <Chip tone="bad" title="Its config lists svc-relay under plugins.disabled">
          relay disabled
        </Chip>
      ) : (
        <Chip tone="warn" title="Its config does not list svc-relay under plugins.enabled: the agent of this profile has no relay tools">
          relay not enabled
        </Chip>
      )}
      <div className="muted small">{p.offered ? 'offered to phones' : p.readable ? 'not offered to phones' : 'config unreadable: not offered'}</div>
    </>
  );
}

function ApiServer({ a }: { a: ProfileRowView['api_server'] }) {
  if (!a.enabled) return <span className="muted">off</span>;
  return (
    <>
      <Chip tone={a.running ? 'good' : 'warn'}>{a.running ? 'running' : 'not running'}</Chip>
      <div className="muted mono small">
        {a.url}
        {a.key_present ? ' · key set' : ' · no key'}
      </div>
    </>
  );
}

function Catalog({ v, open, onOpen }: { v: ProfilesView; open: string | null; onOpen: (name: string) => void }) {
  const enable = useEnableProfile();
  const [confirm, setConfirm] = useState<ProfileRowView | null>(null);
  const columns: Array<Column<ProfileRowView>> = [
    {
      label: 'Profile',
      className: 'col-device',
      render: (p) => (
        <div className="device-cell">
          {p.has_avatar ? (
            <img className="profile-avatar" src={avatarUrl(p.name)} alt="" width={32} height={32} />
          ) : (
            <span className="profile-avatar profile-avatar-none" aria-hidden>
              {p.name[0].toUpperCase()}
            </span>
          )}
          <div>
            <div className="strong">
              {p.name} {p.is_default ? <Chip title="The service home's own config.yaml">service home</Chip> : null}
            </div>
            <div className="muted small">{p.description ?? ''}</div>
          </div>
        </div>
      ),
    },
    {
      label: 'Model',
      render: (p) =>
        p.readable ? (
          <>
            <div className="mono">{p.model}</div>
            <div className="muted small">{p.provider ?? 'provider not named'}</div>
          </>
        ) : (
          <Chip tone="bad">config unreadable</Chip>
        ),
    },
    { label: 'Relay', render: (p) => <RelayState p={p} /> },
    {
      label: 'SOUL · skills',
      render: (p) => (
        <>
          {p.has_soul ? 'SOUL' : <span className="muted">no SOUL</span>} · {p.skill_count === 1 ? '1 skill' : `${p.skill_count} skills`}
        </>
      ),
    },
    { label: 'API server', render: (p) => <ApiServer a={p.api_server} /> },
    {
      label: 'Actions',
      srOnly: true,
      className: 'row-actions',
      render: (p) => (
        <>
          {p.relay === 'enabled' ? null : (
            <Button size="sm" onClick={() => setConfirm(p)} aria-label={`Enable the relay for ${p.name}`}>
              Enable relay
            </Button>
          )}
          <Button
            size="sm"
            variant={open === p.name ? 'primary' : 'default'}
            onClick={() => onOpen(p.name)}
            aria-label={`SOUL and memory of ${p.name}`}
          >
            Files
          </Button>
        </>
      ),
    },
  ];
  return (
    <>
      <DataTable
        testId="profiles-table"
        columns={columns}
        rows={v.profiles}
        rowKey={(p) => p.name}
        rowProps={(p) => ({ 'data-profile': p.name, className: open === p.name ? 'row-selected' : undefined })}
      />
      <InlineError error={enable.error} />
      <Dialog
        open={confirm !== null}
        title={`Enable the relay for ${confirm?.name ?? ''}?`}
        onClose={() => setConfirm(null)}
        footer={
          <>
            <Button onClick={() => setConfirm(null)}>Cancel</Button>
            <Button
              variant="primary"
              busy={enable.isPending}
              onClick={() => confirm && enable.mutate(confirm.name, { onSettled: () => setConfirm(null) })}
            >
              Enable
            </Button>
          </>
        }
      >
        <p>
          Adds <code>svc-relay</code> to <code>plugins.enabled</code> in <code className="mono">{confirm?.config_file}</code>
          {confirm?.relay === 'disabled' ? ' and takes it out of plugins.disabled' : ''}, so this profile&apos;s agent gets the relay&apos;s tools.
          The rest of the file stays as it is; the previous text is kept as <code>config.yaml.bak</code>. Same as{' '}
          <code>svc relay profiles enable {confirm?.name}</code>.
        </p>
      </Dialog>
    </>
  );
}

function ProfilesState({ v }: { v: ProfilesView }) {
  if (!v.discovery)
    return (
      <div className="callout callout-warn" role="status" data-testid="profiles-state">
        <div>
          <strong>Profile discovery is off on this relay.</strong> <code>RELAY_PROFILE_DISCOVERY=0</code>: the relay does not look for profiles and
          phones are offered none. To offer them, unset it (or set it to <code>1</code>) and restart the relay.
        </div>
      </div>
    );
  if (v.profiles.length === 0)
    return (
      <Card title="Catalog">
        <EmptyState title="No profiles on this relay">
          A profile is the service home&apos;s <code>config.yaml</code> (the default one) or a folder <code>profiles/&lt;name&gt;/</code> with its own{' '}
          <code>config.yaml</code>, under <code className="mono">{v.home}</code>. Phones get them as they are found (every 30 s, or Rescan now).
        </EmptyState>
      </Card>
    );
  return null;
}

export function ProfilesPage() {
  const q = useProfiles();
  const rescan = useRescanProfiles();
  const [open, setOpen] = useState<string | null>(null);
  const v = q.data;
  const shown = open !== null && v?.profiles.some((p) => p.name === open) ? open : null;
  return (
    <>
      <PageHeader
        title="Profiles"
        subtitle="The agents phones can talk to, as phones see them: model, SOUL, skills, the API server, and whether each has the relay's tools."
        actions={
          v?.discovery ? (
            <Button size="sm" busy={rescan.isPending} onClick={() => rescan.mutate()}>
              Rescan now
            </Button>
          ) : null
        }
      />
      {q.isError ? <ErrorState what="profiles" error={q.error} onRetry={() => void q.refetch()} /> : null}
      {q.isPending ? <Skeleton lines={6} height={22} /> : null}
      <InlineError error={rescan.error} />
      {v ? (
        <>
          <ProfilesState v={v} />
          {v.profiles.length > 0 ? (
            <>
              <div className="stat-grid" data-testid="profiles-stats">
                <Stat label="Profiles" value={v.profiles.length} hint={<span className="mono">{v.home}</span>} />
                <Stat
                  label="Offered to phones"
                  value={v.offered}
                  hint={
                    <>
                      in auth.ok, updated <Ago at={v.changed_at} never="never" />
                    </>
                  }
                />
                <Stat
                  label="Relay enabled"
                  value={v.profiles.filter((p) => p.relay === 'enabled').length}
                  hint="agents with the relay's tools"
                  tone={v.profiles.some((p) => p.relay !== 'enabled') ? 'warn' : undefined}
                />
              </div>
              <Card title="Catalog">
                <Catalog v={v} open={shown} onOpen={(name) => setOpen(name === shown ? null : name)} />
              </Card>
              {shown ? <ProfileFiles profile={shown} /> : null}
            </>
          ) : null}
          <Card title="Recent profile writes">
            {v.writes.length === 0 && v.enablements.length === 0 ? (
              <EmptyState title="Nothing written through the relay yet">
                SOUL and memory saved by a phone or from here, and relay enablements, show here with who made them (a digest, never the text).
              </EmptyState>
            ) : (
              <ul className="code-list" data-testid="profile-writes">
                {v.writes.map((w) => (
                  <li key={`${w.profile}/${w.file}`}>
                    <span>
                      <span className="strong">{w.profile}</span> <span className="mono">{w.file}</span>
                    </span>
                    <span className="muted small">
                      {bytes(w.bytes)} · sha256 <span className="mono">{w.sha256}</span> · by {who(w.actor)}
                    </span>
                    <span className="code-expiry muted small">
                      <Ago at={w.at} />
                    </span>
                  </li>
                ))}
                {v.enablements.map((x) => (
                  <li key={`enable/${x.profile}`}>
                    <span>
                      <span className="strong">{x.profile}</span> relay enabled
                    </span>
                    <span className="muted small">
                      was {x.was} · by {who(x.actor)}
                    </span>
                    <span className="code-expiry muted small">
                      <Ago at={x.at} />
                    </span>
                  </li>
                ))}
              </ul>
            )}
          </Card>
        </>
      ) : null}
    </>
  );
}
