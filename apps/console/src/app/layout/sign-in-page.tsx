import { CopyButton } from '@/components/ui';

/**
 * What a browser without the console's cookie sees: how to get a one-time sign-in link. The console is
 * the operator's; a same-host proxy or tunnel would make the whole world "loopback", so the relay asks
 * for a credential, not a position.
 */
export function SignInPage({ reason }: { reason: string | null }) {
  return (
    <main className="sign-in" id="main">
      <div className="sign-in-card card">
        <div className="brand">
          <span className="brand-mark" aria-hidden>
            s
          </span>
          <span className="brand-name">svc relay</span>
        </div>
        <h1>Sign in to the console</h1>
        {reason ? (
          <p className="sign-in-reason" role="alert">
            {reason.charAt(0).toUpperCase() + reason.slice(1)}
          </p>
        ) : null}
        <p>The console is the operator&apos;s. On the machine that runs the relay, as its user, run:</p>
        <div className="sign-in-command">
          <code>svc relay console</code>
          <CopyButton text="svc relay console" />
        </div>
        <p>
          and open the link it prints in a browser on that machine. A link works once, for 15 minutes; <code>svc relay start</code> prints one too
          when it runs in a terminal.
        </p>
        <p className="muted">
          Scripts and tools send the key in <code>$SVC_HOME/relay/operator.key</code> as the <code>X-Operator-Key</code> header instead.
        </p>
      </div>
    </main>
  );
}
