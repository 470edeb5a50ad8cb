import type { Ev } from '../event';

/**
 * Named secrets the operator registers for agents to type without seeing them (issue 40, item 3). The
 * value is personal content (personal-fields.ts): sealed in the record under a data key of its own
 * (`secret-<name>:<hour>:<random>`), so forgetting the secret destroys that key (a `personal.forgotten`
 * of scope `secret`) and the record stays in the chain, unreadable. Everything else here is a name.
 */
export type SecretSet = Ev<
  'secret.set',
  {
    /** `[A-Za-z0-9_-]`, 1 to 40 characters (libs/domain secrets.ts). */
    name: string;
    /** Open form only: the record carries it sealed; the forgotten form has null. */
    value: string | null;
    /** A secret of this name existed: its earlier value's keys are destroyed with this event. */
    replaced: boolean;
    /** Open and forgotten forms: the data key the value went under (personal-data.ts). */
    sealedWith?: string;
    forgotten?: true;
  }
>;

export type SecretEvent = SecretSet;
