/**
 * A describe block that needs something of the machine (a Debian package, root, a kernel feature). `missing`
 * is null when it is all there, else why not. Off CI the block is skipped with that reason on stderr; with
 * CI=true (`.ci/run`, which installs the packages) the reason is a failing test instead, so a machine that
 * lacks it can never pass silently.
 */
export function describeWith(missing: string | null, name: string, body: () => void): void {
  if (missing === null) return describe(name, body);
  if (process.env.CI === 'true' || process.env.CI === '1') {
    describe(name, () => it('has what it needs on this machine', () => expect(missing).toBeNull()));
    return;
  }
  console.warn(`skipped "${name}": ${missing}`);
  describe.skip(name, body);
}
