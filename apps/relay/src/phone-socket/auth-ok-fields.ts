import { Injectable } from '@nestjs/common';
import type { Session } from '@svc/domain';
import type { PhoneConnection } from './phone-connection';

/** A phone whose `system/auth` just succeeded, as a module adding to its `auth.ok` sees it. */
export type Admitted = { conn: PhoneConnection; session: Session; sessionToken: string };

/** Fields one module adds to `auth.ok` (none: `{}`). Must not throw: a failure to add is the module's to log. */
export type AuthOkFieldSource = (phone: Admitted) => Record<string, unknown> | Promise<Record<string, unknown>>;

/**
 * What other modules add to a phone's `auth.ok` (the profile catalog's rows, a Reach route credential),
 * in registration order, so the phone socket depends on neither. Registered in their constructors.
 */
@Injectable()
export class AuthOkFields {
  private readonly sources: AuthOkFieldSource[] = [];

  add(source: AuthOkFieldSource): void {
    this.sources.push(source);
  }

  async for(phone: Admitted): Promise<Record<string, unknown>> {
    const out: Record<string, unknown> = {};
    for (const source of this.sources) Object.assign(out, await source(phone));
    return out;
  }
}
