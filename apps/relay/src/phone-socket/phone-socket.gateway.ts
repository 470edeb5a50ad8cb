import { OnGatewayConnection, WebSocketGateway } from '@nestjs/websockets';
import type { IncomingMessage } from 'node:http';
import type { WebSocket } from 'ws';
import { PhoneHub } from './phone-hub.service';

/** The multiplexed phone connection at `/ws` (spec 4.1). */
@WebSocketGateway({ path: '/ws' })
export class PhoneSocketGateway implements OnGatewayConnection {
  constructor(private readonly hub: PhoneHub) {}
  handleConnection(client: WebSocket, req: IncomingMessage): void {
    this.hub.accept(client, req);
  }
}

/** The same connection at `/` (older clients). */
@WebSocketGateway({ path: '/' })
export class PhoneSocketRootGateway implements OnGatewayConnection {
  constructor(private readonly hub: PhoneHub) {}
  handleConnection(client: WebSocket, req: IncomingMessage): void {
    this.hub.accept(client, req);
  }
}
