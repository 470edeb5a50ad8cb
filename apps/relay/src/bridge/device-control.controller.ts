import { Body, Controller, Get, HttpCode, Inject, Post, Query, Req, Res, type Type } from '@nestjs/common';
import { PARAMTYPES_METADATA } from '@nestjs/common/constants';
import { DEVICE_CONTROL_ROUTES, ROUTE_ALIASES, type Principal } from '@svc/domain';
import type { FastifyReply } from 'fastify';
import { Auth, Caller, type AuthedRequest } from '../common/auth/auth';
import { RELAY_CONFIG, RUNTIME, type Runtime } from '../common/auth/tokens';
import type { RelayConfig } from '../common/config/relay-config';
import { OperatorKey } from '../common/auth/operator-key';
import { BridgeService } from './bridge.service';
import { driverOf, hostTrustOf, type HostTrust } from './driver-of';
import { EventsQuery, ScreenQuery, SelectorOnlyBody, SelectorQuery } from './device-control.dto';
import { DragDto, LongPressDto, PressKeyDto, ScrollDto, SwipeDto, TapDto, TapTextDto, TypeDto, WaitDto } from './device-control-gestures.dto';
import { DescribeNodeDto, DiffScreenDto, FindNodesDto } from './device-control-screen.dto';
import { BroadcastDto, ClipboardSetDto, EventsStreamDto, MediaDto, OpenAppDto, SendIntentDto } from './device-control-apps.dto';
import { CallDto, SearchContactsDto, SendMmsDto, SendSmsDto, ShareMediaDto } from './device-control-messaging.dto';

type Method = 'GET' | 'POST';

/**
 * How each route's input is validated: a query DTO for GET (selectors only where none is named), a body
 * DTO for POST. A POST route without one takes selectors only (`/setup`, `/return_to_svc`: SelectorOnlyBody). The routes
 * themselves come from DEVICE_CONTROL_ROUTES and ROUTE_ALIASES (libs/domain): this table names no route
 * the domain does not (a unit test holds it to that).
 */
export const DEVICE_CONTROL_INPUT: Readonly<Record<string, { query?: Type<object>; body?: Type<object> }>> = {
  'GET /screen': { query: ScreenQuery },
  'GET /events': { query: EventsQuery },
  'POST /diff_screen': { body: DiffScreenDto },
  'POST /find_nodes': { body: FindNodesDto },
  'POST /describe_node': { body: DescribeNodeDto },
  'POST /tap': { body: TapDto },
  'POST /tap_text': { body: TapTextDto },
  'POST /long_press': { body: LongPressDto },
  'POST /drag': { body: DragDto },
  'POST /type': { body: TypeDto },
  'POST /swipe': { body: SwipeDto },
  'POST /scroll': { body: ScrollDto },
  'POST /press_key': { body: PressKeyDto },
  'POST /wait': { body: WaitDto },
  'POST /open_app': { body: OpenAppDto },
  'POST /clipboard': { body: ClipboardSetDto },
  'POST /media': { body: MediaDto },
  'POST /send_intent': { body: SendIntentDto },
  'POST /broadcast': { body: BroadcastDto },
  'POST /events/stream': { body: EventsStreamDto },
  'POST /search_contacts': { body: SearchContactsDto },
  'POST /call': { body: CallDto },
  'POST /send_sms': { body: SendSmsDto },
  'POST /share_media': { body: ShareMediaDto },
  'POST /send_mms': { body: SendMmsDto },
};

/**
 * The 34 Device Control routes of spec 4.9 (and their aliases), at the relay root, each needing a session
 * bearer with an active `bridge` grant. Handlers are made from the domain's route table at load, one per
 * path and method: the route is forwarded under its canonical path, its body or query validated by its
 * DTO, and the phone's answer comes back with its status.
 */
@Controller()
export class DeviceControlController {
  constructor(
    private readonly bridge: BridgeService,
    @Inject(RUNTIME) private readonly runtime: Runtime,
    @Inject(RELAY_CONFIG) config: RelayConfig,
    operatorKey: OperatorKey,
  ) {
    this.host = hostTrustOf(runtime, config, operatorKey);
  }

  /** What makes a request the relay's host (driver-of.ts). */
  private readonly host: HostTrust;

  async go(
    req: AuthedRequest,
    res: FastifyReply,
    caller: Principal,
    method: Method,
    path: string,
    query: object,
    body: object,
  ): Promise<Record<string, unknown>> {
    const r = await this.bridge.command(driverOf(req, caller, this.host), method, path, query, body);
    res.status(r.status).header('Cache-Control', 'no-store');
    return r.body;
  }
}

/** Every (path, method) the relay serves: the canonical routes and each alias with its target's methods. */
export function deviceControlEndpoints(): { path: string; method: Method; canonical: string }[] {
  const out = DEVICE_CONTROL_ROUTES.flatMap((r) => r.methods.map((method) => ({ path: r.path, method, canonical: r.path })));
  for (const [alias, canonical] of Object.entries(ROUTE_ALIASES)) {
    const target = DEVICE_CONTROL_ROUTES.find((r) => r.path === canonical);
    if (!target) throw new Error(`Device Control alias ${alias} names no route (${canonical})`);
    for (const method of target.methods) out.push({ path: alias, method, canonical });
  }
  return out;
}

/** The DTO a route's input is read into (its query for GET, its body for POST): what HTTP and MCP validate with. */
export function deviceControlInput(method: Method, canonical: string): Type<object> {
  const input = DEVICE_CONTROL_INPUT[`${method} ${canonical}`] ?? {};
  return method === 'GET' ? (input.query ?? SelectorQuery) : (input.body ?? SelectorOnlyBody);
}

for (const { path, method, canonical } of deviceControlEndpoints()) {
  const proto = DeviceControlController.prototype as unknown as Record<string, unknown>;
  const name = `${method} ${path}`;
  let paramTypes: unknown[];
  if (method === 'GET') {
    proto[name] = function (this: DeviceControlController, q: object, c: Principal, res: FastifyReply, req: AuthedRequest) {
      return this.go(req, res, c, method, canonical, q, {});
    };
    Query()(proto, name, 0);
    Caller()(proto, name, 1);
    Res({ passthrough: true })(proto, name, 2);
    Req()(proto, name, 3);
    paramTypes = [deviceControlInput(method, canonical), Object, Object, Object];
  } else {
    proto[name] = function (this: DeviceControlController, b: object, q: object, c: Principal, res: FastifyReply, req: AuthedRequest) {
      return this.go(req, res, c, method, canonical, q, b);
    };
    Body()(proto, name, 0);
    Query()(proto, name, 1);
    Caller()(proto, name, 2);
    Res({ passthrough: true })(proto, name, 3);
    Req()(proto, name, 4);
    paramTypes = [deviceControlInput(method, canonical), SelectorQuery, Object, Object, Object];
  }
  Reflect.defineMetadata(PARAMTYPES_METADATA, paramTypes, proto, name);
  const descriptor = Object.getOwnPropertyDescriptor(proto, name)!;
  if (method === 'GET') {
    Get(path)(proto, name, descriptor);
    Auth('paired', 'bridge', { noHead: true })(proto, name, descriptor);
  } else {
    Post(path)(proto, name, descriptor);
    HttpCode(200)(proto, name, descriptor);
    Auth('paired', 'bridge')(proto, name, descriptor);
  }
}
