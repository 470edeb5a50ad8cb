import { Controller, Get } from '@nestjs/common';
import { MODULE_METADATA } from '@nestjs/common/constants';
import * as net from 'node:net';
import { ClipboardModule } from '../../apps/relay/src/clipboard/clipboard.module';
import { call } from '../support/http';
import { startRelay, tempHome } from '../support/harness';

/** A controller as a feature might add it, its route missing `@Auth()`. */
@Controller('/unguarded-probe')
class ForgottenAuthController {
  @Get()
  probe() {
    return { ok: true };
  }
}

describe('a route without @Auth() stops start-up before the relay listens', () => {
  it('startup fails naming the route; the port it was given is never bound; the home and its log are left free', async () => {
    const home = tempHome();
    // The port the relay is told to use is held here: a relay that listened before it checked would fail with
    // EADDRINUSE instead of naming the route.
    const holder = net.createServer();
    await new Promise<void>((resolve) => holder.listen(0, '127.0.0.1', resolve));
    const port = (holder.address() as net.AddressInfo).port;
    const controllers = Reflect.getMetadata(MODULE_METADATA.CONTROLLERS, ClipboardModule) as unknown[];
    Reflect.defineMetadata(MODULE_METADATA.CONTROLLERS, [...controllers, ForgottenAuthController], ClipboardModule);
    try {
      await expect(startRelay({ home, env: { RELAY_PORT: String(port) } })).rejects.toThrow(
        'routes without @Auth(): GET /unguarded-probe (every route declares its auth class: apps/relay/src/common/auth/auth.ts)',
      );
    } finally {
      Reflect.defineMetadata(MODULE_METADATA.CONTROLLERS, controllers, ClipboardModule);
      await new Promise((resolve) => holder.close(resolve));
    }
    // The failed start let go of the home and its event log: the next relay on it starts, without the route.
    const relay = await startRelay({ home });
    try {
      expect((await call(relay, 'GET', '/unguarded-probe')).status).toBe(404);
      expect(relay.routes.some((r) => r.url === '/unguarded-probe')).toBe(false);
    } finally {
      await relay.close();
    }
  });
});
