import { Body, Controller, Get, HttpCode, Post, Query, Req, Res } from '@nestjs/common';
import type { Principal } from '@svc/domain';
import { DomainError } from '@svc/domain';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { Auth, Caller } from '../common/auth';
import { BridgeService } from './bridge.service';
import * as D from './device-control.dto';

type Reply = FastifyReply;

/**
 * The 34 Device Control routes of spec 4.9, at the relay root, each needing a session bearer with an
 * active `bridge` grant. Bodies are validated by the DTOs; the phone's answer comes back with its status.
 */
@Controller()
export class DeviceControlController {
  constructor(private readonly bridge: BridgeService) {}

  private async go(
    res: Reply,
    caller: Principal,
    method: 'GET' | 'POST',
    path: string,
    query: object,
    body: object,
  ): Promise<Record<string, unknown>> {
    const r = await this.bridge.command(caller, method, path, query, body);
    res.status(r.status).header('Cache-Control', 'no-store');
    return r.body;
  }

  // core
  @Get('/ping')
  @Auth('paired', 'bridge', { noHead: true })
  ping(@Query() q: D.SelectorQuery, @Caller() c: Principal, @Res({ passthrough: true }) res: Reply) {
    return this.go(res, c, 'GET', '/ping', q, {});
  }

  @Post('/setup')
  @Auth('paired', 'bridge')
  @HttpCode(200)
  setup(@Req() req: FastifyRequest, @Query() q: D.SelectorQuery, @Caller() c: Principal, @Res({ passthrough: true }) res: Reply) {
    return this.go(res, c, 'POST', '/setup', q, selectorsOnly(req.body));
  }

  @Get('/current_app')
  @Auth('paired', 'bridge', { noHead: true })
  currentApp(@Query() q: D.SelectorQuery, @Caller() c: Principal, @Res({ passthrough: true }) res: Reply) {
    return this.go(res, c, 'GET', '/current_app', q, {});
  }

  @Post('/return_to_svc')
  @Auth('paired', 'bridge')
  @HttpCode(200)
  returnToSvc(@Req() req: FastifyRequest, @Query() q: D.SelectorQuery, @Caller() c: Principal, @Res({ passthrough: true }) res: Reply) {
    return this.go(res, c, 'POST', '/return_to_svc', q, selectorsOnly(req.body));
  }

  @Get('/return_to_svc')
  @Auth('paired', 'bridge', { noHead: true })
  returnToSvcGet(@Query() q: D.SelectorQuery, @Caller() c: Principal, @Res({ passthrough: true }) res: Reply) {
    return this.go(res, c, 'GET', '/return_to_svc', q, {});
  }

  @Post('/return_to_hermes')
  @Auth('paired', 'bridge')
  @HttpCode(200)
  returnToHermes(@Req() req: FastifyRequest, @Query() q: D.SelectorQuery, @Caller() c: Principal, @Res({ passthrough: true }) res: Reply) {
    return this.go(res, c, 'POST', '/return_to_svc', q, selectorsOnly(req.body));
  }

  @Get('/return_to_hermes')
  @Auth('paired', 'bridge', { noHead: true })
  returnToHermesGet(@Query() q: D.SelectorQuery, @Caller() c: Principal, @Res({ passthrough: true }) res: Reply) {
    return this.go(res, c, 'GET', '/return_to_svc', q, {});
  }

  // read
  @Get('/screen')
  @Auth('paired', 'bridge', { noHead: true })
  screen(@Query() q: D.ScreenQuery, @Caller() c: Principal, @Res({ passthrough: true }) res: Reply) {
    return this.go(res, c, 'GET', '/screen', q, {});
  }

  @Get('/screen_hash')
  @Auth('paired', 'bridge', { noHead: true })
  screenHash(@Query() q: D.SelectorQuery, @Caller() c: Principal, @Res({ passthrough: true }) res: Reply) {
    return this.go(res, c, 'GET', '/screen_hash', q, {});
  }

  @Post('/diff_screen')
  @Auth('paired', 'bridge')
  @HttpCode(200)
  diffScreen(@Body() b: D.DiffScreenDto, @Query() q: D.SelectorQuery, @Caller() c: Principal, @Res({ passthrough: true }) res: Reply) {
    return this.go(res, c, 'POST', '/diff_screen', q, b);
  }

  @Post('/find_nodes')
  @Auth('paired', 'bridge')
  @HttpCode(200)
  findNodes(@Body() b: D.FindNodesDto, @Query() q: D.SelectorQuery, @Caller() c: Principal, @Res({ passthrough: true }) res: Reply) {
    return this.go(res, c, 'POST', '/find_nodes', q, b);
  }

  @Post('/describe_node')
  @Auth('paired', 'bridge')
  @HttpCode(200)
  describeNode(@Body() b: D.DescribeNodeDto, @Query() q: D.SelectorQuery, @Caller() c: Principal, @Res({ passthrough: true }) res: Reply) {
    return this.go(res, c, 'POST', '/describe_node', q, b);
  }

  @Get('/screenshot')
  @Auth('paired', 'bridge', { noHead: true })
  screenshot(@Query() q: D.SelectorQuery, @Caller() c: Principal, @Res({ passthrough: true }) res: Reply) {
    return this.go(res, c, 'GET', '/screenshot', q, {});
  }

  @Get('/get_apps')
  @Auth('paired', 'bridge', { noHead: true })
  getApps(@Query() q: D.SelectorQuery, @Caller() c: Principal, @Res({ passthrough: true }) res: Reply) {
    return this.go(res, c, 'GET', '/get_apps', q, {});
  }

  @Get('/apps')
  @Auth('paired', 'bridge', { noHead: true })
  apps(@Query() q: D.SelectorQuery, @Caller() c: Principal, @Res({ passthrough: true }) res: Reply) {
    return this.go(res, c, 'GET', '/get_apps', q, {});
  }

  // act
  @Post('/tap')
  @Auth('paired', 'bridge')
  @HttpCode(200)
  tap(@Body() b: D.TapDto, @Query() q: D.SelectorQuery, @Caller() c: Principal, @Res({ passthrough: true }) res: Reply) {
    return this.go(res, c, 'POST', '/tap', q, b);
  }

  @Post('/tap_text')
  @Auth('paired', 'bridge')
  @HttpCode(200)
  tapText(@Body() b: D.TapTextDto, @Query() q: D.SelectorQuery, @Caller() c: Principal, @Res({ passthrough: true }) res: Reply) {
    return this.go(res, c, 'POST', '/tap_text', q, b);
  }

  @Post('/long_press')
  @Auth('paired', 'bridge')
  @HttpCode(200)
  longPress(@Body() b: D.LongPressDto, @Query() q: D.SelectorQuery, @Caller() c: Principal, @Res({ passthrough: true }) res: Reply) {
    return this.go(res, c, 'POST', '/long_press', q, b);
  }

  @Post('/drag')
  @Auth('paired', 'bridge')
  @HttpCode(200)
  drag(@Body() b: D.DragDto, @Query() q: D.SelectorQuery, @Caller() c: Principal, @Res({ passthrough: true }) res: Reply) {
    return this.go(res, c, 'POST', '/drag', q, b);
  }

  @Post('/type')
  @Auth('paired', 'bridge')
  @HttpCode(200)
  type(@Body() b: D.TypeDto, @Query() q: D.SelectorQuery, @Caller() c: Principal, @Res({ passthrough: true }) res: Reply) {
    return this.go(res, c, 'POST', '/type', q, b);
  }

  @Post('/swipe')
  @Auth('paired', 'bridge')
  @HttpCode(200)
  swipe(@Body() b: D.SwipeDto, @Query() q: D.SelectorQuery, @Caller() c: Principal, @Res({ passthrough: true }) res: Reply) {
    return this.go(res, c, 'POST', '/swipe', q, b);
  }

  @Post('/scroll')
  @Auth('paired', 'bridge')
  @HttpCode(200)
  scroll(@Body() b: D.ScrollDto, @Query() q: D.SelectorQuery, @Caller() c: Principal, @Res({ passthrough: true }) res: Reply) {
    return this.go(res, c, 'POST', '/scroll', q, b);
  }

  @Post('/press_key')
  @Auth('paired', 'bridge')
  @HttpCode(200)
  pressKey(@Body() b: D.PressKeyDto, @Query() q: D.SelectorQuery, @Caller() c: Principal, @Res({ passthrough: true }) res: Reply) {
    return this.go(res, c, 'POST', '/press_key', q, b);
  }

  @Post('/wait')
  @Auth('paired', 'bridge')
  @HttpCode(200)
  wait(@Body() b: D.WaitDto, @Query() q: D.SelectorQuery, @Caller() c: Principal, @Res({ passthrough: true }) res: Reply) {
    return this.go(res, c, 'POST', '/wait', q, b);
  }

  @Post('/open_app')
  @Auth('paired', 'bridge')
  @HttpCode(200)
  openApp(@Body() b: D.OpenAppDto, @Query() q: D.SelectorQuery, @Caller() c: Principal, @Res({ passthrough: true }) res: Reply) {
    return this.go(res, c, 'POST', '/open_app', q, b);
  }

  @Get('/clipboard')
  @Auth('paired', 'bridge', { noHead: true })
  clipboardGet(@Query() q: D.SelectorQuery, @Caller() c: Principal, @Res({ passthrough: true }) res: Reply) {
    return this.go(res, c, 'GET', '/clipboard', q, {});
  }

  @Post('/clipboard')
  @Auth('paired', 'bridge')
  @HttpCode(200)
  clipboardSet(@Body() b: D.ClipboardSetDto, @Query() q: D.SelectorQuery, @Caller() c: Principal, @Res({ passthrough: true }) res: Reply) {
    return this.go(res, c, 'POST', '/clipboard', q, b);
  }

  @Post('/media')
  @Auth('paired', 'bridge')
  @HttpCode(200)
  media(@Body() b: D.MediaDto, @Query() q: D.SelectorQuery, @Caller() c: Principal, @Res({ passthrough: true }) res: Reply) {
    return this.go(res, c, 'POST', '/media', q, b);
  }

  @Post('/send_intent')
  @Auth('paired', 'bridge')
  @HttpCode(200)
  sendIntent(@Body() b: D.SendIntentDto, @Query() q: D.SelectorQuery, @Caller() c: Principal, @Res({ passthrough: true }) res: Reply) {
    return this.go(res, c, 'POST', '/send_intent', q, b);
  }

  @Post('/broadcast')
  @Auth('paired', 'bridge')
  @HttpCode(200)
  broadcast(@Body() b: D.BroadcastDto, @Query() q: D.SelectorQuery, @Caller() c: Principal, @Res({ passthrough: true }) res: Reply) {
    return this.go(res, c, 'POST', '/broadcast', q, b);
  }

  // events
  @Get('/events')
  @Auth('paired', 'bridge', { noHead: true })
  events(@Query() q: D.EventsQuery, @Caller() c: Principal, @Res({ passthrough: true }) res: Reply) {
    return this.go(res, c, 'GET', '/events', q, {});
  }

  @Post('/events/stream')
  @Auth('paired', 'bridge')
  @HttpCode(200)
  eventsStream(@Body() b: D.EventsStreamDto, @Query() q: D.SelectorQuery, @Caller() c: Principal, @Res({ passthrough: true }) res: Reply) {
    return this.go(res, c, 'POST', '/events/stream', q, b);
  }

  // sideload-only
  @Get('/location')
  @Auth('paired', 'bridge', { noHead: true })
  location(@Query() q: D.SelectorQuery, @Caller() c: Principal, @Res({ passthrough: true }) res: Reply) {
    return this.go(res, c, 'GET', '/location', q, {});
  }

  @Post('/search_contacts')
  @Auth('paired', 'bridge')
  @HttpCode(200)
  searchContacts(@Body() b: D.SearchContactsDto, @Query() q: D.SelectorQuery, @Caller() c: Principal, @Res({ passthrough: true }) res: Reply) {
    return this.go(res, c, 'POST', '/search_contacts', q, b);
  }

  @Post('/call')
  @Auth('paired', 'bridge')
  @HttpCode(200)
  call(@Body() b: D.CallDto, @Query() q: D.SelectorQuery, @Caller() c: Principal, @Res({ passthrough: true }) res: Reply) {
    return this.go(res, c, 'POST', '/call', q, b);
  }

  @Post('/send_sms')
  @Auth('paired', 'bridge')
  @HttpCode(200)
  sendSms(@Body() b: D.SendSmsDto, @Query() q: D.SelectorQuery, @Caller() c: Principal, @Res({ passthrough: true }) res: Reply) {
    return this.go(res, c, 'POST', '/send_sms', q, b);
  }

  @Post('/share_media')
  @Auth('paired', 'bridge')
  @HttpCode(200)
  shareMedia(@Body() b: D.ShareMediaDto, @Query() q: D.SelectorQuery, @Caller() c: Principal, @Res({ passthrough: true }) res: Reply) {
    return this.go(res, c, 'POST', '/share_media', q, b);
  }

  @Post('/send_mms')
  @Auth('paired', 'bridge')
  @HttpCode(200)
  sendMms(@Body() b: D.SendMmsDto, @Query() q: D.SelectorQuery, @Caller() c: Principal, @Res({ passthrough: true }) res: Reply) {
    return this.go(res, c, 'POST', '/send_mms', q, b);
  }
}

/** `/setup` and `/return_to_svc` take `{}` (or nothing at all): only the device selectors are read. */
function selectorsOnly(body: unknown): Record<string, string> {
  if (body === undefined || body === null) return {};
  if (typeof body !== 'object' || Array.isArray(body)) throw new DomainError('validation_failed', 'invalid', 'the body must be a JSON object');
  const out: Record<string, string> = {};
  for (const k of ['device', 'device_id'] as const) {
    const v = (body as Record<string, unknown>)[k];
    if (v === undefined) continue;
    if (typeof v !== 'string' || v.length < 1 || v.length > 128)
      throw new DomainError('validation_failed', 'invalid', `${k} must be a string of 1-128 characters`);
    out[k] = v;
  }
  return out;
}
