import { bearer, pairPhone, startRelay, type TestRelay } from '../support/harness';

describe('smoke', () => {
  let relay: TestRelay;
  beforeAll(async () => {
    relay = await startRelay();
  });
  afterAll(() => relay.close());

  it('pairs and lists', async () => {
    const h = await (await fetch(`${relay.url}/health`)).json();
    expect(h).toMatchObject({ status: 'ok', clients: 0, sessions: 0 });
    const { phone, token } = await pairPhone(relay);
    const res = await fetch(`${relay.url}/sessions`, { headers: bearer(token) });
    const body = (await res.json()) as { sessions: Array<{ is_current: boolean }> };
    expect(res.status).toBe(200);
    expect(body.sessions).toHaveLength(1);
    expect(body.sessions[0].is_current).toBe(true);
    phone.close();
  });
});
